/*
 * latency_shootout: synchronous round trips of PING, GET, SET, ZADD and HSET
 * over one path — a ring (the client library, SBE by default), the Unix
 * socket, or TCP loopback — against a server it starts. With redis-server as
 * the binary (uds/tcp) it measures Redis the same way.
 *
 *   build-release/latency_shootout <ring|uds|tcp> <server-binary> [--seconds S] [--proto sbe|resp] [--csv]
 *                                  [--ops PING,GET,...]
 *   SERVER_CORE / CLIENT_CORE choose the CPUs (NUMA runs: put them on different nodes).
 *   --ops: the operations to run, by name (bench_op_names: PING GET SET ZADD1
 *   ZADD10 HSET1 HSET10); default PING, GET, SET, ZADD1, HSET1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring_ops.h"

#define USAGE "usage: %s <ring|uds|tcp> <server-binary> [--seconds S] [--proto sbe|resp] [--csv] [--ops PING,GET,...]\n"

/* Parses --ops into ops[]; returns how many, or 0 on an unknown name. */
static size_t parse_ops(char *list, bench_op *ops)
{
    size_t n = 0;
    for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
        int k = 0;
        while (k < OP_COUNT && strcmp(bench_op_names[k], name) != 0)
            k++;
        if (k == OP_COUNT || n == OP_COUNT) {
            fprintf(stderr, "--ops: %s is not one of", name);
            for (int j = 0; j < OP_COUNT; j++)
                fprintf(stderr, " %s", bench_op_names[j]);
            fprintf(stderr, " (at most %d names)\n", OP_COUNT);
            return 0;
        }
        ops[n++] = (bench_op)k;
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, USAGE, argv[0]);
        return 2;
    }
    const char *path = argv[1], *server = argv[2];
    double seconds = 3;
    int csv = 0;
    gb_ring_proto proto = GB_RING_SBE;
    bench_op ops[OP_COUNT] = {OP_PING, OP_GET, OP_SET, OP_ZADD1, OP_HSET1};
    size_t nops = 5;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--csv"))
            csv = 1;
        else if (!strcmp(argv[i], "--proto") && i + 1 < argc)
            proto = !strcmp(argv[++i], "resp") ? GB_RING_RESP : GB_RING_SBE;
        else if (!strcmp(argv[i], "--ops") && i + 1 < argc) {
            if (!(nops = parse_ops(argv[++i], ops)))
                return 2;
        } else {
            fprintf(stderr, "unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    bool ring = !strcmp(path, "ring"), uds = !strcmp(path, "uds"), tcp = !strcmp(path, "tcp");
    if (!ring && !uds && !tcp) {
        fprintf(stderr, "path must be ring, uds or tcp\n");
        return 2;
    }
    int scpu = gb_bench_env_int("SERVER_CORE", 0), ccpu = gb_bench_env_int("CLIENT_CORE", 1);
    gb_bench_server srv;
    const char *extra[] = {"--ring-spin-us", "1000000", NULL};
    if (gb_bench_server_start(&srv, server, scpu, strstr(server, "redis") ? NULL : extra) != 0)
        return 1;
    if (ring && srv.is_redis) {
        fprintf(stderr, "redis-server has no rings: use uds or tcp\n");
        gb_bench_server_stop(&srv);
        return 2;
    }
    gb_bench_pin(ccpu, "client");
    gb_hist *h = gb_hist_new();
    gb_ring_client *rc = NULL;
    gb_resp_conn conn = {.fd = -1};
    int rcode = 0;
    if (ring) {
        char err[256];
        if (gb_ring_client_connect(srv.sock, proto, NULL, &rc, err, sizeof err) != 0 || bench_ring_prepare(rc) != 0) {
            fprintf(stderr, "ring: %s\n", rc ? gb_ring_client_error(rc) : err);
            rcode = 1;
        }
    } else if ((uds ? gb_resp_connect_unix(&conn, srv.sock) : gb_resp_connect_tcp(&conn, srv.port)) != 0 ||
               bench_sock_prepare(&conn) != 0) {
        fprintf(stderr, "cannot talk to the server over %s\n", path);
        rcode = 1;
    }
    const char *label = ring ? (proto == GB_RING_SBE ? "ring-sbe" : "ring-resp") : path;
    const char *who = srv.is_redis ? "redis" : "goblin";
    if (csv && !rcode)
        printf("operation,protocol,p50_ns,p90_ns,p99_ns,min_ns,samples\n");
    else if (!rcode)
        printf("%s over %s, server CPU %d, client CPU %d, %.1f s per op\n", who, label, scpu, ccpu, seconds);
    for (size_t k = 0; !rcode && k < nops; k++) {
        gb_hist_reset(h);
        int r = ring ? bench_ring_run(rc, ops[k], seconds, h) : bench_sock_run(&conn, ops[k], seconds, h);
        if (r != 0) {
            fprintf(stderr, "%s failed\n", bench_op_names[ops[k]]);
            rcode = 1;
            break;
        }
        gb_lat_summary s = gb_hist_summary(h);
        if (csv)
            printf("%s,%s%s%s,%.0f,%.0f,%.0f,%.0f,%llu\n", bench_op_names[ops[k]], label, srv.is_redis ? "-" : "",
                   srv.is_redis ? "redis" : "", s.p50, s.p90, s.p99, s.min, (unsigned long long)s.samples);
        else
            printf("  %-6s p50 %8.0f ns  p90 %8.0f  p99 %8.0f  min %6.0f  (%llu)\n", bench_op_names[ops[k]], s.p50,
                   s.p90, s.p99, s.min, (unsigned long long)s.samples);
    }
    if (rc)
        gb_ring_client_close(rc);
    if (conn.fd >= 0)
        gb_resp_close(&conn);
    gb_bench_server_stop(&srv);
    free(h);
    return rcode;
}
