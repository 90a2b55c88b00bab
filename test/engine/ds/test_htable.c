/* engine/ds/htable.c: insert/find/remove against a model, incremental rehash
 * under load (both directions), the scan guarantee during resizes, random
 * sampling, iteration with deletion, the bucket slots' chain metadata. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "engine/ds/htable.h"
#include "engine/base/random.h"

typedef struct rec {
    gb_hnode node;
    uint64_t key;
    int seen;
} rec;

static uint64_t rec_hash(const gb_hnode *n) { return gb_hash_bytes(&((const rec *)n)->key, 8); }
static bool rec_eq(const gb_hnode *n, const void *k) { return ((const rec *)n)->key == *(const uint64_t *)k; }
static const gb_htable_type T = {rec_hash, rec_eq};

static uint64_t h(uint64_t k) { return gb_hash_bytes(&k, 8); }

/* Key comparisons made: what a lookup read of the records. */
static unsigned long compares;
static bool counting_eq(const gb_hnode *n, const void *k)
{
    compares++;
    return rec_eq(n, k);
}
static const gb_htable_type COUNTED = {rec_hash, counting_eq};

static rec *mk(uint64_t k)
{
    rec *r = calloc(1, sizeof *r);
    r->key = k;
    return r;
}

static void free_rec(gb_hnode *n, void *ctx)
{
    (void)ctx;
    free(n);
}

static void test_insert_find_remove_model(void **state)
{
    (void)state;
    gb_random_seed(42);
    gb_htable ht;
    gb_htable_init(&ht, &T);
    enum { N = 20000 };
    static bool present[N];
    memset(present, 0, sizeof present);
    size_t count = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t k = gb_random_below(N);
        int op = (int)gb_random_below(3);
        if (op < 2 && !present[k]) {
            gb_htable_insert(&ht, &mk(k)->node, h(k));
            present[k] = true;
            count++;
        } else if (op == 2 && present[k]) {
            gb_hnode *n = gb_htable_remove(&ht, &k, h(k));
            assert_non_null(n);
            free(n);
            present[k] = false;
            count--;
            gb_htable_maybe_shrink(&ht);
        }
        assert_int_equal(gb_htable_size(&ht), count);
        if ((i & 1023) == 0) {
            for (uint64_t j = 0; j < N; j += 97)
                assert_int_equal(gb_htable_find(&ht, &j, h(j)) != NULL, present[j]);
        }
    }
    for (uint64_t j = 0; j < N; j++)
        assert_int_equal(gb_htable_find(&ht, &j, h(j)) != NULL, present[j]);
    gb_htable_clear(&ht, free_rec, NULL);
}

static void test_rehash_is_incremental(void **state)
{
    (void)state;
    gb_htable ht;
    gb_htable_init(&ht, &T);
    /* Fill to exactly a power of two, then one more insert starts a resize. */
    for (uint64_t k = 0; k < 4096; k++)
        gb_htable_insert(&ht, &mk(k)->node, h(k));
    while (gb_htable_is_rehashing(&ht))
        gb_htable_rehash_step(&ht, 1000);
    gb_htable_insert(&ht, &mk(4096)->node, h(4096));
    assert_true(gb_htable_is_rehashing(&ht));
    /* While two arrays exist, every key stays findable. */
    int steps = 0;
    while (gb_htable_is_rehashing(&ht)) {
        gb_htable_rehash_step(&ht, 1);
        steps++;
        uint64_t probe = (uint64_t)(steps * 31) % 4097;
        assert_non_null(gb_htable_find(&ht, &probe, h(probe)));
    }
    assert_true(steps > 10); /* it took many small steps, not one big one */
    assert_int_equal(gb_htable_size(&ht), 4097);
    /* Shrinking after mass deletion also migrates incrementally. */
    for (uint64_t k = 0; k < 4000; k++)
        free(gb_htable_remove(&ht, &k, h(k)));
    gb_htable_maybe_shrink(&ht);
    assert_true(gb_htable_is_rehashing(&ht));
    while (gb_htable_rehash_step(&ht, 1))
        ;
    assert_true(gb_htable_buckets(&ht) <= 128);
    for (uint64_t k = 4000; k <= 4096; k++)
        assert_non_null(gb_htable_find(&ht, &k, h(k)));
    gb_htable_clear(&ht, free_rec, NULL);
}

