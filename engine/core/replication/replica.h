/*
 * The replica side of replication: this server following a primary
 * (REPLICAOF host port, or replicaof in the configuration).
 *
 * The engine keeps the state every part needs to read - where the primary
 * is, how far the link got (Redis's repl_state), the primary's replication
 * ID and the offset of the stream applied so far - and the rules a replica
 * imposes on normal clients (replica-read-only, replica-serve-stale-data,
 * no expiry of its own). The link itself (connect, handshake, the payload
 * of a full sync, the command stream) is a transport: transport/replica.
 * It follows this state from the loop's cron: a REPLICAOF changes `epoch`,
 * and the link drops whatever it had and starts again.
 */
#ifndef GB_ENGINE_CORE_REPLICA_H
#define GB_ENGINE_CORE_REPLICA_H

#include "engine/core/request/client.h"
#include "engine/core/request/command.h"

struct gb_engine;

/* Redis's repl_state, in the order a link goes through them. */
typedef enum gb_repl_state {
    GB_REPL_NONE = 0,   /* not a replica */
    GB_REPL_CONNECT,    /* must connect: REPLICAOF, or the link dropped */
    GB_REPL_CONNECTING, /* resolving and connecting */
    GB_REPL_HANDSHAKE,  /* PING, AUTH, REPLCONF, PSYNC */
    GB_REPL_TRANSFER,   /* receiving a full sync's payload */
    GB_REPL_CONNECTED,  /* applying the command stream */
} gb_repl_state;

typedef struct gb_replica {
    char *host; /* NULL: not a replica */
    int port;
    gb_repl_state state;
    uint64_t epoch; /* changes with every REPLICAOF: the link starts over */
    /* What the last sync established, kept across a dropped link for a
     * partial resync (Redis's cached master): the primary's replication
     * ID and the offset of the stream applied (read: received). */
    bool have_master; /* replid/offset mean something */
    char replid[41];
    int64_t offset;
    int64_t read_offset;
    /* The master client (NULL while no stream is applied) and whether a
     * command of the stream is running now: a key past its expiry is
     * still there for the primary's commands. */
    gb_client *master;
    int master_db; /* the database the last master client had selected */
    /* A replica restarted from a snapshot that recorded its primary's
     * history resumes the stream in this database (repl-stream-db); read
     * by the first REPLICAOF after start-up, which continues that history. */
    int resume_db;
    bool applying;
    uint64_t last_io_ms;   /* monotonic: last bytes from the primary */
    uint64_t down_since_s; /* Unix seconds the link went down; 0: never up */
    int64_t transfer_size, transfer_read; /* a full sync's payload: -1 size while unknown (EOF mark) */
    uint64_t transfer_last_io_ms;
} gb_replica;

/* Whether the settings make this server a replica from start-up
 * (replicaof, or a replica in the cluster's nodes.conf): a snapshot's
 * replication history is then its primary's to continue. */
bool gb_replica_configured(const struct gb_engine *eng);

/* The engine's replica state (created on first use). */
gb_replica *gb_replica_of(struct gb_engine *eng);
void gb_replica_destroy(struct gb_engine *eng);

/* Whether this server follows a primary. */
bool gb_engine_is_replica(const struct gb_engine *eng);

/* Follows host:port from now on (REPLICAOF, replicaof at start-up). */
void gb_replica_set_master(struct gb_engine *eng, const char *host, int port);
/* Stops following (REPLICAOF NO ONE): the data stays. */
void gb_replica_unset_master(struct gb_engine *eng);

/* Why a normal client's command is refused on a replica now (Redis's
 * READONLY and MASTERDOWN replies, without the leading '-'), or NULL.
 * `writes` / `stale_ok`: the command (with EXEC, its queue) writes / may
 * run on stale data. */
const char *gb_replica_refusal(const gb_client *c, bool writes, bool stale_ok);

/* Whether a key past its expiry must be left alone now (a replica never
 * deletes one itself); *present tells whether the command running sees
 * it (only the primary's own commands do). */
bool gb_replica_keeps_expired(const struct gb_engine *eng, bool *present);

/* INFO replication's lines for a replica (after role:slave). */
void gb_replica_info(struct gb_engine *eng, void (*line)(void *ctx, const char *text), void *ctx);
/* ROLE's reply for a replica. */
void gb_replica_role_reply(gb_client *c);

#endif
