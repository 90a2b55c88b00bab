#define _XOPEN_SOURCE 700 /* realpath, getline, mkstemp */
#include "engine/core/config/config.h"
#include "engine/core/config/process_settings.h"
#include "engine/base/mem.h"

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform/file.h"

#include "engine/base/util.h"
#include "engine/core/engine.h"
#include "engine/core/pubsub/pubsub.h"

#include "goblin/version.h"

enum opt_type { T_INT, T_LONG, T_MEMORY, T_MEMORY_PCT, T_BOOL, T_STRING, T_ENUM, T_OCTAL, T_OBUF, T_SAVE, T_NOTIFY };

typedef struct opt_enum {
    const char *name;
    int value;
} opt_enum;

typedef struct opt {
    const char *name;
    const char *alias;     /* Redis's older name, accepted on input */
    enum opt_type type;
    size_t offset;         /* into gb_settings */
    long long min, max;    /* T_INT, T_MEMORY */
    const char *def;       /* default, as text (parsed at start-up) */
    bool runtime;          /* CONFIG SET may change it */
    const opt_enum *enums; /* T_ENUM */
    const char *help;
    /* T_STRING: refuses a value with Redis's reason, or returns NULL. */
    const char *(*check)(const char *value);
    bool protected_config; /* CONFIG SET only as enable-protected-configs allows */
    /* Whether Goblin acts on it (SCOPE_ACTS) or only accepts, lists and
     * rewrites it, logging at start-up that it does not apply. */
    enum opt_scope { SCOPE_ACTS = 0, SCOPE_NO_EQUIVALENT } scope;
} opt;

/* The offset of an option kept in gb_settings.inert (by its table index). */
#define INERT ((size_t)-1)

static const opt_enum loglevels[] = {
    {"debug", GB_LOG_DEBUG}, {"verbose", GB_LOG_VERBOSE}, {"notice", GB_LOG_NOTICE}, {"warning", GB_LOG_WARNING}, {NULL, 0}};
static const opt_enum pubsub_defaults[] = {{"allchannels", GB_ACL_PUBSUB_DEFAULT_ALLCHANNELS},
                                           {"resetchannels", GB_ACL_PUBSUB_DEFAULT_RESETCHANNELS},
                                           {NULL, 0}};
static const opt_enum policies[] = {{"volatile-lru", GB_POLICY_VOLATILE_LRU},
                                    {"volatile-lfu", GB_POLICY_VOLATILE_LFU},
                                    {"volatile-random", GB_POLICY_VOLATILE_RANDOM},
                                    {"volatile-ttl", GB_POLICY_VOLATILE_TTL},
                                    {"allkeys-lru", GB_POLICY_ALLKEYS_LRU},
                                    {"allkeys-lfu", GB_POLICY_ALLKEYS_LFU},
                                    {"allkeys-random", GB_POLICY_ALLKEYS_RANDOM},
                                    {"noeviction", GB_POLICY_NOEVICTION},
                                    {NULL, 0}};
static const opt_enum list_impls[] = {{"segmented", GB_LISTIMPL_SEGMENTED}, {"pma", GB_LISTIMPL_PMA}, {NULL, 0}};
static const opt_enum protected_actions[] = {
    {"no", GB_PROTECTED_NO}, {"yes", GB_PROTECTED_YES}, {"local", GB_PROTECTED_LOCAL}, {NULL, 0}};
/* (Redis's order: its error lists the choices so) */
static const opt_enum fsyncs[] = {
    {"everysec", GB_FSYNC_EVERYSEC}, {"always", GB_FSYNC_ALWAYS}, {"no", GB_FSYNC_NO}, {NULL, 0}};

/* Redis's checks: a file name is a name, not a path (persistence builds
 * the path from `dir`). */
static const char *check_dbfilename(const char *v)
{
    return strchr(v, '/') ? "dbfilename can't be a path, just a filename" : NULL;
}
static const char *check_appendfilename(const char *v)
{
    return strchr(v, '/') || !*v ? "appendfilename can't be a path, just a filename" : NULL;
}
static const char *check_appenddirname(const char *v)
{
    return strchr(v, '/') || !*v ? "appenddirname can't be a path, just a dirname" : NULL;
}
/* `dir` must name a directory that exists (Redis chdirs into it). */
static const char *check_dir(const char *v)
{
    struct stat st;
    if (stat(v, &st) != 0)
        return strerror(errno);
    return S_ISDIR(st.st_mode) ? NULL : strerror(ENOTDIR);
}

/* The words of v separated by one space, as Redis keeps a list setting
 * (`bind`) and CONFIG GET shows it. */
static char *single_spaced(const char *v)
{
    char *out = gb_malloc(strlen(v) + 1);
    size_t n = 0;
    for (const char *p = v; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        if (n)
            out[n++] = ' ';
        while (*p && *p != ' ' && *p != '\t')
            out[n++] = *p++;
    }
    out[n] = '\0';
    return out;
}

/* Redis's CONFIG_BINDADDR_MAX. The words are what every space separates,
 * empty ones included (Redis 7.0's CONFIG SET splits so, and an empty
 * address then fails to bind); the config file and the command line
 * single-space the value first (single_spaced). */
static const char *check_bind(const char *v)
{
    int words = *v ? 1 : 0;
    for (const char *p = v; *p; p++)
        words += *p == ' ';
    return words > 16 ? "Too many bind addresses specified." : NULL;
}

/* The words of v that are numbers, or -1 when one is not (at most max). */
static int parse_doubles(const char *v, double *out, int max)
{
    int n = 0;
    for (const char *p = v; *p;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        char *end;
        double d = strtod(p, &end);
        if (end == p || (*end && *end != ' ') || n == max)
            return -1;
        out[n++] = d;
        p = end;
    }
    return n;
}

static const char *check_percentiles(const char *v)
{
    double d[64];
    int n = parse_doubles(v, d, 64);
    if (n < 0)
        return "Invalid latency-tracking-info-percentiles parameters";
    for (int i = 0; i < n; i++)
        if (d[i] > 100.0 || d[i] < 0.0)
            return "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
    return NULL;
}

static const char *check_proc_title(const char *v)
{
    /* The syntax and the names here, with placeholder values; CONFIG SET
     * checks again with the server's own (cmd_server.c's config_apply). */
    return gb_proc_title_valid(v, NULL) ? NULL : "template format is invalid or contains unknown variables";
}

static const char *check_oom_values(const char *v)
{
    double d[4];
    int n = parse_doubles(v, d, 4);
    if (n != 3)
        return "wrong number of arguments";
    for (int i = 0; i < n; i++)
        if (d[i] != (double)(int)d[i] || d[i] < -2000 || d[i] > 2000)
            return "Invalid oom-score-adj-values, elements must be between -2000 and 2000.";
    return NULL;
}

/* replicaof: "<host> <port>" or "no one" (empty: not a replica). */
static const char *check_replicaof(const char *v)
{
    if (!*v)
        return NULL;
    const char *sp = strchr(v, ' ');
    if (!sp || strchr(sp + 1, ' '))
        return "wrong number of arguments";
    if (gb_strcasecmp(v, "no one") == 0)
        return NULL;
    char *end;
    long port = strtol(sp + 1, &end, 10);
    return port < 0 || port > 65535 || *end || end == sp + 1 ? "Invalid master port" : NULL;
}

/* shutdown-on-sigint / -sigterm: any of default, save, nosave, now, force. */
static const char *check_shutdown_flags(const char *v)
{
    bool save = false, nosave = false;
    for (const char *p = v; *p;) {
        size_t k = strcspn(p, " ");
        gb_slice w = gb_slice_make(p, k);
        static const char *words[] = {"default", "save", "nosave", "now", "force"};
        bool known = false;
        for (size_t i = 0; i < GB_ARRAY_LEN(words); i++)
            known |= gb_slice_ieq(w, words[i]);
        if (!known)
            return "argument(s) must be one of the following: default, save, nosave, now, force";
        save |= gb_slice_ieq(w, "save");
        nosave |= gb_slice_ieq(w, "nosave");
        p += k + (p[k] == ' ');
    }
    return save && nosave ? "shutdown options SAVE and NOSAVE can't be used simultaneously" : NULL;
}

static const opt_enum oom_adjs[] = {{"no", GB_OOM_ADJ_NO},
                                    {"yes", GB_OOM_ADJ_YES},
                                    {"relative", GB_OOM_ADJ_RELATIVE},
                                    {"absolute", GB_OOM_ADJ_ABSOLUTE},
                                    {NULL, 0}};
static const opt_enum supervised_modes[] = {{"upstart", 1}, {"systemd", 2}, {"auto", 3}, {"no", 0}, {NULL, 0}};
static const opt_enum syslog_facilities[] = {{"user", 8},     {"local0", 128}, {"local1", 136}, {"local2", 144},
                                             {"local3", 152}, {"local4", 160}, {"local5", 168}, {"local6", 176},
                                             {"local7", 184}, {NULL, 0}};
static const opt_enum diskless_loads[] = {{"disabled", 0}, {"on-empty-db", 1}, {"swapdb", 2}, {NULL, 0}};
static const opt_enum sanitize_modes[] = {{"no", 0}, {"yes", 1}, {"clients", 2}, {NULL, 0}};
static const opt_enum endpoint_types[] = {{"ip", 0}, {"hostname", 1}, {"unknown-endpoint", 2}, {NULL, 0}};
static const opt_enum propagation_errors[] = {{"ignore", GB_PROPAGATION_ERR_IGNORE},
                                              {"panic", GB_PROPAGATION_ERR_PANIC},
                                              {"panic-on-replicas", GB_PROPAGATION_ERR_PANIC_ON_REPLICAS},
                                              {NULL, 0}};
static const opt_enum tls_auth[] = {{"no", 0}, {"yes", 1}, {"optional", 2}, {NULL, 0}};
static const opt_enum tls_auth_user[] = {{"off", 0}, {"CN", 1}, {NULL, 0}};
static const opt_enum io_engines[] = {
    {"auto", GB_IO_ENGINE_AUTO}, {"io_uring", GB_IO_ENGINE_IO_URING}, {"libuv", GB_IO_ENGINE_LIBUV}, {NULL, 0}};

/* Rows for options Goblin accepts without acting on: `why` says so at
 * start-up and in --help. */
#define NA_(type, name, alias, min, max, def, runtime, enums, why, check, scope)                                     \
    {name, alias, type, INERT, min, max, def, runtime, enums, why, check, false, scope}
#define NA_BOOL(name, alias, def, runtime, why)                                                                      \
    NA_(T_BOOL, name, alias, 0, 1, def, runtime, NULL, why, NULL, SCOPE_NO_EQUIVALENT)
#define NA_INT(name, alias, min, max, def, runtime, why)                                                             \
    NA_(T_INT, name, alias, min, max, def, runtime, NULL, why, NULL, SCOPE_NO_EQUIVALENT)
#define NA_LONG(name, min, max, def, runtime, why)                                                                   \
    NA_(T_LONG, name, NULL, min, max, def, runtime, NULL, why, NULL, SCOPE_NO_EQUIVALENT)
#define NA_MEMORY(name, min, max, def, runtime, why)                                                                 \
    NA_(T_MEMORY, name, NULL, min, max, def, runtime, NULL, why, NULL, SCOPE_NO_EQUIVALENT)
#define NA_STRING(name, alias, def, runtime, why)                                                                    \
    NA_(T_STRING, name, alias, 0, 0, def, runtime, NULL, why, NULL, SCOPE_NO_EQUIVALENT)
#define NA_ENUM(name, def, runtime, enums, why)                                                                      \
    NA_(T_ENUM, name, NULL, 0, 0, def, runtime, enums, why, NULL, SCOPE_NO_EQUIVALENT)
#define WHY_DEFRAG "Active defragmentation (moving values off sparse jemalloc pages): not implemented in Goblin Core."
#define WHY_RDB "Redis's RDB file format: Goblin Core's snapshot has its own format (docs/persistence.md)."
#define WHY_CPULIST                                                                                                  \
    "CPU affinity of Redis's threads: Goblin Core pins with --cpu; its helper threads take the other CPUs."

#define OFF(f) offsetof(gb_settings, f)

