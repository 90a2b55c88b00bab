/*
 * goblin_core_list_work_queue_benchmark: the list work-queue table of
 * docs/benchmarks.md (issue 5).
 *
 *   goblin_core_list_work_queue_benchmark <server-binary> <measured-commands> <pipeline-depth>
 *       [--compare-redis /usr/bin/redis-server] [--csv] [--trials N]
 *       [--csv-out FILE] [--only ROW-PREFIX] [--handoffs N] [--no-park] [--no-paired] [--no-spin]
 *
 * --csv prints CSV instead of the table; --csv-out FILE writes the same CSV
 * next to the table (bench/list_chart.py draws docs/img/lists-work-queue.svg
 * from it).
 *
 * A native C client speaks RESP2 over a Unix socket to one goblin-core per
 * large-list backend (--list-implementation segmented, then pma) and, with
 * --compare-redis, to redis-server. All servers run side by side, pinned to
 * SERVER_CORE (default 0); the client runs on CLIENT_CORE (default 1). Each
 * row runs its trials round-robin over the backends (trial 1 on every
 * backend, then trial 2, ...), so drifting load on a shared machine hits every
 * backend alike; the reported figure is the median trial (default 3).
 *
 * One trial: set the row's keys up (untimed), send at least 4,096 warm-up
 * commands, then time <measured-commands> commands sent <pipeline-depth> at a
 * time from pre-encoded buffers (send depth requests, read depth replies,
 * repeat). The client polls its socket instead of sleeping in read() (it has
 * its own core; --no-spin sleeps), so one pipeline round trip costs the
 * server's work plus one wake-up of the server, not two wake-ups. Afterwards
 * the key lengths are checked against what the commands must have done, and
 * any nil or error reply stops the run, so a row that silently hit an empty
 * list (a blocking command timing out, a pop returning nil) fails instead of
 * flattering.
 *
 * Besides commands/s the table reports the server's main-thread CPU time per
 * measured command (/proc/<pid>/schedstat, Linux): on a machine where
 * wake-ups dominate a round trip it shows what each server really spends.
 *
 * Read, update and rotation rows use a 100,000-item list of 12-byte values.
 * Destructive rows (pops, blocking pops, counted pops) get exactly what the
 * warm-up and the measured commands consume plus a reserve, pushed before
 * timing: the blocking rows measure their ready path, never a timeout. The
 * "two keys" rows name an empty (missing) key first and the loaded queue
 * second, as a worker polling a high-priority queue before its normal one.
 *
 * The goal "ready BLPOP at least 80% of LPOP" is also measured paired: the
 * two commands alternate in short chunks on one connection, so both are
 * timed under the same conditions (paired_trial explains why the table's
 * two rows are not enough on a shared VM). It runs after the table, in its
 * own rounds, unless --only or --no-paired is given; --csv adds it as a
 * second CSV section.
 *
 * The park-to-wake row: a consumer connection sends BLPOP and is confirmed
 * blocked (INFO clients blocked_clients, polled on the producer connection)
 * before the producer sends LPUSH; the latency runs from just before the
 * LPUSH is written until the consumer has read its reply (both connections
 * in this one pinned thread; median and p99 of the handoffs after a warm-up).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_common.h"

#define LIST_ITEMS 100000
#define WARMUP_MIN 4096
#define VALUE_LEN 12
#define RESERVE 1000 /* values left in a destructive row's queue after the row */
#define MAX_TRIALS 15
#define MAX_BACKENDS 3

/* ---- small helpers ----------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *msg)
{
    fprintf(stderr, "list_work_queue_benchmark: %s\n", msg);
    exit(1);
}

/* A growable byte buffer of pre-encoded requests. */
typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

static void buf_reserve(buf *b, size_t more)
{
    if (b->len + more <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more)
        cap *= 2;
    b->p = realloc(b->p, cap);
    if (!b->p)
        die("out of memory");
    b->cap = cap;
}

/* Appends one command; argv is a NULL-terminated list of C strings. */
static void buf_cmdv(buf *b, int argc, const char *const *argv)
{
    size_t need = 16;
    for (int i = 0; i < argc; i++)
        need += strlen(argv[i]) + 24;
    buf_reserve(b, need);
    size_t n = gb_resp_encode(b->p + b->len, b->cap - b->len, argc, argv, NULL);
    if (!n)
        die("request does not fit");
    b->len += n;
}

static void value_of(char out[VALUE_LEN + 1], unsigned long i) { snprintf(out, VALUE_LEN + 1, "job:%08lu", i % 100000000ul); }

/* ---- one synchronous command ---------------------------------------------------------- */

/* Sends a command, copies its reply's first line (type byte included,
 * truncated to linecap) into line and consumes the whole reply. */
