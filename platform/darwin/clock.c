/* macOS clocks: clock_gettime_nsec_np for monotonic/wall time; the cycle
 * counter is mach_absolute_time (cntvct_el0 at 24 MHz on Apple Silicon),
 * converted with the timebase the kernel reports (mach_timebase_info), not
 * measured: the rate is architectural. */
#include "clock.h"

#include <mach/mach_time.h>
#include <time.h>

uint64_t gb_clock_mono_ns(void) { return clock_gettime_nsec_np(CLOCK_MONOTONIC_RAW); }

int64_t gb_clock_real_ms(void) { return (int64_t)(clock_gettime_nsec_np(CLOCK_REALTIME) / 1000000u); }

int64_t gb_clock_real_us(void) { return (int64_t)(clock_gettime_nsec_np(CLOCK_REALTIME) / 1000u); }

uint64_t gb_cycles_now(void) { return mach_absolute_time(); }

double gb_cycles_ns_per_cycle(unsigned sample_ms)
{
    (void)sample_ms;
    mach_timebase_info_data_t tb;
    if (mach_timebase_info(&tb) != KERN_SUCCESS || tb.denom == 0)
        return 1.0;
    return (double)tb.numer / (double)tb.denom;
}

const char *gb_cycles_source(void) { return "mach_absolute_time"; }
