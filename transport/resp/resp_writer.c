#include "transport/resp/resp_writer.h"

#include <stdint.h>
#include <stdlib.h>

#include "engine/base/mem.h"
#include "engine/base/score.h"
#include "engine/base/util.h"

void gb_outbuf_init(gb_outbuf *b)
{
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = false;
}

void gb_outbuf_free(gb_outbuf *b)
{
    gb_free(b->data);
    gb_outbuf_init(b);
}

char *gb_outbuf_grow(gb_outbuf *b, size_t n)
{
    if (b->oom)
        return NULL;
    size_t ncap = b->cap ? b->cap : 1024;
    while (ncap < b->len + n) {
        if (ncap > SIZE_MAX / 2)
            goto fail;
        ncap *= 2;
    }
    char *d = gb_try_realloc(b->data, ncap);
    if (!d)
        goto fail;
    b->data = d;
    b->cap = ncap;
    return b->data + b->len;
fail:
    b->oom = true;
    b->cap = b->len; /* every later reserve comes here and is refused */
    return NULL;
}

void gb_outbuf_append(gb_outbuf *b, const char *s, size_t n)
{
    /* Nothing to add: an empty buffer has no data yet, and NULL + 0 is
     * undefined behaviour (UBSan), as memcpy from a NULL s would be. */
    if (!n)
        return;
    char *p = gb_outbuf_reserve(b, n);
    if (!p)
        return;
    memcpy(p, s, n);
    b->len += n;
}