/* A table of a million-bucket class does not zero its next array in one
 * go: from 1 MiB on the array is prepared 64 KiB per insert (or in the
 * cron's rehash time) while the old one keeps serving, and only then does
 * the rehash start. Every key stays findable throughout, in both
 * directions, and a table cleared mid-preparation frees it. */
static void test_big_arrays_are_prepared_in_slices(void **state)
{
    (void)state;
    gb_htable ht;
    gb_htable_init(&ht, &T);
    enum { FULL = 1 << 17 }; /* 2^17 buckets: a 1 MiB array, then 2 MiB */
    for (uint64_t k = 0; k < FULL; k++)
        gb_htable_insert(&ht, &mk(k)->node, h(k));
    while (gb_htable_rehash_step(&ht, 100000))
        ;
    assert_int_equal(gb_htable_buckets(&ht), FULL);
    uint64_t k = FULL;
    gb_htable_insert(&ht, &mk(k)->node, h(k));
    assert_true(gb_htable_is_resizing(&ht));
    assert_false(gb_htable_is_rehashing(&ht)); /* still zeroing the new array */
    int inserts = 1;
    while (!gb_htable_is_rehashing(&ht)) {
        k++;
        gb_htable_insert(&ht, &mk(k)->node, h(k));
        inserts++;
        uint64_t probe = (k * 7919) % (k + 1);
        assert_non_null(gb_htable_find(&ht, &probe, h(probe)));
        assert_true(inserts <= 64);
    }
    assert_int_equal(inserts, 32); /* 2 MiB in 64 KiB slices */
    while (gb_htable_rehash_step(&ht, 1000))
        ;
    assert_int_equal(gb_htable_buckets(&ht), 2 * FULL);
    for (uint64_t j = 0; j <= k; j += 13)
        assert_non_null(gb_htable_find(&ht, &j, h(j)));
    /* shrinking to a big array goes the same way; here the cron's rehash
     * time prepares it */
    for (uint64_t j = 0; j < FULL + 33 - 20000; j++)
        free(gb_htable_remove(&ht, &j, h(j)));
    gb_htable_maybe_shrink(&ht); /* 20,000 left: below 1/8 of 262,144 buckets */
    assert_true(gb_htable_is_resizing(&ht));
    size_t before = gb_htable_size(&ht);
    gb_htable_rehash_ms(&ht, 1000);
    while (gb_htable_rehash_step(&ht, 1000))
        ;
    assert_false(gb_htable_is_resizing(&ht));
    assert_int_equal(gb_htable_size(&ht), before);
    assert_int_equal(gb_htable_buckets(&ht), 32768);
    for (uint64_t j = FULL + 33 - 20000; j <= k; j++)
        assert_non_null(gb_htable_find(&ht, &j, h(j)));
    /* grow again and clear while the next array is part zeroed */
    for (uint64_t j = k + 1; !(gb_htable_is_resizing(&ht) && !gb_htable_is_rehashing(&ht)); j++) {
        assert_true(j < k + 200000);
        gb_htable_insert(&ht, &mk(j)->node, h(j));
        while (gb_htable_rehash_step(&ht, 100000))
            ;
    }
    assert_non_null(ht.next_tab);
    gb_htable_clear(&ht, free_rec, NULL);
    assert_false(gb_htable_is_resizing(&ht));
    assert_int_equal(gb_htable_size(&ht), 0);
}

static void mark_seen(gb_hnode *n, void *ctx)
{
    (void)ctx;
    ((rec *)n)->seen++;
}

/* One scan call: gb_htable_scan, or gb_htable_scan_many over `batch`
 * cursor steps when batch > 0. */
static uint64_t scan_call(gb_htable *ht, uint64_t cursor, unsigned batch)
{
    return batch ? gb_htable_scan_many(ht, cursor, batch, mark_seen, NULL) : gb_htable_scan(ht, cursor, mark_seen, NULL);
}

/* Every element present for the whole scan is returned at least once, even
 * while the table grows and shrinks between cursor calls. */
