/*
 * The engine: all server state owned by the one engine thread — databases,
 * settings, clients, the command table, statistics — and the entry points
 * the transports and the server's main loop call.
 *
 * It is a struct, not globals, so that a sharded build could run several
 * (one per core) side by side.
 */
#ifndef GB_ENGINE_ENGINE_H
#define GB_ENGINE_ENGINE_H

#include "engine/core/request/client.h"
#include "engine/core/request/command.h"
#include "engine/core/config/config.h"
#include "engine/core/keyspace/db.h"
#include "engine/core/introspect/errorstats.h"
#include "engine/core/introspect/latency.h"
#include "engine/core/request/propagate.h"
#include "engine/core/request/script_state.h"
#include "engine/core/introspect/slowlog.h"
#include "engine/ds/htable.h"
#include "platform/clock.h"

typedef struct gb_stats {
    uint64_t total_connections_received;
    uint64_t total_commands_processed;
    uint64_t rejected_connections;
    uint64_t expired_keys;
    uint64_t evicted_keys;
    uint64_t evicted_clients;   /* closed by maxmemory-clients */
    uint64_t keyspace_hits;
    uint64_t keyspace_misses;
    uint64_t total_net_input_bytes;
    uint64_t total_net_output_bytes;
    uint64_t total_error_replies;
    /* total_error_replies when the last call ended, nested ones included
     * (Redis's prev_err_count): a call failed if errors came after both its
     * start and the end of the last call inside it, so a script is not
     * failed by a command's error it caught */
    uint64_t errors_at_call_end;
    /* the running call answered an error counted where it arose
     * (gb_reply_error_counted_already): it failed all the same */
    bool uncounted_error;
    uint64_t unexpected_error_replies; /* errors to the primary, a replica or the log's replay (reply.c) */
    uint64_t client_obuf_disconnects;
    uint64_t client_qbuf_disconnects;
    uint64_t protocol_errors;
    uint64_t dirty; /* changes since start (persistence later) */
    /* instantaneous_ops_per_sec: a ring of samples taken by the cron */
    uint64_t ops_sample_last_count;
    uint64_t ops_sample_last_ms;
    uint64_t ops_samples[16];
    unsigned ops_sample_idx;
    /* instantaneous_input_kbps / output_kbps: the same ring for the bytes */
    uint64_t net_in_sample_last, net_out_sample_last;
    uint64_t net_in_samples[16], net_out_samples[16];
} gb_stats;

/* Transport-provided facts for INFO (listeners, ring pool). */
typedef struct gb_info_provider {
    /* Appends "name:value\r\n" lines of a section to buf; returns bytes. */
    void (*section)(void *ctx, const char *section, void (*line)(void *lctx, const char *text), void *lctx);
    void *ctx;
} gb_info_provider;

/* What background work has left after a step. */
typedef enum gb_bg_state {
    GB_BG_IDLE = 0, /* nothing: the loop may sleep */
    GB_BG_MORE,     /* work the loop can do now: it polls instead of sleeping */
    GB_BG_WAITING,  /* work waiting for a helper thread (a snapshot's writer
                     * catching up): the loop sleeps, but wakes within
                     * GB_BG_RETRY_MS to step again; spinning instead would
                     * take the CPU from that very thread where they share one */
} gb_bg_state;
#define GB_BG_RETRY_MS 1

/* A subsystem above the core that needs the engine's loop (persistence):
 * the cron tick, slices of background work between event batches, the
 * moment before replies leave (durability), and shutdown. Installed by the
 * layer that owns it; the core and the transports call it through
 * gb_engine_service_*() below. */
typedef struct gb_service {
    void (*cron)(void *ctx);
    /* Runs background work until deadline_ns (monotonic). */
    gb_bg_state (*step)(void *ctx, uint64_t deadline_ns);
    /* Called before replies written since the last call are sent: whatever
     * they acknowledge must be durable by the time it returns
     * (appendfsync always). */
    void (*before_replies)(void *ctx);
    /* Whether replies must wait for before_replies (true only while a write
     * is not yet durable under appendfsync always): transports that send at
     * once otherwise hold them until the end of the loop iteration. */
    bool (*replies_held)(void *ctx);
    /* SHUTDOWN / SIGTERM: saves as configured. Returns 0, or a negative
     * GB_E* code with the reason logged (the server keeps running). */
    int (*shutdown)(void *ctx, bool save, bool nosave);
    /* Why writes are refused now (Redis's MISCONF text after a failed
     * background save or log write), or NULL. */
    const char *(*write_refusal)(void *ctx);
    /* FLUSHALL, before it empties the databases: a background save in
     * progress is abandoned (Redis kills its child), rather than written
     * out whole first. */
    void (*before_flushall)(void *ctx);
    /* FLUSHALL, once the databases are empty: with save points configured
     * the empty dataset is saved at once (Redis 7.0), so a restart cannot
     * bring the flushed keys back. */
    void (*after_flushall)(void *ctx);
    /* CONFIG RESETSTAT: its counters in INFO start again from zero
     * (rdb_saves, aof_rewrites, aof_delayed_fsync, as Redis's
     * resetServerStats). */
    void (*reset_stats)(void *ctx);
    /* INFO persistence's fields after "loading": one "name:value" each. */
    void (*info)(void *ctx, void (*line)(void *lctx, const char *text), void *lctx);
    /* Bytes of used memory that maxmemory does not count (Redis leaves out
     * the append-only log's buffer); NULL: none. */
    size_t (*uncounted_memory)(void *ctx);
    /* The engine is being freed. */
    void (*destroy)(void *ctx);
    void *ctx;
} gb_service;

