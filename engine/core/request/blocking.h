/*
 * Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN,
 * BZPOPMAX, BZMPOP, XREAD and XREADGROUP with BLOCK): the generic
 * machinery, independent of the data type.
 *
 * Rules (Redis 7's, see docs/lists.md):
 *   - A command that finds nothing to serve calls gb_blocking_block(): the
 *     client joins the FIFO wait queue of every key it names, with a deadline.
 *   - Any path that creates or grows a list/zset calls gb_blocking_signal_key();
 *     the key is queued as "ready" (once) if someone waits on it.
 *   - Ready keys are served after the current command (or whole EXEC) has
 *     completed: waiters are woken in FIFO order and their command is
 *     re-executed from scratch with its original deadline, so a multi-key
 *     BLPOP pops from the first non-empty key in argument order.
 *   - Serving can make further keys ready (BLMOVE pushes): the loop runs until
 *     no key is ready.
 *   - Deadlines are absolute monotonic milliseconds in a min-heap; the server
 *     arms a timer for gb_blocking_next_deadline(). 0.001 s is 1 ms, never
 *     "forever"; a timeout of 0 is forever.
 *   - A client that disconnects is removed from every queue; nothing is
 *     popped for it. Inside MULTI/EXEC a blocking command never blocks.
 *   - A waiter that needs more than the key's type to know whether it can
 *     be served (XREAD: entries past its ID; XREADGROUP: its group still
 *     there) blocks with a check (gb_blocking_block_checked), asked for each
 *     ready key in FIFO order: serve it (re-executed in the form the check
 *     builds, which names only that key, as Redis 7.0 serves a stream
 *     waiter from the one key that became ready; the re-execution also
 *     carries that key for gb_blocking_ready_keys, like an unchecked
 *     waiter's), fail it with an error,
 *     or leave it waiting where it is. Deleting or replacing a key such a
 *     waiter waits on makes the key ready too (the check may fail it).
 */
#ifndef GB_ENGINE_BLOCKING_H
#define GB_ENGINE_BLOCKING_H

#include "engine/core/request/client.h"
#include "engine/core/keyspace/db.h"
#include "engine/core/keyspace/keyrecord.h"

struct gb_engine;

enum gb_unblock_reason {
    GB_UNBLOCK_SERVED,     /* data arrived: the command is re-executed */
    GB_UNBLOCK_TIMEOUT,    /* deadline passed: the command's timeout reply */
    GB_UNBLOCK_ERROR,      /* CLIENT UNBLOCK ... ERROR */
    GB_UNBLOCK_DISCONNECT, /* client went away: no reply */
};

void gb_blocking_db_init(gb_db *db);
void gb_blocking_db_destroy(gb_db *db);
void gb_blocking_engine_destroy(struct gb_engine *eng);

/* Parses a blocking timeout argument (seconds as a double, Redis's rules and
 * error texts) into an absolute monotonic deadline in ms (0 = forever). If the
 * client is being re-executed after a wake-up, its original deadline is
 * returned instead. Replies with the error and returns false on bad input. */
bool gb_blocking_parse_timeout(gb_client *c, gb_slice arg, uint64_t *deadline_ms);

/* The keys a multi-key blocking pop takes from: all of them, except when
 * the client is being served after a wake-up, when only the key that
 * became ready counts (Redis 7.0 serves a waiter from that key: an earlier
 * key holding another type is no WRONGTYPE, and an earlier key that also
 * got data waits its turn). Narrows keys and nkeys in place. */
void gb_blocking_ready_keys(const gb_client *c, const gb_slice **keys, int *nkeys);

/* Whether this invocation may block (false inside MULTI/EXEC). */
bool gb_blocking_allowed(const gb_client *c);

/* Blocks c on keys (in c->db) until served, the deadline (0 = none) or an
 * unblock. The command's argv is copied for re-execution. On timeout every
 * blocking command answers a nil array (*-1). */
void gb_blocking_block(gb_client *c, const gb_slice *keys, int nkeys, uint64_t deadline_ms, enum gb_type wait_type,
                       int argc, const gb_slice *argv);

/* Parses a timeout in milliseconds (XREAD/XREADGROUP BLOCK: Redis's
 * UNIT_MILLISECONDS, "timeout is not an integer or out of range" / "timeout
 * is negative"); otherwise as gb_blocking_parse_timeout. A deadline past
 * the end of time waits forever. */
bool gb_blocking_parse_timeout_ms(gb_client *c, gb_slice arg, uint64_t *deadline_ms);

struct gb_argv_builder;

