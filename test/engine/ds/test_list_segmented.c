/*
 * Tests of the segmented list representation (engine/ds/list_segmented.c):
 * the shared public-API edge cases on one-entry leaves (fill 1) and on byte
 * limited leaves, then leaf-level behaviour through the internal interface:
 * leaf boundaries, splits and isolation of oversized values, counted pops
 * that drop whole leaves, leaf merging after LREM, the access hint, rotation
 * inside one leaf and across leaves, and memory per element.
 */
#include "list_test_common.h"

#include "engine/ds/list_impl.h"
#include "engine/ds/listpack.h"

static gb_list_limit lim_count(uint32_t n)
{
    gb_list_limit l = {n, GB_LIST_SAFETY_BYTES};
    return l;
}

static gb_slice num(char *buf, size_t i) { return gb_slice_make(buf, (size_t)snprintf(buf, 24, "n%zu", i)); }

static void expect_seq(gb_list_seg *s, const size_t *want, size_t n)
{
    assert_true(gb_list_seg_verify(s));
    assert_int_equal(gb_list_seg_len(s), n);
    char buf[24], ib[GB_LP_INT_BUF];
    for (size_t i = 0; i < n; i++) {
        gb_slice v;
        gb_list_seg_get(s, i, ib, &v);
        assert_true(gb_slice_eq(v, num(buf, want[i])));
    }
}

/* Leaves of 4: every index, inserts at and between leaf boundaries. */
static void test_leaf_boundaries(void **state)
{
    (void)state;
    gb_list_seg *s = gb_list_seg_new(lim_count(4));
    size_t model[200], n = 0;
    char buf[24];
    for (size_t i = 0; i < 100; i++) {
        gb_list_seg_push(s, GB_LIST_TAIL, num(buf, i));
        model[n++] = i;
    }
    assert_int_equal(gb_list_seg_leaves(s), 25);
    expect_seq(s, model, n);
    /* insert at every position class: leaf start, leaf end, middle */
    size_t at[] = {0, 4, 8, 3, 5, 50, 51, 52, 103, 104, 1};
    for (size_t k = 0; k < GB_ARRAY_LEN(at); k++) {
        size_t pos = at[k] <= n ? at[k] : n;
        gb_list_seg_insert_at(s, pos, num(buf, 1000 + k));
        memmove(model + pos + 1, model + pos, (n - pos) * sizeof model[0]);
        model[pos] = 1000 + k;
        n++;
        expect_seq(s, model, n);
    }
    gb_list_seg_free(s);
}

/* A value too big for a full leaf gets a leaf of its own (split around it). */
static void test_oversized_set_isolates(void **state)
{
    (void)state;
    gb_list_limit lim = gb_list_limit_from_fill(-1); /* 4 KiB leaves */
    gb_list_seg *s = gb_list_seg_new(lim);
    char buf[24], ib[GB_LP_INT_BUF];
    for (size_t i = 0; i < 2000; i++)
        gb_list_seg_push(s, GB_LIST_TAIL, num(buf, i));
    size_t leaves = gb_list_seg_leaves(s);
    static char big[10000];
    memset(big, 'Z', sizeof big);
    gb_list_seg_set(s, 1000, gb_slice_make(big, sizeof big));
    assert_true(gb_list_seg_verify(s));
    assert_true(gb_list_seg_leaves(s) >= leaves + 1 && gb_list_seg_leaves(s) <= leaves + 2);
    gb_slice v;
    gb_list_seg_get(s, 1000, ib, &v);
    assert_int_equal(v.len, sizeof big);
    gb_list_seg_get(s, 999, ib, &v);
    assert_true(gb_slice_eq(v, num(buf, 999)));
    gb_list_seg_get(s, 1001, ib, &v);
    assert_true(gb_slice_eq(v, num(buf, 1001)));
    /* and growing a value inside a full leaf splits it */
    gb_list_seg_set(s, 10, gb_slice_make(big, 3000));
    assert_true(gb_list_seg_verify(s));
    gb_list_seg_get(s, 10, ib, &v);
    assert_int_equal(v.len, 3000);
    gb_list_seg_free(s);
}

