/* Linux park/wake: futex on a word in MAP_SHARED memory. No
 * FUTEX_PRIVATE_FLAG: private futexes are keyed by the address space and the
 * other process would never see our wake. Shared ones are keyed by the
 * backing object and offset, so each side may map it at any address. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "common/internal.h"
#include "park.h"

#define FUTEX_WAIT_ 0
#define FUTEX_WAKE_ 1

int gb_park_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns)
{
    uint64_t deadline;
    int rc = gb__park_enter(word, expected, timeout_ns, &deadline);
    if (rc != GB__PARK_WAIT)
        return rc;
    for (;;) {
        struct timespec ts, *tsp = NULL;
        if (deadline != GB__PARK_NO_DEADLINE) {
            uint64_t now = gb_clock_mono_ns();
            if (now >= deadline)
                return GB_ETIMEDOUT;
            uint64_t left = deadline - now;
            ts.tv_sec = (time_t)(left / 1000000000u);
            ts.tv_nsec = (long)(left % 1000000000u);
            tsp = &ts; /* FUTEX_WAIT takes a relative CLOCK_MONOTONIC timeout */
        }
        /* The kernel re-reads *word under its hash-bucket lock and sleeps only
         * if it still equals expected: a wake between our load and here is
         * not lost (it makes this return EAGAIN). */
        if (gb__sys.futex((void *)word, FUTEX_WAIT_, expected, tsp, NULL, 0) == 0)
            return 0;
        int e = errno;
        if (e == EAGAIN)
            return 0;
        if (e == ETIMEDOUT)
            return GB_ETIMEDOUT;
        if (e == EINTR) {
            if (atomic_load_explicit(word, memory_order_acquire) != expected)
                return 0;
            continue;
        }
        if (e == EFAULT || e == EINVAL)
            return gb__fail(GB_EINVAL, NULL, 0, "park: futex wait on %p: %s", (void *)word, strerror(e));
        return gb__fail(gb__errno_code(e), NULL, 0, "park: futex wait: %s", strerror(e));
    }
}

int gb_park_wake(_Atomic uint32_t *word, int count)
{
    int rc = gb__park_wake_check(word, count);
    if (rc < 0)
        return rc;
    long n = gb__sys.futex((void *)word, FUTEX_WAKE_, (uint32_t)count, NULL, NULL, 0);
    if (n < 0)
        return gb__fail(gb__errno_code(errno), NULL, 0, "park: futex wake on %p: %s", (void *)word,
                        strerror(errno));
    return (int)n;
}
