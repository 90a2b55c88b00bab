#include "engine/core/request/reply.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/core/request/client.h"
#include "engine/core/engine.h"
#include "engine/base/mem.h"
#include "engine/base/util.h"

static void d_text(void *ctx, const char *s, size_t len) { (void)ctx, (void)s, (void)len; }
static void d_int(void *ctx, int64_t v) { (void)ctx, (void)v; }
static void d_dbl(void *ctx, double v) { (void)ctx, (void)v; }
static void d_nil(void *ctx) { (void)ctx; }
static size_t d_deferred(void *ctx)
{
    (void)ctx;
    return 0;
}
static void d_set_deferred(void *ctx, size_t h, int64_t n) { (void)ctx, (void)h, (void)n; }

const gb_reply_ops gb_reply_discard_ops = {
    .status = d_text,
    .error = d_text,
    .integer = d_int,
    .dbl = d_dbl,
    .bulk = d_text,
    .nil = d_nil,
    .array = d_int,
    .array_deferred = d_deferred,
    .set_deferred = d_set_deferred,
};

void gb_reply_status_len(gb_client *c, const char *s, size_t len) { c->rops->status(c->rctx, s, len); }

void gb_reply_ok(gb_client *c) { c->rops->status(c->rctx, "OK", 2); }

/* Whether nobody reads c's replies: the primary's stream, a replica, or
 * the append-only log being loaded (GB_CLIENT_OBEY, not inside a script,
 * whose caller gets the script's own error). */
static bool unread_reply(const gb_client *c)
{
    return (c->flags & (GB_CLIENT_MASTER | GB_CLIENT_REPLICA)) ||
           (c->flags & (GB_CLIENT_OBEY | GB_CLIENT_SCRIPT)) == GB_CLIENT_OBEY;
}

/* An error such a client got: the data set now differs from what its
 * source meant, so it is logged and counted as Redis's afterErrorReply
 * does, and stops the server where propagation-error-behavior asks: a
 * read-only replica under panic and panic-on-replicas, the log under
 * panic. */
static void unexpected_error(gb_client *c, const char *s, size_t len)
{
    const gb_settings *cfg = &c->eng->cfg;
    bool master = (c->flags & GB_CLIENT_MASTER) != 0, replica = !master && (c->flags & GB_CLIENT_REPLICA);
    const char *from = master ? "replica" : replica ? "master" : "server";
    const char *to = master ? "master" : replica ? "replica" : "AOF-loading-client";
    const char *cmd = c->last_cmd ? c->last_cmd->fullname : "<unknown>";
    gb_log(GB_LOG_WARNING, "== CRITICAL == This %s is sending an error to its %s: '%.*s' after processing the command '%s'",
           from, to, (int)GB_MIN(len, (size_t)4096), s, cmd);
    c->eng->stats.unexpected_error_replies++;
    bool panic_replica = master && cfg->replica_read_only && cfg->propagation_error_behavior != GB_PROPAGATION_ERR_IGNORE;
    bool panic_log = !master && !replica && cfg->propagation_error_behavior == GB_PROPAGATION_ERR_PANIC;
    if (panic_replica || panic_log) {
        gb_log(GB_LOG_WARNING, "This %s panicked sending an error to its %s after processing the command '%s'", from,
               to, cmd);
        abort();
    }
}

static void count_error(gb_client *c, const char *s, size_t len)
{
    c->eng->stats.total_error_replies++;
    gb_errorstats_count(&c->eng->errorstats, s, len);
    if (GB_UNLIKELY(unread_reply(c)))
        unexpected_error(c, s, len);
}

void gb_reply_count_error(gb_client *c, const char *err) { count_error(c, err, strlen(err)); }

/* Errors must stay on one line of the protocol. */
static void reply_error_len(gb_client *c, char *s, size_t len, bool counted)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] == '\r' || s[i] == '\n')
            s[i] = ' ';
    if (counted)
        count_error(c, s, len);
    c->rops->error(c->rctx, s, len);
}

static void reply_error(gb_client *c, const char *err, bool counted)
{
    size_t len = strlen(err);
    if (!memchr(err, '\n', len) && !memchr(err, '\r', len)) {
        if (counted)
            count_error(c, err, len);
        c->rops->error(c->rctx, err, len);
        return;
    }
    char *copy = gb_memdup(err, len);
    reply_error_len(c, copy, len, counted);
    gb_free(copy);
}

void gb_reply_error(gb_client *c, const char *err) { reply_error(c, err, true); }

void gb_reply_error_counted_already(gb_client *c, const char *err)
{
    /* not counted again, but the call answering it failed (Redis's
     * afterErrorReply with ERR_REPLY_FLAG_NO_STATS_UPDATE): gb_call_end */
    c->eng->stats.uncounted_error = true;
    reply_error(c, err, false);
}

