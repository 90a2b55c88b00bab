/* engine/base/crc64.c: Redis's check value, incremental use, the
 * checksum at the end of a FUNCTION DUMP payload taken from redis-server,
 * and every path (tables, three streams, the carry-less fold where the CPU
 * has one) against the bit-at-a-time definition. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/base/crc64.h"
#include "platform/clmul.h"

static void test_check_value(void **state)
{
    (void)state;
    assert_true(gb_crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9caull);
    assert_true(gb_crc64(0, "", 0) == 0);
}

static void test_incremental(void **state)
{
    (void)state;
    const char *s = "123456789";
    for (size_t cut = 0; cut <= 9; cut++)
        assert_true(gb_crc64(gb_crc64(0, s, cut), s + cut, 9 - cut) == 0xe9c6d914c4b8d9caull);
}

/* redis-server 7.0.15's FUNCTION DUMP of one library: its last 8 bytes are
 * the little-endian CRC-64 of the bytes before them. */
static void test_redis_payload(void **state)
{
    (void)state;
    static const char p[] =
        "\xf5\x40\x41#!lua name=a\nredis.register_function('f',function() return 1 end)\x0a\x00"
        "\x17\x9d\xab\xc7\x87\xfc\x9c\xad";
    size_t n = sizeof p - 1;
    uint64_t want = 0;
    for (int i = 7; i >= 0; i--)
        want = want << 8 | (uint8_t)p[n - 8 + (size_t)i];
    assert_true(gb_crc64(0, p, n - 8) == want);
}

/* The bit-at-a-time definition, against which the table-driven one is
 * checked on every length and alignment up to 300 bytes. */
static uint64_t reference(uint64_t crc, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int b = 0; b < 8; b++)
            crc = (crc >> 1) ^ (0x95ac9329ac4bc9b5ull & (0 - (crc & 1)));
    }
    return crc;
}

static void test_slices_match_the_definition(void **state)
{
    (void)state;
    unsigned char buf[320];
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n + off <= 300; n++)
            assert_true(gb_crc64(0x1234, buf + off, n) == reference(0x1234, buf + off, n));
}

/* Long buffers run as three streams joined at the end: every split of the
 * length (the remainder of /3 and /8) and a start off the word boundary. */
static void test_streams_match_the_definition(void **state)
{
    (void)state;
    size_t cap = ((size_t)1 << 20) + 64;
    unsigned char *buf = malloc(cap);
    assert_non_null(buf);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < cap; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    uint64_t whole = reference(7, buf, (size_t)1 << 20);
    assert_true(gb_crc64(7, buf, (size_t)1 << 20) == whole);
    assert_true(gb_crc64_tables(7, buf, (size_t)1 << 20) == whole);
    for (size_t extra = 1; extra < 48; extra += 5) {
        size_t n = ((size_t)1 << 20) + extra;
        uint64_t want = reference(7, buf + 3, n);
        assert_true(gb_crc64(7, buf + 3, n) == want);
        assert_true(gb_crc64_tables(7, buf + 3, n) == want);
    }
    /* and continued from a long buffer's CRC, as a file read in pieces is */
    assert_true(gb_crc64(gb_crc64(7, buf, (size_t)1 << 20), buf + ((size_t)1 << 20), 64) ==
                reference(whole, buf + ((size_t)1 << 20), 64));
    free(buf);
}

/* The fold's constants are what platform/clmul.h defines: R(x^e mod P),
 * the CRC from 0 of 0x01 and (e - 71) / 8 zero bytes. */
static void test_fold_constants(void **state)
{
    (void)state;
    static const struct {
        int e;
        uint64_t k;
    } want[] = {{575, 0xaf86efb16d9ab4fbull}, {511, 0xf49784a634f014e4ull}, {191, 0xd9d7be7d505da32cull},
                {127, 0x381d0015c96f4444ull}};
    unsigned char msg[64] = {1};
    for (size_t i = 0; i < 4; i++)
        assert_true(reference(0, msg, (size_t)(want[i].e - 71) / 8 + 1) == want[i].k);
}

/* Every length from 0 to 1,100 (all of the fold's lane and tail cases),
 * sixteen alignments, a non-zero start; and the fold itself, where this
 * CPU has one, on whole blocks. */
static void test_fold_matches_the_definition(void **state)
{
    (void)state;
    static unsigned char buf[1200];
    uint64_t x = 0x2545f4914f6cdd1dull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    for (size_t off = 0; off < 16; off++)
        for (size_t n = 0; n + off <= 1100; n += off < 2 ? 1 : 7)
            assert_true(gb_crc64(0xfeedfacecafebeefull, buf + off, n) ==
                        reference(0xfeedfacecafebeefull, buf + off, n));
    gb_clmul_fold_fn *fold = gb_clmul_fold();
    if (fold) {
        for (size_t n = 16; n <= 1024; n += 16) {
            unsigned char out[16];
            fold((const uint64_t[4]){0xaf86efb16d9ab4fbull, 0xf49784a634f014e4ull, 0xd9d7be7d505da32cull,
                                     0x381d0015c96f4444ull},
                 99, buf + 1, n, out);
            assert_true(reference(0, out, 16) == reference(99, buf + 1, n));
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_value),
        cmocka_unit_test(test_incremental),
        cmocka_unit_test(test_redis_payload),
        cmocka_unit_test(test_slices_match_the_definition),
        cmocka_unit_test(test_streams_match_the_definition),
        cmocka_unit_test(test_fold_constants),
        cmocka_unit_test(test_fold_matches_the_definition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