static const opt options[] = {
    /* network */
    {"port", NULL, T_INT, OFF(port), 0, 65535, "6379", true, NULL,
     "TCP port to listen on; 0 disables TCP. CONFIG SET moves the listeners (open connections stay).", NULL},
    {"bind", NULL, T_STRING, OFF(bind), 0, 0, "127.0.0.1", true, NULL,
     "Addresses to listen on for TCP, separated by spaces (loopback by default: expose on purpose); at most 16. "
     "Redis's forms: * (every IPv4 address), ::* (every IPv6 one), a host name, -ADDR (skipped if the host "
     "lacks it); empty: no TCP.", check_bind},
    {"unixsocket", NULL, T_STRING, OFF(unixsocket), 0, 0, "/tmp/goblin-core.sock", false, NULL,
     "Unix socket path (also where ring clients claim slots); empty disables it.", NULL},
    {"unixsocketperm", NULL, T_OCTAL, OFF(unixsocketperm), 0, 0777, "700", false, NULL,
     "Permissions of the Unix socket, octal; applied before it accepts anything.", NULL},
    {"tcp-backlog", NULL, T_INT, OFF(tcp_backlog), 1, 65535, "511", false, NULL,
     "Listen backlog for TCP and the Unix socket.", NULL},
    {"maxclients", NULL, T_LONG, OFF(maxclients), 1, UINT32_MAX, "10000", true, NULL,
     "Connections beyond this are refused with '-ERR max number of clients reached'.", NULL},
    {"timeout", NULL, T_INT, OFF(timeout_s), 0, INT32_MAX, "0", true, NULL,
     "Close a client idle for this many seconds; 0 never.", NULL},
    /* security */
    {"requirepass", NULL, T_STRING, OFF(requirepass), 0, 0, "", true, NULL,
     "The default user's password (AUTH <password>, HELLO ... AUTH default <password>); empty: none (nopass). "
     "Users are set with `user` lines, --user, the aclfile or ACL SETUSER (docs/acl.md).", NULL},
    {"protected-mode", NULL, T_BOOL, OFF(protected_mode), 0, 1, "yes", true, NULL,
     "While the default user has no password, refuse TCP connections that do not come from 127.0.0.1 or ::1.",
     NULL},
    {"enable-protected-configs", NULL, T_ENUM, OFF(enable_protected_configs), 0, 0, "no", false, protected_actions,
     "Who may CONFIG SET dir and dbfilename (where snapshots are written): no one (no), every client (yes), or "
     "clients on the Unix socket, loopback TCP or a ring (local).", NULL},
    {"enable-debug-command", NULL, T_ENUM, OFF(enable_debug_command), 0, 0, "no", false, protected_actions,
     "Who may run DEBUG: no one (no), every client (yes), or local clients (local: Unix socket, loopback, rings).",
     NULL},
    {"enable-module-command", NULL, T_ENUM, OFF(enable_module_command), 0, 0, "no", false, protected_actions,
     "Who may run MODULE LOAD, LOADEX and UNLOAD: no one (no), every client (yes), or local clients (local). "
     "Goblin Core loads no Redis modules (docs/redis-interop.md): a permitted LOAD fails as Redis's failed load "
     "does.", NULL},
    {"aclfile", NULL, T_STRING, OFF(aclfile), 0, 0, "", false, NULL,
     "File of users (one `user <name> <rules>` per line) loaded at start-up and by ACL LOAD, written by ACL SAVE. "
     "Not together with `user` lines in the config.", NULL},
    {"acllog-max-len", NULL, T_LONG, OFF(acllog_max_len), 0, INT64_MAX, "128", true, NULL,
     "Most entries ACL LOG keeps (denied commands, keys, channels, failed authentications).", NULL},
    {"acl-pubsub-default", NULL, T_ENUM, OFF(acl_pubsub_default), 0, 0, "resetchannels", true, pubsub_defaults,
     "The channels a new user (or selector) starts with: resetchannels (none) or allchannels.", NULL},
    /* keyspace */
    {"databases", NULL, T_INT, OFF(databases), 1, 1024, "16", false, NULL,
     "Number of databases (SELECT 0 .. databases-1).", NULL},
    {"maxmemory", NULL, T_MEMORY, OFF(maxmemory), 0, INT64_MAX, "0", true, NULL,
     "Memory limit for data (e.g. 4gb); over it, commands that grow memory get an OOM error. 0: no limit.", NULL},
    {"maxmemory-policy", NULL, T_ENUM, OFF(maxmemory_policy), 0, 0, "noeviction", true, policies,
     "What happens at maxmemory: noeviction (writes refused), or evict keys before a command, chosen from all "
     "keys (allkeys-) or those with a TTL (volatile-) by least recent use (lru), least frequent use (lfu), at "
     "random, or nearest expiry (volatile-ttl). docs/eviction.md.", NULL},
    {"maxmemory-clients", NULL, T_MEMORY_PCT, OFF(maxmemory_clients), -100, INT64_MAX, "0", true, NULL,
     "Total memory of normal and pub/sub clients (buffers, arguments, MULTI queues) past which the largest are "
     "closed, as a size or a percentage of maxmemory (e.g. 5%); at least 128kb when set. 0: no limit. "
     "CLIENT NO-EVICT exempts a client.", NULL},
    {"maxmemory-samples", NULL, T_INT, OFF(maxmemory_samples), 1, INT32_MAX, "5", true, NULL,
     "Keys sampled per database for each eviction pick (more: closer to true LRU/LFU, slower).", NULL},
    {"maxmemory-eviction-tenacity", NULL, T_INT, OFF(maxmemory_eviction_tenacity), 0, 100, "10", true, NULL,
     "How long one eviction cycle may run before the rest is left to the event loop: 0..10 = 0..500 us, then "
     "+15% per step; 100: no limit.", NULL},
    {"lfu-log-factor", NULL, T_INT, OFF(lfu_log_factor), 0, INT32_MAX, "10", true, NULL,
     "LFU: the higher, the more accesses a key needs to raise its 8-bit logarithmic counter.", NULL},
    {"lfu-decay-time", NULL, T_INT, OFF(lfu_decay_time), 0, INT32_MAX, "1", true, NULL,
     "LFU: minutes after which an idle key's counter drops by one; 0: never.", NULL},
    {"lazyfree-lazy-eviction", NULL, T_BOOL, OFF(lazyfree_lazy_eviction), 0, 1, "no", true, NULL,
     "Free the values of evicted keys on a background thread (and propagate UNLINK instead of DEL).", NULL},
    {"hz", NULL, T_INT, OFF(hz), 0, INT32_MAX, "10", true, NULL,
     "Background task frequency (active expiry, rehashing, timeouts) per second.", NULL},
    {"busy-reply-threshold", "lua-time-limit", T_LONG, OFF(busy_reply_threshold_ms), 0, INT64_MAX, "5000", true, NULL,
     "Milliseconds a script runs before other clients get BUSY and SCRIPT KILL / FUNCTION KILL / SHUTDOWN NOSAVE "
     "can stop it; 0: never.", NULL},
    /* client limits */
    {"client-output-buffer-limit", NULL, T_OBUF, 0, 0, 0, "normal 1gb 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60",
     true, NULL,
     "'<class> <hard> <soft> <soft-seconds>' for the classes normal, replica and pubsub (a subscribed client): a "
     "client whose pending replies exceed hard, or stay over soft for soft-seconds, is disconnected; 0 turns a "
     "limit off. Redis's defaults, except normal, which Redis leaves unlimited.", NULL},
    {"client-query-buffer-limit", NULL, T_MEMORY, OFF(client_qbuf_limit), 1024 * 1024, INT64_MAX, "1gb", true, NULL,
     "Largest unparsed input a client may accumulate before it is disconnected.", NULL},
    {"proto-max-bulk-len", NULL, T_MEMORY, OFF(proto_max_bulk_len), 1024 * 1024, INT64_MAX, "512mb", true, NULL,
     "Largest single argument accepted ('Protocol error: invalid bulk length' beyond).", NULL},
    /* pub/sub */
    {"notify-keyspace-events", NULL, T_NOTIFY, OFF(notify_keyspace_events), 0, 0, "", true, NULL,
     "Keyspace notifications: K (keyspace channel), E (keyevent channel) and event classes g $ l s h z x e t d "
     "(A: all of these), m (key miss), n (new key); empty: off (docs/pubsub.md).", NULL},
    {"tracking-table-max-keys", NULL, T_LONG, OFF(tracking_table_max_keys), 0, INT64_MAX, "1000000", true, NULL,
     "Most keys CLIENT TRACKING remembers for its clients; over it, random ones are invalidated (their readers "
     "get the message) before the next command. 0: no limit.", NULL},
    /* logging */
    {"loglevel", NULL, T_ENUM, OFF(loglevel), 0, 0, "notice", true, loglevels,
     "debug, verbose, notice or warning.", NULL},
    {"logfile", NULL, T_STRING, OFF(logfile), 0, 0, "", false, NULL,
     "Log to this file instead of standard error.", NULL},
    /* data types */
    {"list-max-listpack-size", "list-max-ziplist-size", T_INT, OFF(list_max_listpack_size), INT32_MIN, INT32_MAX, "-2", true,
     NULL,
     "Compact-list limit: N > 0 entries, or -1..-5 for 4/8/16/32/64 KiB. Larger lists use list-implementation.", NULL},
    {"list-compress-depth", NULL, T_INT, OFF(list_compress_depth), 0, INT32_MAX, "0", true, NULL,
     "Interior segments of a large list stored LZF-compressed: 0 off, N keeps N plain segments at each end. "
     "Lists created afterwards take the new value (docs/lists.md).", NULL},
    {"list-implementation", NULL, T_ENUM, OFF(list_implementation), 0, 0, "segmented", false, list_impls,
     "Large-list representation: segmented (bounded leaves + count index) or pma (adaptive packed-memory array).", NULL},
    {"hash-max-listpack-entries", "hash-max-ziplist-entries", T_LONG, OFF(hash_max_listpack_entries), 0, INT64_MAX,
     "512", true, NULL, "Hashes with more fields use a hash table.", NULL},
    {"hash-max-listpack-value", "hash-max-ziplist-value", T_MEMORY, OFF(hash_max_listpack_value), 0, INT64_MAX, "64",
     true, NULL, "Hashes with a longer field or value use a hash table.", NULL},
    {"set-max-intset-entries", NULL, T_LONG, OFF(set_max_intset_entries), 0, INT64_MAX, "512", true, NULL,
     "Integer-only sets up to this size use the sorted integer array.", NULL},
    {"set-max-listpack-entries", NULL, T_LONG, OFF(set_max_listpack_entries), 0, INT64_MAX, "128", true, NULL,
     "Sets up to this size (short members) use the compact encoding.", NULL},
    {"set-max-listpack-value", NULL, T_LONG, OFF(set_max_listpack_value), 0, INT64_MAX, "64", true, NULL,
     "Sets with a longer member use a hash table.", NULL},
    {"zset-max-listpack-entries", "zset-max-ziplist-entries", T_LONG, OFF(zset_max_listpack_entries), 0, INT64_MAX,
     "128", true, NULL, "Sorted sets with more members use the B+tree.", NULL},
    {"zset-max-listpack-value", "zset-max-ziplist-value", T_MEMORY, OFF(zset_max_listpack_value), 0, INT64_MAX, "64",
     true, NULL, "Sorted sets with a longer member use the B+tree.", NULL},
    {"stream-node-max-bytes", NULL, T_MEMORY, OFF(stream_node_max_bytes), 0, INT64_MAX, "4096", true, NULL,
     "A stream node takes entries until Redis's listpack for them would reach this size (0: 1 GiB).", NULL},
    {"stream-node-max-entries", NULL, T_LONG, OFF(stream_node_max_entries), 0, INT64_MAX, "100", true, NULL,
     "...or until it holds this many entries, deleted ones included (0: no limit).", NULL},
    {"hll-sparse-max-bytes", NULL, T_MEMORY, OFF(hll_sparse_max_bytes), 0, INT64_MAX, "3000", true, NULL,
     "A sparse HyperLogLog that would grow past this many bytes becomes dense (12304 bytes).", NULL},
    /* rings and placement */
    /* persistence */
    {"save", NULL, T_SAVE, 0, 0, 0, "3600 1 300 100 60 10000", true, NULL,
     "Snapshot automatically after <seconds> if at least <changes> writes happened, as pairs; \"\" turns it off. "
     "A configured policy also saves on SHUTDOWN and SIGTERM.", NULL},
    {"dir", NULL, T_STRING, OFF(dir), 0, 0, "./", true, NULL,
     "Directory of the snapshot file and the append-only log directory (must exist).", check_dir, true},
    {"dbfilename", NULL, T_STRING, OFF(dbfilename), 0, 0, "dump.gdb", true, NULL,
     "Snapshot file name inside dir. Goblin writes its own format (docs/persistence.md); a Redis dump.rdb found "
     "there at start-up is loaded (RDB 1-12) and kept as <dbfilename>.redis when the first save replaces it.",
     check_dbfilename,
     true},
    {"export-rdb", NULL, T_STRING, OFF(export_rdb), 0, 0, "", false, NULL,
     "One-shot conversion back to Redis: load the dataset as start-up would (the append-only log, or the "
     "snapshot dir/dbfilename), write it to this path as a Redis dump.rdb (RDB 10, which redis-server 7.0 "
     "loads; the path must not exist yet) and exit.",
     NULL},
    {"import-rdb", NULL, T_STRING, OFF(import_rdb), 0, 0, "", false, NULL,
     "One-shot conversion: load this Redis dump.rdb (RDB versions 1-12, Redis up to 7.4), write it as Goblin's "
     "snapshot to dir/dbfilename (which must not exist yet) and exit. To serve a Redis dump.rdb directly, set "
     "dbfilename to it instead: it is recognised by its magic and kept as <dbfilename>.redis at the first save.",
     NULL},
    {"rdbcompression", NULL, T_BOOL, OFF(rdbcompression), 0, 1, "yes", true, NULL,
     "Compress snapshot blocks with zstd.", NULL},
    {"rdb-compression-level", NULL, T_INT, OFF(rdb_compression_level), 1, 19, "1", true, NULL,
     "zstd level of snapshot blocks (1 fastest, 19 smallest).", NULL},
    {"stop-writes-on-bgsave-error", NULL, T_BOOL, OFF(stop_writes_on_bgsave_error), 0, 1, "yes", true, NULL,
     "Refuse writes (MISCONF) while the last background save failed and a save policy is set.", NULL},
    {"appendonly", NULL, T_BOOL, OFF(appendonly), 0, 1, "no", true, NULL,
     "Log every write to the append-only log (appenddirname inside dir) and load it at start-up.", NULL},
    {"appendfsync", NULL, T_ENUM, OFF(appendfsync), 0, 0, "everysec", true, fsyncs,
     "always: a write is acknowledged once on disk (group commit); everysec: sync every second, a crash loses "
     "about the last 2 s; no: leave it to the OS.", NULL},
    {"appenddirname", NULL, T_STRING, OFF(appenddirname), 0, 0, "appendonlydir", false, NULL,
     "Directory, inside dir, of the append-only log's files and manifest.", check_appenddirname},
    {"appendfilename", NULL, T_STRING, OFF(appendfilename), 0, 0, "appendonly.aof", false, NULL,
     "Base name of the append-only log's files.", check_appendfilename},
    {"auto-aof-rewrite-percentage", NULL, T_INT, OFF(auto_aof_rewrite_percentage), 0, INT32_MAX, "100", true, NULL,
     "Rewrite the log when it grew by this percentage since the last rewrite (0: never automatically).", NULL},
    {"auto-aof-rewrite-min-size", NULL, T_MEMORY, OFF(auto_aof_rewrite_min_size), 0, INT64_MAX, "64mb", true, NULL,
     "...but not before the log is at least this big.", NULL},
    {"aof-load-truncated", NULL, T_BOOL, OFF(aof_load_truncated), 0, 1, "yes", true, NULL,
     "At start-up, drop a log's last command when it was cut short by a crash (logged) instead of refusing to start.", NULL},
    /* lazy freeing */
    {"lazyfree-lazy-expire", NULL, T_BOOL, OFF(lazyfree_lazy_expire), 0, 1, "no", true, NULL,
     "Free the values of expired keys on a background thread.", NULL},
    {"lazyfree-lazy-server-del", NULL, T_BOOL, OFF(lazyfree_lazy_server_del), 0, 1, "no", true, NULL,
     "Free values a command replaces or deletes implicitly (SET over a key, RENAME's target) in the background.",
     NULL},
    {"lazyfree-lazy-user-del", NULL, T_BOOL, OFF(lazyfree_lazy_user_del), 0, 1, "no", true, NULL,
     "Make DEL free in the background, as UNLINK does.", NULL},
    {"lazyfree-lazy-user-flush", NULL, T_BOOL, OFF(lazyfree_lazy_user_flush), 0, 1, "no", true, NULL,
     "Make FLUSHDB and FLUSHALL without SYNC or ASYNC free in the background.", NULL},
    {"rings", NULL, T_INT, OFF(rings), 0, 4096, "16", false, NULL,
     "Shared-memory ring slots created at start-up (0 disables rings).", NULL},
    {"ring-size", NULL, T_MEMORY, OFF(ring_size), 4096, 1LL << 30, "1mb", false, NULL,
     "Bytes per direction of each ring (rounded up to a power of two).", NULL},
    {"ring-hugepages", NULL, T_BOOL, OFF(ring_hugepages), 0, 1, "no", false, NULL,
     "Back the ring pool with huge pages (Linux); refuses to start if the pool cannot be filled.", NULL},
    {"ring-spin-us", NULL, T_INT, OFF(ring_spin_us), 0, 10000000, "50", true, NULL,
     "Microseconds the engine busy-polls idle rings before it parks (and a client spins before it sleeps).", NULL},
    {"cpu", NULL, T_INT, OFF(cpu), -1, 1048575, "-1", false, NULL,
     "Pin the engine thread to this CPU, bind the ring pool strictly to its NUMA node and verify every page; "
     "-1: no pinning.", NULL},
    {"numa-arena", NULL, T_BOOL, OFF(numa_arena), 0, 1, "no", false, NULL,
     "With --cpu: prefer the CPU's NUMA node for all other memory (best effort, never fatal).", NULL},
    /* ---- Redis 7.0's other options (issue 36): its redis.conf loads as it is ---- */
    /* process */
    {"daemonize", NULL, T_BOOL, OFF(daemonize), 0, 1, "no", false, NULL,
     "Detach from the terminal and run in the background (standard streams to /dev/null; log to logfile).", NULL},
    {"pidfile", NULL, T_STRING, OFF(pidfile), 0, 0, "", false, NULL,
     "Write the process id to this file at start-up and remove it at exit (daemonized without one: "
     "/var/run/redis.pid, as Redis).", NULL},
    {"tcp-keepalive", NULL, T_INT, OFF(tcp_keepalive), 0, INT32_MAX, "300", true, NULL,
     "Seconds between TCP keepalive probes of idle client connections (new connections); 0: off.", NULL},
    {"activerehashing", NULL, T_BOOL, OFF(activerehashing), 0, 1, "yes", true, NULL,
     "Let the cron spend 1 ms per database moving a resizing key table forward.", NULL},
    {"dynamic-hz", NULL, T_BOOL, OFF(dynamic_hz), 0, 1, "yes", true, NULL,
     "Raise the cron frequency above hz while many clients are connected (doubling per 200 clients per tick, "
     "up to 500), as Redis.", NULL},
    {"disable-thp", NULL, T_BOOL, OFF(disable_thp), 0, 1, "yes", false, NULL,
     "Turn transparent huge pages off for this process (Linux prctl; ring-hugepages is unaffected).", NULL},
    {"oom-score-adj", NULL, T_ENUM, OFF(oom_score_adj), 0, 0, "no", true, oom_adjs,
     "Set the Linux OOM killer's score of this process from oom-score-adj-values' first (master) value: "
     "yes/relative adds it to the score at start-up, absolute sets it, no leaves it.", NULL},
    {"oom-score-adj-values", NULL, T_STRING, OFF(oom_score_adj_values), 0, 0, "0 200 800", true, NULL,
     "Three values, -2000..2000, for a master, a replica and a background child (only the first applies: no "
     "replication, no fork).", check_oom_values},
    {"supervised", NULL, T_ENUM, OFF(supervised), 0, 0, "no", false, supervised_modes,
     "Tell a service manager when the server is ready: systemd (sd_notify READY=1 to $NOTIFY_SOCKET, STOPPING=1 "
     "at shutdown), upstart (stop with SIGSTOP until continued), auto (whichever's variable is set), no. A "
     "supervised server does not daemonize.", NULL},
    {"syslog-enabled", NULL, T_BOOL, OFF(syslog_enabled), 0, 1, "no", false, NULL,
     "Also send every log line to the system logger (syslog(3)), as Redis does, with syslog-ident and "
     "syslog-facility.", NULL},
    {"syslog-ident", NULL, T_STRING, OFF(syslog_ident), 0, 0, "redis", false, NULL,
     "The name syslog lines carry (Redis's default, so existing filters keep matching).", NULL},
    {"syslog-facility", NULL, T_ENUM, OFF(syslog_facility), 0, 0, "local0", false, syslog_facilities,
     "The syslog facility: user or local0..local7.", NULL},
    {"set-proc-title", NULL, T_BOOL, OFF(set_proc_title), 0, 1, "yes", false, NULL,
     "Show proc-title-template's expansion as the process title in ps and top (Linux, macOS).", NULL},
    {"proc-title-template", NULL, T_STRING, OFF(proc_title_template), 0, 0, "{title} {listen-addr} {server-mode}",
     true, NULL,
     "The process title: {title} (the program as started), {listen-addr} (first bind address:port, or "
     "unixsocket:path), {server-mode}, {config-file}, {port}, {tls-port}, {unixsocket}; '{{' is a brace.",
     check_proc_title},
    {"crash-memcheck-enabled", NULL, T_BOOL, OFF(crash_memcheck_enabled), 0, 1, "yes", true, NULL,
     "After a crash report, a fast test of the process's memory in place (Linux: every anonymous writable "
     "mapping; elsewhere none, as in Redis), ending with whether it found errors.", NULL},
    {"crash-log-enabled", NULL, T_BOOL, OFF(crash_log_enabled), 0, 1, "yes", true, NULL,
     "On a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) write a bug report with the stack trace to "
     "the log, then die as the signal would (a core dump where enabled).", NULL},
    {"jemalloc-bg-thread", NULL, T_BOOL, OFF(jemalloc_bg_thread), 0, 1, "yes", true, NULL,
     "jemalloc's background threads return unused pages to the system off the engine thread (docs/allocator.md; "
     "no effect in a GOBLIN_ALLOCATOR=libc build).", NULL},
    /* introspection */
    {"slowlog-log-slower-than", NULL, T_LONG, OFF(slowlog_log_slower_than), -1, INT64_MAX, "10000", true, NULL,
     "Log commands that ran at least this many microseconds in SLOWLOG; -1: off, 0: every command.", NULL},
    {"slowlog-max-len", NULL, T_LONG, OFF(slowlog_max_len), 0, INT64_MAX, "128", true, NULL,
     "Most entries SLOWLOG keeps (the oldest go first).", NULL},
    {"latency-monitor-threshold", NULL, T_LONG, OFF(latency_monitor_threshold), 0, INT64_MAX, "0", true, NULL,
     "Record LATENCY events (command, fast-command, expire-cycle, aof-fsync-always ...) of at least this many "
     "milliseconds; 0: off.", NULL},
    {"latency-tracking", NULL, T_BOOL, OFF(latency_tracking), 0, 1, "yes", true, NULL,
     "Keep a latency histogram per command (LATENCY HISTOGRAM, INFO latencystats).", NULL},
    {"latency-tracking-info-percentiles", NULL, T_STRING, OFF(latency_tracking_info_percentiles), 0, 0, "50 99 99.9",
     true, NULL, "The percentiles INFO latencystats shows, 0..100, separated by spaces.", check_percentiles},
    /* accepted, listed and rewritten; nothing here acts on them */
    NA_BOOL("always-show-logo", NULL, "no", false, "Redis's ASCII-art logo: Goblin Core logs one line instead."),
    NA_STRING("ignore-warnings", NULL, "", true, "Redis's start-up warnings about kernel bugs: none checked here."),
    NA_INT("io-threads", NULL, 1, 128, "1", false, "I/O threads: Goblin Core serves from one engine thread "
                                                    "(and shared-memory rings)."),
    NA_BOOL("io-threads-do-reads", NULL, "no", false, "I/O threads: not used."),
    NA_STRING("server_cpulist", NULL, "", false, WHY_CPULIST),
    NA_STRING("bio_cpulist", NULL, "", false, WHY_CPULIST),
    NA_STRING("aof_rewrite_cpulist", NULL, "", false, WHY_CPULIST),
    NA_STRING("bgsave_cpulist", NULL, "", false, WHY_CPULIST),
    NA_STRING("bind-source-addr", NULL, "", true, "Source address of outgoing connections: Goblin Core makes none."),
    NA_INT("socket-mark-id", NULL, 0, INT32_MAX, "0", false, "SO_MARK of listening sockets: not implemented."),
    NA_INT("active-expire-effort", NULL, 1, 10, "1", true,
           "Active expiry's effort: Goblin Core's cron gives expiry a quarter of each period."),
    NA_BOOL("activedefrag", NULL, "no", true, WHY_DEFRAG),
    NA_MEMORY("active-defrag-ignore-bytes", 1, INT64_MAX, "104857600", true, WHY_DEFRAG),
    NA_INT("active-defrag-threshold-lower", NULL, 0, 1000, "10", true, WHY_DEFRAG),
    NA_INT("active-defrag-threshold-upper", NULL, 0, 1000, "100", true, WHY_DEFRAG),
    NA_INT("active-defrag-cycle-min", NULL, 1, 99, "1", true, WHY_DEFRAG),
    NA_INT("active-defrag-cycle-max", NULL, 1, 99, "25", true, WHY_DEFRAG),
    NA_LONG("active-defrag-max-scan-fields", 1, INT64_MAX, "1000", true, WHY_DEFRAG),
    NA_ENUM("sanitize-dump-payload", "no", true, sanitize_modes, "RESTORE payloads: Goblin Core checks every payload in full before it "
           "is used (Redis's 'yes'), whatever this says."),
    {"propagation-error-behavior", NULL, T_ENUM, OFF(propagation_error_behavior), 0, 0, "ignore", true,
     propagation_errors,
     "An error answered to a command of the primary's stream or of the append-only log being loaded is logged "
     "(== CRITICAL ==) and counted (INFO unexpected_error_replies); panic: the server also stops, on a read-only "
     "replica and while loading the log; panic-on-replicas: on a read-only replica only.", NULL},
    {"shutdown-on-sigint", NULL, T_STRING, OFF(shutdown_on_sigint), 0, 0, "default", true, NULL,
     "SHUTDOWN's flags for SIGINT: default, or some of save, nosave, now, force.", check_shutdown_flags},
    {"shutdown-on-sigterm", NULL, T_STRING, OFF(shutdown_on_sigterm), 0, 0, "default", true, NULL,
     "SHUTDOWN's flags for SIGTERM: default, or some of save, nosave, now, force.", check_shutdown_flags},
    {"shutdown-timeout", NULL, T_INT, OFF(shutdown_timeout), 0, INT32_MAX, "10", true, NULL,
     "Seconds a shutdown waits for lagging replicas to catch up, writes paused (0: not at all).", NULL},
    /* persistence details of Redis's RDB and AOF */
    NA_BOOL("rdbchecksum", NULL, "yes", false, WHY_RDB),
    NA_BOOL("rdb-del-sync-files", NULL, "no", true, WHY_RDB),
    NA_BOOL("rdb-save-incremental-fsync", NULL, "yes", true, "Snapshot fsync every 4 MB: Goblin Core's writer "
                                                              "syncs once, at the end."),
    NA_BOOL("aof-rewrite-incremental-fsync", NULL, "yes", true, "AOF rewrite fsync every 4 MB: Goblin Core's "
                                                                "rewrite syncs once, at the end."),
    NA_BOOL("aof-use-rdb-preamble", NULL, "yes", true, "An RDB preamble in the AOF: Goblin Core's base file is "
                                                       "its own snapshot format."),
    NA_BOOL("aof-timestamp-enabled", NULL, "no", true, "Timestamp annotations in the AOF: not written (a Redis log's are read and skipped)."),
    NA_BOOL("aof-disable-auto-gc", NULL, "no", true, "Keeping old AOF history files: Goblin Core removes them."),
    NA_BOOL("no-appendfsync-on-rewrite", NULL, "no", true, "Goblin Core's AOF rewrite runs in a thread without "
                                                           "fsync contention: appendfsync always holds."),
    /* replication (another issue implements it) */
    /* the replica side (engine/core/replication/replica.h, transport/replica) */
    {"replicaof", "slaveof", T_STRING, OFF(replicaof), 0, 0, "", false, NULL,
     "'<host> <port>': start as a replica of that primary (REPLICAOF changes it at run time).", check_replicaof},
    {"masterauth", NULL, T_STRING, OFF(masterauth), 0, 0, "", true, NULL,
     "Password a replica sends to its primary (AUTH) before syncing; empty: none.", NULL},
    {"masteruser", NULL, T_STRING, OFF(masteruser), 0, 0, "", true, NULL,
     "User a replica authenticates as with masterauth (AUTH <user> <pass>); empty: the default user.", NULL},
    {"replica-announce-ip", "slave-announce-ip", T_STRING, OFF(replica_announce_ip), 0, 0, "", true, NULL,
     "Address a replica tells its primary (REPLCONF ip-address); empty: the one the primary sees.", NULL},
    {"replica-announce-port", "slave-announce-port", T_INT, OFF(replica_announce_port), 0, 65535, "0", true, NULL,
     "Port a replica tells its primary (REPLCONF listening-port); 0: the port it listens on.", NULL},
    {"replica-announced", NULL, T_BOOL, OFF(replica_announced), 0, 1, "yes", true, NULL,
     "Shown as replica_announced in INFO replication (Sentinel reads it).", NULL},
    {"replica-serve-stale-data", "slave-serve-stale-data", T_BOOL, OFF(replica_serve_stale_data), 0, 1, "yes", true,
     NULL, "While its link is down or before the first sync, a replica answers from the data it has; no: MASTERDOWN.",
     NULL},
    {"replica-read-only", "slave-read-only", T_BOOL, OFF(replica_read_only), 0, 1, "yes", true, NULL,
     "A replica refuses writes from its clients (READONLY); the primary's stream always applies.", NULL},
    {"replica-lazy-flush", "slave-lazy-flush", T_BOOL, OFF(replica_lazy_flush), 0, 1, "no", true, NULL,
     "A full sync empties the replica's old data set in the background (yes) or before loading the new one "
     "(no).", NULL},
    {"replica-ignore-maxmemory", "slave-ignore-maxmemory", T_BOOL, OFF(replica_ignore_maxmemory), 0, 1, "yes", true,
     NULL, "A replica evicts nothing whatever maxmemory says: it stays its primary's exact copy.", NULL},
    {"replica-ignore-disk-write-errors", NULL, T_BOOL, OFF(replica_ignore_disk_write_errors), 0, 1, "no", true, NULL,
     "While this replica cannot persist (MISCONF), a write from its primary makes it exit rather than hold data "
     "its disk lacks (Redis 7.0); yes: apply it anyway, with a warning every 10 s.", NULL},
    {"replica-priority", "slave-priority", T_INT, OFF(replica_priority), 0, INT32_MAX, "100", true, NULL,
     "Shown as slave_priority in INFO replication (Sentinel's choice of a new primary).", NULL},
    {"repl-diskless-sync", NULL, T_BOOL, OFF(repl_diskless_sync), 0, 1, "yes", true, NULL,
     "A full sync streams the RDB to the replicas' sockets as the background scan makes it ($EOF:<mark> framing); "
     "no: the RDB goes to a file first and is then sent with its length.", NULL},
    {"repl-diskless-sync-delay", NULL, T_INT, OFF(repl_diskless_sync_delay), 0, INT32_MAX, "5", true, NULL,
     "Seconds a diskless full sync waits for more replicas to arrive and share its scan.", NULL},
    {"repl-diskless-sync-max-replicas", NULL, T_INT, OFF(repl_diskless_sync_max_replicas), 0, INT32_MAX, "0", true,
     NULL, "With this many replicas waiting, a diskless full sync starts before its delay ends; 0: no limit.", NULL},
    {"repl-diskless-load", NULL, T_ENUM, OFF(repl_diskless_load), 0, 0, "disabled", true, diskless_loads,
     "Where a replica keeps a full sync's payload: disabled: a temporary file in dir, the old data flushed before "
     "it loads; on-empty-db: in memory when the replica holds no key; swapdb: in memory, the old data kept until "
     "the new loads (restored if it does not).", NULL},
    {"repl-disable-tcp-nodelay", NULL, T_BOOL, OFF(repl_disable_tcp_nodelay), 0, 1, "no", true, NULL,
     "A replica that needs a full sync gets its socket's TCP_NODELAY turned off: fewer, larger packets for the "
     "stream, at the cost of up to ~40 ms more replication delay.", NULL},
    {"repl-backlog-size", NULL, T_MEMORY, OFF(repl_backlog_size), 1, INT64_MAX, "1048576", true, NULL,
     "Bytes of the latest replication stream kept so a replica that lost its link continues (PSYNC) instead of "
     "loading everything again; allocated when the first replica attaches.", NULL},
    {"repl-backlog-ttl", NULL, T_LONG, OFF(repl_backlog_ttl), 0, INT64_MAX, "3600", true, NULL,
     "Seconds without any replica after which the backlog is freed; 0: never.", NULL},
    {"repl-timeout", NULL, T_INT, OFF(repl_timeout), 1, INT32_MAX, "60", true, NULL,
     "Seconds without a byte from the primary after which a replica drops its link and reconnects.", NULL},
    {"repl-ping-replica-period", "repl-ping-slave-period", T_INT, OFF(repl_ping_replica_period), 1, INT32_MAX, "10",
     true, NULL, "Seconds between the PINGs a primary sends its replicas through the stream.", NULL},
    {"min-replicas-to-write", "min-slaves-to-write", T_INT, OFF(min_replicas_to_write), 0, INT32_MAX, "0", true,
     NULL, "Refuse writes (-NOREPLICAS) with fewer online replicas whose last ACK is at most min-replicas-max-lag "
     "seconds old; 0: off.", NULL},
    {"min-replicas-max-lag", "min-slaves-max-lag", T_INT, OFF(min_replicas_max_lag), 0, INT32_MAX, "10", true, NULL,
     "Seconds since its last ACK for a replica to count for min-replicas-to-write; 0: the check is off.", NULL},
    /* cluster */
    {"cluster-enabled", NULL, T_BOOL, OFF(cluster_enabled), 0, 1, "no", false, NULL,
     "Cluster mode: hash slots, redirections, CLUSTER commands, nodes.conf (docs/cluster.md).", NULL},
    {"cluster-config-file", NULL, T_STRING, OFF(cluster_config_file), 0, 0, "nodes.conf", false, NULL,
     "The cluster state file (in dir), written by the server; two servers must not share one.", NULL},
    {"cluster-node-timeout", NULL, T_LONG, OFF(cluster_node_timeout), 0, INT64_MAX, "15000", true, NULL,
     "Milliseconds a node may not answer before it is suspected (PFAIL), then failed by a majority of "
     "primaries; a primary that was in the minority waits this long (0.5 to 5 s) before it serves again.", NULL},
    {"cluster-port", NULL, T_INT, OFF(cluster_port), 0, 65535, "0", false, NULL,
     "The cluster bus port shown for this node; 0: port + 10000.", NULL},
    {"cluster-announce-ip", NULL, T_STRING, OFF(cluster_announce_ip), 0, 0, "", true, NULL,
     "The address this node gives itself in CLUSTER NODES/SLOTS/SHARDS; empty: none known yet.", NULL},
    {"cluster-announce-hostname", NULL, T_STRING, OFF(cluster_announce_hostname), 0, 0, "", true, NULL,
     "The host name this node gives itself in CLUSTER NODES/SHARDS; empty: none.", NULL},
    {"cluster-announce-port", NULL, T_INT, OFF(cluster_announce_port), 0, 65535, "0", true, NULL,
     "The client port this node gives itself; 0: port.", NULL},
    {"cluster-announce-bus-port", NULL, T_INT, OFF(cluster_announce_bus_port), 0, 65535, "0", true, NULL,
     "The bus port this node gives itself; 0: cluster-port.", NULL},
    {"cluster-announce-tls-port", NULL, T_INT, OFF(cluster_announce_tls_port), 0, 65535, "0", true, NULL,
     "With tls-cluster: the TLS client port this node gives itself (cluster-announce-port is then its plaintext "
     "one); 0: tls-port.", NULL},
    {"cluster-preferred-endpoint-type", NULL, T_ENUM, OFF(cluster_preferred_endpoint_type), 0, 0, "ip", true,
     endpoint_types, "What MOVED, ASK, CLUSTER SLOTS and SHARDS give clients to reach a node: its ip, its hostname "
     "(cluster-announce-hostname; '?' for a node without one) or unknown-endpoint (the address the client used).",
     NULL},
    {"cluster-replica-validity-factor", "cluster-slave-validity-factor", T_INT, OFF(cluster_replica_validity_factor),
     0, INT32_MAX, "10", true, NULL,
     "A replica whose link to its failed primary has been down longer than cluster-node-timeout times this (plus "
     "repl-ping-replica-period) does not start an automatic failover; 0: it always may.", NULL},
    {"cluster-replica-no-failover", "cluster-slave-no-failover", T_BOOL, OFF(cluster_replica_no_failover), 0, 1, "no",
     true, NULL, "This replica never starts an automatic failover (CLUSTER FAILOVER still works); shown as "
     "nofailover in CLUSTER NODES.", NULL},
    {"cluster-migration-barrier", NULL, T_INT, OFF(cluster_migration_barrier), 0, INT32_MAX, "1", true, NULL,
     "A replica moves to a primary left without a working replica only if its own primary keeps at least this "
     "many working replicas after it goes (with cluster-allow-replica-migration).", NULL},
    {"cluster-allow-replica-migration", NULL, T_BOOL, OFF(cluster_allow_replica_migration), 0, 1, "yes", true, NULL,
     "A primary that lost its last slot to another becomes that node's replica (always, when every slot the "
     "other claims came from it).", NULL},
    {"cluster-require-full-coverage", NULL, T_BOOL, OFF(cluster_require_full_coverage), 0, 1, "yes", true, NULL,
     "The cluster is down (CLUSTERDOWN) while any hash slot has no node serving it.", NULL},
    {"cluster-allow-reads-when-down", NULL, T_BOOL, OFF(cluster_allow_reads_when_down), 0, 1, "no", true, NULL,
     "While the cluster is down, still serve read commands on the slots this node has.", NULL},
    {"cluster-allow-pubsubshard-when-down", NULL, T_BOOL, OFF(cluster_allow_pubsubshard_when_down), 0, 1, "yes", true,
     NULL, "While the cluster is down, shard channels (SPUBLISH, SSUBSCRIBE) still work on the slots this node "
     "has; no: CLUSTERDOWN.", NULL},
    {"cluster-link-sendbuf-limit", NULL, T_MEMORY, OFF(cluster_link_sendbuf_limit), 0, INT64_MAX, "0", true, NULL,
     "A cluster bus link whose unsent messages exceed this many bytes is closed (and dialled again), counted in "
     "CLUSTER INFO's total_cluster_links_buffer_limit_exceeded; 0: no limit.", NULL},
    /* TLS */
    /* TLS (transport/tls, docs/tls.md). CONFIG SET of any of them but
     * tls-auth-clients builds a new context for new connections (open
     * ones keep theirs), as Redis's applyTlsCfg. */
    {"tls-port", NULL, T_INT, OFF(tls_port), 0, 65535, "0", true, NULL,
     "TLS port to listen on (on the addresses of bind), beside port; 0: no TLS listener.", NULL},
    {"tls-cert-file", NULL, T_STRING, OFF(tls_cert_file), 0, 0, "", true, NULL,
     "The server's certificate (PEM, chain allowed).", NULL},
    {"tls-key-file", NULL, T_STRING, OFF(tls_key_file), 0, 0, "", true, NULL,
     "The private key of tls-cert-file (PEM).", NULL},
    {"tls-key-file-pass", NULL, T_STRING, OFF(tls_key_file_pass), 0, 0, "", true, NULL,
     "The passphrase of tls-key-file, if it is encrypted.", NULL},
    {"tls-client-cert-file", NULL, T_STRING, OFF(tls_client_cert_file), 0, 0, "", true, NULL,
     "Certificate the replication link presents to its primary (PEM); unset, tls-cert-file's.", NULL},
    {"tls-client-key-file", NULL, T_STRING, OFF(tls_client_key_file), 0, 0, "", true, NULL,
     "Private key of tls-client-cert-file (PEM).", NULL},
    {"tls-client-key-file-pass", NULL, T_STRING, OFF(tls_client_key_file_pass), 0, 0, "", true, NULL,
     "Passphrase of tls-client-key-file, if it is encrypted.", NULL},
    {"tls-dh-params-file", NULL, T_STRING, OFF(tls_dh_params_file), 0, 0, "", true, NULL,
     "DH parameters (PEM) for DHE ciphers; unset: OpenSSL's automatic ones.", NULL},
    {"tls-ca-cert-file", NULL, T_STRING, OFF(tls_ca_cert_file), 0, 0, "", true, NULL,
     "CA certificates (PEM) that client certificates are checked against.", NULL},
    {"tls-ca-cert-dir", NULL, T_STRING, OFF(tls_ca_cert_dir), 0, 0, "", true, NULL,
     "A directory of CA certificates (c_rehash layout), as tls-ca-cert-file.", NULL},
    {"tls-protocols", NULL, T_STRING, OFF(tls_protocols), 0, 0, "", true, NULL,
     "TLS versions allowed, from TLSv1 TLSv1.1 TLSv1.2 TLSv1.3; unset: TLSv1.2 and TLSv1.3.", NULL},
    {"tls-ciphers", NULL, T_STRING, OFF(tls_ciphers), 0, 0, "", true, NULL,
     "TLSv1.2 cipher list (OpenSSL's syntax); unset: OpenSSL's default.", NULL},
    {"tls-ciphersuites", NULL, T_STRING, OFF(tls_ciphersuites), 0, 0, "", true, NULL,
     "TLSv1.3 cipher suites (OpenSSL's syntax); unset: OpenSSL's default.", NULL},
    {"tls-auth-clients", NULL, T_ENUM, OFF(tls_auth_clients), 0, 0, "yes", true, tls_auth,
     "Client certificates: yes (required), optional (checked if sent), no. Applies to new connections.", NULL},
    {"tls-auth-clients-user", NULL, T_ENUM, OFF(tls_auth_clients_user), 0, 0, "off", true, tls_auth_user,
     "Valkey's: CN makes a client whose certificate verified start as the enabled ACL user its Common Name "
     "names (else the default user); off. Applies to new connections.", NULL},
    {"tls-cluster", NULL, T_BOOL, OFF(tls_cluster), 0, 1, "no", true, NULL,
     "TLS on the cluster bus (Redis 7.0's): it listens on tls-port + 10000, its links are TLS, and the node "
     "announces tls-port (docs/cluster.md). Whether the bus is TLS is decided at start-up.", NULL},
    {"tls-replication", NULL, T_BOOL, OFF(tls_replication), 0, 1, "no", true, NULL,
     "TLS on the replication link: a replica connects to its primary's TLS port and checks its certificate "
     "against the CA (tls-ca-cert-file/-dir, then required, as Redis requires it).", NULL},
    {"tls-prefer-server-ciphers", NULL, T_BOOL, OFF(tls_prefer_server_ciphers), 0, 1, "no", true, NULL,
     "Choose the cipher by the server's order rather than the client's.", NULL},
    {"tls-session-caching", NULL, T_BOOL, OFF(tls_session_caching), 0, 1, "yes", true, NULL,
     "Cache TLS sessions so clients can resume them.", NULL},
    {"tls-session-cache-size", NULL, T_INT, OFF(tls_session_cache_size), 0, INT32_MAX, "20480", true, NULL,
     "Most TLS sessions cached.", NULL},
    {"tls-session-cache-timeout", NULL, T_INT, OFF(tls_session_cache_timeout), 0, INT32_MAX, "300", true, NULL,
     "Seconds a cached TLS session stays usable.", NULL},
    {"tls-handshake-thread", NULL, T_BOOL, OFF(tls_handshake_thread), 0, 1, "yes", false, NULL,
     "Goblin Core's own: TLS handshakes on a helper thread (the engine sees a connection once it is "
     "established); no: on the engine's loop, as Redis does them.", NULL},
    {"io-engine", NULL, T_ENUM, OFF(io_engine), 0, 0, "auto", false, io_engines,
     "Goblin Core's own: how client sockets are read and written. auto (the default): io_uring where the build "
     "and kernel allow it, else libuv with a log line saying why; io_uring: batched in one system call per loop "
     "iteration (Linux with liburing; refuses to start without it); libuv: a read and a write per socket "
     "(docs/io_uring.md). INFO server's io_engine says which is in use.", NULL},
};

