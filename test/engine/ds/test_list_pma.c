/*
 * Tests of the adaptive PMA list representation (engine/ds/list_pma.c): the
 * shared public-API edge cases, then through the internal interface: random
 * inserts anywhere against a model, slot moves per insert for sequential,
 * alternating, hammer and random patterns (adaptive vs the classic PMA, the
 * comparison of Bender & Hu 2007), counted pops that clear occupancy without
 * rebalancing and make one shrink decision, and external values that change
 * ends without being copied.
 *
 * GOBLIN_TEST_SEED=<n> replays the random parts.
 */
#include "list_test_common.h"

#include <time.h>

#include "engine/ds/list_impl.h"

static uint64_t rng_state = 1;
static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}
static size_t rn(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static uint64_t seed;
static void seed_rng(uint64_t salt)
{
    if (!seed) {
        const char *e = getenv("GOBLIN_TEST_SEED");
        seed = e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL);
        if (!seed)
            seed = 1;
        fprintf(stderr, "test_list_pma: GOBLIN_TEST_SEED=%" PRIu64 "\n", seed);
    }
    rng_state = (seed ^ salt) ? (seed ^ salt) : 1;
}

static gb_slice num(char *buf, size_t i)
{
    /* every 5th value is long enough to live outside its slot */
    if (i % 5 == 0)
        return gb_slice_make(buf, (size_t)snprintf(buf, 48, "external-value-number-%zu", i));
    return gb_slice_make(buf, (size_t)snprintf(buf, 48, "%zu", i));
}

static void expect_seq(gb_list_pma *p, const size_t *want, size_t n)
{
    assert_true(gb_list_pma_verify(p));
    assert_int_equal(gb_list_pma_len(p), n);
    char buf[48];
    for (size_t i = 0; i < n; i++) {
        gb_slice v;
        gb_list_pma_get(p, i, &v);
        if (!gb_slice_eq(v, num(buf, want[i])))
            fail_msg("value %zu differs (seed %" PRIu64 ")", i, seed);
    }
}

/* Inserts anywhere, sets, pops and reads against an array model. */
static void test_random_inserts_model(void **state)
{
    (void)state;
    seed_rng(11);
    size_t mem0 = gb_mem_used();
    gb_list_pma *p = gb_list_pma_new();
    enum { MAX = 30000 };
    size_t *model = malloc(MAX * sizeof(size_t));
    size_t n = 0, next = 0;
    char buf[48];
    for (size_t op = 0; op < 60000; op++) {
        size_t what = rn(10);
        if (what < 6 && n < MAX) {
            size_t at = rn(3) ? rn(n + 1) : (rn(2) ? 0 : n);
            gb_list_pma_insert_at(p, at, num(buf, next));
            memmove(model + at + 1, model + at, (n - at) * sizeof(size_t));
            model[at] = next++;
            n++;
        } else if (what < 7 && n) {
            size_t at = rn(n);
            gb_list_pma_set(p, at, num(buf, next));
            model[at] = next++;
        } else if (what < 9 && n) {
            size_t k = 1 + rn(rn(4) ? 3 : 300);
            if (k > n)
                k = n;
            bool head = rn(2);
            gb_list_pma_pop(p, head ? GB_LIST_HEAD : GB_LIST_TAIL, k, NULL, NULL);
            if (head)
                memmove(model, model + k, (n - k) * sizeof(size_t));
            n -= k;
        } else if (n) {
            size_t at = rn(n);
            gb_slice v;
            gb_list_pma_get(p, at, &v);
            assert_true(gb_slice_eq(v, num(buf, model[at])));
        }
        if (op % 2000 == 0)
            expect_seq(p, model, n);
    }
    expect_seq(p, model, n);
    gb_list_pma_free(p);
    free(model);
    assert_int_equal(gb_mem_used(), mem0);
}

