/*
 * Model-based tests of engine/ds/list.h: seeded random sequences of every list
 * operation run against a trivial array-of-strings model, for each
 * configuration (compact-only, segmented and PMA with list-max-listpack-size
 * 1, 2, 128, -1, -2, -5), crossing compact <-> large conversions both ways,
 * plus a run growing lists to 1,000,000 values per backend.
 *
 * GOBLIN_TEST_SEED=<n> replays a run; every failure prints its seed,
 * configuration and operation number. GOBLIN_TEST_OPS scales the op count.
 */
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "engine/ds/list.h"
#include "engine/base/mem.h"

/* ---- rng ---- */

static uint64_t rng_state;
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

static uint64_t base_seed(void)
{
    static uint64_t seed;
    if (!seed) {
        const char *e = getenv("GOBLIN_TEST_SEED");
        seed = e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL) * 2654435761u + 1;
        if (!seed)
            seed = 1;
        fprintf(stderr, "test_list_model: GOBLIN_TEST_SEED=%" PRIu64 "\n", seed);
    }
    return seed;
}

static size_t ops_scale(size_t n)
{
    const char *e = getenv("GOBLIN_TEST_OPS");
    return e ? n * (size_t)strtoull(e, NULL, 0) / 100 : n;
}

/* ---- failure context ---- */

static const char *cur_cfg;
static uint64_t cur_seed;
static size_t cur_op;
static const char *cur_what;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s seed=%" PRIu64 " op=%zu (%s): ", cur_cfg, cur_seed, cur_op,  \
                    cur_what ? cur_what : "");                                                     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n  replay: GOBLIN_TEST_SEED=%" PRIu64 "\n", base_seed());           \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

/* ---- the model ---- */

typedef struct mstr {
    char *p;
    size_t n;
} mstr;

typedef struct model {
    mstr *a;
    size_t len, cap;
} model;

static mstr mdup(gb_slice v)
{
    mstr m = {malloc(v.len ? v.len : 1), v.len};
    if (v.len)
        memcpy(m.p, v.ptr, v.len);
    return m;
}
static bool meq(mstr m, gb_slice v) { return m.n == v.len && (!m.n || !memcmp(m.p, v.ptr, m.n)); }
static gb_slice msl(mstr m) { return gb_slice_make(m.p, m.n); }

static void m_insert(model *m, size_t at, gb_slice v)
{
    if (m->len == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 16;
        m->a = realloc(m->a, m->cap * sizeof(mstr));
    }
    memmove(m->a + at + 1, m->a + at, (m->len - at) * sizeof(mstr));
    m->a[at] = mdup(v);
    m->len++;
}
static void m_delete(model *m, size_t at, size_t k)
{
    if (k == 0)
        return;
    for (size_t i = 0; i < k; i++)
        free(m->a[at + i].p);
    memmove(m->a + at, m->a + at + k, (m->len - at - k) * sizeof(mstr));
    m->len -= k;
}
static void m_free(model *m)
{
    m_delete(m, 0, m->len);
    free(m->a);
    memset(m, 0, sizeof(*m));
}

/* ---- collecting list output ---- */

typedef struct coll {
    mstr *a;
    size_t len, cap;
    size_t *idx;
} coll;

static void coll_add(coll *c, gb_slice v, size_t index)
{
    if (c->len == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->a = realloc(c->a, c->cap * sizeof(mstr));
        c->idx = realloc(c->idx, c->cap * sizeof(size_t));
    }
    c->idx[c->len] = index;
    c->a[c->len++] = mdup(v);
}
static void coll_reset(coll *c)
{
    for (size_t i = 0; i < c->len; i++)
        free(c->a[i].p);
    c->len = 0;
}
static void coll_free(coll *c)
{
    coll_reset(c);
    free(c->a);
    free(c->idx);
}
static void emit_cb(void *ctx, gb_slice v) { coll_add(ctx, v, 0); }
static bool visit_cb(void *ctx, size_t i, gb_slice v)
{
    coll_add(ctx, v, i);
    return true;
}
static void pos_cb(void *ctx, size_t i) { coll_add(ctx, gb_slice_make("", 0), i); }

