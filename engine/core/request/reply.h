/*
 * The reply sink: how the engine answers without knowing the wire.
 *
 * Handlers call gb_reply_*(client, ...). Each client carries a gb_reply_ops
 * table and a context, installed by its transport: the RESP writer
 * (transport/resp/resp_writer.c) for sockets and RESP rings, the SBE writer
 * for SBE rings. The engine never formats protocol bytes itself.
 */
#ifndef GB_ENGINE_REPLY_H
#define GB_ENGINE_REPLY_H

#include "engine/base/common.h"

typedef struct gb_reply_ops {
    /* The same writer in each protocol, for HELLO's switch (c->resp):
     * NULL where the transport has no such form (SBE rings' typed frames). */
    const struct gb_reply_ops *resp2, *resp3;
    /* A verbatim string (RESP3 '=' with a 3-character format such as
     * "txt"); NULL: a bulk string. */
    void (*verbatim)(void *ctx, const char format[3], const char *s, size_t len);
    /* RESP3 '#t' / '#f'; NULL: the integer 1 or 0 (Redis's RESP2 form). */
    void (*boolean)(void *ctx, bool v);
    /* RESP3 '(' digits (no CR or LF in s); NULL: a bulk string. */
    void (*big_number)(void *ctx, const char *s, size_t len);
    /* A double the command formatted itself (v, written as s): RESP3 ','
     * with exactly these digits; NULL: a bulk string of s. */
    void (*dbl_text)(void *ctx, double v, const char *s, size_t len);
    /* set_deferred for a set (RESP3 '~'); NULL: set_deferred. */
    void (*set_deferred_set)(void *ctx, size_t handle, int64_t n);
    void (*status)(void *ctx, const char *s, size_t len);  /* +OK */
    void (*error)(void *ctx, const char *s, size_t len);   /* "ERR ..." (no '-') */
    void (*integer)(void *ctx, int64_t v);
    void (*dbl)(void *ctx, double v);                      /* RESP2: bulk string */
    void (*bulk)(void *ctx, const char *s, size_t len);
    void (*nil)(void *ctx);                                /* null bulk */
    void (*array)(void *ctx, int64_t n);                   /* n < 0: null array */
    /* An array whose length is known only after its elements: returns a
     * handle for set_deferred. */
    size_t (*array_deferred)(void *ctx);
    void (*set_deferred)(void *ctx, size_t handle, int64_t n);
    /* Aggregates that RESP3 tells apart and RESP2 sends as arrays. NULL:
     * the array of the same elements (a map of n pairs is 2n of them). */
    void (*map)(void *ctx, int64_t npairs);
    void (*set)(void *ctx, int64_t n);
    void (*set_deferred_map)(void *ctx, size_t handle, int64_t npairs);
    void (*push)(void *ctx, int64_t n);                    /* RESP3 '>' out-of-band push; NULL: array */
    /* RESP3 '|': npairs of attributes, which describe the reply that
     * follows them and are no reply themselves. NULL: a wire without them
     * (RESP2, the rings' typed frames, scripts, which Redis does not show
     * them either): gb_reply_attribute says so and the pairs are not sent. */
    void (*attribute)(void *ctx, int64_t npairs);
    /* Pub/sub pushes as one call, for wires with a typed form (SBE's
     * Message and Subscription templates). NULL: the push of Redis's
     * elements (gb_reply_message below). kind: GB_REPLY_MSG_* / GB_REPLY_SUB_*. */
    void (*message)(void *ctx, unsigned kind, const gb_slice *pattern, gb_slice channel, gb_slice payload);
    void (*subscription)(void *ctx, unsigned kind, const gb_slice *name, int64_t count);
} gb_reply_ops;

/* Pub/sub push kinds: the SBE schema's MessageKind and SubscriptionKind
 * numbers (include/goblin/sbe_schema.h; sbe_server.c asserts they agree). */
enum { GB_REPLY_MSG_MESSAGE = 1, GB_REPLY_MSG_PMESSAGE = 2, GB_REPLY_MSG_SMESSAGE = 3 };
/* 1 + 2 * gb_pubsub_kind + (1 for the unsubscribe form) */
enum {
    GB_REPLY_SUB_SUBSCRIBE = 1,
    GB_REPLY_SUB_UNSUBSCRIBE = 2,
    GB_REPLY_SUB_PSUBSCRIBE = 3,
    GB_REPLY_SUB_PUNSUBSCRIBE = 4,
    GB_REPLY_SUB_SSUBSCRIBE = 5,
    GB_REPLY_SUB_SUNSUBSCRIBE = 6,
};

struct gb_client;

/* Replies that go nowhere (CLIENT REPLY OFF/SKIP, a replayed log). */
extern const gb_reply_ops gb_reply_discard_ops;

void gb_reply_status_len(struct gb_client *c, const char *s, size_t len);
/* Inline so that a literal's length is folded where it is written
 * (PING's "PONG" on the ring's hot path pays no strlen). */
