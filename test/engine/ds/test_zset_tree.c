/* engine/zset_tree: the order-statistic B+tree against a sorted-array model,
 * plus a 1,000,000-operation stress run with sampled rank checks. */
#include "types_tutil.h"

#include <math.h>

#include "engine/ds/zset_tree.h"

/* ---- member keys ---- */

static gb_zmember key_new(const char *s, size_t len)
{
    unsigned char *k = gb_malloc(gb_zmember_size(len) + len);
    gb_zmember_write(k, gb_slice_make(s, len));
    return k;
}

static void key_free_cb(double score, gb_zmember m, void *ctx)
{
    (void)score;
    (void)ctx;
    gb_free((void *)m);
}

static void verify(const gb_zset_tree *t)
{
    char why[128];
    if (!gb_zset_tree_verify(t, why, sizeof why))
        TU_FAIL("tree verify failed: %s", why);
}

/* ---- sorted-array model ---- */

typedef struct ment {
    double score;
    gb_zmember key;
} ment;

typedef struct model {
    ment *e;
    size_t n, cap;
} model;

static int ment_cmp(double s1, gb_slice a, double s2, gb_slice b)
{
    if (s1 < s2)
        return -1;
    if (s1 > s2)
        return 1;
    return gb_slice_cmp(a, b);
}

static size_t model_lower(const model *m, double s, gb_slice k)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ment_cmp(m->e[mid].score, gb_zmember_slice(m->e[mid].key), s, k) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static ssize_t model_find_member(const model *m, gb_slice k)
{
    for (size_t i = 0; i < m->n; i++)
        if (gb_slice_eq(gb_zmember_slice(m->e[i].key), k))
            return (ssize_t)i;
    return -1;
}

static void model_insert(model *m, double s, gb_zmember key)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->e = realloc(m->e, m->cap * sizeof *m->e);
    }
    size_t pos = model_lower(m, s, gb_zmember_slice(key));
    memmove(&m->e[pos + 1], &m->e[pos], (m->n - pos) * sizeof *m->e);
    m->e[pos].score = s;
    m->e[pos].key = key;
    m->n++;
}

static void model_remove_at(model *m, size_t pos, size_t k)
{
    memmove(&m->e[pos], &m->e[pos + k], (m->n - pos - k) * sizeof *m->e);
    m->n -= k;
}

static uint64_t model_count(const model *m, gb_zset_tree_bound kind, double s, gb_slice k)
{
    uint64_t c = 0;
    for (size_t i = 0; i < m->n; i++) {
        gb_slice mk = gb_zmember_slice(m->e[i].key);
        bool b = false;
        switch (kind) {
        case GB_ZB_KEY_LT:
            b = ment_cmp(m->e[i].score, mk, s, k) < 0;
            break;
        case GB_ZB_KEY_LE:
            b = ment_cmp(m->e[i].score, mk, s, k) <= 0;
            break;
        case GB_ZB_SCORE_LT:
            b = m->e[i].score < s;
            break;
        case GB_ZB_SCORE_LE:
            b = m->e[i].score <= s;
            break;
        case GB_ZB_LEX_LT:
            b = gb_slice_cmp(mk, k) < 0;
            break;
        case GB_ZB_LEX_LE:
            b = gb_slice_cmp(mk, k) <= 0;
            break;
        }
        if (b)
            c++;
    }
    return c;
}

static double rand_score(void)
{
    switch (tu_rand(20)) {
    case 0:
        return INFINITY;
    case 1:
        return -INFINITY;
    case 2:
        return -0.0;
    case 3:
        return (double)tu_rand(1000) / 7.0;
    default:
        return (double)tu_rand(40) - 10;
    }
}

