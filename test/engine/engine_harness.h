/*
 * A tiny harness for engine tests: an engine with default settings, a client
 * whose replies are rendered into a readable string, and run("SET k v")
 * to execute a space-separated command. Replies render as RESP-like text:
 * "+OK", "-ERR ...", ":1", "$bar" (bulk), "$nil", "*2[...]" for arrays.
 */
#ifndef GB_TEST_ENGINE_HARNESS_H
#define GB_TEST_ENGINE_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/engine.h"
#include "engine/modules.h"
#include "engine/core/request/gate.h"

typedef struct harness_out {
    char buf[1 << 16];
    size_t len;
} harness_out;

static void h_put(harness_out *o, const char *s, size_t n)
{
    if (o->len + n >= sizeof o->buf)
        n = sizeof o->buf - o->len - 1;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = '\0';
}

static void h_sep(harness_out *o)
{
    if (o->len && o->buf[o->len - 1] != '[')
        h_put(o, " ", 1);
}
static void h_status(void *ctx, const char *s, size_t n)
{
    h_sep(ctx);
    h_put(ctx, "+", 1);
    h_put(ctx, s, n);
}
static void h_error(void *ctx, const char *s, size_t n)
{
    h_sep(ctx);
    h_put(ctx, "-", 1);
    h_put(ctx, s, n);
}
static void h_int(void *ctx, int64_t v)
{
    char b[32];
    int n = snprintf(b, sizeof b, ":%lld", (long long)v);
    h_sep(ctx);
    h_put(ctx, b, (size_t)n);
}
static void h_dbl(void *ctx, double v)
{
    char b[64];
    int n = snprintf(b, sizeof b, "$%.17g", v);
    h_sep(ctx);
    h_put(ctx, b, (size_t)n);
}
static void h_bulk(void *ctx, const char *s, size_t n)
{
    h_sep(ctx);
    h_put(ctx, "$", 1);
    h_put(ctx, s, n);
}
static void h_nil(void *ctx)
{
    h_sep(ctx);
    h_put(ctx, "$nil", 4);
}
static void h_array(void *ctx, int64_t n)
{
    char b[32];
    int k = snprintf(b, sizeof b, "*%lld", (long long)n);
    h_sep(ctx);
    h_put(ctx, b, (size_t)k);
}
static size_t h_deferred(void *ctx)
{
    h_sep(ctx);
    h_put(ctx, "*?", 2);
    return ((harness_out *)ctx)->len;
}
static void h_set_deferred(void *ctx, size_t handle, int64_t n)
{
    (void)handle;
    (void)n;
    (void)ctx;
}

static const gb_reply_ops harness_ops = {
    .status = h_status,
    .error = h_error,
    .integer = h_int,
    .dbl = h_dbl,
    .bulk = h_bulk,
    .nil = h_nil,
    .array = h_array,
    .array_deferred = h_deferred,
    .set_deferred = h_set_deferred,
};

typedef struct harness {
    gb_engine *eng;
    gb_client *c;
    harness_out out;
} harness;

static inline harness *harness_new(void (*tweak)(gb_settings *s))
{
    harness *h = calloc(1, sizeof *h);
    gb_settings s;
    gb_settings_defaults(&s);
    if (tweak)
        tweak(&s);
    h->eng = gb_engine_new(&s);
    gb_settings_free(&s);
    h->c = gb_client_new(h->eng, &harness_ops, &h->out, NULL, NULL, 0);
    return h;
}

static inline void harness_free(harness *h)
{
    gb_engine_free(h->eng);
    free(h);
}

/* Runs a space-separated command and returns the rendered reply. */
static inline const char *run(harness *h, const char *cmdline)
{
    char *copy = strdup(cmdline);
    gb_slice argv[64];
    int argc = 0;
    for (char *save = NULL, *t = strtok_r(copy, " ", &save); t && argc < 64; t = strtok_r(NULL, " ", &save))
        argv[argc++] = gb_slice_cstr(t);
    h->out.len = 0;
    h->out.buf[0] = '\0';
    gb_gate_execute(h->c, argc, argv);
    free(copy);
    return h->out.buf;
}

#endif
