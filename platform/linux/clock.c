/* Linux clocks: CLOCK_MONOTONIC for the engine; the invariant TSC (x86-64) or
 * cntvct_el0 (arm64) as the benchmark cycle counter, calibrated against
 * CLOCK_MONOTONIC_RAW. */
#define _GNU_SOURCE
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

static uint64_t raw_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t gb_cycles_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return raw_ns();
#endif
}

double gb_cycles_ns_per_cycle(unsigned sample_ms)
{
    uint64_t ns0 = raw_ns(), c0 = gb_cycles_now();
    uint64_t target = ns0 + (uint64_t)sample_ms * 1000000u;
    uint64_t ns1;
    do {
        ns1 = raw_ns();
    } while (ns1 < target);
    uint64_t c1 = gb_cycles_now();
    if (c1 == c0)
        return 1.0;
    return (double)(ns1 - ns0) / (double)(c1 - c0);
}
