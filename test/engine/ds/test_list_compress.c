/*
 * list-compress-depth (engine/ds/list_segmented.c): seeded random sequences
 * of pushes and pops at both ends, LINSERT, LSET, LREM, LTRIM, LRANGE,
 * LINDEX and rotations against an array model, for depth 0, 1, 2 and 5 and
 * several leaf sizes. After every operation the contents must match and
 * gb_list_verify must pass; with a depth set it checks that exactly the
 * interior segments are compressed (an interior one stays plain only when
 * Redis's rules refuse it: under 48 bytes or saving under 8) and that the
 * read cache mirrors its leaf. Also: compressed lists really are smaller,
 * and MEMORY USAGE follows the compressed bytes.
 *
 * GOBLIN_TEST_SEED=<n> replays a run; failures print seed and operation.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "engine/ds/list.h"
#include "engine/ds/list_impl.h"
#include "engine/base/mem.h"

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
        fprintf(stderr, "test_list_compress: GOBLIN_TEST_SEED=%" PRIu64 "\n", seed);
    }
    return seed;
}

static const char *cur_cfg;
static size_t cur_op;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s op=%zu: ", cur_cfg, cur_op);                                 \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n  replay: GOBLIN_TEST_SEED=%" PRIu64 "\n", base_seed());           \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

/* ---- the model: an array of owned strings ---- */

typedef struct mstr {
    char *p;
    size_t n;
} mstr;
typedef struct model {
    mstr *a;
    size_t len, cap;
} model;

static void m_insert(model *m, size_t at, gb_slice v)
{
    if (m->len == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->a = realloc(m->a, m->cap * sizeof(mstr));
    }
    memmove(m->a + at + 1, m->a + at, (m->len - at) * sizeof(mstr));
    m->a[at].p = malloc(v.len + 1);
    memcpy(m->a[at].p, v.ptr, v.len);
    m->a[at].n = v.len;
    m->len++;
}
static void m_delete(model *m, size_t at)
{
    free(m->a[at].p);
    memmove(m->a + at, m->a + at + 1, (m->len - at - 1) * sizeof(mstr));
    m->len--;
}
static bool m_eq(mstr a, gb_slice v) { return a.n == v.len && !memcmp(a.p, v.ptr, v.len); }
static gb_slice m_sl(mstr a) { return gb_slice_make(a.p, a.n); }

/* ---- values: mostly compressible, some not ---- */

static char vbuf[2048];
static char bigbuf[40000];

static gb_slice gen_value(void)
{
    size_t n;
    switch (rn(40)) {
    case 39: /* a big compressible value: a leaf of its own, past the leaf limit */
        n = 9000 + rn(30000);
        for (size_t i = 0; i < n; i++)
            bigbuf[i] = (char)('a' + (i / 7) % 5);
        return gb_slice_make(bigbuf, n);
    case 0:
    case 38:
    case 37: /* incompressible */
        n = 1 + rn(sizeof vbuf - 1);
        for (size_t i = 0; i < n; i++)
            vbuf[i] = (char)rnd();
        return gb_slice_make(vbuf, n);
    case 1:
        n = (size_t)snprintf(vbuf, sizeof vbuf, "%zu", rn(100000));
        return gb_slice_make(vbuf, n);
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
    case 7: /* a small pool, so LREM and LINSERT find matches */
        n = (size_t)snprintf(vbuf, sizeof vbuf, "pivot:%zu", rn(6));
        return gb_slice_make(vbuf, n);
    default:
        n = (size_t)snprintf(vbuf, sizeof vbuf, "user:%06zu:event", rn(1000000));
        return gb_slice_make(vbuf, n);
    }
}

/* ---- checks ---- */

typedef struct cmp_ctx {
    const model *m;
    size_t base, seen;
    bool ok;
} cmp_ctx;

static bool cmp_visit(void *vc, size_t i, gb_slice v)
{
    cmp_ctx *c = vc;
    if (i != c->base + c->seen || !m_eq(c->m->a[i], v))
        c->ok = false;
    c->seen++;
    return true;
}

