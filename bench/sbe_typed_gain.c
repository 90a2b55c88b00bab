#define _POSIX_C_SOURCE 200809L
/*
 * sbe_typed_gain: what a typed SBE template saves over the Generic template
 * on a ring round trip (issues 15 and 17: "typed templates for EVALSHA/FCALL
 * and XADD/XREADGROUP/XACK if measurement shows the ring gains from them").
 *
 * (a) Commands with both forms, typed template vs Generic (an argument
 *     vector run through gb_gate_execute): GET, SET, HSET of 3 fields, ZADD
 *     of 10 members, XADD of 3 fields (its template came from (b)'s
 *     estimate). The difference is the typed template's gain.
 * (b) Commands that only have the Generic form: XREADGROUP
 *     COUNT 1 > with entries waiting, XACK of one pending id, EVALSHA of a
 *     cached one-redis.call script, FCALL of the same body as a function.
 *
 * Every request is encoded before the clock starts (sbe_codec's encoders,
 * the same bytes the client library sends) and sent with
 * gb_ring_client_send; the reply is checked by its header only (template
 * id, and for arrays a non-empty root length). So the client's work is the
 * same record copy and wait for every row, and a difference between two
 * rows is the server's: decode, command lookup, arity and admission, the
 * handler's argument parsing.
 *
 * The run is split into rounds; in each, every row runs `--calls` timed
 * calls (after a warm-up), right after the hardware floor is measured (see
 * sbe_vs_resp_ring.c for why the floor is interleaved). Typed/Generic pairs
 * run back to back, their order alternating by round. Each row's figure is
 * the median over rounds of its per-round median; a pair's gain is the
 * median over rounds of (Generic median - typed median) in the same round.
 *
 *   sbe_typed_gain [server-binary] [--rounds R] [--calls N] [--csv]
 *   sbe_typed_gain --attach SOCK [--calls N] [--rows a,b] [--callgrind PID]
 *
 * --attach runs each row once against a running server (no floor, no
 * statistics); with --callgrind it zeroes the server's callgrind counters
 * before each row's timed calls and dumps them after, labelled with the row
 * (bench/sbe_typed_gain_callgrind.sh: server instructions per call).
 * SERVER_CORE (default 1) and CLIENT_CORE (default 0) choose the CPUs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floor.h"
#include "goblin/ring_client.h"
#include "platform/clock.h"
#include "transport/sbe/sbe_client.h"
#include "transport/sbe/sbe_codec.h"

#define NKEYS 1000
#define WARMUP 2000
#define MAX_ROUNDS 100
#define SERVER_SPIN_US "2000"     /* as sbe_vs_resp_ring: parked while the floor runs */
#define SHARED_CORE_FLOOR_NS 90.0 /* below: the two CPUs are SMT siblings */
#define FLOOR_WINDOW_S 0.03
#define XREAD_CHUNK 100 /* entries per untimed XREADGROUP when preparing XACK */

static char names[NKEYS][16];
static const char value16[] = "vvvvvvvvvvvvvvvv";
static char script_sha[41];

static gb_slice sl(const char *s) { return gb_slice_make(s, strlen(s)); }
static gb_slice name(uint64_t i) { return gb_slice_make(names[i % NKEYS], 10); }

/* ---- the rows ---------------------------------------------------------------------- */

/* Encodes request number i of a row into buf (cap bytes); returns its
 * length, or the length needed when buf is NULL (the codec's contract). */
typedef size_t row_encoder(uint8_t *buf, size_t cap, uint64_t i);
/* Untimed work before a row's calls (fresh stream state); 0 or -1. */
typedef int row_setup(gb_ring_client *rc, uint64_t calls);

typedef struct row {
    const char *name;
    row_encoder *enc;
    row_setup *setup;
    uint64_t period; /* distinct requests (i mod period); 0: one per call */
    int pair;        /* (a): index of the other form's row, -1 for (b) */
    bool typed;
} row;

