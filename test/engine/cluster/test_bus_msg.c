/* engine/cluster/bus_msg.c: a MEET redis-server 7.0.15 sent (with a
 * hostname extension) read field by field; what this node writes read
 * back; and every way a hostile peer may lie about lengths refused:
 * a truncated message, a bad signature, an oversized or undersized
 * totlen, a gossip count past the end, extensions that overrun or are
 * not padded, another protocol version. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/cluster/bus_msg.h"

static uint8_t *read_seed(const char *name, size_t *len)
{
    const char *src = getenv("GOBLIN_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/test/fuzz/corpus/cluster_bus/%s", src ? src : ".", name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t *buf = malloc(1 << 16);
    *len = fread(buf, 1, 1 << 16, f);
    fclose(f);
    return buf;
}

static void test_redis_meet(void **state)
{
    (void)state;
    size_t len;
    uint8_t *p = read_seed("redis-7.0.15-meet-hostname", &len);
    assert_int_equal(len, 2280);
    gb_bus_msg m;
    assert_null(gb_bus_parse(p, len, &m));
    assert_int_equal(m.type, GB_BUS_MEET);
    assert_int_equal(m.count, 0);
    assert_int_equal(m.port, 7313);
    assert_int_equal(m.cport, 17313);
    assert_int_equal(m.flags, GB_CNODE_MYSELF | GB_CNODE_MASTER);
    assert_memory_equal(m.sender, "f4c8cfd194716af44d64e02d602010910c41a98e", 40);
    assert_string_equal(m.myip, "");
    assert_non_null(m.hostname);
    assert_int_equal(m.hostname_len, 14);
    assert_memory_equal(m.hostname, "host-a.example", 14);
    /* slots 0, 1 and 5: bits 0, 1 and 5 of the first byte, LSB first */
    assert_int_equal(m.myslots[0], 0x23);
    free(p);
}

static gb_bus_self a_self(void)
{
    static uint8_t slots[GB_CLUSTER_SLOTS / 8];
    slots[1] = 0x80; /* slot 15 */
    gb_bus_self s = {.name = "0123456789012345678901234567890123456789", .slots = slots, .ip = "10.0.0.1",
                     .port = 7000, .cport = 17000, .flags = GB_CNODE_MASTER, .state = 1, .current_epoch = 9,
                     .config_epoch = 3, .offset = 1234, .hostname = "node-1"};
    return s;
}

static uint8_t *a_ping(size_t *len, unsigned ngossip)
{
    gb_bus_self self = a_self();
    gb_bus_gossip g[3];
    memset(g, 0, sizeof g);
    for (unsigned i = 0; i < 3; i++) {
        memset(g[i].name, 'a' + (int)i, 40);
        snprintf(g[i].ip, sizeof g[i].ip, "127.0.0.%u", i + 1);
        g[i].port = (uint16_t)(7000 + i);
        g[i].cport = (uint16_t)(17000 + i);
        g[i].flags = GB_CNODE_MASTER;
        g[i].pong_received = 1700000000u + i;
    }
    *len = gb_bus_ping_size(&self, ngossip);
    uint8_t *p = malloc(*len);
    gb_bus_write_ping(p, GB_BUS_PING, &self, g, ngossip);
    return p;
}

