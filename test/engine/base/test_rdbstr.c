/* engine/base/rdbstr.c: RDB lengths at every boundary, the integer and LZF
 * string encodings (the LZF string redis-server 7.0.15 wrote in a FUNCTION
 * DUMP), and hostile strings refused: truncated anywhere, a wrong original
 * length, more than the block can expand to, past the cap, unknown
 * encodings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/base/mem.h"
#include "engine/base/rdbstr.h"

static int read_str(const char *p, size_t n, size_t max, char **out, size_t *len, size_t *used)
{
    gb_rdb_reader r = gb_rdb_reader_make(p, n);
    int rc = gb_rdb_read_string(&r, max, out, len);
    if (used)
        *used = r.pos;
    return rc;
}

static void test_lengths(void **state)
{
    (void)state;
    static const struct {
        uint64_t len;
        size_t bytes;
        uint8_t first;
    } v[] = {{0, 1, 0x00},          {63, 1, 0x3f},           {64, 2, 0x40},
             {16383, 2, 0x7f},      {16384, 5, 0x80},        {UINT32_MAX, 5, 0x80},
             {1ull << 32, 9, 0x81}, {UINT64_MAX, 9, 0x81}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        gb_strbuf b = {0};
        gb_rdb_write_len(&b, v[i].len);
        assert_int_equal(b.len, v[i].bytes);
        assert_int_equal((uint8_t)b.p[0], v[i].first);
        gb_rdb_reader r = gb_rdb_reader_make(b.p, b.len);
        uint64_t got;
        bool enc;
        assert_int_equal(gb_rdb_read_len(&r, &got, &enc), 0);
        assert_false(enc);
        assert_true(got == v[i].len);
        assert_int_equal(r.pos, b.len);
        /* Every truncation is refused. */
        for (size_t cut = 0; cut < b.len; cut++) {
            gb_rdb_reader t = gb_rdb_reader_make(b.p, cut);
            assert_int_equal(gb_rdb_read_len(&t, &got, &enc), -1);
        }
        gb_strbuf_free(&b);
    }
    /* 14 bits are big-endian; 10xxxxxx other than 0x80/0x81 is no length. */
    gb_rdb_reader r = gb_rdb_reader_make("\x41\x0e", 2);
    uint64_t got;
    bool enc;
    assert_int_equal(gb_rdb_read_len(&r, &got, &enc), 0);
    assert_true(got == 270);
    r = gb_rdb_reader_make("\x82\x00\x00\x00\x00", 5);
    assert_int_equal(gb_rdb_read_len(&r, &got, &enc), -1);
    r = gb_rdb_reader_make("\xc3", 1);
    assert_int_equal(gb_rdb_read_len(&r, &got, &enc), 0);
    assert_true(enc && got == 3);
}

static void test_plain_strings(void **state)
{
    (void)state;
    for (size_t n = 0; n < 20000; n = n * 2 + 1) {
        char *s = malloc(n + 1);
        memset(s, 'q', n);
        gb_strbuf b = {0};
        gb_rdb_write_string(&b, s, n);
        char *out;
        size_t len, used;
        assert_int_equal(read_str(b.p, b.len, SIZE_MAX, &out, &len, &used), 0);
        assert_int_equal(len, n);
        assert_int_equal(used, b.len);
        assert_memory_equal(out, s, n);
        gb_free(out);
        for (size_t cut = 0; cut < b.len; cut += 1 + cut / 8)
            assert_int_equal(read_str(b.p, cut, SIZE_MAX, &out, &len, NULL), -1);
        if (n)
            assert_int_equal(read_str(b.p, b.len, n - 1, &out, &len, NULL), -1); /* past the cap */
        gb_strbuf_free(&b);
        free(s);
    }
    /* A 64-bit length with a few bytes behind it. */
    char *out;
    size_t len;
    assert_int_equal(read_str("\x81\xff\xff\xff\xff\xff\xff\xff\xff" "abc", 12, SIZE_MAX, &out, &len, NULL), -1);
}