static size_t get_typed(uint8_t *b, size_t cap, uint64_t i) { return gb_sbe_encode_get(b, cap, name(i)); }
static size_t get_generic(uint8_t *b, size_t cap, uint64_t i)
{
    gb_slice a[] = {sl("GET"), name(i)};
    return gb_sbe_encode_generic(b, cap, 2, a);
}

static size_t set_typed(uint8_t *b, size_t cap, uint64_t i)
{
    return gb_sbe_encode_set(b, cap, name(i), sl(value16), 0, 0);
}
static size_t set_generic(uint8_t *b, size_t cap, uint64_t i)
{
    gb_slice a[] = {sl("SET"), name(i), sl(value16)};
    return gb_sbe_encode_generic(b, cap, 3, a);
}

/* HSET of 3 of the hash's 1,000 fields (rotating): updates, as a client
 * rewriting an object's few fields does. */
#define HSET_N 3
static size_t hset_typed(uint8_t *b, size_t cap, uint64_t i)
{
    gb_slice f[HSET_N], v[HSET_N];
    for (int j = 0; j < HSET_N; j++)
        f[j] = name(i * HSET_N + (uint64_t)j), v[j] = sl(value16);
    return gb_sbe_encode_hset(b, cap, sl("bench:h"), HSET_N, f, v);
}
static size_t hset_generic(uint8_t *b, size_t cap, uint64_t i)
{
    gb_slice a[2 + 2 * HSET_N] = {sl("HSET"), sl("bench:h")};
    for (int j = 0; j < HSET_N; j++)
        a[2 + 2 * j] = name(i * HSET_N + (uint64_t)j), a[3 + 2 * j] = sl(value16);
    return gb_sbe_encode_generic(b, cap, 2 + 2 * HSET_N, a);
}

/* ZADD of 10 of the sorted set's 1,000 members with new scores; the Generic
 * form carries each score as the shortest text that reads back the same
 * (what a RESP client sends), so the server pays strtod for it. */
#define ZADD_N 10
static double zscore_of(uint64_t i, int j) { return (double)(i + (uint64_t)j) * 0.5; }
static size_t zadd_typed(uint8_t *b, size_t cap, uint64_t i)
{
    gb_slice m[ZADD_N];
    double s[ZADD_N];
    for (int j = 0; j < ZADD_N; j++)
        m[j] = name(i * ZADD_N + (uint64_t)j), s[j] = zscore_of(i, j);
    return gb_sbe_encode_zadd(b, cap, sl("bench:z"), 0, ZADD_N, s, m);
}
static size_t zadd_generic(uint8_t *b, size_t cap, uint64_t i)
{
    char num[ZADD_N][32];
    gb_slice a[2 + 2 * ZADD_N] = {sl("ZADD"), sl("bench:z")};
    for (int j = 0; j < ZADD_N; j++) {
        snprintf(num[j], sizeof num[j], "%.17g", zscore_of(i, j));
        a[2 + 2 * j] = sl(num[j]);
        a[3 + 2 * j] = name(i * ZADD_N + (uint64_t)j);
    }
    return gb_sbe_encode_generic(b, cap, 2 + 2 * ZADD_N, a);
}

/* XADD bench:xadd * with three 16-byte fields (issue 17's "3 small fields"):
 * the XAdd template (built after this bench recommended it) and Generic. */
static size_t xadd_typed(uint8_t *b, size_t cap, uint64_t i)
{
    (void)i;
    gb_slice f[] = {sl("name"), sl("email"), sl("state")}, v[] = {sl(value16), sl(value16), sl(value16)};
    gb_sbe_xadd_opts o = {.flags = GB_SBE_XADD_AUTO_ID};
    return gb_sbe_encode_xadd(b, cap, sl("bench:xadd"), &o, 3, f, v);
}
static size_t xadd_generic(uint8_t *b, size_t cap, uint64_t i)
{
    (void)i;
    gb_slice a[] = {sl("XADD"), sl("bench:xadd"), sl("*"), sl("name"), sl(value16),
                    sl("email"), sl(value16), sl("state"), sl(value16)};
    return gb_sbe_encode_generic(b, cap, 9, a);
}

