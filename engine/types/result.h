/*
 * Outcomes of the typed key operations (engine/types/t_*.h): the result
 * code each returns, and the sink through which it streams elements. The
 * RESP and SBE command layers turn both into replies; gb_reply_result()
 * (engine/commands/cmd_util.h) gives Redis's text for the common codes, and
 * a handler whose command words an outcome its own way says so itself.
 */
#ifndef GB_ENGINE_RESULT_H
#define GB_ENGINE_RESULT_H

#include "engine/base/common.h"

typedef enum gb_result {
    GB_R_OK = 0,
    GB_R_NOTFOUND,   /* key (or field/member) does not exist */
    GB_R_WRONGTYPE,  /* key holds another type */
    GB_R_NOTINT,     /* value is not an integer or out of range */
    GB_R_NOTFLOAT,   /* value is not a valid float */
    GB_R_OVERFLOW,   /* increment or decrement would overflow */
    GB_R_NAN,        /* increment would produce NaN or Infinity */
    GB_R_SKIPPED,    /* a condition (NX/XX/GT/LT) prevented the change */
    GB_R_TOOBIG,     /* string exceeds maximum allowed size */
    GB_R_SYNTAX,     /* bad option combination */
    GB_R_RANGE,      /* index or offset out of range */
    /* An argument the caller could not parse, passed as NULL. Redis checks
     * the key before some arguments (LINDEX's index, GETEX's expiry, the
     * options of the *SCAN and ZUNION families), so the operation looks the
     * key up and returns this only when the key passed its checks; the
     * caller then replies the parse error it kept. */
    GB_R_BADARG,
} gb_result;

/* sink->len's n when the operation learns the count only by going: the
 * operation's own result says how many there were. */
#define GB_SINK_LEN_UNKNOWN SIZE_MAX

/* Where a typed operation streams the elements it reads or removes (ranges,
 * pops, members, several fields at once), for its caller to reply, copy or
 * store them. Elements borrow the value's storage: they are valid only
 * during the call. Each operation's comment says which callbacks it calls;
 * a caller leaves the others NULL.
 *
 * len is called once, after the key passed its checks and before the first
 * element, with how many elements follow (or GB_SINK_LEN_UNKNOWN); NULL:
 * not wanted. An operation writes the out-parameters that describe what
 * follows (which key of several, the collection's size) before the sink
 * hears anything, so the callbacks may read them through ctx. */
typedef struct gb_sink {
    void (*len)(void *ctx, size_t n);
    void (*value)(void *ctx, gb_slice v);                     /* list values, set members, hash values, keys */
    void (*pair)(void *ctx, gb_slice field, gb_slice value);  /* hash fields with their values */
    void (*scored)(void *ctx, gb_slice member, double score); /* sorted-set members with their scores */
    void (*position)(void *ctx, size_t index);                /* LPOS matches */
    void (*missing)(void *ctx);                               /* HMGET, ZMSCORE, MGET: nothing there */
    void *ctx;
    /* Random members with a count: whether a reply of n elements, a number
     * the client chose, may be built (NULL: yes); element_bytes is about
     * what one element of the value takes (its memory over its length).
     * false: nothing is emitted (the caller has answered an error, or its
     * client is being closed for its output limit). */
    bool (*fits)(void *ctx, uint64_t n, uint64_t element_bytes);
} gb_sink;

static inline bool gb_sink_fits(const gb_sink *s, uint64_t n, uint64_t element_bytes)
{
    return !s->fits || s->fits(s->ctx, n, element_bytes);
}

static inline void gb_sink_len(const gb_sink *s, size_t n)
{
    if (s->len)
        s->len(s->ctx, n);
}

#endif