static void scan_survives_resizes(unsigned batch)
{
    gb_random_seed(7);
    gb_htable ht;
    gb_htable_init(&ht, &T);
    enum { STABLE = 3000 };
    rec *stable[STABLE];
    for (uint64_t k = 0; k < STABLE; k++) {
        stable[k] = mk(k);
        gb_htable_insert(&ht, &stable[k]->node, h(k));
    }
    uint64_t cursor = 0, extra = 1000000;
    int calls = 0;
    do {
        cursor = scan_call(&ht, cursor, batch);
        calls++;
        /* churn: grow with temporary keys, then remove them to shrink */
        if (calls % 3 == 0) {
            for (int i = 0; i < 500; i++, extra++)
                gb_htable_insert(&ht, &mk(extra)->node, h(extra));
        } else if (calls % 3 == 1 && extra > 1000000) {
            for (uint64_t k = 1000000; k < extra; k++) {
                gb_hnode *n = gb_htable_remove(&ht, &k, h(k));
                free(n);
            }
            extra = 1000000;
            gb_htable_maybe_shrink(&ht);
        }
        gb_htable_rehash_step(&ht, 3);
    } while (cursor != 0 && calls < 1000000);
    for (int i = 0; i < STABLE; i++)
        assert_true(stable[i]->seen >= 1);
    gb_htable_clear(&ht, free_rec, NULL);
}

static void test_scan_survives_resizes(void **state)
{
    (void)state;
    scan_survives_resizes(0);
}

static void test_scan_many_survives_resizes(void **state)
{
    (void)state;
    const unsigned batches[] = {1, 3, 8, 64};
    for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++)
        scan_survives_resizes(batches[i]);
}

/* Walks ht to its end with gb_htable_scan_many in each batch size, each
 * call checked against as many gb_htable_scan steps from the same cursor. */
static void walk_in_batches(gb_htable *ht, rec **all, uint64_t n, const unsigned *batches, size_t nbatches)
{
    for (size_t bi = 0; bi < nbatches; bi++) {
        for (uint64_t k = 0; k < n; k++)
            all[k]->seen = 0;
        uint64_t cursor = 0;
        do {
            uint64_t stepped = cursor;
            for (unsigned j = 0; j < batches[bi]; j++) {
                stepped = gb_htable_scan(ht, stepped, mark_seen, NULL);
                if (!stepped)
                    break;
            }
            uint64_t many = gb_htable_scan_many(ht, cursor, batches[bi], mark_seen, NULL);
            assert_true(many == stepped);
            cursor = many;
        } while (cursor);
        /* each record: once by the reference steps, once by scan_many */
        for (uint64_t k = 0; k < n; k++)
            assert_int_equal(all[k]->seen, 2);
    }
}

/* On a table that does not change (settled, or paused mid-rehash),
 * gb_htable_scan_many(c, k) is k steps of gb_htable_scan from c (the same
 * cursor back), and a whole walk visits every record exactly once, whatever
 * the batch, including the walk's end inside a batch and batches shorter
 * than the prefetch distance. */
static void test_scan_many_is_scan_in_steps(void **state)
{
    (void)state;
    const uint64_t sizes[] = {1, 7, 100, 5000};
    const unsigned batches[] = {1, 2, 5, 8, 13, 1000};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        gb_htable ht;
        gb_htable_init(&ht, &T);
        rec **all = calloc(sizes[si], sizeof *all);
        for (uint64_t k = 0; k < sizes[si]; k++) {
            all[k] = mk(k);
            gb_htable_insert(&ht, &all[k]->node, h(k));
        }
        /* first the table as the inserts left it (mid-rehash for the
         * largest size), then settled */
        for (int settled = 0; settled < 2; settled++) {
            if (settled) {
                while (gb_htable_rehash_step(&ht, 1000))
                    ;
            } else if (sizes[si] == 5000) {
                assert_true(gb_htable_is_rehashing(&ht));
            }
            walk_in_batches(&ht, all, sizes[si], batches, sizeof batches / sizeof batches[0]);
        }
        gb_htable_clear(&ht, free_rec, NULL);
        free(all);
    }
}