#define NOPTS (sizeof options / sizeof options[0])
_Static_assert(NOPTS <= GB_CONFIG_MAX_OPTS, "raise GB_CONFIG_MAX_OPTS");

static size_t opt_index(const opt *o) { return (size_t)(o - options); }
static void *field(gb_settings *s, const opt *o)
{
    return o->offset == INERT ? (void *)&s->inert[opt_index(o)] : (char *)s + o->offset;
}
static const void *cfield(const gb_settings *s, const opt *o)
{
    return o->offset == INERT ? (const void *)&s->inert[opt_index(o)] : (const char *)s + o->offset;
}

static const opt *find_opt(const char *name)
{
    for (size_t i = 0; i < NOPTS; i++) {
        if (gb_strcasecmp(options[i].name, name) == 0 ||
            (options[i].alias && gb_strcasecmp(options[i].alias, name) == 0))
            return &options[i];
    }
    return NULL;
}

const char *gb_config_canonical(const char *name)
{
    const opt *o = find_opt(name);
    return o ? o->name : NULL;
}

bool gb_config_is_runtime(const char *name)
{
    const opt *o = find_opt(name);
    return o && o->runtime;
}

bool gb_config_is_protected(const char *name)
{
    const opt *o = find_opt(name);
    return o && o->protected_config;
}