static void check_range(gb_list *l, const model *m, size_t a, size_t b)
{
    cmp_ctx c = {m, a, 0, true};
    size_t n = gb_list_range(l, (long long)a, (long long)b, false, cmp_visit, &c);
    CHECK(c.ok && n == b - a + 1, "LRANGE %zu %zu differs", a, b);
}

static void check_all(gb_list *l, const model *m)
{
    CHECK(gb_list_len(l) == m->len, "len %zu, model %zu", gb_list_len(l), m->len);
    if (m->len)
        check_range(l, m, 0, m->len - 1);
    CHECK(gb_list_verify(l), "verify failed");
}

static void emit_check(void *vc, gb_slice v)
{
    cmp_ctx *c = vc;
    if (c->seen >= c->m->len || !m_eq(c->m->a[c->base], v))
        c->ok = false;
    c->seen++;
}

/* ---- one random operation ---- */

static void one_op(gb_list *l, model *m, size_t max_len)
{
    char ibuf[GB_LIST_INT_BUF];
    gb_slice v;
    size_t len = m->len;
    switch (rn(14)) {
    case 0:
    case 1:
    case 2: { /* LPUSH / RPUSH a few */
        bool head = rn(2);
        size_t k = 1 + rn(8);
        for (size_t i = 0; i < k && m->len < max_len; i++) {
            gb_slice x = gen_value();
            gb_list_push(l, head ? GB_LIST_HEAD : GB_LIST_TAIL, &x, 1);
            m_insert(m, head ? 0 : m->len, x);
        }
        break;
    }
    case 3: { /* counted LPOP / RPOP, each value checked as it comes out */
        bool head = rn(2);
        size_t k = rn(2) ? 1 + rn(4) : rn(len / 3 + 1);
        if (k > len)
            k = len;
        for (size_t i = 0; i < k; i++) {
            cmp_ctx c = {m, head ? 0 : m->len - 1, 0, true};
            gb_list_pop(l, head ? GB_LIST_HEAD : GB_LIST_TAIL, 1, emit_check, &c);
            CHECK(c.ok && c.seen == 1, "pop %zu differs", i);
            m_delete(m, head ? 0 : m->len - 1);
        }
        break;
    }
    case 4: /* LINDEX */
        if (len) {
            size_t i = rn(len);
            CHECK(gb_list_index(l, (long long)i, ibuf, &v) && m_eq(m->a[i], v), "LINDEX %zu", i);
        }
        break;
    case 5:
    case 6: /* LSET */
        if (len) {
            size_t i = rn(len);
            gb_slice x = gen_value();
            CHECK(gb_list_set(l, (long long)i, x), "LSET %zu", i);
            m_delete(m, i);
            m_insert(m, i, x);
        }
        break;
    case 7:
    case 8: /* LINSERT BEFORE/AFTER the first occurrence of an existing value */
        if (len && len < max_len) {
            mstr piv = m->a[rn(len)];
            size_t at = 0;
            while (!m_eq(m->a[at], m_sl(piv)))
                at++;
            bool after = rn(2);
            static char pbuf[sizeof bigbuf];
            memcpy(pbuf, piv.p, piv.n);
            gb_slice x = gen_value();
            long long r = gb_list_insert(l, after, gb_slice_make(pbuf, piv.n), x);
            m_insert(m, at + after, x);
            CHECK(r == (long long)m->len, "LINSERT returned %lld", r);
        }
        break;
    case 9: { /* LREM of a pool value, count from either end */
        char pbuf[32];
        size_t pn = (size_t)snprintf(pbuf, sizeof pbuf, "pivot:%zu", rn(6));
        long long count = (long long)rn(5) - 2;
        size_t want = 0;
        if (count >= 0) {
            for (size_t i = 0; i < m->len && (count == 0 || want < (size_t)count);)
                if (m_eq(m->a[i], gb_slice_make(pbuf, pn))) {
                    m_delete(m, i);
                    want++;
                } else {
                    i++;
                }
        } else {
            for (size_t i = m->len; i-- > 0 && want < (size_t)-count;)
                if (m_eq(m->a[i], gb_slice_make(pbuf, pn))) {
                    m_delete(m, i);
                    want++;
                }
        }
        size_t got = gb_list_remove(l, gb_slice_make(pbuf, pn), count);
        CHECK(got == want, "LREM removed %zu, model %zu", got, want);
        break;
    }
    case 10: /* LTRIM keeping most of the list */
        if (len > 4 && rn(4) == 0) {
            size_t a = rn(len / 8 + 1), b = len - 1 - rn(len / 8 + 1);
            gb_list_trim(l, (long long)a, (long long)b);
            while (m->len > b + 1)
                m_delete(m, m->len - 1);
            for (size_t i = 0; i < a; i++)
                m_delete(m, 0);
        }
        break;
    case 11: /* LRANGE of a window */
        if (len) {
            size_t a = rn(len), b = a + rn(200);
            check_range(l, m, a, b < len ? b : len - 1);
        }
        break;
    case 12: /* LMOVE rotation */
        if (len) {
            bool from_head = rn(2);
            gb_list_move(l, from_head ? GB_LIST_HEAD : GB_LIST_TAIL, l,
                         from_head ? GB_LIST_TAIL : GB_LIST_HEAD, NULL, NULL);
            mstr x = m->a[from_head ? 0 : len - 1];
            memmove(m->a + (from_head ? 0 : 1), m->a + (from_head ? 1 : 0), (len - 1) * sizeof(mstr));
            m->a[from_head ? len - 1 : 0] = x;
        }
        break;
    default: /* LINDEX from the tail */
        if (len) {
            size_t i = rn(len);
            CHECK(gb_list_index(l, -(long long)(len - i), ibuf, &v) && m_eq(m->a[i], v),
                  "LINDEX -%zu", len - i);
        }
    }
}