/* The socket server's listeners, for CONFIG SET port / bind: rebind
 * serves `port` (0: no TCP) on the words of `bind`, keeping what it had
 * when that fails (returns non-zero with a reason in err). */
typedef struct gb_listener_hook {
    int (*rebind)(void *ctx, int port, const char *bind, char *err, size_t errlen);
    void *ctx;
    /* CONFIG SET tls-*: a new TLS context from cfg for new connections, and
     * the TLS listeners moved to cfg->tls_port; the old ones are kept when
     * that fails (GB_TLS_APPLY_CONTEXT: the context could not be built,
     * GB_TLS_APPLY_LISTEN: the port could not be listened on). NULL: no
     * TLS. */
    int (*tls_apply)(void *ctx, const gb_settings *cfg, char *err, size_t errlen);
} gb_listener_hook;
enum { GB_TLS_APPLY_OK = 0, GB_TLS_APPLY_CONTEXT = -1, GB_TLS_APPLY_LISTEN = -2 };

typedef struct gb_engine {
    gb_settings cfg;
    gb_db *dbs;
    int ndbs;

    /* Cached clocks: transports refresh them once per batch of input
     * (gb_engine_update_time), so a command costs no clock syscall. */
    int64_t now_ms;          /* wall clock, Unix ms: expiry decisions */
    uint64_t now_mono_ms;    /* monotonic ms: idle times, timeouts */
    uint64_t start_mono_ms;
    int64_t start_real_ms;
    char run_id[41];
    double ns_per_cycle;     /* cycle counter calibration (commandstats) */

    gb_htable commands;      /* gb_command records by lower-case name */
    size_t ncommands;

    gb_client *clients;      /* doubly linked list of every client */
    size_t nclients;
    size_t clients_mem_evictable; /* the sum of clients' mem_counted (maxmemory-clients) */
    uint64_t next_client_id;
    size_t blocked_clients;

    gb_stats stats;
    gb_info_provider info_provider;
    /* A transport that ties resources to a client (a ring slot to its
     * control connection) learns here that the client is going away. */
    void (*client_free_hook)(void *ctx, gb_client *c);
    void *client_free_ctx;

    /* blocking: keys that became ready during the current command */
    struct gb_ready_key *ready_keys;
    size_t nready, readycap;
    bool serving_ready;
    gb_client **bheap;       /* blocked clients with a deadline: min-heap */
    size_t nbheap, bheapcap;
    /* CLIENT PAUSE (engine/core/request/blocking.h): the mode (GB_PAUSE_*), when
     * it ends (monotonic ms), and the clients whose command waits for
     * that, in arrival order. */
    int pause_type;
    uint64_t pause_end_ms;
    bool pause_lifted;       /* unpaused during a command: resume after it */
    /* A FAILOVER or a shutdown waiting for replicas holds writes beside
     * any CLIENT PAUSE, as Redis's pause purposes: pause_type/pause_end_ms
     * are then the two combined, the client's own kept here to come back to. */
    unsigned paused_for;         /* GB_PAUSE_FOR_*: the server's own pauses (engine/core/request/blocking.h) */
    int client_pause_type;
    uint64_t client_pause_end_ms;
    gb_client **postponed;
    size_t npostponed, postponedcap;
    /* MONITOR and CLIENT TRACKING (engine/core/introspect/monitor.h, tracking.h) */
    gb_client **monitors;
    size_t nmonitors, monitorcap;
    struct gb_tracking *tracking;

    struct gb_pubsub *pubsub; /* channels and their subscribers (engine/core/pubsub/pubsub.h) */
    struct gb_acl *acl;      /* users, the permission check, ACL LOG (engine/core/acl/acl.h) */
    gb_propagation prop;     /* write propagation: sinks and the current unit */
    struct gb_repl *repl;    /* replication, the primary's side (engine/core/replication/repl.h) */
    gb_cow cow;              /* a background save's copy-on-write (engine/core/keyspace/db.h) */
    struct gb_lazyfree *lazyfree; /* the background freeing thread (engine/core/memory/lazyfree.h) */
    struct gb_sliced_free *sliced_free; /* big values freed between events (engine/core/memory/sliced_free.h) */
    /* eviction (engine/core/memory/evict.h): the candidate pool, and whether a
     * cycle ran out of time and left the rest to the loop */
    struct gb_evict_pool *evict_pool;
    bool evict_pending;
    /* MEMORY STATS (engine/core/introspect/memory_report.h): used memory once the
     * server was assembled, and the most used since */
    size_t startup_allocated;
    size_t peak_memory;
    /* Replaying a log or snapshot: keys past their expiry are not expired
     * (Redis's rule while loading: the load restores what the log says, and
     * the log itself holds the DELs of expiries that happened). */
    bool loading;
    bool active_expire_enabled; /* DEBUG SET-ACTIVE-EXPIRE */
    const struct gb_service *service; /* persistence's hooks into the loop, or NULL */

    /* scripting (engine/core/request/script_state.h) */
    gb_script_state script;              /* the script running now, if any */
    const gb_scripting_hooks *scripting; /* installed by engine/script, or NULL */
    gb_busy_pump busy_pump;              /* installed by the transport, or {NULL} */
    gb_listener_hook listeners;          /* likewise: CONFIG SET port / bind */
    /* Counts the CONFIG SETs of tls-* options that rebuilt the TLS context:
     * the cluster bus rebuilds its own contexts when it moves. */
    uint64_t tls_config_changes;

    struct gb_replica *replica; /* the replica side (engine/core/replication/replica.h), or NULL: never one */
    struct gb_failover *failover; /* a coordinated FAILOVER (engine/core/replication/failover.h), or NULL: none yet */
    struct gb_shutdown *shutdown; /* a shutdown waiting for replicas (engine/core/shutdown.h), or NULL */
    struct gb_cluster *cluster;   /* cluster-enabled yes (engine/cluster/cluster.h), or NULL */
    /* set by SHUTDOWN; the server's loop checks it */
    bool shutdown_requested;

    /* introspection (engine/core/introspect/slowlog.h, latency.h) */
    gb_slowlog slowlog;
    gb_latency_monitor latency;
    gb_errorstats errorstats;
    char executable[512];       /* INFO: the server's absolute path (set by the server) */
    const char *io_engine;      /* INFO: how client sockets are served (set by the socket server; NULL: none) */
    uint64_t expire_cycle_us;   /* INFO: time the cron's active expiry took */
    /* Active expiry in slices (engine.c, expire_slice): the time it may
     * still take in this cron period, whether its last slice ran out of
     * time with keys left, and the database the next slice starts at. */
    int64_t expire_budget_ns;
    bool expire_more;
    int expire_next_db;
    bool time_every_call; /* gb_engine_times_every_call(&cfg) */
    /* The cron's frequency now: hz, raised with the clients when
     * dynamic-hz is on (INFO's hz; configured_hz is cfg.hz). */
    int hz;
} gb_engine;