const char *gb_config_enum_name(const char *name, int value)
{
    const opt *o = find_opt(name);
    if (o && o->type == T_ENUM)
        for (const opt_enum *e = o->enums; e->name; e++)
            if (e->value == value)
                return e->name;
    return "";
}

static int fail(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return code;
}

/* Redis's memtoull: digits with an optional b/k/kb/m/mb/g/gb suffix
 * (k = 1000, kb = 1024 ...), case-insensitive. */
/* Redis's memtoull: digits (none is 0) then an optional unit (b, k, kb, m,
 * mb, g, gb, any case); no sign, no blanks. Digits past what 64 bits hold
 * read as the largest value, as strtoull gives Redis (a config's range
 * then refuses it). */
static bool parse_memory_u(const char *v, unsigned long long *out)
{
    if (*v == '-')
        return false;
    size_t digits = 0;
    while (v[digits] >= '0' && v[digits] <= '9')
        digits++;
    static const struct {
        const char *suf;
        unsigned long long mul;
    } sufs[] = {{"", 1}, {"b", 1}, {"k", 1000}, {"kb", 1024}, {"m", 1000000}, {"mb", 1024 * 1024},
                {"g", 1000000000ULL}, {"gb", 1024ULL * 1024 * 1024}};
    unsigned long long mul = 0;
    for (size_t i = 0; i < sizeof sufs / sizeof sufs[0]; i++)
        if (gb_strcasecmp(v + digits, sufs[i].suf) == 0)
            mul = sufs[i].mul;
    if (!mul || digits >= 128)
        return false;
    char buf[128];
    memcpy(buf, v, digits);
    buf[digits] = '\0';
    unsigned long long n = strtoull(buf, NULL, 10); /* ULLONG_MAX when too long, as Redis reads it */
    if (n > ULLONG_MAX / mul)
        return false;
    *out = n * mul;
    return true;
}