static void run(const char *name, int fill, int depth, size_t ops, size_t max_len)
{
    cur_cfg = name;
    rng_state = base_seed() ^ (uint64_t)(fill * 7919 + depth * 104729 + 99);
    if (!rng_state)
        rng_state = 1;
    size_t mem0 = gb_mem_used();
    gb_list_config cfg = {fill, GB_LIST_SEGMENTED, depth};
    gb_list *l = gb_list_new(&cfg);
    model m = {0};
    size_t max_compressed = 0;
    for (cur_op = 0; cur_op < ops; cur_op++) {
        /* grow, churn, then shrink to empty and grow again */
        size_t phase = cur_op * 4 / ops;
        one_op(l, &m, phase == 2 ? m.len / 2 + 1 : max_len);
        check_all(l, &m);
        size_t z = gb_list_compressed_segments(l);
        if (z > max_compressed)
            max_compressed = z;
        if (depth == 0)
            CHECK(z == 0, "depth 0 compressed %zu segments", z);
    }
    fprintf(stderr, "  %-22s ops=%zu most compressed segments %zu\n", name, ops, max_compressed);
    if (depth > 0 && depth < 5 && fill != 2) {
        /* The random walk may never span more than 2 * depth leaves (64 KiB
         * leaves need a few hundred KiB), so finish by growing the tail with
         * compressible values: well before 2 MiB the interior must compress. */
        static char grow[1000];
        for (size_t i = 0; i < sizeof grow; i++)
            grow[i] = (char)('a' + (i / 9) % 4);
        for (size_t pushed = 0; gb_list_compressed_segments(l) == 0 && pushed < (2u << 20);
             pushed += sizeof grow) {
            gb_slice x = gb_slice_make(grow, sizeof grow);
            gb_list_push(l, GB_LIST_TAIL, &x, 1);
            m_insert(&m, m.len, x);
        }
        check_all(l, &m);
        CHECK(max_compressed > 0 || gb_list_compressed_segments(l) > 0, "nothing was ever compressed");
    }
    gb_list_free(l);
    while (m.len)
        m_delete(&m, m.len - 1);
    free(m.a);
    CHECK(gb_mem_used() == mem0, "leaked %lld bytes", (long long)(gb_mem_used() - mem0));
}

