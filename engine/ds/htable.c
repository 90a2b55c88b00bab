#include "engine/ds/htable.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "engine/base/mem.h"
#include "engine/base/random.h"
#include "platform/clock.h"
#include "platform/mem.h"

#define HT_INITIAL_BUCKETS 4u
/* Buckets migrated per ordinary operation while rehashing. */
#define HT_STEP_PER_OP 1u
/* Empty buckets visited per step before giving up (bounds a step's cost on
 * a sparse table, as Redis's dictRehash does). */
#define HT_EMPTY_VISITS 10u

/* ---- bucket slots (htable.h draws the layout) ---------------------------------- */

#define SLOT_META_MASK (~(uintptr_t)GB_HSLOT_ADDR_MASK)
#define SLOT_BLOOM_MASK (~(uintptr_t)0 << GB_HSLOT_BLOOM_SHIFT)

static inline gb_hnode *slot_make(const gb_hnode *head, unsigned len, uintptr_t bloom)
{
    if (!GB_HSLOT_META)
        return (gb_hnode *)head;
    return (gb_hnode *)((uintptr_t)head | (uintptr_t)len << GB_HSLOT_LEN_SHIFT | bloom);
}

/* Puts n at the front of the chain in *slot; hash is n's. */
static inline void slot_push(gb_hnode **slot, gb_hnode *n, uint64_t hash)
{
    if (GB_UNLIKELY((uintptr_t)n & SLOT_META_MASK)) {
        /* Never on the platforms Goblin builds for (htable.h): say so
         * rather than lose the key. */
        fprintf(stderr, "goblin-core: a record at %p lies above 2^48, where bucket slots keep their metadata; "
                        "this platform's address space is not supported\n", (void *)n);
        abort();
    }
    gb_hnode *old = *slot;
    unsigned len = gb_hslot_len(old);
    n->next = gb_hslot_head(old);
    *slot = slot_make(n, len < GB_HSLOT_LEN_UNKNOWN ? len + 1 : len,
                      ((uintptr_t)old & SLOT_BLOOM_MASK) | gb_hslot_bloom_bit(hash));
}

/* After a record of the chain in *slot was unlinked: an emptied chain
 * clears its filter; the length goes down unless it was no longer
 * counted. */
static inline void slot_unlinked(gb_hnode **slot)
{
    gb_hnode *s = *slot, *head = gb_hslot_head(s);
    unsigned len = gb_hslot_len(s);
    if (!head)
        *slot = NULL;
    else if (len < GB_HSLOT_LEN_UNKNOWN)
        *slot = slot_make(head, len - 1, (uintptr_t)s & SLOT_BLOOM_MASK);
}

/* The chain's length, from the slot where it is counted, else by walking
 * it (up to `enough`: callers only ask whether it passes a bound). */
static unsigned chain_len(const gb_hnode *slot, unsigned enough)
{
    unsigned len = gb_hslot_len(slot);
    if (len < GB_HSLOT_LEN_UNKNOWN)
        return len;
    len = 0;
    for (const gb_hnode *e = gb_hslot_head(slot); e && len < enough; e = e->next)
        len++;
    return len;
}

/* Rebuilds the filter and length of the chain in *slot from its records:
 * after a lookup walked them all for a key the filter let through, so the
 * records are in the cache and stale bits (of records removed since) stop
 * letting missing keys through. */
static void slot_refilter(const gb_htable *ht, gb_hnode **slot)
{
    if (!GB_HSLOT_META)
        return;
    gb_hnode *head = gb_hslot_head(*slot);
    uintptr_t bloom = 0;
    unsigned len = 0;
    for (const gb_hnode *e = head; e; e = e->next) {
        bloom |= gb_hslot_bloom_bit(ht->type->hash(e));
        if (len < GB_HSLOT_LEN_UNKNOWN)
            len++;
    }
    *slot = slot_make(head, len, bloom);
}

/* Process-wide: every table in the process (each engine's keyspaces and
 * registries, the command table) hashes with it for as long as it exists,
 * and a table cannot be re-keyed; so it is chosen once, by the first engine,
 * and shared by any created later (tests run several side by side). */
static uint64_t hash_seed;
static bool hash_seed_set;

void gb_hash_seed_once(uint64_t seed)
{
    if (hash_seed_set)
        return;
    hash_seed = seed;
    hash_seed_set = true;
}

