/*
 * ring_floor: the raw hardware floor of a shared-memory round trip on this
 * machine (two pinned threads, one 128-byte-isolated line), measured with a
 * spin that executes `pause` and with one that does not (floor.h); then the
 * ring's record protocol between the same two CPUs with an echo for a
 * server (ring_echo.h, 1 MiB rings as a slot's default): what the ring's
 * layout adds to the floor, before any server code runs.
 *
 *   build-release/ring_floor [--seconds S] [--csv]
 *   SERVER_CORE / CLIENT_CORE choose the two CPUs (default 0 and 1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floor.h"
#include "ring_echo.h"

/* One row: CSV (ROUNDTRIP,<protocol>,...) or a line headed by label. */
static void print_row(int csv, const char *protocol, const char *label, gb_hist *h)
{
    gb_lat_summary s = gb_hist_summary(h);
    if (csv)
        printf("ROUNDTRIP,%s,%.0f,%.0f,%.0f,%.0f,%llu\n", protocol, s.p50, s.p90, s.p99, s.min,
               (unsigned long long)s.samples);
    else
        printf("  %s p50 %.0f ns   p90 %.0f ns   p99 %.0f ns   min %.0f ns   (%llu round trips)\n", label, s.p50,
               s.p90, s.p99, s.min, (unsigned long long)s.samples);
}

int main(int argc, char **argv)
{
    double seconds = 3;
    int csv = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--csv"))
            csv = 1;
        else {
            fprintf(stderr, "usage: %s [--seconds S] [--csv]\n", argv[0]);
            return 2;
        }
    }
    int a = gb_bench_env_int("CLIENT_CORE", 1), b = gb_bench_env_int("SERVER_CORE", 0);
    /* Both ways of spinning (floor.h), half the time each. */
    static const char *const way[2] = {"pause", "nopause"};
    if (csv)
        printf("operation,protocol,p50_ns,p90_ns,p99_ns,min_ns,samples\n");
    else
        printf("Hardware floor: cache-line ping-pong between CPU %d and CPU %d, %.1f s\n", a, b, seconds);
    gb_floor *f = gb_bench_floor_start(b); /* before this thread leaves CPU b */
    gb_ring_echo *echo = gb_bench_ring_echo_start(b, 1u << 20); /* likewise; sleeps until its run */
    if (!echo) {
        fprintf(stderr, "ring_floor: cannot set up the ring echo\n");
        return 1;
    }
    gb_bench_pin(a, "floor ping thread");
    for (int spin = GB_FLOOR_SPIN_PAUSE; spin <= GB_FLOOR_SPIN_NOPAUSE; spin++) {
        gb_hist *h = gb_hist_new();
        gb_bench_floor_window(f, seconds / 2, (gb_floor_spin)spin, h);
        char protocol[32], label[32];
        snprintf(protocol, sizeof protocol, "floor-%s", way[spin]);
        snprintf(label, sizeof label, "spin with %-7s", way[spin]);
        print_row(csv, protocol, label, h);
        free(h);
    }
    gb_bench_floor_stop(f);
    gb_hist *h = gb_hist_new();
    gb_bench_ring_echo_run(echo, seconds / 2, h);
    gb_bench_ring_echo_stop(echo);
    print_row(csv, "ring-echo", "ring records, echo:", h);
    free(h);
    return 0;
}
