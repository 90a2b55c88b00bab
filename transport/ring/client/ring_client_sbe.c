/*
 * The SBE paths of the client library's calls: each typed call encodes its
 * template straight into the request ring (no intermediate buffer), then
 * decodes the reply message in place (no allocation for scalar replies).
 */
#include <stdlib.h>
#include <string.h>

#include "transport/ring/client/ring_client_sbe.h"
#include "transport/sbe/sbe_client.h"

/* Encodes with `enc` (called twice: once for the length, once into the ring)
 * and publishes. The macro keeps each call site a one-liner. */
#define SEND(rc, enc_expr_len, enc_expr_into)                                            \
    do {                                                                                 \
        size_t _len = (enc_expr_len);                                                    \
        if (_len == 0) {                                                                 \
            gb_rc_fail((rc), "request does not fit an SBE message (too many elements?)"); \
            return GB_ERANGE;                                                            \
        }                                                                                \
        uint8_t *buf;                                                                    \
        int _r = gb_rc_send_begin((rc), _len, &buf);                                     \
        if (_r != 0)                                                                     \
            return _r;                                                                   \
        size_t _cap = _len;                                                              \
        (void)_cap;                                                                      \
        (enc_expr_into);                                                                 \
        gb_rc_send_commit((rc), _len);                                                   \
    } while (0)

/* Waits for the reply and decodes a scalar (arrays need nodes: see below). */
static int recv_scalar(gb_ring_client *rc, gb_sbe_reply_view *v)
{
    const void *msg;
    size_t len;
    int r = gb_ring_client_recv(rc, &msg, &len, UINT64_MAX);
    if (r != 0)
        return r;
    size_t nn = 0;
    r = gb_sbe_decode_reply(msg, len, v, NULL, &nn);
    if (r != 0) {
        gb_ring_client_recv_done(rc);
        gb_rc_fail(rc, r == GB_ERANGE ? "unexpected array reply" : "malformed SBE reply from the server");
        return GB_EPROTO;
    }
    return 0; /* the caller calls gb_ring_client_recv_done after using v */
}

/* An error reply becomes GB_EPROTO with the server's words. */
static int check(gb_ring_client *rc, const gb_sbe_reply_view *v, uint8_t want)
{
    if (v->kind == GB_SBE_KIND_ERROR) {
        gb_rc_fail(rc, "%.*s", (int)v->len, v->ptr);
        return GB_EPROTO;
    }
    if (v->kind != want) {
        gb_rc_fail(rc, "unexpected SBE reply kind %u (wanted %u)", v->kind, want);
        return GB_EPROTO;
    }
    return 0;
}

static int finish_status(gb_ring_client *rc)
{
    gb_sbe_reply_view v;
    int r = recv_scalar(rc, &v);
    if (r)
        return r;
    r = check(rc, &v, GB_SBE_KIND_STATUS);
    gb_ring_client_recv_done(rc);
    return r;
}

static int finish_int(gb_ring_client *rc, int64_t *out)
{
    gb_sbe_reply_view v;
    int r = recv_scalar(rc, &v);
    if (r)
        return r;
    r = check(rc, &v, GB_SBE_KIND_INTEGER);
    if (!r && out)
        *out = v.integer;
    gb_ring_client_recv_done(rc);
    return r;
}

/* Bulk or nil into a caller buffer; *len = -1 for nil. */
static int finish_bulk(gb_ring_client *rc, void *buf, size_t cap, int64_t *len)
{
    gb_sbe_reply_view v;
    int r = recv_scalar(rc, &v);
    if (r)
        return r;
    if (v.kind == GB_SBE_KIND_NIL) {
        *len = -1;
    } else if ((r = check(rc, &v, GB_SBE_KIND_BULK)) == 0) {
        *len = (int64_t)v.len;
        if (buf && cap)
            memcpy(buf, v.ptr, v.len < cap ? v.len : cap);
    }
    gb_ring_client_recv_done(rc);
    return r;
}

static gb_slice sl(const void *p, size_t n) { return gb_slice_make(p, n); }

int gb_rc_sbe_ping(gb_ring_client *rc)
{
    SEND(rc, gb_sbe_encode_ping(NULL, 0), gb_sbe_encode_ping(buf, _cap));
    return finish_status(rc);
}