uint64_t gb_hash_bytes(const void *p, size_t len) { return XXH3_64bits_withSeed(p, len, hash_seed); }

void gb_htable_init(gb_htable *ht, const gb_htable_type *type)
{
    memset(ht, 0, sizeof *ht);
    ht->type = type;
    ht->rehash_idx = -1;
}

static uint64_t buckets_of(const gb_htable *ht, int t) { return ht->tab[t] ? ht->mask[t] + 1 : 0; }

size_t gb_htable_buckets(const gb_htable *ht) { return (size_t)(buckets_of(ht, 0) + buckets_of(ht, 1)); }

size_t gb_htable_overhead_bytes(const gb_htable *ht)
{
    return gb_mem_accounted(ht->tab[0]) + gb_mem_accounted(ht->tab[1]) + gb_mem_accounted(ht->next_tab);
}

/* The array being prepared, handed over; the table has none after. */
static gb_hnode **take_next(gb_htable *ht)
{
    gb_hnode **nt = ht->next_tab;
    ht->next_tab = NULL;
    ht->next_mask = 0;
    ht->next_zeroed = 0;
    return nt;
}

static void drop_next(gb_htable *ht) { gb_free(take_next(ht)); }

/* The bucket arrays, once no chain is left in them. */
static void free_arrays(gb_htable *ht)
{
    for (int t = 0; t < 2; t++) {
        gb_free(ht->tab[t]);
        ht->tab[t] = NULL;
        ht->mask[t] = 0;
        ht->used[t] = 0;
        ht->max_chain[t] = 0;
    }
    ht->rehash_idx = -1;
    drop_next(ht);
}

bool gb_htable_clear_step(gb_htable *ht, void (*free_rec)(gb_hnode *n, void *ctx), void *ctx, uint64_t *cursor,
                          size_t max_nodes)
{
    size_t freed = 0;
    uint64_t nb0 = ht->tab[0] ? ht->mask[0] + 1 : 0;
    uint64_t nb1 = ht->tab[1] ? ht->mask[1] + 1 : 0;
    while (*cursor < nb0 + nb1) {
        if (freed >= max_nodes)
            return false;
        uint64_t i = *cursor;
        gb_hnode **b = i < nb0 ? &ht->tab[0][i] : &ht->tab[1][i - nb0];
        gb_hnode *n = gb_hslot_head(*b);
        *b = NULL;
        while (n) {
            gb_hnode *next = n->next;
            free_rec(n, ctx);
            freed++;
            n = next;
        }
        ++*cursor;
    }
    free_arrays(ht);
    return true;
}

void gb_htable_clear(gb_htable *ht, void (*free_rec)(gb_hnode *n, void *ctx), void *ctx)
{
    uint64_t cursor = 0;
    if (free_rec)
        (void)gb_htable_clear_step(ht, free_rec, ctx, &cursor, SIZE_MAX);
    else
        free_arrays(ht);
}

static uint64_t next_pow2(uint64_t n)
{
    uint64_t s = HT_INITIAL_BUCKETS;
    while (s < n && s < (UINT64_C(1) << 62))
        s <<= 1;
    return s;
}

/* Bucket arrays of this size or more ask for huge pages: a big table's
 * buckets are read at random, each on its own 4 KiB page, so without them
 * nearly every lookup also misses the TLB (a 2 GB snapshot's load on one
 * CPU, its 32 MiB key table on huge pages: 4% less time). */
#define HUGE_BUCKETS_BYTES ((size_t)4 << 20)

/* The first array of a table: small at its first insert, or sized for a
 * load by gb_htable_reserve; zeroed at once, big ones on huge pages. */
static gb_hnode **new_buckets(uint64_t n)
{
    size_t bytes = (size_t)n * sizeof(gb_hnode *);
    gb_hnode **b = gb_malloc(bytes);
    if (bytes >= HUGE_BUCKETS_BYTES)
        (void)gb_plat_advise_huge_pages(b, bytes); /* a hint: before the pages are first touched */
    memset(b, 0, bytes);
    return b;
}

/* A table in use moves to a new array of at least this size through
 * next_tab, zeroed HT_PREPARE_SLICE bytes per insert (and in the cron's
 * rehash time) before the rehash into it starts. Meanwhile the old array
 * takes those inserts a little past a load of 1: 256 inserts for 16 MiB.
 * Such an array stays on small pages: a huge-page fault can wait for the
 * kernel to compact memory, the stall this avoids. */
