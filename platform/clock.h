/*
 * Clocks: monotonic and wall time for the engine, a calibrated cycle counter
 * for the benchmarks.
 *
 *   linux/darwin/posix each implement gb_clock_mono_ns and gb_clock_real_ms.
 *   The cycle counter is an architecture matter (rdtsc, cntvct_el0), with a
 *   clock_gettime fallback; gb_cycles_ns_per_cycle() gives its real rate
 *   (measured against the monotonic clock on x86, read from the counter's
 *   frequency register or timebase elsewhere) so benchmarks report
 *   nanoseconds.
 */
#ifndef GB_PLATFORM_CLOCK_H
#define GB_PLATFORM_CLOCK_H

#include <stdint.h>

/* Monotonic nanoseconds (CLOCK_MONOTONIC / mach_continuous_time). */
uint64_t gb_clock_mono_ns(void);

/* Monotonic milliseconds: what the engine uses for timeouts and idle times. */
static inline uint64_t gb_clock_mono_ms(void) { return gb_clock_mono_ns() / 1000000u; }

/* Wall-clock time in milliseconds since the Unix epoch (key expiry, TIME). */
int64_t gb_clock_real_ms(void);

/* Wall-clock time in microseconds since the Unix epoch (TIME). */
int64_t gb_clock_real_us(void);

/* Raw cycle-counter read. Never goes backwards on one core; on x86 this is the
 * invariant TSC, on arm64 cntvct_el0; elsewhere gb_clock_mono_ns(). */
uint64_t gb_cycles_now(void);

/* Measures the cycle counter's rate against the monotonic clock over about
 * `sample_ms` milliseconds and returns nanoseconds per cycle (e.g. 0.333 on a
 * 3 GHz TSC, 41.67 on Apple's 24 MHz counter). */
double gb_cycles_ns_per_cycle(unsigned sample_ms);

/* What gb_cycles_now() reads: "tsc", "cntvct_el0", "mach_absolute_time" or
 * "clock_gettime" (x86 without an invariant TSC, other architectures, posix).
 * Benchmarks print it beside their numbers. */
const char *gb_cycles_source(void);

#endif