int gb_rc_sbe_get(gb_ring_client *rc, const void *key, size_t klen, void *buf_out, size_t cap, int64_t *len)
{
    SEND(rc, gb_sbe_encode_get(NULL, 0, sl(key, klen)), gb_sbe_encode_get(buf, _cap, sl(key, klen)));
    return finish_bulk(rc, buf_out, cap, len);
}

int gb_rc_sbe_set(gb_ring_client *rc, const void *key, size_t klen, const void *val, size_t vlen, int64_t ttl_ms)
{
    unsigned flags = ttl_ms > 0 ? GB_SBE_SET_PX : 0;
    SEND(rc, gb_sbe_encode_set(NULL, 0, sl(key, klen), sl(val, vlen), flags, ttl_ms),
         gb_sbe_encode_set(buf, _cap, sl(key, klen), sl(val, vlen), flags, ttl_ms));
    return finish_status(rc);
}

int gb_rc_sbe_del(gb_ring_client *rc, const void *key, size_t klen, int64_t *deleted)
{
    gb_slice k = sl(key, klen);
    SEND(rc, gb_sbe_encode_del(NULL, 0, 1, &k), gb_sbe_encode_del(buf, _cap, 1, &k));
    return finish_int(rc, deleted);
}

int gb_rc_sbe_incrby(gb_ring_client *rc, const void *key, size_t klen, int64_t by, int64_t *value)
{
    SEND(rc, gb_sbe_encode_incr(NULL, 0, sl(key, klen), by), gb_sbe_encode_incr(buf, _cap, sl(key, klen), by));
    return finish_int(rc, value);
}

/* Builds slice arrays for group entries (small counts on the stack). */
typedef struct slices {
    gb_slice stack[16];
    gb_slice *v;
} slices;

static gb_slice *slices_of(slices *s, size_t n, const void *const *p, const size_t *lens)
{
    s->v = n <= 16 ? s->stack : malloc(n * sizeof *s->v);
    for (size_t i = 0; i < n; i++)
        s->v[i] = gb_slice_make(p[i], lens[i]);
    return s->v;
}

static void slices_free(slices *s)
{
    if (s->v != s->stack)
        free(s->v);
}

int gb_rc_sbe_hset(gb_ring_client *rc, const void *key, size_t klen, size_t n, const void *const *fields,
                   const size_t *flens, const void *const *values, const size_t *vlens, int64_t *added)
{
    slices fs, vs;
    gb_slice *f = slices_of(&fs, n, fields, flens), *v = slices_of(&vs, n, values, vlens);
    size_t len = gb_sbe_encode_hset(NULL, 0, sl(key, klen), n, f, v);
    int r = GB_ERANGE;
    uint8_t *buf;
    if (len == 0)
        gb_rc_fail(rc, "HSET does not fit an SBE message");
    else if ((r = gb_rc_send_begin(rc, len, &buf)) == 0) {
        gb_sbe_encode_hset(buf, len, sl(key, klen), n, f, v);
        gb_rc_send_commit(rc, len);
    }
    slices_free(&fs);
    slices_free(&vs);
    return r ? r : finish_int(rc, added);
}

int gb_rc_sbe_hget(gb_ring_client *rc, const void *key, size_t klen, const void *field, size_t flen, void *buf_out,
                   size_t cap, int64_t *len)
{
    SEND(rc, gb_sbe_encode_hget(NULL, 0, sl(key, klen), sl(field, flen)),
         gb_sbe_encode_hget(buf, _cap, sl(key, klen), sl(field, flen)));
    return finish_bulk(rc, buf_out, cap, len);
}

int gb_rc_sbe_zadd(gb_ring_client *rc, const void *key, size_t klen, int flags, size_t n, const double *scores,
                   const void *const *members, const size_t *mlens, int64_t *result, double *score)
{
    /* flags: GB_RING_ZADD_* are the schema's ZAddFlags bits (goblin/ring_client.h) */
    slices ms;
    gb_slice *m = slices_of(&ms, n, members, mlens);
    size_t len = gb_sbe_encode_zadd(NULL, 0, sl(key, klen), (unsigned)flags, n, scores, m);
    int r = GB_ERANGE;
    uint8_t *buf;
    if (len == 0)
        gb_rc_fail(rc, "ZADD does not fit an SBE message");
    else if ((r = gb_rc_send_begin(rc, len, &buf)) == 0) {
        gb_sbe_encode_zadd(buf, len, sl(key, klen), (unsigned)flags, n, scores, m);
        gb_rc_send_commit(rc, len);
    }
    slices_free(&ms);
    if (r)
        return r;
    if (!(flags & GB_RING_ZADD_INCR))
        return finish_int(rc, result);
    gb_sbe_reply_view v;
    r = recv_scalar(rc, &v);
    if (r)
        return r;
    if (v.kind == GB_SBE_KIND_NIL) {
        *result = 0;
    } else if ((r = check(rc, &v, GB_SBE_KIND_DOUBLE)) == 0) {
        *result = 1;
        if (score)
            *score = v.dbl;
    }
    gb_ring_client_recv_done(rc);
    return r;
}

