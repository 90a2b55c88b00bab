/*
 * Park/wake on a 32-bit word, across processes: the word lives in MAP_SHARED
 * memory (gb_shm) and both sides call these on their own mapping of it.
 *
 *   linux  - futex FUTEX_WAIT/FUTEX_WAKE without FUTEX_PRIVATE_FLAG (private
 *            futexes are keyed by mm and would never see the other process)
 *   darwin - os_sync_wait_on_address(..._SHARED) on macOS 14.4+, else
 *            __ulock_wait/__ulock_wake(UL_COMPARE_AND_WAIT_SHARED)
 *   posix  - polling: yield a few times, then nanosleep with exponential
 *            backoff capped at GB_PARK_POLL_MAX_NS; wake is a no-op. A parked
 *            side notices a change up to ~1 ms late (see docs/platform.md).
 *
 * Protocol the callers follow (no lost wake-ups): the waiter re-reads the
 * word after every return and parks only with the value it saw; the waker
 * stores the new value first and calls gb_park_wake after. The kernel
 * compares *word == expected atomically with going to sleep.
 */
#ifndef GB_PLATFORM_PARK_H
#define GB_PLATFORM_PARK_H

#include <stdatomic.h>
#include <stdint.h>

/* Wait without a time limit. */
#define GB_PARK_FOREVER UINT64_MAX

/* Wake every waiter. */
#define GB_PARK_WAKE_ALL 0x7fffffff

/* The posix variant's longest sleep between two looks at the word. */
#define GB_PARK_POLL_MAX_NS 1000000u

/* Sleeps while *word == expected, for at most timeout_ns nanoseconds
 * (GB_PARK_FOREVER: no limit; 0: just check, never sleep).
 *   0            the value differs, or a wake-up came (possibly spurious:
 *                re-check the word)
 *   GB_ETIMEDOUT the time ran out with the value unchanged
 *   GB_EINVAL    word not 4-byte aligned or not mapped
 * Signals do not end the wait early (it resumes with the remaining time). */
int gb_park_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns);

/* Wakes up to `count` (>= 1, or GB_PARK_WAKE_ALL) waiters on `word`, in any
 * process. Returns how many were woken where the OS says (Linux), else 0;
 * never rely on the number. darwin wakes one (count == 1) or all. */
int gb_park_wake(_Atomic uint32_t *word, int count);

#endif
