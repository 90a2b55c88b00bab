/*
 * clock_gettime in nanoseconds, for the variants that read their clocks with
 * it (linux, posix; darwin has clock_gettime_nsec_np). Private to platform/.
 */
#ifndef GB_PLATFORM_CLOCK_NS_H
#define GB_PLATFORM_CLOCK_NS_H

#include <stdint.h>
#include <time.h>

static inline uint64_t gb__clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