/* The same, for a value that must fit a long long (client-output-buffer-limit's). */
static bool parse_memory(const char *v, long long *out)
{
    unsigned long long n;
    if (!parse_memory_u(v, &n) || n > (unsigned long long)INT64_MAX)
        return false;
    *out = (long long)n;
    return true;
}

static bool parse_int(const char *v, long long *out)
{
    int64_t x;
    /* Redis's strict integer form (string2ll: no '+', no blanks) */
    if (!gb_str2ll(v, strlen(v), &x))
        return false;
    *out = x;
    return true;
}

/* Redis's client-output-buffer-limit: "<class> <hard> <soft> <soft-seconds>"
 * groups, classes normal, replica (or slave) and pubsub; every group is
 * checked before any applies. */
static int set_obuf(gb_settings *s, const char *value, char *err, size_t errlen)
{
    char buf[512];
    if (strlen(value) >= sizeof buf)
        return fail(err, errlen, GB_EINVAL, "Wrong number of arguments in buffer limit configuration.");
    strcpy(buf, value);
    char *tok[12];
    int n = 0;
    for (char *p = strtok(buf, " \t"); p; p = strtok(NULL, " \t")) {
        if (n == (int)GB_ARRAY_LEN(tok))
            return fail(err, errlen, GB_EINVAL, "Wrong number of arguments in buffer limit configuration.");
        tok[n++] = p;
    }
    if (n == 0 || n % 4)
        return fail(err, errlen, GB_EINVAL, "Wrong number of arguments in buffer limit configuration.");
    long long v[3][3];
    int cls[3];
    for (int g = 0; g < n / 4; g++) {
        const char *name = tok[4 * g];
        if (gb_strcasecmp(name, "normal") == 0)
            cls[g] = 0;
        else if (gb_strcasecmp(name, "replica") == 0 || gb_strcasecmp(name, "slave") == 0)
            cls[g] = 1;
        else if (gb_strcasecmp(name, "pubsub") == 0)
            cls[g] = 2;
        else
            return fail(err, errlen, GB_EINVAL, "Invalid client class specified in buffer limit configuration.");
        if (!parse_memory(tok[4 * g + 1], &v[g][0]) || !parse_memory(tok[4 * g + 2], &v[g][1]) ||
            !parse_int(tok[4 * g + 3], &v[g][2]) || v[g][2] < 0 || v[g][2] > INT32_MAX)
            return fail(err, errlen, GB_EINVAL,
                        "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
    }
    for (int g = 0; g < n / 4; g++) {
        long long *hard = cls[g] == 0 ? &s->client_obuf_hard
                          : cls[g] == 1 ? &s->client_obuf_replica_hard
                                        : &s->client_obuf_pubsub_hard;
        long long *soft = cls[g] == 0 ? &s->client_obuf_soft
                          : cls[g] == 1 ? &s->client_obuf_replica_soft
                                        : &s->client_obuf_pubsub_soft;
        int *secs = cls[g] == 0 ? &s->client_obuf_soft_seconds
                    : cls[g] == 1 ? &s->client_obuf_replica_soft_seconds
                                  : &s->client_obuf_pubsub_soft_seconds;
        *hard = v[g][0];
        *soft = v[g][1];
        *secs = (int)v[g][2];
    }
    return 0;
}

/* "<seconds> <changes> ..." pairs, or "" for none (Redis's "Invalid save
 * parameters" otherwise). */
static int set_save(gb_settings *s, const char *value, char *err, size_t errlen)
{
    long long v[2 * GB_SAVE_PARAMS_MAX];
    int n = 0;
    const char *p = value;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        char word[32];
        size_t k = strcspn(p, " \t");
        if (k >= sizeof word || n == (int)GB_ARRAY_LEN(v))
            return fail(err, errlen, GB_EINVAL, "Invalid save parameters");
        memcpy(word, p, k);
        word[k] = '\0';
        p += k;
        if (!parse_int(word, &v[n]) || v[n] < (n % 2 == 0 ? 1 : 0)) /* seconds >= 1, changes >= 0 */
            return fail(err, errlen, GB_EINVAL, "Invalid save parameters");
        n++;
    }
    if (n % 2)
        return fail(err, errlen, GB_EINVAL, "Invalid save parameters");
    s->save_n = n / 2;
    for (int i = 0; i < n / 2; i++) {
        s->save_seconds[i] = v[2 * i];
        s->save_changes[i] = v[2 * i + 1];
    }
    return 0;
}

