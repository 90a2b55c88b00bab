#include "engine/core/reply.h"

#include <stdarg.h>
#include <stdio.h>

#include "engine/core/client.h"
#include "engine/core/engine.h"
#include "engine/base/mem.h"
#include "engine/base/util.h"

void gb_reply_status(gb_client *c, const char *s) { c->rops->status(c->rctx, s, strlen(s)); }

void gb_reply_ok(gb_client *c) { c->rops->status(c->rctx, "OK", 2); }

/* Errors must stay on one line of the protocol. */
static void reply_error_len(gb_client *c, char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] == '\r' || s[i] == '\n')
            s[i] = ' ';
    c->eng->stats.total_error_replies++;
    c->rops->error(c->rctx, s, len);
}

void gb_reply_error(gb_client *c, const char *err)
{
    size_t len = strlen(err);
    if (!memchr(err, '\n', len) && !memchr(err, '\r', len)) {
        c->eng->stats.total_error_replies++;
        c->rops->error(c->rctx, err, len);
        return;
    }
    char *copy = gb_memdup(err, len);
    reply_error_len(c, copy, len);
    gb_free(copy);
}

void gb_reply_errorf(gb_client *c, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof buf)
        n = sizeof buf - 1;
    reply_error_len(c, buf, (size_t)n);
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

void gb_reply_help(gb_client *c, const char *const *lines, size_t n)
{
    gb_reply_array(c, (int64_t)n);
    for (size_t i = 0; i < n; i++)
        gb_reply_status(c, lines[i]);
}