/* ---- values ---- */

static char big_buf[70000];

static gb_slice gen_value(char *buf, size_t big_every)
{
    static const char *const ints[] = {"0",    "1",     "-1",  "127", "128", "-4096", "4095",
                                       "0123", "+1",    "-0",  " 1",  "1 ",  "9223372036854775807",
                                       "-9223372036854775808", "9223372036854775808", "65536"};
    switch (rn(12)) {
    case 0:
        return gb_slice_cstr(ints[rn(GB_ARRAY_LEN(ints))]);
    case 1: {
        int64_t v = (int64_t)(rnd() >> (1 + rn(63)));
        size_t n = (size_t)snprintf(buf, 32, "%" PRId64, rn(2) ? v : -v);
        return gb_slice_make(buf, n);
    }
    case 2:
        return gb_slice_make("", 0);
    case 3: { /* binary with NULs */
        size_t n = 1 + rn(20);
        for (size_t i = 0; i < n; i++)
            buf[i] = (char)(rn(3) ? 0 : rnd());
        return gb_slice_make(buf, n);
    }
    case 4: { /* medium */
        size_t n = 16 + rn(200);
        for (size_t i = 0; i < n; i++)
            buf[i] = (char)('a' + rn(26));
        return gb_slice_make(buf, n);
    }
    case 5:
        if (big_every && rn(big_every) == 0) {
            size_t n = rn(3) ? 4000 + rn(6000) : 60000 + rn(9000);
            for (size_t i = 0; i < n; i++)
                big_buf[i] = (char)rnd();
            return gb_slice_make(big_buf, n);
        }
        /* fallthrough */
    default: { /* a small pool so searches hit */
        size_t n = (size_t)snprintf(buf, 32, "v%zu", rn(12));
        return gb_slice_make(buf, n);
    }
    }
}

/* ---- checks ---- */

static void compare_all(gb_list *l, const model *m)
{
    CHECK(gb_list_len(l) == m->len, "len %zu, model %zu", gb_list_len(l), m->len);
    coll c = {0};
    size_t n = gb_list_range(l, 0, -1, false, visit_cb, &c);
    CHECK(n == m->len, "range visited %zu of %zu", n, m->len);
    for (size_t i = 0; i < m->len; i++) {
        CHECK(c.idx[i] == i, "range index %zu reported as %zu", i, c.idx[i]);
        CHECK(meq(m->a[i], msl(c.a[i])), "value %zu differs", i);
    }
    coll_free(&c);
    CHECK(gb_list_verify(l), "verify failed (%s)", gb_list_representation_name(l));
}

/* ---- one random operation ---- */

typedef struct world {
    gb_list *l[2];
    model m[2];
    gb_list_config cfg;
    size_t big_every;
    size_t max_len; /* pushes are skipped beyond this */
    bool saw_large, saw_back_to_compact;
    size_t to_large, to_compact, peak;
} world;

static long long rand_index(size_t len)
{
    long long n = (long long)len;
    switch (rn(6)) {
    case 0:
        return -(long long)rn(len + 3) - 1;
    case 1:
        return n + (long long)rn(3);
    default:
        return (long long)rn(len + 1);
    }
}

static bool norm_idx(long long i, size_t len, size_t *out)
{
    if (i < 0)
        i += (long long)len;
    if (i < 0 || i >= (long long)len)
        return false;
    *out = (size_t)i;
    return true;
}

