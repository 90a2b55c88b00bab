/* engine/base/lzf.c: a block redis-server wrote, round trips through a tiny
 * reference compressor, and hostile blocks (truncated, a back-reference
 * before the start, output past the room given, random bytes) refused
 * without reading or writing out of bounds (ASan runs this). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/base/lzf.h"

/* The long library's string in redis-server 7.0.15's FUNCTION DUMP: 74
 * compressed bytes standing for 270. */
static const char REDIS_BLOCK[] = "\x1f#!lua name=ab\nredis.register_fun\x09"
                                  "ction('g',\xe0\x00\x0c\x13) return 1 end)\n-- x\xe0\xbc\x00\x01xx";

static size_t redis_original(char *out)
{
    const char *head = "#!lua name=ab\nredis.register_function('g',function() return 1 end)\n-- ";
    size_t n = strlen(head);
    memcpy(out, head, n);
    memset(out + n, 'x', 200);
    return n + 200;
}

/* Greedy LZF with an exhaustive search of the 8 KiB window: slow, simple,
 * and it emits every item kind (short and long references, literal runs up
 * to 32 bytes). */
static size_t flush_run(uint8_t *out, size_t op, const uint8_t *run, size_t *lit)
{
    if (*lit) {
        out[op++] = (uint8_t)(*lit - 1);
        memcpy(out + op, run, *lit);
        op += *lit;
        *lit = 0;
    }
    return op;
}

static size_t ref_compress(const uint8_t *in, size_t n, uint8_t *out)
{
    size_t ip = 0, op = 0, lit = 0;
    uint8_t run[32];
    while (ip < n) {
        size_t best = 0, off = 0;
        for (size_t cand = ip > 8192 ? ip - 8192 : 0; cand < ip; cand++) {
            size_t l = 0;
            while (ip + l < n && l < 264 && in[cand + l] == in[ip + l])
                l++;
            if (l > best) {
                best = l;
                off = ip - cand;
            }
        }
        if (best < 3) {
            run[lit++] = in[ip++];
            if (lit == 32)
                op = flush_run(out, op, run, &lit);
            continue;
        }
        op = flush_run(out, op, run, &lit);
        size_t len = best - 2, o = off - 1;
        if (len < 7) {
            out[op++] = (uint8_t)(len << 5 | o >> 8);
        } else {
            out[op++] = (uint8_t)(7 << 5 | o >> 8);
            out[op++] = (uint8_t)(len - 7);
        }
        out[op++] = (uint8_t)o;
        ip += best;
    }
    return flush_run(out, op, run, &lit);
}

static void test_redis_block(void **state)
{
    (void)state;
    char want[300], got[270];
    size_t n = redis_original(want);
    assert_int_equal(n, 270);
    assert_int_equal(sizeof REDIS_BLOCK - 1, 74);
    assert_int_equal(gb_lzf_decompress(REDIS_BLOCK, 74, got, sizeof got), 270);
    assert_memory_equal(got, want, 270);
    /* One byte less room: refused, not cut short. */
    assert_int_equal(gb_lzf_decompress(REDIS_BLOCK, 74, got, 269), -1);
    /* Every truncation either fails or stands for fewer bytes. */
    for (size_t cut = 0; cut < 74; cut++)
        assert_true(gb_lzf_decompress(REDIS_BLOCK, cut, got, sizeof got) < 270);
}

static void fill(uint8_t *p, size_t n, unsigned seed, int alphabet)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)('a' + (seed >> 16) % (unsigned)alphabet);
    }
}

static void test_round_trips(void **state)
{
    (void)state;
    enum { MAX = 20000 };
    uint8_t *in = malloc(MAX), *block = malloc(MAX * 2), *out = malloc(MAX);
    static const size_t sizes[] = {1, 2, 3, 31, 32, 33, 100, 264, 265, 1000, 9000, MAX};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int alphabet = 1; alphabet <= 26; alphabet += 5) {
            size_t n = sizes[s];
            fill(in, n, (unsigned)(n * 31 + (size_t)alphabet), alphabet);
            size_t clen = ref_compress(in, n, block);
            assert_int_equal(gb_lzf_decompress(block, clen, out, n), (int64_t)n);
            assert_memory_equal(in, out, n);
            if (n > 1)
                assert_int_equal(gb_lzf_decompress(block, clen, out, n - 1), -1);
        }
    free(in);
    free(block);
    free(out);
}

