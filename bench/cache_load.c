/*
 * cache_load: the cache workload of docs/benchmarks.md, "Eviction": GETs
 * of keys drawn from a Zipf distribution, each miss filled by a SET of a
 * fixed-size value (what an application does in front of a database), over
 * a few connections, each with a pipeline of GETs in flight and then the
 * SETs of its misses. The draw sequence depends only on --seed, so two
 * servers see the same GETs; they differ in which miss, as their caches
 * keep different keys.
 *
 *   cache_load --socket PATH [--keys 500000] [--requests 2000000]
 *              [--warmup 500000] [--pipeline 64] [--conns 4]
 *              [--value 200] [--zipf 0.99] [--seed 1]
 *
 * Output, one line (the counts after the warm-up requests):
 *   gets=N hits=H sets=S seconds=T hit_rate=F get_rate=G req_rate=R
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "bench_common.h"

#define MAX_PIPELINE 256
#define MAX_CONNS 16
#define KEY_MAX 32

typedef struct opts {
    const char *sock;
    long keys, requests, warmup;
    int pipeline, conns, value;
    double zipf;
    uint64_t seed;
} opts;

typedef struct conn_state {
    gb_resp_conn c;
    long keys[MAX_PIPELINE];
    int nkeys;
    long misses[MAX_PIPELINE];
    int nmisses;
} conn_state;

static uint64_t rng;

static double next_uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

/* The cumulative Zipf(s) weights of ranks 1..n, normalised to 1. */
static double *zipf_table(long n, double s)
{
    double *cum = malloc((size_t)n * sizeof *cum);
    double total = 0;
    for (long i = 0; i < n; i++) {
        total += 1.0 / pow((double)(i + 1), s);
        cum[i] = total;
    }
    for (long i = 0; i < n; i++)
        cum[i] /= total;
    return cum;
}