#define HT_PREPARE_FROM ((size_t)1 << 20)
#define HT_PREPARE_SLICE ((size_t)64 << 10)

static void start_rehash(gb_htable *ht, gb_hnode **nt, uint64_t buckets)
{
    ht->tab[1] = nt;
    ht->mask[1] = buckets - 1;
    ht->used[1] = 0;
    ht->max_chain[1] = 0;
    ht->rehash_idx = 0;
}

/* Zeroes up to `bytes` more of next_tab; once all of it is, the rehash
 * into it starts. True while there is more to zero. */
static bool prepare_step(gb_htable *ht, size_t bytes)
{
    size_t total = (size_t)(ht->next_mask + 1) * sizeof(gb_hnode *);
    size_t n = GB_MIN(bytes, total - ht->next_zeroed);
    memset((char *)ht->next_tab + ht->next_zeroed, 0, n);
    ht->next_zeroed += n;
    if (ht->next_zeroed < total)
        return true;
    uint64_t buckets = ht->next_mask + 1;
    start_rehash(ht, take_next(ht), buckets);
    return false;
}

/* Starts a migration to a bucket array of `buckets` (a power of two). */
static void resize_to(gb_htable *ht, uint64_t buckets)
{
    if (gb_htable_is_resizing(ht))
        return;
    if (ht->tab[0] && buckets == ht->mask[0] + 1)
        return;
    if (!ht->tab[0]) {
        ht->tab[0] = new_buckets(buckets);
        ht->mask[0] = buckets - 1;
        ht->max_chain[0] = 0;
        return;
    }
    size_t bytes = (size_t)buckets * sizeof(gb_hnode *);
    if (bytes < HT_PREPARE_FROM) {
        start_rehash(ht, gb_calloc(buckets, sizeof(gb_hnode *)), buckets);
        return;
    }
    ht->next_tab = gb_malloc(bytes);
    ht->next_mask = buckets - 1;
    ht->next_zeroed = 0;
    prepare_step(ht, HT_PREPARE_SLICE);
}

/* After an insert into the chain in *slot of array t: raises the array's
 * chain bound if this chain now passes it (from the slot's count; a chain
 * too long to be counted there is walked, and only as far as the bound:
 * only a longer chain matters). */
static inline void note_chain(gb_htable *ht, int t, const gb_hnode *slot)
{
    unsigned bound = ht->max_chain[t];
    unsigned len = chain_len(slot, bound + 1);
    if (len > bound && bound < UINT16_MAX)
        ht->max_chain[t] = (uint16_t)len;
}

void gb_htable_reserve(gb_htable *ht, size_t n)
{
    if (gb_htable_size(ht) == 0 && !gb_htable_is_rehashing(ht)) {
        drop_next(ht);
        gb_free(ht->tab[0]);
        ht->tab[0] = NULL;
        resize_to(ht, next_pow2(n));
    }
}

static void finish_rehash(gb_htable *ht)
{
    gb_free(ht->tab[0]);
    ht->tab[0] = ht->tab[1];
    ht->mask[0] = ht->mask[1];
    ht->used[0] = ht->used[1];
    ht->max_chain[0] = ht->max_chain[1];
    ht->tab[1] = NULL;
    ht->mask[1] = 0;
    ht->used[1] = 0;
    ht->max_chain[1] = 0;
    ht->rehash_idx = -1;
}

bool gb_htable_rehash_step(gb_htable *ht, size_t n)
{
    if (!gb_htable_is_rehashing(ht))
        return false;
    size_t empty_budget = n * HT_EMPTY_VISITS;
    uint64_t nb0 = ht->mask[0] + 1;
    while (n > 0 && ht->used[0] > 0) {
        while ((uint64_t)ht->rehash_idx < nb0 && ht->tab[0][ht->rehash_idx] == NULL) {
            ht->rehash_idx++;
            if (--empty_budget == 0)
                return true;
        }
        if ((uint64_t)ht->rehash_idx >= nb0)
            break;
        gb_hnode *e = gb_hslot_head(ht->tab[0][ht->rehash_idx]);
        while (e) {
            gb_hnode *next = e->next;
            uint64_t h = ht->type->hash(e);
            gb_hnode **slot = &ht->tab[1][h & ht->mask[1]];
            slot_push(slot, e, h);
            note_chain(ht, 1, *slot);
            ht->used[0]--;
            ht->used[1]++;
            e = next;
        }
        ht->tab[0][ht->rehash_idx] = NULL;
        ht->rehash_idx++;
        n--;
    }
    if (ht->used[0] == 0) {
        finish_rehash(ht);
        return false;
    }
    return true;
}

