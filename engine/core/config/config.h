/*
 * Settings: one table describes every option — its name, type, default,
 * limits, whether CONFIG SET may change it at run time, and the help text
 * `--help` prints. The same table serves the config file (Redis-style
 * "name value" lines), command-line flags (--name value) and CONFIG GET/SET,
 * so an option cannot exist in one place and be missing in another.
 */
#ifndef GB_ENGINE_CONFIG_H
#define GB_ENGINE_CONFIG_H

#include <stdio.h>

#include "engine/base/common.h"
#include "platform/cpu.h"

enum gb_loglevel { GB_LOG_DEBUG = 0, GB_LOG_VERBOSE, GB_LOG_NOTICE, GB_LOG_WARNING };
enum gb_list_impl_setting { GB_LISTIMPL_SEGMENTED = 0, GB_LISTIMPL_PMA = 1 };
/* io-engine (docs/io_uring.md): how connected sockets are read and written. */
enum gb_io_engine_setting { GB_IO_ENGINE_AUTO = 0, GB_IO_ENGINE_IO_URING = 1, GB_IO_ENGINE_LIBUV = 2 };
enum gb_appendfsync { GB_FSYNC_ALWAYS = 0, GB_FSYNC_EVERYSEC = 1, GB_FSYNC_NO = 2 };

/* maxmemory-policy (engine/core/memory/evict.h): flag bits say what a policy
 * ranks keys by and where it draws them from, as Redis's MAXMEMORY_*; the
 * policy number above them tells apart those with the same flags.
 * noeviction is 0, so zeroed settings refuse rather than evict. */
enum {
    GB_EVICT_FLAG_LRU = 1 << 0,
    GB_EVICT_FLAG_LFU = 1 << 1,
    GB_EVICT_FLAG_ALLKEYS = 1 << 2,
};
enum gb_maxmemory_policy {
    GB_POLICY_NOEVICTION = 0,
    GB_POLICY_VOLATILE_LRU = (1 << 8) | GB_EVICT_FLAG_LRU,
    GB_POLICY_VOLATILE_LFU = (2 << 8) | GB_EVICT_FLAG_LFU,
    GB_POLICY_VOLATILE_TTL = 3 << 8,
    GB_POLICY_VOLATILE_RANDOM = 4 << 8,
    GB_POLICY_ALLKEYS_LRU = (5 << 8) | GB_EVICT_FLAG_LRU | GB_EVICT_FLAG_ALLKEYS,
    GB_POLICY_ALLKEYS_LFU = (6 << 8) | GB_EVICT_FLAG_LFU | GB_EVICT_FLAG_ALLKEYS,
    GB_POLICY_ALLKEYS_RANDOM = (7 << 8) | GB_EVICT_FLAG_ALLKEYS,
};

/* acl-pubsub-default: the channel flag a new selector starts with (the
 * value is engine/core/acl/acl_user.h's GB_ACL_SEL_ALLCHANNELS). */
enum { GB_ACL_PUBSUB_DEFAULT_RESETCHANNELS = 0, GB_ACL_PUBSUB_DEFAULT_ALLCHANNELS = 1 << 2 };

/* A `user <name> <rules...>` line of the config file (or a --user flag),
 * kept as written: users are made once every command is registered
 * (engine/core/acl/acl_file.h). */
typedef struct gb_config_user {
    char *line;   /* after the word "user" */
    char *origin; /* "path:line" or "--user", for error messages */
} gb_config_user;

/* `save <seconds> <changes> ...`: at most this many pairs. */
#define GB_SAVE_PARAMS_MAX 16

/* Most options the table may hold (engine/core/config/config.c checks it). */
#define GB_CONFIG_MAX_OPTS 320

/* The value of an option Redis has and Goblin keeps only to list and
 * rewrite (one with no equivalent here, or one replication will use):
 * which member is live follows the option's type. */
typedef union gb_config_value {
    int i;
    long long ll;
    char *s;
} gb_config_value;

/* oom-score-adj values. */
enum { GB_OOM_ADJ_NO = 0, GB_OOM_ADJ_YES = 1, GB_OOM_ADJ_RELATIVE = 2, GB_OOM_ADJ_ABSOLUTE = 3 };
/* supervised: which service manager to tell that the server is ready. */
/* propagation-error-behavior (engine/core/request/reply.c, unexpected_error). */
enum { GB_PROPAGATION_ERR_IGNORE = 0, GB_PROPAGATION_ERR_PANIC = 1, GB_PROPAGATION_ERR_PANIC_ON_REPLICAS = 2 };
enum { GB_SUPERVISED_NO = 0, GB_SUPERVISED_UPSTART = 1, GB_SUPERVISED_SYSTEMD = 2, GB_SUPERVISED_AUTO = 3 };

