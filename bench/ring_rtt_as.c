/*
 * ring_rtt_as: synchronous round trips of one operation over a ring claimed
 * on a running server as a given user, for bench/acl_overhead.py (the cost
 * of the ACL check on the ring's hot path).
 *
 *   build-release/ring_rtt_as SOCK sbe|resp PING|GET SECONDS      prints "<p50_ns> <samples>"
 *   build-release/ring_rtt_as SOCK sbe|resp prepare               writes the keys GET reads
 *
 * GB_BENCH_USER / GB_BENCH_PASSWORD: the user the claim is made as (default:
 * the default user, no AUTH). CLIENT_CORE: the CPU to pin to (the caller may
 * instead run it under taskset).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring_ops.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s SOCK sbe|resp PING|GET SECONDS | SOCK sbe|resp prepare\n", argv[0]);
        return 2;
    }
    gb_ring_proto proto = !strcmp(argv[2], "resp") ? GB_RING_RESP : GB_RING_SBE;
    bool prepare = !strcmp(argv[3], "prepare");
    bench_op op = OP_COUNT;
    for (int k = 0; k < OP_COUNT; k++)
        if (!strcmp(argv[3], bench_op_names[k]))
            op = (bench_op)k;
    if (!prepare && (op == OP_COUNT || argc < 5)) {
        fprintf(stderr, "unknown operation %s (or no SECONDS)\n", argv[3]);
        return 2;
    }
    int ccpu = gb_bench_env_int("CLIENT_CORE", -1);
    if (ccpu >= 0)
        gb_bench_pin(ccpu, "client");
    gb_ring_client_options opt = {0};
    opt.username = getenv("GB_BENCH_USER");
    opt.password = getenv("GB_BENCH_PASSWORD");
    gb_ring_client *rc;
    char err[256];
    if (gb_ring_client_connect(argv[1], proto, opt.password ? &opt : NULL, &rc, err, sizeof err) != 0) {
        fprintf(stderr, "ring: %s\n", err);
        return 1;
    }
    int rcode = 0;
    if (prepare) {
        if (bench_ring_prepare(rc) != 0) {
            fprintf(stderr, "prepare: %s\n", gb_ring_client_error(rc));
            rcode = 1;
        }
    } else {
        gb_hist *h = gb_hist_new();
        if (bench_ring_run(rc, op, atof(argv[4]), h) != 0) {
            fprintf(stderr, "%s: %s\n", argv[3], gb_ring_client_error(rc));
            rcode = 1;
        } else {
            printf("%llu %llu\n", (unsigned long long)gb_hist_quantile(h, 0.5), (unsigned long long)h->count);
        }
        free(h);
    }
    gb_ring_client_close(rc);
    return rcode;
}