int gb_rc_sbe_zscore(gb_ring_client *rc, const void *key, size_t klen, const void *member, size_t mlen, double *score,
                     int *found)
{
    SEND(rc, gb_sbe_encode_zscore(NULL, 0, sl(key, klen), sl(member, mlen)),
         gb_sbe_encode_zscore(buf, _cap, sl(key, klen), sl(member, mlen)));
    gb_sbe_reply_view v;
    int r = recv_scalar(rc, &v);
    if (r)
        return r;
    *found = 0;
    if (v.kind != GB_SBE_KIND_NIL && (r = check(rc, &v, GB_SBE_KIND_DOUBLE)) == 0) {
        *found = 1;
        *score = v.dbl;
    }
    gb_ring_client_recv_done(rc);
    return r;
}

int gb_rc_sbe_lpush(gb_ring_client *rc, const void *key, size_t klen, size_t n, const void *const *vals,
                    const size_t *vlens, int64_t *len_out)
{
    slices vs;
    gb_slice *v = slices_of(&vs, n, vals, vlens);
    size_t len = gb_sbe_encode_lpush(NULL, 0, sl(key, klen), n, v);
    int r = GB_ERANGE;
    uint8_t *buf;
    if (len == 0)
        gb_rc_fail(rc, "LPUSH does not fit an SBE message");
    else if ((r = gb_rc_send_begin(rc, len, &buf)) == 0) {
        gb_sbe_encode_lpush(buf, len, sl(key, klen), n, v);
        gb_rc_send_commit(rc, len);
    }
    slices_free(&vs);
    return r ? r : finish_int(rc, len_out);
}

int gb_rc_sbe_rpop(gb_ring_client *rc, const void *key, size_t klen, void *buf_out, size_t cap, int64_t *len)
{
    SEND(rc, gb_sbe_encode_rpop(NULL, 0, sl(key, klen)), gb_sbe_encode_rpop(buf, _cap, sl(key, klen)));
    return finish_bulk(rc, buf_out, cap, len);
}

int gb_rc_sbe_publish(gb_ring_client *rc, const void *channel, size_t clen, const void *msg, size_t mlen,
                      int64_t *receivers)
{
    SEND(rc, gb_sbe_encode_publish(NULL, 0, sl(channel, clen), sl(msg, mlen)),
         gb_sbe_encode_publish(buf, _cap, sl(channel, clen), sl(msg, mlen)));
    return finish_int(rc, receivers);
}

int gb_rc_sbe_xadd(gb_ring_client *rc, const void *key, size_t klen, const gb_ring_xadd_opts *opt, size_t n,
                   const void *const *fields, const size_t *flens, const void *const *values, const size_t *vlens,
                   char *id, size_t cap, int64_t *idlen)
{
    /* GB_RING_XADD_* are the schema's XAddFlags bits (goblin/ring_client.h) */
    gb_sbe_xadd_opts o = {.flags = (unsigned)opt->flags, .id_ms = opt->id_ms, .id_seq = opt->id_seq,
                          .maxlen = opt->maxlen, .minid_ms = opt->minid_ms, .minid_seq = opt->minid_seq,
                          .limit = opt->limit};
    slices fs, vs;
    gb_slice *f = slices_of(&fs, n, fields, flens), *v = slices_of(&vs, n, values, vlens);
    size_t len = gb_sbe_encode_xadd(NULL, 0, sl(key, klen), &o, n, f, v);
    int r = GB_ERANGE;
    uint8_t *buf;
    if (len == 0)
        gb_rc_fail(rc, "XADD does not fit an SBE message");
    else if ((r = gb_rc_send_begin(rc, len, &buf)) == 0) {
        gb_sbe_encode_xadd(buf, len, sl(key, klen), &o, n, f, v);
        gb_rc_send_commit(rc, len);
    }
    slices_free(&fs);
    slices_free(&vs);
    return r ? r : finish_bulk(rc, id, cap, idlen);
}

