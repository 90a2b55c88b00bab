/*
 * The cluster bus's reader (engine/cluster/bus_msg.h) over what a hostile
 * peer may send on a link: a stream of bytes cut into messages the way the
 * bus reads them (8 bytes, the prefix check, then totlen bytes), each
 * message parsed on an exactly-sized heap copy (the sanitizers see any
 * read past it). Checked: a length the prefix accepts is bounded; a
 * message that parses has its gossip inside it and its hostname inside it;
 * a PING/PONG/MEET written back from what was read parses again with the
 * same fields.
 */
#include "fuzz_util.h"

#include "engine/cluster/bus_msg.h"

static void check_message(const uint8_t *data, size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, data, len);
    gb_bus_msg m;
    if (gb_bus_parse(copy, len, &m) == NULL) {
        FUZZ_CHECK(m.totlen == len, "totlen %u for %zu bytes", m.totlen, len);
        bool ping = m.type == GB_BUS_PING || m.type == GB_BUS_PONG || m.type == GB_BUS_MEET;
        if (ping) {
            FUZZ_CHECK(GB_BUS_HEADER_LEN + (size_t)m.count * GB_BUS_GOSSIP_LEN <= len, "gossip past the end");
            gb_bus_gossip *g = malloc(((size_t)m.count + 1) * sizeof *g);
            for (unsigned i = 0; i < m.count; i++)
                gb_bus_gossip_at(&m, i, &g[i]);
            if (m.hostname)
                FUZZ_CHECK((const uint8_t *)m.hostname + m.hostname_len < copy + len, "hostname past the end");
            /* written back, read again */
            char host[256];
            size_t hl = m.hostname && m.hostname_len < sizeof host ? m.hostname_len : 0;
            memcpy(host, m.hostname ? m.hostname : "", hl);
            host[hl] = '\0';
            gb_bus_self self = {.name = m.sender, .slots = m.myslots, .replica_of = m.replica_of, .ip = m.myip,
                                .port = m.port, .pport = m.pport, .cport = m.cport, .flags = m.flags,
                                .state = m.state, .current_epoch = m.current_epoch,
                                .config_epoch = m.config_epoch, .offset = m.offset, .hostname = host};
            size_t n = gb_bus_ping_size(&self, m.count);
            uint8_t *out = malloc(n);
            gb_bus_write_ping(out, m.type, &self, g, m.count);
            gb_bus_msg again;
            FUZZ_CHECK(gb_bus_parse(out, n, &again) == NULL, "a message written back does not parse");
            FUZZ_CHECK(again.count == m.count && again.current_epoch == m.current_epoch &&
                           again.config_epoch == m.config_epoch && again.port == m.port &&
                           memcmp(again.sender, m.sender, GB_CLUSTER_NAMELEN) == 0 &&
                           strcmp(again.myip, m.myip) == 0,
                       "fields changed when written back");
            for (unsigned i = 0; i < m.count; i++) {
                gb_bus_gossip e;
                gb_bus_gossip_at(&again, i, &e);
                FUZZ_CHECK(e.port == g[i].port && e.cport == g[i].cport && strcmp(e.ip, g[i].ip) == 0,
                           "gossip changed when written back");
            }
            free(out);
            free(g);
        }
    }
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the stream as a link reads it: message after message */
    while (size >= 8) {
        uint32_t totlen;
        if (!gb_bus_check_prefix(data, &totlen))
            return 0; /* the link would be closed */
        FUZZ_CHECK(totlen >= GB_BUS_HEADER_LEN, "prefix accepted %u", totlen);
        if (totlen > size)
            return 0; /* the rest never came */
        check_message(data, totlen);
        data += totlen;
        size -= totlen;
    }
    return 0;
}
