#define _POSIX_C_SOURCE 200809L
/*
 * sbe_vs_resp_ring: one goblin-core server exposing an SBE ring and a RESP
 * ring; synchronous round trips of PING, ZADD (1 and 10 members) and HSET (1
 * and 10 fields) on each, client and server pinned to separate CPUs, plus the
 * hardware floor measured in the same run.
 *
 * The run is split into rounds; in each, every row runs for seconds/rounds,
 * right after the floor is measured for half that. A virtual machine's vCPUs
 * can move between physical cores (sharing one core: a ~50 ns floor; on two:
 * ~350 ns) while the benchmark runs, so a floor measured once, before the
 * rows, may describe another placement than the rows had. Each row's
 * "x floor" is therefore the median over rounds of (row median / the median
 * of the floor window just before it). The floor window is measured both
 * ways (bench/floor.h: a spin that executes `pause`, as a polite spin does,
 * and one that does not, as the server's hot spin) and the lower median,
 * the stricter floor, is the one each row is divided by.
 *
 *   build-release/sbe_vs_resp_ring [server-binary] [--seconds S] [--rounds R] [--csv] [--cdf FILE]
 *   SERVER_CORE (default 0) and CLIENT_CORE (default 1) choose the CPUs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "floor.h"
#include "ring_ops.h"

static const bench_op ops[] = {OP_PING, OP_ZADD1, OP_ZADD10, OP_HSET1, OP_HSET10};
#define NOPS (sizeof ops / sizeof ops[0])
#define MAX_ROUNDS 100
/* The server's spin budget in this benchmark: long enough that it never
 * parks inside a row, short enough that it is asleep (off the server CPU)
 * when the floor's echo thread runs there. */
#define SERVER_SPIN_US "2000"
/* A floor median below this means the two CPUs are SMT siblings of one
 * physical core (one L1: ~20-70 ns), not two cores (~100 ns and up, ~350 ns
 * between this VM's cores). A hypervisor can switch between the two while we
 * run, so rows are also reported per placement, by the floor just before
 * them. */