typedef struct gb_settings {
    /* network */
    int port;
    char *bind;
    char *unixsocket;
    int unixsocketperm;
    int tcp_backlog;
    long long maxclients;
    int timeout_s;
    /* security (engine/core/acl/acl.h) */
    char *requirepass;
    int protected_mode;
    /* Redis 7.0's enable-protected-configs / enable-debug-command /
     * enable-module-command: who may CONFIG SET dir and dbfilename, run
     * DEBUG, and run MODULE LOAD/LOADEX/UNLOAD (GB_PROTECTED_*). */
    int enable_protected_configs;
    int enable_debug_command;
    int enable_module_command;
    char *aclfile;
    long long acllog_max_len;
    int acl_pubsub_default; /* GB_ACL_PUBSUB_DEFAULT_* */
    gb_config_user *users;
    int nusers;
    /* keyspace */
    int databases;
    long long maxmemory;
    long long maxmemory_clients;    /* bytes, or -percent of maxmemory (Redis's PERCENT_CONFIG); 0: off */
    int maxmemory_policy; /* enum gb_maxmemory_policy */
    int maxmemory_samples;          /* keys sampled per eviction pick */
    int maxmemory_eviction_tenacity; /* 0..100: time an eviction cycle may take */
    int lfu_log_factor;             /* how slowly LFU counters saturate */
    int lfu_decay_time;             /* minutes per counter decrement; 0: never */
    int lazyfree_lazy_eviction;     /* evicted values freed in the background */
    int hz;
    /* scripting (engine/script) */
    long long busy_reply_threshold_ms;
    /* client limits */
    long long client_obuf_hard;
    long long client_obuf_soft;
    int client_obuf_soft_seconds;
    /* client-output-buffer-limit's other classes (the above is "normal"):
     * subscribed clients (pubsub), and replicas (kept for the setting's
     * format; this server has none yet) */
    long long client_obuf_pubsub_hard;
    long long client_obuf_pubsub_soft;
    int client_obuf_pubsub_soft_seconds;
    long long client_obuf_replica_hard;
    long long client_obuf_replica_soft;
    int client_obuf_replica_soft_seconds;
    /* notify-keyspace-events: GB_NOTIFY_* (engine/core/pubsub/pubsub.h) */
    int notify_keyspace_events;
    long long client_qbuf_limit;
    /* most keys CLIENT TRACKING remembers (0: no limit; engine/core/pubsub/tracking.h) */
    long long tracking_table_max_keys;
    long long proto_max_bulk_len;
    /* logging */
    int loglevel;
    char *logfile;
    /* data types */
    int list_max_listpack_size;
    int list_implementation;
    int list_compress_depth;
    long long hash_max_listpack_entries;
    long long hash_max_listpack_value;
    long long set_max_intset_entries;
    long long set_max_listpack_entries;
    long long set_max_listpack_value;
    long long zset_max_listpack_entries;
    long long zset_max_listpack_value;
    long long stream_node_max_bytes;   /* 0: no limit (1 GiB) */
    long long stream_node_max_entries; /* 0: no limit */
    long long hll_sparse_max_bytes;    /* a sparse HyperLogLog larger goes dense */
    /* persistence (engine/persist) */
    int save_n;                                   /* 0: no automatic snapshots */
    long long save_seconds[GB_SAVE_PARAMS_MAX];
    long long save_changes[GB_SAVE_PARAMS_MAX];
    char *dir;
    char *dbfilename;
    char *import_rdb; /* --import-rdb: convert this Redis dump.rdb to dbfilename and exit */
    char *export_rdb; /* --export-rdb: write the dataset as a Redis dump.rdb here and exit */
    int rdbcompression;
    int rdb_compression_level;
    int stop_writes_on_bgsave_error;
    int appendonly;
    int appendfsync;
    char *appenddirname;
    char *appendfilename;
    int auto_aof_rewrite_percentage;
    long long auto_aof_rewrite_min_size;
    int aof_load_truncated;
    /* lazy freeing (engine/core/memory/lazyfree.h) */
    int lazyfree_lazy_expire;
    int lazyfree_lazy_server_del;
    int lazyfree_lazy_user_del;
    int lazyfree_lazy_user_flush;
    /* rings and placement (transport/ring) */
    int rings;
    long long ring_size;
    int ring_hugepages;
    int ring_spin_us;
    int cpu;        /* -1: not pinned */
    int numa_arena;
    /* Not an option: where helper threads run (engine/base/helper_thread.h),
     * set by the server at start-up to the CPUs it was allowed minus --cpu;
     * empty: wherever they are created. */
    gb_cpuset helper_cpus;
    /* process (apps/server) */
    int daemonize;
    char *pidfile;
    int tcp_keepalive;
    int activerehashing;
    int dynamic_hz;
    int disable_thp;
    int oom_score_adj; /* GB_OOM_ADJ_* */
    char *oom_score_adj_values;
    int supervised;        /* GB_SUPERVISED_* */
    int set_proc_title;
    char *proc_title_template;
    int syslog_enabled;
    char *syslog_ident;
    int syslog_facility;   /* syslog(3)'s LOG_USER, LOG_LOCAL0.. values */
    int crash_log_enabled; /* the bug report on a fatal signal (platform/service.h) */
    int crash_memcheck_enabled; /* ... followed by the fast memory test */
    char *shutdown_on_sigint;   /* SHUTDOWN flags for the signal (engine/core/shutdown.h) */
    char *shutdown_on_sigterm;
    int shutdown_timeout;       /* seconds to wait for lagging replicas */
    int jemalloc_bg_thread;
    /* introspection (engine/core/introspect/slowlog.h, engine/core/introspect/latency.h) */
    long long slowlog_log_slower_than; /* microseconds; -1: off */
    long long slowlog_max_len;
    long long latency_monitor_threshold; /* milliseconds; 0: off */
    int latency_tracking;
    char *latency_tracking_info_percentiles;
    /* replication, the primary's side (engine/core/replication/repl.h) */
    long long repl_backlog_size;
    long long repl_backlog_ttl;     /* seconds without replicas before the backlog goes; 0: never */
    int repl_ping_replica_period;   /* seconds between PINGs in the stream */
    int min_replicas_to_write;      /* 0: off */
    int min_replicas_max_lag;       /* seconds; 0: off */
    int repl_diskless_sync;         /* a full sync streams its RDB as the scan makes it (engine/persist/repl_fsync.h) */
    int repl_diskless_sync_delay;   /* seconds it waits for more replicas */
    int repl_diskless_sync_max_replicas; /* replicas that start it at once; 0: none */
    int repl_disable_tcp_nodelay;   /* a full-syncing replica's socket without TCP_NODELAY */
    int repl_diskless_load;         /* GB_DISKLESS_LOAD_*: where a replica keeps a full sync (engine/persist/repl_load.h) */
    /* the replica side (engine/core/replication/replica.h) */
    char *replicaof; /* "<host> <port>" at start-up; empty: a primary */
    char *masterauth;
    char *masteruser;
    char *replica_announce_ip;
    int replica_ignore_disk_write_errors; /* no: a replica that cannot persist stops on its primary's next write */
    int replica_announce_port;
    int replica_announced;
    int replica_serve_stale_data;
    int replica_read_only;
    int propagation_error_behavior; /* GB_PROPAGATION_ERR_*: an error to the primary's or the log's command */
    int replica_priority;
    int replica_ignore_maxmemory;
    int replica_lazy_flush;         /* a full sync frees the old data set in the background */
    int repl_timeout;
    /* TLS (transport/tls, docs/tls.md): Redis 7.0's tls-* options; empty
     * strings are unset. */
    int tls_port;
    char *tls_cert_file;
    char *tls_key_file;
    char *tls_key_file_pass;
    char *tls_client_cert_file; /* the replication link's identity; unset: the server's */
    char *tls_client_key_file;
    char *tls_client_key_file_pass;
    char *tls_dh_params_file;
    char *tls_ca_cert_file;
    char *tls_ca_cert_dir;
    char *tls_protocols;
    char *tls_ciphers;
    char *tls_ciphersuites;
    int tls_auth_clients; /* GB_TLS_AUTH_* (transport/tls/tls.h) */
    int tls_auth_clients_user; /* GB_TLS_AUTH_USER_*: a verified client certificate's CN as the ACL user */
    int tls_replication;  /* the replica connects to its primary over TLS (transport/replica/link.c) */
    int tls_cluster;
    int tls_prefer_server_ciphers;
    int tls_session_caching;
    int tls_session_cache_size;
    int tls_session_cache_timeout;
    int tls_handshake_thread; /* Goblin Core's own (docs/tls.md) */
    int io_engine;            /* Goblin Core's own: enum gb_io_engine_setting */
    /* Redis Cluster (engine/cluster, engine/core/cluster_mode.h, docs/cluster.md) */
    int cluster_enabled;
    char *cluster_config_file;
    long long cluster_node_timeout; /* ms */
    int cluster_port; /* the bus port; 0: port + 10000 */
    char *cluster_announce_ip;
    char *cluster_announce_hostname;
    int cluster_announce_port;
    int cluster_announce_bus_port;
    int cluster_announce_tls_port; /* with tls-cluster: the client port announced (cluster-announce-port: pport) */
    int cluster_require_full_coverage;
    int cluster_allow_reads_when_down;
    int cluster_allow_replica_migration;
    int cluster_replica_validity_factor; /* how stale a replica may be to fail over on its own; 0: any */
    int cluster_replica_no_failover;     /* never fail over on its own (the nofailover flag) */
    int cluster_allow_pubsubshard_when_down;
    long long cluster_link_sendbuf_limit; /* bytes a bus link may have queued; 0: any */
    int cluster_migration_barrier;        /* working replicas a primary keeps when one of them migrates */
    int cluster_preferred_endpoint_type;  /* GB_ENDPOINT_*: ip, hostname or unknown-endpoint */
    /* Options kept only to be listed, rewritten and logged at start-up as
     * not applying (indexed by the option's place in the table). */
    gb_config_value inert[GB_CONFIG_MAX_OPTS];
    /* Which options the config file or the command line set (by the same
     * index): start-up logs those that do not apply. */
    uint8_t given[GB_CONFIG_MAX_OPTS];
    /* Not an option: the absolute path of the config file the server was
     * started with (CONFIG REWRITE's target, INFO's config_file); NULL: none. */
    char *config_file;
    /* Not an option: the program as started (argv[0]), proc-title-template's
     * {title}; NULL: none (tests). */
    const char *exec_name;
} gb_settings;