/* The core of an engine from settings (copied): databases and clients, an
 * empty command table. The server's engine, with every value type and
 * command module, is gb_engine_new (engine/modules.h). */
gb_engine *gb_engine_create(const gb_settings *cfg);
void gb_engine_free(gb_engine *eng);

static inline void gb_engine_update_time(gb_engine *eng)
{
    eng->now_ms = gb_clock_real_ms();
    eng->now_mono_ms = gb_clock_mono_ms();
}
static inline uint64_t gb_engine_uptime_ms(const gb_engine *eng) { return eng->now_mono_ms - eng->start_mono_ms; }

/* The accounting of one command call: INFO commandstats (calls, time of
 * the sampled calls, failed calls) and total_commands_processed. The gate
 * (engine/core/request/gate.c) begins right before a command runs and ends once it
 * ran (a call abandoned in between is not counted). */
typedef struct gb_call_stats {
    uint64_t errors_before; /* total_error_replies at begin: failed if it grew (errors_at_call_end) */
    uint64_t t0;            /* cycle counter at begin, when timed */
    bool timed;             /* gb_command_timed() */
    bool served;            /* a blocked command run again to serve it: counted when it first ran */
} gb_call_stats;

static inline gb_call_stats gb_call_begin(const gb_engine *eng, const gb_command *cmd)
{
    gb_call_stats s = {eng->stats.total_error_replies, 0, eng->time_every_call || gb_command_timed(cmd), false};
    if (s.timed)
        s.t0 = gb_cycles_now();
    return s;
}

