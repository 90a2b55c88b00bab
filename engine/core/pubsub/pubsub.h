/*
 * Pub/sub: channels, patterns and shard channels, and who listens to them.
 *
 * The server keeps one table per kind (channel, pattern, shard channel):
 * name -> the clients subscribed, in subscription order (the order Redis
 * delivers in). Each subscribed client keeps its own table per kind, name
 * -> the server's entry, so that UNSUBSCRIBE with no argument and a
 * disconnect cost the client's subscriptions, not the server's.
 *
 *   server  tab[kind]: ps_entry{name, clients[]}  <-+
 *   client  tab[kind]: ps_sub{entry} ---------------+
 *
 * Messages go out through each subscriber's reply sink as pushes
 * (gb_reply_push: '>' in RESP3, an array in RESP2), and the subscriber's
 * transport is asked to send them (its flush hook), which is also where it
 * enforces client-output-buffer-limit's pubsub class: a subscriber that
 * does not read is closed, never grown without bound.
 *
 * Keyspace notifications (notify-keyspace-events) are publications the
 * engine makes itself: gb_notify_keyspace_event below, one call per
 * mutation, one branch when they are off.
 */
#ifndef GB_ENGINE_CORE_PUBSUB_H
#define GB_ENGINE_CORE_PUBSUB_H

#include "engine/core/request/client.h"

struct gb_engine;
struct gb_acl_user;

enum gb_pubsub_kind { GB_PUBSUB_CHANNEL = 0, GB_PUBSUB_PATTERN = 1, GB_PUBSUB_SHARD = 2, GB_PUBSUB_KINDS = 3 };

typedef struct gb_pubsub gb_pubsub;

gb_pubsub *gb_pubsub_new(void);
void gb_pubsub_free(gb_pubsub *ps);

/* A client's subscriptions of one kind, and of all kinds. */
size_t gb_pubsub_client_count(const gb_client *c, enum gb_pubsub_kind kind);
static inline bool gb_pubsub_client_subscribed(const gb_client *c) { return c->pubsub != NULL; }
/* Drops every subscription of c, silently (the client is going away). */
void gb_pubsub_client_free(gb_client *c);

/* SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE: one confirmation per name, Redis's
 * framing. UNSUBSCRIBE & co: the names given, or with n == 0 every
 * subscription of that kind ([kind, nil, 0] when there is none). */
void gb_pubsub_subscribe(gb_client *c, enum gb_pubsub_kind kind, int n, const gb_slice *names);
void gb_pubsub_unsubscribe(gb_client *c, enum gb_pubsub_kind kind, int n, const gb_slice *names);

/* PUBLISH (kind CHANNEL: exact subscribers, then matching patterns) and
 * SPUBLISH (kind SHARD). Returns the number of clients that received it. */
size_t gb_pubsub_publish(struct gb_engine *eng, enum gb_pubsub_kind kind, gb_slice channel, gb_slice msg);

/* PUBSUB CHANNELS / SHARDCHANNELS: calls fn for each active channel of the
 * kind matching pattern (NULL: all). */
void gb_pubsub_channels(struct gb_engine *eng, enum gb_pubsub_kind kind, const gb_slice *pattern,
                        void (*fn)(void *ctx, gb_slice name), void *ctx);
/* PUBSUB NUMSUB / SHARDNUMSUB: subscribers of one channel. */
size_t gb_pubsub_numsub(struct gb_engine *eng, enum gb_pubsub_kind kind, gb_slice channel);
/* Active channels (patterns) of a kind: PUBSUB NUMPAT, INFO stats. */
size_t gb_pubsub_count(const struct gb_engine *eng, enum gb_pubsub_kind kind);

/* The cluster took slots away from this node or its primary: every shard
 * channel hashing to a slot set in the bitmap slots (16384 bits) loses its
 * subscribers, each told by an sunsubscribe confirmation as if it had
 * unsubscribed (Redis 7.0's removeChannelsInSlot); clients follow with a
 * new SSUBSCRIBE, which the new owner serves. */
void gb_pubsub_drop_shard_slots(struct gb_engine *eng, const uint8_t *slots);

/* ACL SETUSER / ACL LOAD changed u's rules: its clients subscribed to a
 * channel or pattern it may no longer use are closed (Redis 7.0's
 * ACLKillPubsubClientsIfNeeded); current is closed after its reply. */
void gb_pubsub_kill_denied(struct gb_engine *eng, const struct gb_acl_user *u, gb_client *current);

/* ---- keyspace notifications (Redis's notify.c) ---- */

enum {
    GB_NOTIFY_KEYSPACE = 1 << 0, /* K */
    GB_NOTIFY_KEYEVENT = 1 << 1, /* E */
    GB_NOTIFY_GENERIC = 1 << 2,  /* g */
    GB_NOTIFY_STRING = 1 << 3,   /* $ */
    GB_NOTIFY_LIST = 1 << 4,     /* l */
    GB_NOTIFY_SET = 1 << 5,      /* s */
    GB_NOTIFY_HASH = 1 << 6,     /* h */
    GB_NOTIFY_ZSET = 1 << 7,     /* z */
    GB_NOTIFY_EXPIRED = 1 << 8,  /* x */
    GB_NOTIFY_EVICTED = 1 << 9,  /* e */
    GB_NOTIFY_STREAM = 1 << 10,  /* t */
    GB_NOTIFY_KEY_MISS = 1 << 11, /* m (not in A) */
    GB_NOTIFY_LOADED = 1 << 12,  /* module only, no letter */
    GB_NOTIFY_MODULE = 1 << 13,  /* d */
    GB_NOTIFY_NEW = 1 << 14,     /* n (not in A) */
};
#define GB_NOTIFY_ALL                                                                                         \
    (GB_NOTIFY_GENERIC | GB_NOTIFY_STRING | GB_NOTIFY_LIST | GB_NOTIFY_SET | GB_NOTIFY_HASH | GB_NOTIFY_ZSET | \
     GB_NOTIFY_EXPIRED | GB_NOTIFY_EVICTED | GB_NOTIFY_STREAM | GB_NOTIFY_MODULE)

/* notify-keyspace-events text -> flags (Redis's keyspaceEventsStringToFlags);
 * -1 for a character that is not a class. */
int gb_notify_parse(const char *s);
/* Flags -> Redis's CONFIG GET rendering (keyspaceEventsFlagsToString);
 * buf holds at least 16 bytes. */
void gb_notify_format(int flags, char *buf);

void gb_notify_publish(struct gb_engine *eng, int type, const char *event, gb_slice key, int dbid);

/* Publishes event for key on __keyspace@<db>__:<key> (K) and key on
 * __keyevent@<db>__:<event> (E), when the event's class is enabled. */
#define gb_notify_keyspace_event(eng, type, event, key, dbid)                            \
    do {                                                                                \
        if (GB_UNLIKELY((eng)->cfg.notify_keyspace_events & (type)))                    \
            gb_notify_publish((eng), (type), (event), (key), (dbid));                   \
    } while (0)

#endif
