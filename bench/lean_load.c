/*
 * lean_load: a load generator that spends as little CPU per request as a
 * socket client can, so that at pipeline 1 the server, not the client, sets
 * the pace on a machine with one core for each (docs/benchmarks.md,
 * "Scripts").
 *
 * redis-benchmark spends ~15 us of CPU per request at pipeline 1 on the
 * project's 2-core VM (its event loop adds and removes a write handler per
 * request, and it keeps a latency histogram), more than either server
 * spends answering, so its rows there measure the client. lean_load keeps
 * one request (or one pipeline of them) in flight per connection like
 * redis-benchmark -c/-P, with one send and one recv per round trip and one
 * wait (libuv: epoll or kqueue) for all the connections that became
 * readable, and prints its own CPU per request so a reader can see which
 * side was saturated.
 *
 *   lean_load --socket PATH | --port N [--clients 50] [--pipeline 1] [--requests N]
 *             [--keyspace 100000] -- COMMAND ARG ...
 *
 * Every "__rand_int__" in the arguments becomes a 12-digit random number
 * below --keyspace for each request (as redis-benchmark -r does);
 * "__rand_rep__" repeats the number of the mark before it. An argument ";"
 * separates commands sent together as one request (HSET k f v ; HPEXPIRE
 * k ...: two pipelined commands with one effect, counted as two). An error
 * reply stops the run with exit status 1: a benchmark of errors is not a
 * benchmark of the command. Output, one line:
 *   requests=N seconds=S rate=R client_cpu_us_per_req=C client_cpu_share=F
 *
 * --rate R makes it an open loop (issue 33's fixed-rate latency): request
 * k is due at start + k/R seconds whether or not earlier ones were
 * answered, goes out on the first idle connection at or after that time,
 * and its latency counts from when it was due, not from when it left, so
 * a server that stalls is charged for every request that waited behind
 * the stall (no coordinated omission). The client spins on its loop to
 * send on time (its CPU share is 1.0 by design). --requests then counts
 * round trips (pipelines), each timed once. The line also has
 *   p50_us=.. p90_us=.. p99_us=.. p999_us=.. max_us=..
 * and --cdf FILE --label L appends the latency CDF as
 * bench/latency_cdf_chart.py reads it.
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <uv.h>

#include "bench_common.h"

#define RAND_MARK "__rand_int__"
#define REPEAT_MARK "__rand_rep__" /* the previous mark's number again */
#define RAND_DIGITS 12 /* strlen(RAND_MARK): the request keeps its length */
#define MAX_MARKS 16   /* per request */
#define MAX_COMMANDS 4 /* per request, separated by ";" */
#define MAX_PIPELINE 64
#define MAX_ARGS 64
#define MAX_RATE_REQUESTS 100000000L /* an open loop's run is bounded */

/* The request bytes: the command's RESP encoding `pipeline` times back to
 * back, and where each random mark sits in them. */
typedef struct load_request {
    char *bytes;
    size_t len;
    size_t marks[MAX_MARKS * MAX_PIPELINE];
    bool repeats[MAX_MARKS * MAX_PIPELINE]; /* a REPEAT_MARK */
    int nmarks;
    int commands; /* per request */
} load_request;

typedef struct load_run {
    load_request rq;
    uint64_t keyspace;
    int pipeline;
    long total, sent, done;
    int failed; /* an error reply, a closed connection, a failed send */
    /* --rate's open loop (0: closed loop, each connection sends again at
     * once): request k is due at start_ns + k * 1e9 / rate. */
    double rate;
    uint64_t start_ns;
    long scheduled;          /* round trips started so far, in schedule order */
    struct load_conn **idle; /* connections with nothing in flight */
    int nidle;
    gb_hist *latency; /* from each round trip's due time to its last reply */
} load_run;

