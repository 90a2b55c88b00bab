/*
 * Helpers for the typed key operation tests (not a test itself: only
 * test_*.c files become executables): an engine with a db to call the
 * operations on, and a gb_sink that records what an operation streams as
 * readable text ("len=2 a b", "f=v", "m:1.5", "#3", "nil").
 */
#ifndef GB_TEST_ENGINE_TYPES_CAPTURE_H
#define GB_TEST_ENGINE_TYPES_CAPTURE_H

#define _POSIX_C_SOURCE 200809L /* strdup, strtok_r (engine_harness.h) */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine_harness.h"
#include "engine/types/result.h"

typedef struct capture {
    char buf[4096];
    size_t len;
    size_t lens;  /* how many times len was called */
    size_t elems; /* elements seen */
} capture;

static void cap_put(capture *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cap_put(capture *c, const char *fmt, ...)
{
    if (c->len && c->len < sizeof c->buf - 1)
        c->buf[c->len++] = ' ';
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(c->buf + c->len, sizeof c->buf - c->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        c->len = GB_MIN(c->len + (size_t)n, sizeof c->buf - 1);
}

static void cap_len(void *ctx, size_t n)
{
    capture *c = ctx;
    c->lens++;
    if (n == GB_SINK_LEN_UNKNOWN)
        cap_put(c, "len=?");
    else
        cap_put(c, "len=%zu", n);
}
static void cap_value(void *ctx, gb_slice v)
{
    ((capture *)ctx)->elems++;
    cap_put(ctx, "%.*s", (int)v.len, v.ptr);
}
static void cap_pair(void *ctx, gb_slice f, gb_slice v)
{
    ((capture *)ctx)->elems++;
    cap_put(ctx, "%.*s=%.*s", (int)f.len, f.ptr, (int)v.len, v.ptr);
}
static void cap_scored(void *ctx, gb_slice m, double s)
{
    ((capture *)ctx)->elems++;
    cap_put(ctx, "%.*s:%g", (int)m.len, m.ptr, s);
}
static void cap_position(void *ctx, size_t i)
{
    ((capture *)ctx)->elems++;
    cap_put(ctx, "#%zu", i);
}
static void cap_missing(void *ctx)
{
    ((capture *)ctx)->elems++;
    cap_put(ctx, "nil");
}

/* A sink with every callback, recording into c (cleared). */
static inline gb_sink cap_sink(capture *c)
{
    memset(c, 0, sizeof *c);
    gb_sink s = {cap_len, cap_value, cap_pair, cap_scored, cap_position, cap_missing, c};
    return s;
}

#define S(lit) gb_slice_cstr(lit)

/* The type of key in db, or -1 when it is missing (no stats, no expiry). */
static inline int key_type(gb_db *db, const char *key)
{
    gb_kv *kv = gb_db_lookup_quiet(db, S(key));
    return kv ? (int)kv->type : -1;
}

#endif