void gb_reply_errorf(gb_client *c, const char *fmt, ...)
{
    /* Most errors fit the stack buffer; one that echoes a long argument
     * (Redis prints "Unsupported option %s" whole) is formatted again into
     * a buffer of its size. */
    char buf[1024];
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof buf) {
        reply_error_len(c, buf, (size_t)n, true);
    } else {
        char *big = gb_malloc((size_t)n + 1);
        vsnprintf(big, (size_t)n + 1, fmt, again);
        reply_error_len(c, big, (size_t)n, true);
        gb_free(big);
    }
    va_end(again);
}

void gb_reply_int(gb_client *c, int64_t v) { c->rops->integer(c->rctx, v); }

void gb_reply_double(gb_client *c, double v) { c->rops->dbl(c->rctx, v); }

void gb_reply_bulk(gb_client *c, const char *s, size_t len) { c->rops->bulk(c->rctx, s, len); }

void gb_reply_cstr(gb_client *c, const char *s) { c->rops->bulk(c->rctx, s, strlen(s)); }

void gb_reply_bulk_ll(gb_client *c, int64_t v)
{
    char buf[24];
    size_t n = gb_ll2str(buf, v);
    c->rops->bulk(c->rctx, buf, n);
}

void gb_reply_nil(gb_client *c) { c->rops->nil(c->rctx); }

void gb_reply_array(gb_client *c, int64_t n) { c->rops->array(c->rctx, n); }

void gb_reply_nil_array(gb_client *c) { c->rops->array(c->rctx, -1); }

size_t gb_reply_array_deferred(gb_client *c) { return c->rops->array_deferred(c->rctx); }

void gb_reply_set_deferred(gb_client *c, size_t handle, int64_t n) { c->rops->set_deferred(c->rctx, handle, n); }

void gb_reply_map(gb_client *c, int64_t npairs)
{
    if (c->rops->map)
        c->rops->map(c->rctx, npairs);
    else
        c->rops->array(c->rctx, npairs * 2);
}

void gb_reply_set(gb_client *c, int64_t n)
{
    if (c->rops->set)
        c->rops->set(c->rctx, n);
    else
        c->rops->array(c->rctx, n);
}

void gb_reply_set_deferred_map(gb_client *c, size_t handle, int64_t npairs)
{
    if (c->rops->set_deferred_map)
        c->rops->set_deferred_map(c->rctx, handle, npairs);
    else
        c->rops->set_deferred(c->rctx, handle, npairs * 2);
}

void gb_reply_push(gb_client *c, int64_t n)
{
    if (c->rops->push)
        c->rops->push(c->rctx, n);
    else
        c->rops->array(c->rctx, n);
}

bool gb_reply_attribute(gb_client *c, int64_t npairs)
{
    if (!c->rops->attribute)
        return false;
    c->rops->attribute(c->rctx, npairs);
    return true;
}

static const char *const message_words[] = {NULL, "message", "pmessage", "smessage"};
static const char *const subscription_words[] = {NULL,         "subscribe",  "unsubscribe", "psubscribe",
                                                 "punsubscribe", "ssubscribe", "sunsubscribe"};

/* A typed push (SBE's Message and Subscription) is a record of its own,
 * so it cannot sit inside an open reply, and inside EXEC the client's reply
 * is EXEC's array until the last queued command has answered:
 * - SUBSCRIBE's confirmations are that command's reply: an element of the
 *   array, in the array form RESP2 sends;
 * - a message the client gets meanwhile (it subscribed and published to
 *   itself in the transaction) is held back and sent once EXEC has
 *   replied. (Redis writes such a message into the middle of EXEC's array,
 *   which leaves a RESP client one reply out of step; RESP clients here
 *   get Redis's bytes.) */
static inline bool typed_push_allowed(const gb_client *c) { return !(c->flags & GB_CLIENT_IN_EXEC); }

typedef struct gb_deferred_push {
    struct gb_deferred_push *next;
    unsigned kind;
    bool has_pattern;
    size_t plen, clen, mlen;
    char bytes[]; /* pattern, channel, payload */
} gb_deferred_push;

