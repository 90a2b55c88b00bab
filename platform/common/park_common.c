/* The part of gb_park_wait and gb_park_wake that every variant shares (the
 * kernel waits themselves are per OS: futex, os_sync/__ulock, polling). */
#include <stdint.h>

#include "clock.h"
#include "common/internal.h"
#include "park.h"

int gb__park_enter(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns, uint64_t *deadline_ns)
{
    if (!word || ((uintptr_t)word & 3u))
        return gb__fail(GB_EINVAL, NULL, 0, "park: word %p is not 4-byte aligned", (void *)word);
    /* acquire: pairs with the waker's release store, so what it wrote before
     * changing the word is visible once we see the change. */
    if (atomic_load_explicit(word, memory_order_acquire) != expected)
        return 0;
    if (timeout_ns == 0)
        return GB_ETIMEDOUT;
    *deadline_ns = GB__PARK_NO_DEADLINE;
    if (timeout_ns != GB_PARK_FOREVER) {
        uint64_t now = gb_clock_mono_ns();
        *deadline_ns = timeout_ns > UINT64_MAX - now ? GB__PARK_NO_DEADLINE : now + timeout_ns;
    }
    return GB__PARK_WAIT;
}

int gb__park_wake_check(_Atomic uint32_t *word, int count)
{
    if (!word || ((uintptr_t)word & 3u) || count < 1)
        return gb__fail(GB_EINVAL, NULL, 0, "park: wake needs an aligned word and count >= 1");
    return 0;
}