static void test_round_trip(void **state)
{
    (void)state;
    size_t len;
    uint8_t *p = a_ping(&len, 3);
    assert_int_equal(len, GB_BUS_HEADER_LEN + 3 * GB_BUS_GOSSIP_LEN + 16);
    gb_bus_msg m;
    assert_null(gb_bus_parse(p, len, &m));
    assert_int_equal(m.type, GB_BUS_PING);
    assert_int_equal(m.count, 3);
    assert_int_equal(m.current_epoch, 9);
    assert_int_equal(m.config_epoch, 3);
    assert_int_equal(m.offset, 1234);
    assert_string_equal(m.myip, "10.0.0.1");
    assert_int_equal(m.myslots[1], 0x80);
    assert_int_equal(m.hostname_len, 6);
    gb_bus_gossip g;
    gb_bus_gossip_at(&m, 2, &g);
    assert_string_equal(g.ip, "127.0.0.3");
    assert_int_equal(g.port, 7002);
    assert_int_equal(g.cport, 17002);
    assert_int_equal(g.pong_received, 1700000002u);
    free(p);
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static void test_hostile_lengths(void **state)
{
    (void)state;
    size_t len;
    uint8_t *p = a_ping(&len, 3);
    gb_bus_msg m;
    uint32_t totlen;
    /* truncated: every shorter prefix is refused */
    for (size_t cut = 0; cut < len; cut += 97)
        assert_non_null(gb_bus_parse(p, cut, &m));
    /* the prefix check: signature, a length below a header; no cap above
     * (as in Redis: the reader's buffer grows only as bytes arrive) */
    assert_true(gb_bus_check_prefix(p, &totlen));
    assert_int_equal(totlen, len);
    p[0] = 'X';
    assert_false(gb_bus_check_prefix(p, &totlen));
    assert_non_null(gb_bus_parse(p, len, &m));
    p[0] = 'R';
    put32(p + 4, GB_BUS_HEADER_LEN - 1);
    assert_false(gb_bus_check_prefix(p, &totlen));
    put32(p + 4, 0xffffffffu);
    assert_true(gb_bus_check_prefix(p, &totlen));
    assert_int_equal(totlen, 0xffffffffu);
    put32(p + 4, (uint32_t)len);
    /* a gossip count past the end */
    p[14] = 0xff, p[15] = 0xff;
    assert_non_null(gb_bus_parse(p, len, &m));
    p[14] = 0, p[15] = 3;
    /* an extension longer than what remains, or not padded */
    uint8_t *ext = p + GB_BUS_HEADER_LEN + 3 * GB_BUS_GOSSIP_LEN;
    put32(ext, 24);
    assert_non_null(gb_bus_parse(p, len, &m));
    put32(ext, 12);
    assert_non_null(gb_bus_parse(p, len, &m));
    put32(ext, 0);
    assert_non_null(gb_bus_parse(p, len, &m));
    put32(ext, 16);
    /* more extensions announced than there are */
    p[2214] = 0, p[2215] = 2;
    assert_non_null(gb_bus_parse(p, len, &m));
    p[2215] = 1;
    /* a hostname without its NUL */
    memset(ext + 8, 'x', 8);
    assert_non_null(gb_bus_parse(p, len, &m));
    memset(ext + 8, 0, 8);
    assert_null(gb_bus_parse(p, len, &m));
    /* another version */
    p[9] = 2;
    assert_non_null(gb_bus_parse(p, len, &m));
    free(p);
}

static void test_fixed_types(void **state)
{
    (void)state;
    gb_bus_self self = a_self();
    uint8_t fail[GB_BUS_FAIL_LEN];
    gb_bus_write_fail(fail, &self, "ffffffffffffffffffffffffffffffffffffffff");
    gb_bus_msg m;
    assert_null(gb_bus_parse(fail, sizeof fail, &m));
    assert_int_equal(m.type, GB_BUS_FAIL);
    assert_memory_equal(m.about, "ffffffffffffffffffffffffffffffffffffffff", 40);
    put32(fail + 4, GB_BUS_FAIL_LEN - 1); /* a FAIL one byte short */
    assert_non_null(gb_bus_parse(fail, GB_BUS_FAIL_LEN - 1, &m));
    uint8_t *up = malloc(GB_BUS_UPDATE_LEN);
    gb_bus_write_update(up, &self, "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee", 77, self.slots);
    assert_null(gb_bus_parse(up, GB_BUS_UPDATE_LEN, &m));
    assert_int_equal(m.update_epoch, 77);
    assert_int_equal(m.update_slots[1], 0x80);
    free(up);
    /* a PUBLISH whose lengths add up past the message */
    uint8_t pub[GB_BUS_HEADER_LEN + 8 + 4];
    gb_bus_write_header(pub, GB_BUS_PUBLISH, sizeof pub, &self);
    put32(pub + GB_BUS_HEADER_LEN, 0xfffffffeu);
    put32(pub + GB_BUS_HEADER_LEN + 4, 6);
    assert_non_null(gb_bus_parse(pub, sizeof pub, &m));
    put32(pub + GB_BUS_HEADER_LEN, 2);
    put32(pub + GB_BUS_HEADER_LEN + 4, 2);
    assert_null(gb_bus_parse(pub, sizeof pub, &m));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redis_meet),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_hostile_lengths),
        cmocka_unit_test(test_fixed_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
