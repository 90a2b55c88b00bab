/* engine/cluster/keyslot.c: CRC16-XMODEM's check value and the hash slots
 * redis-server 7.0.15's CLUSTER KEYSLOT gives, hash tags included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/cluster/keyslot.h"

static void test_check_value(void **state)
{
    (void)state;
    assert_int_equal(gb_crc16("123456789", 9), 0x31c3);
    assert_int_equal(gb_crc16("", 0), 0);
}

static unsigned slot_of(const char *key) { return gb_keyslot(key, strlen(key)); }

/* Each key with the slot redis-server answered for it. */
static void test_redis_slots(void **state)
{
    (void)state;
    static const struct {
        const char *key;
        unsigned slot;
    } cases[] = {
        {"foo", 12182},        {"{}", 15257},    {"{a}{b}", 15495}, {"a{}{b}", 15033},
        {"{user1000}.following", 3443}, {"{user1000}.followers", 3443}, {"a{", 14311},
        {"}{a}", 15495},       {"", 0},          {"123456789", 12739},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_int_equal(slot_of(cases[i].key), cases[i].slot);
}

/* The tag is what lies between the first '{' and the first '}' after it,
 * when that is not empty; bytes past the key's length are never read. */
static void test_tags(void **state)
{
    (void)state;
    assert_int_equal(slot_of("x{tag}y"), slot_of("tag"));
    assert_int_equal(slot_of("{tag}"), slot_of("{tag}zzz"));
    assert_int_equal(slot_of("{{tag}}"), slot_of("{tag"));
    assert_int_equal(slot_of("a{}b{c}"), gb_crc16("a{}b{c}", 7) & 16383);
    /* a '}' just past the key's end is not part of the key */
    assert_int_equal(gb_keyslot("{ab}", 3), gb_crc16("{ab", 3) & 16383);
    assert_int_equal(gb_keyslot("{", 1), gb_crc16("{", 1) & 16383);
    /* binary keys */
    assert_int_equal(gb_keyslot("\0{\0}", 4), gb_crc16("\0", 1) & 16383);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_value),
        cmocka_unit_test(test_redis_slots),
        cmocka_unit_test(test_tags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