static bool norm_rng(long long s, long long e, size_t len, size_t *a, size_t *b)
{
    long long n = (long long)len;
    if (s < 0)
        s += n;
    if (e < 0)
        e += n;
    if (s < 0)
        s = 0;
    if (s > e || s >= n)
        return false;
    if (e >= n)
        e = n - 1;
    *a = (size_t)s;
    *b = (size_t)e;
    return true;
}

static gb_slice pick_existing(const model *m, char *buf)
{
    if (m->len && rn(4))
        return msl(m->a[rn(m->len)]);
    return gen_value(buf, 0);
}

/* Operation mix per phase: grow (0), churn (1), shrink (2). Each row gives
 * cumulative thresholds out of 100 for push, pop, index, set, range, trim,
 * remove, insert, pos, move; the rest compares. */
static const unsigned char mix[3][10] = {
    {40, 46, 54, 60, 67, 68, 72, 80, 86, 95},
    {22, 36, 46, 52, 60, 63, 70, 77, 84, 94},
    {8, 30, 38, 43, 50, 58, 70, 74, 80, 92},
};

static void one_op(world *w, int phase)
{
    char buf[300], buf2[300];
    int which = (int)rn(2);
    gb_list *l = w->l[which];
    model *m = &w->m[which];
    bool was_large = gb_list_encoding_of(l) != GB_LIST_ENC_COMPACT;
    const unsigned char *t = mix[phase];
    size_t op = rn(100);
    if (op < t[0]) {
        cur_what = "push";
        if (m->len >= w->max_len)
            return;
        gb_slice vals[6];
        char bufs[6][300];
        size_t n = 1 + rn(phase == 0 ? 6 : rn(4) ? 2 : 6);
        for (size_t i = 0; i < n; i++)
            vals[i] = gen_value(bufs[i], w->big_every);
        /* big values share one buffer: keep at most one per batch */
        size_t bigs = 0;
        for (size_t i = 0; i < n; i++)
            if (vals[i].ptr == big_buf && bigs++)
                vals[i] = gb_slice_make("x", 1);
        gb_list_end end = rn(2) ? GB_LIST_HEAD : GB_LIST_TAIL;
        size_t len = gb_list_push(l, end, vals, n);
        for (size_t i = 0; i < n; i++)
            m_insert(m, end == GB_LIST_HEAD ? 0 : m->len, vals[i]);
        CHECK(len == m->len, "push returned %zu", len);
    } else if (op < t[1]) {
        cur_what = "pop";
        size_t count = rn(4) ? rn(4) : rn(phase == 2 ? 400 : 40);
        gb_list_end end = rn(2) ? GB_LIST_HEAD : GB_LIST_TAIL;
        coll c = {0};
        size_t got = gb_list_pop(l, end, count, emit_cb, &c);
        size_t want = count < m->len ? count : m->len;
        CHECK(got == want && c.len == want, "popped %zu/%zu emitted, want %zu", got, c.len, want);
        for (size_t i = 0; i < want; i++) {
            size_t at = end == GB_LIST_HEAD ? i : m->len - 1 - i;
            CHECK(meq(m->a[at], msl(c.a[i])), "popped value %zu differs", i);
        }
        if (end == GB_LIST_HEAD)
            m_delete(m, 0, want);
        else
            m_delete(m, m->len - want, want);
        coll_free(&c);
    } else if (op < t[2]) {
        cur_what = "index";
        long long i = rand_index(m->len);
        char ib[GB_LIST_INT_BUF];
        gb_slice v;
        bool ok = gb_list_index(l, i, ib, &v);
        size_t at = 0;
        bool want = norm_idx(i, m->len, &at);
        CHECK(ok == want, "index %lld: %d, want %d", i, ok, want);
        if (ok)
            CHECK(meq(m->a[at], v), "index %lld value differs", i);
    } else if (op < t[3]) {
        cur_what = "set";
        long long i = rand_index(m->len);
        gb_slice v = gen_value(buf, w->big_every);
        bool ok = gb_list_set(l, i, v);
        size_t at = 0;
        bool want = norm_idx(i, m->len, &at);
        CHECK(ok == want, "set %lld: %d, want %d", i, ok, want);
        if (ok) {
            free(m->a[at].p);
            m->a[at] = mdup(v);
        }
    } else if (op < t[4]) {
        cur_what = "range";
        long long s = rand_index(m->len) - (long long)rn(3), e = rand_index(m->len);
        bool rev = rn(2);
        coll c = {0};
        size_t n = gb_list_range(l, s, e, rev, visit_cb, &c);
        size_t a, b;
        if (!norm_rng(s, e, m->len, &a, &b)) {
            CHECK(n == 0 && gb_list_range_len(l, s, e) == 0, "range %lld %lld not empty", s, e);
        } else {
            CHECK(n == b - a + 1 && gb_list_range_len(l, s, e) == n, "range %lld %lld: %zu", s,
                  e, n);
            for (size_t k = 0; k < n; k++) {
                size_t at = rev ? b - k : a + k;
                CHECK(c.idx[k] == at && meq(m->a[at], msl(c.a[k])), "range item %zu", k);
            }
        }
        coll_free(&c);
    } else if (op < t[5]) {
        cur_what = "trim";
        long long s, e;
        if (phase < 2 && rn(8)) { /* shave a few values off the ends */
            s = (long long)rn(4);
            e = -1 - (long long)rn(4);
        } else {
            s = rand_index(m->len) / (rn(3) ? 4 : 1);
            e = rn(4) ? -1 - (long long)rn(m->len / 4 + 1) : rand_index(m->len);
        }
        gb_list_trim(l, s, e);
        size_t a, b;
        if (!norm_rng(s, e, m->len, &a, &b)) {
            m_delete(m, 0, m->len);
        } else {
            m_delete(m, b + 1, m->len - b - 1);
            m_delete(m, 0, a);
        }
    } else if (op < t[6]) {
        cur_what = "remove";
        gb_slice v = pick_existing(m, buf);
        mstr key = mdup(v);
        long long count = (long long)rn(5) - 2; /* -2..2, 0 = all */
        if (phase == 0 && count == 0)
            count = 1;
        size_t got = gb_list_remove(l, msl(key), count);
        size_t limit = count == 0 ? SIZE_MAX : (size_t)(count < 0 ? -count : count), done = 0;
        if (count >= 0) {
            for (size_t i = 0; i < m->len && done < limit;) {
                if (meq(m->a[i], msl(key))) {
                    m_delete(m, i, 1);
                    done++;
                } else {
                    i++;
                }
            }
        } else {
            for (size_t i = m->len; i-- > 0 && done < limit;) {
                if (meq(m->a[i], msl(key))) {
                    m_delete(m, i, 1);
                    done++;
                }
            }
        }
        CHECK(got == done, "remove %lld: %zu, want %zu", count, got, done);
        free(key.p);
    } else if (op < t[7]) {
        cur_what = "insert";
        if (m->len >= w->max_len)
            return;
        gb_slice pv = pick_existing(m, buf);
        mstr piv = mdup(pv);
        gb_slice v = gen_value(buf2, w->big_every);
        bool after = rn(2);
        long long got = gb_list_insert(l, after, msl(piv), v);
        size_t at = SIZE_MAX;
        for (size_t i = 0; i < m->len; i++)
            if (meq(m->a[i], msl(piv))) {
                at = i;
                break;
            }
        if (at == SIZE_MAX) {
            CHECK(got == -1, "insert without pivot returned %lld", got);
        } else {
            m_insert(m, at + (after ? 1 : 0), v);
            CHECK(got == (long long)m->len, "insert returned %lld, want %zu", got, m->len);
        }
        free(piv.p);
    } else if (op < t[8]) {
        cur_what = "pos";
        gb_slice v = pick_existing(m, buf);
        long long rank = (long long)rn(4) + 1;
        if (rn(2))
            rank = -rank;
        if (rn(20) == 0)
            rank = rn(2) ? LLONG_MIN : LLONG_MAX;
        size_t count = rn(3) ? 1 : rn(4);
        size_t maxlen = rn(3) ? 0 : rn(m->len + 2);
        coll c = {0};
        size_t got = gb_list_pos(l, v, rank, count, maxlen, pos_cb, &c);
        /* model */
        size_t skip = rank > 0 ? (size_t)(rank - 1) : (size_t)(-(rank + 1));
        size_t want = count ? count : SIZE_MAX, budget = maxlen ? maxlen : SIZE_MAX, found = 0;
        for (size_t k = 0; k < m->len && budget; k++, budget--) {
            size_t i = rank > 0 ? k : m->len - 1 - k;
            if (!meq(m->a[i], v))
                continue;
            if (skip) {
                skip--;
                continue;
            }
            CHECK(found < c.len && c.idx[found] == i, "pos match %zu should be %zu", found, i);
            if (++found == want)
                break;
        }
        CHECK(got == found && c.len == found, "pos found %zu, want %zu", got, found);
        coll_free(&c);
    } else if (op < t[9]) {
        cur_what = "move";
        int to_which = rn(3) ? (int)rn(2) : which;
        gb_list *dst = w->l[to_which];
        model *dm = &w->m[to_which];
        gb_list_end from = rn(2) ? GB_LIST_HEAD : GB_LIST_TAIL;
        gb_list_end to = rn(2) ? GB_LIST_HEAD : GB_LIST_TAIL;
        coll c = {0};
        bool ok = gb_list_move(l, from, dst, to, emit_cb, &c);
        CHECK(ok == (m->len > 0), "move on %zu values returned %d", m->len, ok);
        if (ok) {
            size_t at = from == GB_LIST_HEAD ? 0 : m->len - 1;
            mstr v = mdup(msl(m->a[at]));
            CHECK(c.len == 1 && meq(v, msl(c.a[0])), "moved value differs");
            m_delete(m, at, 1);
            m_insert(dm, to == GB_LIST_HEAD ? 0 : dm->len, msl(v));
            free(v.p);
        }
        coll_free(&c);
    } else {
        cur_what = "compare";
        compare_all(l, m);
    }
    bool is_large = gb_list_encoding_of(l) != GB_LIST_ENC_COMPACT;
    w->saw_large |= is_large;
    w->saw_back_to_compact |= was_large && !is_large;
    w->to_large += !was_large && is_large;
    w->to_compact += was_large && !is_large;
    if (m->len > w->peak)
        w->peak = m->len;
    if (gb_list_encoding_of(l) != GB_LIST_ENC_COMPACT) {
        const char *want_name = w->cfg.large_impl == GB_LIST_PMA ? "pma" : "segmented";
        CHECK(!strcmp(gb_list_representation_name(l), want_name), "encoding %s",
              gb_list_representation_name(l));
    }
}