static void defer_message(gb_client *c, unsigned kind, const gb_slice *pattern, gb_slice channel, gb_slice payload)
{
    size_t plen = pattern ? pattern->len : 0;
    gb_deferred_push *d = gb_try_malloc(sizeof *d + plen + channel.len + payload.len);
    if (!d) {
        /* A message cannot be dropped silently: the client goes, as one
         * whose output buffer could not grow. */
        c->flags |= GB_CLIENT_CLOSE_ASAP;
        return;
    }
    d->next = NULL;
    d->kind = kind;
    d->has_pattern = pattern != NULL;
    d->plen = plen;
    d->clen = channel.len;
    d->mlen = payload.len;
    if (plen)
        memcpy(d->bytes, pattern->ptr, plen);
    if (channel.len)
        memcpy(d->bytes + plen, channel.ptr, channel.len);
    if (payload.len)
        memcpy(d->bytes + plen + channel.len, payload.ptr, payload.len);
    if (!c->deferred_pushes)
        c->deferred_tail = &c->deferred_pushes;
    *c->deferred_tail = d;
    c->deferred_tail = &d->next;
}

void gb_reply_flush_deferred_pushes(gb_client *c, bool send)
{
    gb_deferred_push *d = c->deferred_pushes;
    c->deferred_pushes = NULL;
    c->deferred_tail = NULL;
    while (d) {
        gb_deferred_push *next = d->next;
        if (send) {
            gb_slice pattern = gb_slice_make(d->bytes, d->plen);
            gb_reply_message(c, d->kind, d->has_pattern ? &pattern : NULL,
                             gb_slice_make(d->bytes + d->plen, d->clen),
                             gb_slice_make(d->bytes + d->plen + d->clen, d->mlen));
        }
        gb_free(d);
        d = next;
    }
}

static void write_message(gb_client *c, unsigned kind, const gb_slice *pattern, gb_slice channel, gb_slice payload)
{
    if (c->rops->message) {
        if (GB_UNLIKELY(!typed_push_allowed(c)))
            defer_message(c, kind, pattern, channel, payload);
        else
            c->rops->message(c->rctx, kind, pattern, channel, payload);
        return;
    }
    gb_reply_push(c, pattern ? 4 : 3);
    gb_reply_cstr(c, message_words[kind]);
    if (pattern)
        gb_reply_slice(c, *pattern);
    gb_reply_slice(c, channel);
    gb_reply_slice(c, payload);
}

void gb_reply_message(gb_client *c, unsigned kind, const gb_slice *pattern, gb_slice channel, gb_slice payload)
{
    const gb_reply_ops *was = gb_client_push_begin(c);
    write_message(c, kind, pattern, channel, payload);
    gb_client_push_end(c, was);
}

static void write_subscription(gb_client *c, unsigned kind, const gb_slice *name, int64_t count)
{
    if (c->rops->subscription && typed_push_allowed(c)) {
        c->rops->subscription(c->rctx, kind, name, count);
        return;
    }
    gb_reply_push(c, 3);
    gb_reply_cstr(c, subscription_words[kind]);
    if (name)
        gb_reply_slice(c, *name);
    else
        gb_reply_nil(c);
    gb_reply_int(c, count);
}

void gb_reply_subscription(gb_client *c, unsigned kind, const gb_slice *name, int64_t count)
{
    const gb_reply_ops *was = gb_client_push_begin(c);
    write_subscription(c, kind, name, count);
    gb_client_push_end(c, was);
}

void gb_reply_set_deferred_set(gb_client *c, size_t handle, int64_t n)
{
    if (c->rops->set_deferred_set)
        c->rops->set_deferred_set(c->rctx, handle, n);
    else
        c->rops->set_deferred(c->rctx, handle, n);
}

void gb_reply_verbatim(gb_client *c, const char *s, size_t len) { gb_reply_verbatim_format(c, "txt", s, len); }

void gb_reply_verbatim_format(gb_client *c, const char *format, const char *s, size_t len)
{
    if (!c->rops->verbatim) {
        c->rops->bulk(c->rctx, s, len);
        return;
    }
    char fmt[3] = {' ', ' ', ' '};
    for (size_t i = 0; i < 3 && format[i]; i++)
        fmt[i] = format[i];
    c->rops->verbatim(c->rctx, fmt, s, len);
}

void gb_reply_bool(gb_client *c, bool v)
{
    if (c->rops->boolean)
        c->rops->boolean(c->rctx, v);
    else
        c->rops->integer(c->rctx, v ? 1 : 0);
}

void gb_reply_big_number(gb_client *c, const char *s, size_t len)
{
    if (c->rops->big_number)
        c->rops->big_number(c->rctx, s, len);
    else
        c->rops->bulk(c->rctx, s, len);
}

void gb_reply_double_text(gb_client *c, double v, const char *s, size_t len)
{
    if (c->rops->dbl_text)
        c->rops->dbl_text(c->rctx, v, s, len);
    else
        c->rops->bulk(c->rctx, s, len);
}

void gb_reply_help(gb_client *c, const char *const *lines, size_t n)
{
    gb_reply_array(c, (int64_t)n);
    for (size_t i = 0; i < n; i++)
        gb_reply_status(c, lines[i]);
}
