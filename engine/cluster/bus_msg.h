/*
 * The cluster bus's messages, binary-compatible with redis-server 7.0's
 * (src/cluster.h clusterMsg): a 2256-byte header, then the type's data.
 * Every multi-byte number is big-endian. This module only reads and
 * writes bytes; what a message means is the bus's (transport/cluster).
 *
 * Header (offset: field)
 *      0 sig "RCmb"            4 totlen u32         8 ver u16 (1)
 *     10 port u16             12 type u16          14 count u16
 *     16 currentEpoch u64     24 configEpoch u64   32 offset u64
 *     40 sender[40]           80 myslots[2048]   2128 slaveof[40] (zeros: none)
 *   2168 myip[46]           2214 extensions u16  2216 notused[30]
 *   2246 pport u16          2248 cport u16       2250 flags u16
 *   2252 state u8           2253 mflags[3]       2256 data
 * PING, PONG, MEET: count gossip entries of 104 bytes (name[40],
 * ping_sent u32, pong_received u32, ip[46], port, cport, flags, pport,
 * unused: u16 each), then, with mflags[0] & 4, `extensions` extensions,
 * each u32 length (a multiple of 8, header included), u16 type, u16
 * unused, then its data (7.0 knows type 0, the hostname, NUL-ended).
 * FAIL: a node name[40]. UPDATE: configEpoch u64, name[40], slots[2048].
 * PUBLISH: channel_len u32, message_len u32, the bytes of both.
 * FAILOVER_AUTH_REQUEST/ACK, MFSTART: the header alone.
 */
#ifndef GB_ENGINE_CLUSTER_BUS_MSG_H
#define GB_ENGINE_CLUSTER_BUS_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/cluster/cluster.h"

#define GB_BUS_HEADER_LEN 2256u
#define GB_BUS_GOSSIP_LEN 104u
#define GB_BUS_FAIL_LEN (GB_BUS_HEADER_LEN + GB_CLUSTER_NAMELEN)
#define GB_BUS_UPDATE_LEN (GB_BUS_HEADER_LEN + 8u + GB_CLUSTER_NAMELEN + GB_CLUSTER_SLOTS / 8)

enum gb_bus_type {
    GB_BUS_PING = 0,
    GB_BUS_PONG = 1,
    GB_BUS_MEET = 2,
    GB_BUS_FAIL = 3,
    GB_BUS_PUBLISH = 4,
    GB_BUS_FAILOVER_AUTH_REQUEST = 5,
    GB_BUS_FAILOVER_AUTH_ACK = 6,
    GB_BUS_UPDATE = 7,
    GB_BUS_MFSTART = 8,
    GB_BUS_MODULE = 9,
    GB_BUS_PUBLISHSHARD = 10,
    GB_BUS_TYPE_COUNT = 11,
};

enum { GB_BUS_MFLAG0_PAUSED = 1, GB_BUS_MFLAG0_FORCEACK = 2, GB_BUS_MFLAG0_EXT_DATA = 4 };
enum { GB_BUS_EXT_HOSTNAME = 0 };

typedef struct gb_bus_gossip {
    char name[GB_CLUSTER_NAMELEN];
    uint32_t ping_sent, pong_received; /* seconds */
    char ip[GB_CLUSTER_IPLEN];         /* NUL-terminated (forced) */
    uint16_t port, cport, flags, pport;
} gb_bus_gossip;

/* A message read in place: pointers into the buffer it was parsed from. */
typedef struct gb_bus_msg {
    uint32_t totlen;
    uint16_t type, port, count, pport, cport, flags;
    uint8_t state, mflags0;
    uint64_t current_epoch, config_epoch, offset;
    const char *sender;        /* 40 bytes */
    const uint8_t *myslots;    /* 2048 bytes */
    const char *replica_of;    /* 40 bytes; all zero: a primary */
    char myip[GB_CLUSTER_IPLEN]; /* NUL-terminated (forced) */
    const uint8_t *gossip;     /* count entries (PING, PONG, MEET) */
    const char *hostname;      /* the hostname extension's text, or NULL */
    size_t hostname_len;
    /* FAIL */
    const char *about;         /* 40 bytes */
    /* PUBLISH, PUBLISHSHARD */
    const char *channel, *message;
    size_t channel_len, message_len;
    /* UPDATE */
    uint64_t update_epoch;
    const char *update_name;   /* 40 bytes */
    const uint8_t *update_slots;
} gb_bus_msg;

/* The first 8 bytes of a message: whether they start one this node will
 * read (the signature, and a length of at least a header). As in Redis no
 * other bound: a PUBLISH may carry a message of proto-max-bulk-len, and the
 * reader's buffer grows only as the bytes arrive, so a claimed length
 * costs nothing until it is sent. *totlen: the message's whole length. */
bool gb_bus_check_prefix(const uint8_t *p, uint32_t *totlen);

/* Parses the len bytes of one whole message (len == its totlen), as
 * Redis's clusterProcessPacket validates it: version 1, each type's exact
 * length, every extension inside the message. NULL when it may be used,
 * else why not (the message is then ignored: Redis keeps the link). */
const char *gb_bus_parse(const uint8_t *p, size_t len, gb_bus_msg *m);
/* Gossip entry i (< m->count) of a parsed PING, PONG or MEET. */
void gb_bus_gossip_at(const gb_bus_msg *m, unsigned i, gb_bus_gossip *g);

/* ---- writing ---- */

/* The header fields a node sends about itself. */
typedef struct gb_bus_self {
    const char *name;          /* 40 bytes */
    const uint8_t *slots;      /* 2048 bytes: a primary's own, a replica's primary's */
    const char *replica_of;    /* 40 bytes or NULL */
    const char *ip;            /* announced ip, or "" (the receiver uses the socket's) */
    uint16_t port, pport, cport, flags;
    uint8_t state;
    uint8_t mflags0;           /* GB_BUS_MFLAG0_PAUSED, _FORCEACK */
    uint64_t current_epoch, config_epoch, offset;
    const char *hostname;      /* "" or NULL: no extension */
} gb_bus_self;

/* The bytes a PING/PONG/MEET with ngossip entries takes (with the
 * hostname extension when self has one). */
size_t gb_bus_ping_size(const gb_bus_self *self, unsigned ngossip);
/* Writes the header (type, self, totlen) into out, GB_BUS_HEADER_LEN bytes. */
void gb_bus_write_header(uint8_t *out, uint16_t type, uint32_t totlen, const gb_bus_self *self);
/* A whole PING/PONG/MEET into out (gb_bus_ping_size bytes). */
void gb_bus_write_ping(uint8_t *out, uint16_t type, const gb_bus_self *self, const gb_bus_gossip *g, unsigned ngossip);
/* A FAIL about a node (GB_BUS_FAIL_LEN bytes). */
void gb_bus_write_fail(uint8_t *out, const gb_bus_self *self, const char *about);
/* A PUBLISH or PUBLISHSHARD (type) of message on channel: its size, and
 * the message into out. */
size_t gb_bus_publish_size(size_t channel_len, size_t message_len);
void gb_bus_write_publish(uint8_t *out, uint16_t type, const gb_bus_self *self, const char *channel,
                          size_t channel_len, const char *message, size_t message_len);
/* An UPDATE of a node's slots (GB_BUS_UPDATE_LEN bytes). */
void gb_bus_write_update(uint8_t *out, const gb_bus_self *self, const char *name, uint64_t epoch,
                         const uint8_t *slots);

#endif
