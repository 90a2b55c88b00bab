/*
 * An engine-side client: one per connection or claimed ring, whatever the
 * transport. It carries the selected database, authentication, transaction
 * and blocking state, and the hooks through which the engine reaches its
 * transport (reply sink, flush, close, describe for CLIENT LIST).
 */
#ifndef GB_ENGINE_CLIENT_H
#define GB_ENGINE_CLIENT_H

#include "engine/base/common.h"
#include "engine/core/request/reply.h"

struct gb_engine;
struct gb_db;
struct gb_command;
struct gb_blocked;
struct gb_acl_user;
struct gb_pubsub_client;

enum {
    GB_CLIENT_MULTI = 1u << 0,       /* inside MULTI: commands are queued */
    GB_CLIENT_DIRTY_CAS = 1u << 1,   /* a WATCHed key changed: EXEC fails */
    GB_CLIENT_DIRTY_EXEC = 1u << 2,  /* a queued command was rejected: EXEC aborts */
    GB_CLIENT_AUTHED = 1u << 3,      /* passed AUTH (or no password is set) */
    GB_CLIENT_CLOSE_AFTER_REPLY = 1u << 4,
    GB_CLIENT_BLOCKED = 1u << 5,     /* waiting in a blocking command */
    GB_CLIENT_IN_EXEC = 1u << 6,     /* running EXEC's queue: blocking ops don't block */
    GB_CLIENT_UNIX = 1u << 7,        /* connected over the Unix socket */
    GB_CLIENT_RING = 1u << 8,        /* a shared-memory ring client */
    GB_CLIENT_CLOSE_ASAP = 1u << 9,  /* killed: the transport closes it at the next chance */
    GB_CLIENT_REEXEC = 1u << 11,     /* re-executing a command after a wake-up */
    GB_CLIENT_OBEY = 1u << 12,       /* replays the log: the gate refuses it nothing (memory, disk errors) */
    GB_CLIENT_SCRIPT = 1u << 13,     /* the client a script's redis.call runs as (engine/script) */
    GB_CLIENT_LOOPBACK = 1u << 14,   /* a TCP client from 127.0.0.1 or ::1 */
    GB_CLIENT_REPLICA = 1u << 15,    /* a replica's link: its output is limited by the replica class */
    GB_CLIENT_MASTER = 1u << 16,     /* on a replica, the client applying its primary's stream (flag 'M') */
    GB_CLIENT_TLS = 1u << 17,        /* connected over TLS (tls-port): a TLS cluster shows it the TLS ports */
    /* CLIENT REPLY OFF / SKIP: replies go nowhere (c->rops is the discard
     * table); SKIP_NEXT becomes SKIP for the command after CLIENT REPLY SKIP. */
    GB_CLIENT_REPLY_OFF = 1u << 20,
    GB_CLIENT_REPLY_SKIP = 1u << 21,
    GB_CLIENT_REPLY_SKIP_NEXT = 1u << 22,
    GB_CLIENT_MONITOR = 1u << 23,    /* MONITOR (engine/core/introspect/monitor.h) */
    GB_CLIENT_NO_EVICT = 1u << 24,   /* CLIENT NO-EVICT on: kept by client eviction (flag 'e') */
    GB_CLIENT_TRACKING = 1u << 25,   /* CLIENT TRACKING on (engine/core/pubsub/tracking.h) */
    /* closed by its output-buffer limit or by maxmemory-clients (engine/core/memory/client_memory.c):
     * the transport may count it (a ring's INFO) */
    GB_CLIENT_CLOSED_FOR_MEMORY = 1u << 26,
    GB_CLIENT_ASKING = 1u << 27,     /* ASKING: the next command may use a slot being imported */
    GB_CLIENT_READONLY = 1u << 28,   /* READONLY: a cluster replica serves this client's reads */
};

/* What CLIENT LIST / CLIENT INFO show about the transport side. */
typedef struct gb_client_desc {
    char addr[64];   /* "127.0.0.1:50012" or "/tmp/goblin-core.sock:0" */
    char laddr[64];
    int fd;
    size_t qbuf;     /* bytes of unparsed input */
    size_t qbuf_free;
    size_t argv_mem; /* bytes of the arguments of the request read so far or running (Redis's argv-mem) */
    size_t rbs;      /* the reply buffer: its size (Redis's rbs) ... */
    size_t rbp;      /* ... and the most it held in the last 5 seconds (rbp) */
    size_t obl;      /* bytes of replies in the reply buffer (obl) */
    size_t oll;      /* replies handed to the socket beyond it (oll) ... */
    size_t omem;     /* ... and the memory they hold (omem) */
    size_t obuf;     /* bytes of replies not yet sent, all told */
    size_t own_mem;  /* the transport's structures for the client (part of tot-mem) */
} gb_client_desc;