static void compare_all(const gb_zset_tree *t, const model *m)
{
    verify(t);
    TU_CHECK(gb_zset_tree_count(t) == m->n, "count %" PRIu64 " vs %zu", gb_zset_tree_count(t), m->n);
    gb_zset_tree_iter it;
    gb_zset_tree_seek(t, 0, &it);
    double s;
    gb_zmember k;
    for (size_t i = 0; i < m->n; i++) {
        TU_CHECK(gb_zset_tree_next(&it, &s, &k), "iteration ended early at %zu", i);
        TU_CHECK(k == m->e[i].key && s == m->e[i].score, "entry %zu differs", i);
    }
    TU_CHECK(!gb_zset_tree_next(&it, &s, &k), "iteration too long");
    if (m->n) {
        gb_zset_tree_seek(t, m->n - 1, &it);
        for (size_t i = m->n; i-- > 0;) {
            TU_CHECK(gb_zset_tree_prev(&it, &s, &k), "reverse iteration ended early at %zu", i);
            TU_CHECK(k == m->e[i].key, "reverse entry %zu differs", i);
        }
        TU_CHECK(!gb_zset_tree_prev(&it, &s, &k), "reverse iteration too long");
    }
}

static void spot_checks(const gb_zset_tree *t, const model *m)
{
    /* Rank of a present entry, select by rank, and every counting bound. */
    if (m->n) {
        size_t i = (size_t)tu_rand(m->n);
        gb_slice k = gb_zmember_slice(m->e[i].key);
        TU_CHECK(gb_zset_tree_count_before(t, GB_ZB_KEY_LT, m->e[i].score, k) == i, "rank of %zu", i);
        gb_zset_tree_iter it;
        double s;
        gb_zmember key;
        TU_CHECK(gb_zset_tree_seek(t, i, &it) && gb_zset_tree_next(&it, &s, &key) && key == m->e[i].key,
                 "select %zu", i);
    }
    char buf[64];
    size_t len = tu_member(buf, sizeof buf, 400, 20);
    gb_slice k = gb_slice_make(buf, len);
    double s = rand_score();
    for (int kind = GB_ZB_KEY_LT; kind <= GB_ZB_SCORE_LE; kind++) {
        uint64_t want = model_count(m, (gb_zset_tree_bound)kind, s, k);
        uint64_t got = gb_zset_tree_count_before(t, (gb_zset_tree_bound)kind, s, k);
        TU_CHECK(want == got, "count_before kind %d score %g: tree %" PRIu64 " model %" PRIu64, kind, s, got,
                 want);
    }
}

static void run_model(size_t ops, uint64_t universe, bool equal_scores)
{
    gb_zset_tree t;
    gb_zset_tree_init(&t);
    model m = {0};
    char buf[64];
    for (size_t op = 0; op < ops; op++) {
        size_t len = tu_member(buf, sizeof buf, universe, 20);
        gb_slice k = gb_slice_make(buf, len);
        ssize_t at = model_find_member(&m, k);
        double s = equal_scores ? 1.0 : rand_score();
        int what = (int)tu_rand(100);
        if (what < 50) {
            if (at < 0) {
                gb_zmember key = key_new(buf, len);
                gb_zset_tree_insert(&t, s, key);
                model_insert(&m, s, key);
            }
        } else if (what < 80) {
            if (at >= 0) {
                ment e = m.e[at];
                gb_zmember got = gb_zset_tree_delete(&t, e.score, k);
                TU_CHECK(got == e.key, "delete returned the wrong key");
                model_remove_at(&m, (size_t)at, 1);
                gb_free((void *)got);
            } else {
                TU_CHECK(gb_zset_tree_delete(&t, s, k) == NULL, "deleted an absent member");
            }
        } else if (what < 95) {
            if (at >= 0) {
                ment e = m.e[at];
                gb_zset_tree_update(&t, e.score, e.key, s);
                model_remove_at(&m, (size_t)at, 1);
                model_insert(&m, s, e.key);
            }
        } else if (m.n) {
            size_t start = (size_t)tu_rand(m.n);
            size_t cnt = (size_t)tu_rand(what == 99 ? m.n : 8) + 1;
            if (cnt > m.n - start)
                cnt = m.n - start;
            gb_zset_tree_delete_range(&t, start, cnt, key_free_cb, NULL);
            model_remove_at(&m, start, cnt);
        }
        spot_checks(&t, &m);
        if (op % 97 == 0 || m.n < 130)
            compare_all(&t, &m);
    }
    compare_all(&t, &m);
    gb_zset_tree_clear(&t, key_free_cb, NULL);
    verify(&t);
    free(m.e);
}

