/* The cluster client's hash slots and redirection parsing
 * (transport/ring/client/ring_cluster_route.c). The slot values are
 * redis-server 7.0's answers to CLUSTER KEYSLOT for the same keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "goblin/ring_cluster.h"
#include "transport/ring/client/ring_cluster_route.h"

static void test_crc16_vector(void **state)
{
    (void)state;
    /* CRC16/XMODEM's check value, quoted in Redis's crc16.c */
    assert_int_equal(gb_rcl_crc16("123456789", 9), 0x31C3);
    assert_int_equal(gb_rcl_crc16("", 0), 0);
}

static void test_key_slots_match_redis(void **state)
{
    (void)state;
    static const struct {
        const char *key;
        int slot;
    } cases[] = {
        {"123456789", 12739},     {"foo", 12182},           {"bar", 5061},
        {"hello", 866},           {"{user1000}.following", 3443},
        {"{user1000}.followers", 3443},                     {"foo{}{bar}", 8363},
        {"foo{{bar}}zap", 4015},  {"foo{bar}{zap}", 5061},  {"{}", 15257},
        {"", 0},                  {"a{b", 13340},           {"key:0", 2592},
        {"{a}x", 15495},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(gb_rcl_key_slot(cases[i].key, strlen(cases[i].key)), cases[i].slot);
        assert_int_equal(gb_ring_cluster_key_slot(cases[i].key, strlen(cases[i].key)), cases[i].slot);
    }
    /* a key with bytes past a NUL: the length counts, not strlen */
    assert_int_equal(gb_rcl_key_slot("{a}\0zz", 6), gb_rcl_key_slot("a", 1));
    assert_int_not_equal(gb_rcl_key_slot("ab\0c", 4), gb_rcl_key_slot("ab", 2));
}

static gb_rcl_redirect_kind parse(const char *text, gb_rcl_redirect *rd)
{
    return gb_rcl_parse_redirect(text, strlen(text), rd);
}

static void test_redirections(void **state)
{
    (void)state;
    gb_rcl_redirect rd;
    assert_int_equal(parse("MOVED 3999 127.0.0.1:6381", &rd), GB_RCL_MOVED);
    assert_int_equal(rd.slot, 3999);
    assert_string_equal(rd.host, "127.0.0.1");
    assert_int_equal(rd.port, 6381);
    assert_int_equal(parse("ASK 16383 node-2.example:7000", &rd), GB_RCL_ASK);
    assert_int_equal(rd.slot, 16383);
    assert_string_equal(rd.host, "node-2.example");
    assert_int_equal(rd.port, 7000);
    /* IPv6: the port follows the last colon */
    assert_int_equal(parse("MOVED 0 ::1:7001", &rd), GB_RCL_MOVED);
    assert_string_equal(rd.host, "::1");
    assert_int_equal(rd.port, 7001);
    /* an unknown endpoint: Redis sends ":port" */
    assert_int_equal(parse("MOVED 12 :7002", &rd), GB_RCL_MOVED);
    assert_string_equal(rd.host, "");
    assert_int_equal(rd.port, 7002);
    assert_int_equal(parse("TRYAGAIN Multiple keys request during rehashing of slot", &rd), GB_RCL_TRYAGAIN);
    assert_int_equal(parse("TRYAGAIN", &rd), GB_RCL_TRYAGAIN);
}

static void test_not_redirections(void **state)
{
    (void)state;
    char long_host[400];
    memset(long_host, 'h', sizeof long_host);
    memcpy(long_host, "MOVED 1 ", 8);
    strcpy(long_host + sizeof long_host - 8, ":6379");
    const char *bad[] = {
        "MOVED", "MOVED ", "MOVED 1", "MOVED 1 ", "MOVED 16384 h:1", "MOVED -1 h:1", "MOVED 12 h:0",
        "MOVED 12 h:65536", "MOVED 12 h:70000", "MOVED 12 h", "MOVED 12 h:12x", "MOVED 12 h:", "MOVED 123456 h:1",
        "MOVED 99999999999999999999 h:1", "MOVED 12 h:1 extra", "MOVEDX 1 h:1", "moved 1 h:1", "ASK 1  h:1",
        "ASK x h:1", "ASKING", "TRYAGAINX", "ERR unknown command", "CLUSTERDOWN The cluster is down",
        "CROSSSLOT Keys in request don't hash to the same slot", "", long_host,
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gb_rcl_redirect rd;
        memset(&rd, 0x5a, sizeof rd);
        if (parse(bad[i], &rd) != GB_RCL_NOT_REDIRECT)
            fail_msg("taken as a redirection: \"%s\"", bad[i]);
        assert_int_equal(rd.kind, GB_RCL_NOT_REDIRECT);
        assert_int_equal(rd.host[0], '\0');
    }
    gb_rcl_redirect rd;
    /* a NUL inside the host, and text cut short by its length */
    assert_int_equal(gb_rcl_parse_redirect("MOVED 1 a\0b:1", 13, &rd), GB_RCL_NOT_REDIRECT);
    assert_int_equal(gb_rcl_parse_redirect("MOVED 1 h:12", 9, &rd), GB_RCL_NOT_REDIRECT);
    assert_int_equal(gb_rcl_parse_redirect(NULL, 0, &rd), GB_RCL_NOT_REDIRECT);
}

static void test_split_address(void **state)
{
    (void)state;
    char host[8];
    int port = 0;
    assert_true(gb_rcl_split_address("h:1", 3, host, sizeof host, &port));
    assert_string_equal(host, "h");
    assert_int_equal(port, 1);
    assert_false(gb_rcl_split_address("toolonghost:1", 13, host, sizeof host, &port));
    assert_false(gb_rcl_split_address("nocolon", 7, host, sizeof host, &port));
    assert_false(gb_rcl_split_address("h:+1", 4, host, sizeof host, &port));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc16_vector),      cmocka_unit_test(test_key_slots_match_redis),
        cmocka_unit_test(test_redirections),      cmocka_unit_test(test_not_redirections),
        cmocka_unit_test(test_split_address),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
