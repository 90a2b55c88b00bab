/* Linux clocks: CLOCK_MONOTONIC for the engine; the cycle counter is the
 * invariant TSC on x86-64 (when CPUID says it is invariant), cntvct_el0 on
 * arm64, and CLOCK_MONOTONIC_RAW otherwise. */
#define _GNU_SOURCE
#include "clock.h"

#include <stdatomic.h>
#include <stdbool.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "common/clock_ns.h"

uint64_t gb_clock_mono_ns(void) { return gb__clock_ns(CLOCK_MONOTONIC); }

int64_t gb_clock_real_ms(void) { return (int64_t)(gb__clock_ns(CLOCK_REALTIME) / 1000000u); }

int64_t gb_clock_real_us(void) { return (int64_t)(gb__clock_ns(CLOCK_REALTIME) / 1000u); }

/* The cycle counter: one block per architecture, each defining
 * gb_cycles_now, gb_cycles_source and gb_cycles_ns_per_cycle. */
#if defined(__x86_64__) || defined(__i386__)
static uint64_t raw_ns(void) { return gb__clock_ns(CLOCK_MONOTONIC_RAW); }

/* 0 = not checked yet, 1 = invariant TSC, 2 = no (use raw_ns). A TSC that
 * is not invariant changes rate with P-states and stops in deep C-states,
 * so cycles would not convert to time. */
static _Atomic int tsc_state;

static bool tsc_invariant(void)
{
    int s = atomic_load_explicit(&tsc_state, memory_order_relaxed);
    if (s == 0) {
        unsigned a, b, c, d;
        bool ok = (unsigned)__get_cpuid_max(0x80000000u, NULL) >= 0x80000007u && __get_cpuid(0x80000007u, &a, &b, &c, &d) &&
                  (d & (1u << 8)); /* CPUID.80000007H:EDX[8] = invariant TSC */
        s = ok ? 1 : 2;
        atomic_store_explicit(&tsc_state, s, memory_order_relaxed);
    }
    return s == 1;
}

static uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

uint64_t gb_cycles_now(void) { return tsc_invariant() ? rdtsc() : raw_ns(); }

const char *gb_cycles_source(void) { return tsc_invariant() ? "tsc" : "clock_gettime"; }

/* The TSC's rate is not architectural: measure it against the raw clock. */
double gb_cycles_ns_per_cycle(unsigned sample_ms)
{
    if (!tsc_invariant())
        return 1.0; /* the fallback counter is nanoseconds already */
    if (sample_ms == 0)
        sample_ms = 1;
    uint64_t ns0 = raw_ns(), c0 = gb_cycles_now();
    uint64_t target = ns0 + (uint64_t)sample_ms * 1000000u;
    uint64_t ns1;
    do {
        ns1 = raw_ns();
    } while (ns1 < target);
    uint64_t c1 = gb_cycles_now();
    if (c1 <= c0)
        return 1.0;
    return (double)(ns1 - ns0) / (double)(c1 - c0);
}

#elif defined(__aarch64__)
uint64_t gb_cycles_now(void)
{
    uint64_t v;
    /* isb: keep the read from being hoisted above earlier instructions. */
    __asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
    return v;
}

const char *gb_cycles_source(void) { return "cntvct_el0"; }

/* The generic timer says its own frequency; no need to measure. */
double gb_cycles_ns_per_cycle(unsigned sample_ms)
{
    (void)sample_ms;
    uint64_t hz;
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(hz));
    return hz ? 1e9 / (double)hz : 1.0;
}

#else
uint64_t gb_cycles_now(void) { return gb__clock_ns(CLOCK_MONOTONIC_RAW); }

const char *gb_cycles_source(void) { return "clock_gettime"; }

double gb_cycles_ns_per_cycle(unsigned sample_ms)
{
    (void)sample_ms;
    return 1.0; /* the counter is nanoseconds */
}
#endif
