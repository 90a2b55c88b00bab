#define _POSIX_C_SOURCE 200809L /* strnlen */
#include "engine/cluster/bus_msg.h"

#include <string.h>

/* Offsets in the header (bus_msg.h lists them all). */
enum {
    OFF_TOTLEN = 4,
    OFF_VER = 8,
    OFF_PORT = 10,
    OFF_TYPE = 12,
    OFF_COUNT = 14,
    OFF_CURRENT_EPOCH = 16,
    OFF_CONFIG_EPOCH = 24,
    OFF_OFFSET = 32,
    OFF_SENDER = 40,
    OFF_MYSLOTS = 80,
    OFF_SLAVEOF = 2128,
    OFF_MYIP = 2168,
    OFF_EXTENSIONS = 2214,
    OFF_PPORT = 2246,
    OFF_CPORT = 2248,
    OFF_FLAGS = 2250,
    OFF_STATE = 2252,
    OFF_MFLAGS = 2253,
};
#define EXT_HEADER_LEN 8u

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) << 32 | get32(p + 4); }
static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)(v >> 16));
    put16(p + 2, (uint16_t)v);
}
static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}

/* A fixed-size text field copied out NUL-terminated, whatever it holds. */
static void copy_text(char *dst, const uint8_t *src, size_t n)
{
    memcpy(dst, src, n);
    dst[n - 1] = '\0';
}

bool gb_bus_check_prefix(const uint8_t *p, uint32_t *totlen)
{
    *totlen = get32(p + OFF_TOTLEN);
    return memcmp(p, "RCmb", 4) == 0 && *totlen >= GB_BUS_HEADER_LEN;
}

/* PING/PONG/MEET: the gossip, then the extensions, which must end exactly
 * at the message's end. */
static const char *parse_ping(const uint8_t *p, size_t len, gb_bus_msg *m, uint16_t extensions)
{
    size_t explen = GB_BUS_HEADER_LEN + (size_t)m->count * GB_BUS_GOSSIP_LEN;
    if (explen > len)
        return "gossip past the message's end";
    m->gossip = p + GB_BUS_HEADER_LEN;
    if (m->mflags0 & GB_BUS_MFLAG0_EXT_DATA) {
        for (unsigned i = 0; i < extensions; i++) {
            if (len - explen < EXT_HEADER_LEN)
                return "an extension past the message's end";
            const uint8_t *ext = p + explen;
            uint32_t extlen = get32(ext);
            if (extlen % 8 != 0 || extlen < EXT_HEADER_LEN)
                return "an extension without proper padding";
            if (len - explen < extlen)
                return "an extension past the message's end";
            if (get16(ext + 4) == GB_BUS_EXT_HOSTNAME) {
                const char *text = (const char *)ext + EXT_HEADER_LEN;
                size_t room = extlen - EXT_HEADER_LEN;
                const char *nul = memchr(text, '\0', room);
                if (!nul)
                    return "a hostname extension without its end";
                m->hostname = text;
                m->hostname_len = (size_t)(nul - text);
            }
            explen += extlen;
        }
    }
    return explen == len ? NULL : "a length that is not its content's";
}

static const char *parse_data(const uint8_t *p, size_t len, gb_bus_msg *m, uint16_t extensions)
{
    const uint8_t *d = p + GB_BUS_HEADER_LEN;
    switch (m->type) {
    case GB_BUS_PING:
    case GB_BUS_PONG:
    case GB_BUS_MEET:
        return parse_ping(p, len, m, extensions);
    case GB_BUS_FAIL:
        if (len != GB_BUS_FAIL_LEN)
            return "a FAIL of the wrong length";
        m->about = (const char *)d;
        return NULL;
    case GB_BUS_UPDATE:
        if (len != GB_BUS_UPDATE_LEN)
            return "an UPDATE of the wrong length";
        m->update_epoch = get64(d);
        m->update_name = (const char *)d + 8;
        m->update_slots = d + 8 + GB_CLUSTER_NAMELEN;
        return NULL;
    case GB_BUS_PUBLISH:
    case GB_BUS_PUBLISHSHARD:
        if (len < GB_BUS_HEADER_LEN + 8 ||
            (uint64_t)get32(d) + get32(d + 4) != (uint64_t)len - GB_BUS_HEADER_LEN - 8)
            return "a PUBLISH of the wrong length";
        m->channel_len = get32(d);
        m->message_len = get32(d + 4);
        m->channel = (const char *)d + 8;
        m->message = m->channel + m->channel_len;
        return NULL;
    case GB_BUS_MODULE:
        if (len < GB_BUS_HEADER_LEN + 13 || (uint64_t)get32(d + 8) != (uint64_t)len - GB_BUS_HEADER_LEN - 13)
            return "a module message of the wrong length";
        return NULL;
    case GB_BUS_FAILOVER_AUTH_REQUEST:
    case GB_BUS_FAILOVER_AUTH_ACK:
    case GB_BUS_MFSTART:
        return len == GB_BUS_HEADER_LEN ? NULL : "a header-only message of the wrong length";
    default:
        return NULL; /* a later type: well formed as far as this node knows */
    }
}

