/* gb_zset_scan_scores (the geo searches' walk, engine/ds/zset.h) against
 * gb_zset_range_score over [min, max): the same entries in the same order,
 * in both representations, with SKIP, EMIT and STOP answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/ds/zset.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

typedef struct seen {
    double score[4096];
    char member[4096][16];
    size_t n;
    size_t wanted;  /* calls of want */
    size_t stop_at; /* want answers STOP at this call (0: never) */
    int skip_mod;   /* want skips every entry whose call number % skip_mod == 1 */
} seen;

static void record(void *ctx, gb_slice m, double s)
{
    seen *v = ctx;
    assert_true(v->n < 4096 && m.len < 16);
    v->score[v->n] = s;
    memcpy(v->member[v->n], m.ptr, m.len);
    v->member[v->n][m.len] = '\0';
    v->n++;
}

static int want(void *ctx, double s)
{
    (void)s;
    seen *v = ctx;
    v->wanted++;
    if (v->stop_at && v->wanted == v->stop_at)
        return GB_ZSCAN_STOP;
    return v->skip_mod && v->wanted % (size_t)v->skip_mod == 1 ? GB_ZSCAN_SKIP : GB_ZSCAN_EMIT;
}

static void check_set(gb_zset *z)
{
    for (int round = 0; round < 300; round++) {
        double a = (double)(rnd() % 1200), b = a + (double)(rnd() % 400);
        seen ref = {0}, got = {0};
        gb_score_range r = {.min = a, .max = b, .minex = false, .maxex = true};
        gb_zset_range_score(z, &r, false, 0, -1, record, &ref);
        got.skip_mod = round % 3 == 0 ? 0 : 2 + (int)(rnd() % 3);
        got.stop_at = round % 5 == 0 ? 1 + rnd() % 20 : 0;
        gb_zset_scan_scores(z, a, b, want, record, &got);
        /* got holds ref's entries minus the skipped ones, up to the stop. */
        size_t j = 0, calls = 0;
        for (size_t i = 0; i < ref.n; i++) {
            calls++;
            if (got.stop_at && calls == got.stop_at)
                break;
            if (got.skip_mod && calls % (size_t)got.skip_mod == 1)
                continue;
            assert_true(j < got.n);
            assert_true(got.score[j] == ref.score[i]);
            assert_string_equal(got.member[j], ref.member[i]);
            j++;
        }
        assert_int_equal(j, got.n);
    }
}

static void fill_and_check(size_t max_entries)
{
    gb_types_config cfg;
    gb_types_config_defaults(&cfg);
    cfg.zset_max_listpack_entries = max_entries;
    gb_zset *z = gb_zset_new(&cfg, 0, 0);
    for (int i = 0; i < 1000; i++) {
        char name[16];
        int n = snprintf(name, sizeof name, "m%d", (int)(rnd() % 5000));
        double s = (double)(rnd() % 1500) + (rnd() % 4 == 0 ? 0.5 : 0); /* many ties */
        gb_slice m = gb_slice_make(name, (size_t)n);
        gb_zadd_result res;
        gb_zset_add_many(z, &cfg, 0, 1, &s, &m, &res);
    }
    assert_int_equal(gb_zset_encoding(z), max_entries >= 1000 ? GB_ZSET_LISTPACK : GB_ZSET_BTREE);
    check_set(z);
    gb_zset_free(z);
}

static void test_listpack(void **state)
{
    (void)state;
    fill_and_check(5000);
}

static void test_tree(void **state)
{
    (void)state;
    fill_and_check(16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listpack),
        cmocka_unit_test(test_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