void gb_outbuf_consume(gb_outbuf *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

bool gb_outbuf_shrink(gb_outbuf *b, size_t cap)
{
    if (b->oom || cap >= b->cap || cap < b->len)
        return false;
    char *d = gb_try_realloc(b->data, cap);
    if (!d)
        return false;
    b->data = d;
    b->cap = cap;
    return true;
}

/* Writes v's digits at p and returns how many. Lengths and counts in
 * replies are nearly always below 100: those skip the general conversion. */
static inline size_t put_small_or_ull(char *p, uint64_t v)
{
    if (v < 10) {
        p[0] = (char)('0' + v);
        return 1;
    }
    if (v < 100) {
        p[0] = (char)('0' + v / 10);
        p[1] = (char)('0' + v % 10);
        return 2;
    }
    return gb_ull2str(p, v);
}

/* "<prefix><int>\r\n" */
static void put_prefixed_int(gb_outbuf *b, char prefix, int64_t v)
{
    char *p = gb_outbuf_reserve(b, 24);
    if (!p)
        return;
    p[0] = prefix;
    size_t n = v >= 0 ? put_small_or_ull(p + 1, (uint64_t)v) : gb_ll2str(p + 1, v);
    p[n + 1] = '\r';
    p[n + 2] = '\n';
    b->len += n + 3;
}

/* "<prefix><s>\r\n" */
static inline void put_prefixed_line(gb_outbuf *b, char prefix, const char *s, size_t len)
{
    char *p = gb_outbuf_reserve(b, len + 3);
    if (!p)
        return;
    p[0] = prefix;
    memcpy(p + 1, s, len);
    p[len + 1] = '\r';
    p[len + 2] = '\n';
    b->len += len + 3;
}

static void w_status(void *ctx, const char *s, size_t len) { put_prefixed_line(ctx, '+', s, len); }

static void w_error(void *ctx, const char *s, size_t len) { put_prefixed_line(ctx, '-', s, len); }

static void w_integer(void *ctx, int64_t v) { put_prefixed_int(ctx, ':', v); }

static void w_bulk(void *ctx, const char *s, size_t len)
{
    gb_outbuf *b = ctx;
    char *p = gb_outbuf_reserve(b, len + 26);
    if (!p)
        return;
    p[0] = '$';
    size_t n = put_small_or_ull(p + 1, len);
    p[n + 1] = '\r';
    p[n + 2] = '\n';
    if (len)
        memcpy(p + n + 3, s, len);
    p[n + 3 + len] = '\r';
    p[n + 4 + len] = '\n';
    b->len += n + 5 + len;
}

static void w_dbl(void *ctx, double v)
{
    char buf[GB_SCORE_BUF];
    size_t n = gb_score_format(v, buf);
    w_bulk(ctx, buf, n);
}

static void w_nil(void *ctx) { gb_outbuf_append(ctx, "$-1\r\n", 5); }

static void w_array(void *ctx, int64_t n)
{
    if (n < 0)
        gb_outbuf_append(ctx, "*-1\r\n", 5);
    else
        put_prefixed_int(ctx, '*', n);
}

static size_t w_array_deferred(void *ctx)
{
    gb_outbuf *b = ctx;
    return b->len;
}

/* Inserts "<prefix><n>\r\n" at handle, where the aggregate's elements
 * begin: they are already in the buffer, the header moves them once. */
static void put_deferred(gb_outbuf *b, size_t handle, char prefix, int64_t n)
{
    char hdr[24];
    hdr[0] = prefix;
    size_t hl = gb_ll2str(hdr + 1, n) + 1;
    hdr[hl++] = '\r';
    hdr[hl++] = '\n';
    if (!gb_outbuf_reserve(b, hl))
        return;
    memmove(b->data + handle + hl, b->data + handle, b->len - handle);
    memcpy(b->data + handle, hdr, hl);
    b->len += hl;
}

static void w_set_deferred(void *ctx, size_t handle, int64_t n) { put_deferred(ctx, handle, '*', n); }

/* ---- RESP3: the types RESP2 folds into bulk strings and arrays ---- */

static void w3_null(void *ctx) { gb_outbuf_append(ctx, "_\r\n", 3); }

static void w3_array(void *ctx, int64_t n)
{
    if (n < 0)
        w3_null(ctx);
    else
        put_prefixed_int(ctx, '*', n);
}

/* ",<double>\r\n": the same digits as the RESP2 bulk, so a client reads
 * the same value in either protocol ("inf", "-inf", "nan" as Redis). */
static void w3_dbl(void *ctx, double v)
{
    char buf[GB_SCORE_BUF];
    size_t n = gb_score_format(v, buf);
    put_prefixed_line(ctx, ',', buf, n);
}

static void w3_dbl_text(void *ctx, double v, const char *s, size_t len)
{
    (void)v;
    put_prefixed_line(ctx, ',', s, len);
}

static void w3_map(void *ctx, int64_t npairs) { put_prefixed_int(ctx, '%', npairs); }

static void w3_set(void *ctx, int64_t n) { put_prefixed_int(ctx, '~', n); }

static void w3_push(void *ctx, int64_t n) { put_prefixed_int(ctx, '>', n); }

static void w3_attribute(void *ctx, int64_t npairs) { put_prefixed_int(ctx, '|', npairs); }

static void w3_set_deferred_map(void *ctx, size_t handle, int64_t npairs) { put_deferred(ctx, handle, '%', npairs); }

static void w3_set_deferred_set(void *ctx, size_t handle, int64_t n) { put_deferred(ctx, handle, '~', n); }

/* "=<len+4>\r\n<fmt>:<s>\r\n" (Redis's addReplyVerbatim). */
static void w3_verbatim(void *ctx, const char format[3], const char *s, size_t len)
{
    gb_outbuf *b = ctx;
    put_prefixed_int(b, '=', (int64_t)len + 4);
    gb_outbuf_append(b, format, 3);
    gb_outbuf_append(b, ":", 1);
    gb_outbuf_append(b, s, len);
    gb_outbuf_append(b, "\r\n", 2);
}

static void w3_boolean(void *ctx, bool v) { gb_outbuf_append(ctx, v ? "#t\r\n" : "#f\r\n", 4); }

static void w3_big_number(void *ctx, const char *s, size_t len) { put_prefixed_line(ctx, '(', s, len); }

/* RESP2 has no map, set, push or verbatim type: the engine's fallbacks
 * (engine/core/request/reply.c) send arrays and bulk strings, as Redis does. */
const gb_reply_ops gb_resp2_reply_ops = {
    .resp2 = &gb_resp2_reply_ops,
    .resp3 = &gb_resp3_reply_ops,
    .status = w_status,
    .error = w_error,
    .integer = w_integer,
    .dbl = w_dbl,
    .bulk = w_bulk,
    .nil = w_nil,
    .array = w_array,
    .array_deferred = w_array_deferred,
    .set_deferred = w_set_deferred,
};

const gb_reply_ops gb_resp3_reply_ops = {
    .resp2 = &gb_resp2_reply_ops,
    .resp3 = &gb_resp3_reply_ops,
    .verbatim = w3_verbatim,
    .boolean = w3_boolean,
    .big_number = w3_big_number,
    .set_deferred_set = w3_set_deferred_set,
    .status = w_status,
    .error = w_error,
    .integer = w_integer,
    .dbl = w3_dbl,
    .dbl_text = w3_dbl_text,
    .bulk = w_bulk,
    .nil = w3_null,
    .array = w3_array,
    .array_deferred = w_array_deferred,
    .set_deferred = w_set_deferred,
    .map = w3_map,
    .set = w3_set,
    .set_deferred_map = w3_set_deferred_map,
    .push = w3_push,
    .attribute = w3_attribute,
};
