/*
 * sbe_vs_resp_ring: one goblin-core server exposing an SBE ring and a RESP
 * ring; synchronous round trips of PING, ZADD (1 and 10 members) and HSET (1
 * and 10 fields) on each, client and server pinned to separate CPUs, plus the
 * hardware floor measured in the same run. Each median is also printed as a
 * multiple of the floor's.
 *
 *   build-release/sbe_vs_resp_ring [server-binary] [--seconds S] [--csv] [--cdf FILE]
 *   SERVER_CORE (default 0) and CLIENT_CORE (default 1) choose the CPUs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "floor.h"
#include "ring_ops.h"

static const bench_op ops[] = {OP_PING, OP_ZADD1, OP_ZADD10, OP_HSET1, OP_HSET10};

static gb_ring_client *claim(const char *sock, gb_ring_proto proto)
{
    gb_ring_client *rc;
    char err[256];
    if (gb_ring_client_connect(sock, proto, NULL, &rc, err, sizeof err) != 0) {
        fprintf(stderr, "cannot claim a %s ring: %s\n", proto == GB_RING_SBE ? "SBE" : "RESP", err);
        return NULL;
    }
    return rc;
}

int main(int argc, char **argv)
{
    const char *server = "build-release/goblin-core";
    double seconds = 3;
    int csv = 0;
    const char *cdf = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--csv"))
            csv = 1;
        else if (!strcmp(argv[i], "--cdf") && i + 1 < argc)
            cdf = argv[++i];
        else if (argv[i][0] != '-')
            server = argv[i];
        else {
            fprintf(stderr, "usage: %s [server-binary] [--seconds S] [--csv] [--cdf FILE]\n", argv[0]);
            return 2;
        }
    }
    int scpu = gb_bench_env_int("SERVER_CORE", 0), ccpu = gb_bench_env_int("CLIENT_CORE", 1);
    gb_bench_server srv;
    const char *extra[] = {"--ring-spin-us", "1000000", NULL};
    if (gb_bench_server_start(&srv, server, scpu, extra) != 0)
        return 1;
    if (cdf)
        unlink(cdf);
    /* The floor first, while this thread is unpinned: its helper thread
     * inherits our affinity and must still be able to move to the server's
     * CPU (the server is idle meanwhile). */
    gb_hist *h = gb_hist_new();
    gb_bench_floor(ccpu, scpu < 0 ? -1 : scpu, seconds, h);
    gb_lat_summary floor = gb_hist_summary(h);
    if (cdf)
        gb_hist_write_cdf(h, cdf, "floor");
    gb_bench_pin(ccpu, "client");
    gb_ring_client *sbe = claim(srv.sock, GB_RING_SBE), *resp = claim(srv.sock, GB_RING_RESP);
    if (!sbe || !resp || bench_ring_prepare(sbe) != 0) {
        gb_bench_server_stop(&srv);
        return 1;
    }

    gb_lat_summary res[2][sizeof ops / sizeof ops[0]];
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        for (int p = 0; p < 2; p++) {
            gb_hist_reset(h);
            if (bench_ring_run(p == 0 ? sbe : resp, ops[k], seconds, h) != 0) {
                fprintf(stderr, "%s over %s failed: %s\n", bench_op_names[ops[k]], p ? "RESP" : "SBE",
                        gb_ring_client_error(p ? resp : sbe));
                gb_bench_server_stop(&srv);
                return 1;
            }
            res[p][k] = gb_hist_summary(h);
            if (cdf) {
                char label[64];
                snprintf(label, sizeof label, "%s %s", bench_op_names[ops[k]], p ? "resp" : "sbe");
                gb_hist_write_cdf(h, cdf, label);
            }
        }
    }
    gb_ring_client_close(sbe);
    gb_ring_client_close(resp);
    gb_bench_server_stop(&srv);

    if (csv) {
        printf("operation,protocol,p50_ns,p90_ns,p99_ns,min_ns,samples\n");
        printf("ROUNDTRIP,floor,%.0f,%.0f,%.0f,%.0f,%llu\n", floor.p50, floor.p90, floor.p99, floor.min,
               (unsigned long long)floor.samples);
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
            for (int p = 0; p < 2; p++) {
                gb_lat_summary *s = &res[p][k];
                printf("%s,%s,%.0f,%.0f,%.0f,%.0f,%llu\n", bench_op_names[ops[k]], p ? "resp" : "sbe", s->p50, s->p90,
                       s->p99, s->min, (unsigned long long)s->samples);
            }
        return 0;
    }
    printf("Ring round trips, server on CPU %d, client on CPU %d, %.1f s per row (medians; p99 in brackets)\n", scpu,
           ccpu, seconds);
    printf("hardware floor: %.0f ns (p99 %.0f ns)\n\n", floor.p50, floor.p99);
    printf("%-8s %12s %12s %10s %10s %9s\n", "op", "SBE p50", "RESP p50", "SBE/floor", "RESP/floor", "RESP/SBE");
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        gb_lat_summary *a = &res[0][k], *b = &res[1][k];
        printf("%-8s %7.0f ns [%4.0f] %7.0f ns [%4.0f] %9.2fx %9.2fx %8.2fx\n", bench_op_names[ops[k]], a->p50, a->p99,
               b->p50, b->p99, a->p50 / floor.p50, b->p50 / floor.p50, b->p50 / a->p50);
    }
    free(h);
    return 0;
}