static size_t xreadgroup_generic(uint8_t *b, size_t cap, uint64_t i)
{
    (void)i;
    gb_slice a[] = {sl("XREADGROUP"), sl("GROUP"), sl("g"), sl("c1"), sl("COUNT"), sl("1"),
                    sl("STREAMS"), sl("bench:q"), sl(">")};
    return gb_sbe_encode_generic(b, cap, 9, a);
}

/* The queue's entries have ids 1-1, 2-1, ... so that XACK's request i names
 * the entry the setup delivered i-th. */
static size_t xack_generic(uint8_t *b, size_t cap, uint64_t i)
{
    char id[32];
    snprintf(id, sizeof id, "%llu-1", (unsigned long long)i + 1);
    gb_slice a[] = {sl("XACK"), sl("bench:q"), sl("g"), sl(id)};
    return gb_sbe_encode_generic(b, cap, 4, a);
}

static size_t evalsha_generic(uint8_t *b, size_t cap, uint64_t i)
{
    gb_slice a[] = {sl("EVALSHA"), sl(script_sha), sl("1"), name(i)};
    return gb_sbe_encode_generic(b, cap, 4, a);
}

static size_t fcall_generic(uint8_t *b, size_t cap, uint64_t i)
{
    gb_slice a[] = {sl("FCALL"), sl("bget"), sl("1"), name(i)};
    return gb_sbe_encode_generic(b, cap, 4, a);
}

/* ---- set-up through the client library (untimed) ----------------------------------- */

/* Runs one command; its reply must not be an error. */
static int cmd(gb_ring_client *rc, gb_reply **out, int argc, const char *const *argv)
{
    gb_reply *r = NULL;
    if (gb_ring_command(rc, argc, argv, NULL, &r) != 0) {
        fprintf(stderr, "%s: %s\n", argv[0], gb_ring_client_error(rc));
        return -1;
    }
    if (r->kind == GB_REPLY_ERROR) {
        fprintf(stderr, "%s: %s\n", argv[0], r->str);
        gb_reply_free(r);
        return -1;
    }
    if (out)
        *out = r;
    else
        gb_reply_free(r);
    return 0;
}

#define CMD(rc, ...) cmd((rc), NULL, (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)), \
                         (const char *[]){__VA_ARGS__})

static int setup_xadd(gb_ring_client *rc, uint64_t calls)
{
    (void)calls;
    return CMD(rc, "DEL", "bench:xadd"); /* the stream does not grow from round to round */
}

/* A fresh queue of `calls` entries (ids 1-1 ...) and its group at 0. */
static int fill_queue(gb_ring_client *rc, uint64_t calls)
{
    if (CMD(rc, "DEL", "bench:q") || CMD(rc, "XGROUP", "CREATE", "bench:q", "g", "0", "MKSTREAM"))
        return -1;
    for (uint64_t k = 1; k <= calls; k++) {
        char id[32];
        snprintf(id, sizeof id, "%llu-1", (unsigned long long)k);
        if (CMD(rc, "XADD", "bench:q", id, "name", value16, "email", value16, "state", value16))
            return -1;
    }
    return 0;
}

static int setup_xreadgroup(gb_ring_client *rc, uint64_t calls) { return fill_queue(rc, calls); }

/* Every entry delivered to c1 and pending: XACK's request i acks entry i. */
static int setup_xack(gb_ring_client *rc, uint64_t calls)
{
    if (fill_queue(rc, calls))
        return -1;
    char count[16];
    snprintf(count, sizeof count, "%d", XREAD_CHUNK);
    for (uint64_t k = 0; k < calls; k += XREAD_CHUNK)
        if (CMD(rc, "XREADGROUP", "GROUP", "g", "c1", "COUNT", count, "STREAMS", "bench:q", ">"))
            return -1;
    return 0;
}