typedef struct load_conn {
    uv_pipe_t pipe;
    load_run *run;
    char *buf; /* replies read and not yet consumed */
    size_t len, cap;
    size_t awaiting;   /* replies still due for the pipeline in flight */
    uv_write_t write;  /* for the rest of a send the socket did not take at once */
    char *unsent;      /* that rest's bytes, owned until the write completes */
    uint64_t due_ns;   /* --rate: when the round trip in flight was due */
} load_conn;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t next_random(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

/* Encodes the ";"-separated commands of argv one after the other into one
 * (malloc'd, *len bytes); *commands receives how many. NULL when too many. */
static char *encode_commands(int argc, char **argv, size_t *len, int *commands)
{
    size_t lens[MAX_ARGS], cap = 64;
    if (argc > MAX_ARGS)
        return NULL;
    for (int i = 0; i < argc; i++) {
        lens[i] = strlen(argv[i]);
        cap += lens[i] + 32;
    }
    char *one = malloc(cap);
    *len = 0;
    *commands = 0;
    for (int start = 0, i = 0; i <= argc; i++) {
        if (i < argc && strcmp(argv[i], ";") != 0)
            continue;
        if (i > start) {
            if (++*commands > MAX_COMMANDS) {
                free(one);
                return NULL;
            }
            *len += gb_resp_encode(one + *len, cap - *len, i - start, (const char *const *)argv + start, lens + start);
        }
        start = i + 1;
    }
    return one;
}

/* Encodes the request `pipeline` times and records where the random marks are. */
static int build_request(load_request *rq, int argc, char **argv, int pipeline)
{
    size_t one_len;
    char *one = encode_commands(argc, argv, &one_len, &rq->commands);
    if (!one || rq->commands == 0) {
        free(one);
        return -1;
    }
    size_t one_marks[MAX_MARKS];
    bool one_repeats[MAX_MARKS];
    int n_one = 0;
    for (size_t at = 0; at + RAND_DIGITS <= one_len; at++) {
        bool fresh = memcmp(one + at, RAND_MARK, RAND_DIGITS) == 0;
        if (!fresh && memcmp(one + at, REPEAT_MARK, RAND_DIGITS) != 0)
            continue;
        if (n_one == MAX_MARKS || (!fresh && n_one == 0)) {
            free(one);
            return -1;
        }
        one_repeats[n_one] = !fresh;
        one_marks[n_one++] = at;
        at += RAND_DIGITS - 1;
    }
    rq->len = one_len * (size_t)pipeline;
    rq->bytes = malloc(rq->len);
    rq->nmarks = 0;
    for (int k = 0; k < pipeline; k++) {
        memcpy(rq->bytes + one_len * (size_t)k, one, one_len);
        for (int m = 0; m < n_one; m++) {
            rq->repeats[rq->nmarks] = one_repeats[m];
            rq->marks[rq->nmarks++] = one_len * (size_t)k + one_marks[m];
        }
    }
    free(one);
    return 0;
}

static void fill_random_keys(load_request *rq, uint64_t keyspace)
{
    for (int m = 0; m < rq->nmarks; m++) {
        char *d = rq->bytes + rq->marks[m];
        if (rq->repeats[m]) {
            memcpy(d, rq->bytes + rq->marks[m - 1], RAND_DIGITS);
            continue;
        }
        uint64_t v = next_random() % keyspace;
        for (int i = RAND_DIGITS - 1; i >= 0; i--, v /= 10)
            d[i] = (char)('0' + v % 10);
    }
}

static void fail(load_run *run, const char *why)
{
    if (!run->failed)
        fprintf(stderr, "lean_load: %s\n", why);
    run->failed = 1;
}

static void on_rest_written(uv_write_t *w, int status)
{
    load_conn *c = w->data;
    free(c->unsent);
    c->unsent = NULL;
    if (status < 0)
        fail(c->run, uv_strerror(status));
}

/* Sends the next pipeline on c: one try_write, which takes it all unless
 * the socket's buffer is full. */
static void send_pipeline(load_conn *c)
{
    load_run *run = c->run;
    fill_random_keys(&run->rq, run->keyspace);
    uv_buf_t b = uv_buf_init(run->rq.bytes, (unsigned)run->rq.len);
    int w = uv_try_write((uv_stream_t *)&c->pipe, &b, 1);
    if (w == UV_EAGAIN)
        w = 0;
    if (w < 0) {
        fail(run, uv_strerror(w));
        return;
    }
    if ((size_t)w < run->rq.len) {
        size_t rest = run->rq.len - (size_t)w;
        c->unsent = malloc(rest);
        memcpy(c->unsent, run->rq.bytes + w, rest);
        uv_buf_t rb = uv_buf_init(c->unsent, (unsigned)rest);
        c->write.data = c;
        if (uv_write(&c->write, (uv_stream_t *)&c->pipe, &rb, 1, on_rest_written) != 0)
            fail(run, "cannot queue a write");
    }
    c->awaiting = (size_t)run->pipeline * (size_t)run->rq.commands;
    run->sent += run->pipeline * run->rq.commands;
}

/* ---- --rate: the open loop ---- */

static uint64_t due_time(const load_run *run, long k)
{
    return run->start_ns + (uint64_t)((double)k * 1e9 / run->rate);
}

/* Starts every round trip already due on an idle connection, in schedule
 * order; one due with no idle connection waits, its latency counting from
 * its due time all the same. */
static void send_due(load_run *run)
{
    uint64_t now = gb_bench_now_ns();
    while (run->nidle > 0 && run->scheduled < run->total && !run->failed) {
        uint64_t due = due_time(run, run->scheduled);
        if (due > now)
            return;
        load_conn *c = run->idle[--run->nidle];
        c->due_ns = due;
        run->scheduled++;
        send_pipeline(c);
    }
}

/* c's round trip is answered: its latency counts from when it was due, and
 * c takes the next one due, if any. */
static void answered_on_schedule(load_conn *c)
{
    load_run *run = c->run;
    gb_hist_add(run->latency, gb_bench_now_ns() - c->due_ns);
    run->idle[run->nidle++] = c;
    send_due(run);
}

/* The open loop spins (the client has its own core) so that each round
 * trip starts at its due time rather than at the loop's next wake-up. */
static void run_on_schedule(uv_loop_t *loop, load_run *run, load_conn *conns, int clients)
{
    for (int i = 0; i < clients; i++)
        run->idle[run->nidle++] = &conns[clients - 1 - i];
    run->start_ns = gb_bench_now_ns();
    while (!run->failed && (run->scheduled < run->total || run->nidle < clients)) {
        send_due(run);
        uv_run(loop, UV_RUN_NOWAIT);
    }
}

static void print_latency(const load_run *run, const char *cdf, const char *label)
{
    gb_lat_summary l = gb_hist_summary(run->latency);
    printf(" p50_us=%.1f p90_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f", l.p50 / 1e3, l.p90 / 1e3, l.p99 / 1e3,
           l.p999 / 1e3, l.max / 1e3);
    if (cdf)
        gb_hist_write_cdf(run->latency, cdf, label);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *out)
{
    load_conn *c = h->data;
    (void)suggested;
    if (c->cap - c->len < 4096) {
        c->cap *= 2;
        c->buf = realloc(c->buf, c->cap);
    }
    *out = uv_buf_init(c->buf + c->len, (unsigned)(c->cap - c->len));
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    load_conn *c = s->data;
    load_run *run = c->run;
    (void)b;
    if (n < 0) {
        fail(run, n == UV_EOF ? "the server closed a connection" : uv_strerror((int)n));
        uv_stop(s->loop);
        return;
    }
    c->len += (size_t)n;
    size_t pos = 0;
    while (c->awaiting > 0 && pos < c->len) {
        size_t l = gb_resp_reply_len(c->buf + pos, c->len - pos);
        if (!l)
            break;
        if (c->buf[pos] == '-') {
            fprintf(stderr, "lean_load: error reply: %.*s\n", (int)l - 2, c->buf + pos);
            fail(run, "stopped at an error reply");
            uv_stop(s->loop);
            return;
        }
        pos += l;
        c->awaiting--;
        run->done++;
    }
    memmove(c->buf, c->buf + pos, c->len - pos);
    c->len -= pos;
    if (run->rate > 0) {
        if (c->awaiting == 0 && pos > 0)
            answered_on_schedule(c);
        return;
    }
    if (c->awaiting == 0 && run->sent < run->total)
        send_pipeline(c);
    if (run->done == run->sent || run->failed)
        uv_stop(s->loop);
}

static void usage(const char *me)
{
    fprintf(stderr,
            "usage: %s --socket PATH | --port N [--clients N] [--pipeline P] [--requests N] [--keyspace K] -- COMMAND ARG ...\n"
            "  --socket    the server's Unix socket\n"
            "  --clients   connections, each with one pipeline in flight (default 50)\n"
            "  --pipeline  requests per round trip on a connection, 1-%d (default 1)\n"
            "  --requests  requests in all, rounded up to whole pipelines (default 100000)\n"
            "  --keyspace  __rand_int__ takes values below this (default 100000)\n"
            "  --rate R    open loop: R round trips a second in all, each timed from when it was due\n"
            "  --cdf FILE  with --rate: append the latency CDF (label,ns,fraction) to FILE\n"
            "  --label L   the CDF's label (default lean_load)\n",
            me, MAX_PIPELINE);
}

int main(int argc, char **argv)
{
    const char *path = NULL, *cdf = NULL, *label = "lean_load";
    int clients = 50, cmd_at = -1, port = 0;
    load_run run = {.keyspace = 100000, .pipeline = 1, .total = 100000};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            cmd_at = i + 1;
            break;
        } else if (i + 1 < argc && !strcmp(argv[i], "--socket"))
            path = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--port")) /* TCP on 127.0.0.1 instead */
            port = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--clients"))
            clients = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--pipeline"))
            run.pipeline = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--requests"))
            run.total = atol(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--keyspace"))
            run.keyspace = strtoull(argv[++i], NULL, 10);
        else if (i + 1 < argc && !strcmp(argv[i], "--rate"))
            run.rate = atof(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--cdf"))
            cdf = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--label"))
            label = argv[++i];
        else {
            usage(argv[0]);
            return 2;
        }
    }
    if ((!path && port <= 0) || cmd_at < 0 || cmd_at >= argc || clients < 1 || clients > 10000 || run.pipeline < 1 ||
        run.pipeline > MAX_PIPELINE || run.total < 1 || run.keyspace < 1 || run.rate < 0 ||
        (run.rate > 0 && run.total > MAX_RATE_REQUESTS)) {
        usage(argv[0]);
        return 2;
    }
    if (build_request(&run.rq, argc - cmd_at, argv + cmd_at, run.pipeline) != 0) {
        fprintf(stderr, "lean_load: at most %d arguments, %d commands and %d random marks per request (and no %s first)\n",
                MAX_ARGS, MAX_COMMANDS, MAX_MARKS, REPEAT_MARK);
        return 2;
    }

    uv_loop_t *loop = uv_default_loop();
    load_conn *conns = calloc((size_t)clients, sizeof *conns);
    for (int i = 0; i < clients; i++) {
        load_conn *c = &conns[i];
        gb_resp_conn sock;
        /* libuv reads and writes a TCP socket through a pipe handle alike. */
        if ((path ? gb_resp_connect_unix(&sock, path) : gb_resp_connect_tcp(&sock, port)) != 0) {
            fprintf(stderr, "lean_load: cannot connect to %s\n", path ? path : "127.0.0.1");
            return 1;
        }
        c->run = &run;
        c->buf = sock.buf; /* the connection's buffer, reused for replies */
        c->cap = sock.cap;
        uv_pipe_init(loop, &c->pipe, 0);
        c->pipe.data = c;
        if (uv_pipe_open(&c->pipe, sock.fd) != 0 || uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read) != 0) {
            fprintf(stderr, "lean_load: cannot watch connection %d\n", i);
            return 1;
        }
    }

    uint64_t t0 = gb_bench_now_ns();
    double cpu0 = cpu_seconds();
    if (run.rate > 0) {
        run.idle = calloc((size_t)clients, sizeof *run.idle);
        run.latency = gb_hist_new();
        run.total = run.total / run.pipeline + (run.total % run.pipeline != 0);
        run_on_schedule(loop, &run, conns, clients);
    } else {
        for (int i = 0; i < clients && run.sent < run.total; i++)
            send_pipeline(&conns[i]);
        if (!run.failed)
            uv_run(loop, UV_RUN_DEFAULT);
    }
    double seconds = (double)(gb_bench_now_ns() - t0) / 1e9, cpu = cpu_seconds() - cpu0;
    int rc = run.failed || run.done < run.sent;
    if (!rc) {
        printf("requests=%ld seconds=%.3f rate=%.0f client_cpu_us_per_req=%.2f client_cpu_share=%.2f", run.done,
               seconds, (double)run.done / seconds, cpu * 1e6 / (double)run.done, cpu / seconds);
        if (run.rate > 0)
            print_latency(&run, cdf, label);
        printf("\n");
    }
    for (int i = 0; i < clients; i++)
        uv_close((uv_handle_t *)&conns[i].pipe, NULL);
    uv_run(loop, UV_RUN_DEFAULT); /* the closes, and any write still queued */
    for (int i = 0; i < clients; i++) {
        free(conns[i].buf);
        free(conns[i].unsent);
    }
    free(conns);
    free(run.idle);
    free(run.latency);
    free(run.rq.bytes);
    uv_loop_close(loop);
    return rc;
}
