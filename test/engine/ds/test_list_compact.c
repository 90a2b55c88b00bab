/*
 * Tests of the compact list representation (engine/ds/list_compact.c) and of
 * the conversions list.c makes around it: list-max-listpack-size in its
 * count and byte forms, Redis's 8 KiB safety limit, conversion to the large
 * representation and back with hysteresis, and the in-place rotation.
 */
#include "list_test_common.h"

#include "engine/ds/list_impl.h"
#include "engine/ds/listpack.h"

static gb_list *with(int fill, gb_list_impl impl)
{
    gb_list_config c = {fill, impl};
    return gb_list_new(&c);
}

static void push_n(gb_list *l, gb_list_end end, size_t n, size_t len)
{
    static char buf[70000];
    for (size_t i = 0; i < n; i++) {
        memset(buf, 'a' + (int)(i % 26), len);
        gb_slice v = gb_slice_make(buf, len);
        gb_list_push(l, end, &v, 1);
    }
}

/* Count limit: N entries stay compact, N + 1 converts; back at N/2. */
static void test_count_limit_hysteresis(void **state)
{
    (void)state;
    for (int impl = 0; impl < 2; impl++) {
        gb_list *l = with(8, (gb_list_impl)impl);
        push_n(l, GB_LIST_TAIL, 8, 3);
        assert_int_equal(gb_list_encoding_of(l), GB_LIST_ENC_COMPACT);
        push_n(l, GB_LIST_HEAD, 1, 3);
        assert_int_equal(gb_list_encoding_of(l),
                         impl ? GB_LIST_ENC_PMA : GB_LIST_ENC_SEGMENTED);
        assert_string_equal(gb_list_representation_name(l), impl ? "pma" : "segmented");
        /* 9 -> 5: still large (5 > 8/2): no flapping at the boundary */
        for (int i = 0; i < 4; i++) {
            gb_list_pop(l, GB_LIST_TAIL, 1, NULL, NULL);
            assert_int_not_equal(gb_list_encoding_of(l), GB_LIST_ENC_COMPACT);
            assert_true(gb_list_verify(l));
        }
        push_n(l, GB_LIST_TAIL, 1, 3); /* large lists stay large while growing */
        gb_list_pop(l, GB_LIST_HEAD, 2, NULL, NULL);
        assert_int_equal(gb_list_len(l), 4);
        assert_int_equal(gb_list_encoding_of(l), GB_LIST_ENC_COMPACT);
        assert_true(gb_list_verify(l));
        gb_list_free(l);
    }
}

/* Byte limits -1..-5 = 4..64 KiB of listpack, back under half. */
static void test_byte_limits(void **state)
{
    (void)state;
    for (int level = 1; level <= 5; level++) {
        size_t limit = (size_t)4096 << (level - 1);
        gb_list *l = with(-level, GB_LIST_SEGMENTED);
        size_t per = gb_lp_entry_size(gb_slice_make("xxxxxxxxxx", 100)); /* 100-byte value */
        size_t fit = (limit - 9) / per;
        push_n(l, GB_LIST_TAIL, fit, 100);
        assert_int_equal(gb_list_encoding_of(l), GB_LIST_ENC_COMPACT);
        push_n(l, GB_LIST_TAIL, 1, 100);
        assert_int_equal(gb_list_encoding_of(l), GB_LIST_ENC_SEGMENTED);
        /* a segmented leaf obeys the same limit */
        assert_true(gb_list_verify(l));
        size_t half = (limit / 2 - 9) / per;
        gb_list_trim(l, 0, (long long)half); /* half + 1 values: still over half */
        assert_int_equal(gb_list_encoding_of(l), GB_LIST_ENC_SEGMENTED);
        gb_list_pop(l, GB_LIST_TAIL, 1, NULL, NULL);
        assert_int_equal(gb_list_encoding_of(l), GB_LIST_ENC_COMPACT);
        assert_int_equal(gb_list_len(l), half);
        assert_true(gb_list_verify(l));
        gb_list_free(l);
    }
    /* below -5 means -5; 0 means 1 */
    gb_list *l = with(-100, GB_LIST_SEGMENTED);
    push_n(l, GB_LIST_TAIL, 600, 100);
    assert_int_equal(gb_list_encoding_of(l), GB_LIST_ENC_COMPACT);
    gb_list_free(l);
    l = with(0, GB_LIST_PMA);
    push_n(l, GB_LIST_TAIL, 1, 1);
    assert_int_equal(gb_list_encoding_of(l), GB_LIST_ENC_COMPACT);
    push_n(l, GB_LIST_TAIL, 1, 1);
    assert_int_equal(gb_list_encoding_of(l), GB_LIST_ENC_PMA);
    gb_list_free(l);
}

