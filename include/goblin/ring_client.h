/*
 * Goblin Core ring client library: talk to a goblin-core server over a
 * shared-memory ring claimed through its Unix socket.
 *
 *   gb_ring_client *rc;
 *   char err[256];
 *   if (gb_ring_client_connect("/tmp/goblin-core.sock", GB_RING_SBE, NULL, &rc, err, sizeof err) != 0)
 *       fprintf(stderr, "%s\n", err);
 *   gb_ring_ping(rc);
 *   gb_ring_client_close(rc);
 *
 * One client object is one ring slot and must be used by one thread at a
 * time. Every call returns 0 or a negative GB_E* code (goblin/error.h); the
 * words for a person are in gb_ring_client_error(). A server error reply
 * (e.g. WRONGTYPE) is not a failure of the call: it comes back as a reply of
 * kind GB_REPLY_ERROR.
 *
 * Build against it with pkg-config: `pkg-config --cflags --libs goblin-client`.
 */
#ifndef GOBLIN_RING_CLIENT_H
#define GOBLIN_RING_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "goblin/error.h"
#include "goblin/export.h"
#include "goblin/ring_layout.h" /* GB_RING_PROTO_* */
#include "goblin/sbe_schema.h"  /* GB_SBE_ZADD_*, GB_SBE_XADD_* */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gb_ring_client gb_ring_client;

/* The ring's protocol ids (goblin/ring_layout.h), under the library's names. */
typedef enum gb_ring_proto {
    GB_RING_SBE = GB_RING_PROTO_SBE,   /* binary messages (transport/sbe/goblin.xml): native numbers */
    GB_RING_RESP = GB_RING_PROTO_RESP, /* RESP2 (RESP3 after HELLO 3), the same bytes as on a socket */
} gb_ring_proto;

typedef struct gb_ring_client_options {
    /* Microseconds to busy-wait for a reply before sleeping (0: the
     * server's ring-spin-us). */
    unsigned spin_us;
    /* Sent with AUTH before claiming when the server has a password. */
    const char *password;
    const char *username; /* default "default" */
} gb_ring_client_options;

/* ---- replies ---- */

typedef enum gb_reply_kind {
    GB_REPLY_STATUS = 1,
    GB_REPLY_ERROR,
    GB_REPLY_INTEGER,
    GB_REPLY_DOUBLE,
    GB_REPLY_BULK,
    GB_REPLY_NIL,
    GB_REPLY_ARRAY,
    GB_REPLY_NIL_ARRAY,
} gb_reply_kind;

/* A reply tree. Strings are NUL-terminated copies owned by the tree. */
typedef struct gb_reply {
    gb_reply_kind kind;
    int64_t integer; /* INTEGER */
    double dbl;      /* DOUBLE (SBE and RESP3 send doubles natively; RESP2 as BULK text) */
    char *str;       /* STATUS, ERROR, BULK */
    size_t len;
    size_t nelem;    /* ARRAY */
    struct gb_reply *elem;
} gb_reply;

GB_EXPORT void gb_reply_free(gb_reply *r);

/* ---- connection ---- */

GB_EXPORT int gb_ring_client_connect(const char *socket_path, gb_ring_proto proto, const gb_ring_client_options *opt,
                                     gb_ring_client **out, char *err, size_t errlen);
/* Releases the slot (closing the control connection) and unmaps it. */
GB_EXPORT void gb_ring_client_close(gb_ring_client *rc);
GB_EXPORT const char *gb_ring_client_error(const gb_ring_client *rc);
GB_EXPORT gb_ring_proto gb_ring_client_protocol(const gb_ring_client *rc);
/* The slot's number in the server's pool (INFO rings) and its record limit. */
GB_EXPORT int gb_ring_client_slot(const gb_ring_client *rc);
GB_EXPORT size_t gb_ring_client_max_message(const gb_ring_client *rc);

/* ---- any command, either protocol ---- */

/* Sends argv (argc arguments; lens[i] bytes each, lens NULL = strlen) and
 * waits for the reply (*reply: free with gb_reply_free). Over SBE this uses
 * the generic template. */
GB_EXPORT int gb_ring_command(gb_ring_client *rc, int argc, const char *const *argv, const size_t *lens,
                              gb_reply **reply);

/* Pipelining: submit many, then collect as many replies, in order. */
GB_EXPORT int gb_ring_submit(gb_ring_client *rc, int argc, const char *const *argv, const size_t *lens);
GB_EXPORT int gb_ring_collect(gb_ring_client *rc, gb_reply **reply);

/* ---- typed calls (SBE templates; over RESP they send the equivalent command) ---- */

GB_EXPORT int gb_ring_ping(gb_ring_client *rc);
/* GET: copies up to cap bytes into buf; *len receives the full length, or -1
 * when the key does not exist. */
