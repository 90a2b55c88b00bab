/*
 * The hardware floor of a shared-memory round trip: two pinned threads
 * ping-ponging one 128-byte-isolated cache line. A request/response ring
 * cannot beat this; benchmarks report the ring as a multiple of it, measured
 * in the same run.
 */
#ifndef GB_BENCH_FLOOR_H
#define GB_BENCH_FLOOR_H

#include "bench_common.h"

/* How the two threads wait for the line. The server's hot spin runs without
 * `pause` (transport/ring/ring_server.c, HOT_PASSES), which hands a line
 * over sooner on some CPUs than a spin that pauses; a ring's latency is
 * judged against the lower (stricter) of the two floors. */
typedef enum {
    GB_FLOOR_SPIN_PAUSE,   /* gb_cpu_relax() between polls, as a polite spin does */
    GB_FLOOR_SPIN_NOPAUSE, /* back-to-back polls, as the server's hot spin */
} gb_floor_spin;

/* The floor, measured repeatedly and interleaved with other work: the echo
 * thread is created (and pinned to cpu_b) once, while the caller's affinity
 * still allows cpu_b, and sleeps between windows. Each window runs on the
 * calling thread, which the caller has pinned itself. */
typedef struct gb_floor gb_floor;
gb_floor *gb_bench_floor_start(int cpu_b);
void gb_bench_floor_window(gb_floor *f, double seconds, gb_floor_spin spin, gb_hist *h);
void gb_bench_floor_stop(gb_floor *f);

/* The floor a ring is judged against: a window of seconds/2 each way (the
 * pausing spin first) and the lower of the two medians, which it returns.
 * h gets that window's round trips; medians_out (NULL: not wanted) each
 * way's median, indexed by gb_floor_spin. */
double gb_bench_floor_stricter(gb_floor *f, double seconds, gb_hist *h, double *medians_out);

#endif
