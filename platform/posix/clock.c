/* Generic POSIX clocks: clock_gettime only; the "cycle counter" is the
 * monotonic clock itself (1 ns per tick). */
#define _POSIX_C_SOURCE 200809L
#define _DARWIN_C_SOURCE /* when built on macOS: keep _SC_NPROCESSORS_ONLN, SO_NOSIGPIPE visible */
#include "clock.h"

#include <time.h>

uint64_t gb_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t gb_clock_real_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t gb_clock_real_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

uint64_t gb_cycles_now(void) { return gb_clock_mono_ns(); }

double gb_cycles_ns_per_cycle(unsigned sample_ms)
{
    (void)sample_ms;
    return 1.0;
}

const char *gb_cycles_source(void) { return "clock_gettime"; }