/* What a timed call's duration feeds besides commandstats (the slow log,
 * histograms, the latency monitor): engine/core/request/gate.c and engine.c. */
void gb_call_observe(gb_engine *eng, gb_command *cmd, int64_t duration_us);

/* Ends the accounting; returns the call's duration in microseconds when
 * every call is timed (SLOWLOG, LATENCY, latency-tracking on), else -1.
 * A blocked command served later is one call, as in Redis 7.0 (INFO
 * commandstats calls, total_commands_processed): its serving adds only
 * a failure, if it failed, and its duration for the slow log. */
static inline int64_t gb_call_end(gb_engine *eng, gb_command *cmd, gb_call_stats s)
{
    uint64_t cycles = s.timed ? gb_cycles_now() - s.t0 : 0;
    int64_t us = eng->time_every_call ? (int64_t)((double)cycles * eng->ns_per_cycle / 1000.0) : -1;
    uint64_t since = GB_MAX(s.errors_before, eng->stats.errors_at_call_end);
    if (eng->stats.total_error_replies > since || eng->stats.uncounted_error) /* (> : not after a RESETSTAT) */
        cmd->failed_calls++;
    eng->stats.uncounted_error = false;
    eng->stats.errors_at_call_end = eng->stats.total_error_replies;
    if (s.served)
        return us;
    if (s.timed) {
        cmd->cycles += cycles;
        cmd->timed_calls++;
        if (eng->time_every_call)
            gb_call_observe(eng, cmd, us);
    }
    cmd->calls++;
    eng->stats.total_commands_processed++;
    return us;
}

/* Whether calls must all be timed, from the settings; the engine keeps the
 * answer in time_every_call (after start-up and each CONFIG SET). */
bool gb_engine_times_every_call(const gb_settings *cfg);

/* Periodic work (the server calls it every 1000/hz ms): active expiry,
 * incremental rehash, blocked-client timeouts, stats sampling, and the
 * service's cron. */
void gb_engine_cron(gb_engine *eng);

/* The service's loop hooks, as the transports call them (no-ops without a
 * service). */
/* Also left-over eviction (engine/core/memory/evict.h) comes first. */
gb_bg_state gb_engine_background_step(gb_engine *eng, uint64_t deadline_ns);
static inline bool gb_engine_replies_held(const gb_engine *eng)
{
    return eng->service && eng->service->replies_held(eng->service->ctx);
}
void gb_cluster_mode_before_replies(gb_engine *eng); /* engine/core/cluster_mode.h */
static inline void gb_engine_before_replies(gb_engine *eng)
{
    if (GB_UNLIKELY(eng->cluster != NULL))
        gb_cluster_mode_before_replies(eng); /* nodes.conf, once per iteration */
    if (eng->service)
        eng->service->before_replies(eng->service->ctx);
}


/* A key's value changed: invalidates WATCHers and tracking clients (Redis's
 * signalModifiedKey) and adds `changes` to the count of changes since the
 * last save (server.dirty, which the save points read and by which the gate
 * knows a command changed the dataset). Redis counts one change per element
 * pushed, added, removed or stored, and a command that moves a value between
 * two keys (RENAME, MOVE, LMOVE, SMOVE) once: its second key passes 0. */
void gb_engine_key_changed(gb_db *db, gb_slice key, uint64_t changes);

/* One change to a key: SET, LSET, ... */
static inline void gb_engine_key_modified(gb_db *db, gb_slice key) { gb_engine_key_changed(db, key, 1); }

/* Whether used memory (as maxmemory counts it) is over maxmemory. */
bool gb_engine_over_maxmemory(const gb_engine *eng);

/* Appends the INFO text for the n sections named ("default", "all",
 * "server", ...; none is not "default": pass it) to the callback, each
 * once, in Redis's order. */
void gb_engine_info(gb_engine *eng, int n, const gb_slice *names, void (*out)(void *ctx, const char *s, size_t n),
                    void *ctx);

/* Logging, with the level filter from the settings. */
void gb_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gb_log_set(int level, FILE *out);
/* Changes the level only (CONFIG SET loglevel keeps --logfile). */
void gb_log_set_level(int level);
/* syslog-enabled: from now on every line goes to syslog(3) as well, with
 * ident (kept by pointer) and facility. */
void gb_log_to_syslog(const char *ident, int facility);
/* The descriptor the log writes to (the crash report writes there too). */
int gb_log_fd(void);

#endif
