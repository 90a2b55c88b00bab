/* engine/base/bitops.c and platform/popcount.h against naive references
 * written here bit by bit: population counts over unaligned ranges (every
 * kernel the CPU has and the portable one), BITCOUNT and BITPOS ranges in
 * bytes and bits with their edge cases, BITOP, and BITFIELD's integers and
 * overflow arithmetic (WRAP, SAT, FAIL) at every width, signed 1..64 and
 * unsigned 1..63, with 128-bit arithmetic as the reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "engine/base/bitops.h"
#include "platform/popcount.h"

/* ---- the reference: one bit at a time --------------------------------------------------- */

static uint64_t rng_state = 0x853c49e6748fea9bull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int64_t rnd_range(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

static int ref_bit(const unsigned char *p, size_t len, uint64_t i)
{
    return (i >> 3) < len ? (p[i >> 3] >> (7 - (i & 7))) & 1 : 0;
}

static uint64_t ref_popcount(const unsigned char *p, size_t n)
{
    uint64_t c = 0;
    for (uint64_t i = 0; i < (uint64_t)n * 8; i++)
        c += (uint64_t)ref_bit(p, n, i);
    return c;
}

/* A random buffer whose bytes are runs of zeros, runs of ones, or noise. */
static void fill(unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t run = (size_t)rnd_range(1, 40);
        int kind = (int)(rnd() % 4);
        for (; run && i < n; run--, i++)
            b[i] = kind == 0 ? 0x00 : kind == 1 ? 0xff : (unsigned char)rnd();
    }
}

/* ---- popcount ---------------------------------------------------------------------------- */

static void test_popcount_unaligned_ranges(void **state)
{
    (void)state;
    static unsigned char buf[5000];
    fill(buf, sizeof buf);
    printf("popcount kernel on this CPU: %s\n", gb_popcount_kernel());
    /* The chosen kernel, and each one this CPU can run. */
    gb_popcount_fn *kernels[4] = {gb_popcount_bytes};
    size_t nk = 1;
    const char *names[] = {"avx512-vpopcntdq", "popcnt", "portable"};
    for (size_t i = 0; i < 3; i++)
        if ((kernels[nk] = gb_popcount_kernel_named(names[i])) != NULL)
            nk++;
        else
            printf("kernel %s: not on this CPU\n", names[i]);
    assert_non_null(gb_popcount_kernel_named("portable"));
    assert_null(gb_popcount_kernel_named("bogus"));
    for (size_t k = 0; k < nk; k++) {
        for (size_t off = 0; off < 72; off++)
            for (size_t n = 0; n < 300; n += 1 + n / 16)
                assert_int_equal(kernels[k](buf + off, n), ref_popcount(buf + off, n));
        for (int i = 0; i < 200; i++) {
            size_t off = (size_t)rnd_range(0, 999), n = (size_t)rnd_range(0, 4000);
            assert_int_equal(kernels[k](buf + off, n), ref_popcount(buf + off, n));
        }
    }
    assert_int_equal(gb_bits_popcount(buf + 5, 100), ref_popcount(buf + 5, 100));
    memset(buf, 0xff, sizeof buf);
    assert_int_equal(gb_bits_popcount(buf + 3, 4097), 4097 * 8);
}

/* ---- BITCOUNT ranges ----------------------------------------------------------------------- */

/* Redis's index rules, then the bits counted one by one over [first, last]
 * bits. */
static bool ref_bit_range(size_t len, int64_t start, int64_t end, bool in_bits, bool end_given, int64_t *first,
                          int64_t *last)
{
    int64_t tot = in_bits ? (int64_t)len * 8 : (int64_t)len;
    if (!end_given)
        end = tot - 1;
    if (start < 0)
        start += tot;
    if (end < 0)
        end += tot;
    if (start < 0)
        start = 0;
    if (end < 0)
        end = 0;
    if (end >= tot)
        end = tot - 1;
    if (start > end)
        return false;
    *first = in_bits ? start : start * 8;
    *last = in_bits ? end : end * 8 + 7;
    return true;
}

static int64_t ref_count_range(const unsigned char *p, size_t len, int64_t start, int64_t end, bool in_bits)
{
    if (start < 0 && end < 0 && start > end)
        return 0;
    int64_t first, last, c = 0;
    if (!ref_bit_range(len, start, end, in_bits, true, &first, &last))
        return 0;
    for (int64_t i = first; i <= last; i++)
        c += ref_bit(p, len, (uint64_t)i);
    return c;
}

