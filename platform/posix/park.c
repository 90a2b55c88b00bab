/* Generic POSIX park/wake: there is no portable way to sleep on a memory
 * word, so the waiter polls it - a few sched_yield()s, then nanosleep with
 * exponential backoff from 1 us up to GB_PARK_POLL_MAX_NS (1 ms). Cost: a
 * parked side notices a change up to ~1 ms (plus timer slack) late, and an
 * idle waiter wakes ~1000 times a second. Waking is a no-op. Correct across
 * processes, because the word is all the state there is. */
#define _POSIX_C_SOURCE 200809L
#define _DARWIN_C_SOURCE /* when built on macOS: keep _SC_NPROCESSORS_ONLN, SO_NOSIGPIPE visible */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "clock.h"
#include "common/internal.h"
#include "park.h"

#define YIELDS 16

int gb_park_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns)
{
    uint64_t deadline;
    int rc = gb__park_enter(word, expected, timeout_ns, &deadline);
    if (rc != GB__PARK_WAIT)
        return rc;
    uint64_t nap = 1000; /* ns */
    for (unsigned i = 0;; i++) {
        if (atomic_load_explicit(word, memory_order_acquire) != expected)
            return 0;
        uint64_t now = gb_clock_mono_ns();
        if (now >= deadline) /* the word may have changed since the look above */
            return atomic_load_explicit(word, memory_order_acquire) != expected ? 0 : GB_ETIMEDOUT;
        if (i < YIELDS) {
            sched_yield();
            continue;
        }
        uint64_t left = deadline - now;
        uint64_t d = nap < left ? nap : left;
        struct timespec ts = {.tv_sec = (time_t)(d / 1000000000u), .tv_nsec = (long)(d % 1000000000u)};
        nanosleep(&ts, NULL); /* EINTR: just look again */
        if (nap < GB_PARK_POLL_MAX_NS)
            nap = nap * 2 > GB_PARK_POLL_MAX_NS ? GB_PARK_POLL_MAX_NS : nap * 2;
    }
}

int gb_park_wake(_Atomic uint32_t *word, int count)
{
    int rc = gb__park_wake_check(word, count);
    return rc < 0 ? rc : 0; /* pollers see the store by themselves */
}