static void run_config(const char *name, int fill, gb_list_impl impl, size_t ops, size_t max_len,
                       size_t big_every, bool expect_large)
{
    cur_cfg = name;
    cur_seed = base_seed() ^ (uint64_t)(fill * 7919 + (int)impl * 104729 + 12345);
    rng_state = cur_seed ? cur_seed : 1;
    world w;
    memset(&w, 0, sizeof w);
    w.cfg.max_listpack_size = fill;
    w.cfg.large_impl = impl;
    w.big_every = big_every;
    w.max_len = max_len;
    size_t mem0 = gb_mem_used();
    w.l[0] = gb_list_new(&w.cfg);
    w.l[1] = gb_list_new(&w.cfg);
    ops = ops_scale(ops);
    for (cur_op = 0; cur_op < ops; cur_op++) {
        /* phases: grow, churn, shrink, so conversions happen both ways */
        int phase = (int)((cur_op * 6 / ops) % 3);
        w.max_len = phase == 2 ? max_len / 4 : max_len;
        one_op(&w, phase);
        size_t both = w.m[0].len + w.m[1].len;
        size_t every = both < 256 ? 4 : both < 4000 ? 64 : 512;
        if (cur_op % every == 0) {
            cur_what = "check";
            compare_all(w.l[0], &w.m[0]);
            compare_all(w.l[1], &w.m[1]);
        }
    }
    cur_what = "final";
    fprintf(stderr, "  %-20s seed=%" PRIu64 " ops=%zu peak len=%zu, to large %zu, back to compact %zu\n",
            name, cur_seed, ops, w.peak, w.to_large, w.to_compact);
    compare_all(w.l[0], &w.m[0]);
    compare_all(w.l[1], &w.m[1]);
    if (expect_large) {
        CHECK(w.saw_large, "never converted to the large representation");
        CHECK(w.saw_back_to_compact, "never converted back to compact");
    } else {
        CHECK(!w.saw_large, "compact-only configuration went large");
    }
    gb_list_free(w.l[0]);
    gb_list_free(w.l[1]);
    m_free(&w.m[0]);
    m_free(&w.m[1]);
    CHECK(gb_mem_used() == mem0, "leaked %lld bytes", (long long)(gb_mem_used() - mem0));
}