int gb_rc_sbe_next_message(gb_ring_client *rc, gb_ring_message *m, uint64_t timeout_ns)
{
    const void *msg;
    size_t len;
    int r = gb_ring_client_recv(rc, &msg, &len, timeout_ns);
    if (r != 0)
        return r;
    gb_sbe_push_view v;
    r = gb_sbe_decode_push(msg, len, &v);
    if (r != 0) {
        gb_ring_client_recv_done(rc);
        gb_rc_fail(rc, r == GB_ENOENT ? "the next record is a reply, not a push (a request is still outstanding?)"
                                      : "malformed SBE push from the server");
        return GB_EPROTO;
    }
    memset(m, 0, sizeof *m);
    if (v.template_id == GB_SBE_MESSAGE) {
        m->kind = (gb_ring_message_kind)v.kind;
        if (v.kind == GB_SBE_MSG_PMESSAGE) {
            m->pattern = v.pattern.ptr;
            m->pattern_len = v.pattern.len;
        }
        m->payload = v.payload.ptr;
        m->payload_len = v.payload.len;
    } else {
        m->kind = (gb_ring_message_kind)(GB_RING_MSG_SUBSCRIBE - GB_SBE_SUB_SUBSCRIBE + v.kind);
        m->count = v.count;
    }
    if (!(v.template_id == GB_SBE_SUBSCRIPTION && v.name_is_null)) {
        m->channel = v.channel.ptr;
        m->channel_len = v.channel.len;
    }
    return 0; /* the record stays until gb_ring_message_done */
}

/* ---- replies as trees (generic command, BLPOP) ---------------------------------------- */

static void view_to_reply(const gb_sbe_reply_view *v, gb_reply *out)
{
    memset(out, 0, sizeof *out);
    switch (v->kind) {
    case GB_SBE_KIND_STATUS:
    case GB_SBE_KIND_ERROR:
    case GB_SBE_KIND_BULK:
        out->kind = v->kind == GB_SBE_KIND_STATUS ? GB_REPLY_STATUS
                    : v->kind == GB_SBE_KIND_ERROR ? GB_REPLY_ERROR
                                                   : GB_REPLY_BULK;
        out->len = v->len;
        out->str = malloc(v->len + 1);
        if (v->len)
            memcpy(out->str, v->ptr, v->len);
        out->str[v->len] = '\0';
        break;
    case GB_SBE_KIND_INTEGER:
        out->kind = GB_REPLY_INTEGER;
        out->integer = v->integer;
        break;
    case GB_SBE_KIND_DOUBLE:
        out->kind = GB_REPLY_DOUBLE;
        out->dbl = v->dbl;
        break;
    case GB_SBE_KIND_NIL:
        out->kind = GB_REPLY_NIL;
        break;
    case GB_SBE_KIND_ARRAY:
        if (v->integer < 0) {
            out->kind = GB_REPLY_NIL_ARRAY;
            break;
        }
        out->kind = GB_REPLY_ARRAY;
        out->nelem = v->nelems;
        out->elem = calloc(v->nelems ? v->nelems : 1, sizeof *out->elem);
        for (size_t i = 0; i < v->nelems; i++)
            view_to_reply(&v->elems[i], &out->elem[i]);
        break;
    }
}

static void bulk_reply(gb_reply *out, const char *s, size_t len)
{
    out->kind = GB_REPLY_BULK;
    out->len = len;
    out->str = malloc(len + 1);
    if (len)
        memcpy(out->str, s, len);
    out->str[len] = '\0';
}

static const char *const message_words[] = {"", "message", "pmessage", "smessage"};
static const char *const subscription_words[] = {"",           "subscribe",  "unsubscribe", "psubscribe",
                                                 "punsubscribe", "ssubscribe", "sunsubscribe"};

/* A push as the array Redis sends for it, so that gb_ring_command and
 * gb_ring_collect give SUBSCRIBE's confirmations (and messages) in the
 * same shape over both protocols. */