static int64_t rnd_index(size_t len)
{
    int64_t span = (int64_t)len * 8 + 20;
    switch (rnd() % 8) {
    case 0:
        return INT64_MIN + (int64_t)(rnd() % 3);
    case 1:
        return INT64_MAX - (int64_t)(rnd() % 3);
    default:
        return rnd_range(-span, span);
    }
}

static void test_count_range(void **state)
{
    (void)state;
    unsigned char buf[64];
    for (int iter = 0; iter < 200000; iter++) {
        size_t len = (size_t)rnd_range(0, 40);
        fill(buf, len);
        int64_t s = rnd_index(len), e = rnd_index(len);
        bool in_bits = rnd() & 1;
        int64_t got = gb_bits_count_range(buf, len, s, e, in_bits);
        int64_t want = ref_count_range(buf, len, s, e, in_bits);
        if (got != want)
            fail_msg("len %zu start %lld end %lld %s: %lld, want %lld", len, (long long)s, (long long)e,
                     in_bits ? "BIT" : "BYTE", (long long)got, (long long)want);
    }
    /* Both negative, start after end: 0 before the clamp could make it a
     * one-unit range. */
    unsigned char ff[4] = {0xff, 0xff, 0xff, 0xff};
    assert_int_equal(gb_bits_count_range(ff, 4, -10, -20, false), 0);
    assert_int_equal(gb_bits_count_range(ff, 4, 0, 0, false), 8);
    assert_int_equal(gb_bits_count_range(ff, 4, 5, 5, true), 1);
    assert_int_equal(gb_bits_count_range(ff, 4, 3, 12, true), 10);
}

/* ---- BITPOS ------------------------------------------------------------------------------- */

static int64_t ref_pos_range(const unsigned char *p, size_t len, int bit, int64_t start, int64_t end, bool end_given,
                             bool in_bits)
{
    int64_t first, last;
    if (!ref_bit_range(len, start, end, in_bits, end_given, &first, &last))
        return -1;
    for (int64_t i = first; i <= last; i++)
        if (ref_bit(p, len, (uint64_t)i) == bit)
            return i;
    /* No 0 in a range that runs to the end of the string: the padding's
     * first bit. */
    if (bit == 0 && !end_given)
        return last + 1;
    return -1;
}

static void test_first_bit(void **state)
{
    (void)state;
    unsigned char buf[300];
    for (int iter = 0; iter < 20000; iter++) {
        size_t len = (size_t)rnd_range(0, 280);
        fill(buf, len);
        int bit = (int)(rnd() & 1);
        /* redisBitpos: an empty buffer still has its padding's first bit */
        int64_t want = len ? ref_pos_range(buf, len, bit, 0, 0, false, false) : bit ? -1 : 0;
        assert_int_equal(gb_bits_first(buf, len, bit), want);
    }
    /* Edges: empty, all ones, all zeros. */
    unsigned char ones[40], zeros[40] = {0};
    memset(ones, 0xff, sizeof ones);
    assert_int_equal(gb_bits_first(ones, 0, 1), -1);
    assert_int_equal(gb_bits_first(ones, 0, 0), 0);
    assert_int_equal(gb_bits_first(ones, 40, 0), 320);
    assert_int_equal(gb_bits_first(zeros, 40, 1), -1);
    zeros[39] = 1;
    assert_int_equal(gb_bits_first(zeros, 40, 1), 319);
}

static void test_pos_range(void **state)
{
    (void)state;
    unsigned char buf[64];
    for (int iter = 0; iter < 300000; iter++) {
        size_t len = (size_t)rnd_range(0, 40);
        fill(buf, len);
        int bit = (int)(rnd() & 1);
        int64_t s = rnd_index(len), e = rnd_index(len);
        /* As the command allows: no end (bytes only), or an end in bytes or bits. */
        bool end_given = rnd() % 4 != 0;
        bool in_bits = end_given && (rnd() & 1);
        int64_t got = gb_bits_pos_range(buf, len, bit, s, e, end_given, in_bits);
        int64_t want = ref_pos_range(buf, len, bit, s, e, end_given, in_bits);
        if (got != want)
            fail_msg("len %zu bit %d start %lld end %lld%s %s: %lld, want %lld", len, bit, (long long)s,
                     (long long)e, end_given ? "" : " (no end)", in_bits ? "BIT" : "BYTE", (long long)got,
                     (long long)want);
    }
}

/* ---- BITOP -------------------------------------------------------------------------------- */