static void test_compact_only(void **state)
{
    (void)state;
    run_config("compact-only(-5)", -5, GB_LIST_SEGMENTED, 100000, 40, 0, false);
}

#define CONFIG_TEST(fname, label, fill, impl, ops, maxlen, big)                                    \
    static void fname(void **state)                                                                \
    {                                                                                              \
        (void)state;                                                                               \
        run_config(label, fill, impl, ops, maxlen, big, true);                                     \
    }

CONFIG_TEST(test_seg_fill_1, "segmented fill=1", 1, GB_LIST_SEGMENTED, 100000, 300, 200)
CONFIG_TEST(test_seg_fill_2, "segmented fill=2", 2, GB_LIST_SEGMENTED, 100000, 300, 200)
CONFIG_TEST(test_seg_fill_128, "segmented fill=128", 128, GB_LIST_SEGMENTED, 150000, 1500, 300)
CONFIG_TEST(test_seg_fill_m1, "segmented fill=-1", -1, GB_LIST_SEGMENTED, 150000, 1500, 300)
CONFIG_TEST(test_seg_fill_m2, "segmented fill=-2", -2, GB_LIST_SEGMENTED, 150000, 2000, 300)
CONFIG_TEST(test_seg_fill_m5, "segmented fill=-5", -5, GB_LIST_SEGMENTED, 150000, 8000, 100)
CONFIG_TEST(test_pma_fill_1, "pma fill=1", 1, GB_LIST_PMA, 100000, 300, 200)
CONFIG_TEST(test_pma_fill_2, "pma fill=2", 2, GB_LIST_PMA, 100000, 300, 200)
CONFIG_TEST(test_pma_fill_128, "pma fill=128", 128, GB_LIST_PMA, 150000, 1500, 300)
CONFIG_TEST(test_pma_fill_m1, "pma fill=-1", -1, GB_LIST_PMA, 150000, 1500, 300)
CONFIG_TEST(test_pma_fill_m2, "pma fill=-2", -2, GB_LIST_PMA, 150000, 2000, 300)
CONFIG_TEST(test_pma_fill_m5, "pma fill=-5", -5, GB_LIST_PMA, 150000, 8000, 100)