/* The data every row reads or updates, the script and the function. */
static int prepare(gb_ring_client *rc)
{
    for (int i = 0; i < NKEYS; i++)
        snprintf(names[i], sizeof names[i], "m:%08d", i);
    for (int i = 0; i < NKEYS; i++) {
        char score[16];
        snprintf(score, sizeof score, "%d", i);
        if (CMD(rc, "SET", names[i], value16) || CMD(rc, "HSET", "bench:h", names[i], value16) ||
            CMD(rc, "ZADD", "bench:z", score, names[i]))
            return -1;
    }
    gb_reply *r;
    if (cmd(rc, &r, 3, (const char *[]){"SCRIPT", "LOAD", "return redis.call('GET', KEYS[1])"}))
        return -1;
    snprintf(script_sha, sizeof script_sha, "%s", r->str ? r->str : "");
    gb_reply_free(r);
    return CMD(rc, "FUNCTION", "LOAD", "REPLACE",
               "#!lua name=benchlib\n"
               "redis.register_function('bget', function(keys, args) return redis.call('GET', keys[1]) end)");
}

static const row rows[] = {
    {"GET typed", get_typed, NULL, NKEYS, 1, true},
    {"GET generic", get_generic, NULL, NKEYS, 0, false},
    {"SET typed", set_typed, NULL, NKEYS, 3, true},
    {"SET generic", set_generic, NULL, NKEYS, 2, false},
    {"HSET3 typed", hset_typed, NULL, NKEYS, 5, true},
    {"HSET3 generic", hset_generic, NULL, NKEYS, 4, false},
    {"ZADD10 typed", zadd_typed, NULL, NKEYS, 7, true},
    {"ZADD10 generic", zadd_generic, NULL, NKEYS, 6, false},
    {"XADD3 typed", xadd_typed, setup_xadd, 1, 9, true},
    {"XADD3 generic", xadd_generic, setup_xadd, 1, 8, false},
    {"XREADGROUP generic", xreadgroup_generic, setup_xreadgroup, 1, -1, false},
    {"XACK generic", xack_generic, setup_xack, 0, -1, false},
    {"EVALSHA generic", evalsha_generic, NULL, NKEYS, -1, false},
    {"FCALL generic", fcall_generic, NULL, NKEYS, -1, false},
};
#define NROWS (sizeof rows / sizeof rows[0])

/* ---- pre-encoded requests and the timed loop ------------------------------------------ */

typedef struct encoded {
    uint8_t *bytes;
    size_t *off; /* n + 1 offsets */
    uint64_t n;
} encoded;

static int encode_row(const row *w, uint64_t total, encoded *e)
{
    e->n = w->period ? w->period : total;
    e->off = malloc((e->n + 1) * sizeof *e->off);
    size_t size = 0;
    for (uint64_t i = 0; i < e->n; i++)
        size += w->enc(NULL, 0, i);
    e->bytes = malloc(size ? size : 1);
    if (!e->off || !e->bytes) {
        fprintf(stderr, "out of memory encoding %s\n", w->name);
        return -1;
    }
    e->off[0] = 0;
    for (uint64_t i = 0; i < e->n; i++) {
        size_t need = w->enc(NULL, 0, i);
        e->off[i + 1] = e->off[i] + w->enc(e->bytes + e->off[i], need, i);
    }
    return 0;
}

/* One round trip of a pre-encoded request; the reply must be no error (and,
 * an array, not empty: XREADGROUP found an entry). */
