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
 * A bucket slot holds more than its chain's first record: the record's
 * address takes the low 48 bits (user-space addresses on the 64-bit
 * platforms Goblin runs on stay below 2^48; an insert checks), and the 16
 * above them say what the table knows of the chain without reading it:
 *
 *   bits 0..47   the first record (NULL: an empty chain)
 *   bits 48..51  the chain's length; GB_HSLOT_LEN_UNKNOWN (15): that many
 *                or more, or not counted since (a chain that long is
 *                counted by walking it)
 *   bits 52..63  a Bloom filter of the chain: each record sets one of the
 *                12 bits, chosen by its hash's upper half. A bit is
 *                cleared only when the chain empties or when a lookup that
 *                walked the whole chain for nothing rebuilds the filter
 *                from the records it read, so the filter always covers the
 *                chain: a key whose bit is clear is surely absent.
 *
 * So a lookup of a missing key (a SET of a new key, a GET that misses, a
 * write over maxmemory) reads the bucket alone in about nine cases out of
 * ten instead of every record of the chain, each a cache miss in a big
 * table, and an insert learns the chain's length without reading it.
 * Records' own `next` links are plain pointers.
 *
 * LeakSanitizer finds a block only through a plain pointer to it, so in
 * AddressSanitizer builds (the sanitizer suite, the fuzzers) a slot holds
 * the address alone (GB_HSLOT_META 0): every chain may hold any key and
 * its length is walked when asked. The other builds (the tests, TSan, the
 * cross checks, Release) keep the metadata.
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

/* ---- bucket slots (the layout above) ---- */

_Static_assert(sizeof(uintptr_t) == 8, "bucket slots keep their chain's metadata above a 48-bit address");
#if defined(__SANITIZE_ADDRESS__)
#define GB_HSLOT_META 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GB_HSLOT_META 0
#endif
#endif
#ifndef GB_HSLOT_META
#define GB_HSLOT_META 1
#endif
#define GB_HSLOT_ADDR_BITS 48
#define GB_HSLOT_ADDR_MASK ((UINT64_C(1) << GB_HSLOT_ADDR_BITS) - 1)
#define GB_HSLOT_LEN_SHIFT GB_HSLOT_ADDR_BITS
#define GB_HSLOT_LEN_UNKNOWN 15u
#define GB_HSLOT_BLOOM_SHIFT (GB_HSLOT_LEN_SHIFT + 4)
#define GB_HSLOT_BLOOM_BITS 12u

/* The chain's first record. */
static inline gb_hnode *gb_hslot_head(const gb_hnode *slot)
{
    return (gb_hnode *)((uintptr_t)slot & GB_HSLOT_ADDR_MASK);
}

static inline unsigned gb_hslot_len(const gb_hnode *slot)
{
    if (!GB_HSLOT_META)
        return slot ? GB_HSLOT_LEN_UNKNOWN : 0;
    return (unsigned)((uintptr_t)slot >> GB_HSLOT_LEN_SHIFT) & 15u;
}

/* The filter bit of a key with this hash: from the hash's upper half (the
 * bucket index takes the lower bits), spread evenly over the 12 bits. */
static inline uintptr_t gb_hslot_bloom_bit(uint64_t hash)
{
    return (uintptr_t)1 << (GB_HSLOT_BLOOM_SHIFT + (((hash >> 32) * GB_HSLOT_BLOOM_BITS) >> 32));
}

/* False when the chain surely holds no key with this hash. */
static inline bool gb_hslot_may_hold(const gb_hnode *slot, uint64_t hash)
{
    if (!GB_HSLOT_META)
        return slot != NULL;
    return ((uintptr_t)slot & gb_hslot_bloom_bit(hash)) != 0;
}

/* The record a link points at: a bucket slot (whose metadata it drops) or
 * a record's `next`. */
static inline gb_hnode *gb_hlink_record(gb_hnode *const *link) { return gb_hslot_head(*link); }

/* Points the link at n instead, keeping a slot's metadata (n must have the
 * key of the record it replaces). n's own `next` is left alone. */
static inline void gb_hlink_set(gb_hnode **link, gb_hnode *n)
{
    *link = (gb_hnode *)(((uintptr_t)*link & ~(uintptr_t)GB_HSLOT_ADDR_MASK) | (uintptr_t)n);
}

typedef struct gb_htable_type {
    /* Hash of the record's key (must match gb_hash_* of the lookup key). */
    uint64_t (*hash)(const gb_hnode *n);
    /* Whether the record's key equals `key` (opaque, e.g. a gb_slice *). */
    bool (*key_eq)(const gb_hnode *n, const void *key);
} gb_htable_type;

typedef struct gb_htable {
    const gb_htable_type *type;
    gb_hnode **tab[2]; /* bucket slots: a chain's first record and its metadata (above) */
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
 * or NULL. Valid until the next mutation. Read it with gb_hlink_record,
 * write it with gb_hlink_set or gb_htable_replace_at: a bucket slot's
 * upper bits are not the address. */
gb_hnode **gb_htable_find_link(gb_htable *ht, const void *key, uint64_t hash);
/* Inserts a record whose key is not in the table (caller checked). */
void gb_htable_insert(gb_htable *ht, gb_hnode *n, uint64_t hash);
/* Unlinks and returns the record with `key`, or NULL. */
gb_hnode *gb_htable_remove(gb_htable *ht, const void *key, uint64_t hash);
/* Replaces the record at *link (from gb_htable_find_link) with n, which has
 * the same key (e.g. the record was reallocated). */
static inline void gb_htable_replace_at(gb_hnode **link, gb_hnode *n)
{
    n->next = gb_hlink_record(link)->next;
    gb_hlink_set(link, n);
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
/* Up to n records, the chains of a stretch of consecutive non-empty
 * buckets from `start` (any number: the caller draws it at random, and it
 * is masked to the table's size when the sample is taken) (Redis's
 * dictGetSomeKeys): far cheaper per record than n gb_htable_random calls
 * (sequential bucket reads, the chains' first records fetched together),
 * random enough for sampling (eviction), not uniform. After a long empty
 * stretch it jumps to a random bucket. May return fewer than n (it gives
 * up after 10 n buckets); n up to 64 (beyond, one record per bucket). */
size_t gb_htable_sample_at(gb_htable *ht, uint64_t start, gb_hnode **out, size_t n);
/* Starts fetching what gb_htable_sample_at(ht, start, .., n) will read,
 * in two steps some time apart: the bucket slots from start on, then,
 * once those are in the cache, the first records of the first n chains
 * there. Nothing while the table rehashes (the sample reads two arrays). */
void gb_htable_sample_prefetch_slots(const gb_htable *ht, uint64_t start);
void gb_htable_sample_prefetch_records(const gb_htable *ht, uint64_t start, size_t n);

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
            const gb_hnode *slot = ht->tab[t][hash & ht->mask[t]];
            if (gb_hslot_may_hold(slot, hash)) /* else the lookup reads no record */
                __builtin_prefetch(gb_hslot_head(slot));
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
            const gb_hnode *slot = ht->tab[t][hash & ht->mask[t]];
            const gb_hnode *n = gb_hslot_head(slot);
            if (n && gb_hslot_may_hold(slot, hash) && n->next) /* n is read only when the lookup will */
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
