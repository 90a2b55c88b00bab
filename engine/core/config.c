#define _POSIX_C_SOURCE 200809L
#include "engine/core/config.h"
#include "engine/base/mem.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/util.h"

#ifndef GOBLIN_VERSION
#define GOBLIN_VERSION "0.1.0"
#endif

enum opt_type { T_INT, T_MEMORY, T_BOOL, T_STRING, T_ENUM, T_OCTAL, T_OBUF };

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
} opt;

static const opt_enum loglevels[] = {
    {"debug", GB_LOG_DEBUG}, {"verbose", GB_LOG_VERBOSE}, {"notice", GB_LOG_NOTICE}, {"warning", GB_LOG_WARNING}, {NULL, 0}};
static const opt_enum policies[] = {{"noeviction", 0}, {NULL, 0}};
static const opt_enum list_impls[] = {{"segmented", GB_LISTIMPL_SEGMENTED}, {"pma", GB_LISTIMPL_PMA}, {NULL, 0}};

#define OFF(f) offsetof(gb_settings, f)

static const opt options[] = {
    /* network */
    {"port", NULL, T_INT, OFF(port), 0, 65535, "6379", false, NULL,
     "TCP port to listen on; 0 disables TCP."},
    {"bind", NULL, T_STRING, OFF(bind), 0, 0, "127.0.0.1", false, NULL,
     "Addresses to listen on for TCP, separated by spaces (loopback by default: expose on purpose)."},
    {"unixsocket", NULL, T_STRING, OFF(unixsocket), 0, 0, "/tmp/goblin-core.sock", false, NULL,
     "Unix socket path (also where ring clients claim slots); empty disables it."},
    {"unixsocketperm", NULL, T_OCTAL, OFF(unixsocketperm), 0, 0777, "700", false, NULL,
     "Permissions of the Unix socket, octal; applied before it accepts anything."},
    {"tcp-backlog", NULL, T_INT, OFF(tcp_backlog), 1, 65535, "511", false, NULL,
     "Listen backlog for TCP and the Unix socket."},
    {"maxclients", NULL, T_INT, OFF(maxclients), 1, 1000000, "10000", true, NULL,
     "Connections beyond this are refused with '-ERR max number of clients reached'."},
    {"timeout", NULL, T_INT, OFF(timeout_s), 0, 100000000, "0", true, NULL,
     "Close a client idle for this many seconds; 0 never."},
    /* security */
    {"requirepass", NULL, T_STRING, OFF(requirepass), 0, 0, "", true, NULL,
     "Password clients must give with AUTH (or HELLO ... AUTH); empty: no password."},
    /* keyspace */
    {"databases", NULL, T_INT, OFF(databases), 1, 1024, "16", false, NULL,
     "Number of databases (SELECT 0 .. databases-1)."},
    {"maxmemory", NULL, T_MEMORY, OFF(maxmemory), 0, INT64_MAX, "0", true, NULL,
     "Memory limit for data (e.g. 4gb); over it, commands that grow memory get an OOM error. 0: no limit."},
    {"maxmemory-policy", NULL, T_ENUM, OFF(maxmemory_policy), 0, 0, "noeviction", true, policies,
     "What happens at maxmemory. Only noeviction exists (writes refused, reads and deletes work)."},
    {"hz", NULL, T_INT, OFF(hz), 1, 500, "10", true, NULL,
     "Background task frequency (active expiry, rehashing, timeouts) per second."},
    /* client limits */
    {"client-output-buffer-limit", NULL, T_OBUF, 0, 0, 0, "normal 1gb 0 0", true, NULL,
     "'normal <hard> <soft> <soft-seconds>': a client whose pending replies exceed hard, or stay over soft "
     "for soft-seconds, is disconnected (Redis's default is unlimited; this is bounded)."},
    {"client-query-buffer-limit", NULL, T_MEMORY, OFF(client_qbuf_limit), 1024 * 1024, INT64_MAX, "1gb", true, NULL,
     "Largest unparsed input a client may accumulate before it is disconnected."},
    {"proto-max-bulk-len", NULL, T_MEMORY, OFF(proto_max_bulk_len), 1024 * 1024, INT64_MAX, "512mb", true, NULL,
     "Largest single argument accepted ('Protocol error: invalid bulk length' beyond)."},
    /* logging */
    {"loglevel", NULL, T_ENUM, OFF(loglevel), 0, 0, "notice", true, loglevels,
     "debug, verbose, notice or warning."},
    {"logfile", NULL, T_STRING, OFF(logfile), 0, 0, "", false, NULL,
     "Log to this file instead of standard error."},
    /* data types */
    {"list-max-listpack-size", "list-max-ziplist-size", T_INT, OFF(list_max_listpack_size), -5, 65535, "-2", true,
     NULL,
     "Compact-list limit: N > 0 entries, or -1..-5 for 4/8/16/32/64 KiB. Larger lists use list-implementation."},
    {"list-implementation", NULL, T_ENUM, OFF(list_implementation), 0, 0, "segmented", false, list_impls,
     "Large-list representation: segmented (bounded leaves + count index) or pma (adaptive packed-memory array)."},
    {"hash-max-listpack-entries", "hash-max-ziplist-entries", T_INT, OFF(hash_max_listpack_entries), 0, INT32_MAX,
     "128", true, NULL, "Hashes with more fields use a hash table."},
    {"hash-max-listpack-value", "hash-max-ziplist-value", T_INT, OFF(hash_max_listpack_value), 0, INT32_MAX, "64",
     true, NULL, "Hashes with a longer field or value use a hash table."},
    {"set-max-intset-entries", NULL, T_INT, OFF(set_max_intset_entries), 0, INT32_MAX, "512", true, NULL,
     "Integer-only sets up to this size use the sorted integer array."},
    {"set-max-listpack-entries", NULL, T_INT, OFF(set_max_listpack_entries), 0, INT32_MAX, "128", true, NULL,
     "Sets up to this size (short members) use the compact encoding."},
    {"set-max-listpack-value", NULL, T_INT, OFF(set_max_listpack_value), 0, INT32_MAX, "64", true, NULL,
     "Sets with a longer member use a hash table."},
    {"zset-max-listpack-entries", "zset-max-ziplist-entries", T_INT, OFF(zset_max_listpack_entries), 0, INT32_MAX,
     "128", true, NULL, "Sorted sets with more members use the B+tree."},
    {"zset-max-listpack-value", "zset-max-ziplist-value", T_INT, OFF(zset_max_listpack_value), 0, INT32_MAX, "64",
     true, NULL, "Sorted sets with a longer member use the B+tree."},
    /* rings and placement */
    {"rings", NULL, T_INT, OFF(rings), 0, 4096, "16", false, NULL,
     "Shared-memory ring slots created at start-up (0 disables rings)."},
    {"ring-size", NULL, T_MEMORY, OFF(ring_size), 4096, 1LL << 30, "1mb", false, NULL,
     "Bytes per direction of each ring (rounded up to a power of two)."},
    {"ring-hugepages", NULL, T_BOOL, OFF(ring_hugepages), 0, 1, "no", false, NULL,
     "Back the ring pool with huge pages (Linux); refuses to start if the pool cannot be filled."},
    {"ring-spin-us", NULL, T_INT, OFF(ring_spin_us), 0, 10000000, "50", true, NULL,
     "Microseconds the engine busy-polls idle rings before it parks (and a client spins before it sleeps)."},
    {"cpu", NULL, T_INT, OFF(cpu), -1, 1048575, "-1", false, NULL,
     "Pin the engine thread to this CPU, bind the ring pool strictly to its NUMA node and verify every page; "
     "-1: no pinning."},
    {"numa-arena", NULL, T_BOOL, OFF(numa_arena), 0, 1, "no", false, NULL,
     "With --cpu: prefer the CPU's NUMA node for all other memory (best effort, never fatal)."},
};

