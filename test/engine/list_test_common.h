/*
 * Public-API tests of engine/ds/list.h shared by test_list_compact.c,
 * test_list_segmented.c and test_list_pma.c. Each of those sets g_cfg (and
 * g_large_name, the encoding lists of two or more values must have) before
 * running LIST_COMMON_TESTS, so the same edge cases run on every
 * representation: empty and one-value lists, negative and out-of-range
 * indexes, rotation, counted pops past the end, binary values with NULs,
 * empty strings, integer-looking values and 1 MiB values.
 */
#ifndef GB_TEST_LIST_COMMON_H
#define GB_TEST_LIST_COMMON_H

#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/ds/list.h"
#include "engine/base/mem.h"

static gb_list_config g_cfg;
static const char *g_large_name; /* encoding expected once len >= g_name_from */
static size_t g_name_from = 2;

static gb_slice S(const char *s) { return gb_slice_cstr(s); }

static gb_list *mk(const char *const *vals, size_t n)
{
    gb_list *l = gb_list_new(&g_cfg);
    for (size_t i = 0; i < n; i++)
        gb_list_push(l, GB_LIST_TAIL, (gb_slice[]){S(vals[i])}, 1);
    return l;
}

/* Collects values (copies) and indexes. */
typedef struct got {
    char *v[64];
    size_t len[64];
    size_t idx[64];
    size_t n;
} got;

static void got_add(got *g, gb_slice v, size_t i)
{
    assert_true(g->n < 64);
    g->v[g->n] = malloc(v.len + 1);
    memcpy(g->v[g->n], v.ptr, v.len);
    g->v[g->n][v.len] = 0;
    g->len[g->n] = v.len;
    g->idx[g->n++] = i;
}
static void got_free(got *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->v[i]);
    g->n = 0;
}
static void got_emit(void *ctx, gb_slice v) { got_add(ctx, v, 0); }
static bool got_visit(void *ctx, size_t i, gb_slice v)
{
    got_add(ctx, v, i);
    return true;
}
static bool got_visit_first3(void *ctx, size_t i, gb_slice v)
{
    got_add(ctx, v, i);
    return ((got *)ctx)->n < 3;
}
static void got_pos(void *ctx, size_t i) { got_add(ctx, gb_slice_make("", 0), i); }

static void expect(gb_list *l, const char *const *want, size_t n)
{
    assert_int_equal(gb_list_len(l), n);
    assert_true(gb_list_verify(l));
    char buf[GB_LIST_INT_BUF];
    for (size_t i = 0; i < n; i++) {
        gb_slice v;
        assert_true(gb_list_index(l, (long long)i, buf, &v));
        assert_int_equal(v.len, strlen(want[i]));
        assert_memory_equal(v.ptr, want[i], v.len);
    }
    if (n >= g_name_from) {
        assert_string_equal(gb_list_representation_name(l), g_large_name);
        assert_string_equal(gb_list_encoding_name(l), "quicklist"); /* OBJECT ENCODING, as Redis 7.0 */
    }
}

