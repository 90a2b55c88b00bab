/*
 * Helpers shared by the SBE server tests (test_sbe_server.c,
 * test_sbe_dispatch.c, test_sbe_fuzz.c): a real engine, SBE and RESP
 * clients on it, and a canonical text form of a reply so that an SBE reply
 * and a RESP2 reply can be compared by meaning:
 *   +status  -error  :integer  $bulk  $nil  *N[elem elem]  *nil
 * An SBE double renders as the bulk RESP2 would send ($ + gb_score_format).
 */
#ifndef GB_TEST_SBE_TEST_UTIL_H
#define GB_TEST_SBE_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/engine.h"
#include "engine/modules.h"
#include "engine/core/request/gate.h"
#include "engine/base/score.h"
#include "transport/resp/resp_writer.h"
#include "transport/sbe/sbe_client.h"
#include "transport/sbe/sbe_server.h"

static inline gb_engine *sbe_engine_new(void (*tweak)(gb_settings *s))
{
    gb_settings s;
    gb_settings_defaults(&s);
    if (tweak)
        tweak(&s);
    gb_engine *eng = gb_engine_new(&s);
    gb_settings_free(&s);
    return eng;
}

typedef struct sbe_conn {
    gb_client *c;
    gb_sbe_replier r;
    gb_outbuf out;
} sbe_conn;

static inline sbe_conn *sbe_conn_new(gb_engine *eng)
{
    sbe_conn *s = calloc(1, sizeof *s);
    gb_sbe_replier_init(&s->r, eng);
    gb_outbuf_init(&s->out);
    s->c = gb_client_new(eng, &gb_sbe_reply_ops, &s->r, NULL, NULL, GB_CLIENT_RING);
    return s;
}

static inline void sbe_conn_free(sbe_conn *s)
{
    gb_client_free(s->c);
    gb_sbe_replier_free(&s->r);
    gb_outbuf_free(&s->out);
    free(s);
}

typedef struct resp_conn {
    gb_client *c;
    gb_outbuf out;
} resp_conn;

static inline resp_conn *resp_conn_new(gb_engine *eng)
{
    resp_conn *s = calloc(1, sizeof *s);
    gb_outbuf_init(&s->out);
    s->c = gb_client_new(eng, &gb_resp2_reply_ops, &s->out, NULL, NULL, 0);
    return s;
}

static inline void resp_conn_free(resp_conn *s)
{
    gb_client_free(s->c);
    gb_outbuf_free(&s->out);
    free(s);
}

/* ---- canonical rendering ------------------------------------------------------------- */

typedef struct text {
    char *s;
    size_t len, cap;
} text;