/* Fills s with every option's default. */
void gb_settings_defaults(gb_settings *s);
void gb_settings_free(gb_settings *s);
/* Deep copy (strings duplicated). */
void gb_settings_copy(gb_settings *dst, const gb_settings *src);

/* Sets option `name` from text. On failure returns a negative GB_E* code and
 * writes a message for the user into err. `at_runtime` refuses options that
 * cannot change while the server runs. */
int gb_config_set(gb_settings *s, const char *name, const char *value, bool at_runtime, char *err, size_t errlen);

/* Loads a config file: "name value" per line, '#' comments, quoted values.
 * On error, err names the file, line and option. */
int gb_config_load_file(gb_settings *s, const char *path, char *err, size_t errlen);

/* Parses argv (after the program name): an optional config file path first,
 * then --name value pairs (booleans may omit "yes"). Returns 0, GB_EINVAL
 * with err set, or 1 if --help/--version was handled (caller exits 0). */
int gb_config_parse_args(gb_settings *s, int argc, char **argv, char *err, size_t errlen);

/* CONFIG GET: calls emit(name, value) for every option matching the glob. */
void gb_config_get(const gb_settings *s, gb_slice pattern,
                   void (*emit)(void *ctx, const char *name, const char *value), void *ctx);

/* Whether `name` is an option (or alias), and its canonical name. */
const char *gb_config_canonical(const char *name);
/* True if CONFIG SET may change option `name` (or its alias). */
bool gb_config_is_runtime(const char *name);
/* Whether name is one of the settings enable-protected-configs guards
 * (Redis 7.0's PROTECTED_CONFIG: dir, dbfilename: where the snapshot is
 * written, so a client that may change them may write files anywhere). */
bool gb_config_is_protected(const char *name);

/* The name of an enumerated option's value (INFO's maxmemory_policy). */
const char *gb_config_enum_name(const char *name, int value);

/* enable-protected-configs and enable-debug-command values. */
enum { GB_PROTECTED_NO = 0, GB_PROTECTED_YES = 1, GB_PROTECTED_LOCAL = 2 };

/* Logs, once, every option the file or the command line set that Goblin
 * accepts without acting on it: no equivalent here (Redis's RDB format
 * details, active defragmentation, I/O threads). */
void gb_config_log_inert(const gb_settings *s);

/* CONFIG REWRITE: rewrites s->config_file as Redis does (its comments and
 * order kept, options updated in place, new ones appended after "# Generated
 * by CONFIG REWRITE", defaults dropped unless the file had them). users:
 * the "user ..." lines the file gets ("\n"-separated; NULL when an aclfile
 * keeps the users: the file's user lines then go). Returns 0 or a negative
 * GB_E* code with err set. */
int gb_config_rewrite(const gb_settings *s, const char *users, char *err, size_t errlen);

/* --help text: every option, its default and what it does. */
void gb_config_print_help(FILE *out, const char *prog);

#endif