typedef struct gb_client_hooks {
    /* Replies were added outside the transport's own read handling (a
     * blocked client was served): send them. */
    void (*flush)(struct gb_client *c);
    /* Close the client as soon as possible (CLIENT KILL); must not free the
     * gb_client synchronously. */
    void (*close)(struct gb_client *c);
    void (*describe)(const struct gb_client *c, gb_client_desc *d);
    /* Sends data with file descriptors attached (SCM_RIGHTS) after every
     * reply already pending; NULL where the transport cannot pass
     * descriptors. Returns 0 or a negative GB_E* code. */
    int (*send_with_fds)(struct gb_client *c, const char *data, size_t len, const int *fds, int nfds);
    /* Appends bytes to the client's output as they are, outside any reply
     * (a replica's stream: +FULLRESYNC, the RDB, the commands); flush sends
     * them. NULL where the transport cannot (rings). */
    void (*write_raw)(struct gb_client *c, const char *data, size_t len);
    /* Turns TCP_NODELAY on or off (repl-disable-tcp-nodelay for a replica's
     * full sync); NULL where there is no TCP socket. */
    void (*set_nodelay)(struct gb_client *c, bool on);
} gb_client_hooks;

/* A command captured for later (MULTI queue, blocked command): argv copied
 * into one allocation. */
typedef struct gb_argv_copy {
    const struct gb_command *cmd;
    int argc;
    gb_slice *argv; /* points into the same allocation */
} gb_argv_copy;

typedef struct gb_watched_key {
    int dbid;
    gb_slice key; /* owned copy */
} gb_watched_key;

typedef struct gb_client {
    uint64_t id;
    struct gb_engine *eng;
    struct gb_db *db;
    uint32_t flags;
    int resp;                   /* protocol version: 2, or 3 after HELLO 3 */
    /* Who the client is (engine/core/acl/acl.h): "default" until AUTH or
     * HELLO AUTH; a ring's is its claimer's. Never NULL. */
    const struct gb_acl_user *user;

    /* Messages for this client that came while its EXEC's reply was open,
     * on a wire whose pushes are records of their own (SBE): sent, in
     * order, when EXEC has replied (gb_reply_flush_deferred_pushes). */
    struct gb_deferred_push *deferred_pushes, **deferred_tail;
    const gb_reply_ops *rops;   /* where replies go: wire_rops, or nowhere under CLIENT REPLY OFF/SKIP */
    const gb_reply_ops *wire_rops; /* the transport's reply writer, in the client's protocol */
    void *rctx;
    const gb_client_hooks *hooks;
    void *conn;                 /* the transport's connection object */

    char *name;                 /* CLIENT SETNAME */
    int64_t ctime_ms;           /* creation, monotonic ms */
    int64_t last_ms;            /* last interaction, monotonic ms */
    int64_t obuf_soft_since_ms; /* when its pending output first passed the soft limit; 0: under it
                                 * (engine/core/memory/client_memory.h) */
    const struct gb_command *last_cmd;
    int slot; /* cluster mode: the slot of the keys of the command admitted last; -1: none (Redis's c->slot) */

    gb_argv_copy *mqueue;       /* MULTI */
    int mcount, mcap;
    size_t mbytes;              /* the queued commands' argument copies (CLIENT LIST's multi-mem) */
    uint32_t mcmd_flags;        /* the queued commands' GB_CMD_* flags, or'ed (EXEC's memory check) */
    gb_watched_key *watched;    /* WATCH */
    int nwatched, watchcap;

    struct gb_blocked *blocked; /* engine/core/request/blocking.c state while BLOCKED */
    uint64_t reexec_deadline;   /* the original deadline while REEXEC */
    gb_slice reexec_key;        /* the key that became ready, while REEXEC */

    struct gb_client_tracking *tracking; /* CLIENT TRACKING state, or NULL (engine/core/pubsub/tracking.h) */
    struct gb_pubsub_client *pubsub; /* subscriptions (engine/core/pubsub/pubsub.h); NULL while none */
    int64_t repl_woff;          /* the replication offset after its last command (WAIT; engine/core/replication/repl.h) */
    size_t mem_counted;         /* its memory as last added to the engine's evictable total (maxmemory-clients;
                                 * engine/core/memory/client_memory.h); 0 while not counted */

    struct gb_client *prev, *next; /* engine's client list */
} gb_client;

/* Creates a client bound to a transport and registers it with the engine. */
gb_client *gb_client_new(struct gb_engine *eng, const gb_reply_ops *rops, void *rctx,
                         const gb_client_hooks *hooks, void *conn, uint32_t flags);
/* Unregisters and frees (the transport calls this when the connection ends):
 * unblocks, unwatches, discards MULTI. */
void gb_client_free(gb_client *c);

/* Whether the client runs on this machine (Redis's islocalClient): the
 * Unix socket, TCP from 127.0.0.1 or ::1, or a ring (shared memory). */