/* ---- one million values ---- */

/* Values are decimal integers (stored as integers by compact/segmented,
 * inline by the PMA); the model is a deque of int64. */
typedef struct ideque {
    int64_t *a;
    size_t head, len, cap;
} ideque;

static int64_t *dq_at(ideque *d, size_t i) { return &d->a[(d->head + i) % d->cap]; }
static void dq_push(ideque *d, bool front, int64_t v)
{
    if (d->len == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 1024;
        int64_t *na = malloc(nc * sizeof(int64_t));
        for (size_t i = 0; i < d->len; i++)
            na[i] = *dq_at(d, i);
        free(d->a);
        d->a = na;
        d->cap = nc;
        d->head = 0;
    }
    if (front) {
        d->head = (d->head + d->cap - 1) % d->cap;
        d->a[d->head] = v;
    } else {
        d->a[(d->head + d->len) % d->cap] = v;
    }
    d->len++;
}

static bool eq_int(gb_slice v, int64_t x)
{
    char b[32];
    int n = snprintf(b, sizeof b, "%" PRId64, x);
    return v.len == (size_t)n && !memcmp(v.ptr, b, (size_t)n);
}

typedef struct big_ctx {
    ideque *d;
    size_t at;
    bool ok;
} big_ctx;

static bool big_visit(void *ctx, size_t i, gb_slice v)
{
    big_ctx *b = ctx;
    if (i != b->at || !eq_int(v, *dq_at(b->d, i)))
        b->ok = false;
    b->at++;
    return b->ok;
}