/* Positive counts still respect Redis's 8 KiB safety limit. */
static void test_safety_limit(void **state)
{
    (void)state;
    gb_list *l = with(1000, GB_LIST_SEGMENTED);
    push_n(l, GB_LIST_TAIL, 40, 200); /* 40 * 204 + 9 = 8169 bytes */
    assert_int_equal(gb_list_encoding_of(l), GB_LIST_ENC_COMPACT);
    push_n(l, GB_LIST_TAIL, 1, 200);
    assert_int_equal(gb_list_encoding_of(l), GB_LIST_ENC_SEGMENTED);
    assert_true(gb_list_verify(l));
    gb_list_free(l);
}

/* A value bigger than the limit makes the list large at once; LSET and
 * LINSERT that outgrow the limit convert too, preserving content. */
static void test_growth_by_set_and_insert(void **state)
{
    (void)state;
    static char big[5000];
    memset(big, 'B', sizeof big);
    gb_slice b = gb_slice_make(big, sizeof big);
    for (int impl = 0; impl < 2; impl++) {
        gb_list *l = with(-1, (gb_list_impl)impl);
        gb_list_push(l, GB_LIST_TAIL, &b, 1);
        assert_int_not_equal(gb_list_encoding_of(l), GB_LIST_ENC_COMPACT);
        assert_true(gb_list_verify(l));
        gb_list_free(l);

        const char *v[] = {"a", "12", "b"};
        l = with(-1, (gb_list_impl)impl);
        for (int i = 0; i < 3; i++)
            gb_list_push(l, GB_LIST_TAIL, (gb_slice[]){S(v[i])}, 1);
        assert_true(gb_list_set(l, 1, b));
        assert_int_not_equal(gb_list_encoding_of(l), GB_LIST_ENC_COMPACT);
        char ib[GB_LIST_INT_BUF];
        gb_slice x;
        assert_true(gb_list_index(l, 1, ib, &x) && gb_slice_eq(x, b));
        /* setting it small again brings the list back (3 small values) */
        assert_true(gb_list_set(l, 1, S("12")));
        assert_int_equal(gb_list_encoding_of(l), GB_LIST_ENC_COMPACT);
        assert_true(gb_list_index(l, 1, ib, &x) && gb_slice_eq(x, S("12")));
        assert_int_equal(gb_list_insert(l, true, S("12"), b), 4);
        assert_int_not_equal(gb_list_encoding_of(l), GB_LIST_ENC_COMPACT);
        assert_true(gb_list_index(l, 2, ib, &x) && gb_slice_eq(x, b));
        assert_true(gb_list_index(l, 3, ib, &x) && gb_slice_eq(x, S("b")));
        assert_true(gb_list_verify(l));
        gb_list_free(l);
    }
}