static int set_opt(gb_settings *s, const opt *o, const char *value, char *err, size_t errlen)
{
    long long n;
    unsigned long long un;
    switch (o->type) {
    case T_INT:
        if (!parse_int(value, &n))
            return fail(err, errlen, GB_EINVAL, "argument couldn't be parsed into an integer");
        if (n < o->min || n > o->max)
            return fail(err, errlen, GB_ERANGE, "argument must be between %lld and %lld inclusive", o->min, o->max);
        *(int *)field(s, o) = (int)n;
        /* Redis accepts any hz and keeps it within what the cron can do
         * (CONFIG_MIN_HZ .. CONFIG_MAX_HZ): CONFIG GET answers the clamped value. */
        if (o->offset == OFF(hz))
            s->hz = s->hz < 1 ? 1 : s->hz > 500 ? 500 : s->hz;
        return 0;
    case T_LONG:
        if (!parse_int(value, &n))
            return fail(err, errlen, GB_EINVAL, "argument couldn't be parsed into an integer");
        if (n < o->min || n > o->max)
            return fail(err, errlen, GB_ERANGE, "argument must be between %lld and %lld inclusive", o->min, o->max);
        *(long long *)field(s, o) = n;
        return 0;
    case T_MEMORY_PCT:
        /* Redis's PERCENT_CONFIG: "N%" is kept as -N. */
        if (value[0] && value[strlen(value) - 1] == '%') {
            char num[32];
            size_t nlen = strlen(value) - 1;
            if (nlen == 0 || nlen >= sizeof num)
                return fail(err, errlen, GB_EINVAL, "argument must be a memory or percent value");
            memcpy(num, value, nlen);
            num[nlen] = 0;
            if (!parse_int(num, &n) || n < 0)
                return fail(err, errlen, GB_EINVAL, "argument must be a memory or percent value");
            if (-n < o->min)
                return fail(err, errlen, GB_ERANGE, "percentage argument must be less or equal to %lld", -o->min);
            *(long long *)field(s, o) = -n;
            return 0;
        }
        if (!parse_memory_u(value, &un))
            return fail(err, errlen, GB_EINVAL, "argument must be a memory or percent value");
        if (un > (unsigned long long)o->max)
            return fail(err, errlen, GB_ERANGE, "argument must be between %lld and %lld inclusive", o->min, o->max);
        *(long long *)field(s, o) = (long long)un;
        return 0;
    case T_MEMORY:
        if (!parse_memory_u(value, &un))
            return fail(err, errlen, GB_EINVAL, "argument must be a memory value");
        if (un < (unsigned long long)o->min || un > (unsigned long long)o->max)
            return fail(err, errlen, GB_ERANGE, "argument must be between %lld and %lld inclusive", o->min, o->max);
        *(long long *)field(s, o) = (long long)un;
        return 0;
    case T_BOOL:
        if (gb_strcasecmp(value, "yes") == 0)
            *(int *)field(s, o) = 1;
        else if (gb_strcasecmp(value, "no") == 0)
            *(int *)field(s, o) = 0;
        else
            return fail(err, errlen, GB_EINVAL, "argument must be 'yes' or 'no'");
        return 0;
    case T_STRING: {
        const char *why = o->check ? o->check(value) : NULL;
        if (why)
            return fail(err, errlen, GB_EINVAL, "%s", why);
        char **p = field(s, o);
        gb_free(*p);
        *p = gb_strdup(value);
        return 0;
    }
    case T_SAVE:
        return set_save(s, value, err, errlen);
    case T_ENUM:
        for (const opt_enum *e = o->enums; e->name; e++)
            if (gb_strcasecmp(e->name, value) == 0) {
                *(int *)field(s, o) = e->value;
                return 0;
            }
        {
            char list[128] = "";
            for (const opt_enum *e = o->enums; e->name; e++) {
                if (list[0])
                    strncat(list, ", ", sizeof list - strlen(list) - 1);
                strncat(list, e->name, sizeof list - strlen(list) - 1);
            }
            return fail(err, errlen, GB_EINVAL, "argument(s) must be one of the following: %s", list);
        }
    case T_OCTAL: {
        char *end;
        errno = 0;
        long v = strtol(value, &end, 8);
        if (errno || end == value || *end || v < o->min || v > o->max)
            return fail(err, errlen, GB_EINVAL, "argument must be an octal permission between 0 and 777");
        *(int *)field(s, o) = (int)v;
        return 0;
    }
    case T_OBUF:
        return set_obuf(s, value, err, errlen);
    case T_NOTIFY: {
        int flags = gb_notify_parse(value);
        if (flags < 0)
            return fail(err, errlen, GB_EINVAL, "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
        *(int *)field(s, o) = flags;
        return 0;
    }
    }
    return GB_EINVAL;
}

int gb_config_set(gb_settings *s, const char *name, const char *value, bool at_runtime, char *err, size_t errlen)
{
    const opt *o = find_opt(name);
    if (!o)
        return fail(err, errlen, GB_ENOENT, "unknown option '%s'", name);
    if (at_runtime && !o->runtime)
        return fail(err, errlen, GB_EPERM, "can't set immutable config");
    return set_opt(s, o, value, err, errlen);
}

/* Keeps a `user` line for engine/core/acl/acl_file.c. */
static void add_user_line(gb_settings *s, const char *line, size_t len, const char *origin)
{
    s->users = gb_realloc(s->users, (size_t)(s->nusers + 1) * sizeof *s->users);
    s->users[s->nusers].line = gb_memdup(line, len);
    s->users[s->nusers].origin = gb_strdup(origin);
    s->nusers++;
}

static void free_user_lines(gb_settings *s)
{
    for (int i = 0; i < s->nusers; i++) {
        gb_free(s->users[i].line);
        gb_free(s->users[i].origin);
    }
    gb_free(s->users);
    s->users = NULL;
    s->nusers = 0;
}

void gb_settings_defaults(gb_settings *s)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < NOPTS; i++)
        (void)set_opt(s, &options[i], options[i].def, NULL, 0); /* ours and valid: test_config asserts it */
}

void gb_settings_copy(gb_settings *dst, const gb_settings *src)
{
    *dst = *src;
    dst->users = NULL;
    dst->nusers = 0;
    dst->config_file = src->config_file ? gb_strdup(src->config_file) : NULL;
    for (int i = 0; i < src->nusers; i++)
        add_user_line(dst, src->users[i].line, strlen(src->users[i].line), src->users[i].origin);
    for (size_t i = 0; i < NOPTS; i++)
        if (options[i].type == T_STRING) {
            char **p = field(dst, &options[i]);
            if (*p)
                *p = gb_strdup(*p);
        }
}

void gb_settings_free(gb_settings *s)
{
    free_user_lines(s);
    gb_free(s->config_file);
    s->config_file = NULL;
    for (size_t i = 0; i < NOPTS; i++)
        if (options[i].type == T_STRING) {
            char **p = field(s, &options[i]);
            gb_free(*p);
            *p = NULL;
        }
}

/* Redis chdirs into `dir` and CONFIG GET answers getcwd(): the absolute
 * path. This server builds paths from `dir` instead, so the same answer is
 * its resolved form; false (the text as set) if it no longer resolves. */
static bool format_dir(const char *dir, char *buf, size_t cap)
{
    char *abs = realpath(dir, NULL);
    if (!abs)
        return false;
    snprintf(buf, cap, "%s", abs);
    free(abs); /* realpath's malloc, not gb_malloc */
    return true;
}

static void format_opt(const gb_settings *s, const opt *o, char *buf, size_t cap)
{
    switch (o->type) {
    case T_INT:
    case T_BOOL:
    case T_ENUM:
    case T_OCTAL: {
        int v = *(const int *)cfield(s, o);
        if (o->type == T_BOOL)
            snprintf(buf, cap, "%s", v ? "yes" : "no");
        else if (o->type == T_OCTAL)
            snprintf(buf, cap, "%o", (unsigned)v);
        else if (o->type == T_ENUM) {
            buf[0] = 0;
            for (const opt_enum *e = o->enums; e->name; e++)
                if (e->value == v)
                    snprintf(buf, cap, "%s", e->name);
        } else
            snprintf(buf, cap, "%d", v);
        return;
    }
    case T_MEMORY_PCT: {
        long long v = *(const long long *)cfield(s, o);
        snprintf(buf, cap, v < 0 ? "%lld%%" : "%lld", v < 0 ? -v : v);
        return;
    }
    case T_MEMORY:
    case T_LONG:
        snprintf(buf, cap, "%lld", *(const long long *)cfield(s, o));
        return;
    case T_STRING: {
        const char *v = *(char *const *)cfield(s, o);
        if (o->offset == OFF(dir) && v && format_dir(v, buf, cap))
            return;
        snprintf(buf, cap, "%s", v ? v : "");
        return;
    }
    case T_OBUF:
        /* Redis names the replica class "slave" here. */
        snprintf(buf, cap, "normal %lld %lld %d slave %lld %lld %d pubsub %lld %lld %d", s->client_obuf_hard,
                 s->client_obuf_soft, s->client_obuf_soft_seconds, s->client_obuf_replica_hard,
                 s->client_obuf_replica_soft, s->client_obuf_replica_soft_seconds, s->client_obuf_pubsub_hard,
                 s->client_obuf_pubsub_soft, s->client_obuf_pubsub_soft_seconds);
        return;
    case T_NOTIFY:
        if (cap >= 16)
            gb_notify_format(*(const int *)cfield(s, o), buf);
        return;
    case T_SAVE: {
        size_t used = 0;
        buf[0] = '\0';
        for (int i = 0; i < s->save_n && used < cap; i++)
            used += (size_t)snprintf(buf + used, cap - used, "%s%lld %lld", i ? " " : "", s->save_seconds[i],
                                     s->save_changes[i]);
        return;
    }
    }
}

/* Redis 7.0's CONFIG GET: a name without glob characters is looked up
 * (case-insensitively, an alias too) and answered under the name as given;
 * a pattern matches names and aliases alike, each answered under its own. */
void gb_config_get(const gb_settings *s, gb_slice pattern,
                   void (*emit)(void *ctx, const char *name, const char *value), void *ctx)
{
    char buf[1024];
    bool glob = memchr(pattern.ptr, '*', pattern.len) || memchr(pattern.ptr, '?', pattern.len) ||
                memchr(pattern.ptr, '[', pattern.len);
    if (!glob) {
        char name[128];
        if (pattern.len >= sizeof name || memchr(pattern.ptr, '\0', pattern.len))
            return;
        memcpy(name, pattern.ptr, pattern.len);
        name[pattern.len] = '\0';
        const opt *o = find_opt(name);
        if (o) {
            format_opt(s, o, buf, sizeof buf);
            emit(ctx, name, buf);
        }
        return;
    }
    for (size_t i = 0; i < NOPTS; i++) {
        const opt *o = &options[i];
        const char *names[2] = {o->name, o->alias};
        for (int k = 0; k < 2; k++) {
            if (!names[k] || !gb_glob_match(pattern.ptr, pattern.len, names[k], strlen(names[k]), true))
                continue;
            format_opt(s, o, buf, sizeof buf);
            emit(ctx, names[k], buf);
        }
    }
}

/* Splits a config line into at most `max` words, honouring "double" and
 * 'single' quotes with backslash escapes in double quotes. Returns the count
 * or -1 on unbalanced quotes. Words are written into `store`. */
static int split_line(const char *line, char **words, int max, char *store, size_t cap)
{
    int n = 0;
    size_t used = 0;
    const char *p = line;
    for (;;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p)
            return n;
        if (n == max)
            return -2;
        char *w = store + used;
        words[n++] = w;
        char q = 0;
        if (*p == '"' || *p == '\'')
            q = *p++;
        for (;;) {
            if (used + 2 >= cap)
                return -2;
            if (q) {
                if (!*p)
                    return -1;
                if (*p == q) {
                    p++;
                    if (*p && !isspace((unsigned char)*p))
                        return -1;
                    break;
                }
                if (q == '"' && *p == '\\' && p[1]) {
                    p++;
                    char c = *p;
                    store[used++] = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
                    p++;
                    continue;
                }
                store[used++] = *p++;
            } else {
                if (!*p || isspace((unsigned char)*p))
                    break;
                store[used++] = *p++;
            }
        }
        store[used++] = '\0';
    }
}

/* `loadmodule`: Redis stops when a module it is told to load fails to load,
 * and goblin-core loads none (a module is built against Redis's own
 * internals), so it stops too, saying why rather than "unknown option". */
static int refuse_module(char *err, size_t errlen, const char *where, const char *module)
{
    return fail(err, errlen, GB_EINVAL,
                "%sloadmodule %s: goblin-core does not load Redis modules (docs/redis-interop.md, \"Modules\"); "
                "remove the line to start without it",
                where, module);
}

/* The longest line and the most words a config file line may have. Redis
 * has no limit; these are far above what a file needs (a `user` line with
 * hundreds of key patterns, `bind` with 16 addresses, the three classes of
 * client-output-buffer-limit on one line) and what CONFIG REWRITE writes,
 * and bound what a hostile file makes the server allocate. */
#define CONFIG_LINE_MAX (1u << 20)
#define CONFIG_WORDS_MAX 64

/* `include` depth: files including each other would otherwise recurse
 * until the stack ends. */
#define CONFIG_INCLUDE_DEPTH_MAX 16

/* Directives Redis 7.0 reads and ignores (its deprecated_configs): files
 * from Redis 3 to 6 have them. */
static bool deprecated_directive(const char *w)
{
    static const char *words[] = {"list-max-ziplist-entries", "list-max-ziplist-value", "lua-replicate-commands"};
    for (size_t i = 0; i < GB_ARRAY_LEN(words); i++)
        if (gb_strcasecmp(w, words[i]) == 0)
            return true;
    return false;
}

static int load_file(gb_settings *s, const char *path, int depth, int *saves_seen, char *err, size_t errlen);

/* `include <path or glob pattern>`: each file it names, in name order,
 * read where the line stands (Redis 7.0; a pattern matching nothing is
 * fine, a plain path that cannot be opened is not). */
static int load_include(gb_settings *s, const char *where, const char *pattern, int depth, int *saves_seen,
                        char *err, size_t errlen)
{
    if (depth >= CONFIG_INCLUDE_DEPTH_MAX)
        return fail(err, errlen, GB_EPARSE, "%s: include nested more than %d deep (files including each other?)",
                    where, CONFIG_INCLUDE_DEPTH_MAX);
    if (!strpbrk(pattern, "*?["))
        return load_file(s, pattern, depth + 1, saves_seen, err, errlen);
    glob_t g;
    int grc = glob(pattern, 0, NULL, &g);
    if (grc == GLOB_NOMATCH)
        return 0;
    if (grc != 0)
        return fail(err, errlen, GB_EIO, "%s: include '%s': the pattern could not be read", where, pattern);
    int rc = 0;
    for (size_t i = 0; i < g.gl_pathc && rc == 0; i++)
        rc = load_file(s, g.gl_pathv[i], depth + 1, saves_seen, err, errlen);
    globfree(&g);
    return rc;
}