static void test_bitop(void **state)
{
    (void)state;
    enum { MAXN = 5, MAXLEN = 300 };
    static unsigned char srcbuf[MAXN][MAXLEN], dst[MAXLEN + 1];
    for (int iter = 0; iter < 20000; iter++) {
        gb_bitop op = (gb_bitop)(rnd() % 4);
        size_t n = op == GB_BITOP_NOT ? 1 : (size_t)rnd_range(1, MAXN);
        const unsigned char *src[MAXN];
        size_t len[MAXN], maxlen = 0;
        for (size_t i = 0; i < n; i++) {
            len[i] = rnd() % 5 == 0 ? 0 : (size_t)rnd_range(0, MAXLEN);
            fill(srcbuf[i], len[i]);
            src[i] = len[i] ? srcbuf[i] : NULL; /* a missing key */
            maxlen = len[i] > maxlen ? len[i] : maxlen;
        }
        dst[maxlen] = 0xa5; /* a canary past the result */
        gb_bits_op(op, dst, maxlen, src, len, n);
        assert_int_equal(dst[maxlen], 0xa5);
        for (size_t j = 0; j < maxlen; j++) {
            unsigned out = j < len[0] ? src[0][j] : 0;
            if (op == GB_BITOP_NOT)
                out = ~out & 0xffu;
            for (size_t i = 1; i < n; i++) {
                unsigned b = j < len[i] ? src[i][j] : 0;
                out = op == GB_BITOP_AND ? out & b : op == GB_BITOP_OR ? out | b : out ^ b;
            }
            if (dst[j] != out)
                fail_msg("op %d n %zu byte %zu: %02x, want %02x", (int)op, n, j, dst[j], out);
        }
    }
}

/* ---- BITFIELD ----------------------------------------------------------------------------- */

static void test_bitfield_get_set(void **state)
{
    (void)state;
    unsigned char buf[32], ref[32];
    for (int iter = 0; iter < 100000; iter++) {
        fill(buf, sizeof buf);
        memcpy(ref, buf, sizeof buf);
        unsigned bits = (unsigned)rnd_range(1, 64);
        uint64_t off = (uint64_t)rnd_range(0, (int64_t)(sizeof buf * 8 - bits));
        /* get: the bits MSB first, signed ones sign-extended */
        uint64_t want = 0;
        for (unsigned j = 0; j < bits; j++)
            want = (want << 1) | (uint64_t)ref_bit(ref, sizeof ref, off + j);
        assert_true(gb_bits_get_unsigned(buf, off, bits) == want);
        int64_t swant = bits < 64 && (want >> (bits - 1)) ? (int64_t)(want | (~(uint64_t)0 << bits)) : (int64_t)want;
        assert_true(gb_bits_get_signed(buf, off, bits) == swant);
        /* set: only the field's bits change */
        uint64_t v = rnd();
        gb_bits_set(buf, off, bits, v);
        for (uint64_t i = 0; i < sizeof buf * 8; i++) {
            int expect = i >= off && i < off + bits ? (int)((v >> (bits - 1 - (i - off))) & 1) : ref_bit(ref, sizeof ref, i);
            assert_int_equal(ref_bit(buf, sizeof buf, i), expect);
        }
    }
}

typedef __int128 i128;

/* The unsigned check: the value as Redis's uint64 (a negative SET value is
 * huge), the sum in 128 bits. */
static int ref_overflow_unsigned(uint64_t value, int64_t incr, unsigned bits, gb_bf_overflow ow, uint64_t *limit)
{
    i128 max = ((i128)1 << bits) - 1, sum = (i128)value + incr;
    int dir = sum > max ? 1 : sum < 0 ? -1 : 0;
    if (dir && ow == GB_BF_WRAP)
        *limit = (uint64_t)(sum & max);
    else if (dir && ow == GB_BF_SAT)
        *limit = dir > 0 ? (uint64_t)max : 0;
    return dir;
}

/* The signed check in 128 bits, with Redis's one 64-bit artefact: under 64
 * bits it takes max - value in 64 bits, so a value within `max` of
 * INT64_MIN (only a SET's value can be one) reads as an overflow upwards
 * (SAT stores max: redis-server 7.0 answers that way). */
static int ref_overflow_signed(int64_t value, int64_t incr, unsigned bits, gb_bf_overflow ow, int64_t *limit)
{
    i128 max = bits == 64 ? (i128)INT64_MAX : ((i128)1 << (bits - 1)) - 1, min = -max - 1;
    i128 sum = (i128)value + incr;
    int dir = sum > max ? 1 : sum < min ? -1 : 0;
    if (bits < 64 && max - (i128)value > INT64_MAX)
        dir = 1;
    if (dir && ow == GB_BF_WRAP) {
        i128 m = sum & (((i128)1 << bits) - 1); /* the low `bits` bits */
        if (m > max)
            m -= (i128)1 << bits;
        *limit = (int64_t)m;
    } else if (dir && ow == GB_BF_SAT) {
        *limit = (int64_t)(dir > 0 ? max : min);
    }
    return dir;
}