/* Slot moves per insert for one pattern, adaptive or classic. */
static double moves_per_insert(int pattern, bool adaptive, size_t n, size_t *rebalances)
{
    gb_list_pma *p = gb_list_pma_new();
    gb_list_pma_set_adaptive(p, adaptive);
    char buf[48];
    for (size_t i = 0; i < n; i++) {
        size_t len = gb_list_pma_len(p), at;
        switch (pattern) {
        case 0: /* sequential at the tail */
            at = len;
            break;
        case 1: /* sequential at the head */
            at = 0;
            break;
        case 2: /* both ends in turn */
            at = i % 2 ? len : 0;
            break;
        case 3: /* hammer: always after the same element (rank 500) */
            at = len < 1000 ? len / 2 : 500;
            break;
        default: /* uniformly random */
            at = rn(len + 1);
        }
        gb_list_pma_insert_at(p, at, gb_slice_make(buf, (size_t)snprintf(buf, 16, "%zu", i)));
    }
    assert_true(gb_list_pma_verify(p));
    gb_list_pma_stats st;
    gb_list_pma_get_stats(p, &st);
    gb_list_pma_free(p);
    *rebalances = st.rebalances;
    return (double)st.moved / (double)n;
}

static void test_adaptivity(void **state)
{
    (void)state;
    static const char *const names[] = {"tail", "head", "alternating", "hammer", "random"};
    double a[5], c[5];
    size_t ra, rc;
    enum { N = 100000 };
    fprintf(stderr, "  slot moves per insert, %d inserts (adaptive vs classic PMA):\n", N);
    for (int pat = 0; pat < 5; pat++) {
        /* Both layouts get the same positions (the random pattern's): the
         * comparison is of the layouts, not of two random sequences. */
        seed_rng(12 + (uint64_t)pat);
        a[pat] = moves_per_insert(pat, true, N, &ra);
        seed_rng(12 + (uint64_t)pat);
        c[pat] = moves_per_insert(pat, false, N, &rc);
        fprintf(stderr, "    %-12s %7.2f (%6zu rebalances)   %7.2f (%6zu rebalances)\n",
                names[pat], a[pat], ra, c[pat], rc);
    }
    /* sequential patterns: O(1) amortized moves (only the resizes copy) */
    for (int pat = 0; pat < 3; pat++)
        assert_true(a[pat] < 4.0);
    /* adaptivity pays where the classic PMA keeps redistributing */
    assert_true(a[0] * 2 < c[0]);
    assert_true(a[1] * 2 < c[1]);
    assert_true(a[3] < c[3]);
    /* and costs little where there is nothing to predict: over 452 seeds
     * (the same positions for both layouts) the ratio ran from 0.66 to
     * 1.46; 1.5 failed about one run in a few hundred before the two
     * layouts shared their positions, so the bound leaves room. */
    assert_true(a[4] < c[4] * 2.0);
}

/* Counted pops clear occupancy: no rebalance, at most one resize. */
static void test_counted_pops_clear(void **state)
{
    (void)state;
    gb_list_pma *p = gb_list_pma_new();
    char buf[48];
    enum { N = 50000 };
    for (size_t i = 0; i < N; i++)
        gb_list_pma_push(p, GB_LIST_TAIL, num(buf, i));
    gb_list_pma_stats before, after;
    gb_list_pma_get_stats(p, &before);
    got g = {0};
    size_t popped = 0;
    /* pops of 8 from the head, then from the tail: emitted in order */
    for (int k = 0; k < 100; k++) {
        assert_int_equal(gb_list_pma_pop(p, GB_LIST_HEAD, 8, got_emit, &g), 8);
        for (size_t i = 0; i < 8; i++) {
            gb_slice want = num(buf, popped + i);
            assert_true(g.len[i] == want.len && !memcmp(g.v[i], want.ptr, want.len));
        }
        popped += 8;
        got_free(&g);
    }
    assert_int_equal(gb_list_pma_pop(p, GB_LIST_TAIL, 3, got_emit, &g), 3);
    assert_true(gb_slice_eq(gb_slice_make(g.v[0], g.len[0]), num(buf, N - 1)));
    got_free(&g);
    gb_list_pma_get_stats(p, &after);
    assert_int_equal(after.rebalances, before.rebalances);
    assert_int_equal(after.resizes, before.resizes);
    assert_true(gb_list_pma_verify(p));
    /* draining most of it: one pop, one shrink decision */
    assert_int_equal(gb_list_pma_pop(p, GB_LIST_HEAD, N - 10000, NULL, NULL), N - 10000);
    gb_list_pma_get_stats(p, &after);
    assert_int_equal(after.resizes, before.resizes + 1);
    assert_true(after.capacity < before.capacity / 2);
    assert_true(gb_list_pma_verify(p));
    size_t model[10000];
    for (size_t i = 0; i < N - popped - 3 - (N - 10000); i++)
        model[i] = popped + (N - 10000) + i;
    expect_seq(p, model, N - popped - 3 - (N - 10000));
    /* emptied completely it shrinks to the minimum and is reusable */
    gb_list_pma_pop(p, GB_LIST_TAIL, SIZE_MAX, NULL, NULL);
    assert_int_equal(gb_list_pma_len(p), 0);
    assert_true(gb_list_pma_verify(p));
    gb_list_pma_push(p, GB_LIST_HEAD, num(buf, 5));
    model[0] = 5;
    expect_seq(p, model, 1);
    gb_list_pma_free(p);
}

