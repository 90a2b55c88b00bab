#include "engine/ds/collection.h"

#include "engine/ds/htable.h"
#include "engine/ds/listpack.h"

#include "engine/base/mem.h"
#include "engine/base/random.h"

void gb_types_config_defaults(gb_types_config *c)
{
    c->hash_max_listpack_entries = 512;
    c->hash_max_listpack_value = 64;
    c->set_max_intset_entries = 512;
    c->set_max_listpack_entries = 128;
    c->set_max_listpack_value = 64;
    c->zset_max_listpack_entries = 128;
    c->zset_max_listpack_value = 64;
}

#define U64SET_EMPTY UINT64_MAX

void gb_u64set_init(gb_u64set *s, size_t expected)
{
    size_t cap = 16;
    while (cap < expected * 2)
        cap <<= 1;
    s->slot = gb_malloc(cap * sizeof *s->slot);
    memset(s->slot, 0xff, cap * sizeof *s->slot);
    s->mask = cap - 1;
    s->used = 0;
}

static inline size_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdu;
    k ^= k >> 33;
    return (size_t)k;
}

static void grow(gb_u64set *s)
{
    gb_u64set n;
    gb_u64set_init(&n, (s->mask + 1));
    for (size_t i = 0; i <= s->mask; i++)
        if (s->slot[i] != U64SET_EMPTY)
            gb_u64set_add(&n, s->slot[i]);
    gb_free(s->slot);
    *s = n;
}

bool gb_u64set_add(gb_u64set *s, uint64_t k)
{
    if ((s->used + 1) * 2 > s->mask + 1)
        grow(s);
    for (size_t i = mix(k) & s->mask;; i = (i + 1) & s->mask) {
        if (s->slot[i] == k)
            return false;
        if (s->slot[i] == U64SET_EMPTY) {
            s->slot[i] = k;
            s->used++;
            return true;
        }
    }
}

void gb_u64set_free(gb_u64set *s)
{
    gb_free(s->slot);
    s->slot = NULL;
    s->mask = s->used = 0;
}

void gb_sample_distinct(uint64_t n, uint64_t k, uint64_t *out)
{
    if (k == 0)
        return;
    if (k * 3 > n) {
        /* Dense: partial Fisher-Yates over all indices. */
        uint64_t *a = gb_malloc((size_t)n * sizeof *a);
        for (uint64_t i = 0; i < n; i++)
            a[i] = i;
        for (uint64_t i = 0; i < k; i++) {
            uint64_t j = i + gb_random_below(n - i);
            uint64_t t = a[i];
            a[i] = a[j];
            a[j] = t;
            out[i] = a[i];
        }
        gb_free(a);
        return;
    }
    /* Sparse: draw and reject repeats (at most a third are taken, so each
     * draw succeeds with probability >= 2/3). */
    gb_u64set seen;
    gb_u64set_init(&seen, (size_t)k);
    for (uint64_t i = 0; i < k;) {
        uint64_t r = gb_random_below(n);
        if (gb_u64set_add(&seen, r))
            out[i++] = r;
    }
    gb_u64set_free(&seen);
}

void gb_htable_sample_distinct(gb_htable *ht, uint64_t k, void (*fn)(gb_hnode *n, void *ctx), void *ctx)
{
    /* Each accepted record is uniform among those not yet taken, so the
     * k of them are a uniform k-subset. At most a third are taken: each
     * draw is new with probability >= 2/3. */
    gb_u64set seen;
    gb_u64set_init(&seen, (size_t)k);
    for (uint64_t i = 0; i < k;) {
        gb_hnode *n = gb_htable_random(ht);
        if (gb_u64set_add(&seen, (uint64_t)(uintptr_t)n)) {
            fn(n, ctx);
            i++;
        }
    }
    gb_u64set_free(&seen);
}

#define UNIQUE_STACK_SLOTS 256u /* 4 KB of stack: up to 128 keys */

bool gb_lp_keys_unique(unsigned char *lp, unsigned stride)
{
    size_t n = (gb_lp_count(lp) + stride - 1) / stride;
    if (n < 2)
        return true;
    size_t cap = 8;
    while (cap < 2 * n)
        cap *= 2;
    /* The listpacks of small collections (every one a snapshot's load
     * checks, under the default thresholds) get their table on the stack:
     * two allocations per collection were a visible part of a load. */
    unsigned char *slot_small[UNIQUE_STACK_SLOTS];
    uint64_t hash_small[UNIQUE_STACK_SLOTS];
    bool small = cap <= UNIQUE_STACK_SLOTS;
    unsigned char **slot = small ? slot_small : gb_malloc(cap * sizeof *slot);
    uint64_t *hash = small ? hash_small : gb_malloc(cap * sizeof *hash);
    memset(slot, 0, cap * sizeof *slot);
    bool unique = true;
    unsigned char *p = gb_lp_first(lp);
    while (p && unique) {
        char buf[GB_LP_INT_BUF];
        unsigned char *next;
        gb_slice k = gb_lp_get_slice_skip(p, buf, stride, &next);
        uint64_t h = gb_hash_slice(k);
        for (size_t j = h & (cap - 1);; j = (j + 1) & (cap - 1)) {
            if (!slot[j]) {
                slot[j] = p;
                hash[j] = h;
                break;
            }
            char obuf[GB_LP_INT_BUF];
            if (hash[j] == h && gb_slice_eq(gb_lp_get_slice(slot[j], obuf), k)) {
                unique = false;
                break;
            }
        }
        p = next;
    }
    if (!small) {
        gb_free(slot);
        gb_free(hash);
    }
    return unique;
}