static void test_model_small_universe(void **state)
{
    (void)state;
    tu_reseed("small");
    run_model(20000, 300, false);
}

static void test_model_large_universe(void **state)
{
    (void)state;
    tu_reseed("large");
    run_model(40000, 6000, false);
}

static void test_model_lex(void **state)
{
    (void)state;
    tu_reseed("lex");
    gb_zset_tree t;
    gb_zset_tree_init(&t);
    model m = {0};
    char buf[64];
    for (int i = 0; i < 3000; i++) {
        size_t len = tu_member(buf, sizeof buf, 5000, 20);
        gb_slice k = gb_slice_make(buf, len);
        if (model_find_member(&m, k) < 0) {
            gb_zmember key = key_new(buf, len);
            gb_zset_tree_insert(&t, 0.0, key);
            model_insert(&m, 0.0, key);
        }
    }
    compare_all(&t, &m);
    for (int i = 0; i < 2000; i++) {
        size_t len = tu_member(buf, sizeof buf, 5000, 20);
        gb_slice k = gb_slice_make(buf, len);
        for (int kind = GB_ZB_LEX_LT; kind <= GB_ZB_LEX_LE; kind++) {
            uint64_t want = model_count(&m, (gb_zset_tree_bound)kind, 0, k);
            uint64_t got = gb_zset_tree_count_before(&t, (gb_zset_tree_bound)kind, 0, k);
            TU_CHECK(want == got, "lex count %d", kind);
        }
    }
    gb_zset_tree_clear(&t, key_free_cb, NULL);
    free(m.e);
}

/* Ascending and descending inserts keep leaves full (uneven splits). */
static void test_sequential_fill(void **state)
{
    (void)state;
    for (int dir = 0; dir < 2; dir++) {
        gb_zset_tree t;
        gb_zset_tree_init(&t);
        const int n = 100000;
        char buf[32];
        for (int i = 0; i < n; i++) {
            int v = dir ? n - i : i;
            size_t len = (size_t)snprintf(buf, sizeof buf, "k%d", v);
            gb_zset_tree_insert(&t, (double)v, key_new(buf, len));
        }
        verify(&t);
        double fill = (double)n / ((double)t.leaves * GB_ZSET_TREE_LEAF_CAP);
        print_message("sequential %s: %u leaves, fill %.3f\n", dir ? "descending" : "ascending", t.leaves,
                      fill);
        TU_CHECK(fill > 0.97, "sequential fill %.3f", fill);
        gb_zset_tree_clear(&t, key_free_cb, NULL);
    }
}

/* ---- 1M-operation stress with sampled rank checks ---- */

static int ment_qsort(const void *a, const void *b)
{
    const ment *x = a, *y = b;
    return ment_cmp(x->score, gb_zmember_slice(x->key), y->score, gb_zmember_slice(y->key));
}

static void stress_full_check(const gb_zset_tree *t, const double *score, gb_zmember *keys, size_t universe)
{
    verify(t);
    size_t n = 0;
    ment *all = malloc(sizeof *all * (t->count + 1));
    for (size_t id = 0; id < universe; id++)
        if (keys[id])
            all[n++] = (ment){score[id], keys[id]};
    TU_CHECK(n == t->count, "count %zu vs %" PRIu64, n, t->count);
    qsort(all, n, sizeof *all, ment_qsort);
    gb_zset_tree_iter it;
    gb_zset_tree_seek(t, 0, &it);
    double s;
    gb_zmember k;
    for (size_t i = 0; i < n; i++) {
        TU_CHECK(gb_zset_tree_next(&it, &s, &k) && k == all[i].key, "stress order at %zu", i);
    }
    free(all);
}

