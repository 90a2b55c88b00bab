/*
 * Named memory-order accessors for memory shared with another process or
 * thread (ring slots above all): every such load, store, read-modify-write
 * and fence outside platform/ goes through one of these, so the order an
 * access needs is in its name and a grep finds them all (Aeron's
 * AERON_GET_ACQUIRE / AERON_SET_RELEASE). test/platform/test_shm_atomic.c
 * fails the build's tests if a raw `__atomic_*`, `__sync_*` or C11
 * `atomic_*` operation appears anywhere else; platform/ itself and its tests
 * are exempt, because they implement primitives on words they own (futex
 * words in park.c, one-time caches) with C11 `_Atomic` objects.
 *
 * The words are plain integer fields of the layout structs
 * (include/goblin/ring_layout.h): the other process is not C and has no
 * `_Atomic`, so the GCC/Clang `__atomic` builtins on naturally aligned
 * 4- and 8-byte words are the contract, and every word used here is
 * aligned by a _Static_assert in the layout.
 *
 * Which to use:
 *   acquire load   reading a word the peer published with a release store,
 *                  before reading what it published (a record's payload)
 *   release store  publishing a word after writing what it publishes
 *   relaxed        a word that orders nothing: a state flag read or written
 *                  around a full fence, a counter, and every word a hostile
 *                  peer can scribble on that we only validate (the value
 *                  itself is checked, it guards no other memory)
 *   full fence     store-then-load ordering (the Dekker handshake of
 *                  parking): nothing weaker keeps a later load from being
 *                  satisfied before an earlier store is visible
 *
 * Each call site says, next to the call, what its acquire or release orders
 * and which access on the other side it pairs with.
 */
#ifndef GB_PLATFORM_SHM_ATOMIC_H
#define GB_PLATFORM_SHM_ATOMIC_H

#include <stdint.h>

static inline uint64_t gb_shm_load_acquire_u64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline uint64_t gb_shm_load_relaxed_u64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline void gb_shm_store_release_u64(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline void gb_shm_store_relaxed_u64(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static inline uint64_t gb_shm_fetch_add_relaxed_u64(uint64_t *p, uint64_t v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static inline uint32_t gb_shm_load_acquire_u32(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline uint32_t gb_shm_load_relaxed_u32(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static inline void gb_shm_store_release_u32(uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline void gb_shm_store_relaxed_u32(uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
static inline uint32_t gb_shm_fetch_add_release_u32(uint32_t *p, uint32_t v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_RELEASE);
}
static inline uint32_t gb_shm_fetch_add_relaxed_u32(uint32_t *p, uint32_t v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

/* Sequentially consistent fence: orders this thread's earlier stores before
 * its later loads (x86 `mfence`/locked op, arm64 `dmb ish`). */
static inline void gb_shm_fence_full(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

#endif
