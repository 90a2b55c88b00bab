/*
 * The numbers of Goblin Core's SBE protocol (transport/sbe/goblin.xml, the
 * source of truth; test/transport/test_sbe_schema.c checks these against it):
 * schema id and version, template ids, the flag sets and the reply kinds.
 *
 * One definition for every peer: the server's codec (transport/sbe), the
 * client library (goblin/ring_client.h) and a client written in another
 * language all take them from here or from the XML.
 */
#ifndef GOBLIN_SBE_SCHEMA_H
#define GOBLIN_SBE_SCHEMA_H

#ifdef __cplusplus
extern "C" {
#endif

#define GB_SBE_SCHEMA_ID 18242u /* 0x4742, "GB" */
#define GB_SBE_SCHEMA_VERSION 1u

/* Template ids (messageHeader.templateId). Requests are dense from 1 so the
 * server dispatches through an array indexed by the id. */
enum gb_sbe_template {
    GB_SBE_PING = 1,
    GB_SBE_GET = 2,
    GB_SBE_SET = 3,
    GB_SBE_DEL = 4,
    GB_SBE_INCR = 5,
    GB_SBE_HSET = 6,
    GB_SBE_HGET = 7,
    GB_SBE_ZADD = 8,
    GB_SBE_ZSCORE = 9,
    GB_SBE_LPUSH = 10,
    GB_SBE_RPOP = 11,
    GB_SBE_BLPOP = 12,
    GB_SBE_GENERIC = 13,
    GB_SBE_PUBLISH = 14,
    GB_SBE_XADD = 15,
    GB_SBE_REQUEST_MAX = 15,

    GB_SBE_STATUS_REPLY = 101,
    GB_SBE_ERROR_REPLY = 102,
    GB_SBE_INTEGER_REPLY = 103,
    GB_SBE_DOUBLE_REPLY = 104,
    GB_SBE_BULK_REPLY = 105,
    GB_SBE_NIL_REPLY = 106,
    GB_SBE_ARRAY_REPLY = 107,

    /* Pushes: sent to a subscribed client out of band (not replies to a
     * request; Subscription is also what SUBSCRIBE & co answer). */
    GB_SBE_MESSAGE = 108,
    GB_SBE_SUBSCRIPTION = 109,
};

/* MessageKind (uint8 enum): which subscription matched. */
enum gb_sbe_message_kind {
    GB_SBE_MSG_MESSAGE = 1,  /* a channel subscription (SUBSCRIBE) */
    GB_SBE_MSG_PMESSAGE = 2, /* a pattern subscription (PSUBSCRIBE): pattern is set */
    GB_SBE_MSG_SMESSAGE = 3, /* a shard channel subscription (SSUBSCRIBE) */
};

/* SubscriptionKind (uint8 enum): which command's confirmation. */
enum gb_sbe_subscription_kind {
    GB_SBE_SUB_SUBSCRIBE = 1,
    GB_SBE_SUB_UNSUBSCRIBE = 2,
    GB_SBE_SUB_PSUBSCRIBE = 3,
    GB_SBE_SUB_PUNSUBSCRIBE = 4,
    GB_SBE_SUB_SSUBSCRIBE = 5,
    GB_SBE_SUB_SUNSUBSCRIBE = 6,
};

/* SetFlags (uint8 set): bit positions as in the XML. */
enum {
    GB_SBE_SET_NX = 1u << 0,
    GB_SBE_SET_XX = 1u << 1,
    GB_SBE_SET_EX = 1u << 2,      /* expiry: relative seconds */
    GB_SBE_SET_PX = 1u << 3,      /* expiry: relative milliseconds */
    GB_SBE_SET_EXAT = 1u << 4,    /* expiry: absolute Unix seconds */
    GB_SBE_SET_PXAT = 1u << 5,    /* expiry: absolute Unix milliseconds */
    GB_SBE_SET_KEEPTTL = 1u << 6,
    GB_SBE_SET_GET = 1u << 7,
};

/* ZAddFlags (uint8 set): the same bits as the server engine's GB_ZADD_* (the
 * server asserts it), so it passes them through unchanged; the client
 * library's GB_RING_ZADD_* (goblin/ring_client.h) are these. */
enum {
    GB_SBE_ZADD_NX = 1u << 0,
    GB_SBE_ZADD_XX = 1u << 1,
    GB_SBE_ZADD_GT = 1u << 2,
    GB_SBE_ZADD_LT = 1u << 3,
    GB_SBE_ZADD_CH = 1u << 4,
    GB_SBE_ZADD_INCR = 1u << 5,
    GB_SBE_ZADD_ALL = 0x3fu,
};

/* XAddFlags (uint8 set). The ID: AUTO_ID sends "*" (idMs, idSeq unused),
 * AUTO_SEQ "<idMs>-*", neither "<idMs>-<idSeq>" (both set is malformed).
 * Trimming: MAXLEN (maxLen) or MINID (minIdMs, minIdSeq), "~" with APPROX
 * ("=" without), LIMIT with LIMIT (limit); APPROX without a strategy is
 * malformed. Bit 7 is refused ("unknown flag bits"). */
enum {
    GB_SBE_XADD_AUTO_ID = 1u << 0,
    GB_SBE_XADD_AUTO_SEQ = 1u << 1,
    GB_SBE_XADD_NOMKSTREAM = 1u << 2,
    GB_SBE_XADD_MAXLEN = 1u << 3,
    GB_SBE_XADD_MINID = 1u << 4,
    GB_SBE_XADD_APPROX = 1u << 5,
    GB_SBE_XADD_LIMIT = 1u << 6,
    GB_SBE_XADD_ALL = 0x7fu,
};

/* ReplyKind (uint8 enum). 0 is not a kind, so zeroed memory never decodes. */
enum gb_sbe_kind {
    GB_SBE_KIND_STATUS = 1,
    GB_SBE_KIND_ERROR = 2,
    GB_SBE_KIND_INTEGER = 3,
    GB_SBE_KIND_DOUBLE = 4,
    GB_SBE_KIND_BULK = 5,
    GB_SBE_KIND_NIL = 6,
    GB_SBE_KIND_ARRAY = 7,
};

#ifdef __cplusplus
}
#endif

#endif
