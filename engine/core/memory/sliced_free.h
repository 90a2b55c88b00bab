/*
 * Sliced freeing: a big value deleted without lazy freeing is freed by the
 * engine thread a slice at a time, between batches of events, instead of
 * all at once before the next request is read.
 *
 * Redis 7.0's defaults leave DEL, overwrites, expiry and FLUSHDB/FLUSHALL
 * without ASYNC synchronous (lazyfree-lazy-user-del, -server-del, -expire,
 * -user-flush all "no"): the main thread frees the value before it reads
 * the next request, and a DEL of a 500,000-member sorted set stalls every
 * client for ~60 ms (issue 34's stall probe: 59.56 ms for redis-server,
 * 35.75 for goblin-core before this module). Here the key leaves the
 * keyspace at once, exactly as before, and its value's elements are freed
 * by the same thread in slices of about a millisecond (the slice expiry
 * also uses), so no client waits for more than one slice. What the
 * lazyfree-lazy-* settings choose stays as they say: "no" frees on the
 * engine thread, "yes" on the lazy-free thread with Redis's counters
 * (lazyfree_pending_objects / lazyfreed_objects), which this module never
 * touches.
 *
 * Memory comes back a slice at a time: INFO used_memory falls over the few
 * tens of milliseconds the slices take. Eviction, which needs the memory
 * now, finishes every pending slice before it measures or picks a victim
 * (engine/core/memory/evict.c). Values freed cheaply (at most
 * GB_SLICED_FREE_MIN_EFFORT allocations, a fraction of a slice), lists
 * (packed many elements to an allocation), and everything while a data set
 * is loading are still freed at once. Sets, hashes and sorted sets free
 * their hashtable's chains a slice at a time; streams their radix trees,
 * the pending-entries lists included (gb_rax_teardown).
 */
#ifndef GB_ENGINE_CORE_SLICED_FREE_H
#define GB_ENGINE_CORE_SLICED_FREE_H

#include "engine/ds/htable.h"
#include "engine/core/keyspace/keyrecord.h"

struct gb_engine;
typedef struct gb_sliced_free gb_sliced_free;

/* Values whose free effort (the lazy-free measure: allocations touched) is
 * at most this are freed at once: ~8,000 frees take ~0.3 ms. */
#define GB_SLICED_FREE_MIN_EFFORT 8192
/* How long one slice may run: the same millisecond expiry slices take. */
#define GB_SLICED_FREE_SLICE_NS 1000000ull

gb_sliced_free *gb_sliced_free_new(void);
/* The queue itself, once drained (the engine's end: gb_sliced_free_drain
 * first). */
void gb_sliced_free_free(gb_sliced_free *sf);

/* Frees kv, already out of its table and its database's indexes: now, or
 * in slices when its value is big. */
void gb_sliced_free_kv(struct gb_engine *eng, gb_kv *kv);
/* Frees every record of a table taken whole out of a database (FLUSHDB
 * without ASYNC) and its volatile array: now when small, else in slices;
 * big values in it get slices of their own. */
void gb_sliced_free_table(struct gb_engine *eng, gb_htable *table, gb_kv **vol);

/* Whether anything waits for its slices. */
bool gb_sliced_free_pending(const gb_sliced_free *sf);
/* Frees queued work until deadline_ns (gb_clock_mono_ns) is past; true
 * while some remains. */
bool gb_sliced_free_step(struct gb_engine *eng, uint64_t deadline_ns);
/* Frees everything queued, now. */
void gb_sliced_free_drain(struct gb_engine *eng);

#endif