static void test_stress_1m(void **state)
{
    (void)state;
    tu_reseed("stress");
    const size_t universe = 400000, ops = 1000000;
    double *score = calloc(universe, sizeof *score);
    gb_zmember *keys = calloc(universe, sizeof *keys);
    gb_zset_tree t;
    gb_zset_tree_init(&t);
    char buf[32];
    size_t mem0 = gb_mem_used();
    size_t peak_count = 0, peak_bytes = 0;
    for (size_t op = 0; op < ops; op++) {
        size_t id = (size_t)tu_rand(universe);
        double s = (double)tu_rand(100000) / 4.0;
        /* Grow for the first 60%, then churn with a slight bias to deletes. */
        int ins_pct = op < ops * 6 / 10 ? 80 : 45;
        if ((int)tu_rand(100) < ins_pct) {
            if (!keys[id]) {
                size_t len = (size_t)snprintf(buf, sizeof buf, "member:%zu", id);
                keys[id] = key_new(buf, len);
                score[id] = s;
                gb_zset_tree_insert(&t, s, keys[id]);
            } else {
                gb_zset_tree_update(&t, score[id], keys[id], s);
                score[id] = s;
            }
        } else if (keys[id]) {
            gb_zmember got = gb_zset_tree_delete(&t, score[id], gb_zmember_slice(keys[id]));
            TU_CHECK(got == keys[id], "stress delete of id %zu", id);
            gb_free((void *)got);
            keys[id] = NULL;
        }
        if (t.count > peak_count) {
            peak_count = t.count;
            peak_bytes = gb_zset_tree_bytes(&t);
        }
        if (op % 64 == 0 && t.count) {
            /* Sampled: rank of a present member, then select it back. */
            size_t probe = (size_t)tu_rand(universe);
            while (!keys[probe])
                probe = (probe + 1) % universe;
            uint64_t r =
                gb_zset_tree_count_before(&t, GB_ZB_KEY_LT, score[probe], gb_zmember_slice(keys[probe]));
            gb_zset_tree_iter it;
            double rs;
            gb_zmember rk;
            TU_CHECK(gb_zset_tree_seek(&t, r, &it) && gb_zset_tree_next(&it, &rs, &rk) && rk == keys[probe],
                     "rank/select mismatch at op %zu", op);
        }
        if (op % 250000 == 249999)
            stress_full_check(&t, score, keys, universe);
    }
    print_message(
        "stress: peak %zu entries, tree nodes %.1f B/entry (leaf cap %d, inner cap %d), height %u\n",
        peak_count, (double)peak_bytes / (double)peak_count, GB_ZSET_TREE_LEAF_CAP, GB_ZSET_TREE_INNER_CAP,
        t.height);
    /* Bulk range deletes down to empty. */
    while (t.count) {
        uint64_t start = tu_rand(t.count);
        uint64_t cnt = tu_rand(t.count / 4 + 2) + 1;
        gb_zset_tree_iter it;
        gb_zset_tree_seek(&t, start, &it);
        double rs;
        gb_zmember rk;
        for (uint64_t i = 0; i < cnt && gb_zset_tree_next(&it, &rs, &rk);) {
            gb_slice ks = gb_zmember_slice(rk);
            size_t id = 0;
            for (size_t j = 7; j < ks.len; j++)
                id = id * 10 + (size_t)(ks.ptr[j] - '0');
            keys[id] = NULL;
            i++;
        }
        gb_zset_tree_delete_range(&t, start, cnt, key_free_cb, NULL);
        verify(&t);
    }
    stress_full_check(&t, score, keys, universe);
    TU_CHECK(gb_mem_used() == mem0, "memory leaked: %zu bytes", gb_mem_used() - mem0);
    free(score);
    free(keys);
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_small_universe),
        cmocka_unit_test(test_model_large_universe),
        cmocka_unit_test(test_model_lex),
        cmocka_unit_test(test_sequential_fill),
        cmocka_unit_test(test_stress_1m),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
