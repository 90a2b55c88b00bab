/*
 * htable: an intrusive, chained hash table with incremental rehash.
 *
 * The keyspace, large hashes, large sets and the member->score side of large
 * sorted sets all use it. "Intrusive" means the table stores pointers to the
 * caller's own records, which begin with a gb_hnode (the chain link): one
 * allocation per element, no separate dict entry.
 *
 *   table[i] -> rec -> rec -> NULL        (rec = caller struct, first field gb_hnode)
 *
 * Sizing: bucket arrays are powers of two. The table grows to the next power
 * of two >= used when used reaches the bucket count (load factor 1) and
 * shrinks when used falls under 1/8 of it. Growing or shrinking does not
 * move everything at once: a second bucket array is allocated and buckets
 * migrate a few at a time, on each operation and from gb_htable_rehash_ms()
 * (called by the server's cron), so no command pays for the whole table.
 * While two arrays exist, lookups check both.
 *
 * Hashing is the caller's job (the type's hash callback); the engine uses
 * XXH3-64 with a per-process random seed (gb_hash_bytes) to defeat
 * hash-flooding.
 *
 * Scanning uses Redis's reverse-binary cursor: every element present for the
 * whole scan is returned at least once even while the table resizes.
 */
#ifndef GB_ENGINE_HTABLE_H
#define GB_ENGINE_HTABLE_H

#include "engine/base/common.h"

typedef struct gb_hnode {
    struct gb_hnode *next;
} gb_hnode;

typedef struct gb_htable_type {
    /* Hash of the record's key (must match gb_hash_* of the lookup key). */
    uint64_t (*hash)(const gb_hnode *n);
    /* Whether the record's key equals `key` (opaque, e.g. a gb_slice *). */
    bool (*key_eq)(const gb_hnode *n, const void *key);
} gb_htable_type;

typedef struct gb_htable {
    const gb_htable_type *type;
    gb_hnode **tab[2];
    uint64_t mask[2];   /* bucket count - 1 (0 with tab == NULL) */
    size_t used[2];
    int64_t rehash_idx; /* next bucket of tab[0] to migrate; -1 when not rehashing */
    int pause_rehash;   /* > 0 while an iterator or scan holds positions */
    /* Per array, at least its longest chain (kept up on insert and
     * migration, stale-high after removals; saturates at UINT16_MAX, a
     * length a seeded hash at load factor <= 1 never reaches): the bound
     * gb_htable_random's rejection sampling needs. In the padding after
     * pause_rehash, so the struct does not grow. */
    uint16_t max_chain[2];
    /* A bigger (or smaller) bucket array being zeroed a slice at a time
     * before the rehash into it starts: zeroing 16 MiB at once stalled a
     * SET that crossed a million keys for 9-45 ms. NULL: none. */
    gb_hnode **next_tab;
    uint64_t next_mask;
    size_t next_zeroed; /* bytes of next_tab zeroed so far */
} gb_htable;

/* Sets the process's hash seed (random, before any table is used) unless it
 * was set already: the first engine's choice holds for the process. */
void gb_hash_seed_once(uint64_t seed);
uint64_t gb_hash_bytes(const void *p, size_t len);
static inline uint64_t gb_hash_slice(gb_slice s) { return gb_hash_bytes(s.ptr, s.len); }

void gb_htable_init(gb_htable *ht, const gb_htable_type *type);
/* Frees the bucket arrays; records are passed to free_rec (may be NULL). */
void gb_htable_clear(gb_htable *ht, void (*free_rec)(gb_hnode *n, void *ctx), void *ctx);
/* gb_htable_clear a slice at a time, for a table nobody else uses any more
 * (a deleted value, a flushed database): frees the records of whole chains
 * from bucket *cursor on (0 to start; tab[0]'s buckets, then tab[1]'s)
 * until at least max_nodes are freed, and leaves *cursor where it
 * stopped. Returns true once no record is left and the bucket arrays are
 * freed too; the table is then empty, as after gb_htable_clear. */
bool gb_htable_clear_step(gb_htable *ht, void (*free_rec)(gb_hnode *n, void *ctx), void *ctx, uint64_t *cursor,
                          size_t max_nodes);

static inline size_t gb_htable_size(const gb_htable *ht) { return ht->used[0] + ht->used[1]; }
static inline bool gb_htable_is_rehashing(const gb_htable *ht) { return ht->rehash_idx >= 0; }
/* Rehashing, or preparing the array a rehash will move into (what the
 * cron gives time to; no other resize starts meanwhile). */
static inline bool gb_htable_is_resizing(const gb_htable *ht) { return ht->rehash_idx >= 0 || ht->next_tab; }
/* Number of buckets (both arrays), for memory accounting. */
size_t gb_htable_buckets(const gb_htable *ht);
/* Bytes held by the bucket arrays (not the records). */
size_t gb_htable_overhead_bytes(const gb_htable *ht);

gb_hnode *gb_htable_find(gb_htable *ht, const void *key, uint64_t hash);
/* The link that points at the record with `key` (for in-place replacement),
 * or NULL. Valid until the next mutation. */
gb_hnode **gb_htable_find_link(gb_htable *ht, const void *key, uint64_t hash);
/* Inserts a record whose key is not in the table (caller checked). */
void gb_htable_insert(gb_htable *ht, gb_hnode *n, uint64_t hash);
/* Whether gb_htable_insert_known can take the next record: the table is
 * settled (not rehashing) with mask + 1 buckets and room for one more
 * record before it would grow. */
static inline bool gb_htable_settled(const gb_htable *ht, uint64_t mask)
{
    return ht->tab[0] && ht->rehash_idx < 0 && ht->mask[0] == mask && ht->used[0] < mask;
}
/* Inserts a record whose key is not in the table into a settled table
 * (gb_htable_settled), whose bucket the caller knows holds chain_len - 1
 * records: no record of the chain is read (a loader that tracks its
 * buckets, engine/persist/load_pipe.c). */