GB_EXPORT int gb_ring_get(gb_ring_client *rc, const void *key, size_t klen, void *buf, size_t cap, int64_t *len);
/* SET key value [PX ttl_ms] (ttl_ms 0 = none). */
GB_EXPORT int gb_ring_set(gb_ring_client *rc, const void *key, size_t klen, const void *val, size_t vlen,
                          int64_t ttl_ms);
GB_EXPORT int gb_ring_del(gb_ring_client *rc, const void *key, size_t klen, int64_t *deleted);
GB_EXPORT int gb_ring_incrby(gb_ring_client *rc, const void *key, size_t klen, int64_t by, int64_t *value);
/* HSET key f1 v1 ... (n pairs); *added = new fields. */
GB_EXPORT int gb_ring_hset(gb_ring_client *rc, const void *key, size_t klen, size_t n, const void *const *fields,
                           const size_t *flens, const void *const *values, const size_t *vlens, int64_t *added);
GB_EXPORT int gb_ring_hget(gb_ring_client *rc, const void *key, size_t klen, const void *field, size_t flen, void *buf,
                           size_t cap, int64_t *len);
/* ZADD key [flags] score member ... ; flags: GB_ZADD_* below. *result =
 * added (or changed with CH); with INCR, *score receives the new score and
 * *result is 0 when the increment was not applied (NX/XX/GT/LT). */
enum {
    /* the schema's ZAddFlags bits (goblin/sbe_schema.h), sent as they are */
    GB_RING_ZADD_NX = GB_SBE_ZADD_NX,
    GB_RING_ZADD_XX = GB_SBE_ZADD_XX,
    GB_RING_ZADD_GT = GB_SBE_ZADD_GT,
    GB_RING_ZADD_LT = GB_SBE_ZADD_LT,
    GB_RING_ZADD_CH = GB_SBE_ZADD_CH,
    GB_RING_ZADD_INCR = GB_SBE_ZADD_INCR,
};
GB_EXPORT int gb_ring_zadd(gb_ring_client *rc, const void *key, size_t klen, int flags, size_t n, const double *scores,
                           const void *const *members, const size_t *mlens, int64_t *result, double *score);
/* ZSCORE: *found = 0 when the key or member is missing. */
GB_EXPORT int gb_ring_zscore(gb_ring_client *rc, const void *key, size_t klen, const void *member, size_t mlen,
                             double *score, int *found);
GB_EXPORT int gb_ring_lpush(gb_ring_client *rc, const void *key, size_t klen, size_t n, const void *const *vals,
                            const size_t *vlens, int64_t *len);
GB_EXPORT int gb_ring_rpop(gb_ring_client *rc, const void *key, size_t klen, void *buf, size_t cap, int64_t *len);
/* BLPOP keys... timeout_s (0 = forever): *reply is [key, value] or NIL_ARRAY. */
GB_EXPORT int gb_ring_blpop(gb_ring_client *rc, size_t nkeys, const void *const *keys, const size_t *klens,
                            double timeout_s, gb_reply **reply);

/* XADD key [NOMKSTREAM] [MAXLEN|MINID =|~ threshold [LIMIT count]] id
 * field value [field value ...] (n >= 1 pairs). Over SBE the XAdd
 * template (the ID and numbers native), over RESP that command line.
 * opt NULL: "*" and no options. The new ID's text ("<ms>-<seq>") is
 * copied into id (up to cap bytes, GB_RING_XADD_ID_MAX holds any) and
 * *idlen receives its length, or -1 when NOMKSTREAM found no stream. A
 * refusal (an ID not above the stream's last, "0-0", WRONGTYPE, LIMIT
 * without APPROX) is GB_EPROTO with Redis's words in
 * gb_ring_client_error(); flags no command line can say (AUTO_ID with
 * AUTO_SEQ, APPROX without MAXLEN or MINID) are GB_EINVAL, nothing sent. */