/* Values that sit at the edges of a width: around 0, max and min, and the
 * int64 edges. */
static int64_t edge_value(unsigned bits, bool is_signed)
{
    int64_t max = is_signed ? (bits == 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << (bits - 1)) - 1))
                            : (int64_t)(((uint64_t)1 << bits) - 1);
    int64_t min = is_signed ? -max - 1 : 0;
    int64_t d = rnd_range(-2, 2);
    switch (rnd() % 7) {
    case 0:
        return d;
    case 1:
        return max > INT64_MAX - 2 ? max - (d < 0 ? -d : d) : max + d;
    case 2:
        return min < INT64_MIN + 2 ? min + (d < 0 ? -d : d) : min + d;
    case 3:
        return INT64_MAX - (int64_t)(rnd() % 200);
    case 4:
        return INT64_MIN + (int64_t)(rnd() % 200);
    default:
        return (int64_t)rnd() >> (rnd() % 64);
    }
}

static void test_bitfield_overflow_every_width(void **state)
{
    (void)state;
    const gb_bf_overflow modes[] = {GB_BF_WRAP, GB_BF_SAT, GB_BF_FAIL};
    for (unsigned bits = 1; bits <= 64; bits++) {
        for (int iter = 0; iter < 6000; iter++) {
            gb_bf_overflow ow = modes[iter % 3];
            /* INCRBY: the old value fits the width; SET: any value, incr 0 */
            bool is_set = iter % 5 == 0;
            int64_t incr = is_set ? 0 : edge_value(bits, true);
            {
                int64_t max = bits == 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
                int64_t v = is_set ? edge_value(bits, true) : edge_value(bits, true);
                if (!is_set && (v > max || v < -max - 1))
                    v = v > max ? max : -max - 1;
                int64_t got = 7, want = 7;
                int rg = gb_bits_overflow_signed(v, incr, bits, ow, &got);
                int rw = ref_overflow_signed(v, incr, bits, ow, &want);
                if ((rg != 0) != (rw != 0) || (rw && ow != GB_BF_WRAP && rg != rw) || (rw && ow != GB_BF_FAIL && got != want))
                    fail_msg("i%u %s value %lld incr %lld: %d/%lld, want %d/%lld", bits,
                             ow == GB_BF_WRAP ? "WRAP" : ow == GB_BF_SAT ? "SAT" : "FAIL", (long long)v,
                             (long long)incr, rg, (long long)got, rw, (long long)want);
            }
            if (bits == 64)
                continue;
            {
                uint64_t max = ((uint64_t)1 << bits) - 1;
                uint64_t v = is_set ? (uint64_t)edge_value(bits, false) : (uint64_t)edge_value(bits, false) & max;
                uint64_t got = 7, want = 7;
                int rg = gb_bits_overflow_unsigned(v, incr, bits, ow, &got);
                int rw = ref_overflow_unsigned(v, incr, bits, ow, &want);
                if ((rg != 0) != (rw != 0) || (rw && ow != GB_BF_WRAP && rg != rw) || (rw && ow != GB_BF_FAIL && got != want))
                    fail_msg("u%u %s value %llu incr %lld: %d/%llu, want %d/%llu", bits,
                             ow == GB_BF_WRAP ? "WRAP" : ow == GB_BF_SAT ? "SAT" : "FAIL", (unsigned long long)v,
                             (long long)incr, rg, (unsigned long long)got, rw, (unsigned long long)want);
            }
        }
    }
    /* The artefact, as redis-server 7.0.15 answers BITFIELD k OVERFLOW SAT
     * SET i8 0 -9223372036854775808: 127 stored. */
    int64_t lim;
    assert_int_equal(gb_bits_overflow_signed(INT64_MIN, 0, 8, GB_BF_SAT, &lim), 1);
    assert_int_equal(lim, 127);
    assert_int_equal(gb_bits_overflow_signed(INT64_MIN + 1000, 0, 8, GB_BF_SAT, &lim), -1);
    assert_int_equal(lim, -128);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_popcount_unaligned_ranges),
        cmocka_unit_test(test_count_range),
        cmocka_unit_test(test_first_bit),
        cmocka_unit_test(test_pos_range),
        cmocka_unit_test(test_bitop),
        cmocka_unit_test(test_bitfield_get_set),
        cmocka_unit_test(test_bitfield_overflow_every_width),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