/* gb_lzf_compress: what it writes decodes back (with exact room and with
 * spare room, the decoder's wide-copy path), equals the reference decoder's
 * view, never passes the room it is given (0 then), and the Redis block's
 * original compresses at least as well as redis-server did. */
static void test_compressor(void **state)
{
    (void)state;
    enum { MAX = 20000, SPARE = 64 };
    uint8_t *in = malloc(MAX), *block = malloc(MAX * 2 + SPARE), *out = malloc(MAX + SPARE);
    static const size_t sizes[] = {0, 1, 2, 3, 4, 31, 32, 33, 100, 264, 265, 266, 1000, 8192, MAX};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int alphabet = 1; alphabet <= 256; alphabet = alphabet < 26 ? alphabet + 5 : alphabet * 2) {
            size_t n = sizes[s];
            fill(in, n, (unsigned)(n * 17 + (size_t)alphabet), alphabet);
            size_t clen = gb_lzf_compress(in, n, block, MAX * 2);
            assert_true(n == 0 || clen > 0);
            assert_int_equal(gb_lzf_decompress(block, clen, out, n), (int64_t)n);
            assert_memory_equal(in, out, n);
            assert_int_equal(gb_lzf_decompress(block, clen, out, n + SPARE), (int64_t)n);
            assert_memory_equal(in, out, n);
            if (alphabet == 1 && n > 100)
                assert_true(clen < n / 10); /* a run compresses */
            /* less room than it needs: 0, and nothing written past the room */
            if (clen > 1) {
                memset(block, 0xAB, clen + SPARE);
                assert_int_equal(gb_lzf_compress(in, n, block, clen - 1), 0);
                for (size_t i = clen - 1; i < clen + SPARE; i++)
                    assert_int_equal(block[i], 0xAB);
            }
        }
    char orig[300];
    size_t n = redis_original(orig);
    size_t clen = gb_lzf_compress(orig, n, block, MAX);
    assert_true(clen > 0 && clen <= 74 + 8);
    free(in);
    free(block);
    free(out);
}

static void test_hostile(void **state)
{
    (void)state;
    uint8_t out[64];
    /* A reference with nothing written yet, and one reaching back too far. */
    assert_int_equal(gb_lzf_decompress("\x20\x00", 2, out, sizeof out), -1);
    assert_int_equal(gb_lzf_decompress("\x01" "ab" "\x20\x02", 5, out, sizeof out), -1);
    assert_int_equal(gb_lzf_decompress("\x01" "ab" "\x20\x01", 5, out, sizeof out), 5);
    assert_memory_equal(out, "ababa", 5);
    /* Truncated: a literal run, a long reference's length, its offset. */
    assert_int_equal(gb_lzf_decompress("\x05" "abc", 4, out, sizeof out), -1);
    assert_int_equal(gb_lzf_decompress("\x00" "a" "\xe0", 3, out, sizeof out), -1);
    assert_int_equal(gb_lzf_decompress("\x00" "a" "\xe0\x10", 4, out, sizeof out), -1);
    assert_int_equal(gb_lzf_decompress("\x00" "a" "\x20", 3, out, sizeof out), -1);
    /* An overlong reference: more than the room left. */
    assert_int_equal(gb_lzf_decompress("\x00" "a" "\xe0\xff\x00", 5, out, sizeof out), -1);
    /* Empty in, no room. */
    assert_int_equal(gb_lzf_decompress("", 0, out, 0), 0);
    assert_int_equal(gb_lzf_decompress("\x00" "a", 2, out, 0), -1);
    /* Random blocks: whatever they decode to stays inside the buffers. */
    uint8_t block[256];
    unsigned seed = 7;
    for (int round = 0; round < 20000; round++) {
        size_t n = (size_t)(round % 256);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            block[i] = (uint8_t)(seed >> 16);
        }
        uint8_t *heap_in = malloc(n ? n : 1), *heap_out = malloc(48);
        memcpy(heap_in, block, n);
        int64_t got = gb_lzf_decompress(heap_in, n, heap_out, 48);
        assert_true(got >= -1 && got <= 48);
        free(heap_in);
        free(heap_out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redis_block),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_compressor),
        cmocka_unit_test(test_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