#define SHARED_CORE_FLOOR_NS 90.0

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
    int rounds = 10, csv = 0;
    const char *cdf = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv"))
            csv = 1;
        else if (!strcmp(argv[i], "--cdf") && i + 1 < argc)
            cdf = argv[++i];
        else if (argv[i][0] != '-')
            server = argv[i];
        else {
            fprintf(stderr, "usage: %s [server-binary] [--seconds S] [--rounds R] [--csv] [--cdf FILE]\n", argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || !(seconds > 0)) {
        fprintf(stderr, "--rounds must be 1..%d and --seconds positive\n", MAX_ROUNDS);
        return 2;
    }
    double window = seconds / rounds;
    int scpu = gb_bench_env_int("SERVER_CORE", 0), ccpu = gb_bench_env_int("CLIENT_CORE", 1);
    gb_bench_server srv;
    const char *extra[] = {"--ring-spin-us", SERVER_SPIN_US, NULL};
    if (gb_bench_server_start(&srv, server, scpu, extra) != 0)
        return 1;
    if (cdf)
        unlink(cdf);
    /* The floor's echo thread is made while this thread may still run on
     * the server's CPU, so that it can be pinned there. */
    gb_floor *fl = gb_bench_floor_start(scpu);
    gb_bench_pin(ccpu, "client");
    gb_ring_client *sbe = claim(srv.sock, GB_RING_SBE), *resp = claim(srv.sock, GB_RING_RESP);
    if (!sbe || !resp || bench_ring_prepare(sbe) != 0) {
        gb_bench_server_stop(&srv);
        return 1;
    }

    gb_hist *win = gb_hist_new(), *floor_all = gb_hist_new(), *all[2][NOPS];
    for (int p = 0; p < 2; p++)
        for (size_t k = 0; k < NOPS; k++)
            all[p][k] = gb_hist_new();
    static double ratio[2][NOPS][MAX_ROUNDS], floor_round[MAX_ROUNDS * 2 * NOPS];
    static double floor_way[2][MAX_ROUNDS * 2 * NOPS]; /* each way's median, per window (floor.h) */
    static bool shared[2][NOPS][MAX_ROUNDS];
    int nfloor = 0;
    for (int r = 0; r < rounds; r++) {
        for (size_t k = 0; k < NOPS; k++) {
            for (int p = 0; p < 2; p++) {
                /* The floor right before the row, with the server parked (its
                 * spin budget ran out) so the echo thread has its CPU. */
                gb_bench_sleep_ms(20);
                gb_hist_reset(win);
                double ways[2];
                double f = gb_bench_floor_stricter(fl, window / 2, win, ways);
                floor_way[GB_FLOOR_SPIN_PAUSE][nfloor] = ways[GB_FLOOR_SPIN_PAUSE];
                floor_way[GB_FLOOR_SPIN_NOPAUSE][nfloor] = ways[GB_FLOOR_SPIN_NOPAUSE];
                floor_round[nfloor++] = f;
                gb_hist_merge(floor_all, win);
                gb_hist_reset(win);
                if (bench_ring_run(p == 0 ? sbe : resp, ops[k], window, win) != 0) {
                    fprintf(stderr, "%s over %s failed: %s\n", bench_op_names[ops[k]], p ? "RESP" : "SBE",
                            gb_ring_client_error(p ? resp : sbe));
                    gb_bench_server_stop(&srv);
                    return 1;
                }
                ratio[p][k][r] = (double)gb_hist_quantile(win, 0.5) / f;
                shared[p][k][r] = f < SHARED_CORE_FLOOR_NS;
                gb_hist_merge(all[p][k], win);
            }
        }
    }
    gb_bench_floor_stop(fl);
    gb_ring_client_close(sbe);
    gb_ring_client_close(resp);
    gb_bench_server_stop(&srv);

    gb_lat_summary floor = gb_hist_summary(floor_all), res[2][NOPS];
    if (cdf)
        gb_hist_write_cdf(floor_all, cdf, "floor");
    for (size_t k = 0; k < NOPS; k++)
        for (int p = 0; p < 2; p++) {
            res[p][k] = gb_hist_summary(all[p][k]);
            if (cdf) {
                char label[64];
                snprintf(label, sizeof label, "%s %s", bench_op_names[ops[k]], p ? "resp" : "sbe");
                gb_hist_write_cdf(all[p][k], cdf, label);
            }
            free(all[p][k]);
        }
    free(win);
    free(floor_all);

    if (csv) {
        printf("operation,protocol,p50_ns,p90_ns,p99_ns,min_ns,samples\n");
        printf("ROUNDTRIP,floor,%.0f,%.0f,%.0f,%.0f,%llu\n", floor.p50, floor.p90, floor.p99, floor.min,
               (unsigned long long)floor.samples);
        for (size_t k = 0; k < NOPS; k++)
            for (int p = 0; p < 2; p++) {
                gb_lat_summary *s = &res[p][k];
                printf("%s,%s,%.0f,%.0f,%.0f,%.0f,%llu\n", bench_op_names[ops[k]], p ? "resp" : "sbe", s->p50, s->p90,
                       s->p99, s->min, (unsigned long long)s->samples);
            }
        return 0;
    }
    double fmin = floor_round[0], fmax = floor_round[0];
    for (int r = 1; r < nfloor; r++) {
        fmin = floor_round[r] < fmin ? floor_round[r] : fmin;
        fmax = floor_round[r] > fmax ? floor_round[r] : fmax;
    }
    printf("Ring round trips, server on CPU %d, client on CPU %d, %.1f s per row in %d interleaved rounds\n", scpu, ccpu,
           seconds, rounds);
    printf("hardware floor: %.0f ns (p99 %.0f ns); floor medians before each row %.0f..%.0f ns\n", floor.p50, floor.p99, fmin,
           fmax);
    int lower_nopause = 0;
    for (int r = 0; r < nfloor; r++)
        lower_nopause += floor_way[GB_FLOOR_SPIN_NOPAUSE][r] < floor_way[GB_FLOOR_SPIN_PAUSE][r];
    printf("floor spinning with pause: median %.0f ns; without: %.0f ns (the lower of the two, each window: without "
           "pause in %d of %d)\n",
           gb_bench_median(floor_way[GB_FLOOR_SPIN_PAUSE], nfloor), gb_bench_median(floor_way[GB_FLOOR_SPIN_NOPAUSE], nfloor),
           lower_nopause, nfloor);
    printf("x floor = median over rounds of (row median / the stricter floor measured just before it)\n\n");
    printf("%-8s %12s %12s %10s %10s %9s\n", "op", "SBE p50", "RESP p50", "SBE/floor", "RESP/floor", "RESP/SBE");
    for (size_t k = 0; k < NOPS; k++) {
        gb_lat_summary *a = &res[0][k], *b = &res[1][k];
        printf("%-8s %7.0f ns [%4.0f] %7.0f ns [%4.0f] %9.2fx %9.2fx %8.2fx\n", bench_op_names[ops[k]], a->p50, a->p99,
               b->p50, b->p99, gb_bench_median(ratio[0][k], rounds), gb_bench_median(ratio[1][k], rounds), b->p50 / a->p50);
    }
    /* The same ratios per placement (rounds with no row of a kind: "-"). */
    printf("\nx floor by placement (floor before the row < %.0f ns: the CPUs share one physical core)\n",
           SHARED_CORE_FLOOR_NS);
    printf("%-8s %18s %18s\n", "op", "SBE sep/shared", "RESP sep/shared");
    for (size_t k = 0; k < NOPS; k++) {
        printf("%-8s", bench_op_names[ops[k]]);
        for (int p = 0; p < 2; p++) {
            double v[2][MAX_ROUNDS];
            int n[2] = {0, 0};
            for (int r = 0; r < rounds; r++) {
                int g = shared[p][k][r];
                v[g][n[g]++] = ratio[p][k][r];
            }
            char cell[2][16];
            for (int g = 0; g < 2; g++) {
                if (n[g])
                    snprintf(cell[g], sizeof cell[g], "%.2fx(%d)", gb_bench_median(v[g], n[g]), n[g]);
                else
                    snprintf(cell[g], sizeof cell[g], "-");
            }
            printf(" %9s/%-9s", cell[0], cell[1]);
        }
        printf("\n");
    }
    return 0;
}