const char *gb_bus_parse(const uint8_t *p, size_t len, gb_bus_msg *m)
{
    memset(m, 0, sizeof *m);
    if (len < GB_BUS_HEADER_LEN)
        return "shorter than a header";
    uint32_t totlen;
    if (!gb_bus_check_prefix(p, &totlen))
        return "a bad signature or length";
    if (totlen != len)
        return "a length that is not the message's";
    if (get16(p + OFF_VER) != 1)
        return "another protocol version";
    m->totlen = totlen;
    m->type = get16(p + OFF_TYPE);
    m->port = get16(p + OFF_PORT);
    m->count = get16(p + OFF_COUNT);
    m->current_epoch = get64(p + OFF_CURRENT_EPOCH);
    m->config_epoch = get64(p + OFF_CONFIG_EPOCH);
    m->offset = get64(p + OFF_OFFSET);
    m->sender = (const char *)p + OFF_SENDER;
    m->myslots = p + OFF_MYSLOTS;
    m->replica_of = (const char *)p + OFF_SLAVEOF;
    copy_text(m->myip, p + OFF_MYIP, GB_CLUSTER_IPLEN);
    m->pport = get16(p + OFF_PPORT);
    m->cport = get16(p + OFF_CPORT);
    m->flags = get16(p + OFF_FLAGS);
    m->state = p[OFF_STATE];
    m->mflags0 = p[OFF_MFLAGS];
    return parse_data(p, len, m, get16(p + OFF_EXTENSIONS));
}

void gb_bus_gossip_at(const gb_bus_msg *m, unsigned i, gb_bus_gossip *g)
{
    const uint8_t *e = m->gossip + (size_t)i * GB_BUS_GOSSIP_LEN;
    memcpy(g->name, e, GB_CLUSTER_NAMELEN);
    g->ping_sent = get32(e + 40);
    g->pong_received = get32(e + 44);
    copy_text(g->ip, e + 48, GB_CLUSTER_IPLEN);
    g->port = get16(e + 94);
    g->cport = get16(e + 96);
    g->flags = get16(e + 98);
    g->pport = get16(e + 100);
}

/* ---- writing ---- */

static size_t hostname_ext_size(const gb_bus_self *self)
{
    size_t n = self->hostname ? strlen(self->hostname) : 0;
    return n ? EXT_HEADER_LEN + (n + 1 + 7) / 8 * 8 : 0;
}

size_t gb_bus_ping_size(const gb_bus_self *self, unsigned ngossip)
{
    return GB_BUS_HEADER_LEN + (size_t)ngossip * GB_BUS_GOSSIP_LEN + hostname_ext_size(self);
}

