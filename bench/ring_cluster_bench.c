/*
 * ring_cluster_bench: GET/SET round-trip latency through gb_ring_cluster
 * (goblin/ring_cluster.h) against a plain gb_ring_client to the same node,
 * one synchronous call at a time (bench/ring_cluster_compare.py drives it).
 *
 *   ring_cluster_bench cluster SEED sbe|resp TAG N   gb_ring_cluster, keys "{TAG}:<i>"
 *   ring_cluster_bench direct SOCK sbe|resp TAG N    gb_ring_client on SOCK, same keys
 *
 * Prints "set <p50_ns> <p99_ns> get <p50_ns> <p99_ns>". CLIENT_CORE pins it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "goblin/ring_client.h"
#include "goblin/ring_cluster.h"

typedef struct target {
    gb_ring_cluster *cl;
    gb_ring_client *rc;
} target;

static int do_set(target *t, const char *k, size_t kl, const char *v, size_t vl)
{
    return t->cl ? gb_ring_cluster_set(t->cl, k, kl, v, vl, 0) : gb_ring_set(t->rc, k, kl, v, vl, 0);
}

static int do_get(target *t, const char *k, size_t kl, char *buf, size_t cap, int64_t *len)
{
    return t->cl ? gb_ring_cluster_get(t->cl, k, kl, buf, cap, len) : gb_ring_get(t->rc, k, kl, buf, cap, len);
}

static const char *error_of(const target *t)
{
    return t->cl ? gb_ring_cluster_error(t->cl) : gb_ring_client_error(t->rc);
}

/* N SETs then N GETs of keys {TAG}:0..N-1 (16-byte values), each timed. */
static int run(target *t, const char *tag, long n, gb_hist *set_h, gb_hist *get_h)
{
    char key[96], buf[64];
    const char *val = "0123456789abcdef";
    int64_t len;
    for (long i = 0; i < n; i++) {
        int kl = snprintf(key, sizeof key, "{%s}:%ld", tag, i);
        uint64_t t0 = gb_bench_now_ns();
        if (do_set(t, key, (size_t)kl, val, 16) != 0)
            return fprintf(stderr, "SET: %s\n", error_of(t)), 1;
        if (set_h)
            gb_hist_add(set_h, gb_bench_now_ns() - t0);
    }
    for (long i = 0; i < n; i++) {
        int kl = snprintf(key, sizeof key, "{%s}:%ld", tag, i);
        uint64_t t0 = gb_bench_now_ns();
        if (do_get(t, key, (size_t)kl, buf, sizeof buf, &len) != 0 || len != 16)
            return fprintf(stderr, "GET: %s\n", error_of(t)), 1;
        if (get_h)
            gb_hist_add(get_h, gb_bench_now_ns() - t0);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: ring_cluster_bench cluster|direct SEED|SOCK sbe|resp TAG N\n");
        return 2;
    }
    gb_bench_pin(gb_bench_env_int("CLIENT_CORE", -1), "client");
    gb_ring_proto proto = strcmp(argv[3], "resp") == 0 ? GB_RING_RESP : GB_RING_SBE;
    target t = {0};
    char err[256];
    int rv = strcmp(argv[1], "cluster") == 0 ? gb_ring_cluster_connect(argv[2], proto, NULL, &t.cl, err, sizeof err)
                                             : gb_ring_client_connect(argv[2], proto, NULL, &t.rc, err, sizeof err);
    if (rv != 0) {
        fprintf(stderr, "connect: %s\n", err);
        return 1;
    }
    long n = atol(argv[5]);
    gb_hist *set_h = gb_hist_new(), *get_h = gb_hist_new();
    rv = run(&t, argv[4], n / 10 + 1, NULL, NULL) || run(&t, argv[4], n, set_h, get_h);
    if (rv == 0) {
        gb_lat_summary s = gb_hist_summary(set_h), g = gb_hist_summary(get_h);
        printf("set %.0f %.0f get %.0f %.0f\n", s.p50, s.p99, g.p50, g.p99);
    }
    gb_ring_cluster_close(t.cl);
    gb_ring_client_close(t.rc);
    free(set_h);
    free(get_h);
    return rv;
}
