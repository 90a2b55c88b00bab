/* engine/base/hll.c: the hash and register choice against what
 * redis-server 7.0.15 answered (PFDEBUG GETREG of one-element HLLs, the
 * GET bytes of PFADD k a b c, the PFCOUNT of e1..e100000); dense registers
 * against a one-byte-per-register model; the sparse writer against the
 * same model through random updates under several hll-sparse-max-bytes
 * (every string it leaves decodes to the model, estimates as the dense
 * form, and stays within the limit); and hostile sparse strings, whose
 * readers must agree on validity and stay inside the bytes (run under the
 * sanitizers). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/base/hll.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* ---- what Redis answered -------------------------------------------------------------------- */

static void test_pattern_matches_redis(void **state)
{
    (void)state;
    static const struct {
        const char *ele;
        uint32_t index;
        uint8_t count;
    } known[] = {
        {"a", 12711, 2},     {"b", 15780, 1},     {"c", 8436, 1},     {"hello", 9216, 1},
        {"redis", 9467, 2},  {"goblin-core", 13134, 2}, {"1234567890abcdef", 3660, 1},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        uint32_t index;
        uint8_t count = gb_hll_pattern(known[i].ele, strlen(known[i].ele), &index);
        assert_int_equal(index, known[i].index);
        assert_int_equal(count, known[i].count);
    }
}

/* Adds an element to a sparse HLL in buf (room for the dense size), going
 * dense as the server does. */
static void add_element(uint8_t *buf, size_t *len, const void *ele, size_t n, size_t max_bytes)
{
    uint32_t index;
    uint8_t count = gb_hll_pattern(ele, n, &index);
    if (gb_hll_encoding(buf) == GB_HLL_SPARSE) {
        gb_hll_set_result r = gb_hll_sparse_set(buf, len, index, count, max_bytes);
        assert_int_not_equal(r, GB_HLL_SET_INVALID);
        if (r != GB_HLL_SET_PROMOTE)
            return;
        uint8_t raw[GB_HLL_REGISTERS] = {0};
        assert_true(gb_hll_merge_raw(buf, *len, raw));
        buf[4] = GB_HLL_DENSE;
        gb_hll_dense_pack(raw, buf + GB_HLL_HDR_SIZE);
        *len = GB_HLL_DENSE_SIZE;
    }
    gb_hll_dense_set(buf + GB_HLL_HDR_SIZE, index, count);
    gb_hll_cache_invalidate(buf);
}

static void test_bytes_and_estimates_match_redis(void **state)
{
    (void)state;
    static uint8_t buf[GB_HLL_DENSE_SIZE + GB_HLL_SPARSE_SLACK];
    size_t len = GB_HLL_SPARSE_EMPTY_SIZE;
    gb_hll_init_sparse(buf);
    add_element(buf, &len, "a", 1, 3000);
    add_element(buf, &len, "b", 1, 3000);
    add_element(buf, &len, "c", 1, 3000);
    static const uint8_t redis_abc[] = "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80"
                                       "`\xf3\x80P\xb1\x84K\xfb\x80" "BZ";
    assert_int_equal(len, sizeof redis_abc - 1);
    assert_memory_equal(buf, redis_abc, len);
    bool invalid = false;
    assert_int_equal(gb_hll_count(buf, len, &invalid), 3);
    assert_false(invalid);

    len = GB_HLL_SPARSE_EMPTY_SIZE;
    gb_hll_init_sparse(buf);
    for (int i = 1; i <= 100000; i++) {
        char ele[16];
        int n = snprintf(ele, sizeof ele, "e%d", i);
        add_element(buf, &len, ele, (size_t)n, 3000);
    }
    assert_int_equal(gb_hll_encoding(buf), GB_HLL_DENSE);
    assert_int_equal(gb_hll_count(buf, len, &invalid), 100853);
}

/* ---- dense registers ------------------------------------------------------------------------ */

static void test_dense_registers(void **state)
{
    (void)state;
    static uint8_t regs[GB_HLL_REGISTERS * 6 / 8], model[GB_HLL_REGISTERS], raw[GB_HLL_REGISTERS];
    memset(regs, 0, sizeof regs);
    memset(model, 0, sizeof model);
    for (int round = 0; round < 200000; round++) {
        uint32_t i = (uint32_t)(rnd() % GB_HLL_REGISTERS);
        uint8_t v = (uint8_t)(rnd() % 64);
        bool changed = gb_hll_dense_set(regs, i, v);
        assert_int_equal(changed, v > model[i]);
        if (v > model[i])
            model[i] = v;
    }
    for (uint32_t i = 0; i < GB_HLL_REGISTERS; i++)
        assert_int_equal(gb_hll_dense_get(regs, i), model[i]);
    gb_hll_dense_unpack(regs, raw);
    assert_memory_equal(raw, model, sizeof raw);
    static uint8_t again[sizeof regs];
    gb_hll_dense_pack(raw, again);
    assert_memory_equal(again, regs, sizeof regs);
    /* The estimate does not depend on the form. */
    static uint8_t hll[GB_HLL_DENSE_SIZE];
    gb_hll_init_sparse(hll);
    hll[4] = GB_HLL_DENSE;
    memcpy(hll + GB_HLL_HDR_SIZE, regs, sizeof regs);
    bool invalid = false;
    assert_int_equal(gb_hll_count(hll, sizeof hll, &invalid), gb_hll_count_raw(model));
}

