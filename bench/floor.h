/*
 * The hardware floor of a shared-memory round trip: two pinned threads
 * ping-ponging one 128-byte-isolated cache line. A request/response ring
 * cannot beat this; benchmarks report the ring as a multiple of it, measured
 * in the same run.
 */
#ifndef GB_BENCH_FLOOR_H
#define GB_BENCH_FLOOR_H

#include "bench_common.h"

/* Runs for about `seconds`; each round trip's latency goes into h. The
 * calling thread is pinned to cpu_a and a helper thread to cpu_b (-1: not
 * pinned). */
void gb_bench_floor(int cpu_a, int cpu_b, double seconds, gb_hist *h);

/* For measuring the floor repeatedly, interleaved with other work: the echo
 * thread is created (and pinned to cpu_b) once, while the caller's affinity
 * still allows cpu_b, and sleeps between windows. Each window runs on the
 * calling thread, which the caller has pinned itself. */
typedef struct gb_floor gb_floor;
gb_floor *gb_bench_floor_start(int cpu_b);
void gb_bench_floor_window(gb_floor *f, double seconds, gb_hist *h);
void gb_bench_floor_stop(gb_floor *f);

#endif