/* What a ready key means for a waiter blocked with a check. */
enum gb_wake {
    GB_WAKE_SKIP,  /* not for it: it keeps its place in the queue */
    GB_WAKE_SERVE, /* re-execute its command */
    GB_WAKE_FAIL,  /* unblock it with an error */
};

typedef struct gb_wait_check {
    /* kv is the key's record now (NULL: gone). On GB_WAKE_SERVE the command
     * is re-executed as *serve when the check initialised it (gb_argv_init;
     * its slices must stay valid until ctx is freed), else as captured. On
     * GB_WAKE_FAIL, *err is the error reply (static text). */
    enum gb_wake (*ready)(gb_client *c, void *ctx, gb_slice key, const gb_kv *kv, struct gb_argv_builder *serve,
                          const char **err);
    void (*free)(void *ctx);
} gb_wait_check;

/* gb_blocking_block for a waiter with a check (ctx is its state, freed
 * with check->free once the client is unblocked or served). */
void gb_blocking_block_checked(gb_client *c, const gb_slice *keys, int nkeys, uint64_t deadline_ms, int argc,
                               const gb_slice *argv, const gb_wait_check *check, void *ctx);

/* A list/zset under key was created or grew, a stream got entries, or a
 * key a stream waiter waits on was deleted or replaced. */
void gb_blocking_signal_key(gb_db *db, gb_slice key);
/* Every key in db with waiters is ready (SWAPDB, FLUSHDB, FLUSHALL): the
 * ones that hold a value may serve, the ones gone may fail stream waiters. */
void gb_blocking_signal_db(gb_db *db);

/* Serves ready keys until none is left (called after each command). */
void gb_blocking_serve_ready(struct gb_engine *eng);

/* Unblocks c for a reason other than being served (timeout, error, disconnect). */
void gb_blocking_unblock(gb_client *c, enum gb_unblock_reason why);

/* Times out every client whose deadline has passed; returns how many. */
size_t gb_blocking_expire(struct gb_engine *eng);
/* The earliest deadline (monotonic ms), or 0 if no client waits with one. */
uint64_t gb_blocking_next_deadline(const struct gb_engine *eng);
void gb_blocking_cron(struct gb_engine *eng);

/* ---- CLIENT PAUSE ----
 *
 * Redis 7.0's pause: while it lasts, a command it covers (every command
 * under GB_PAUSE_ALL; under GB_PAUSE_WRITE those that may write or
 * replicate, an EXEC holding one included) is postponed before it runs or
 * is queued: the client is blocked, without keys or deadline, and reads
 * nothing more. When the pause ends (its deadline, CLIENT UNPAUSE) the
 * postponed commands run through the gate again, in arrival order, after
 * the current command. Keys do not expire while paused (they read as
 * missing but are not deleted), so nothing is written behind the pause. */
enum { GB_PAUSE_NONE = 0, GB_PAUSE_WRITE = 1, GB_PAUSE_ALL = 2 };

/* CLIENT PAUSE: the stricter mode and the later end of this and any pause
 * in force win (Redis's pauseClients). */
void gb_pause_start(struct gb_engine *eng, int type, uint64_t end_ms);
/* CLIENT UNPAUSE, or the deadline passed: the postponed commands run after
 * the current command (or at once outside one). */
void gb_pause_lift(struct gb_engine *eng);
/* The server's own pauses of writes, by purpose (Redis's
 * PAUSE_DURING_FAILOVER, PAUSE_DURING_SHUTDOWN): writes wait while any
 * purpose holds them, whatever CLIENT UNPAUSE does, and a CLIENT PAUSE
 * given meanwhile keeps its own mode and deadline. */
enum { GB_PAUSE_FOR_FAILOVER = 1u << 0, GB_PAUSE_FOR_SHUTDOWN = 1u << 1 };
void gb_pause_for(struct gb_engine *eng, unsigned purpose, bool on);
/* The pause in force (GB_PAUSE_*), lifting one whose deadline passed. */
int gb_pause_check(struct gb_engine *eng);
/* Whether cmd from c, admitted with flags (its script's for a script
 * runner), waits for the pause to end. */
bool gb_pause_postpones(gb_client *c, const struct gb_command *cmd, uint32_t flags);
/* Blocks c until the pause ends; its command (argv) runs then. */
void gb_pause_postpone(gb_client *c, int argc, const gb_slice *argv);
bool gb_pause_is_postponed(const gb_client *c);
/* Runs the postponed commands if the pause was lifted (called between
 * commands). */
void gb_pause_resume(struct gb_engine *eng);

/* Number of clients waiting on key in db (tests, INFO). */
size_t gb_blocking_waiters(gb_db *db, gb_slice key);

#endif