int gb_config_load_file(gb_settings *s, const char *path, char *err, size_t errlen)
{
    int saves_seen = 0;
    return load_file(s, path, 0, &saves_seen, err, errlen);
}

static int load_file(gb_settings *s, const char *path, int depth, int *saves_seen, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return fail(err, errlen, GB_ENOENT, "cannot open config file '%s': %s", path, strerror(errno));
    char *line = NULL, *store = NULL, *value = NULL;
    size_t linecap = 0;
    ssize_t got;
    int lineno = 0;
    int rc = 0;
    while ((got = getline(&line, &linecap, f)) >= 0) {
        lineno++;
        size_t len = (size_t)got;
        if (len > CONFIG_LINE_MAX || memchr(line, '\0', len)) {
            rc = fail(err, errlen, GB_EPARSE, "%s:%d: %s", path, lineno,
                      len > CONFIG_LINE_MAX ? "line longer than 1 MiB" : "a NUL byte in the line");
            break;
        }
        char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            continue;
        /* `user <name> <rules ...>`: kept whole, any number of rules
         * (Redis's config keyword, case-insensitive). */
        if (gb_slice_ieq(gb_slice_make(p, 4), "user") && isspace((unsigned char)p[4])) {
            char origin[4200];
            snprintf(origin, sizeof origin, "%s:%d", path, lineno);
            size_t n = strlen(p + 5);
            while (n && (p[5 + n - 1] == '\n' || p[5 + n - 1] == '\r'))
                n--;
            add_user_line(s, p + 5, n, origin);
            continue;
        }
        char *words[CONFIG_WORDS_MAX];
        gb_free(store);
        store = gb_malloc(len + 16);
        int n = split_line(p, words, CONFIG_WORDS_MAX, store, len + 16);
        if (n < 0) {
            rc = fail(err, errlen, GB_EPARSE, "%s:%d: %s", path, lineno,
                      n == -1 ? "unbalanced quotes" : "more than 64 words");
            break;
        }
        if (n == 0)
            continue;
        const opt *o = find_opt(words[0]);
        if (!o && deprecated_directive(words[0]))
            continue;
        if (!o && gb_strcasecmp(words[0], "include") == 0) {
            char where[4200];
            snprintf(where, sizeof where, "%s:%d", path, lineno);
            if (n != 2) {
                rc = fail(err, errlen, GB_EPARSE, "%s: include takes one file name or pattern", where);
                break;
            }
            rc = load_include(s, where, words[1], depth, saves_seen, err, errlen);
            if (rc != 0)
                break;
            continue;
        }
        if (!o && gb_strcasecmp(words[0], "rename-command") == 0) {
            rc = fail(err, errlen, GB_EINVAL,
                      "%s:%d: rename-command is not supported by goblin-core; to keep clients from a command, "
                      "deny it by ACL instead (e.g. `user default on nopass ~* &* +@all -%s`, docs/acl.md)",
                      path, lineno, n > 1 ? words[1] : "flushall");
            break;
        }
        if (!o && gb_strcasecmp(words[0], "loadmodule") == 0) {
            char where[4200];
            snprintf(where, sizeof where, "%s:%d: ", path, lineno);
            rc = refuse_module(err, errlen, where, n > 1 ? words[1] : "");
            break;
        }
        if (!o) {
            rc = fail(err, errlen, GB_ENOENT, "%s:%d: unknown option '%s' (goblin-core --help lists them)", path,
                      lineno, words[0]);
            break;
        }
        /* Multi-word values (bind, client-output-buffer-limit) are rejoined
         * (never longer than the line). */
        gb_free(value);
        size_t vcap = len + 1 + 4096; /* + the save points already seen, below */
        value = gb_malloc(vcap);
        value[0] = '\0';
        for (int i = 1; i < n; i++) {
            if (i > 1)
                strncat(value, " ", vcap - strlen(value) - 1);
            strncat(value, words[i], vcap - strlen(value) - 1);
        }
        if (n < 2 && o->type != T_STRING) {
            rc = fail(err, errlen, GB_EPARSE, "%s:%d: option '%s' needs a value", path, lineno, o->name);
            break;
        }
        /* Redis: several "save" lines in a file add up ("save ''" resets). */
        if (o->type == T_SAVE && (*saves_seen)++ > 0 && value[0]) {
            char both[4096];
            format_opt(s, o, both, sizeof both);
            size_t bl = strlen(both);
            snprintf(both + bl, sizeof both - bl, "%s%s", bl ? " " : "", value);
            snprintf(value, vcap, "%s", both);
        }
        char why[256];
        if (set_opt(s, o, value, why, sizeof why) != 0) {
            rc = fail(err, errlen, GB_EINVAL, "%s:%d: bad value '%s' for '%s': %s", path, lineno, value, o->name,
                      why);
            break;
        }
        s->given[opt_index(o)] = 1;
    }
    free(line); /* getline's malloc */
    gb_free(store);
    gb_free(value);
    fclose(f);
    return rc;
}

int gb_config_parse_args(gb_settings *s, int argc, char **argv, char *err, size_t errlen)
{
    int i = 0;
    if (i < argc && strcmp(argv[i], "--help") && strcmp(argv[i], "-h") && strncmp(argv[i], "--", 2) != 0 &&
        strcmp(argv[i], "-v")) {
        int rc = gb_config_load_file(s, argv[i], err, errlen);
        if (rc)
            return rc;
        /* CONFIG REWRITE writes here whatever the directory is by then. */
        char *abs = realpath(argv[i], NULL);
        gb_free(s->config_file);
        s->config_file = gb_strdup(abs ? abs : argv[i]);
        free(abs); /* realpath's malloc */
        i++;
    }
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            gb_config_print_help(stdout, "goblin-core");
            return 1;
        }
        if (strcmp(a, "--version") == 0 || strcmp(a, "-v") == 0) {
            printf("goblin-core %s\n", GOBLIN_VERSION);
            return 1;
        }
        if (strncmp(a, "--", 2) != 0)
            return fail(err, errlen, GB_EINVAL, "unexpected argument '%s': options are --name value (see --help)", a);
        if (strcmp(a, "--user") == 0) {
            if (i + 1 >= argc)
                return fail(err, errlen, GB_EINVAL, "option '--user' needs a value (see --help)");
            i++;
            add_user_line(s, argv[i], strlen(argv[i]), "--user");
            continue;
        }
        if (strcmp(a, "--include") == 0) {
            if (i + 1 >= argc)
                return fail(err, errlen, GB_EINVAL, "option '--include' needs a file name or pattern (see --help)");
            int saves_seen = s->given[opt_index(find_opt("save"))];
            int rc = load_include(s, "--include", argv[++i], 0, &saves_seen, err, errlen);
            if (rc)
                return rc;
            continue;
        }
        const opt *o = find_opt(a + 2);
        if (!o && gb_strcasecmp(a + 2, "loadmodule") == 0)
            return refuse_module(err, errlen, "", i + 1 < argc ? argv[i + 1] : "");
        if (!o && gb_strcasecmp(a + 2, "rename-command") == 0)
            return fail(err, errlen, GB_EINVAL,
                        "--rename-command is not supported by goblin-core; to keep clients from a command, deny "
                        "it by ACL instead (e.g. --user \"default on nopass ~* &* +@all -%s\", docs/acl.md)",
                        i + 1 < argc ? argv[i + 1] : "flushall");
        if (!o)
            return fail(err, errlen, GB_ENOENT, "unknown option '%s' (goblin-core --help lists them)", a);
        /* The value: every argument up to the next --option, joined by
         * spaces, as Redis reads its command line (`--replicaof host port`,
         * `--save 900 1`, or the same as one argument). */
        int first = i + 1, end = first;
        while (end < argc && strncmp(argv[end], "--", 2) != 0)
            end++;
        char *joined = NULL;
        const char *value;
        if (end == first) {
            if (o->type == T_SAVE)
                value = ""; /* "--save" alone: no save points, as Redis 7.0 reads it */
            else if (o->type != T_BOOL)
                return fail(err, errlen, GB_EINVAL, "option '%s' needs a value (see --help)", a);
            else
                value = "yes"; /* "--numa-arena" alone means yes */
        } else if (end == first + 1) {
            value = argv[first];
        } else {
            size_t len = 1;
            for (int k = first; k < end; k++)
                len += strlen(argv[k]) + 1;
            joined = gb_malloc(len);
            joined[0] = '\0';
            for (int k = first; k < end; k++) {
                if (k > first)
                    strcat(joined, " ");
                strcat(joined, argv[k]);
            }
            value = joined;
        }
        i = end - 1;
        /* Redis reads its command line as more of its config file: "save"
         * after "save" (the file's or an earlier --save) adds up */
        char *saves = NULL;
        if (o->type == T_SAVE && s->given[opt_index(o)] && value[0]) {
            char now[4096];
            format_opt(s, o, now, sizeof now);
            size_t len = strlen(now) + strlen(value) + 2;
            saves = gb_malloc(len);
            snprintf(saves, len, "%s%s%s", now, now[0] ? " " : "", value);
            value = saves;
        }
        char why[256];
        /* Redis reads its command line as config-file text: a list's words
         * are split on any run of blanks. */
        char *spaced = o->offset == OFF(bind) ? single_spaced(value) : NULL;
        int rc = set_opt(s, o, spaced ? spaced : value, why, sizeof why);
        gb_free(spaced);
        if (rc != 0) {
            rc = fail(err, errlen, GB_EINVAL, "bad value '%s' for '%s': %s", value, a, why);
            gb_free(joined);
            gb_free(saves);
            return rc;
        }
        gb_free(joined);
        gb_free(saves);
        s->given[opt_index(o)] = 1;
    }
    return 0;
}

void gb_config_log_inert(const gb_settings *s)
{
    for (size_t i = 0; i < NOPTS; i++) {
        const opt *o = &options[i];
        if (!s->given[i] || o->scope == SCOPE_ACTS)
            continue;
        gb_log(GB_LOG_NOTICE, "Config '%s' accepted, does not apply here: %s", o->name, o->help);
    }
}

void gb_config_print_help(FILE *out, const char *prog)
{
    fprintf(out,
            "Usage: %s [/path/to/goblin.conf] [--option value ...]\n"
            "\n"
            "Goblin Core %s: a Redis-compatible in-memory data server with shared-memory rings.\n"
            "Options come from the config file (Redis-style 'name value' lines), then from the\n"
            "command line, which wins. CONFIG GET reads them; CONFIG SET changes the ones marked\n"
            "[runtime].\n"
            "\n"
            "  --help, -h        this text\n"
            "  --version, -v     print the version and exit\n\n",
            prog, GOBLIN_VERSION);
    for (size_t i = 0; i < NOPTS; i++) {
        const opt *o = &options[i];
        const char *arg = o->type == T_BOOL     ? "yes|no"
                          : o->type == T_MEMORY ? "BYTES"
                          : o->type == T_MEMORY_PCT ? "BYTES|N%"
                          : o->type == T_INT || o->type == T_LONG ? "N"
                          : o->type == T_OCTAL  ? "OCTAL"
                          : o->type == T_ENUM   ? "CHOICE"
                          : o->type == T_OBUF   ? "LIMITS"
                          : o->type == T_SAVE   ? "\"SECONDS CHANGES ...\""
                          : o->type == T_NOTIFY ? "CLASSES"
                                                : "TEXT";
        fprintf(out, "  --%s %s%s\n      %s\n      default: %s\n", o->name, arg, o->runtime ? "  [runtime]" : "",
                o->help, o->def[0] ? o->def : "(empty)");
        if (o->alias)
            fprintf(out, "      also accepted as: %s\n", o->alias);
    }
    fprintf(out, "  --user \"NAME RULES...\"\n      A user, as a `user NAME RULES...` line of the config file "
                 "(several allowed; docs/acl.md).\n");
    fprintf(out, "  --include PATH|PATTERN\n      Reads a config file (or each file a glob pattern matches, in "
                 "name order) here,\n      as an `include` line of the config file does.\n");
    fprintf(out, "\nMemory sizes accept k, kb, m, mb, g, gb (k = 1000, kb = 1024).\n");
    fprintf(out, "\nFor tests only: GOBLIN_FAULT_ALLOC=N in the environment makes the Nth allocation of a client's\n"
                 "buffers fail (N+: that one and every one after; N@file:line: the Nth one made at that source\n"
                 "line; 0: count only), to check that such failures close only that client; the counts are\n"
                 "logged at exit (docs/architecture.md).\n");
}

/* ---- CONFIG REWRITE (Redis 7.0's rewriteConfig) -------------------------------------- */

#define REWRITE_SIGNATURE "# Generated by CONFIG REWRITE"

/* The old file as lines, and for each option the lines that set it. */
typedef struct rewrite_state {
    char **lines;
    size_t n, cap;
    int *owner;             /* per line: the option index it sets, -1 none */
    bool processed[GB_CONFIG_MAX_OPTS];
    bool needs_signature;
} rewrite_state;

static void rw_append(rewrite_state *st, char *line, int owner)
{
    if (st->n == st->cap) {
        st->cap = st->cap ? st->cap * 2 : 64;
        st->lines = gb_realloc(st->lines, st->cap * sizeof *st->lines);
        st->owner = gb_realloc(st->owner, st->cap * sizeof *st->owner);
    }
    st->lines[st->n] = line;
    st->owner[st->n++] = owner;
}