static inline void text_put(text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        t->s = realloc(t->s, cap);
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

static inline void text_cstr(text *t, const char *s) { text_put(t, s, strlen(s)); }

static inline void text_int(text *t, char prefix, long long v)
{
    char b[32];
    int n = snprintf(b, sizeof b, "%c%lld", prefix, v);
    text_put(t, b, (size_t)n);
}

static inline void render_view(text *t, const gb_sbe_reply_view *v)
{
    char b[GB_SCORE_BUF];
    switch (v->kind) {
    case GB_SBE_KIND_STATUS:
        text_cstr(t, "+");
        text_put(t, v->ptr, v->len);
        break;
    case GB_SBE_KIND_ERROR:
        text_cstr(t, "-");
        text_put(t, v->ptr, v->len);
        break;
    case GB_SBE_KIND_INTEGER:
        text_int(t, ':', (long long)v->integer);
        break;
    case GB_SBE_KIND_DOUBLE:
        text_cstr(t, "$");
        text_put(t, b, gb_score_format(v->dbl, b));
        break;
    case GB_SBE_KIND_BULK:
        text_cstr(t, "$");
        text_put(t, v->ptr, v->len);
        break;
    case GB_SBE_KIND_NIL:
        text_cstr(t, "$nil");
        break;
    case GB_SBE_KIND_ARRAY:
        if (v->integer < 0) {
            text_cstr(t, "*nil");
            break;
        }
        text_int(t, '*', (long long)v->nelems);
        text_cstr(t, "[");
        for (size_t i = 0; i < v->nelems; i++) {
            if (i)
                text_cstr(t, " ");
            render_view(t, &v->elems[i]);
        }
        text_cstr(t, "]");
        break;
    default:
        text_cstr(t, "?");
    }
}

/* Renders one RESP2 reply from *p; returns false on malformed input. */
static inline bool render_resp(text *t, const char **p, const char *end)
{
    const char *s = *p;
    if (s >= end)
        return false;
    const char *nl = memchr(s, '\r', (size_t)(end - s));
    if (!nl || nl + 1 >= end || nl[1] != '\n')
        return false;
    char type = *s;
    const char *line = s + 1;
    size_t linelen = (size_t)(nl - line);
    *p = nl + 2;
    switch (type) {
    case '+':
    case '-':
        text_put(t, &type, 1);
        text_put(t, line, linelen);
        return true;
    case ':':
        text_cstr(t, ":");
        text_put(t, line, linelen);
        return true;
    case '$': {
        long long n = strtoll(line, NULL, 10);
        if (n < 0) {
            text_cstr(t, "$nil");
            return true;
        }
        if (end - *p < n + 2)
            return false;
        text_cstr(t, "$");
        text_put(t, *p, (size_t)n);
        *p += n + 2;
        return true;
    }
    case '*': {
        long long n = strtoll(line, NULL, 10);
        if (n < 0) {
            text_cstr(t, "*nil");
            return true;
        }
        text_int(t, '*', n);
        text_cstr(t, "[");
        for (long long i = 0; i < n; i++) {
            if (i)
                text_cstr(t, " ");
            if (!render_resp(t, p, end))
                return false;
        }
        text_cstr(t, "]");
        return true;
    }
    }
    return false;
}

/* A push (Message, Subscription) as the RESP2 array Redis sends for it. */
static inline bool render_sbe_push(text *t, const uint8_t *msg, size_t len)
{
    static const char *const mwords[] = {"", "message", "pmessage", "smessage"};
    static const char *const swords[] = {"", "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe",
                                         "sunsubscribe"};
    gb_sbe_push_view v;
    int rc = gb_sbe_decode_push(msg, len, &v);
    if (rc == GB_ENOENT)
        return false;
    if (rc != 0) {
        text_cstr(t, "<undecodable push>");
        return true;
    }
    if (v.template_id == GB_SBE_MESSAGE) {
        bool pat = v.kind == GB_SBE_MSG_PMESSAGE;
        text_cstr(t, pat ? "*4[$" : "*3[$");
        text_cstr(t, mwords[v.kind]);
        if (pat) {
            text_cstr(t, " $");
            text_put(t, v.pattern.ptr, v.pattern.len);
        }
        text_cstr(t, " $");
        text_put(t, v.channel.ptr, v.channel.len);
        text_cstr(t, " $");
        text_put(t, v.payload.ptr, v.payload.len);
        text_cstr(t, "]");
        return true;
    }
    text_cstr(t, "*3[$");
    text_cstr(t, swords[v.kind]);
    if (v.name_is_null) {
        text_cstr(t, " $nil");
    } else {
        text_cstr(t, " $");
        text_put(t, v.channel.ptr, v.channel.len);
    }
    text_cstr(t, " ");
    text_int(t, ':', v.count);
    text_cstr(t, "]");
    return true;
}

/* Decodes one SBE reply message into canonical text (malloc'd). */
static inline char *render_sbe_message(const uint8_t *msg, size_t len)
{
    text pt = {0};
    if (render_sbe_push(&pt, msg, len))
        return pt.s;
    gb_sbe_reply_view root;
    size_t nn = 0;
    gb_sbe_reply_view *nodes = NULL;
    int rc = gb_sbe_decode_reply(msg, len, &root, NULL, &nn);
    if (rc == GB_ERANGE) {
        nodes = calloc(nn ? nn : 1, sizeof *nodes);
        rc = gb_sbe_decode_reply(msg, len, &root, nodes, &nn);
    }
    text t = {0};
    if (rc)
        text_cstr(&t, "<undecodable>");
    else
        render_view(&t, &root);
    free(nodes);
    return t.s;
}

/* Runs one SBE request; returns the rc of gb_sbe_execute and, in *reply,
 * the canonical text of the one reply it produced ("" if none; the test
 * fails if there were two). */
static inline int sbe_run(sbe_conn *s, const uint8_t *msg, size_t len, char **reply)
{
    s->out.len = 0;
    int rc = gb_sbe_execute(s->c, msg, len);
    size_t n = gb_sbe_reply_finish(&s->r, &s->out);
    if (!n) {
        *reply = calloc(1, 1);
        return rc;
    }
    *reply = render_sbe_message((const uint8_t *)s->out.data, n);
    if (gb_sbe_reply_finish(&s->r, &s->out) != 0) {
        fprintf(stderr, "more than one reply message for one request\n");
        abort();
    }
    return rc;
}

/* Runs a RESP command (space-separated words; '' is an empty argument) and
 * renders its reply. */
static inline char *resp_run(resp_conn *r, const char *cmdline)
{
    char *copy = strdup(cmdline);
    gb_slice argv[64];
    int argc = 0;
    for (char *save = NULL, *w = strtok_r(copy, " ", &save); w && argc < 64; w = strtok_r(NULL, " ", &save))
        argv[argc++] = strcmp(w, "''") ? gb_slice_cstr(w) : gb_slice_make(w, 0);
    r->out.len = 0;
    gb_gate_execute(r->c, argc, argv);
    text t = {0};
    const char *p = r->out.data, *end = r->out.data + r->out.len;
    if (r->out.len == 0)
        text_cstr(&t, "");
    else if (!render_resp(&t, &p, end) || p != end)
        text_cstr(&t, "<bad resp>");
    free(copy);
    return t.s;
}

#endif