static void test_depths_small_leaves(void **state)
{
    (void)state;
    static const int depths[] = {0, 1, 2, 5};
    char name[64];
    for (size_t i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "fill 8, depth %d", depths[i]);
        run(name, 8, depths[i], 6000, 1500);
    }
}

static void test_depths_4k_leaves(void **state)
{
    (void)state;
    static const int depths[] = {0, 1, 2, 5};
    char name[64];
    for (size_t i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "fill -1, depth %d", depths[i]);
        run(name, -1, depths[i], 4000, 6000);
    }
}

/* Tiny leaves (2 entries: most under Redis's 48-byte floor, so interior
 * leaves stay plain) and 64 KiB leaves. */
static void test_depths_other_sizes(void **state)
{
    (void)state;
    run("fill 2, depth 1", 2, 1, 3000, 400);
    run("fill 2, depth 3", 2, 3, 3000, 400);
    run("fill -5, depth 1", -5, 1, 1500, 20000);
}

/* A compressed interior takes well under half the memory of the plain list
 * for repetitive values, and reads still see every value. */
static void test_memory_and_reads(void **state)
{
    (void)state;
    cur_cfg = "memory";
    cur_op = 0;
    gb_list_config plain_cfg = {-2, GB_LIST_SEGMENTED, 0}, z_cfg = {-2, GB_LIST_SEGMENTED, 1};
    gb_list *plain = gb_list_new(&plain_cfg), *z = gb_list_new(&z_cfg);
    char buf[64];
    for (size_t i = 0; i < 100000; i++) {
        gb_slice v = gb_slice_make(buf, (size_t)snprintf(buf, sizeof buf, "user:%06zu:event", i));
        gb_list_push(plain, GB_LIST_TAIL, &v, 1);
        gb_list_push(z, GB_LIST_TAIL, &v, 1);
    }
    size_t mp = gb_list_mem_usage(plain), mz = gb_list_mem_usage(z);
    fprintf(stderr, "  100,000 values: plain %zu bytes, depth 1 %zu bytes (%.2fx)\n", mp, mz,
            (double)mz / (double)mp);
    CHECK(mz * 2 <= mp, "compressed %zu bytes, plain %zu", mz, mp);
    CHECK(gb_list_compressed_segments(z) > 100, "only %zu compressed", gb_list_compressed_segments(z));
    char ibuf[GB_LIST_INT_BUF];
    for (size_t i = 0; i < 100000; i += 997) {
        gb_slice v;
        CHECK(gb_list_index(z, (long long)i, ibuf, &v), "LINDEX %zu", i);
        int n = snprintf(buf, sizeof buf, "user:%06zu:event", i);
        CHECK(v.len == (size_t)n && !memcmp(v.ptr, buf, v.len), "LINDEX %zu differs", i);
    }
    CHECK(gb_list_verify(z), "verify");
    /* popping from the ends never leaves a compressed leaf at an end */
    gb_list_pop(z, GB_LIST_HEAD, 50000, NULL, NULL);
    gb_list_pop(z, GB_LIST_TAIL, 49000, NULL, NULL);
    CHECK(gb_list_verify(z) && gb_list_len(z) == 1000, "after pops");
    gb_list_free(plain);
    gb_list_free(z);
}

/* On a pma server a list created with a depth goes segmented, compressed. */
static void test_pma_server_compresses_segmented(void **state)
{
    (void)state;
    cur_cfg = "pma server";
    cur_op = 0;
    gb_list_config cfg = {-2, GB_LIST_PMA, 1}, off = {-2, GB_LIST_PMA, 0};
    gb_list *l = gb_list_new(&cfg), *p = gb_list_new(&off);
    char buf[64];
    for (size_t i = 0; i < 20000; i++) {
        gb_slice v = gb_slice_make(buf, (size_t)snprintf(buf, sizeof buf, "user:%06zu:event", i));
        gb_list_push(l, GB_LIST_TAIL, &v, 1);
        gb_list_push(p, GB_LIST_TAIL, &v, 1);
    }
    CHECK(gb_list_encoding_of(l) == GB_LIST_ENC_SEGMENTED, "went %s", gb_list_representation_name(l));
    CHECK(gb_list_encoding_of(p) == GB_LIST_ENC_PMA, "went %s", gb_list_representation_name(p));
    CHECK(gb_list_compressed_segments(l) > 10 && gb_list_verify(l), "not compressed");
    gb_list_free(l);
    gb_list_free(p);
}