#define NOPTS (sizeof options / sizeof options[0])

static void *field(gb_settings *s, const opt *o) { return (char *)s + o->offset; }
static const void *cfield(const gb_settings *s, const opt *o) { return (const char *)s + o->offset; }

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
static bool parse_memory(const char *v, long long *out)
{
    char *end;
    errno = 0;
    if (!*v || *v == '-' || isspace((unsigned char)*v))
        return false;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || end == v)
        return false;
    unsigned long long mul = 1;
    if (*end) {
        static const struct {
            const char *suf;
            unsigned long long mul;
        } sufs[] = {{"b", 1}, {"k", 1000}, {"kb", 1024}, {"m", 1000000}, {"mb", 1024 * 1024},
                    {"g", 1000000000ULL}, {"gb", 1024ULL * 1024 * 1024}};
        bool found = false;
        for (size_t i = 0; i < sizeof sufs / sizeof sufs[0]; i++)
            if (gb_strcasecmp(end, sufs[i].suf) == 0) {
                mul = sufs[i].mul;
                found = true;
            }
        if (!found)
            return false;
    }
    if (n > (unsigned long long)INT64_MAX / mul)
        return false;
    *out = (long long)(n * mul);
    return true;
}

static bool parse_int(const char *v, long long *out)
{
    int64_t x;
    /* Accept Redis's strict integer form, plus a leading '+'. */
    if (*v == '+')
        v++;
    if (!gb_str2ll(v, strlen(v), &x))
        return false;
    *out = x;
    return true;
}