static void test_random_and_iteration(void **state)
{
    (void)state;
    gb_random_seed(99);
    gb_htable ht;
    gb_htable_init(&ht, &T);
    assert_null(gb_htable_random(&ht));
    for (uint64_t k = 0; k < 100; k++)
        gb_htable_insert(&ht, &mk(k)->node, h(k));
    int hits[100] = {0};
    for (int i = 0; i < 20000; i++)
        hits[((rec *)gb_htable_random(&ht))->key]++;
    for (int i = 0; i < 100; i++)
        assert_true(hits[i] > 0);
    /* Iterate and delete the current element as we go. */
    gb_htable_iter it;
    gb_htable_iter_init(&it, &ht);
    int n = 0;
    for (gb_hnode *x; (x = gb_htable_iter_next(&it));) {
        uint64_t k = ((rec *)x)->key;
        if (k % 2 == 0)
            free(gb_htable_remove(&ht, &k, h(k)));
        n++;
    }
    gb_htable_iter_done(&it);
    assert_int_equal(n, 100);
    assert_int_equal(gb_htable_size(&ht), 50);
    gb_htable_clear(&ht, free_rec, NULL);
}

/* The cheap draw (eviction's) reaches every record and nothing that is not
 * there, before and after the table grew through a resize and lost the
 * records it grew for. */
static void test_random_cheap_reaches_every_record(void **state)
{
    (void)state;
    gb_random_seed(7);
    gb_htable ht;
    gb_htable_init(&ht, &T);
    assert_null(gb_htable_random_cheap(&ht));
    for (uint64_t k = 0; k < 300; k++)
        gb_htable_insert(&ht, &mk(k)->node, h(k));
    for (int round = 0; round < 2; round++) {
        int hits[300] = {0};
        for (int i = 0; i < 60000; i++) {
            rec *r = (rec *)gb_htable_random_cheap(&ht);
            assert_non_null(r);
            assert_true(r->key < 300);
            hits[r->key]++;
        }
        for (int i = 0; i < 300; i++)
            assert_true(hits[i] > 0);
        if (round == 0) { /* through a resize and back */
            for (uint64_t k = 300; k < 600; k++)
                gb_htable_insert(&ht, &mk(k)->node, h(k));
            for (uint64_t k = 300; k < 600; k++)
                free(gb_htable_remove(&ht, &k, h(k)));
        }
    }
    gb_htable_clear(&ht, free_rec, NULL);
}

/* The chi-square statistic's value that a uniform draw exceeds with
 * probability 1e-6, for df degrees of freedom (Wilson-Hilferty: within a
 * percent of the exact value from df 9 on, 10% above it at df 2). The generator is seeded, so a pass is a pass for
 * good; the threshold says how far from uniform a failure is. */
static double chi2_critical_1e6(double df)
{
    const double z = 4.753424; /* standard normal quantile at 1 - 1e-6 */
    double c = 1.0 - 2.0 / (9.0 * df) + z * sqrt(2.0 / (9.0 * df));
    return df * c * c * c;
}

/* Draws 200 * n records from a table of the n records in all[] and checks
 * every one comes up as often as a uniform draw would. */
static void assert_random_is_uniform(gb_htable *ht, rec **all, size_t n)
{
    size_t draws = 200 * n;
    int *hits = calloc(n, sizeof *hits);
    for (size_t i = 0; i < n; i++)
        all[i]->seen = (int)i;
    for (size_t i = 0; i < draws; i++)
        hits[((rec *)gb_htable_random(ht))->seen]++;
    double expected = (double)draws / (double)n, chi2 = 0;
    for (size_t i = 0; i < n; i++)
        chi2 += (hits[i] - expected) * (hits[i] - expected) / expected;
    double crit = chi2_critical_1e6((double)(n - 1));
    if (chi2 >= crit)
        print_error("n=%zu rehashing=%d chi2=%.1f critical=%.1f\n", n, gb_htable_is_rehashing(ht), chi2, crit);
    assert_true(chi2 < crit);
    free(hits);
}