size_t gb_htable_rehash_ms(gb_htable *ht, unsigned ms)
{
    uint64_t deadline = gb_clock_mono_ns() + (uint64_t)ms * 1000000u;
    while (ht->next_tab && prepare_step(ht, HT_PREPARE_SLICE))
        if (gb_clock_mono_ns() >= deadline)
            return 0;
    if (!gb_htable_is_rehashing(ht) || ht->pause_rehash)
        return 0;
    size_t moved = 0;
    while (gb_htable_rehash_step(ht, 100)) {
        moved += 100;
        if (gb_clock_mono_ns() >= deadline)
            break;
    }
    return moved;
}

static inline void step_if_rehashing(gb_htable *ht)
{
    if (GB_UNLIKELY(ht->rehash_idx >= 0) && ht->pause_rehash == 0)
        gb_htable_rehash_step(ht, HT_STEP_PER_OP);
}

static void maybe_grow(gb_htable *ht)
{
    if (gb_htable_is_rehashing(ht))
        return;
    if (ht->next_tab) {
        prepare_step(ht, HT_PREPARE_SLICE);
        return;
    }
    if (!ht->tab[0]) {
        resize_to(ht, HT_INITIAL_BUCKETS);
        return;
    }
    if (ht->used[0] >= ht->mask[0] + 1)
        resize_to(ht, next_pow2(ht->used[0] + 1));
}

void gb_htable_maybe_shrink(gb_htable *ht)
{
    if (gb_htable_is_resizing(ht) || !ht->tab[0] || ht->pause_rehash)
        return;
    uint64_t nb = ht->mask[0] + 1;
    if (nb > HT_INITIAL_BUCKETS && ht->used[0] * 8 < nb)
        resize_to(ht, next_pow2(ht->used[0] ? ht->used[0] : 1));
}

/* Finds the link pointing at `key`'s record and which bucket array holds it. */
static gb_hnode **find_link(gb_htable *ht, const void *key, uint64_t hash, int *table)
{
    if (gb_htable_size(ht) == 0)
        return NULL;
    step_if_rehashing(ht);
    for (int t = 0; t < 2; t++) {
        if (!ht->tab[t])
            continue;
        /* Buckets of tab[0] below rehash_idx are already empty. */
        uint64_t b = hash & ht->mask[t];
        if (t == 0 && ht->rehash_idx >= 0 && b < (uint64_t)ht->rehash_idx)
            continue;
        gb_hnode **slot = &ht->tab[t][b];
        if (gb_hslot_may_hold(*slot, hash)) {
            gb_hnode **link = slot;
            for (gb_hnode *e; (e = gb_hlink_record(link)) != NULL; link = &e->next) {
                if (ht->type->key_eq(e, key)) {
                    *table = t;
                    return link;
                }
            }
            slot_refilter(ht, slot); /* the filter let a missing key through */
        }
        if (!gb_htable_is_rehashing(ht))
            break;
    }
    return NULL;
}

gb_hnode **gb_htable_find_link(gb_htable *ht, const void *key, uint64_t hash)
{
    int t;
    return find_link(ht, key, hash, &t);
}

gb_hnode *gb_htable_find(gb_htable *ht, const void *key, uint64_t hash)
{
    int t;
    gb_hnode **link = find_link(ht, key, hash, &t);
    return link ? gb_hlink_record(link) : NULL;
}

void gb_htable_insert(gb_htable *ht, gb_hnode *n, uint64_t hash)
{
    step_if_rehashing(ht);
    maybe_grow(ht);
    /* While rehashing, new records go straight to the new array. */
    int t = gb_htable_is_rehashing(ht) ? 1 : 0;
    gb_hnode **slot = &ht->tab[t][hash & ht->mask[t]];
    slot_push(slot, n, hash);
    note_chain(ht, t, *slot);
    ht->used[t]++;
}

gb_hnode *gb_htable_remove(gb_htable *ht, const void *key, uint64_t hash)
{
    int t;
    gb_hnode **link = find_link(ht, key, hash, &t);
    if (!link)
        return NULL;
    gb_hnode *n = gb_hlink_record(link);
    gb_hlink_set(link, n->next);
    n->next = NULL;
    slot_unlinked(&ht->tab[t][hash & ht->mask[t]]);
    ht->used[t]--;
    return n;
}