/* Counted pops drop whole leaves and move one boundary. */
static void test_counted_pop_drops_leaves(void **state)
{
    (void)state;
    gb_list_seg *s = gb_list_seg_new(lim_count(10));
    char buf[24];
    for (size_t i = 0; i < 1000; i++)
        gb_list_seg_push(s, GB_LIST_TAIL, num(buf, i));
    assert_int_equal(gb_list_seg_leaves(s), 100);
    assert_int_equal(gb_list_seg_pop(s, GB_LIST_HEAD, 255, NULL, NULL), 255);
    assert_int_equal(gb_list_seg_leaves(s), 75); /* 25 leaves gone, one partial */
    assert_int_equal(gb_list_seg_pop(s, GB_LIST_TAIL, 31, NULL, NULL), 31);
    assert_int_equal(gb_list_seg_leaves(s), 72);
    size_t model[1000];
    for (size_t i = 0; i < 714; i++)
        model[i] = 255 + i;
    expect_seq(s, model, 714);
    assert_int_equal(gb_list_seg_pop(s, GB_LIST_TAIL, 5000, NULL, NULL), 714);
    assert_int_equal(gb_list_seg_leaves(s), 0);
    assert_true(gb_list_seg_verify(s));
    gb_list_seg_push(s, GB_LIST_HEAD, num(buf, 7)); /* reusable when empty */
    model[0] = 7;
    expect_seq(s, model, 1);
    gb_list_seg_free(s);
}

/* LREM leaves fewer, merged leaves, from either direction. */
static void test_remove_merges(void **state)
{
    (void)state;
    for (int dir = 0; dir < 2; dir++) {
        gb_list_seg *s = gb_list_seg_new(lim_count(16));
        char buf[24];
        size_t model[1600], n = 0;
        for (size_t i = 0; i < 1600; i++) {
            bool drop = i % 4 != 0;
            gb_list_seg_push(s, GB_LIST_TAIL, drop ? S("drop") : num(buf, i));
            if (!drop)
                model[n++] = i;
        }
        assert_int_equal(gb_list_seg_leaves(s), 100);
        /* a bounded removal touches only the scanned side */
        assert_int_equal(gb_list_seg_remove(s, S("drop"), dir ? -30 : 30), 30);
        assert_true(gb_list_seg_verify(s));
        assert_int_equal(gb_list_seg_remove(s, S("drop"), 0), 1200 - 30);
        expect_seq(s, model, n);
        assert_true(gb_list_seg_leaves(s) <= 30); /* 400 values in leaves of 16 */
        gb_list_seg_free(s);
    }
}

/* The access hint follows edits: same-size sets keep it, the rest drop it. */
static void test_access_hint(void **state)
{
    (void)state;
    gb_list_seg *s = gb_list_seg_new(gb_list_limit_from_fill(-2));
    char buf[24], ib[GB_LP_INT_BUF];
    size_t model[5000], n = 0;
    for (size_t i = 0; i < 3000; i++) {
        gb_list_seg_push(s, GB_LIST_TAIL, num(buf, i));
        model[n++] = i;
    }
    gb_slice v;
    for (size_t k = 0; k < 400; k++) {
        size_t i = (1500 + k * 7) % n;
        gb_list_seg_get(s, i, ib, &v);
        assert_true(gb_slice_eq(v, num(buf, model[i])));
        switch (k % 5) {
        case 0: /* same size */
            gb_list_seg_set(s, i, num(buf, model[i] + 1000000 * 0));
            break;
        case 1: /* other size */
            model[i] = k % 2 ? 7 : 123456789;
            gb_list_seg_set(s, i, num(buf, model[i]));
            break;
        case 2:
            gb_list_seg_push(s, GB_LIST_HEAD, num(buf, 42));
            memmove(model + 1, model, n * sizeof model[0]);
            model[0] = 42;
            n++;
            break;
        case 3:
            gb_list_seg_pop(s, GB_LIST_HEAD, 1, NULL, NULL);
            memmove(model, model + 1, (n - 1) * sizeof model[0]);
            n--;
            break;
        default:
            gb_list_seg_get(s, i + 1 < n ? i + 1 : 0, ib, &v);
        }
    }
    expect_seq(s, model, n);
    gb_list_seg_free(s);
}