void gb_htable_insert_known(gb_htable *ht, gb_hnode *n, uint64_t hash, unsigned chain_len);
/* Unlinks and returns the record with `key`, or NULL. */
gb_hnode *gb_htable_remove(gb_htable *ht, const void *key, uint64_t hash);
/* Replaces the record at *link (from gb_htable_find_link) with n, which has
 * the same key (e.g. the record was reallocated). */
static inline void gb_htable_replace_at(gb_hnode **link, gb_hnode *n)
{
    n->next = (*link)->next;
    *link = n;
}

/* A record chosen uniformly (every record equally likely, whatever the
 * chain it sits in); NULL if empty. Rejection sampling: a random bucket and
 * a random position below the longest chain's length, again until the
 * position holds a record. Picking a bucket and then a record of its chain
 * (Redis's dictGetRandomKey) favours records alone in their bucket: in a
 * 10-record table, some came up twice as often as others. Expected tries:
 * live buckets * bound / size, so between bound and 8 * bound at the load
 * factors the table keeps (1/8 to 1); a seeded hash keeps the bound a
 * handful at any size (8 for a million records in a test here). */
gb_hnode *gb_htable_random(gb_htable *ht);
/* A random record as Redis's dictGetRandomKey draws one: a random
 * non-empty bucket, then a record of its chain, so a record in a longer
 * chain is a little less likely. A few bucket reads where
 * gb_htable_random may need dozens at low load factors: for eviction,
 * whose random policies need no exact uniformity. NULL when empty. */
gb_hnode *gb_htable_random_cheap(gb_htable *ht);
/* Up to n records, the chains of a random stretch of consecutive
 * non-empty buckets (Redis's dictGetSomeKeys): far cheaper per record than
 * n gb_htable_random calls (one random start, sequential bucket reads, the
 * chains' first records fetched together), random enough for sampling
 * (eviction), not uniform. May return fewer than n (it gives up after
 * 10 n buckets); n up to 64 (beyond, one record per bucket). */
size_t gb_htable_sample(gb_htable *ht, gb_hnode **out, size_t n);

/* Starts loading into the cache the bucket slot(s) where hash lives, for a
 * find or insert that comes a little later. */
static inline void gb_htable_prefetch(const gb_htable *ht, uint64_t hash)
{
    if (ht->tab[0])
        __builtin_prefetch(&ht->tab[0][hash & ht->mask[0]]);
    if (ht->tab[1])
        __builtin_prefetch(&ht->tab[1][hash & ht->mask[1]]);
}

/* Starts fetching the first record of hash's chain (in each bucket array):
 * the second cache miss of a lookup, once the bucket itself is in the
 * cache (gb_htable_prefetch, earlier). */
static inline void gb_htable_prefetch_chain(const gb_htable *ht, uint64_t hash)
{
    for (int t = 0; t < 2; t++) {
        if (ht->tab[t]) {
            const gb_hnode *n = ht->tab[t][hash & ht->mask[t]];
            if (n)
                __builtin_prefetch(n);
        }
    }
}

/* ... and the second record of that chain, once the first is in the
 * cache (gb_htable_prefetch_chain, earlier): at the load factors the table
 * keeps, most chains are one or two records long. */
static inline void gb_htable_prefetch_chain_next(const gb_htable *ht, uint64_t hash)
{
    for (int t = 0; t < 2; t++) {
        if (ht->tab[t]) {
            const gb_hnode *n = ht->tab[t][hash & ht->mask[t]];
            if (n && n->next)
                __builtin_prefetch(n->next);
        }
    }
}

/* Migrates up to n buckets; returns true if more remain. */
bool gb_htable_rehash_step(gb_htable *ht, size_t n);
/* Sizes an empty table for n entries at once (a snapshot's load knows how
 * many keys come): no growth and rehash on the way. No-op otherwise. */
void gb_htable_reserve(gb_htable *ht, size_t n);
/* Rehashes for about `ms` milliseconds; returns buckets migrated. */
size_t gb_htable_rehash_ms(gb_htable *ht, unsigned ms);
/* Shrinks the table when it is sparse (call after bulk deletions). */
void gb_htable_maybe_shrink(gb_htable *ht);

/* Calls fn on each record of the cursor's bucket(s) and returns the next
 * cursor (0 when the scan is complete). fn must not modify the table. */
typedef void (*gb_htable_scan_fn)(gb_hnode *n, void *ctx);
uint64_t gb_htable_scan(gb_htable *ht, uint64_t cursor, gb_htable_scan_fn fn, void *ctx);
/* gb_htable_scan over up to `buckets` cursor steps at once (stops early
 * when the scan completes), prefetching the buckets and first records
 * ahead of the walk: the cursor's reversed-bit order visits buckets far
 * apart, so one step at a time waits on two cache misses per bucket
 * (a whole-table walk, a snapshot, spent 15% of its time there). */
uint64_t gb_htable_scan_many(gb_htable *ht, uint64_t cursor, unsigned buckets, gb_htable_scan_fn fn, void *ctx);

/* Full iteration. Rehashing pauses while an iterator is live; the record just
 * returned may be removed (and freed) before the next call. */
typedef struct gb_htable_iter {
    gb_htable *ht;
    int table;
    uint64_t bucket;
    gb_hnode *next;
    bool started;
} gb_htable_iter;

void gb_htable_iter_init(gb_htable_iter *it, gb_htable *ht);
gb_hnode *gb_htable_iter_next(gb_htable_iter *it);
void gb_htable_iter_done(gb_htable_iter *it);

#endif