/* The slot of a bucket chosen uniformly among the live ones: while
 * rehashing, tab[0]'s buckets from rehash_idx on (those below are empty)
 * and all of tab[1]'s. */
static gb_hnode *random_bucket(const gb_htable *ht)
{
    if (!gb_htable_is_rehashing(ht))
        return ht->tab[0][gb_random_u64() & ht->mask[0]];
    uint64_t nb0 = ht->mask[0] + 1, nb1 = ht->mask[1] + 1;
    uint64_t lo = (uint64_t)ht->rehash_idx;
    uint64_t r = lo + gb_random_below(nb0 + nb1 - lo);
    return r >= nb0 ? ht->tab[1][r - nb0] : ht->tab[0][r];
}

gb_hnode *gb_htable_random(gb_htable *ht)
{
    if (gb_htable_size(ht) == 0)
        return NULL;
    step_if_rehashing(ht);
    /* Each try lands on any one record with probability
     * 1 / (live buckets * bound): the same for all, so the accepted one is
     * uniform. The bound covers both arrays' chains. */
    unsigned bound = ht->max_chain[0] > ht->max_chain[1] ? ht->max_chain[0] : ht->max_chain[1];
    for (;;) {
        gb_hnode *e = gb_hslot_head(random_bucket(ht));
        for (uint64_t pos = gb_random_below(bound); e && pos > 0; pos--)
            e = e->next;
        if (e)
            return e;
    }
}

gb_hnode *gb_htable_random_cheap(gb_htable *ht)
{
    if (gb_htable_size(ht) == 0)
        return NULL;
    step_if_rehashing(ht);
    gb_hnode *slot;
    while (!(slot = random_bucket(ht)))
        ;
    gb_hnode *head = gb_hslot_head(slot);
    unsigned len = chain_len(slot, UINT_MAX);
    for (uint64_t pos = gb_random_below(len); pos > 0; pos--)
        head = head->next;
    return head;
}

/* out[0..heads) are chain heads in bucket order: rewrites out as the
 * records of those chains in order, whole chains until n (Redis's
 * dictGetSomeKeys takes whole chains too). */
static size_t expand_chains(gb_hnode **out, size_t heads, size_t n)
{
    gb_hnode *h[64];
    if (heads > GB_ARRAY_LEN(h))
        return heads; /* a caller asking for more takes the heads alone */
    memcpy(h, out, heads * sizeof *h);
    size_t got = 0;
    for (size_t k = 0; k < heads && got < n; k++)
        for (gb_hnode *e = h[k]; e && got < n; e = e->next)
            out[got++] = e;
    return got;
}

/* The slots a sample from `start` reads first: a sample of a few records
 * finds them within a line or two of slots at the loads the table keeps. */
#define SAMPLE_AHEAD_SLOT_LINES 2

void gb_htable_sample_prefetch_slots(const gb_htable *ht, uint64_t start)
{
    if (!ht->tab[0] || gb_htable_is_rehashing(ht))
        return;
    uint64_t i = start & ht->mask[0];
    for (int k = 0; k < SAMPLE_AHEAD_SLOT_LINES; k++) /* 8 slots to a 64-byte line */
        __builtin_prefetch(&ht->tab[0][(i + 8u * (uint64_t)k) & ht->mask[0]]);
}

void gb_htable_sample_prefetch_records(const gb_htable *ht, uint64_t start, size_t n)
{
    if (!ht->tab[0] || gb_htable_is_rehashing(ht))
        return;
    uint64_t i = start & ht->mask[0];
    for (uint64_t steps = 8u * SAMPLE_AHEAD_SLOT_LINES; n > 0 && steps > 0; steps--, i = (i + 1) & ht->mask[0]) {
        const gb_hnode *e = gb_hslot_head(ht->tab[0][i]);
        if (e) {
            __builtin_prefetch(e);
            n--;
        }
    }
}