/* Rotation inside a single leaf (through its free space) and across leaves. */
static void test_rotation(void **state)
{
    (void)state;
    for (uint32_t fill = 2; fill <= 64; fill *= 4) {
        gb_list_seg *s = gb_list_seg_new(lim_count(fill));
        char buf[24];
        size_t model[40], n = 0;
        for (size_t i = 0; i < (fill == 64 ? 20 : 9); i++) {
            gb_list_seg_push(s, GB_LIST_TAIL, num(buf, i));
            model[n++] = i;
        }
        for (size_t t = 0; t < 50; t++) {
            bool from_tail = (t / 3) % 2;
            gb_list_seg_rotate(s, from_tail ? GB_LIST_TAIL : GB_LIST_HEAD);
            if (from_tail) {
                size_t x = model[n - 1];
                memmove(model + 1, model, (n - 1) * sizeof model[0]);
                model[0] = x;
            } else {
                size_t x = model[0];
                memmove(model, model + 1, (n - 1) * sizeof model[0]);
                model[n - 1] = x;
            }
            expect_seq(s, model, n);
        }
        gb_list_seg_free(s);
    }
}

/* Memory per element, 1,000,000 10-byte strings: one listpack entry (12
 * bytes) plus leaf overhead, which must stay a small fraction of a byte
 * (Redis: the same entries plus a 32-byte node and 7-byte header per 8 KiB). */
static void test_memory_per_element(void **state)
{
    (void)state;
    gb_list_config c = {-2, GB_LIST_SEGMENTED};
    gb_list *l = gb_list_new(&c);
    char buf[24];
    for (size_t i = 0; i < 1000000; i++) {
        gb_slice v = gb_slice_make(buf, (size_t)snprintf(buf, sizeof buf, "v:%08zu", i));
        gb_list_push(l, i % 2 ? GB_LIST_TAIL : GB_LIST_HEAD, &v, 1);
    }
    double per = (double)gb_list_mem_usage(l) / 1e6;
    fprintf(stderr, "  segmented: %.3f bytes per 10-byte value\n", per);
    assert_true(per >= 12.0 && per < 12.2);
    gb_list_free(l);
}

static int setup_fill1(void **state)
{
    (void)state;
    g_cfg.max_listpack_size = 1;
    g_cfg.large_impl = GB_LIST_SEGMENTED;
    g_large_name = "segmented";
    g_name_from = 2;
    return 0;
}

static int setup_fill3(void **state)
{
    (void)state;
    g_cfg.max_listpack_size = 3; /* leaves of up to 3 values */
    g_cfg.large_impl = GB_LIST_SEGMENTED;
    g_large_name = "segmented";
    g_name_from = 4;
    return 0;
}

int main(void)
{
    const struct CMUnitTest common[] = {LIST_COMMON_TESTS};
    const struct CMUnitTest own[] = {
        cmocka_unit_test(test_leaf_boundaries),    cmocka_unit_test(test_oversized_set_isolates),
        cmocka_unit_test(test_counted_pop_drops_leaves), cmocka_unit_test(test_remove_merges),
        cmocka_unit_test(test_access_hint),        cmocka_unit_test(test_rotation),
        cmocka_unit_test(test_memory_per_element),
    };
    int rc = cmocka_run_group_tests_name("segmented fill=1", common, setup_fill1, NULL);
    rc += cmocka_run_group_tests_name("segmented fill=3", common, setup_fill3, NULL);
    rc += cmocka_run_group_tests_name("segmented internals", own, NULL, NULL);
    return rc;
}