static void call(gb_resp_conn *c, char *line, size_t linecap, int argc, const char *const *argv)
{
    buf b = {0};
    buf_cmdv(&b, argc, argv);
    if (gb_resp_send(c, b.p, b.len) != 0)
        die("send failed");
    free(b.p);
    for (;;) {
        char *cr = c->len ? memchr(c->buf, '\r', c->len) : NULL;
        if (cr) {
            size_t got = (size_t)(cr - c->buf);
            size_t n = got < linecap - 1 ? got : linecap - 1;
            memcpy(line, c->buf, n);
            line[n] = '\0';
            break;
        }
        ssize_t r = gb_resp_recv_more(c, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            die("connection closed");
    }
    if (gb_resp_read_replies(c, 1, NULL) != 0)
        die("read failed");
}

static long long call_int(gb_resp_conn *c, int argc, const char *const *argv)
{
    char line[256];
    call(c, line, sizeof line, argc, argv);
    if (line[0] != ':') {
        fprintf(stderr, "%s: unexpected reply %s\n", argv[0], line);
        exit(1);
    }
    return strtoll(line + 1, NULL, 10);
}

static void call_ok(gb_resp_conn *c, int argc, const char *const *argv)
{
    char line[256];
    call(c, line, sizeof line, argc, argv);
    if (line[0] == '-') {
        fprintf(stderr, "%s: error reply %s\n", argv[0], line);
        exit(1);
    }
}

static void del_keys(gb_resp_conn *c)
{
    const char *a[] = {"DEL", "lwq:list", "lwq:push", "lwq:q", "lwq:empty"};
    call_ok(c, 5, a);
}

/* RPUSHes n values onto key in chunks of 1,000 values, pipelined. */
static void fill(gb_resp_conn *c, const char *key, size_t n)
{
    enum { CHUNK = 1000, INFLIGHT = 16 };
    const char **argv = malloc((CHUNK + 2) * sizeof *argv);
    char(*vals)[VALUE_LEN + 1] = malloc(CHUNK * sizeof *vals);
    buf b = {0};
    size_t done = 0, unread = 0;
    while (done < n) {
        size_t k = n - done < CHUNK ? n - done : CHUNK;
        argv[0] = "RPUSH";
        argv[1] = key;
        for (size_t i = 0; i < k; i++) {
            value_of(vals[i], done + i);
            argv[2 + i] = vals[i];
        }
        b.len = 0;
        buf_cmdv(&b, (int)k + 2, argv);
        if (gb_resp_send(c, b.p, b.len) != 0)
            die("send failed");
        done += k;
        unread++;
        if (unread == INFLIGHT) {
            if (gb_resp_read_replies(c, unread, NULL) != 0)
                die("read failed");
            unread = 0;
        }
    }
    if (unread && gb_resp_read_replies(c, unread, NULL) != 0)
        die("read failed");
    free(b.p);
    free(vals);
    free(argv);
}

static long long llen(gb_resp_conn *c, const char *key)
{
    const char *a[] = {"LLEN", key};
    return call_int(c, 2, a);
}

/* ---- rows ------------------------------------------------------------------------------- */

enum setup_kind {
    SETUP_LIST,    /* lwq:list holds LIST_ITEMS values (kept across rows) */
    SETUP_PUSH,    /* lwq:push is deleted */
    SETUP_QUEUE,   /* lwq:q holds exactly what the row consumes + RESERVE; lwq:empty is missing */
};

typedef struct row {
    const char *name;
    enum setup_kind setup;
    int per_cmd; /* values each command adds (+) or removes (-) from its key; 0 for none */
    int values;  /* values returned per command for the values/s column (0: not reported) */
    int argc;
    const char *argv[10]; /* "%V" is replaced by a distinct 12-byte value per batch slot */
} row;

static const row rows[] = {
    {"LLEN", SETUP_LIST, 0, 0, 2, {"LLEN", "lwq:list"}},
    {"LINDEX middle", SETUP_LIST, 0, 0, 3, {"LINDEX", "lwq:list", "50000"}},
    {"LRANGE 16", SETUP_LIST, 0, 0, 4, {"LRANGE", "lwq:list", "0", "15"}},
    {"LSET middle", SETUP_LIST, 0, 0, 4, {"LSET", "lwq:list", "50000", "%V"}},
    {"LPUSH", SETUP_PUSH, 1, 0, 3, {"LPUSH", "lwq:push", "%V"}},
    {"RPUSH", SETUP_PUSH, 1, 0, 3, {"RPUSH", "lwq:push", "%V"}},
    {"LPOP", SETUP_QUEUE, -1, 0, 2, {"LPOP", "lwq:q"}},
    {"RPOP", SETUP_QUEUE, -1, 0, 2, {"RPOP", "lwq:q"}},
    {"LMOVE same-list rotation", SETUP_LIST, 0, 0, 5, {"LMOVE", "lwq:list", "lwq:list", "LEFT", "RIGHT"}},
    {"RPOPLPUSH same-list rotation", SETUP_LIST, 0, 0, 3, {"RPOPLPUSH", "lwq:list", "lwq:list"}},
    {"BLPOP ready, two keys", SETUP_QUEUE, -1, 0, 4, {"BLPOP", "lwq:empty", "lwq:q", "1"}},
    {"BRPOP ready, two keys", SETUP_QUEUE, -1, 0, 4, {"BRPOP", "lwq:empty", "lwq:q", "1"}},
    {"BLMOVE ready, same-list rotation", SETUP_LIST, 0, 0, 6, {"BLMOVE", "lwq:list", "lwq:list", "LEFT", "RIGHT", "1"}},
    {"LMPOP COUNT 8, two keys", SETUP_QUEUE, -8, 8, 7, {"LMPOP", "2", "lwq:empty", "lwq:q", "LEFT", "COUNT", "8"}},
    {"BLMPOP COUNT 8 ready, two keys", SETUP_QUEUE, -8, 8, 8,
     {"BLMPOP", "1", "2", "lwq:empty", "lwq:q", "LEFT", "COUNT", "8"}},
};
#define NROWS (sizeof rows / sizeof rows[0])

/* Pre-encoded batch: depth requests and the offset where each ends. */
typedef struct batch {
    buf b;
    size_t *end; /* end[i]: bytes of the first i+1 requests */
    size_t depth;
} batch;

static void batch_build(batch *bt, const row *r, size_t depth, unsigned long salt)
{
    memset(bt, 0, sizeof *bt);
    bt->depth = depth;
    bt->end = malloc(depth * sizeof *bt->end);
    for (size_t i = 0; i < depth; i++) {
        const char *argv[10];
        char v[VALUE_LEN + 1];
        value_of(v, salt + i);
        for (int a = 0; a < r->argc; a++)
            argv[a] = strcmp(r->argv[a], "%V") == 0 ? v : r->argv[a];
        buf_cmdv(&bt->b, r->argc, argv);
        bt->end[i] = bt->b.len;
    }
}

static void batch_free(batch *bt)
{
    free(bt->b.p);
    free(bt->end);
}

/* gb_resp_read_replies, but (unless --no-spin) it polls the socket
 * (MSG_DONTWAIT) on its own core instead of sleeping in read(), so the
 * client's wake-up latency is not part of every pipeline round trip. Counts
 * nil replies in *nils; an error reply stops the benchmark. */
static bool spin_reads = true;

static void read_replies(gb_resp_conn *c, size_t n, size_t *nils)
{
    size_t pos = 0;
    while (n > 0) {
        size_t l = pos < c->len ? gb_resp_reply_len(c->buf + pos, c->len - pos) : 0;
        if (l) {
            if (nils && c->buf[pos + 1] == '-' && (c->buf[pos] == '*' || c->buf[pos] == '$'))
                (*nils)++;
            if (c->buf[pos] == '-') {
                fprintf(stderr, "error reply: %.*s\n", (int)(l - 2), c->buf + pos);
                exit(1);
            }
            pos += l;
            n--;
            continue;
        }
        memmove(c->buf, c->buf + pos, c->len - pos);
        c->len -= pos;
        pos = 0;
        ssize_t r = gb_resp_recv_more(c, spin_reads ? MSG_DONTWAIT : 0);
        if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue;
        if (r <= 0)
            die("connection closed");
    }
    memmove(c->buf, c->buf + pos, c->len - pos);
    c->len -= pos;
}

/* Sends n commands from the batch, depth at a time; reads every reply.
 * Returns how many replies were nil. */
static size_t run_cmds(gb_resp_conn *c, const batch *bt, size_t n)
{
    size_t nils = 0;
    while (n) {
        size_t k = n < bt->depth ? n : bt->depth;
        if (gb_resp_send(c, bt->b.p, bt->end[k - 1]) != 0)
            die("send failed");
        read_replies(c, k, &nils);
        n -= k;
    }
    return nils;
}

typedef struct backend {
    const char *name; /* segmented | pma | redis */
    gb_bench_server srv;
    gb_resp_conn conn;
    gb_resp_conn ctl; /* setup and checks */
} backend;

/* CPU time the server's main thread (the engine thread in both servers) has
 * used, in ns (Linux /proc/<pid>/schedstat; 0 where unavailable). */
static uint64_t server_cpu_ns(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    unsigned long long ns = 0;
    if (fscanf(f, "%llu", &ns) != 1)
        ns = 0;
    fclose(f);
    return ns;
}

/* One trial of row r on backend be: returns commands/s; *cpu_ns gets the
 * server's CPU time per measured command. */
static double trial(backend *be, const row *r, size_t measured, size_t depth, size_t warmup, double *cpu_ns)
{
    gb_resp_conn *ctl = &be->ctl;
    size_t total = warmup + measured;
    const char *key = r->setup == SETUP_LIST ? "lwq:list" : r->setup == SETUP_PUSH ? "lwq:push" : "lwq:q";
    long long before = 0;
    switch (r->setup) {
    case SETUP_LIST:
        if (llen(ctl, "lwq:list") != LIST_ITEMS) {
            const char *a[] = {"DEL", "lwq:list"};
            call_ok(ctl, 2, a);
            fill(ctl, "lwq:list", LIST_ITEMS);
        }
        before = LIST_ITEMS;
        break;
    case SETUP_PUSH: {
        const char *a[] = {"DEL", "lwq:push"};
        call_ok(ctl, 2, a);
        before = 0;
        break;
    }
    case SETUP_QUEUE: {
        const char *a[] = {"DEL", "lwq:q", "lwq:empty"};
        call_ok(ctl, 3, a);
        before = (long long)(total * (size_t)(-r->per_cmd)) + RESERVE;
        fill(ctl, "lwq:q", (size_t)before);
        break;
    }
    }
    batch bt;
    batch_build(&bt, r, depth, 0);
    size_t nils = run_cmds(&be->conn, &bt, warmup);
    if (getenv("LWQ_VERBOSE"))
        fprintf(stderr, "measuring %s on %s (pid %d)\n", r->name, be->name, (int)be->srv.pid);
    uint64_t c0 = server_cpu_ns(be->srv.pid);
    double t0 = now_s();
    nils += run_cmds(&be->conn, &bt, measured);
    double t1 = now_s();
    uint64_t c1 = server_cpu_ns(be->srv.pid);
    *cpu_ns = (double)(c1 - c0) / (double)measured;
    if (nils) {
        fprintf(stderr, "%s on %s: %zu nil replies\n", r->name, be->name, nils);
        exit(1);
    }
    batch_free(&bt);
    long long want = before + (long long)total * r->per_cmd;
    long long got = llen(ctl, key);
    if (got != want) {
        fprintf(stderr, "%s on %s: %s holds %lld values after the row, expected %lld\n", r->name, be->name, key, got,
                want);
        exit(1);
    }
    if (r->setup == SETUP_QUEUE && llen(ctl, "lwq:empty") != 0)
        die("lwq:empty is not empty");
    return (double)measured / (t1 - t0);
}

/* ---- ready BLPOP against LPOP, paired ----------------------------------------------------- */

/* Rows whose ratio is one of the goals. */
#define ROW_LPOP 6
#define ROW_BLPOP 10
#define ROW_LMPOP 13
#define PAIR_CHUNK 8 /* pipelined batches of one command before switching to the other */

typedef struct pair_result {
    double lpop_rate, blpop_rate; /* commands/s, each over its own summed time */
    double lpop_cpu, blpop_cpu;   /* server CPU ns per command over the same chunks (0: unknown) */
} pair_result;

/* The goal "ready BLPOP at least 80% of LPOP" divides two rows of the table,
 * which are timed seconds apart. On this kind of shared VM one row's rate
 * moves by a third from one second to the next (the two vCPUs change
 * physical placement), more than the difference between the two commands,
 * so the ratio of two rows says as much about those seconds as about the
 * commands. Here the two commands alternate on one connection in chunks of
 * PAIR_CHUNK pipelined batches (a few hundred µs each), both popping the
 * same queue, until each has run `measured` commands; each command's rate
 * comes from the sum of its own chunks' times, so both see the same moments
 * of the machine. The queue is sized exactly as for the rows and checked
 * afterwards, and any nil reply stops the run. */
static pair_result paired_trial(backend *be, size_t measured, size_t depth, size_t warmup)
{
    const row *lp = &rows[ROW_LPOP], *bl = &rows[ROW_BLPOP];
    gb_resp_conn *ctl = &be->ctl;
    const char *del[] = {"DEL", "lwq:q", "lwq:empty"};
    call_ok(ctl, 3, del);
    size_t total = 2 * (warmup + measured);
    fill(ctl, "lwq:q", total + RESERVE);
    batch a, b;
    batch_build(&a, lp, depth, 0);
    batch_build(&b, bl, depth, 0);
    size_t nils = run_cmds(&be->conn, &a, warmup) + run_cmds(&be->conn, &b, warmup);
    uint64_t ta = 0, tb = 0, ca = 0, cb = 0;
    for (size_t done = 0; done < measured;) {
        size_t n = measured - done < PAIR_CHUNK * depth ? measured - done : PAIR_CHUNK * depth;
        /* the server's CPU clock is read outside the timed windows */
        uint64_t c0 = server_cpu_ns(be->srv.pid);
        uint64_t t0 = gb_bench_now_ns();
        nils += run_cmds(&be->conn, &a, n);
        uint64_t t1 = gb_bench_now_ns();
        uint64_t c1 = server_cpu_ns(be->srv.pid);
        uint64_t t2 = gb_bench_now_ns();
        nils += run_cmds(&be->conn, &b, n);
        uint64_t t3 = gb_bench_now_ns();
        uint64_t c2 = server_cpu_ns(be->srv.pid);
        ta += t1 - t0;
        tb += t3 - t2;
        ca += c1 - c0;
        cb += c2 - c1;
        done += n;
    }
    batch_free(&a);
    batch_free(&b);
    if (nils)
        die("the paired LPOP/BLPOP measurement got nil replies");
    if (llen(ctl, "lwq:q") != RESERVE || llen(ctl, "lwq:empty") != 0)
        die("the paired LPOP/BLPOP measurement left the queue at the wrong length");
    pair_result r = {(double)measured * 1e9 / (double)ta, (double)measured * 1e9 / (double)tb,
                     (double)ca / (double)measured, (double)cb / (double)measured};
    return r;
}

/* ---- park-to-wake ------------------------------------------------------------------------ */

static int blocked_clients(gb_resp_conn *c)
{
    static const char req[] = "*2\r\n$4\r\nINFO\r\n$7\r\nclients\r\n";
    if (gb_resp_send(c, req, sizeof req - 1) != 0)
        die("send failed");
    /* read one bulk reply and look for blocked_clients: */
    for (;;) {
        if (c->len > 0 && c->buf[0] == '$') {
            char *cr = memchr(c->buf, '\r', c->len);
            if (cr) {
                long n = strtol(c->buf + 1, NULL, 10);
                size_t hdr = (size_t)(cr - c->buf) + 2;
                if (c->len >= hdr + (size_t)n + 2) {
                    int v = -1;
                    char *p = memmem(c->buf + hdr, (size_t)n, "blocked_clients:", 16);
                    if (p)
                        v = atoi(p + 16);
                    size_t used = hdr + (size_t)n + 2;
                    memmove(c->buf, c->buf + used, c->len - used);
                    c->len -= used;
                    return v;
                }
            }
        } else if (c->len > 0) {
            die("unexpected INFO reply");
        }
        ssize_t r = gb_resp_recv_more(c, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            die("connection closed");
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct park_result {
    double p50_us, p99_us;
} park_result;

static park_result park_to_wake(backend *be, size_t handoffs)
{
    gb_resp_conn consumer, *producer = &be->conn;
    if (gb_resp_connect_unix(&consumer, be->srv.sock) != 0)
        die("cannot connect the consumer");
    static const char blpop[] = "*3\r\n$5\r\nBLPOP\r\n$8\r\nlwq:wake\r\n$1\r\n0\r\n";
    static const char lpush[] = "*3\r\n$5\r\nLPUSH\r\n$8\r\nlwq:wake\r\n$12\r\njob:00000001\r\n";
    uint64_t *lat = malloc((handoffs ? handoffs : 1) * sizeof *lat);
    size_t warm = handoffs / 10 + 100;
    for (size_t i = 0; i < warm + handoffs; i++) {
        if (gb_resp_send(&consumer, blpop, sizeof blpop - 1) != 0)
            die("send failed");
        while (blocked_clients(producer) != 1)
            ;
        uint64_t t0 = gb_bench_now_ns();
        if (gb_resp_send(producer, lpush, sizeof lpush - 1) != 0)
            die("send failed");
        size_t nils = 0;
        read_replies(&consumer, 1, &nils); /* polls unless --no-spin, like every other row */
        uint64_t t1 = gb_bench_now_ns();
        if (nils)
            die("BLPOP did not return the pushed value");
        char last = 0;
        if (gb_resp_read_replies(producer, 1, &last) != 0 || last != ':')
            die("LPUSH failed");
        if (i >= warm)
            lat[i - warm] = t1 - t0;
    }
    gb_resp_close(&consumer);
    qsort(lat, handoffs, sizeof *lat, cmp_u64);
    park_result r = {(double)lat[(handoffs - 1) / 2] / 1e3, (double)lat[(size_t)((double)(handoffs - 1) * 0.99)] / 1e3};
    free(lat);
    return r;
}

/* ---- main ---------------------------------------------------------------------------------- */

static void fmt_rate(char *out, size_t cap, double v)
{
    if (v <= 0)
        snprintf(out, cap, "-");
    else
        snprintf(out, cap, "%.0f", v);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr,
                "usage: %s <server-binary> <measured-commands> <pipeline-depth> [--compare-redis <redis-server>]\n"
                "       [--csv] [--csv-out FILE] [--trials N] [--only ROW-PREFIX] [--handoffs N]\n"
                "       [--no-park] [--no-paired] [--no-spin]\n"
                "SERVER_CORE / CLIENT_CORE (default 0 / 1) choose the CPUs.\n",
                argv[0]);
        return 2;
    }
    const char *server = argv[1];
    long long measured_ll = atoll(argv[2]), depth_ll = atoll(argv[3]);
    if (measured_ll <= 0 || depth_ll <= 0 || depth_ll > 100000)
        die("measured-commands and pipeline-depth must be positive (depth at most 100000)");
    size_t measured = (size_t)measured_ll, depth = (size_t)depth_ll;
    const char *redis = NULL, *only = NULL, *csv_out = NULL;
    bool csv = false, park = true, paired = true;
    int trials = 3;
    size_t handoffs = 10000;
    for (int i = 4; i < argc; i++) {
        if (!strcmp(argv[i], "--compare-redis") && i + 1 < argc)
            redis = argv[++i];
        else if (!strcmp(argv[i], "--csv"))
            csv = true;
        else if (!strcmp(argv[i], "--csv-out") && i + 1 < argc)
            csv_out = argv[++i];
        else if (!strcmp(argv[i], "--trials") && i + 1 < argc)
            trials = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--handoffs") && i + 1 < argc)
            handoffs = (size_t)atoll(argv[++i]);
        else if (!strcmp(argv[i], "--spin"))
            spin_reads = true;
        else if (!strcmp(argv[i], "--no-spin"))
            spin_reads = false;
        else if (!strcmp(argv[i], "--no-park"))
            park = false;
        else if (!strcmp(argv[i], "--no-paired"))
            paired = false;
        else {
            fprintf(stderr, "unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (trials < 1 || trials > MAX_TRIALS)
        die("--trials must be 1..15");
    if (strcmp(rows[ROW_LPOP].argv[0], "LPOP") || strcmp(rows[ROW_BLPOP].argv[0], "BLPOP") ||
        strcmp(rows[ROW_LMPOP].argv[0], "LMPOP"))
        die("ROW_LPOP, ROW_BLPOP and ROW_LMPOP no longer index their rows");
    size_t warmup = (WARMUP_MIN + depth - 1) / depth * depth;
    int scpu = gb_bench_env_int("SERVER_CORE", 0), ccpu = gb_bench_env_int("CLIENT_CORE", 1);

    backend be[MAX_BACKENDS];
    int nbe = 0;
    const char *seg_args[] = {"--list-implementation", "segmented", NULL};
    const char *pma_args[] = {"--list-implementation", "pma", NULL};
    be[nbe++].name = "segmented";
    be[nbe++].name = "pma";
    if (redis)
        be[nbe++].name = "redis";
    for (int k = 0; k < nbe; k++) {
        const char *bin = k < 2 ? server : redis;
        const char *const *extra = k == 0 ? seg_args : k == 1 ? pma_args : NULL;
        if (gb_bench_server_start(&be[k].srv, bin, scpu, extra) != 0) {
            for (int j = 0; j < k; j++)
                gb_bench_server_stop(&be[j].srv);
            return 1;
        }
        if (gb_resp_connect_unix(&be[k].conn, be[k].srv.sock) != 0 ||
            gb_resp_connect_unix(&be[k].ctl, be[k].srv.sock) != 0)
            die("cannot connect");
        del_keys(&be[k].ctl);
    }
    gb_bench_pin(ccpu, "client");

    if (!csv) {
        printf("list work-queue benchmark: %zu measured commands, pipeline %zu, warm-up %zu, median of %d trials\n",
               measured, depth, warmup, trials);
        printf("server CPU %d, client CPU %d, RESP2 over a Unix socket; %d-item list of %d-byte values\n", scpu,
               ccpu, LIST_ITEMS, VALUE_LEN);
    }

    FILE *csvf = csv ? stdout : NULL;
    if (csv_out && !(csvf = fopen(csv_out, "w")))
        die("cannot write the --csv-out file");
    if (csvf)
        fprintf(csvf, "operation,backend,commands_per_sec,values_per_sec\n");
    double rate[NROWS][MAX_BACKENDS], cpu[NROWS][MAX_BACKENDS];
    memset(rate, 0, sizeof rate);
    memset(cpu, 0, sizeof cpu);
    /* Trial rounds are the outer loop: every row and backend runs once per
     * round, so rows compared with each other (BLPOP with LPOP) are measured
     * minutes apart no more than backends are. A VM's vCPUs can move between
     * sharing one physical core and having two while the benchmark runs,
     * which changes every rate; interleaving gives each row the same mix. */
    static double t[NROWS][MAX_BACKENDS][MAX_TRIALS], u[NROWS][MAX_BACKENDS][MAX_TRIALS];
    for (int tr = 0; tr < trials; tr++) {
        if (!csv)
            fprintf(stderr, "trial round %d of %d ...\n", tr + 1, trials);
        for (size_t ri = 0; ri < NROWS; ri++) {
            if (only && strncmp(rows[ri].name, only, strlen(only)) != 0)
                continue;
            for (int k = 0; k < nbe; k++)
                t[ri][k][tr] = trial(&be[k], &rows[ri], measured, depth, warmup, &u[ri][k][tr]);
        }
    }
    /* The paired BLPOP/LPOP measurement (see paired_trial), in its own
     * rounds after the table's; not with --only, which picks rows. */
    paired = paired && !only;
    double pair_ratio[MAX_BACKENDS] = {0}, pair_lpop[MAX_BACKENDS] = {0}, pair_blpop[MAX_BACKENDS] = {0};
    double pair_cpu_ratio[MAX_BACKENDS] = {0}; /* server CPU per BLPOP / per LPOP */
    if (paired) {
        static double pr[MAX_BACKENDS][MAX_TRIALS], pl[MAX_BACKENDS][MAX_TRIALS], pb[MAX_BACKENDS][MAX_TRIALS];
        static double pcr[MAX_BACKENDS][MAX_TRIALS];
        for (int tr = 0; tr < trials; tr++) {
            if (!csv)
                fprintf(stderr, "paired BLPOP/LPOP round %d of %d ...\n", tr + 1, trials);
            for (int k = 0; k < nbe; k++) {
                pair_result x = paired_trial(&be[k], measured, depth, warmup);
                pl[k][tr] = x.lpop_rate;
                pb[k][tr] = x.blpop_rate;
                pr[k][tr] = x.blpop_rate / x.lpop_rate;
                pcr[k][tr] = x.lpop_cpu > 0 ? x.blpop_cpu / x.lpop_cpu : 0;
            }
        }
        for (int k = 0; k < nbe; k++) {
            pair_ratio[k] = gb_bench_median(pr[k], trials);
            pair_lpop[k] = gb_bench_median(pl[k], trials);
            pair_blpop[k] = gb_bench_median(pb[k], trials);
            pair_cpu_ratio[k] = gb_bench_median(pcr[k], trials);
        }
    }
    for (size_t ri = 0; ri < NROWS; ri++) {
        const row *r = &rows[ri];
        if (only && strncmp(r->name, only, strlen(only)) != 0)
            continue;
        for (int k = 0; k < nbe; k++) {
            rate[ri][k] = gb_bench_median(t[ri][k], trials);
            cpu[ri][k] = gb_bench_median(u[ri][k], trials);
            if (csvf)
                fprintf(csvf, "\"%s\",%s,%.0f,%.0f\n", r->name, be[k].name, rate[ri][k],
                        r->values ? rate[ri][k] * r->values : 0.0);
        }
        if (csvf)
            fflush(csvf);
        if (csv) {
            fflush(stdout);
            continue;
        }
        static bool header;
        if (!header) {
            header = true;
            printf("\n%-34s %12s %12s", "commands/s", "segmented", "pma");
            if (redis)
                printf(" %12s %9s %9s", "redis", "seg/redis", "pma/redis");
            printf(" %10s\n", "pma/seg");
        }
        char a[32], b[32], c[32];
        fmt_rate(a, sizeof a, rate[ri][0]);
        fmt_rate(b, sizeof b, rate[ri][1]);
        printf("%-34s %12s %12s", r->name, a, b);
        if (redis) {
            fmt_rate(c, sizeof c, rate[ri][2]);
            printf(" %12s %8.2fx %8.2fx", c, rate[ri][0] / rate[ri][2], rate[ri][1] / rate[ri][2]);
        }
        printf(" %9.2fx\n", rate[ri][1] / rate[ri][0]);
        fflush(stdout);
    }

    if (!csv) {
        bool any = false;
        for (size_t ri = 0; ri < NROWS; ri++) {
            if (!rows[ri].values || rate[ri][0] == 0)
                continue;
            if (!any) {
                printf("\n%-34s %12s %12s%s\n", "values/s", "segmented", "pma", redis ? "        redis" : "");
                any = true;
            }
            printf("%-34s %12.0f %12.0f", rows[ri].name, rate[ri][0] * rows[ri].values,
                   rate[ri][1] * rows[ri].values);
            if (redis)
                printf(" %12.0f", rate[ri][2] * rows[ri].values);
            printf("\n");
        }
        bool have_cpu = false;
        for (size_t ri = 0; ri < NROWS; ri++)
            have_cpu = have_cpu || cpu[ri][0] > 0;
        if (have_cpu) {
            printf("\n%-34s %12s %12s%s\n", "server CPU ns/command (median)", "segmented", "pma",
                   redis ? "        redis redis/seg redis/pma" : "");
            for (size_t ri = 0; ri < NROWS; ri++) {
                if (rate[ri][0] == 0)
                    continue;
                printf("%-34s %12.0f %12.0f", rows[ri].name, cpu[ri][0], cpu[ri][1]);
                if (redis)
                    printf(" %12.0f %8.2fx %8.2fx", cpu[ri][2], cpu[ri][2] / cpu[ri][0], cpu[ri][2] / cpu[ri][1]);
                printf("\n");
            }
        }
        /* the goals, stated plainly */
        printf("\ngoals:\n");
        if (paired) {
            printf("  ready BLPOP / LPOP, paired (the two alternate in chunks of %d batches; median of %d):\n",
                   PAIR_CHUNK, trials);
            for (int k = 0; k < nbe; k++)
                printf("    %-9s %5.0f%%  (goal >= 80%%)  LPOP %.0f/s, BLPOP %.0f/s; server CPU per BLPOP %.2fx LPOP\n",
                       be[k].name, 100 * pair_ratio[k], pair_lpop[k], pair_blpop[k], pair_cpu_ratio[k]);
        }
        if (rate[ROW_LPOP][0] > 0 && rate[ROW_BLPOP][0] > 0) {
            printf("  ready BLPOP / LPOP from the table's rows (timed seconds apart):\n");
            for (int k = 0; k < nbe; k++)
                printf("    %-9s %5.0f%%\n", be[k].name, 100 * rate[ROW_BLPOP][k] / rate[ROW_LPOP][k]);
        }
        if (rate[ROW_LMPOP][0] > 0)
            printf("  PMA LMPOP COUNT 8 / segmented    %5.2fx  (goal >= 4x)\n", rate[ROW_LMPOP][1] / rate[ROW_LMPOP][0]);
        if (redis) {
            for (int k = 0; k < 2; k++) {
                int below = 0, under13 = 0;
                for (size_t ri = 0; ri < NROWS; ri++) {
                    if (rate[ri][2] <= 0)
                        continue;
                    double x = rate[ri][k] / rate[ri][2];
                    if (x < 1.0) {
                        below++;
                        printf("  %s below redis: %s %.2fx\n", be[k].name, rows[ri].name, x);
                    } else if (x < 1.3) {
                        under13++;
                    }
                }
                printf("  %s: %d rows below 1.0x redis, %d rows in [1.0x, 1.3x)\n", be[k].name, below, under13);
            }
        }
    }

    if (paired && csvf) {
        fprintf(csvf, "\npaired,backend,lpop_per_sec,blpop_per_sec,blpop_over_lpop,server_cpu_blpop_over_lpop\n");
        for (int k = 0; k < nbe; k++)
            fprintf(csvf, "BLPOP/LPOP,%s,%.0f,%.0f,%.3f,%.3f\n", be[k].name, pair_lpop[k], pair_blpop[k],
                    pair_ratio[k], pair_cpu_ratio[k]);
        fflush(csvf);
    }

    if (park && handoffs > 0) {
        if (csvf)
            fprintf(csvf, "\npark_to_wake,backend,p50_us,p99_us,handoffs\n");
        if (!csv)
            printf("\npark-to-wake (LPUSH to a consumer already blocked in BLPOP), %zu handoffs:\n", handoffs);
        for (int k = 0; k < nbe; k++) {
            park_result pr = park_to_wake(&be[k], handoffs);
            if (csvf)
                fprintf(csvf, "LPUSH->BLPOP,%s,%.2f,%.2f,%zu\n", be[k].name, pr.p50_us, pr.p99_us, handoffs);
            if (!csv)
                printf("  %-9s median %7.2f us   p99 %7.2f us\n", be[k].name, pr.p50_us, pr.p99_us);
            fflush(stdout);
        }
    }

    if (csvf && csvf != stdout)
        fclose(csvf);
    for (int k = 0; k < nbe; k++) {
        gb_resp_close(&be[k].conn);
        gb_resp_close(&be[k].ctl);
        gb_bench_server_stop(&be[k].srv);
    }
    return 0;
}