size_t gb_htable_sample_at(gb_htable *ht, uint64_t start, gb_hnode **out, size_t n)
{
    n = GB_MIN(n, gb_htable_size(ht));
    if (n == 0)
        return 0;
    int tables = gb_htable_is_rehashing(ht) ? 2 : 1;
    uint64_t maxmask = tables == 2 ? GB_MAX(ht->mask[0], ht->mask[1]) : ht->mask[0];
    uint64_t i = start & maxmask;
    size_t got = 0, empty_run = 0;
    for (size_t steps = n * 10; got < n && steps > 0; steps--) {
        for (int t = 0; t < tables && got < n; t++) {
            /* Buckets of tab[0] below rehash_idx are empty (migrated). */
            if (tables == 2 && t == 0 && i < (uint64_t)ht->rehash_idx) {
                if (i > ht->mask[1])
                    i = (uint64_t)ht->rehash_idx;
                continue;
            }
            if (i > ht->mask[t])
                continue;
            gb_hnode *e = gb_hslot_head(ht->tab[t][i]);
            if (!e) {
                /* A long empty stretch: jump elsewhere, as Redis does. */
                if (++empty_run >= 5 && empty_run > n) {
                    i = gb_random_u64() & maxmask;
                    empty_run = 0;
                }
                continue;
            }
            /* Heads first, their records fetched in parallel; the chains
             * are walked below, once those are on their way. */
            empty_run = 0;
            __builtin_prefetch(e);
            out[got++] = e;
        }
        i = (i + 1) & maxmask;
    }
    return expand_chains(out, got, n);
}

static inline uint64_t rev64(uint64_t v)
{
    v = ((v >> 1) & UINT64_C(0x5555555555555555)) | ((v & UINT64_C(0x5555555555555555)) << 1);
    v = ((v >> 2) & UINT64_C(0x3333333333333333)) | ((v & UINT64_C(0x3333333333333333)) << 2);
    v = ((v >> 4) & UINT64_C(0x0F0F0F0F0F0F0F0F)) | ((v & UINT64_C(0x0F0F0F0F0F0F0F0F)) << 4);
    v = ((v >> 8) & UINT64_C(0x00FF00FF00FF00FF)) | ((v & UINT64_C(0x00FF00FF00FF00FF)) << 8);
    v = ((v >> 16) & UINT64_C(0x0000FFFF0000FFFF)) | ((v & UINT64_C(0x0000FFFF0000FFFF)) << 16);
    return (v >> 32) | (v << 32);
}

/* The cursor after v in a table of mask + 1 buckets: the reversed-bit
 * increment that keeps a scan complete across resizes. */
static inline uint64_t next_cursor(uint64_t v, uint64_t mask)
{
    v |= ~mask;
    v = rev64(v);
    v++;
    return rev64(v);
}

static void scan_bucket(gb_hnode *e, gb_htable_scan_fn fn, void *ctx)
{
    while (e) {
        gb_hnode *next = e->next;
        fn(e, ctx);
        e = next;
    }
}

uint64_t gb_htable_scan(gb_htable *ht, uint64_t v, gb_htable_scan_fn fn, void *ctx)
{
    if (gb_htable_size(ht) == 0)
        return 0;
    ht->pause_rehash++;
    if (!gb_htable_is_rehashing(ht)) {
        uint64_t m0 = ht->mask[0];
        scan_bucket(gb_hslot_head(ht->tab[0][v & m0]), fn, ctx);
        v = next_cursor(v, m0);
    } else {
        int t0 = 0, t1 = 1;
        if (ht->mask[0] > ht->mask[1]) {
            t0 = 1;
            t1 = 0;
        }
        uint64_t m0 = ht->mask[t0], m1 = ht->mask[t1];
        scan_bucket(gb_hslot_head(ht->tab[t0][v & m0]), fn, ctx);
        /* Visit every bucket of the larger table that expands the smaller's. */
        do {
            scan_bucket(gb_hslot_head(ht->tab[t1][v & m1]), fn, ctx);
            v = next_cursor(v, m1);
        } while (v & (m0 ^ m1));
    }
    ht->pause_rehash--;
    return v;
}

/* How far ahead of the walk a bucket's slot is prefetched; its first
 * record is prefetched at half that distance, once the slot has arrived. */
#define SCAN_AHEAD 8

/* The tables one cursor step visits: the smaller (the only one when the
 * table is settled: large == NULL) and, while rehashing, the larger one
 * whose buckets expand each of the smaller's. */
typedef struct scan_tables {
    gb_hnode **small, **large;
    uint64_t small_mask, large_mask;
} scan_tables;

/* The slots the step at `cursor` visits: the smaller table's bucket and
 * (the first few of) the larger table's buckets that expand it. */