/* Conversions keep every value byte-exact, integers included. */
static void test_conversion_roundtrip(void **state)
{
    (void)state;
    for (int impl = 0; impl < 2; impl++) {
        gb_list *l = with(64, (gb_list_impl)impl);
        char bufs[100][32];
        gb_slice vals[100];
        for (int i = 0; i < 100; i++) {
            int n = i % 4 == 0   ? snprintf(bufs[i], 32, "%d", i * -7919)
                    : i % 4 == 1 ? snprintf(bufs[i], 32, "0%d", i)
                    : i % 4 == 2 ? snprintf(bufs[i], 32, "%c%cnul", 0, i)
                                 : snprintf(bufs[i], 32, "%lld", (long long)INT64_MAX - i);
            if (i % 4 == 2)
                n = 5;
            vals[i] = gb_slice_make(bufs[i], (size_t)n);
        }
        gb_list_push(l, GB_LIST_TAIL, vals, 100);
        assert_int_not_equal(gb_list_encoding_of(l), GB_LIST_ENC_COMPACT);
        gb_list_pop(l, GB_LIST_HEAD, 68, NULL, NULL);
        assert_int_equal(gb_list_encoding_of(l), GB_LIST_ENC_COMPACT);
        char ib[GB_LIST_INT_BUF];
        gb_slice x;
        for (int i = 0; i < 32; i++)
            assert_true(gb_list_index(l, i, ib, &x) && gb_slice_eq(x, vals[68 + i]));
        gb_list_free(l);
    }
}

/* Rotation moves entries inside the listpack; entries of every size class. */
static void test_rotation_bytes(void **state)
{
    (void)state;
    static char big[70000];
    memset(big, 'R', sizeof big);
    gb_slice vals[] = {S("1"), S("-300"), gb_slice_make(big, 70), gb_slice_make(big, 5000),
                       S("x"), gb_slice_make(big, 70000), S("9223372036854775807")};
    size_t n = GB_ARRAY_LEN(vals);
    unsigned char *lp = gb_lp_new(0);
    for (size_t i = 0; i < n; i++)
        lp = gb_lp_append(lp, vals[i]);
    for (size_t turn = 0; turn < 2 * n + 3; turn++) {
        gb_list_compact_rotate(&lp, turn % 3 ? GB_LIST_TAIL : GB_LIST_HEAD);
        assert_true(gb_lp_validate(lp, gb_lp_bytes(lp)));
        assert_int_equal(gb_lp_count(lp), n);
    }
    /* net: (2n+3) turns, one in three head->tail: check against a model */
    size_t order[16];
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t turn = 0; turn < 2 * n + 3; turn++) {
        if (turn % 3) { /* tail -> head */
            size_t t = order[n - 1];
            memmove(order + 1, order, (n - 1) * sizeof order[0]);
            order[0] = t;
        } else {
            size_t h = order[0];
            memmove(order, order + 1, (n - 1) * sizeof order[0]);
            order[n - 1] = h;
        }
    }
    char ib[GB_LP_INT_BUF];
    unsigned char *p = gb_lp_first(lp);
    for (size_t i = 0; i < n; i++, p = gb_lp_next(lp, p))
        assert_true(gb_slice_eq(gb_lp_get_slice(p, ib), vals[order[i]]));
    gb_lp_free(lp);
}

static void test_encoding_and_memory(void **state)
{
    (void)state;
    gb_list *l = gb_list_new(NULL); /* the default config */
    assert_string_equal(gb_list_representation_name(l), "listpack");
    size_t m0 = gb_list_mem_usage(l);
    push_n(l, GB_LIST_TAIL, 100, 10);
    assert_true(gb_list_mem_usage(l) > m0 + 100 * 12);
    assert_string_equal(gb_list_representation_name(l), "listpack");
    push_n(l, GB_LIST_TAIL, 1000, 10); /* past 8 KiB: default large is segmented */
    assert_string_equal(gb_list_representation_name(l), "segmented");
    gb_list_free(l);
}

static int setup(void **state)
{
    (void)state;
    g_cfg.max_listpack_size = -5;
    g_cfg.large_impl = GB_LIST_SEGMENTED;
    g_large_name = "listpack";
    g_name_from = 0;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LIST_COMMON_TESTS,
        cmocka_unit_test(test_count_limit_hysteresis),
        cmocka_unit_test(test_byte_limits),
        cmocka_unit_test(test_safety_limit),
        cmocka_unit_test(test_growth_by_set_and_insert),
        cmocka_unit_test(test_conversion_roundtrip),
        cmocka_unit_test(test_rotation_bytes),
        cmocka_unit_test(test_encoding_and_memory),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