static void push_to_reply(const gb_sbe_push_view *v, gb_reply *out)
{
    memset(out, 0, sizeof *out);
    out->kind = GB_REPLY_ARRAY;
    bool pat = v->template_id == GB_SBE_MESSAGE && v->kind == GB_SBE_MSG_PMESSAGE;
    out->nelem = pat ? 4 : 3;
    out->elem = calloc(out->nelem, sizeof *out->elem);
    gb_reply *e = out->elem;
    if (v->template_id == GB_SBE_MESSAGE) {
        bulk_reply(e++, message_words[v->kind], strlen(message_words[v->kind]));
        if (pat)
            bulk_reply(e++, v->pattern.ptr, v->pattern.len);
        bulk_reply(e++, v->channel.ptr, v->channel.len);
        bulk_reply(e, v->payload.ptr, v->payload.len);
        return;
    }
    bulk_reply(e++, subscription_words[v->kind], strlen(subscription_words[v->kind]));
    if (v->name_is_null)
        e->kind = GB_REPLY_NIL;
    else
        bulk_reply(e, v->channel.ptr, v->channel.len);
    e++;
    e->kind = GB_REPLY_INTEGER;
    e->integer = v->count;
}

int gb_rc_sbe_collect(gb_ring_client *rc, gb_reply **reply)
{
    const void *msg;
    size_t len;
    int r = gb_ring_client_recv(rc, &msg, &len, UINT64_MAX);
    if (r != 0)
        return r;
    gb_sbe_push_view pv;
    int pr = gb_sbe_decode_push(msg, len, &pv);
    if (pr != GB_ENOENT) {
        if (pr == 0) {
            *reply = calloc(1, sizeof **reply);
            push_to_reply(&pv, *reply);
        } else {
            gb_rc_fail(rc, "malformed SBE push from the server");
        }
        gb_ring_client_recv_done(rc);
        return pr == 0 ? 0 : GB_EPROTO;
    }
    gb_sbe_reply_view root, stack_nodes[32], *nodes = stack_nodes;
    size_t nn = 32;
    r = gb_sbe_decode_reply(msg, len, &root, nodes, &nn);
    if (r == GB_ERANGE) {
        nodes = malloc(nn * sizeof *nodes);
        r = gb_sbe_decode_reply(msg, len, &root, nodes, &nn);
    }
    if (r == 0) {
        *reply = calloc(1, sizeof **reply);
        view_to_reply(&root, *reply);
    } else {
        gb_rc_fail(rc, "malformed SBE reply from the server");
        r = GB_EPROTO;
    }
    if (nodes != stack_nodes)
        free(nodes);
    gb_ring_client_recv_done(rc);
    return r;
}

int gb_rc_sbe_submit(gb_ring_client *rc, int argc, const char *const *argv, const size_t *lens)
{
    gb_slice stack[16], *a = argc <= 16 ? stack : malloc((size_t)argc * sizeof *a);
    for (int i = 0; i < argc; i++)
        a[i] = gb_slice_make(argv[i], lens ? lens[i] : strlen(argv[i]));
    size_t len = gb_sbe_encode_generic(NULL, 0, (size_t)argc, a);
    int r = GB_ERANGE;
    uint8_t *buf;
    if (len == 0)
        gb_rc_fail(rc, "command does not fit an SBE message");
    else if ((r = gb_rc_send_begin(rc, len, &buf)) == 0) {
        gb_sbe_encode_generic(buf, len, (size_t)argc, a);
        gb_rc_send_commit(rc, len);
    }
    if (a != stack)
        free(a);
    return r;
}

int gb_rc_sbe_blpop(gb_ring_client *rc, size_t nkeys, const void *const *keys, const size_t *klens, double timeout_s,
                    gb_reply **reply)
{
    slices ks;
    gb_slice *k = slices_of(&ks, nkeys, keys, klens);
    size_t len = gb_sbe_encode_blpop(NULL, 0, nkeys, k, timeout_s);
    int r = GB_ERANGE;
    uint8_t *buf;
    if (len == 0)
        gb_rc_fail(rc, "BLPOP does not fit an SBE message");
    else if ((r = gb_rc_send_begin(rc, len, &buf)) == 0) {
        gb_sbe_encode_blpop(buf, len, nkeys, k, timeout_s);
        gb_rc_send_commit(rc, len);
    }
    slices_free(&ks);
    if (r)
        return r;
    r = gb_rc_sbe_collect(rc, reply);
    if (r == 0 && (*reply)->kind == GB_REPLY_ERROR) {
        gb_rc_fail(rc, "%s", (*reply)->str);
        gb_reply_free(*reply);
        *reply = NULL;
        return GB_EPROTO;
    }
    return r;
}
