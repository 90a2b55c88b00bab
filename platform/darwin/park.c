/* macOS park/wake across processes. macOS 14.4+ has a public API,
 * os_sync_wait_on_address with the _SHARED flags; before it, the same
 * kernel primitive is reachable only as __ulock_wait/__ulock_wake with
 * UL_COMPARE_AND_WAIT_SHARED (private, stable since 10.12, what libc++ and
 * Rust use). We pick at run time with __builtin_available, and compile the
 * os_sync path only when the SDK has its header (Xcode 15.3+). */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "common/internal.h"
#include "park.h"

#if __has_include(<os/os_sync_wait_on_address.h>)
#include <os/os_sync_wait_on_address.h>
#define HAVE_OS_SYNC 1
#else
#define HAVE_OS_SYNC 0
#endif

/* Not in any public header; declared as in xnu's bsd/sys/ulock.h. */
extern int __ulock_wait(uint32_t operation, void *addr, uint64_t value, uint32_t timeout_us);
extern int __ulock_wake(uint32_t operation, void *addr, uint64_t wake_value);
#define UL_COMPARE_AND_WAIT_SHARED 3
#define ULF_WAKE_ALL 0x00000100u
#define ULF_NO_ERRNO 0x01000000u /* return -errno instead of setting errno */

enum { WOKE = 0, TIMED_OUT = 1, AGAIN = 2 };

/* ENOMEM from a wait: the kernel could not allocate its wait-queue entry
 * just now (memory pressure). Transient, not a reason to fail the caller's
 * wait: back off 50 us and wait again (the caller's deadline still ends it). */
static int again_after_enomem(void)
{
    struct timespec ts = {0, 50 * 1000};
    nanosleep(&ts, NULL);
    return AGAIN;
}

/* One kernel wait of at most left_ns (0: no limit). */
static int wait_once(_Atomic uint32_t *word, uint32_t expected, uint64_t left_ns)
{
#if HAVE_OS_SYNC
    if (__builtin_available(macOS 14.4, *)) {
        /* _with_timeout takes a relative timeout in nanoseconds and rejects
         * 0, which is why "no limit" uses the plain call. */
        int r = left_ns ? os_sync_wait_on_address_with_timeout((void *)word, expected, sizeof(uint32_t),
                                                               OS_SYNC_WAIT_ON_ADDRESS_SHARED,
                                                               OS_CLOCK_MACH_ABSOLUTE_TIME, left_ns)
                        : os_sync_wait_on_address((void *)word, expected, sizeof(uint32_t),
                                                  OS_SYNC_WAIT_ON_ADDRESS_SHARED);
        if (r >= 0)
            return WOKE;
        if (errno == ETIMEDOUT)
            return TIMED_OUT;
        if (errno == EINTR || errno == EFAULT)
            return AGAIN;
        if (errno == ENOMEM)
            return again_after_enomem();
        return gb__fail(gb__errno_code(errno), NULL, 0, "park: os_sync_wait_on_address: %s", strerror(errno));
    }
#endif
    uint32_t us = 0; /* 0 = no limit for __ulock_wait */
    if (left_ns) {
        uint64_t u = (left_ns + 999) / 1000;
        us = u > UINT32_MAX ? UINT32_MAX : (uint32_t)u; /* the loop waits again for the rest */
    }
    int r = __ulock_wait(UL_COMPARE_AND_WAIT_SHARED | ULF_NO_ERRNO, (void *)word, expected, us);
    if (r >= 0)
        return WOKE;
    if (r == -ETIMEDOUT)
        return TIMED_OUT;
    if (r == -EINTR || r == -EFAULT)
        return AGAIN;
    if (r == -ENOMEM)
        return again_after_enomem();
    return gb__fail(gb__errno_code(-r), NULL, 0, "park: __ulock_wait: %s", strerror(-r));
}

int gb_park_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns)
{
    uint64_t deadline;
    int rc = gb__park_enter(word, expected, timeout_ns, &deadline);
    if (rc != GB__PARK_WAIT)
        return rc;
    for (;;) {
        uint64_t left = 0; /* 0: no limit */
        if (deadline != GB__PARK_NO_DEADLINE) {
            uint64_t now = gb_clock_mono_ns();
            if (now >= deadline)
                return GB_ETIMEDOUT;
            left = deadline - now;
        }
        /* The kernel compares *word with expected before sleeping, so a wake
         * that raced with our load is not lost. */
        int r = wait_once(word, expected, left);
        if (r < 0)
            return r;
        if (r == WOKE)
            return 0;
        if (atomic_load_explicit(word, memory_order_acquire) != expected)
            return 0;
        /* TIMED_OUT (maybe a clamped __ulock timeout) or AGAIN: go round;
         * the deadline check above ends it. */
    }
}

int gb_park_wake(_Atomic uint32_t *word, int count)
{
    int rc = gb__park_wake_check(word, count);
    if (rc < 0)
        return rc;
#if HAVE_OS_SYNC
    if (__builtin_available(macOS 14.4, *)) {
        int r = count == 1 ? os_sync_wake_by_address_any((void *)word, sizeof(uint32_t), OS_SYNC_WAKE_BY_ADDRESS_SHARED)
                           : os_sync_wake_by_address_all((void *)word, sizeof(uint32_t), OS_SYNC_WAKE_BY_ADDRESS_SHARED);
        if (r == 0 || errno == ENOENT) /* ENOENT: nobody was waiting */
            return 0;
        return gb__fail(gb__errno_code(errno), NULL, 0, "park: os_sync_wake_by_address: %s", strerror(errno));
    }
#endif
    uint32_t op = UL_COMPARE_AND_WAIT_SHARED | ULF_NO_ERRNO | (count == 1 ? 0u : ULF_WAKE_ALL);
    for (;;) {
        int r = __ulock_wake(op, (void *)word, 0);
        if (r >= 0 || r == -ENOENT)
            return 0;
        if (r != -EINTR)
            return gb__fail(gb__errno_code(-r), NULL, 0, "park: __ulock_wake: %s", strerror(-r));
    }
}