/* A rotation moves the slot; an external value keeps its block. */
static void test_rotation_keeps_blocks(void **state)
{
    (void)state;
    gb_list_pma *p = gb_list_pma_new();
    char buf[48];
    for (size_t i = 0; i < 1000; i++)
        gb_list_pma_push(p, GB_LIST_TAIL, num(buf, i));
    size_t used = gb_mem_used();
    for (int t = 0; t < 3000; t++) {
        gb_slice before, after;
        gb_list_end from = t % 7 < 4 ? GB_LIST_TAIL : GB_LIST_HEAD;
        gb_list_pma_get(p, from == GB_LIST_TAIL ? 999 : 0, &before);
        /* an inline value lives in the slot array: keep a copy */
        char copy[48];
        memcpy(copy, before.ptr, before.len);
        const char *block = before.len > 15 ? before.ptr : NULL;
        gb_list_pma_rotate(p, from);
        gb_list_pma_get(p, from == GB_LIST_TAIL ? 0 : 999, &after);
        assert_true(gb_slice_eq(gb_slice_make(copy, before.len), after));
        if (block)
            assert_ptr_equal(block, after.ptr); /* same block: no copy */
    }
    assert_true(gb_list_pma_verify(p));
    assert_true(gb_mem_used() <= used + 64 * 1024); /* rebalances may resize */
    gb_list_pma_free(p);
}

/* Memory is the slots (16 bytes / density) plus external blocks. */
static void test_memory_accounting(void **state)
{
    (void)state;
    size_t mem0 = gb_mem_used();
    gb_list_config c = {-2, GB_LIST_PMA};
    gb_list *l = gb_list_new(&c);
    char buf[48];
    for (size_t i = 0; i < 200000; i++) {
        gb_slice v = gb_slice_make(buf, (size_t)snprintf(buf, sizeof buf, "j%08zu", i));
        gb_list_push(l, GB_LIST_TAIL, &v, 1);
    }
    size_t m = gb_list_mem_usage(l);
    assert_int_equal(m, gb_mem_used() - mem0);
    fprintf(stderr, "  pma: %.2f bytes per 9-byte value (inline)\n", (double)m / 200000);
    assert_true(m < 200000 * 40);
    gb_list_free(l);
    assert_int_equal(gb_mem_used(), mem0);
}

static int setup_fill1(void **state)
{
    (void)state;
    g_cfg.max_listpack_size = 1;
    g_cfg.large_impl = GB_LIST_PMA;
    g_large_name = "pma";
    g_name_from = 2;
    return 0;
}

static int setup_bytes(void **state)
{
    (void)state;
    g_cfg.max_listpack_size = -1;
    g_cfg.large_impl = GB_LIST_PMA;
    g_large_name = "pma";
    g_name_from = 700; /* 4 KiB of small values */
    return 0;
}

int main(void)
{
    const struct CMUnitTest common[] = {LIST_COMMON_TESTS};
    const struct CMUnitTest own[] = {
        cmocka_unit_test(test_random_inserts_model), cmocka_unit_test(test_adaptivity),
        cmocka_unit_test(test_counted_pops_clear),   cmocka_unit_test(test_rotation_keeps_blocks),
        cmocka_unit_test(test_memory_accounting),
    };
    int rc = cmocka_run_group_tests_name("pma fill=1", common, setup_fill1, NULL);
    rc += cmocka_run_group_tests_name("pma fill=-1", common, setup_bytes, NULL);
    rc += cmocka_run_group_tests_name("pma internals", own, NULL, NULL);
    return rc;
}