static int set_obuf(gb_settings *s, const char *value, char *err, size_t errlen)
{
    /* "normal <hard> <soft> <seconds>" (class names of Redis other than
     * "normal" do not exist here: no replicas, no pub/sub yet). */
    char buf[256];
    if (strlen(value) >= sizeof buf)
        return fail(err, errlen, GB_EINVAL, "value too long");
    strcpy(buf, value);
    char *tok[4];
    int n = 0;
    for (char *p = strtok(buf, " \t"); p && n < 4; p = strtok(NULL, " \t"))
        tok[n++] = p;
    if (n != 4 || gb_strcasecmp(tok[0], "normal") != 0)
        return fail(err, errlen, GB_EINVAL, "expected 'normal <hard> <soft> <soft-seconds>'");
    long long hard, soft, secs;
    if (!parse_memory(tok[1], &hard) || !parse_memory(tok[2], &soft) || !parse_int(tok[3], &secs) || secs < 0 ||
        secs > INT32_MAX)
        return fail(err, errlen, GB_EINVAL, "limits must be sizes (e.g. 256mb) and seconds a non-negative integer");
    s->client_obuf_hard = hard;
    s->client_obuf_soft = soft;
    s->client_obuf_soft_seconds = (int)secs;
    return 0;
}

static int set_opt(gb_settings *s, const opt *o, const char *value, char *err, size_t errlen)
{
    long long n;
    switch (o->type) {
    case T_INT:
        if (!parse_int(value, &n))
            return fail(err, errlen, GB_EINVAL, "argument couldn't be parsed into an integer");
        if (n < o->min || n > o->max)
            return fail(err, errlen, GB_ERANGE, "argument must be between %lld and %lld inclusive", o->min, o->max);
        *(int *)field(s, o) = (int)n;
        return 0;
    case T_MEMORY:
        if (!parse_memory(value, &n))
            return fail(err, errlen, GB_EINVAL, "argument must be a memory value");
        if (n < o->min || n > o->max)
            return fail(err, errlen, GB_ERANGE, "argument must be between %lld and %lld inclusive", o->min, o->max);
        *(long long *)field(s, o) = n;
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
        char **p = field(s, o);
        gb_free(*p);
        *p = gb_strdup(value);
        return 0;
    }
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

void gb_settings_defaults(gb_settings *s)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < NOPTS; i++)
        (void)set_opt(s, &options[i], options[i].def, NULL, 0); /* ours and valid: test_config asserts it */
}

void gb_settings_copy(gb_settings *dst, const gb_settings *src)
{
    *dst = *src;
    for (size_t i = 0; i < NOPTS; i++)
        if (options[i].type == T_STRING) {
            char **p = field(dst, &options[i]);
            if (*p)
                *p = gb_strdup(*p);
        }
}

void gb_settings_free(gb_settings *s)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (options[i].type == T_STRING) {
            char **p = field(s, &options[i]);
            gb_free(*p);
            *p = NULL;
        }
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
    case T_MEMORY:
        snprintf(buf, cap, "%lld", *(const long long *)cfield(s, o));
        return;
    case T_STRING: {
        const char *v = *(char *const *)cfield(s, o);
        snprintf(buf, cap, "%s", v ? v : "");
        return;
    }
    case T_OBUF:
        snprintf(buf, cap, "normal %lld %lld %d", s->client_obuf_hard, s->client_obuf_soft,
                 s->client_obuf_soft_seconds);
        return;
    }
}