static int once(gb_ring_client *rc, const encoded *e, uint64_t i, const char *what)
{
    uint64_t k = i % e->n;
    const void *msg;
    size_t len;
    if (gb_ring_client_send(rc, e->bytes + e->off[k], e->off[k + 1] - e->off[k]) != 0 ||
        gb_ring_client_recv(rc, &msg, &len, UINT64_MAX) != 0) {
        fprintf(stderr, "%s: %s\n", what, gb_ring_client_error(rc));
        return -1;
    }
    gb_sbe_header h;
    int bad = !gb_sbe_read_header((const uint8_t *)msg, len, &h) || h.template_id == GB_SBE_ERROR_REPLY;
    if (!bad && h.template_id == GB_SBE_ARRAY_REPLY) {
        int64_t n;
        bad = len < GB_SBE_HEADER_SIZE + 8;
        if (!bad) {
            memcpy(&n, (const uint8_t *)msg + GB_SBE_HEADER_SIZE, 8);
            bad = n <= 0;
        }
    }
    if (bad) {
        gb_sbe_reply_view v;
        size_t nn = 0;
        if (gb_sbe_decode_reply((const uint8_t *)msg, len, &v, NULL, &nn) == 0 && v.kind == GB_SBE_KIND_ERROR)
            fprintf(stderr, "%s (request %llu): %.*s\n", what, (unsigned long long)i, (int)v.len, v.ptr);
        else
            fprintf(stderr, "%s (request %llu): unexpected reply (template %u)\n", what, (unsigned long long)i,
                    (unsigned)h.template_id);
    }
    gb_ring_client_recv_done(rc);
    return bad ? -1 : 0;
}

/* WARMUP untimed calls, then `calls` timed ones into h (NULL: untimed). */
static int run_row(gb_ring_client *rc, const row *w, const encoded *e, uint64_t calls, gb_hist *h)
{
    for (uint64_t i = 0; i < WARMUP; i++)
        if (once(rc, e, i, w->name))
            return -1;
    double npc = gb_bench_ns_per_cycle();
    for (uint64_t i = WARMUP; i < WARMUP + calls; i++) {
        uint64_t t0 = gb_cycles_now();
        if (once(rc, e, i, w->name))
            return -1;
        if (h)
            gb_hist_add(h, (uint64_t)((double)(gb_cycles_now() - t0) * npc));
    }
    return 0;
}

/* ---- --attach: one pass per row against a running server (callgrind) -------------- */

static int callgrind(const char *pid, const char *what)
{
    char line[256];
    snprintf(line, sizeof line, "callgrind_control %s %s >/dev/null 2>&1", what, pid);
    if (system(line) != 0) {
        fprintf(stderr, "'%s' failed\n", line);
        return -1;
    }
    return 0;
}

static bool wanted(const char *list, const char *name)
{
    if (!list)
        return true;
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == 0))
            return true;
    return false;
}

static int attach(const char *sock, uint64_t calls, const char *only, const char *pid)
{
    gb_ring_client *rc;
    char err[256];
    if (gb_ring_client_connect(sock, GB_RING_SBE, NULL, &rc, err, sizeof err) != 0) {
        fprintf(stderr, "cannot claim an SBE ring: %s\n", err);
        return 1;
    }
    int code = prepare(rc) ? 1 : 0;
    for (size_t k = 0; k < NROWS && !code; k++) {
        const row *w = &rows[k];
        if (!wanted(only, w->name))
            continue;
        encoded e;
        code = encode_row(w, WARMUP + calls, &e) || (w->setup && w->setup(rc, WARMUP + calls));
        /* the warm-up calls run before the counters are zeroed */
        for (uint64_t i = 0; i < WARMUP && !code; i++)
            code = once(rc, &e, i, w->name);
        if (!code && pid)
            code = callgrind(pid, "-z");
        for (uint64_t i = WARMUP; i < WARMUP + calls && !code; i++)
            code = once(rc, &e, i, w->name);
        if (!code && pid) {
            char dump[96];
            snprintf(dump, sizeof dump, "--dump='%s x%llu'", w->name, (unsigned long long)calls);
            code = callgrind(pid, dump);
        }
        if (!code)
            printf("%s: %llu calls\n", w->name, (unsigned long long)calls);
        free(e.bytes);
        free(e.off);
    }
    gb_ring_client_close(rc);
    return code ? 1 : 0;
}