/* The longest chain of array t, walked. */
static unsigned longest_chain(const gb_htable *ht, int t)
{
    unsigned best = 0;
    for (uint64_t b = 0; ht->tab[t] && b <= ht->mask[t]; b++) {
        unsigned len = 0;
        for (const gb_hnode *e = gb_hslot_head(ht->tab[t][b]); e; e = e->next)
            len++;
        best = len > best ? len : best;
    }
    return best;
}

/* Every bucket slot of both arrays describes its chain: an empty chain's
 * slot is all zero, the filter has every record's bit, and the length is
 * the chain's (or GB_HSLOT_LEN_UNKNOWN, then at least that many... or
 * fewer, only after removals: it is "no longer counted"). */
static void check_slots(const gb_htable *ht)
{
    for (int t = 0; t < 2; t++) {
        for (uint64_t b = 0; ht->tab[t] && b <= ht->mask[t]; b++) {
            const gb_hnode *slot = ht->tab[t][b];
            unsigned len = 0;
            for (const gb_hnode *e = gb_hslot_head(slot); e; e = e->next) {
                assert_true(gb_hslot_may_hold(slot, rec_hash(e)));
                len++;
            }
            if (len == 0)
                assert_null(slot);
            else if (gb_hslot_len(slot) != GB_HSLOT_LEN_UNKNOWN)
                assert_int_equal(gb_hslot_len(slot), len);
        }
    }
}

/* gb_htable_random is uniform over records, not over buckets: settled
 * tables of several sizes, a table in mid-rehash, and one thinned out by
 * removals (its chain bound stale, above the real longest chain). */
static void test_random_is_uniform(void **state)
{
    (void)state;
    gb_random_seed(2024);
    const size_t sizes[] = {3, 10, 100, 1000, 4097};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        gb_htable ht;
        gb_htable_init(&ht, &T);
        rec **all = calloc(n, sizeof *all);
        for (size_t k = 0; k < n; k++) {
            all[k] = mk(k);
            gb_htable_insert(&ht, &all[k]->node, h(k));
        }
        if (n == 4097) { /* the insert past 4096 started a resize */
            assert_true(gb_htable_is_rehashing(&ht));
            ht.pause_rehash++; /* keep it mid-rehash while sampling */
            assert_random_is_uniform(&ht, all, n);
            ht.pause_rehash--;
        }
        while (gb_htable_rehash_step(&ht, 1000))
            ;
        assert_random_is_uniform(&ht, all, n);
        gb_htable_clear(&ht, free_rec, NULL);
        free(all);
    }
    /* thinned: 2000 records, all but 300 removed, no shrink */
    gb_htable ht;
    gb_htable_init(&ht, &T);
    for (uint64_t k = 0; k < 2000; k++)
        gb_htable_insert(&ht, &mk(k)->node, h(k));
    while (gb_htable_rehash_step(&ht, 1000))
        ;
    rec *kept[300];
    for (uint64_t k = 0; k < 2000; k++) {
        if (k % 20 < 3)
            kept[(k / 20) * 3 + k % 20] = (rec *)gb_htable_find(&ht, &k, h(k));
        else
            free(gb_htable_remove(&ht, &k, h(k)));
    }
    assert_int_equal(gb_htable_size(&ht), 300);
    assert_random_is_uniform(&ht, kept, 300);
    gb_htable_clear(&ht, free_rec, NULL);
}

/* The chain bound random sampling relies on never falls below the real
 * longest chain of either array, through inserts, removals, growth,
 * shrinking and migration in small steps. */
static void test_chain_bound_covers_longest_chain(void **state)
{
    (void)state;
    gb_random_seed(5);
    gb_htable ht;
    gb_htable_init(&ht, &T);
    enum { N = 30000 };
    static bool present[N];
    memset(present, 0, sizeof present);
    for (int i = 0; i < 300000; i++) {
        uint64_t k = gb_random_below(i < 150000 ? N : N / 10);
        if (!present[k] && i < 150000) {
            gb_htable_insert(&ht, &mk(k)->node, h(k));
            present[k] = true;
        } else if (present[k] && i >= 100000) {
            free(gb_htable_remove(&ht, &k, h(k)));
            present[k] = false;
            gb_htable_maybe_shrink(&ht);
        }
        if ((i & 255) == 0) {
            assert_true(ht.max_chain[0] >= longest_chain(&ht, 0));
            assert_true(ht.max_chain[1] >= longest_chain(&ht, 1));
            check_slots(&ht);
        }
    }
    gb_htable_clear(&ht, free_rec, NULL);
    assert_int_equal(ht.max_chain[0], 0);
}