static inline bool gb_client_is_local(const gb_client *c)
{
    return (c->flags & (GB_CLIENT_UNIX | GB_CLIENT_LOOPBACK | GB_CLIENT_RING)) != 0;
}

/* Whether a protected action is allowed to c by its setting
 * (enable-debug-command, enable-protected-configs: GB_PROTECTED_* of
 * engine/core/config/config.h), Redis's allowProtectedAction. */
bool gb_client_protected_allowed(const gb_client *c, int setting);

/* Whether the client's transport can reply in RESP version ver (2 or 3). */
bool gb_client_can_speak(const gb_client *c, int ver);
/* Switches the client's replies to RESP version ver (HELLO, RESET): its
 * writer's table for that version. Requires gb_client_can_speak. */
void gb_client_set_resp(gb_client *c, int ver);

/* After a change to GB_CLIENT_REPLY_*: replies go to the wire or nowhere. */
void gb_client_update_reply(gb_client *c);
/* A push (a pub/sub message or confirmation, a tracking invalidation)
 * reaches the client whatever CLIENT REPLY says, as Redis's
 * CLIENT_PUSHING: its writer is the wire's for the push's span (a
 * replica's stays nowhere). Returns the writer to give back to
 * gb_client_push_end. */
static inline const gb_reply_ops *gb_client_push_begin(gb_client *c)
{
    const gb_reply_ops *was = c->rops;
    if (GB_UNLIKELY(c->flags & (GB_CLIENT_REPLY_OFF | GB_CLIENT_REPLY_SKIP)) && !(c->flags & GB_CLIENT_REPLICA))
        c->rops = c->wire_rops;
    return was;
}
static inline void gb_client_push_end(gb_client *c, const gb_reply_ops *was) { c->rops = was; }

/* Closes another client (CLIENT KILL, a user logged out or denied its
 * channels) at once for everyone else, as Redis's freeClient: its
 * subscriptions go now (PUBLISH and NUMSUB no longer count it) and the
 * client lists skip it (gb_client_gone); its connection closes at the end
 * of the loop's pass. */
void gb_client_kill(gb_client *victim);
static inline bool gb_client_gone(const gb_client *c) { return (c->flags & GB_CLIENT_CLOSE_ASAP) != 0; }

/* Whether c's commands were acknowledged elsewhere and must apply as they
 * come: the append-only log being loaded, and on a replica its primary's
 * stream (Redis's mustObeyClient). Client limits such as
 * proto-max-bulk-len do not apply to them: a lower limit here than where
 * the write was accepted would drop it silently. */
static inline bool gb_client_must_obey(const gb_client *c)
{
    return (c->flags & (GB_CLIENT_OBEY | GB_CLIENT_MASTER)) != 0;
}
/* The client with that id, NULL when none or gone. */
gb_client *gb_client_by_id(struct gb_engine *eng, uint64_t id);

/* The ASKING part of gb_client_command_done (out of line: rare). */
void gb_client_asking_done(gb_client *c);
/* Redis's resetClient, once a command a client sent is done (a blocked
 * or postponed one when it is served, times out or is redirected):
 * CLIENT REPLY SKIP's window moves on, and ASKING, which lasts the one
 * command after it outside MULTI, ends. */
static inline void gb_client_command_done(gb_client *c)
{
    if (GB_UNLIKELY(c->flags & GB_CLIENT_ASKING))
        gb_client_asking_done(c);
    if (GB_UNLIKELY(c->flags & (GB_CLIENT_REPLY_SKIP | GB_CLIENT_REPLY_SKIP_NEXT))) {
        bool next = (c->flags & GB_CLIENT_REPLY_SKIP_NEXT) != 0;
        c->flags &= ~(GB_CLIENT_REPLY_SKIP | GB_CLIENT_REPLY_SKIP_NEXT);
        if (next)
            c->flags |= GB_CLIENT_REPLY_SKIP;
        gb_client_update_reply(c);
    }
}

/* The client's CLIENT LIST line (Redis's fields and order, no newline)
 * into buf, as snprintf does: returns its whole length, which is cap or
 * more when it did not fit (a long name): ask again with that much room. */
size_t gb_client_info(const gb_client *c, char *buf, size_t cap);
/* What the client holds now, as CLIENT LIST's tot-mem counts it (Redis's
 * getClientMemoryUsage): buffers, arguments, the MULTI queue, watched keys
 * and the structures. */
size_t gb_client_memory_usage(const gb_client *c);
/* The whole line, gb_malloc'd (free with gb_free); its length in *len if
 * len is not NULL. */
char *gb_client_info_dup(const gb_client *c, size_t *len);

gb_argv_copy gb_argv_copy_make(const struct gb_command *cmd, int argc, const gb_slice *argv);
/* Bytes a's one allocation holds. */
size_t gb_argv_copy_bytes(const gb_argv_copy *a);
void gb_argv_copy_free(gb_argv_copy *a);

#endif