void gb_config_get(const gb_settings *s, gb_slice pattern,
                   void (*emit)(void *ctx, const char *name, const char *value), void *ctx)
{
    for (size_t i = 0; i < NOPTS; i++) {
        const opt *o = &options[i];
        bool hit = gb_glob_match(pattern.ptr, pattern.len, o->name, strlen(o->name), true);
        const char *name = o->name;
        /* Redis answers an exact alias query under the alias's name. */
        if (!hit && o->alias && gb_glob_match(pattern.ptr, pattern.len, o->alias, strlen(o->alias), true) &&
            !memchr(pattern.ptr, '*', pattern.len) && !memchr(pattern.ptr, '?', pattern.len)) {
            hit = true;
            name = o->alias;
        }
        if (!hit)
            continue;
        char buf[1024];
        format_opt(s, o, buf, sizeof buf);
        emit(ctx, name, buf);
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

int gb_config_load_file(gb_settings *s, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return fail(err, errlen, GB_ENOENT, "cannot open config file '%s': %s", path, strerror(errno));
    char line[4096];
    int lineno = 0;
    int rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            rc = fail(err, errlen, GB_EPARSE, "%s:%d: line longer than %zu bytes", path, lineno, sizeof line - 2);
            break;
        }
        char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            continue;
        char *words[8];
        char store[4096 + 16];
        int n = split_line(p, words, 8, store, sizeof store);
        if (n < 0) {
            rc = fail(err, errlen, GB_EPARSE, "%s:%d: unbalanced quotes or too many words", path, lineno);
            break;
        }
        const opt *o = find_opt(words[0]);
        if (!o) {
            rc = fail(err, errlen, GB_ENOENT, "%s:%d: unknown option '%s' (goblin-core --help lists them)", path,
                      lineno, words[0]);
            break;
        }
        /* Multi-word values (bind, client-output-buffer-limit) are rejoined. */
        char value[4096] = "";
        for (int i = 1; i < n; i++) {
            if (i > 1)
                strncat(value, " ", sizeof value - strlen(value) - 1);
            strncat(value, words[i], sizeof value - strlen(value) - 1);
        }
        if (n < 2 && o->type != T_STRING) {
            rc = fail(err, errlen, GB_EPARSE, "%s:%d: option '%s' needs a value", path, lineno, o->name);
            break;
        }
        char why[256];
        if (set_opt(s, o, value, why, sizeof why) != 0) {
            rc = fail(err, errlen, GB_EINVAL, "%s:%d: bad value '%s' for '%s': %s", path, lineno, value, o->name,
                      why);
            break;
        }
    }
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
        const opt *o = find_opt(a + 2);
        if (!o)
            return fail(err, errlen, GB_ENOENT, "unknown option '%s' (goblin-core --help lists them)", a);
        const char *value;
        if (o->type == T_BOOL && (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)) {
            value = "yes"; /* "--numa-arena" alone means yes */
        } else {
            if (i + 1 >= argc)
                return fail(err, errlen, GB_EINVAL, "option '%s' needs a value (see --help)", a);
            value = argv[++i];
        }
        char why[256];
        if (set_opt(s, o, value, why, sizeof why) != 0)
            return fail(err, errlen, GB_EINVAL, "bad value '%s' for '%s': %s", value, a, why);
    }
    return 0;
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
                          : o->type == T_INT    ? "N"
                          : o->type == T_OCTAL  ? "OCTAL"
                          : o->type == T_ENUM   ? "CHOICE"
                          : o->type == T_OBUF   ? "LIMITS"
                                                : "TEXT";
        fprintf(out, "  --%s %s%s\n      %s\n      default: %s\n", o->name, arg, o->runtime ? "  [runtime]" : "",
                o->help, o->def[0] ? o->def : "(empty)");
        if (o->alias)
            fprintf(out, "      also accepted as: %s\n", o->alias);
    }
    fprintf(out, "\nMemory sizes accept k, kb, m, mb, g, gb (k = 1000, kb = 1024).\n");
}