static inline void gb_reply_status(struct gb_client *c, const char *s) { gb_reply_status_len(c, s, strlen(s)); }
void gb_reply_ok(struct gb_client *c);
/* err is the full text after '-', e.g. "ERR syntax error" or "WRONGTYPE ...".
 * CR/LF in it are replaced by spaces so the protocol stays intact. */
void gb_reply_error(struct gb_client *c, const char *err);
/* An error already counted where it arose (Redis's
 * ERR_REPLY_FLAG_NO_STATS_UPDATE): a script passing on the error of a
 * command it called. */
void gb_reply_error_counted_already(struct gb_client *c, const char *err);
/* Counts an error (total_error_replies, errorstats) that is not written as
 * a reply here: a command refused inside a script, which the script then
 * raises. */
void gb_reply_count_error(struct gb_client *c, const char *err);
void gb_reply_errorf(struct gb_client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gb_reply_int(struct gb_client *c, int64_t v);
void gb_reply_double(struct gb_client *c, double v);
void gb_reply_bulk(struct gb_client *c, const char *s, size_t len);
static inline void gb_reply_slice(struct gb_client *c, gb_slice s) { gb_reply_bulk(c, s.ptr, s.len); }
void gb_reply_cstr(struct gb_client *c, const char *s);
void gb_reply_bulk_ll(struct gb_client *c, int64_t v);
void gb_reply_nil(struct gb_client *c);
void gb_reply_array(struct gb_client *c, int64_t n);
void gb_reply_nil_array(struct gb_client *c);
/* The HELP subcommands' reply: one status line per text. */
void gb_reply_help(struct gb_client *c, const char *const *lines, size_t n);
size_t gb_reply_array_deferred(struct gb_client *c);
void gb_reply_set_deferred(struct gb_client *c, size_t handle, int64_t n);
/* A map of npairs key/value pairs (each pair: two replies), a set of n
 * members; RESP2 sends both as arrays. */
void gb_reply_map(struct gb_client *c, int64_t npairs);
void gb_reply_set(struct gb_client *c, int64_t n);
/* A map whose size is known after its pairs (handle from
 * gb_reply_array_deferred). */
void gb_reply_set_deferred_map(struct gb_client *c, size_t handle, int64_t npairs);
/* An out-of-band push of n elements (pub/sub messages, invalidations): '>' in RESP3, an array in RESP2. */
void gb_reply_push(struct gb_client *c, int64_t n);
/* An attribute map of npairs pairs ahead of the next reply: true when the
 * wire has them and the caller sends the pairs, false when it has not and
 * the caller sends nothing (Redis sends attributes to RESP3 clients only). */
bool gb_reply_attribute(struct gb_client *c, int64_t npairs);

/* A pub/sub message: [message, channel, payload], [pmessage, pattern,
 * channel, payload] or [smessage, channel, payload] as a push, or the
 * sink's typed form. pattern: NULL unless GB_REPLY_MSG_PMESSAGE. */
void gb_reply_message(struct gb_client *c, unsigned kind, const gb_slice *pattern, gb_slice channel, gb_slice payload);
/* A subscription confirmation: [word, name (nil when NULL), count]. */
void gb_reply_subscription(struct gb_client *c, unsigned kind, const gb_slice *name, int64_t count);
/* Sends the messages gb_reply_message held back during EXEC (see
 * engine/core/request/reply.c); frees them without sending when send is false. */
void gb_reply_flush_deferred_pushes(struct gb_client *c, bool send);

/* A set whose size is known after its members (handle from
 * gb_reply_array_deferred). */
void gb_reply_set_deferred_set(struct gb_client *c, size_t handle, int64_t n);
/* Free text for people (INFO, CLIENT INFO/LIST): a RESP3 verbatim string
 * of format "txt", a bulk string in RESP2. */
void gb_reply_verbatim(struct gb_client *c, const char *s, size_t len);
/* With FORMAT's first three characters, space-padded (Redis's addReplyVerbatim). */
void gb_reply_verbatim_format(struct gb_client *c, const char *format, const char *s, size_t len);
void gb_reply_bool(struct gb_client *c, bool v);
void gb_reply_big_number(struct gb_client *c, const char *s, size_t len);
/* A double in the caller's own digits (Redis's addReplyHumanLongDouble:
 * GEOPOS coordinates): a bulk string of s in RESP2, ",s" in RESP3. */
void gb_reply_double_text(struct gb_client *c, double v, const char *s, size_t len);

/* Redis's standard error texts. */
#define GB_ERR_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"
#define GB_ERR_SYNTAX "ERR syntax error"
#define GB_ERR_NOT_INT "ERR value is not an integer or out of range"
#define GB_ERR_NOT_FLOAT "ERR value is not a valid float"
#define GB_ERR_NOAUTH "NOAUTH Authentication required."
#define GB_ERR_WRONGPASS "WRONGPASS invalid username-password pair or user is disabled."
#define GB_ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."
#define GB_ERR_NO_KEY "ERR no such key"
#define GB_ERR_DB_RANGE "ERR DB index is out of range"
#define GB_ERR_OVERFLOW "ERR increment or decrement would overflow"

#endif