static void test_integers(void **state)
{
    (void)state;
    static const struct {
        const char *enc;
        size_t n;
        const char *text;
    } v[] = {{"\xc0\x05", 2, "5"},           {"\xc0\xff", 2, "-1"},
             {"\xc0\x80", 2, "-128"},        {"\xc1\x00\x80", 3, "-32768"},
             {"\xc1\x39\x30", 3, "12345"},   {"\xc2\xff\xff\xff\x7f", 5, "2147483647"},
             {"\xc2\x00\x00\x00\x80", 5, "-2147483648"}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char *out;
        size_t len;
        assert_int_equal(read_str(v[i].enc, v[i].n, SIZE_MAX, &out, &len, NULL), 0);
        assert_int_equal(len, strlen(v[i].text));
        assert_memory_equal(out, v[i].text, len);
        gb_free(out);
        for (size_t cut = 0; cut < v[i].n; cut++)
            assert_int_equal(read_str(v[i].enc, cut, SIZE_MAX, &out, &len, NULL), -1);
    }
    char *out;
    size_t len;
    assert_int_equal(read_str("\xc4" "abc", 4, SIZE_MAX, &out, &len, NULL), -1); /* no such encoding */
    assert_int_equal(read_str("\xff", 1, SIZE_MAX, &out, &len, NULL), -1);
}

/* The long library's string from redis-server 7.0.15's FUNCTION DUMP. */
static const char REDIS_LZF[] = "\xc3\x40\x4a\x41\x0e"
                                "\x1f#!lua name=ab\nredis.register_fun\x09"
                                "ction('g',\xe0\x00\x0c\x13) return 1 end)\n-- x\xe0\xbc\x00\x01xx";

static void test_lzf_strings(void **state)
{
    (void)state;
    size_t n = sizeof REDIS_LZF - 1;
    char *out;
    size_t len, used;
    assert_int_equal(read_str(REDIS_LZF, n, SIZE_MAX, &out, &len, &used), 0);
    assert_int_equal(len, 270);
    assert_int_equal(used, n);
    assert_memory_equal(out, "#!lua name=ab\nredis.register_function('g',function() return 1 end)\n-- xxx", 73);
    for (size_t i = 70; i < 270; i++)
        assert_int_equal(out[i], 'x');
    gb_free(out);
    for (size_t cut = 0; cut < n; cut++)
        assert_int_equal(read_str(REDIS_LZF, cut, SIZE_MAX, &out, &len, NULL), -1);
    assert_int_equal(read_str(REDIS_LZF, n, 269, &out, &len, NULL), -1); /* past the cap */
    /* A wrong original length, one less or one more. */
    char bad[sizeof REDIS_LZF];
    memcpy(bad, REDIS_LZF, sizeof bad);
    bad[4] = 0x0d;
    assert_int_equal(read_str(bad, n, SIZE_MAX, &out, &len, NULL), -1);
    bad[4] = 0x0f;
    assert_int_equal(read_str(bad, n, SIZE_MAX, &out, &len, NULL), -1);
    /* An original length the block cannot expand to is refused before
     * anything is allocated for it (2 bytes claiming 4 GiB). */
    assert_int_equal(read_str("\xc3\x02\x80\xff\xff\xff\xff\x00" "a", 9, SIZE_MAX, &out, &len, NULL), -1);
    /* A compressed length past the bytes there. */
    assert_int_equal(read_str("\xc3\x10\x01\x00" "a", 5, SIZE_MAX, &out, &len, NULL), -1);
    /* Declared empty: the empty string whatever the block (as Redis, whose
     * decompressor reports failure as 0 bytes). */
    assert_int_equal(read_str("\xc3\x01\x00\x00", 4, SIZE_MAX, &out, &len, NULL), 0);
    assert_int_equal(len, 0);
    gb_free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lengths),
        cmocka_unit_test(test_plain_strings),
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_lzf_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