static long zipf_draw(const double *cum, long n)
{
    double u = next_uniform();
    long lo = 0, hi = n - 1;
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (cum[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t append_cmd(char *out, size_t cap, int argc, const char *const *argv, const size_t *lens)
{
    return gb_resp_encode(out, cap, argc, argv, lens);
}

/* Reads n replies from c; calls on_reply with each one's first bytes. */
static int read_replies(conn_state *cs, int n, void (*on_reply)(conn_state *, int, const char *))
{
    gb_resp_conn *c = &cs->c;
    size_t pos = 0;
    for (int i = 0; i < n;) {
        size_t l = gb_resp_reply_len(c->buf + pos, c->len - pos);
        if (!l) {
            if (gb_resp_recv_more(c, 0) <= 0)
                return -1;
            continue;
        }
        if (c->buf[pos] == '-') {
            fprintf(stderr, "cache_load: error reply: %.*s\n", (int)l, c->buf + pos);
            return -1;
        }
        if (on_reply)
            on_reply(cs, i, c->buf + pos);
        pos += l;
        i++;
    }
    memmove(c->buf, c->buf + pos, c->len - pos);
    c->len -= pos;
    return 0;
}

static void note_get(conn_state *cs, int i, const char *reply)
{
    if (reply[0] == '$' && reply[1] == '-')
        cs->misses[cs->nmisses++] = cs->keys[i];
}

static int send_gets(conn_state *cs, const double *cum, const opts *o, char *req, size_t cap)
{
    size_t len = 0;
    cs->nkeys = o->pipeline;
    cs->nmisses = 0;
    for (int k = 0; k < o->pipeline; k++) {
        char key[KEY_MAX];
        cs->keys[k] = zipf_draw(cum, o->keys);
        size_t kl = (size_t)snprintf(key, sizeof key, "key:%ld", cs->keys[k]);
        const char *argv[2] = {"GET", key};
        size_t lens[2] = {3, kl};
        len += append_cmd(req + len, cap - len, 2, argv, lens);
    }
    return gb_resp_send(&cs->c, req, len);
}

static int send_sets(conn_state *cs, const char *value, const opts *o, char *req, size_t cap)
{
    size_t len = 0;
    for (int k = 0; k < cs->nmisses; k++) {
        char key[KEY_MAX];
        size_t kl = (size_t)snprintf(key, sizeof key, "key:%ld", cs->misses[k]);
        const char *argv[3] = {"SET", key, value};
        size_t lens[3] = {3, kl, (size_t)o->value};
        len += append_cmd(req + len, cap - len, 3, argv, lens);
    }
    return cs->nmisses ? gb_resp_send(&cs->c, req, len) : 0;
}

static void parse_opts(int argc, char **argv, opts *o)
{
    *o = (opts){NULL, 500000, 2000000, 500000, 64, 4, 200, 0.99, 1};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--socket"))
            o->sock = v;
        else if (!strcmp(k, "--keys"))
            o->keys = atol(v);
        else if (!strcmp(k, "--requests"))
            o->requests = atol(v);
        else if (!strcmp(k, "--warmup"))
            o->warmup = atol(v);
        else if (!strcmp(k, "--pipeline"))
            o->pipeline = atoi(v);
        else if (!strcmp(k, "--conns"))
            o->conns = atoi(v);
        else if (!strcmp(k, "--value"))
            o->value = atoi(v);
        else if (!strcmp(k, "--zipf"))
            o->zipf = atof(v);
        else if (!strcmp(k, "--seed"))
            o->seed = (uint64_t)atoll(v);
    }
    if (!o->sock || o->keys < 1 || o->pipeline < 1 || o->pipeline > MAX_PIPELINE || o->conns < 1 ||
        o->conns > MAX_CONNS || o->value < 1 || o->value > (1 << 20)) {
        fprintf(stderr, "usage: cache_load --socket PATH [--keys N] [--requests N] [--warmup N] [--pipeline 1..%d] "
                        "[--conns 1..%d] [--value BYTES] [--zipf S] [--seed N]\n",
                MAX_PIPELINE, MAX_CONNS);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    opts o;
    parse_opts(argc, argv, &o);
    rng = o.seed * 0x9e3779b97f4a7c15ull + 1;
    double *cum = zipf_table(o.keys, o.zipf);
    char *value = malloc((size_t)o.value);
    memset(value, 'v', (size_t)o.value);
    size_t cap = (size_t)MAX_PIPELINE * ((size_t)o.value + 128);
    char *req = malloc(cap);
    conn_state *cs = calloc((size_t)o.conns, sizeof *cs);
    for (int i = 0; i < o.conns; i++)
        if (gb_resp_connect_unix(&cs[i].c, o.sock) != 0) {
            fprintf(stderr, "cache_load: cannot connect to %s\n", o.sock);
            return 1;
        }
    long gets = 0, hits = 0, sets = 0, done = 0;
    uint64_t t0 = 0;
    while (done < o.warmup + o.requests) {
        if (t0 == 0 && done >= o.warmup)
            t0 = gb_bench_now_ns();
        for (int i = 0; i < o.conns; i++)
            if (send_gets(&cs[i], cum, &o, req, cap) != 0)
                return 1;
        for (int i = 0; i < o.conns; i++) {
            if (read_replies(&cs[i], o.pipeline, note_get) != 0 || send_sets(&cs[i], value, &o, req, cap) != 0)
                return 1;
        }
        for (int i = 0; i < o.conns; i++) {
            if (read_replies(&cs[i], cs[i].nmisses, NULL) != 0)
                return 1;
            if (done >= o.warmup) {
                gets += o.pipeline;
                hits += o.pipeline - cs[i].nmisses;
                sets += cs[i].nmisses;
            }
            done += o.pipeline;
        }
    }
    double secs = (double)(gb_bench_now_ns() - t0) / 1e9;
    printf("gets=%ld hits=%ld sets=%ld seconds=%.3f hit_rate=%.4f get_rate=%.0f req_rate=%.0f\n", gets, hits, sets,
           secs, gets ? (double)hits / (double)gets : 0.0, (double)gets / secs, (double)(gets + sets) / secs);
    for (int i = 0; i < o.conns; i++)
        gb_resp_close(&cs[i].c);
    free(cs);
    free(req);
    free(value);
    free(cum);
    return 0;
}