static void rw_free(rewrite_state *st)
{
    for (size_t i = 0; i < st->n; i++)
        gb_free(st->lines[i]);
    gb_free(st->lines);
    gb_free(st->owner);
}

static char *strip(const char *p, size_t n)
{
    while (n && strchr("\r\n\t ", p[n - 1]))
        n--;
    while (n && strchr("\r\n\t ", *p))
        p++, n--;
    return gb_memdup(p, n);
}

/* Directives the file may hold that are not options (kept as they are). */
static bool is_file_directive(const char *w)
{
    static const char *words[] = {"include", "rename-command", "user", "loadmodule", "sentinel"};
    for (size_t i = 0; i < GB_ARRAY_LEN(words); i++)
        if (gb_strcasecmp(w, words[i]) == 0)
            return true;
    return false;
}

/* Redis's rewriteConfigReadOldFile: a line it cannot read, or one about an
 * option it does not know, becomes a "# ??? " comment. */
static int rw_read(rewrite_state *st, const char *path, char *err, size_t errlen)
{
    st->needs_signature = true;
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? 0 : fail(err, errlen, GB_EIO, "%s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t cap = 0;
    ssize_t got;
    bool ends_with_newline = false;
    while ((got = getline(&buf, &cap, f)) >= 0) {
        ends_with_newline = got > 0 && buf[got - 1] == '\n';
        char *line = strip(buf, (size_t)got);
        if (line[0] == '#' || line[0] == '\0') {
            if (st->needs_signature && strcmp(line, REWRITE_SIGNATURE) == 0)
                st->needs_signature = false;
            rw_append(st, line, -1);
            continue;
        }
        char *words[CONFIG_WORDS_MAX];
        size_t scap = strlen(line) + 16;
        char *store = gb_malloc(scap);
        int n = split_line(line, words, CONFIG_WORDS_MAX, store, scap);
        const opt *o = n > 0 ? find_opt(words[0]) : NULL;
        if (n == -2 && !o) { /* many words: look at the first */
            size_t k = strcspn(line, " \t");
            char first[128];
            snprintf(first, sizeof first, "%.*s", (int)GB_MIN(k, sizeof first - 1), line);
            o = find_opt(first);
            n = o || is_file_directive(first) ? 1 : -1;
        }
        bool known = n > 0 && (o || is_file_directive(words[0]));
        gb_free(store);
        if (!known) {
            size_t len = strlen(line) + 7;
            char *c = gb_malloc(len);
            snprintf(c, len, "# ??? %s", line);
            gb_free(line);
            rw_append(st, c, -1);
            continue;
        }
        rw_append(st, line, o ? (int)opt_index(o) : -1);
    }
    free(buf); /* getline's malloc */
    /* Redis splits the file at every newline: after the last one comes an
     * empty line (the blank line before the signature it appends). */
    if (ends_with_newline)
        rw_append(st, gb_strdup(""), -1);
    bool bad = ferror(f);
    fclose(f);
    return bad ? fail(err, errlen, GB_EIO, "%s: read error", path) : 0;
}

/* Redis's rewriteConfigRewriteLine: the option's next line in the file
 * takes the new text; without one the text is appended (after the
 * signature) when force says the value is not the default. */
static void rw_line(rewrite_state *st, const opt *o, char *text, bool force)
{
    int idx = (int)opt_index(o);
    st->processed[idx] = true;
    for (size_t i = 0; i < st->n; i++)
        if (st->owner[i] == idx) {
            gb_free(st->lines[i]);
            st->lines[i] = text;
            st->owner[i] = -2; /* used */
            return;
        }
    if (!force) {
        gb_free(text);
        return;
    }
    if (st->needs_signature) {
        rw_append(st, gb_strdup(REWRITE_SIGNATURE), -1);
        st->needs_signature = false;
    }
    rw_append(st, text, -2);
}

static char *linef(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *linef(const char *fmt, ...)
{
    char buf[4200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return gb_strdup(buf);
}

/* Redis's rewriteConfigFormatMemory. */
static void format_memory(char *buf, size_t cap, long long bytes)
{
    static const struct {
        long long unit;
        const char *suffix;
    } units[] = {{1024LL * 1024 * 1024, "gb"}, {1024 * 1024, "mb"}, {1024, "kb"}};
    for (size_t i = 0; i < GB_ARRAY_LEN(units); i++)
        if (bytes && bytes % units[i].unit == 0) {
            snprintf(buf, cap, "%lld%s", bytes / units[i].unit, units[i].suffix);
            return;
        }
    snprintf(buf, cap, "%lld", bytes);
}

/* Redis's sdscatrepr: the text in double quotes, escaped. */
static void quote(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    out[n++] = '"';
    for (; *s && n + 6 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        const char *esc = ch == '\\' ? "\\\\" : ch == '"' ? "\\\"" : ch == '\n' ? "\\n" : ch == '\r' ? "\\r"
                          : ch == '\t' ? "\\t" : ch == '\a' ? "\\a" : ch == '\b' ? "\\b" : NULL;
        if (esc)
            n += (size_t)snprintf(out + n, cap - n, "%s", esc);
        else if (isprint(ch))
            out[n++] = (char)ch;
        else
            n += (size_t)snprintf(out + n, cap - n, "\\x%02x", ch);
    }
    out[n++] = '"';
    out[n] = '\0';
}

/* Strings Redis keeps as NULL when empty: such an option leaves the file. */
static bool empty_is_null(const opt *o)
{
    return !o->def[0] && strcmp(o->name, "logfile") && strcmp(o->name, "ignore-warnings") &&
           strcmp(o->name, "aclfile");
}

static void rw_obuf(rewrite_state *st, const gb_settings *s, const opt *o)
{
    gb_settings d;
    gb_settings_defaults(&d);
    const struct {
        const char *name;
        long long hard, soft, dhard, dsoft;
        int secs, dsecs;
    } cls[] = {
        {"normal", s->client_obuf_hard, s->client_obuf_soft, d.client_obuf_hard, d.client_obuf_soft,
         s->client_obuf_soft_seconds, d.client_obuf_soft_seconds},
        {"replica", s->client_obuf_replica_hard, s->client_obuf_replica_soft, d.client_obuf_replica_hard,
         d.client_obuf_replica_soft, s->client_obuf_replica_soft_seconds, d.client_obuf_replica_soft_seconds},
        {"pubsub", s->client_obuf_pubsub_hard, s->client_obuf_pubsub_soft, d.client_obuf_pubsub_hard,
         d.client_obuf_pubsub_soft, s->client_obuf_pubsub_soft_seconds, d.client_obuf_pubsub_soft_seconds},
    };
    gb_settings_free(&d);
    for (size_t i = 0; i < GB_ARRAY_LEN(cls); i++) {
        char hard[32], soft[32];
        format_memory(hard, sizeof hard, cls[i].hard);
        format_memory(soft, sizeof soft, cls[i].soft);
        bool force = cls[i].hard != cls[i].dhard || cls[i].soft != cls[i].dsoft || cls[i].secs != cls[i].dsecs;
        rw_line(st, o, linef("%s %s %s %s %d", o->name, cls[i].name, hard, soft, cls[i].secs), force);
    }
}

/* One option, as Redis's rewrite function for its type writes it. */
static void rw_option(rewrite_state *st, const gb_settings *s, const gb_settings *defaults, const opt *o)
{
    char now[1024], def[1024], text[2200];
    format_opt(s, o, now, sizeof now);
    format_opt(defaults, o, def, sizeof def);
    bool force = strcmp(now, def) != 0;
    switch (o->type) {
    case T_SAVE:
        if (!s->save_n)
            rw_line(st, o, linef("save \"\""), true);
        for (int i = 0; i < s->save_n; i++)
            rw_line(st, o, linef("save %lld %lld", s->save_seconds[i], s->save_changes[i]), true);
        st->processed[opt_index(o)] = true;
        return;
    case T_OBUF:
        rw_obuf(st, s, o);
        return;
    case T_MEMORY_PCT:
    case T_MEMORY: {
        long long v = *(const long long *)cfield(s, o);
        if (v < 0) { /* T_MEMORY_PCT's percentage */
            rw_line(st, o, linef("%s %lld%%", o->name, -v), force);
            return;
        }
        format_memory(text, sizeof text, v);
        rw_line(st, o, linef("%s %s", o->name, text), force);
        return;
    }
    case T_NOTIFY:
        quote(text, sizeof text, now);
        rw_line(st, o, linef("%s %s", o->name, text), force);
        return;
    case T_STRING:
        if (o->offset == OFF(bind)) {
            if (!force)
                st->processed[opt_index(o)] = true;
            else
                rw_line(st, o, linef("bind %s", now[0] ? now : "\"\""), true);
            return;
        }
        if (o->offset == OFF(latency_tracking_info_percentiles)) {
            rw_line(st, o, linef("%s %s", o->name, now[0] ? now : "\"\""), true);
            return;
        }
        if (o->offset == OFF(oom_score_adj_values) || o->check == check_shutdown_flags ||
            o->check == check_replicaof) {
            if (o->check == check_replicaof && !now[0])
                st->processed[opt_index(o)] = true;
            else
                rw_line(st, o, linef("%s %s", o->name, now), force);
            return;
        }
        if (!now[0] && empty_is_null(o)) {
            st->processed[opt_index(o)] = true;
            return;
        }
        quote(text, sizeof text, now);
        rw_line(st, o, linef("%s %s", o->name, text), force || o->offset == OFF(dir));
        return;
    default:
        rw_line(st, o, linef("%s %s", o->name, now), force);
        return;
    }
}

/* Redis's rewriteConfigRemoveOrphaned and rewriteConfigGetContentFromState:
 * the lines left over of a rewritten option go, and every run of empty
 * lines becomes one. */
static char *rw_content(rewrite_state *st, size_t *len_out)
{
    size_t total = 1;
    for (size_t i = 0; i < st->n; i++) {
        if (st->owner[i] >= 0 && st->processed[st->owner[i]])
            st->lines[i][0] = '\0';
        total += strlen(st->lines[i]) + 1;
    }
    char *out = gb_malloc(total);
    size_t used = 0;
    bool was_empty = false;
    for (size_t i = 0; i < st->n; i++) {
        size_t k = strlen(st->lines[i]);
        if (!k && was_empty)
            continue;
        was_empty = !k;
        memcpy(out + used, st->lines[i], k);
        used += k;
        out[used++] = '\n';
    }
    out[used] = '\0';
    *len_out = used;
    return out;
}

/* Redis's rewriteConfigOverwriteFile: a temporary file beside it, synced,
 * renamed over it, the directory synced. */
static int rw_write(const char *path, const char *content, size_t len, char *err, size_t errlen)
{
    char tmp[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= sizeof tmp)
        return fail(err, errlen, GB_ERANGE, "Config file full path is too long");
    int fd = mkstemp(tmp);
    if (fd < 0)
        return fail(err, errlen, GB_EIO, "Could not create tmp config file (%s)", strerror(errno));
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, content + off, len - off);
        if (w <= 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    mode_t mask = umask(0);
    umask(mask);
    int rc = 0;
    if (off < len)
        rc = fail(err, errlen, GB_EIO, "Failed after writing (%zu) bytes to tmp config file (%s)", off,
                  strerror(errno));
    else if (gb_plat_file_sync(fd) != 0 || fchmod(fd, 0644 & ~mask) != 0 || rename(tmp, path) != 0)
        rc = fail(err, errlen, GB_EIO, "Could not write config file (%s)", strerror(errno));
    close(fd);
    if (rc)
        unlink(tmp);
    else {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *(slash == dir ? slash + 1 : slash) = '\0';
        (void)gb_plat_dir_sync(slash ? dir : ".");
    }
    return rc;
}

/* Redis's rewriteConfigUserOption: with an aclfile the users live there
 * (the file's user lines go), otherwise every user is written. */
static void rw_users(rewrite_state *st, const char *users)
{
    size_t first = st->n;
    for (size_t i = 0; i < first; i++)
        if (st->owner[i] == -1 && gb_slice_ieq(gb_slice_make(st->lines[i], GB_MIN(strlen(st->lines[i]), 5)), "user ")) {
            st->lines[i][0] = '\0';
            if (users && *users) {
                size_t k = strcspn(users, "\n");
                gb_free(st->lines[i]);
                st->lines[i] = gb_memdup(users, k);
                users += k + (users[k] == '\n');
            }
        }
    while (users && *users) {
        size_t k = strcspn(users, "\n");
        if (st->needs_signature) {
            rw_append(st, gb_strdup(REWRITE_SIGNATURE), -1);
            st->needs_signature = false;
        }
        rw_append(st, gb_memdup(users, k), -2);
        users += k + (users[k] == '\n');
    }
}

int gb_config_rewrite(const gb_settings *s, const char *users, char *err, size_t errlen)
{
    if (!s->config_file)
        return fail(err, errlen, GB_EINVAL, "The server is running without a config file");
    rewrite_state st = {0};
    int rc = rw_read(&st, s->config_file, err, errlen);
    if (rc == 0) {
        gb_settings defaults;
        gb_settings_defaults(&defaults);
        for (size_t i = 0; i < NOPTS; i++)
            rw_option(&st, s, &defaults, &options[i]);
        gb_settings_free(&defaults);
        rw_users(&st, users);
        size_t len;
        char *content = rw_content(&st, &len);
        rc = rw_write(s->config_file, content, len, err, errlen);
        gb_free(content);
    }
    rw_free(&st);
    return rc;
}