/* ---- the sparse writer against the model ---------------------------------------------------- */

static void check_against_model(const uint8_t *buf, size_t len, const uint8_t *model)
{
    uint8_t raw[GB_HLL_REGISTERS] = {0};
    assert_true(gb_hll_merge_raw(buf, len, raw));
    assert_memory_equal(raw, model, GB_HLL_REGISTERS);
    bool invalid = false;
    assert_int_equal(gb_hll_count(buf, len, &invalid), gb_hll_count_raw(model));
    assert_false(invalid);
    assert_true(gb_hll_valid_header(buf, len));
}

static void test_sparse_writer(void **state)
{
    (void)state;
    static const size_t limits[] = {0, 40, 300, 3000, 100000};
    static uint8_t buf[GB_HLL_DENSE_SIZE + 40000], model[GB_HLL_REGISTERS];
    for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++) {
        size_t len = GB_HLL_SPARSE_EMPTY_SIZE;
        gb_hll_init_sparse(buf);
        memset(model, 0, sizeof model);
        for (int step = 0; step < 6000 && gb_hll_encoding(buf) == GB_HLL_SPARSE; step++) {
            /* Clustered indexes exercise the splits and merges of VALs. */
            uint32_t i = (uint32_t)(rnd() % 8 == 0 ? rnd() % 64 : rnd() % GB_HLL_REGISTERS);
            uint8_t count = (uint8_t)(1 + rnd() % (rnd() % 50 == 0 ? 40 : 6));
            gb_hll_set_result r = gb_hll_sparse_set(buf, &len, i, count, limits[l]);
            assert_int_not_equal(r, GB_HLL_SET_INVALID);
            if (r == GB_HLL_SET_PROMOTE) {
                assert_true(count > GB_HLL_SPARSE_VAL_MAX || len + 3 > limits[l]);
                break;
            }
            assert_int_equal(r == GB_HLL_SET_UPDATED, count > model[i]);
            if (count > model[i])
                model[i] = count;
            assert_true(len <= GB_HLL_SPARSE_EMPTY_SIZE || len <= limits[l]);
            check_against_model(buf, len, model);
        }
    }
}

/* ---- hostile strings ------------------------------------------------------------------------ */

static void ignore(void *ctx, const char *p, size_t n)
{
    (void)p;
    *(size_t *)ctx += n;
}

static void test_hostile_sparse(void **state)
{
    (void)state;
    for (int round = 0; round < 20000; round++) {
        size_t body = (size_t)(rnd() % 40);
        size_t len = GB_HLL_HDR_SIZE + body;
        /* Exactly len bytes on the heap (the sanitizers see a read past
         * them), and a copy with the writer's slack. */
        uint8_t *s = malloc(len), *w = malloc(len + GB_HLL_SPARSE_SLACK);
        uint8_t empty[GB_HLL_SPARSE_EMPTY_SIZE]; /* a body under 2 bytes cuts the empty HLL short */
        gb_hll_init_sparse(empty);
        memcpy(s, empty, len < sizeof empty ? len : sizeof empty);
        for (size_t i = GB_HLL_HDR_SIZE; i < len; i++) {
            uint64_t r = rnd();
            s[i] = (uint8_t)(r % 3 == 0 ? 0x7f : r % 3 == 1 ? 0x40 | (r >> 8 & 3) : r >> 16);
        }
        uint8_t raw[GB_HLL_REGISTERS] = {0};
        bool invalid = false, merged = gb_hll_merge_raw(s, len, raw);
        gb_hll_count(s, len, &invalid);
        assert_int_equal(merged, !invalid);
        size_t text = 0;
        gb_hll_sparse_decode(s, len, ignore, &text);
        assert_true(text <= body * 12);
        memcpy(w, s, len);
        size_t wlen = len;
        gb_hll_set_result r = gb_hll_sparse_set(w, &wlen, (uint32_t)(rnd() % GB_HLL_REGISTERS), 5, 3000);
        assert_true(wlen <= len + 3);
        (void)r;
        free(s);
        free(w);
    }
}

static void test_header_and_cache(void **state)
{
    (void)state;
    uint8_t s[GB_HLL_SPARSE_EMPTY_SIZE];
    gb_hll_init_sparse(s);
    assert_true(gb_hll_valid_header(s, sizeof s));
    assert_true(gb_hll_cache_valid(s));
    assert_int_equal(gb_hll_cache_get(s), 0);
    gb_hll_cache_set(s, 0x1234567890abcULL);
    assert_int_equal(gb_hll_cache_get(s), 0x1234567890abcULL);
    gb_hll_cache_invalidate(s);
    assert_false(gb_hll_cache_valid(s));
    assert_false(gb_hll_valid_header(s, GB_HLL_HDR_SIZE - 1));
    s[4] = 2;
    assert_false(gb_hll_valid_header(s, sizeof s));
    s[4] = GB_HLL_DENSE; /* dense must be exactly 12304 bytes */
    assert_false(gb_hll_valid_header(s, sizeof s));
    s[4] = GB_HLL_SPARSE;
    s[0] = 'h';
    assert_false(gb_hll_valid_header(s, sizeof s));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pattern_matches_redis),
        cmocka_unit_test(test_bytes_and_estimates_match_redis),
        cmocka_unit_test(test_dense_registers),
        cmocka_unit_test(test_sparse_writer),
        cmocka_unit_test(test_hostile_sparse),
        cmocka_unit_test(test_header_and_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