/* The ends pay only for what the depth requires: tail pushes compress each
 * leaf once, as it moves into the interior; pops inside an end leaf do no
 * compression work; a pop that frees an end leaf inflates the one leaf that
 * becomes an end; repeated reads of one leaf inflate it once; an LSET
 * recompresses its leaf once. */
static void test_work_at_the_ends(void **state)
{
    (void)state;
    cur_cfg = "work";
    cur_op = 0;
    gb_list_seg *s = gb_list_seg_new(gb_list_limit_from_fill(-2));
    gb_list_seg_set_compress_depth(s, 1);
    char buf[64];
    size_t def, inf;
    for (size_t i = 0; i < 100000; i++) {
        gb_slice v = gb_slice_make(buf, (size_t)snprintf(buf, sizeof buf, "user:%06zu:event", i));
        gb_list_seg_push(s, GB_LIST_TAIL, v);
    }
    size_t leaves = gb_list_seg_leaves(s);
    gb_list_seg_compress_work(s, &def, &inf);
    CHECK(def == leaves - 2 && inf == 0, "%zu leaves: %zu compressions, %zu inflations", leaves, def, inf);
    CHECK(gb_list_seg_compressed(s) == leaves - 2 && gb_list_seg_verify(s), "interior");
    /* pops inside the end leaves */
    gb_list_seg_pop(s, GB_LIST_TAIL, 3, NULL, NULL);
    gb_list_seg_pop(s, GB_LIST_HEAD, 3, NULL, NULL);
    size_t def2, inf2;
    gb_list_seg_compress_work(s, &def2, &inf2);
    CHECK(def2 == def && inf2 == inf, "pops did work: %zu/%zu", def2 - def, inf2 - inf);
    /* a pop that frees the head leaf: the next leaf becomes the end, inflated once */
    size_t before = gb_list_seg_leaves(s);
    while (gb_list_seg_leaves(s) == before)
        gb_list_seg_pop(s, GB_LIST_HEAD, 1, NULL, NULL);
    gb_list_seg_compress_work(s, &def2, &inf2);
    CHECK(def2 == def && inf2 == inf + 1, "freeing an end leaf: %zu compressions, %zu inflations", def2 - def,
          inf2 - inf);
    /* reads of one interior leaf: one inflation */
    char ibuf[GB_LIST_INT_BUF];
    gb_slice out;
    size_t mid = gb_list_seg_len(s) / 2;
    for (size_t i = 0; i < 50; i++)
        gb_list_seg_get(s, mid + i, ibuf, &out);
    size_t def3, inf3;
    gb_list_seg_compress_work(s, &def3, &inf3);
    CHECK(def3 == def2 && inf3 <= inf2 + 2, "50 nearby reads: %zu inflations", inf3 - inf2);
    /* LSET of the leaf just read: its cached copy becomes the leaf, compressed once */
    gb_list_seg_set(s, mid, gb_slice_cstr("user:999999:event"));
    gb_list_seg_compress_work(s, &def, &inf);
    CHECK(def == def3 + 1 && inf == inf3, "LSET: %zu compressions, %zu inflations", def - def3, inf - inf3);
    CHECK(gb_list_seg_verify(s), "verify");
    gb_list_seg_free(s);
}

int main(void)
{
    base_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_depths_small_leaves),
        cmocka_unit_test(test_depths_4k_leaves),
        cmocka_unit_test(test_depths_other_sizes),
        cmocka_unit_test(test_memory_and_reads),
        cmocka_unit_test(test_pma_server_compresses_segmented),
        cmocka_unit_test(test_work_at_the_ends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
