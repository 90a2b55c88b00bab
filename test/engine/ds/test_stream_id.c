/* engine/ds/stream_id.c: IDs parsed with Redis 7.0's acceptance (string2ll,
 * then strtoull) whether they take the digits-only fast path (leading
 * zeros, as redis-benchmark's __rand_int__ sends them) or the slow one
 * ('+', blanks), and the 16-byte key encoding kept in ID order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/ds/stream_id.h"

static bool parse(const char *text, gb_stream_id *id)
{
    return gb_stream_id_parse(gb_slice_cstr(text), 7, true, id, NULL);
}

static void test_parse_accepts_as_redis(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t ms, seq;
    } good[] = {
        {"0-0", 0, 0},
        {"000000012345-0", 12345, 0},
        {"000000012345-000", 12345, 0},
        {"12345", 12345, 7}, /* missing_seq */
        {"18446744073709551615-18446744073709551615", UINT64_MAX, UINT64_MAX},
        {"0000000000000000000018446744073709551615-1", UINT64_MAX, 1},
        {"9223372036854775808-0", 9223372036854775808ull, 0}, /* past int64: strtoull's */
        {"+5-+6", 5, 6},                                       /* strtoull takes a sign */
        {" 5- 6", 5, 6},                                       /* ... and leading blanks */
    };
    for (size_t i = 0; i < GB_ARRAY_LEN(good); i++) {
        gb_stream_id id = {0, 0};
        if (!parse(good[i].text, &id))
            fail_msg("rejected %s", good[i].text);
        assert_int_equal(id.ms, good[i].ms);
        assert_int_equal(id.seq, good[i].seq);
    }
}

static void test_parse_rejects_as_redis(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "", "-", "+", "-1-0", "1--1", "18446744073709551616-0", "1-18446744073709551616",
        "99999999999999999999999x-0", "5 -0", "1-2-3", "1-*", "0x10-0", "1a-0", "1-",
    };
    for (size_t i = 0; i < GB_ARRAY_LEN(bad); i++) {
        gb_stream_id id;
        if (parse(bad[i], &id))
            fail_msg("accepted \"%s\"", bad[i]);
    }
}

static void test_keys_sort_as_ids(void **state)
{
    (void)state;
    static const gb_stream_id ids[] = {{0, 0}, {0, 1}, {0, UINT64_MAX}, {1, 0}, {255, 3}, {256, 0}, {UINT64_MAX, 0}};
    uint8_t prev[GB_STREAM_ID_KEY], key[GB_STREAM_ID_KEY];
    for (size_t i = 0; i < GB_ARRAY_LEN(ids); i++) {
        gb_stream_id_encode(key, ids[i]);
        gb_stream_id back = gb_stream_id_decode(key);
        assert_int_equal(gb_stream_id_cmp(back, ids[i]), 0);
        if (i)
            assert_true(memcmp(prev, key, sizeof key) < 0);
        memcpy(prev, key, sizeof key);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_accepts_as_redis),
        cmocka_unit_test(test_parse_rejects_as_redis),
        cmocka_unit_test(test_keys_sort_as_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