/* Lookups of missing keys read almost no record: the slot's filter turns
 * most of them away (each record sets one of 12 bits, so at a load near 1
 * about one lookup in ten still walks a chain), through a rehash and after
 * removals have left stale bits (a walk for nothing rebuilds the filter).
 * Without the filter every lookup into a non-empty bucket compares. */
static void test_missing_keys_read_no_records(void **state)
{
    (void)state;
    gb_htable ht;
    gb_htable_init(&ht, &COUNTED);
    enum { N = 1 << 14, PROBES = 20000 };
    for (uint64_t k = 0; k < N; k++)
        gb_htable_insert(&ht, &mk(k)->node, h(k));
    for (int phase = 0; phase < 3; phase++) {
        if (phase == 1) { /* one past the bucket count: a rehash in progress */
            gb_htable_insert(&ht, &mk(N)->node, h(N));
            assert_true(gb_htable_is_resizing(&ht));
        }
        if (phase == 2) { /* removals leave stale filter bits behind */
            while (gb_htable_is_rehashing(&ht))
                gb_htable_rehash_step(&ht, 1000);
            for (uint64_t k = 0; k < N; k += 2)
                free(gb_htable_remove(&ht, &k, h(k)));
            for (uint64_t k = 0; k < N; k += 2) /* removed keys: walks that rebuild the filters */
                assert_null(gb_htable_find(&ht, &k, h(k)));
        }
        check_slots(&ht);
        compares = 0;
        for (uint64_t k = 1u << 30; k < (1u << 30) + PROBES; k++)
            assert_null(gb_htable_find(&ht, &k, h(k)));
        /* 12 filter bits, chains of one or two records: 8-16% pass; phase
         * 2's table is at a load of 1/4 after the removals. (AddressSanitizer
         * builds keep plain slots: htable.h.) */
        if (GB_HSLOT_META)
            assert_true(compares < PROBES / 5);
        compares = 0;
        for (uint64_t k = 1; k < N; k += 2) /* present keys are all found */
            assert_non_null(gb_htable_find(&ht, &k, h(k)));
        assert_true(compares >= N / 2);
    }
    gb_htable_clear(&ht, free_rec, NULL);
}

/* gb_htable_sample_at: the chains of consecutive buckets from the start
 * it is given (masked to the table), whole chains in bucket order, the same
 * records for the same start; the prefetches ahead of it change nothing
 * (an empty table, a settled one, one in mid-rehash). */
static void test_sample_from_a_chosen_start(void **state)
{
    (void)state;
    gb_htable ht;
    gb_htable_init(&ht, &T);
    gb_hnode *out[16], *again[16];
    gb_htable_sample_prefetch_slots(&ht, 12345);
    gb_htable_sample_prefetch_records(&ht, 12345, 5);
    assert_int_equal(gb_htable_sample_at(&ht, 12345, out, 5), 0);
    enum { N = 3000 };
    for (uint64_t k = 0; k < N; k++)
        gb_htable_insert(&ht, &mk(k)->node, h(k));
    while (gb_htable_is_rehashing(&ht))
        gb_htable_rehash_step(&ht, 1000);
    uint64_t mask = ht.mask[0];
    unsigned checked = 0;
    for (uint64_t start = 0; start < 5000; start += 7) {
        /* What the sample should return: the chains from start & mask on, in
         * bucket order, up to 5 records. A stretch of 6 empty buckets first
         * makes the sample jump to a random place: such starts are skipped. */
        gb_hnode *want[16];
        size_t nwant = 0;
        unsigned empty_run = 0;
        for (uint64_t b = start & mask; nwant < 5 && empty_run < 6; b = (b + 1) & mask) {
            gb_hnode *e = gb_hslot_head(ht.tab[0][b]);
            empty_run = e ? 0 : empty_run + 1;
            for (; e && nwant < 5; e = e->next)
                want[nwant++] = e;
        }
        if (nwant < 5)
            continue;
        gb_htable_sample_prefetch_slots(&ht, start);
        gb_htable_sample_prefetch_records(&ht, start, 5);
        assert_int_equal(gb_htable_sample_at(&ht, start, out, 5), 5);
        assert_memory_equal(out, want, 5 * sizeof out[0]);
        assert_int_equal(gb_htable_sample_at(&ht, start + mask + 1, again, 5), 5); /* masked */
        assert_memory_equal(again, want, 5 * sizeof out[0]);
        checked++;
    }
    assert_true(checked > 600);
    gb_htable_insert(&ht, &mk(N)->node, h(N)); /* a rehash begins: the prefetches stand aside */
    gb_htable_insert(&ht, &mk(N + 1)->node, h(N + 1));
    if (gb_htable_is_rehashing(&ht)) {
        gb_htable_sample_prefetch_slots(&ht, 99);
        gb_htable_sample_prefetch_records(&ht, 99, 5);
    }
    assert_int_equal(gb_htable_sample_at(&ht, 99, out, 5), 5);
    gb_htable_clear(&ht, free_rec, NULL);
}