/* ---- the measured run --------------------------------------------------------------- */

typedef struct row_stats {
    gb_hist *all;               /* every timed call, all rounds */
    double p50[MAX_ROUNDS];     /* per round */
    double floor[MAX_ROUNDS];   /* the floor measured just before it */
} row_stats;

/* The median over rounds of (row median / floor just before it), over the
 * rounds whose floor window measured anything (a busy machine can starve
 * the echo thread past the window's warm-up); *shared (if asked) counts the
 * rounds whose floor says the two CPUs were SMT siblings. */
static double x_floor(const row_stats *st, int rounds, int *shared)
{
    double v[MAX_ROUNDS];
    int n = 0;
    for (int r = 0; r < rounds; r++) {
        if (st->floor[r] <= 0)
            continue;
        v[n++] = st->p50[r] / st->floor[r];
        if (shared)
            *shared += st->floor[r] < SHARED_CORE_FLOOR_NS;
    }
    return gb_bench_median(v, n);
}

static void report(const row_stats *st, int rounds, bool csv)
{
    if (csv) {
        printf("row,p50_ns,p99_ns,round_median_p50_ns,x_floor,samples\n");
        for (size_t k = 0; k < NROWS; k++) {
            gb_lat_summary s = gb_hist_summary(st[k].all);
            printf("%s,%.0f,%.0f,%.0f,%.2f,%llu\n", rows[k].name, s.p50, s.p99, gb_bench_median(st[k].p50, rounds),
                   x_floor(&st[k], rounds, NULL), (unsigned long long)s.samples);
        }
        return;
    }
    printf("%-20s %9s %9s %12s %8s %8s\n", "row", "p50", "p99", "rounds' p50", "x floor", "shared");
    for (size_t k = 0; k < NROWS; k++) {
        gb_lat_summary s = gb_hist_summary(st[k].all);
        int shared = 0;
        double x = x_floor(&st[k], rounds, &shared);
        printf("%-20s %6.0f ns %6.0f ns %9.0f ns %7.2fx %5d/%d\n", rows[k].name, s.p50, s.p99,
               gb_bench_median(st[k].p50, rounds), x, shared, rounds);
    }
    printf("\n(a) typed template's gain: median over rounds of (Generic p50 - typed p50), same round\n");
    printf("%-8s %10s %12s %10s %8s %14s\n", "command", "typed", "generic", "gain", "gain %", "generic/typed");
    for (size_t k = 0; k < NROWS; k++) {
        if (!rows[k].typed)
            continue;
        const row_stats *t = &st[k], *g = &st[rows[k].pair];
        double d[MAX_ROUNDS], pct[MAX_ROUNDS], q[MAX_ROUNDS];
        for (int r = 0; r < rounds; r++) {
            d[r] = g->p50[r] - t->p50[r];
            pct[r] = 100.0 * d[r] / g->p50[r];
            q[r] = g->p50[r] / t->p50[r];
        }
        char cmdname[32];
        snprintf(cmdname, sizeof cmdname, "%s", rows[k].name);
        *strchr(cmdname, ' ') = 0;
        printf("%-8s %7.0f ns %9.0f ns %7.0f ns %7.1f%% %13.2fx\n", cmdname, gb_bench_median(t->p50, rounds),
               gb_bench_median(g->p50, rounds), gb_bench_median(d, rounds), gb_bench_median(pct, rounds),
               gb_bench_median(q, rounds));
    }
}