static void big_emit(void *ctx, gb_slice v)
{
    big_ctx *b = ctx;
    if (!eq_int(v, *dq_at(b->d, b->at)))
        b->ok = false;
    b->at++;
}

static void big_compare(gb_list *l, ideque *d)
{
    CHECK(gb_list_len(l) == d->len, "len %zu, model %zu", gb_list_len(l), d->len);
    big_ctx b = {d, 0, true};
    gb_list_range(l, 0, -1, false, big_visit, &b);
    CHECK(b.ok && b.at == d->len, "content differs near %zu", b.at);
    CHECK(gb_list_verify(l), "verify failed");
}

static void run_million(const char *name, gb_list_impl impl)
{
    cur_cfg = name;
    cur_seed = base_seed() ^ (uint64_t)impl * 0x9E3779B97F4A7C15ULL;
    rng_state = cur_seed ? cur_seed : 1;
    gb_list_config cfg = {-2, impl};
    gb_list *l = gb_list_new(&cfg);
    ideque d = {0};
    size_t target = ops_scale(1000000);
    int64_t next = 0;
    cur_op = 0;
    /* patterns in turn: tail, head, alternating, batched pushes */
    while (d.len < target) {
        size_t pattern = (d.len * 4 / target) % 4;
        cur_what = pattern == 0 ? "tail" : pattern == 1 ? "head" : pattern == 2 ? "alt" : "batch";
        char bufs[8][24];
        gb_slice vals[8];
        size_t n = pattern == 3 ? 8 : 1;
        bool front = pattern == 1 || (pattern == 2 && (next & 1)) || (pattern == 3 && rn(2));
        for (size_t i = 0; i < n; i++) {
            int64_t v = (int64_t)(rn(4) ? next : -next * 1000003);
            vals[i] = gb_slice_make(bufs[i], (size_t)snprintf(bufs[i], 24, "%" PRId64, v));
            dq_push(&d, front, v);
            next++;
        }
        gb_list_push(l, front ? GB_LIST_HEAD : GB_LIST_TAIL, vals, n);
        cur_op++;
        if (cur_op % 100000 == 0)
            big_compare(l, &d);
    }
    big_compare(l, &d);
    /* random reads and updates on the big list */
    cur_what = "index/set";
    for (size_t i = 0; i < 20000; i++, cur_op++) {
        size_t at = rn(d.len);
        char ib[GB_LIST_INT_BUF];
        gb_slice v;
        CHECK(gb_list_index(l, (long long)at, ib, &v) && eq_int(v, *dq_at(&d, at)), "index %zu",
              at);
        if (rn(4) == 0) {
            int64_t nv = -(int64_t)rn(1u << 30);
            char b[24];
            gb_list_set(l, (long long)at, gb_slice_make(b, (size_t)snprintf(b, 24, "%" PRId64, nv)));
            *dq_at(&d, at) = nv;
        }
    }
    /* inserts near a pivot close to the head (pivot search is O(index)) */
    cur_what = "insert";
    {
        char pb[24];
        size_t at = 500 + rn(500);
        gb_slice piv = gb_slice_make(pb, (size_t)snprintf(pb, 24, "%" PRId64, *dq_at(&d, at)));
        /* pivot values are unique here except after the sets above; use LPOS */
        size_t first = SIZE_MAX;
        for (size_t i = 0; i < d.len; i++)
            if (eq_int(piv, *dq_at(&d, i))) {
                first = i;
                break;
            }
        for (size_t i = 0; i < 2000; i++, cur_op++) {
            int64_t nv = 5000000000LL + (int64_t)i;
            char b[24];
            long long got = gb_list_insert(l, true, piv,
                                           gb_slice_make(b, (size_t)snprintf(b, 24, "%" PRId64, nv)));
            dq_push(&d, true, 0); /* shift the short prefix, not the tail */
            for (size_t k = 0; k <= first; k++)
                *dq_at(&d, k) = *dq_at(&d, k + 1);
            *dq_at(&d, first + 1) = nv;
            CHECK(got == (long long)d.len, "insert returned %lld", got);
        }
    }
    big_compare(l, &d);
    /* counted pops from both ends until empty */
    cur_what = "pops";
    while (d.len) {
        size_t k = 1 + rn(rn(8) ? 8 : 5000);
        bool head = rn(2);
        big_ctx b = {&d, head ? 0 : 0, true};
        if (head) {
            b.at = 0;
            size_t got = gb_list_pop(l, GB_LIST_HEAD, k, big_emit, &b);
            size_t want = k < d.len ? k : d.len;
            CHECK(b.ok && got == want, "head pop %zu", k);
            d.head = (d.head + want) % d.cap;
            d.len -= want;
        } else {
            /* tail pops come out last-first: check against the model */
            size_t want = k < d.len ? k : d.len;
            coll c = {0};
            gb_list_pop(l, GB_LIST_TAIL, k, emit_cb, &c);
            CHECK(c.len == want, "tail pop %zu", k);
            for (size_t i = 0; i < want; i++)
                CHECK(eq_int(msl(c.a[i]), *dq_at(&d, d.len - 1 - i)), "tail pop value %zu", i);
            coll_free(&c);
            d.len -= want;
        }
        cur_op++;
        if (cur_op % 5000 == 0)
            big_compare(l, &d);
    }
    big_compare(l, &d);
    CHECK(gb_list_encoding_of(l) == GB_LIST_ENC_COMPACT, "empty list still large");
    gb_list_free(l);
    free(d.a);
}

static void test_million_segmented(void **state)
{
    (void)state;
    run_million("million segmented", GB_LIST_SEGMENTED);
}

static void test_million_pma(void **state)
{
    (void)state;
    run_million("million pma", GB_LIST_PMA);
}

int main(void)
{
    base_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compact_only),   cmocka_unit_test(test_seg_fill_1),
        cmocka_unit_test(test_seg_fill_2),     cmocka_unit_test(test_seg_fill_128),
        cmocka_unit_test(test_seg_fill_m1),    cmocka_unit_test(test_seg_fill_m2),
        cmocka_unit_test(test_seg_fill_m5),    cmocka_unit_test(test_pma_fill_1),
        cmocka_unit_test(test_pma_fill_2),     cmocka_unit_test(test_pma_fill_128),
        cmocka_unit_test(test_pma_fill_m1),    cmocka_unit_test(test_pma_fill_m2),
        cmocka_unit_test(test_pma_fill_m5),    cmocka_unit_test(test_million_segmented),
        cmocka_unit_test(test_million_pma),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