enum {
    /* the schema's XAddFlags bits (goblin/sbe_schema.h), sent as they are */
    GB_RING_XADD_AUTO_ID = GB_SBE_XADD_AUTO_ID,     /* "*": the server picks the ID */
    GB_RING_XADD_AUTO_SEQ = GB_SBE_XADD_AUTO_SEQ,   /* "<id_ms>-*": the server picks the sequence */
    GB_RING_XADD_NOMKSTREAM = GB_SBE_XADD_NOMKSTREAM,
    GB_RING_XADD_MAXLEN = GB_SBE_XADD_MAXLEN,       /* trim to maxlen entries */
    GB_RING_XADD_MINID = GB_SBE_XADD_MINID,         /* trim entries below minid_ms-minid_seq */
    GB_RING_XADD_APPROX = GB_SBE_XADD_APPROX,       /* "~" (whole nodes); without it "=" */
    GB_RING_XADD_LIMIT = GB_SBE_XADD_LIMIT,         /* LIMIT limit (with APPROX) */
};
#define GB_RING_XADD_ID_MAX 42 /* "18446744073709551615-18446744073709551615" and a NUL */
typedef struct gb_ring_xadd_opts {
    int flags;                    /* GB_RING_XADD_*; AUTO_ID and AUTO_SEQ exclude each other */
    uint64_t id_ms, id_seq;       /* the ID (id_seq unused with AUTO_SEQ, both with AUTO_ID) */
    int64_t maxlen;               /* MAXLEN */
    uint64_t minid_ms, minid_seq; /* MINID */
    int64_t limit;                /* LIMIT */
} gb_ring_xadd_opts;
GB_EXPORT int gb_ring_xadd(gb_ring_client *rc, const void *key, size_t klen, const gb_ring_xadd_opts *opt, size_t n,
                           const void *const *fields, const size_t *flens, const void *const *values,
                           const size_t *vlens, char *id, size_t cap, int64_t *idlen);

/* PUBLISH channel message: *receivers = the number of clients that got it
 * (NULL: not wanted). Over SBE the Publish template. */
GB_EXPORT int gb_ring_publish(gb_ring_client *rc, const void *channel, size_t clen, const void *msg, size_t mlen,
                              int64_t *receivers);

/* ---- pub/sub ---- */
/*
 * Subscribe with gb_ring_command ("SUBSCRIBE", "PSUBSCRIBE" ...): each name's
 * confirmation is one reply, [word, name, count], so SUBSCRIBE a b is one
 * command and two gb_ring_collect calls (or read them with
 * gb_ring_next_message). Then read what arrives with gb_ring_next_message:
 * over SBE each push is one Message or Subscription record (docs/sbe.md),
 * decoded in place, no allocation; over a RESP ring (RESP2 arrays, or
 * RESP3 pushes after HELLO 3) the push is parsed into a reply tree that
 * gb_ring_message_done frees. Publish from any client with gb_ring_publish.
 */
typedef enum gb_ring_message_kind {
    GB_RING_MSG_MESSAGE = 1,  /* SUBSCRIBE matched */
    GB_RING_MSG_PMESSAGE = 2, /* PSUBSCRIBE matched: pattern is set */
    GB_RING_MSG_SMESSAGE = 3, /* SSUBSCRIBE matched */
    /* confirmations: channel is the name (NULL for "from nothing"), count
     * the subscriptions held after it */
    GB_RING_MSG_SUBSCRIBE = 11,
    GB_RING_MSG_UNSUBSCRIBE = 12,
    GB_RING_MSG_PSUBSCRIBE = 13,
    GB_RING_MSG_PUNSUBSCRIBE = 14,
    GB_RING_MSG_SSUBSCRIBE = 15,
    GB_RING_MSG_SUNSUBSCRIBE = 16,
} gb_ring_message_kind;

/* A push; the pointers borrow the response ring (not NUL-terminated) and
 * stay valid until gb_ring_message_done. */
typedef struct gb_ring_message {
    gb_ring_message_kind kind;
    const char *channel; /* the channel, or a confirmation's name */
    size_t channel_len;
    const char *pattern; /* PMESSAGE only, else NULL */
    size_t pattern_len;
    const char *payload; /* messages */
    size_t payload_len;
    int64_t count;       /* confirmations */
} gb_ring_message;

/* Waits up to timeout_ns (UINT64_MAX: forever) for the next push: spins,
 * then parks, like every read (the server wakes a parked subscriber).
 * GB_ETIMEDOUT when none came; GB_EPROTO when the next reply is not a push
 * (call it only while no request is outstanding; the reply is consumed).
 * After 0, call gb_ring_message_done before the next read. */
GB_EXPORT int gb_ring_next_message(gb_ring_client *rc, gb_ring_message *m, uint64_t timeout_ns);
GB_EXPORT void gb_ring_message_done(gb_ring_client *rc);

/* ---- raw records (protocol implementers, benchmarks) ---- */

/* Publishes one request record (copies msg). Waits while the ring is full. */
GB_EXPORT int gb_ring_client_send(gb_ring_client *rc, const void *msg, size_t len);
/* Waits for the next reply record; *msg stays valid until
 * gb_ring_client_recv_done(). timeout_ns UINT64_MAX = forever. */
GB_EXPORT int gb_ring_client_recv(gb_ring_client *rc, const void **msg, size_t *len, uint64_t timeout_ns);
GB_EXPORT void gb_ring_client_recv_done(gb_ring_client *rc);

/* The slot's mapping (diagnostics and the hostile-client tests). */
GB_EXPORT void *gb_ring_client_memory(gb_ring_client *rc, size_t *size);

#ifdef __cplusplus
}
#endif

#endif