int main(int argc, char **argv)
{
    const char *server = "build-release/goblin-core", *sock = NULL, *only = NULL, *pid = NULL;
    int rounds = 11;
    uint64_t calls = 20000;
    bool csv = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
            calls = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--attach") && i + 1 < argc)
            sock = argv[++i];
        else if (!strcmp(argv[i], "--rows") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--callgrind") && i + 1 < argc)
            pid = argv[++i];
        else if (!strcmp(argv[i], "--csv"))
            csv = true;
        else if (argv[i][0] != '-')
            server = argv[i];
        else {
            fprintf(stderr,
                    "usage: %s [server-binary] [--rounds R] [--calls N] [--csv]\n"
                    "       %s --attach SOCK [--calls N] [--rows a,b] [--callgrind PID]\n",
                    argv[0], argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || calls < 1 || calls > 10000000) {
        fprintf(stderr, "--rounds must be 1..%d and --calls 1..10000000\n", MAX_ROUNDS);
        return 2;
    }
    if (sock)
        return attach(sock, calls, only, pid);

    int scpu = gb_bench_env_int("SERVER_CORE", 1), ccpu = gb_bench_env_int("CLIENT_CORE", 0);
    gb_bench_server srv;
    const char *extra[] = {"--ring-spin-us", SERVER_SPIN_US, NULL};
    if (gb_bench_server_start(&srv, server, scpu, extra) != 0)
        return 1;
    gb_floor *fl = gb_bench_floor_start(scpu); /* before this thread leaves the server's CPU */
    gb_bench_pin(ccpu, "client");
    gb_ring_client *rc;
    char err[256];
    if (gb_ring_client_connect(srv.sock, GB_RING_SBE, NULL, &rc, err, sizeof err) != 0) {
        fprintf(stderr, "cannot claim an SBE ring: %s\n", err);
        gb_bench_server_stop(&srv);
        return 1;
    }
    static row_stats st[NROWS];
    static encoded enc[NROWS];
    int code = prepare(rc) ? 1 : 0;
    for (size_t k = 0; k < NROWS && !code; k++) {
        st[k].all = gb_hist_new();
        code = encode_row(&rows[k], WARMUP + calls, &enc[k]);
    }
    gb_hist *win = gb_hist_new(), *floor_all = gb_hist_new();
    for (int r = 0; r < rounds && !code; r++) {
        for (size_t j = 0; j < NROWS && !code; j++) {
            /* a pair's two rows swap places every other round */
            size_t k = (rows[j].pair >= 0 && (r & 1)) ? (size_t)rows[j].pair : j;
            const row *w = &rows[k];
            if (w->setup && w->setup(rc, WARMUP + calls)) {
                code = 1;
                break;
            }
            gb_bench_sleep_ms(20); /* the server parks: the floor's echo thread gets its CPU */
            gb_hist_reset(win);
            st[k].floor[r] = gb_bench_floor_stricter(fl, FLOOR_WINDOW_S, win, NULL);
            gb_hist_merge(floor_all, win);
            gb_hist_reset(win);
            if (run_row(rc, w, &enc[k], calls, win)) {
                code = 1;
                break;
            }
            st[k].p50[r] = (double)gb_hist_quantile(win, 0.5);
            gb_hist_merge(st[k].all, win);
        }
    }
    gb_bench_floor_stop(fl);
    gb_ring_client_close(rc);
    gb_bench_server_stop(&srv);
    if (code)
        return 1;
    printf("SBE ring round trips, server on CPU %d, client on CPU %d; %d interleaved rounds of %llu calls per row\n",
           scpu, ccpu, rounds, (unsigned long long)calls);
    gb_lat_summary fs = gb_hist_summary(floor_all);
    printf("hardware floor (all windows pooled): %.0f ns (p99 %.0f ns)\n", fs.p50, fs.p99);
    free(floor_all);
    printf("p50/p99: all rounds pooled; rounds' p50: median of the per-round medians; x floor: median over rounds of\n"
           "(row median / floor just before it); shared: rounds whose floor was below %.0f ns (SMT siblings)\n\n",
           SHARED_CORE_FLOOR_NS);
    report(st, rounds, csv);
    free(win);
    for (size_t k = 0; k < NROWS; k++) {
        free(st[k].all);
        free(enc[k].bytes);
        free(enc[k].off);
    }
    return 0;
}