void gb_bus_write_header(uint8_t *out, uint16_t type, uint32_t totlen, const gb_bus_self *self)
{
    memset(out, 0, GB_BUS_HEADER_LEN);
    memcpy(out, "RCmb", 4);
    put32(out + OFF_TOTLEN, totlen);
    put16(out + OFF_VER, 1);
    put16(out + OFF_PORT, self->port);
    put16(out + OFF_TYPE, type);
    put64(out + OFF_CURRENT_EPOCH, self->current_epoch);
    put64(out + OFF_CONFIG_EPOCH, self->config_epoch);
    put64(out + OFF_OFFSET, self->offset);
    memcpy(out + OFF_SENDER, self->name, GB_CLUSTER_NAMELEN);
    memcpy(out + OFF_MYSLOTS, self->slots, GB_CLUSTER_SLOTS / 8);
    if (self->replica_of)
        memcpy(out + OFF_SLAVEOF, self->replica_of, GB_CLUSTER_NAMELEN);
    size_t iplen = self->ip ? strnlen(self->ip, GB_CLUSTER_IPLEN - 1) : 0;
    memcpy(out + OFF_MYIP, self->ip ? self->ip : "", iplen);
    put16(out + OFF_PPORT, self->pport);
    put16(out + OFF_CPORT, self->cport);
    put16(out + OFF_FLAGS, self->flags);
    out[OFF_STATE] = self->state;
    out[OFF_MFLAGS] = self->mflags0 & (GB_BUS_MFLAG0_PAUSED | GB_BUS_MFLAG0_FORCEACK);
}

void gb_bus_write_ping(uint8_t *out, uint16_t type, const gb_bus_self *self, const gb_bus_gossip *g, unsigned ngossip)
{
    size_t total = gb_bus_ping_size(self, ngossip);
    gb_bus_write_header(out, type, (uint32_t)total, self);
    put16(out + OFF_COUNT, (uint16_t)ngossip);
    uint8_t *e = out + GB_BUS_HEADER_LEN;
    for (unsigned i = 0; i < ngossip; i++, e += GB_BUS_GOSSIP_LEN) {
        memset(e, 0, GB_BUS_GOSSIP_LEN);
        memcpy(e, g[i].name, GB_CLUSTER_NAMELEN);
        put32(e + 40, g[i].ping_sent);
        put32(e + 44, g[i].pong_received);
        memcpy(e + 48, g[i].ip, strnlen(g[i].ip, GB_CLUSTER_IPLEN - 1));
        put16(e + 94, g[i].port);
        put16(e + 96, g[i].cport);
        put16(e + 98, g[i].flags);
        put16(e + 100, g[i].pport);
    }
    size_t ext = hostname_ext_size(self);
    if (ext) {
        /* Redis 7.0 flags extension data only when it sends some */
        out[OFF_MFLAGS] |= GB_BUS_MFLAG0_EXT_DATA;
        put16(out + OFF_EXTENSIONS, 1);
        memset(e, 0, ext);
        put32(e, (uint32_t)ext);
        put16(e + 4, GB_BUS_EXT_HOSTNAME);
        memcpy(e + EXT_HEADER_LEN, self->hostname, strlen(self->hostname));
    }
}

void gb_bus_write_fail(uint8_t *out, const gb_bus_self *self, const char *about)
{
    gb_bus_write_header(out, GB_BUS_FAIL, GB_BUS_FAIL_LEN, self);
    memcpy(out + GB_BUS_HEADER_LEN, about, GB_CLUSTER_NAMELEN);
}

void gb_bus_write_update(uint8_t *out, const gb_bus_self *self, const char *name, uint64_t epoch,
                         const uint8_t *slots)
{
    gb_bus_write_header(out, GB_BUS_UPDATE, GB_BUS_UPDATE_LEN, self);
    uint8_t *d = out + GB_BUS_HEADER_LEN;
    put64(d, epoch);
    memcpy(d + 8, name, GB_CLUSTER_NAMELEN);
    memcpy(d + 8 + GB_CLUSTER_NAMELEN, slots, GB_CLUSTER_SLOTS / 8);
}

size_t gb_bus_publish_size(size_t channel_len, size_t message_len)
{
    return GB_BUS_HEADER_LEN + 8 + channel_len + message_len;
}

void gb_bus_write_publish(uint8_t *out, uint16_t type, const gb_bus_self *self, const char *channel,
                          size_t channel_len, const char *message, size_t message_len)
{
    gb_bus_write_header(out, type, (uint32_t)gb_bus_publish_size(channel_len, message_len), self);
    uint8_t *d = out + GB_BUS_HEADER_LEN;
    put32(d, (uint32_t)channel_len);
    put32(d + 4, (uint32_t)message_len);
    memcpy(d + 8, channel, channel_len);
    memcpy(d + 8 + channel_len, message, message_len);
}