/* gb_htable_clear_step: a table torn down a slice at a time, in the middle of
 * a rehash (records in both arrays), frees every record exactly once, at
 * least max_nodes per call until the last, and ends with no array left. */
static int cleared;
static void count_free(gb_hnode *n, void *ctx)
{
    (void)ctx;
    cleared++;
    free(n);
}

static void test_clear_in_steps(void **state)
{
    (void)state;
    gb_htable ht;
    gb_htable_init(&ht, &T);
    enum { N = 10000 };
    for (uint64_t k = 0; k < N; k++) {
        gb_htable_insert(&ht, &mk(k)->node, h(k));
    }
    for (uint64_t k = N; !gb_htable_is_rehashing(&ht); k++)
        gb_htable_insert(&ht, &mk(k)->node, h(k));
    gb_htable_rehash_step(&ht, 100);
    assert_true(gb_htable_is_rehashing(&ht));
    assert_true(ht.used[0] > 0 && ht.used[1] > 0);
    size_t total = gb_htable_size(&ht);
    uint64_t cursor = 0;
    int calls = 0;
    cleared = 0;
    for (;;) {
        int before = cleared;
        bool done = gb_htable_clear_step(&ht, count_free, NULL, &cursor, 100);
        calls++;
        if (done)
            break;
        assert_true(cleared - before >= 100);
    }
    assert_int_equal((size_t)cleared, total);
    assert_true(calls >= (int)(total / 100) / 2);
    assert_null(ht.tab[0]);
    assert_null(ht.tab[1]);
    assert_null(ht.next_tab);
    assert_int_equal(gb_htable_size(&ht), 0);
    /* an empty table is done at once, and usable again afterwards */
    cursor = 0;
    assert_true(gb_htable_clear_step(&ht, count_free, NULL, &cursor, 1));
    gb_htable_insert(&ht, &mk(1)->node, h(1));
    uint64_t k1 = 1;
    assert_non_null(gb_htable_find(&ht, &k1, h(1)));
    gb_htable_clear(&ht, free_rec, NULL);
}

int main(void)
{
    gb_hash_seed_once(12345);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insert_find_remove_model),
        cmocka_unit_test(test_rehash_is_incremental),
        cmocka_unit_test(test_big_arrays_are_prepared_in_slices),
        cmocka_unit_test(test_scan_survives_resizes),
        cmocka_unit_test(test_scan_many_survives_resizes),
        cmocka_unit_test(test_scan_many_is_scan_in_steps),
        cmocka_unit_test(test_random_and_iteration),
        cmocka_unit_test(test_random_cheap_reaches_every_record),
        cmocka_unit_test(test_random_is_uniform),
        cmocka_unit_test(test_chain_bound_covers_longest_chain),
        cmocka_unit_test(test_clear_in_steps),
        cmocka_unit_test(test_missing_keys_read_no_records),
        cmocka_unit_test(test_sample_from_a_chosen_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