static void expect_got(const got *g, const char *const *want, size_t n)
{
    assert_int_equal(g->n, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(g->v[i], want[i]);
}

/* ---- tests ---- */

static void t_empty_and_single(void **state)
{
    (void)state;
    size_t mem0 = gb_mem_used();
    gb_list *l = gb_list_new(&g_cfg);
    char buf[GB_LIST_INT_BUF];
    gb_slice v;
    got g = {0};
    assert_int_equal(gb_list_len(l), 0);
    assert_false(gb_list_index(l, 0, buf, &v));
    assert_false(gb_list_index(l, -1, buf, &v));
    assert_false(gb_list_set(l, 0, S("x")));
    assert_int_equal(gb_list_range(l, 0, -1, false, got_visit, &g), 0);
    assert_int_equal(gb_list_range_len(l, 0, -1), 0);
    assert_int_equal(gb_list_pop(l, GB_LIST_HEAD, 5, got_emit, &g), 0);
    assert_false(gb_list_move(l, GB_LIST_HEAD, l, GB_LIST_TAIL, got_emit, &g));
    assert_int_equal(gb_list_insert(l, false, S("p"), S("x")), -1);
    assert_int_equal(gb_list_pos(l, S("x"), 1, 0, 0, got_pos, &g), 0);
    assert_int_equal(gb_list_remove(l, S("x"), 0), 0);
    gb_list_trim(l, 0, -1);
    assert_int_equal(g.n, 0);
    assert_string_equal(gb_list_representation_name(l), "listpack");
    assert_true(gb_list_verify(l));

    /* one value, reached through a large list when the config allows */
    gb_list_push(l, GB_LIST_TAIL, (gb_slice[]){S("a"), S("b")}, 2);
    assert_int_equal(gb_list_pop(l, GB_LIST_TAIL, 1, NULL, NULL), 1);
    assert_int_equal(gb_list_len(l), 1);
    assert_true(gb_list_verify(l));
    assert_true(gb_list_index(l, 0, buf, &v) && gb_slice_eq(v, S("a")));
    assert_true(gb_list_index(l, -1, buf, &v) && gb_slice_eq(v, S("a")));
    assert_false(gb_list_index(l, 1, buf, &v));
    assert_false(gb_list_index(l, -2, buf, &v));
    assert_true(gb_list_move(l, GB_LIST_TAIL, l, GB_LIST_HEAD, got_emit, &g));
    assert_true(gb_list_move(l, GB_LIST_HEAD, l, GB_LIST_HEAD, got_emit, &g));
    const char *w[] = {"a", "a"};
    expect_got(&g, w, 2);
    got_free(&g);
    assert_int_equal(gb_list_pos(l, S("a"), -1, 0, 0, got_pos, &g), 1);
    assert_int_equal(g.idx[0], 0);
    got_free(&g);
    assert_int_equal(gb_list_pop(l, GB_LIST_HEAD, 100, got_emit, &g), 1);
    assert_int_equal(gb_list_len(l), 0);
    assert_true(gb_list_verify(l));
    got_free(&g);
    assert_true(gb_list_mem_usage(l) > 0);
    gb_list_free(l);
    assert_int_equal(gb_mem_used(), mem0);
}

static void t_push_order(void **state)
{
    (void)state;
    gb_list *l = gb_list_new(&g_cfg);
    assert_int_equal(gb_list_push(l, GB_LIST_HEAD, (gb_slice[]){S("a"), S("b"), S("c")}, 3), 3);
    assert_int_equal(gb_list_push(l, GB_LIST_TAIL, (gb_slice[]){S("x"), S("y")}, 2), 5);
    assert_int_equal(gb_list_push(l, GB_LIST_HEAD, NULL, 0), 5);
    const char *w[] = {"c", "b", "a", "x", "y"};
    expect(l, w, 5);
    gb_list_free(l);
}

static void t_index_and_set(void **state)
{
    (void)state;
    enum { N = 300 };
    static char vals[N][16];
    const char *pv[N];
    for (int i = 0; i < N; i++) {
        snprintf(vals[i], sizeof vals[i], i % 3 ? "v%d" : "%d", i * 37 - 100);
        pv[i] = vals[i];
    }
    gb_list *l = mk(pv, N);
    char buf[GB_LIST_INT_BUF];
    gb_slice v;
    for (long long i = -N - 3; i < N + 3; i++) {
        bool ok = gb_list_index(l, i, buf, &v);
        long long at = i < 0 ? i + N : i;
        assert_int_equal(ok, at >= 0 && at < N);
        if (ok)
            assert_true(gb_slice_eq(v, S(pv[at])));
    }
    assert_false(gb_list_index(l, LLONG_MIN, buf, &v));
    assert_false(gb_list_index(l, LLONG_MAX, buf, &v));
    assert_false(gb_list_set(l, N, S("x")));
    assert_false(gb_list_set(l, -N - 1, S("x")));
    /* sets of every size class at the ends, the middle and negative indexes */
    static char longer[200];
    memset(longer, 'L', sizeof longer - 1);
    const char *repl[] = {"", "7", "-123456789012", longer, "0123", "s"};
    for (int k = 0; k < 60; k++) {
        long long i = (k * 97) % N - (k % 2 ? N : 0);
        const char *r = repl[k % 6];
        assert_true(gb_list_set(l, i, S(r)));
        pv[i < 0 ? i + N : i] = r;
        if (k % 10 == 0)
            expect(l, pv, N);
    }
    expect(l, pv, N);
    gb_list_free(l);
}

static void t_range(void **state)
{
    (void)state;
    const char *v[] = {"a", "b", "c", "d", "e", "f"};
    gb_list *l = mk(v, 6);
    got g = {0};
    static const struct {
        long long s, e;
        size_t first, n;
    } cases[] = {{0, -1, 0, 6}, {1, 3, 1, 3}, {-3, -1, 3, 3}, {-100, 1, 0, 2}, {4, 100, 4, 2},
                 {3, 2, 0, 0},  {6, 9, 0, 0}, {-1, -2, 0, 0}, {-7, -7, 0, 0},  {5, 5, 5, 1},
                 {LLONG_MIN, LLONG_MAX, 0, 6}};
    for (size_t c = 0; c < GB_ARRAY_LEN(cases); c++) {
        for (int rev = 0; rev < 2; rev++) {
            size_t n = gb_list_range(l, cases[c].s, cases[c].e, rev, got_visit, &g);
            assert_int_equal(n, cases[c].n);
            assert_int_equal(gb_list_range_len(l, cases[c].s, cases[c].e), cases[c].n);
            for (size_t i = 0; i < n; i++) {
                size_t at = rev ? cases[c].first + cases[c].n - 1 - i : cases[c].first + i;
                assert_int_equal(g.idx[i], at);
                assert_string_equal(g.v[i], v[at]);
            }
            got_free(&g);
        }
    }
    /* early stop */
    assert_int_equal(gb_list_range(l, 0, -1, false, got_visit_first3, &g), 3);
    got_free(&g);
    assert_int_equal(gb_list_range(l, 0, -1, true, got_visit_first3, &g), 3);
    assert_string_equal(g.v[0], "f");
    got_free(&g);
    gb_list_free(l);
}

static void t_trim(void **state)
{
    (void)state;
    const char *v[] = {"a", "b", "c", "d", "e", "f"};
    static const struct {
        long long s, e;
        size_t first, n;
    } cases[] = {{0, -1, 0, 6}, {1, -2, 1, 4}, {2, 2, 2, 1}, {-2, 100, 4, 2},
                 {4, 1, 0, 0},  {6, 7, 0, 0},  {-100, 0, 0, 1}, {0, -7, 0, 0}};
    for (size_t c = 0; c < GB_ARRAY_LEN(cases); c++) {
        gb_list *l = mk(v, 6);
        gb_list_trim(l, cases[c].s, cases[c].e);
        assert_int_equal(gb_list_len(l), cases[c].n);
        assert_true(gb_list_verify(l));
        expect(l, v + cases[c].first, cases[c].n);
        gb_list_free(l);
    }
}

static void t_remove(void **state)
{
    (void)state;
    const char *v[] = {"x", "123", "y", "0123", "x", "123", "x", "", "x"};
    gb_list *l = mk(v, 9);
    assert_int_equal(gb_list_remove(l, S("nope"), 0), 0);
    assert_int_equal(gb_list_remove(l, S("x"), 2), 2);
    const char *w1[] = {"123", "y", "0123", "123", "x", "", "x"};
    expect(l, w1, 7);
    assert_int_equal(gb_list_remove(l, S("123"), -1), 1);
    const char *w2[] = {"123", "y", "0123", "x", "", "x"};
    expect(l, w2, 6);
    assert_int_equal(gb_list_remove(l, S(""), 0), 1);
    assert_int_equal(gb_list_remove(l, S("x"), -5), 2);
    const char *w3[] = {"123", "y", "0123"};
    expect(l, w3, 3);
    assert_int_equal(gb_list_remove(l, S("0123"), 0), 1);
    assert_int_equal(gb_list_remove(l, S("123"), 0), 1);
    assert_int_equal(gb_list_remove(l, S("y"), 1), 1);
    assert_int_equal(gb_list_len(l), 0);
    assert_true(gb_list_verify(l));
    gb_list_free(l);
}

static void t_insert(void **state)
{
    (void)state;
    const char *v[] = {"a", "p", "b", "p", "c"};
    gb_list *l = mk(v, 5);
    assert_int_equal(gb_list_insert(l, false, S("zz"), S("x")), -1);
    assert_int_equal(gb_list_insert(l, false, S("p"), S("1")), 6);
    assert_int_equal(gb_list_insert(l, true, S("p"), S("2")), 7);
    assert_int_equal(gb_list_insert(l, false, S("a"), S("head")), 8);
    assert_int_equal(gb_list_insert(l, true, S("c"), S("tail")), 9);
    const char *w[] = {"head", "a", "1", "p", "2", "b", "p", "c", "tail"};
    expect(l, w, 9);
    gb_list_free(l);
}

static void t_pos(void **state)
{
    (void)state;
    /* Redis's example list: RPUSH mylist a b c 1 2 3 c c */
    const char *v[] = {"a", "b", "c", "1", "2", "3", "c", "c"};
    gb_list *l = mk(v, 8);
    got g = {0};
    static const struct {
        long long rank;
        size_t count, maxlen, n;
        size_t idx[4];
    } cases[] = {
        {1, 1, 0, 1, {2}},          {2, 1, 0, 1, {6}},       {-1, 1, 0, 1, {7}},
        {1, 2, 0, 2, {2, 6}},       {1, 0, 0, 3, {2, 6, 7}}, {-1, 0, 0, 3, {7, 6, 2}},
        {-2, 0, 0, 2, {6, 2}},      {4, 0, 0, 0, {0}},       {-4, 1, 0, 0, {0}},
        {1, 0, 2, 0, {0}},          {1, 0, 3, 1, {2}},       {-1, 0, 2, 2, {7, 6}},
        {LLONG_MAX, 0, 0, 0, {0}},  {LLONG_MIN, 0, 0, 0, {0}},
    };
    for (size_t c = 0; c < GB_ARRAY_LEN(cases); c++) {
        size_t n = gb_list_pos(l, S("c"), cases[c].rank, cases[c].count, cases[c].maxlen,
                               got_pos, &g);
        assert_int_equal(n, cases[c].n);
        assert_int_equal(g.n, cases[c].n);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(g.idx[i], cases[c].idx[i]);
        got_free(&g);
    }
    /* integer-looking values compare as bytes */
    assert_int_equal(gb_list_pos(l, S("1"), 1, 0, 0, got_pos, &g), 1);
    assert_int_equal(g.idx[0], 3);
    got_free(&g);
    assert_int_equal(gb_list_pos(l, S("01"), 1, 0, 0, got_pos, &g), 0);
    assert_int_equal(gb_list_pos(l, S("c"), 0, 0, 0, got_pos, &g), 0); /* rank 0: nothing */
    gb_list_free(l);
}

static void t_move(void **state)
{
    (void)state;
    const char *v[] = {"1", "2", "3", "4"};
    got g = {0};
    /* rotation, all four directions */
    gb_list *l = mk(v, 4);
    assert_true(gb_list_move(l, GB_LIST_TAIL, l, GB_LIST_HEAD, got_emit, &g));
    const char *w1[] = {"4", "1", "2", "3"};
    expect(l, w1, 4);
    assert_true(gb_list_move(l, GB_LIST_HEAD, l, GB_LIST_TAIL, got_emit, &g));
    expect(l, v, 4);
    assert_true(gb_list_move(l, GB_LIST_HEAD, l, GB_LIST_HEAD, got_emit, &g));
    assert_true(gb_list_move(l, GB_LIST_TAIL, l, GB_LIST_TAIL, got_emit, &g));
    expect(l, v, 4);
    const char *moved[] = {"4", "4", "1", "4"};
    expect_got(&g, moved, 4);
    got_free(&g);
    /* a full turn in both directions */
    for (int i = 0; i < 4; i++)
        gb_list_move(l, GB_LIST_TAIL, l, GB_LIST_HEAD, NULL, NULL);
    expect(l, v, 4);
    for (int i = 0; i < 7; i++)
        gb_list_move(l, GB_LIST_HEAD, l, GB_LIST_TAIL, NULL, NULL);
    const char *w2[] = {"4", "1", "2", "3"};
    expect(l, w2, 4);
    /* between lists */
    gb_list *d = gb_list_new(&g_cfg);
    assert_true(gb_list_move(l, GB_LIST_HEAD, d, GB_LIST_TAIL, got_emit, &g));
    assert_true(gb_list_move(l, GB_LIST_TAIL, d, GB_LIST_HEAD, got_emit, &g));
    assert_true(gb_list_move(l, GB_LIST_HEAD, d, GB_LIST_HEAD, got_emit, &g));
    assert_true(gb_list_move(l, GB_LIST_TAIL, d, GB_LIST_TAIL, got_emit, &g));
    assert_false(gb_list_move(l, GB_LIST_TAIL, d, GB_LIST_TAIL, got_emit, &g));
    const char *moved2[] = {"4", "3", "1", "2"};
    expect_got(&g, moved2, 4);
    got_free(&g);
    const char *w3[] = {"1", "3", "4", "2"};
    expect(d, w3, 4);
    assert_int_equal(gb_list_len(l), 0);
    gb_list_free(l);
    gb_list_free(d);
}

static void t_counted_pops(void **state)
{
    (void)state;
    enum { N = 500 };
    static char vals[N][16];
    const char *pv[N];
    for (int i = 0; i < N; i++) {
        snprintf(vals[i], sizeof vals[i], "e%d", i);
        pv[i] = vals[i];
    }
    gb_list *l = mk(pv, N);
    got g = {0};
    assert_int_equal(gb_list_pop(l, GB_LIST_HEAD, 0, got_emit, &g), 0);
    assert_int_equal(gb_list_pop(l, GB_LIST_HEAD, 8, got_emit, &g), 8);
    expect_got(&g, pv, 8);
    got_free(&g);
    assert_int_equal(gb_list_pop(l, GB_LIST_TAIL, 3, got_emit, &g), 3);
    const char *w[] = {pv[N - 1], pv[N - 2], pv[N - 3]};
    expect_got(&g, w, 3);
    got_free(&g);
    expect(l, pv + 8, N - 11);
    /* larger than a leaf/segment, then larger than the list */
    assert_int_equal(gb_list_pop(l, GB_LIST_HEAD, 200, NULL, NULL), 200);
    expect(l, pv + 208, N - 211);
    assert_int_equal(gb_list_pop(l, GB_LIST_TAIL, 1000, NULL, NULL), N - 211);
    assert_int_equal(gb_list_len(l), 0);
    assert_true(gb_list_verify(l));
    assert_string_equal(gb_list_representation_name(l), "listpack");
    gb_list_free(l);
}

static void t_values(void **state)
{
    (void)state;
    size_t mem0 = gb_mem_used();
    gb_list *l = gb_list_new(&g_cfg);
    const char bin[] = {'a', 0, 'b', 0, 0};
    size_t big_n = 1 << 20;
    char *big = malloc(big_n);
    for (size_t i = 0; i < big_n; i++)
        big[i] = (char)(i * 131);
    gb_slice vals[] = {gb_slice_make(bin, sizeof bin), gb_slice_make("", 0), S("123"),
                       S("0123"),                     S("-0"),              S("9223372036854775807"),
                       S("9223372036854775808"),     gb_slice_make(big, big_n), S("+5"),
                       S("-9223372036854775808")};
    size_t nv = GB_ARRAY_LEN(vals);
    gb_list_push(l, GB_LIST_TAIL, vals, nv);
    assert_true(gb_list_verify(l));
    char buf[GB_LIST_INT_BUF];
    gb_slice v;
    for (size_t i = 0; i < nv; i++) {
        assert_true(gb_list_index(l, (long long)i, buf, &v));
        assert_true(gb_slice_eq(v, vals[i]));
    }
    /* the 1 MiB value: search, set, move, pop */
    got g = {0};
    assert_int_equal(gb_list_pos(l, vals[7], 1, 0, 0, got_pos, &g), 1);
    assert_int_equal(g.idx[0], 7);
    got_free(&g);
    assert_true(gb_list_set(l, 0, vals[7]));
    assert_true(gb_list_set(l, 7, S("small")));
    assert_true(gb_list_index(l, 0, buf, &v) && gb_slice_eq(v, vals[7]));
    assert_true(gb_list_move(l, GB_LIST_HEAD, l, GB_LIST_TAIL, NULL, NULL));
    assert_true(gb_list_index(l, -1, buf, &v) && gb_slice_eq(v, vals[7]));
    assert_int_equal(gb_list_insert(l, false, vals[7], vals[0]), (long long)nv + 1);
    assert_true(gb_list_verify(l));
    assert_true(gb_list_mem_usage(l) > big_n);
    assert_int_equal(gb_list_remove(l, vals[7], 0), 1);
    assert_true(gb_list_mem_usage(l) < big_n);
    assert_true(gb_list_verify(l));
    /* a big value popped is emitted whole */
    gb_list_push(l, GB_LIST_HEAD, &vals[7], 1);
    gb_list_pop(l, GB_LIST_HEAD, 1, got_emit, &g);
    assert_int_equal(g.len[0], big_n);
    assert_memory_equal(g.v[0], big, big_n);
    free(g.v[0]);
    g.n = 0;
    assert_int_equal(gb_list_pos(l, S("123"), -1, 0, 0, got_pos, &g), 1);
    got_free(&g);
    gb_list_free(l);
    free(big);
    assert_int_equal(gb_mem_used(), mem0);
}

#define LIST_COMMON_TESTS                                                                          \
    cmocka_unit_test(t_empty_and_single), cmocka_unit_test(t_push_order),                          \
        cmocka_unit_test(t_index_and_set), cmocka_unit_test(t_range), cmocka_unit_test(t_trim),    \
        cmocka_unit_test(t_remove), cmocka_unit_test(t_insert), cmocka_unit_test(t_pos),           \
        cmocka_unit_test(t_move), cmocka_unit_test(t_counted_pops), cmocka_unit_test(t_values)

#endif
