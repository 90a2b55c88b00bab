/* Generic POSIX clocks: clock_gettime only; the "cycle counter" is the
 * monotonic clock itself, counted in nanoseconds (so 1 ns per cycle) but
 * stepping at the clock's resolution: 1 ns on Linux, 1 us on macOS, which
 * the benchmarks' ns figures cannot be finer than. */
#define _POSIX_C_SOURCE 200809L
#define _DARWIN_C_SOURCE /* when built on macOS: keep _SC_NPROCESSORS_ONLN, SO_NOSIGPIPE visible */
#include "clock.h"

#include "common/clock_ns.h"

uint64_t gb_clock_mono_ns(void) { return gb__clock_ns(CLOCK_MONOTONIC); }

int64_t gb_clock_real_ms(void) { return (int64_t)(gb__clock_ns(CLOCK_REALTIME) / 1000000u); }

int64_t gb_clock_real_us(void) { return (int64_t)(gb__clock_ns(CLOCK_REALTIME) / 1000u); }

uint64_t gb_cycles_now(void) { return gb_clock_mono_ns(); }

double gb_cycles_ns_per_cycle(unsigned sample_ms)
{
    (void)sample_ms;
    return 1.0;
}

const char *gb_cycles_source(void) { return "clock_gettime"; }