static inline void prefetch_step_slots(const scan_tables *t, uint64_t cursor)
{
    uint64_t b = cursor & t->small_mask;
    __builtin_prefetch(&t->small[b]);
    if (!t->large)
        return;
    for (uint64_t k = 0; k < 4 && b <= t->large_mask; k++, b += t->small_mask + 1)
        __builtin_prefetch(&t->large[b]);
}

/* ... and, once those slots have arrived, the first record of each. */
static inline void prefetch_step_records(const scan_tables *t, uint64_t cursor)
{
    uint64_t b = cursor & t->small_mask;
    if (t->small[b])
        __builtin_prefetch(gb_hslot_head(t->small[b]));
    if (!t->large)
        return;
    for (uint64_t k = 0; k < 4 && b <= t->large_mask; k++, b += t->small_mask + 1) {
        if (t->large[b])
            __builtin_prefetch(gb_hslot_head(t->large[b]));
    }
}

uint64_t gb_htable_scan_many(gb_htable *ht, uint64_t v, unsigned buckets, gb_htable_scan_fn fn, void *ctx)
{
    if (gb_htable_size(ht) == 0)
        return 0;
    if (buckets == 0)
        return v;
    ht->pause_rehash++;
    scan_tables t = {ht->tab[0], NULL, ht->mask[0], 0};
    if (gb_htable_is_rehashing(ht)) {
        int s = ht->mask[0] <= ht->mask[1] ? 0 : 1;
        t = (scan_tables){ht->tab[s], ht->tab[1 - s], ht->mask[s], ht->mask[1 - s]};
    }
    /* slot_at runs SCAN_AHEAD steps ahead of v, node_at half as far; 0
     * means that walk reached the end (the cursor wraps to 0 there). */
    uint64_t slot_at = v, node_at = v;
    for (int k = 0; k < SCAN_AHEAD && slot_at; k++) {
        prefetch_step_slots(&t, slot_at);
        slot_at = next_cursor(slot_at, t.small_mask);
        if (k < SCAN_AHEAD / 2 && node_at)
            node_at = next_cursor(node_at, t.small_mask);
    }
    do {
        if (slot_at) {
            prefetch_step_slots(&t, slot_at);
            slot_at = next_cursor(slot_at, t.small_mask);
        }
        if (node_at) {
            prefetch_step_records(&t, node_at);
            node_at = next_cursor(node_at, t.small_mask);
        }
        /* as gb_htable_scan: the smaller table's bucket, then every bucket
         * of the larger one that expands it */
        scan_bucket(gb_hslot_head(t.small[v & t.small_mask]), fn, ctx);
        if (!t.large) {
            v = next_cursor(v, t.small_mask);
            continue;
        }
        do {
            scan_bucket(gb_hslot_head(t.large[v & t.large_mask]), fn, ctx);
            v = next_cursor(v, t.large_mask);
        } while (v & (t.small_mask ^ t.large_mask));
    } while (v && --buckets);
    ht->pause_rehash--;
    return v;
}

void gb_htable_iter_init(gb_htable_iter *it, gb_htable *ht)
{
    it->ht = ht;
    it->table = 0;
    it->bucket = 0;
    it->next = NULL;
    it->started = false;
}

gb_hnode *gb_htable_iter_next(gb_htable_iter *it)
{
    gb_htable *ht = it->ht;
    if (!it->started) {
        it->started = true;
        ht->pause_rehash++;
        it->next = NULL;
        it->table = 0;
        it->bucket = 0;
        if (ht->tab[0])
            it->next = gb_hslot_head(ht->tab[0][0]);
    }
    for (;;) {
        if (it->next) {
            gb_hnode *n = it->next;
            it->next = n->next;
            return n;
        }
        if (!ht->tab[it->table])
            return NULL;
        it->bucket++;
        if (it->bucket > ht->mask[it->table]) {
            if (it->table == 1 || !gb_htable_is_rehashing(ht))
                return NULL;
            it->table = 1;
            it->bucket = 0;
            it->next = gb_hslot_head(ht->tab[1][0]);
            continue;
        }
        it->next = gb_hslot_head(ht->tab[it->table][it->bucket]);
    }
}

void gb_htable_iter_done(gb_htable_iter *it)
{
    if (it->started) {
        it->ht->pause_rehash--;
        it->started = false;
    }
}
