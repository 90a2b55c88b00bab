/*
 * SBE on the server: request messages into typed engine calls, engine
 * replies into SBE reply messages (sbe_server.h).
 *
 * Why the typed path is fast: the template id indexes a table (no command
 * name to hash or compare), numbers arrive as native int64/double (no
 * parsing), and group entries are decoded into per-client scratch arrays
 * that stop growing after the first few requests (no allocation).
 *
 * Why it is still exactly Redis: each template is a typed call through the
 * command gate (engine/core/request/gate.h) into the same engine function its RESP
 * handler calls after parsing (engine/commands/typed.h): one set of rules,
 * replies and effects. The gate admits it as it admits any command, and
 * runs its RESP form where only that can answer (MULTI, NOAUTH, memory,
 * empty groups).
 */
#include "transport/sbe/sbe_server.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/commands/typed.h"
#include "engine/core/request/command.h"
#include "engine/core/engine.h"
#include "engine/core/request/gate.h"

_Static_assert((int)GB_SBE_ZADD_NX == (int)GB_ZADD_NX && (int)GB_SBE_ZADD_XX == (int)GB_ZADD_XX &&
                   (int)GB_SBE_ZADD_GT == (int)GB_ZADD_GT && (int)GB_SBE_ZADD_LT == (int)GB_ZADD_LT &&
                   (int)GB_SBE_ZADD_CH == (int)GB_ZADD_CH && (int)GB_SBE_ZADD_INCR == (int)GB_ZADD_INCR,
               "ZAddFlags bits are engine/ds/zset.h's GB_ZADD_* bits");

/* ---- the reply sink ---------------------------------------------------------------- */

/* Buffers kept between requests; larger ones are released once used. */
#define KEEP_ITEMS 4096u
#define KEEP_BYTES (1u << 20)
#define KEEP_SCRATCH 4096u

/* An array_deferred whose length has not been set yet. */
#define UNSET_LENGTH INT64_MIN

/* An item that is a whole message already encoded (a push: Message or
 * Subscription), its bytes in the arena; never a ReplyKind on the wire. */
#define ITEM_RAW 0xffu

_Static_assert((int)GB_REPLY_MSG_MESSAGE == (int)GB_SBE_MSG_MESSAGE && (int)GB_REPLY_MSG_PMESSAGE == (int)GB_SBE_MSG_PMESSAGE &&
                   (int)GB_REPLY_MSG_SMESSAGE == (int)GB_SBE_MSG_SMESSAGE,
               "the engine's message kinds are the schema's MessageKind");
_Static_assert((int)GB_REPLY_SUB_SUBSCRIBE == (int)GB_SBE_SUB_SUBSCRIBE && (int)GB_REPLY_SUB_UNSUBSCRIBE == (int)GB_SBE_SUB_UNSUBSCRIBE &&
                   (int)GB_REPLY_SUB_PSUBSCRIBE == (int)GB_SBE_SUB_PSUBSCRIBE &&
                   (int)GB_REPLY_SUB_PUNSUBSCRIBE == (int)GB_SBE_SUB_PUNSUBSCRIBE &&
                   (int)GB_REPLY_SUB_SSUBSCRIBE == (int)GB_SBE_SUB_SSUBSCRIBE &&
                   (int)GB_REPLY_SUB_SUNSUBSCRIBE == (int)GB_SBE_SUB_SUNSUBSCRIBE,
               "the engine's confirmation kinds are the schema's SubscriptionKind");

/* Out of memory: the reply buffers grow through the fallible allocator
 * (as the RESP output buffer does, resp_writer.h). A failure marks the
 * replier oom; from then on every reply op writes nothing, and the
 * transport, seeing gb_sbe_replier_oom(), drops the client. */

/* A new item, or NULL (r marked oom) when the array cannot grow. */
static gb_sbe_reply_item *push_item(gb_sbe_replier *r, uint8_t kind)
{
    if (GB_UNLIKELY(r->nitems == r->capitems)) {
        size_t cap = r->capitems ? r->capitems * 2 : 16;
        gb_sbe_reply_item *it = cap <= SIZE_MAX / sizeof *it ? gb_try_realloc(r->items, cap * sizeof *it) : NULL;
        if (!it) {
            r->oom = true;
            return NULL;
        }
        r->items = it;
        r->capitems = cap;
    }
    gb_sbe_reply_item *it = &r->items[r->nitems++];
    it->integer = 0;
    it->dbl = 0;
    it->off = 0;
    it->len = 0;
    it->kind = kind;
    return it;
}

static void push_bytes(gb_sbe_replier *r, gb_sbe_reply_item *it, const char *s, size_t len)
{
    if (!it)
        return;
    if (GB_UNLIKELY(len > r->capbytes - r->nbytes)) {
        size_t cap = r->capbytes ? r->capbytes : 256;
        while (cap - r->nbytes < len) {
            if (cap > SIZE_MAX / 2) {
                r->oom = true;
                return;
            }
            cap *= 2;
        }
        char *b = gb_try_realloc(r->bytes, cap);
        if (!b) {
            r->oom = true;
            return;
        }
        r->bytes = b;
        r->capbytes = cap;
    }
    if (len && s) /* s NULL: room only, the caller writes it */
        memcpy(r->bytes + r->nbytes, s, len);
    it->off = r->nbytes;
    it->len = len;
    r->nbytes += len;
}

/* Room enough for any scalar reply with len bytes of text: a header and
 * either an 8-byte value or the text with its length (never both). */
#define SCALAR_BOUND(len) (GB_SBE_HEADER_SIZE + 8 + GB_SBE_VAR_LEN_SIZE + (size_t)(len))

static size_t append_scalar(const gb_sbe_reply_item *it, const char *bytes, gb_outbuf *out);
static size_t encode_scalar(const gb_sbe_reply_item *it, const char *bytes, uint8_t *p, size_t cap);

/* A frame is [u32 length][message]: open leaves room for the length and
 * says where it goes (NO_FRAME: out of memory); close writes it once the
 * message is appended. */
#define NO_FRAME SIZE_MAX

static size_t frame_open(gb_outbuf *out)
{
    size_t at = out->len;
    if (!gb_outbuf_reserve(out, 4))
        return NO_FRAME;
    out->len += 4;
    return at;
}

static void frame_close(gb_outbuf *out, size_t at, size_t n)
{
    if (at == NO_FRAME || gb_outbuf_oom(out))
        return; /* the buffer is incomplete: never sent */
    uint32_t n32 = (uint32_t)n;
    memcpy(out->data + at, &n32, 4);
}

/* Appends one scalar message to a frame buffer. */
static void append_frame(const gb_sbe_reply_item *it, const char *bytes, gb_outbuf *out)
{
    size_t at = frame_open(out);
    if (at != NO_FRAME)
        frame_close(out, at, append_scalar(it, bytes, out));
}

/* A scalar reply with nothing pending is a whole message by itself: with
 * a frame buffer set, encode it now instead of listing it as an item for
 * gb_sbe_reply_finish (the ring's hot path: PING, GET, SET, INCR ...):
 * straight into the transport's sink when it takes it and no frame waits
 * before it, else into the frame buffer. */
static bool direct(gb_sbe_replier *r, uint8_t kind, const char *s, size_t len, int64_t integer, double dbl)
{
    if (!r->frames || r->head != r->nitems)
        return false;
    gb_sbe_reply_item it = {.integer = integer, .dbl = dbl, .len = len, .kind = kind};
    if (r->sink.begin && r->frames->len == 0 && len <= GB_SBE_VAR_MAX) {
        uint8_t *p = r->sink.begin(r->sink.ctx, SCALAR_BOUND(len));
        if (p) {
            r->sink.commit(r->sink.ctx, encode_scalar(&it, s, p, SCALAR_BOUND(len)));
            return true;
        }
    }
    append_frame(&it, s, r->frames);
    return true;
}

static void s_status(void *ctx, const char *s, size_t len)
{
    gb_sbe_replier *r = ctx;
    if (GB_UNLIKELY(r->oom))
        return;
    if (!direct(r, GB_SBE_KIND_STATUS, s, len, 0, 0))
        push_bytes(r, push_item(r, GB_SBE_KIND_STATUS), s, len);
}

static void s_error(void *ctx, const char *s, size_t len)
{
    gb_sbe_replier *r = ctx;
    if (GB_UNLIKELY(r->oom))
        return;
    if (!direct(r, GB_SBE_KIND_ERROR, s, len, 0, 0))
        push_bytes(r, push_item(r, GB_SBE_KIND_ERROR), s, len);
}

static void s_integer(void *ctx, int64_t v)
{
    gb_sbe_replier *r = ctx;
    if (GB_UNLIKELY(r->oom) || direct(r, GB_SBE_KIND_INTEGER, NULL, 0, v, 0))
        return;
    gb_sbe_reply_item *it = push_item(r, GB_SBE_KIND_INTEGER);
    if (it)
        it->integer = v;
}

static void s_dbl(void *ctx, double v)
{
    gb_sbe_replier *r = ctx;
    if (GB_UNLIKELY(r->oom) || direct(r, GB_SBE_KIND_DOUBLE, NULL, 0, 0, v))
        return;
    gb_sbe_reply_item *it = push_item(r, GB_SBE_KIND_DOUBLE);
    if (it)
        it->dbl = v;
}

static void s_bulk(void *ctx, const char *s, size_t len)
{
    gb_sbe_replier *r = ctx;
    if (GB_UNLIKELY(r->oom))
        return;
    if (!direct(r, GB_SBE_KIND_BULK, s, len, 0, 0))
        push_bytes(r, push_item(r, GB_SBE_KIND_BULK), s, len);
}

static void s_nil(void *ctx)
{
    gb_sbe_replier *r = ctx;
    if (GB_UNLIKELY(r->oom) || direct(r, GB_SBE_KIND_NIL, NULL, 0, 0, 0))
        return;
    push_item(r, GB_SBE_KIND_NIL);
}

static void s_array(void *ctx, int64_t n)
{
    gb_sbe_replier *r = ctx;
    gb_sbe_reply_item *it = GB_UNLIKELY(r->oom) ? NULL : push_item(r, GB_SBE_KIND_ARRAY);
    if (it)
        it->integer = n < 0 ? -1 : n;
}

static size_t s_array_deferred(void *ctx)
{
    gb_sbe_replier *r = ctx;
    gb_sbe_reply_item *it = GB_UNLIKELY(r->oom) ? NULL : push_item(r, GB_SBE_KIND_ARRAY);
    if (!it)
        return SIZE_MAX; /* s_set_deferred ignores it */
    it->integer = UNSET_LENGTH;
    return r->nitems - 1;
}

static void s_set_deferred(void *ctx, size_t handle, int64_t n)
{
    gb_sbe_replier *r = ctx;
    /* Handles are item indexes; the items stay put until the reply holding
     * them is finished, which cannot happen while this length is unset. */
    if (handle < r->nitems && r->items[handle].kind == GB_SBE_KIND_ARRAY &&
        r->items[handle].integer == UNSET_LENGTH)
        r->items[handle].integer = n < 0 ? -1 : n;
}

/* ---- pushes: Message and Subscription, encoded once ---------------------------------
 * With a frame buffer and nothing pending (a subscriber's usual state) the
 * template is encoded straight into the frame: the payload is copied once
 * here and once more onto the ring. Otherwise it waits, already encoded,
 * as one ITEM_RAW item so replies stay in order. */

typedef size_t push_encoder(uint8_t *buf, size_t cap, const void *args);

static void emit_push(gb_sbe_replier *r, push_encoder *enc, const void *args)
{
    size_t need = enc(NULL, 0, args);
    if (GB_LIKELY(r->frames && r->head == r->nitems && need)) {
        gb_outbuf *out = r->frames;
        size_t at = frame_open(out);
        uint8_t *p = (uint8_t *)gb_outbuf_reserve(out, need);
        out->len += enc(p, need, args);
        frame_close(out, at, need);
        return;
    }
    gb_sbe_reply_item *it = push_item(r, need ? ITEM_RAW : GB_SBE_KIND_ERROR);
    if (!need) {
        static const char too_large[] = "ERR SBE: reply too large to encode";
        push_bytes(r, it, too_large, sizeof too_large - 1);
        return;
    }
    push_bytes(r, it, NULL, need);
    enc((uint8_t *)r->bytes + it->off, need, args);
}

typedef struct message_args {
    unsigned kind;
    gb_slice channel, pattern, payload;
} message_args;

static size_t enc_message(uint8_t *buf, size_t cap, const void *a)
{
    const message_args *m = a;
    return gb_sbe_encode_message(buf, cap, m->kind, m->channel, m->pattern, m->payload);
}

static void s_message(void *ctx, unsigned kind, const gb_slice *pattern, gb_slice channel, gb_slice payload)
{
    message_args m = {kind, channel, pattern ? *pattern : gb_slice_make(NULL, 0), payload};
    emit_push(ctx, enc_message, &m);
}

typedef struct subscription_args {
    unsigned kind;
    const gb_slice *name;
    int64_t count;
} subscription_args;

static size_t enc_subscription(uint8_t *buf, size_t cap, const void *a)
{
    const subscription_args *s = a;
    return gb_sbe_encode_subscription(buf, cap, s->kind, s->name, s->count);
}

static void s_subscription(void *ctx, unsigned kind, const gb_slice *name, int64_t count)
{
    subscription_args s = {kind, name, count};
    emit_push(ctx, enc_subscription, &s);
}

const gb_reply_ops gb_sbe_reply_ops = {
    .message = s_message,
    .subscription = s_subscription,
    .status = s_status,
    .error = s_error,
    .integer = s_integer,
    .dbl = s_dbl,
    .bulk = s_bulk,
    .nil = s_nil,
    .array = s_array,
    .array_deferred = s_array_deferred,
    .set_deferred = s_set_deferred,
};

/* ---- finish ------------------------------------------------------------------------ */

static size_t append_error(gb_outbuf *out, const char *text)
{
    size_t len = strlen(text);
    size_t need = gb_sbe_encode_error_reply(NULL, 0, text, len);
    uint8_t *p = (uint8_t *)gb_outbuf_reserve(out, need);
    if (!p)
        return 0;
    size_t n = gb_sbe_encode_error_reply(p, need, text, len);
    out->len += n;
    return n;
}

#define TOO_LARGE "ERR SBE: reply too large to encode"

/* Encodes one scalar reply at p (cap bytes: SCALAR_BOUND of its text's
 * length is always enough); returns its size. bytes: the item's text (status, error,
 * bulk), if any; at most GB_SBE_VAR_MAX bytes (the callers check). */
static size_t encode_scalar(const gb_sbe_reply_item *it, const char *bytes, uint8_t *p, size_t cap)
{
    if (!it->len)
        bytes = "";
    switch (it->kind) {
    case GB_SBE_KIND_STATUS:
        return gb_sbe_encode_status_reply(p, cap, bytes, it->len);
    case GB_SBE_KIND_ERROR:
        return gb_sbe_encode_error_reply(p, cap, bytes, it->len);
    case GB_SBE_KIND_INTEGER:
        return gb_sbe_encode_integer_reply(p, cap, it->integer);
    case GB_SBE_KIND_DOUBLE:
        return gb_sbe_encode_double_reply(p, cap, it->dbl);
    case GB_SBE_KIND_BULK:
        return gb_sbe_encode_bulk_reply(p, cap, bytes, it->len);
    default:
        return gb_sbe_encode_nil_reply(p, cap);
    }
}

/* bytes: the item's text (status, error, bulk), if any. */
static size_t append_scalar(const gb_sbe_reply_item *it, const char *bytes, gb_outbuf *out)
{
    if (it->len > GB_SBE_VAR_MAX)
        return append_error(out, TOO_LARGE);
    uint8_t *p = (uint8_t *)gb_outbuf_reserve(out, SCALAR_BOUND(it->len));
    if (!p)
        return 0;
    size_t n = encode_scalar(it, bytes, p, SCALAR_BOUND(it->len));
    out->len += n;
    return n;
}

size_t gb_sbe_reply_finish(gb_sbe_replier *r, gb_outbuf *out)
{
    if (r->head >= r->nitems)
        return 0;
    const gb_sbe_reply_item *first = &r->items[r->head];
    size_t n, end;
    if (GB_UNLIKELY(first->kind == ITEM_RAW)) {
        /* a push, encoded when it was given */
        gb_outbuf_append(out, r->bytes + first->off, first->len);
        n = first->len;
        end = r->head + 1;
    } else if (GB_LIKELY(first->kind != GB_SBE_KIND_ARRAY)) {
        /* No text, no arena yet (an integer reply first): r->bytes may be
         * NULL, and NULL + 0 is undefined behaviour. */
        n = append_scalar(first, first->len ? r->bytes + first->off : NULL, out);
        end = r->head + 1;
    } else {
        /* The extent of this array: its elements follow it in pre-order, so
         * count down the elements still owed. It is complete when nothing is
         * owed, incomplete (wait for more replies) when the items run out
         * first or a deferred length is still unset. */
        size_t i = r->head, owed = 1, bytes = 0;
        while (owed) {
            if (i == r->nitems)
                return 0;
            const gb_sbe_reply_item *it = &r->items[i++];
            owed--;
            bytes += it->len;
            if (it->kind == GB_SBE_KIND_ARRAY) {
                if (it->integer == UNSET_LENGTH)
                    return 0;
                if (it->integer > 0) {
                    if ((uint64_t)it->integer > r->nitems - i)
                        return 0; /* cannot be complete yet; keeps owed bounded */
                    owed += (size_t)it->integer;
                }
            }
        }
        end = i;
        size_t nitems = end - r->head - 1;
        size_t size = gb_sbe_array_reply_size(nitems, bytes);
        n = 0;
        if (size != SIZE_MAX) {
            uint8_t *p = (uint8_t *)gb_outbuf_reserve(out, size);
            if (p) {
                n = gb_sbe_encode_array_reply(p, size, first->integer, nitems, first + 1, r->bytes);
                out->len += n;
            }
        }
        if (!n)
            n = append_error(out, TOO_LARGE);
    }
    r->head = end;
    if (r->head == r->nitems) {
        r->head = r->nitems = r->nbytes = 0;
        /* One huge reply (KEYS *) must not pin its buffers for the life of
         * the client; ordinary ones keep theirs (no allocation per reply). */
        if (GB_UNLIKELY(r->capitems > KEEP_ITEMS || r->capbytes > KEEP_BYTES)) {
            gb_free(r->items);
            gb_free(r->bytes);
            r->items = NULL;
            r->bytes = NULL;
            r->capitems = r->capbytes = 0;
        }
    }
    return n;
}

void gb_sbe_reply_finish_frames(gb_sbe_replier *r)
{
    gb_outbuf *out = r->frames;
    if (r->head == r->nitems)
        return; /* the usual case: scalar replies went out directly */
    for (;;) {
        size_t at = frame_open(out);
        if (at == NO_FRAME)
            return; /* out of memory: the transport drops the client */
        size_t n = gb_sbe_reply_finish(r, out);
        if (n == 0) {
            out->len = at; /* nothing complete: drop the opened frame */
            return;
        }
        frame_close(out, at, n);
    }
}

/* ---- init -------------------------------------------------------------------------- */

static const char *const typed_command[GB_SBE_REQUEST_MAX + 1] = {
    [GB_SBE_PING] = "ping",   [GB_SBE_GET] = "get",     [GB_SBE_SET] = "set",       [GB_SBE_DEL] = "del",
    [GB_SBE_INCR] = "incr",   [GB_SBE_HSET] = "hset",   [GB_SBE_HGET] = "hget",     [GB_SBE_ZADD] = "zadd",
    [GB_SBE_ZSCORE] = "zscore", [GB_SBE_LPUSH] = "lpush", [GB_SBE_RPOP] = "rpop", [GB_SBE_PUBLISH] = "publish",
    [GB_SBE_XADD] = "xadd",
};

/* The scratch grows through the server's allocator: accounted, fallible. */
static void *scratch_realloc(void *p, size_t n) { return gb_try_realloc(p, n); }

void gb_sbe_replier_init(gb_sbe_replier *r, gb_engine *eng)
{
    memset(r, 0, sizeof *r);
    r->scratch.realloc_fn = scratch_realloc;
    r->scratch.free_fn = gb_free;
    for (unsigned t = 0; t <= GB_SBE_REQUEST_MAX; t++)
        if (typed_command[t])
            r->cmds[t] = gb_command_lookup(eng, gb_slice_cstr(typed_command[t]));
    r->incrby = gb_command_lookup(eng, gb_slice_cstr("incrby"));
}

void gb_sbe_replier_free(gb_sbe_replier *r)
{
    gb_free(r->items);
    gb_free(r->bytes);
    gb_sbe_scratch_free(&r->scratch);
    memset(r, 0, sizeof *r);
}

/* ---- typed calls ------------------------------------------------------------------ */
/* Each template is a typed call through the command gate: `run` decodes
 * nothing further and calls the engine's command with native values
 * (engine/commands/typed.h); `to_argv` gives the same call's RESP form,
 * which the gate uses for MULTI's queue, for replies only the text path can
 * give exactly (empty groups: the RESP form's arity error), and for
 * propagation. Neither checks authentication, memory or MULTI state: the
 * gate does, for every transport alike. */

typedef gb_sbe_request req;

static bool run_ping(gb_client *c, void *a)
{
    (void)a;
    gb_cmd_ping(c);
    return true;
}

static void argv_ping(void *a, gb_argv_builder *b)
{
    (void)a;
    gb_argv_init(b, 1, 0);
    gb_argv_lit(b, "PING");
}

static bool run_get(gb_client *c, void *a)
{
    gb_cmd_get(c, ((req *)a)->key);
    return true;
}

static void argv_key(gb_argv_builder *b, const char *name, req *q, size_t extra)
{
    gb_argv_init(b, 2 + extra, 0);
    gb_argv_lit(b, name);
    gb_argv_add(b, q->key);
}

static void argv_get(void *a, gb_argv_builder *b) { argv_key(b, "GET", a, 0); }

/* The SetFlags bits of the schema, as the engine's SET options. */
static const struct {
    unsigned sbe, opt;
    const char *word;
    bool takes_value;
} set_flags[] = {
    {GB_SBE_SET_NX, GB_SETOPT_NX, "NX", false},       {GB_SBE_SET_XX, GB_SETOPT_XX, "XX", false},
    {GB_SBE_SET_GET, GB_SETOPT_GET, "GET", false},    {GB_SBE_SET_KEEPTTL, GB_SETOPT_KEEPTTL, "KEEPTTL", false},
    {GB_SBE_SET_EX, GB_SETOPT_EX, "EX", true},        {GB_SBE_SET_PX, GB_SETOPT_PX, "PX", true},
    {GB_SBE_SET_EXAT, GB_SETOPT_EXAT, "EXAT", true},  {GB_SBE_SET_PXAT, GB_SETOPT_PXAT, "PXAT", true},
};

static bool run_set(gb_client *c, void *a)
{
    req *q = a;
    unsigned opts = 0;
    for (size_t i = 0; i < GB_ARRAY_LEN(set_flags); i++)
        if (q->flags & set_flags[i].sbe)
            opts |= set_flags[i].opt;
    gb_cmd_set(c, q->key, q->arg, opts, q->i64, "set", false);
    return true;
}

/* Every flag becomes its word, conflicting ones included, so SET's own
 * option parser gives Redis's reply ("ERR syntax error"). */
static void argv_set(void *a, gb_argv_builder *b)
{
    req *q = a;
    gb_argv_init(b, 3 + 2 * GB_ARRAY_LEN(set_flags), 4);
    gb_argv_lit(b, "SET");
    gb_argv_add(b, q->key);
    gb_argv_add(b, q->arg);
    for (size_t i = 0; i < GB_ARRAY_LEN(set_flags); i++) {
        if (!(q->flags & set_flags[i].sbe))
            continue;
        gb_argv_lit(b, set_flags[i].word);
        if (set_flags[i].takes_value)
            gb_argv_ll(b, q->i64);
    }
}

static bool run_del(gb_client *c, void *a)
{
    req *q = a;
    if (q->n == 0)
        return false; /* wrong number of arguments */
    gb_cmd_del(c, q->n, q->a);
    return true;
}

static void argv_del(void *a, gb_argv_builder *b)
{
    req *q = a;
    gb_argv_init(b, 1 + q->n, 0);
    gb_argv_lit(b, "DEL");
    for (size_t i = 0; i < q->n; i++)
        gb_argv_add(b, q->a[i]);
}

static bool run_incr(gb_client *c, void *a)
{
    req *q = a;
    gb_cmd_incrby(c, q->key, q->i64);
    return true;
}

static void argv_incr(void *a, gb_argv_builder *b)
{
    req *q = a;
    if (q->i64 == 1) {
        argv_key(b, "INCR", q, 0);
        return;
    }
    gb_argv_init(b, 3, 1);
    gb_argv_lit(b, "INCRBY");
    gb_argv_add(b, q->key);
    gb_argv_ll(b, q->i64);
}

static bool run_hset(gb_client *c, void *a)
{
    req *q = a;
    if (q->n == 0)
        return false; /* wrong number of arguments */
    gb_cmd_hset(c, q->key, q->n, q->a, q->b);
    return true;
}

static void argv_hset(void *a, gb_argv_builder *b)
{
    req *q = a;
    argv_key(b, "HSET", q, 2 * q->n);
    for (size_t i = 0; i < q->n; i++) {
        gb_argv_add(b, q->a[i]);
        gb_argv_add(b, q->b[i]);
    }
}

static bool run_hget(gb_client *c, void *a)
{
    req *q = a;
    gb_cmd_hget(c, q->key, q->arg);
    return true;
}

static void argv_hget(void *a, gb_argv_builder *b)
{
    argv_key(b, "HGET", a, 1);
    gb_argv_add(b, ((req *)a)->arg);
}

static bool run_zadd(gb_client *c, void *a)
{
    req *q = a;
    if (q->n == 0)
        return false; /* "ZADD key" (arity) or "ZADD key NX" (syntax) */
    gb_cmd_zadd(c, q->key, (int)q->flags, q->n, q->d, q->a);
    return true;
}

static void argv_zadd(void *a, gb_argv_builder *b)
{
    req *q = a;
    static const struct {
        unsigned bit;
        const char *word;
    } opt[] = {{GB_SBE_ZADD_NX, "NX"}, {GB_SBE_ZADD_XX, "XX"}, {GB_SBE_ZADD_GT, "GT"},
               {GB_SBE_ZADD_LT, "LT"}, {GB_SBE_ZADD_CH, "CH"}, {GB_SBE_ZADD_INCR, "INCR"}};
    gb_argv_init(b, 2 + GB_ARRAY_LEN(opt) + 2 * q->n, q->n);
    gb_argv_lit(b, "ZADD");
    gb_argv_add(b, q->key);
    for (size_t i = 0; i < GB_ARRAY_LEN(opt); i++)
        if (q->flags & opt[i].bit)
            gb_argv_lit(b, opt[i].word);
    for (size_t i = 0; i < q->n; i++) {
        gb_argv_dbl(b, q->d[i]);
        gb_argv_add(b, q->a[i]);
    }
}

static bool run_zscore(gb_client *c, void *a)
{
    req *q = a;
    gb_cmd_zscore(c, q->key, q->arg);
    return true;
}

static void argv_zscore(void *a, gb_argv_builder *b)
{
    argv_key(b, "ZSCORE", a, 1);
    gb_argv_add(b, ((req *)a)->arg);
}

static bool run_lpush(gb_client *c, void *a)
{
    req *q = a;
    if (q->n == 0)
        return false; /* wrong number of arguments */
    gb_cmd_push(c, q->key, false, q->n, q->a);
    return true;
}

static void argv_lpush(void *a, gb_argv_builder *b)
{
    req *q = a;
    argv_key(b, "LPUSH", q, q->n);
    for (size_t i = 0; i < q->n; i++)
        gb_argv_add(b, q->a[i]);
}

static bool run_rpop(gb_client *c, void *a)
{
    gb_cmd_pop(c, ((req *)a)->key, true);
    return true;
}

static void argv_rpop(void *a, gb_argv_builder *b) { argv_key(b, "RPOP", a, 0); }

static bool run_publish(gb_client *c, void *a)
{
    req *q = a;
    gb_cmd_publish(c, q->key, q->arg);
    return true;
}

static void argv_publish(void *a, gb_argv_builder *b)
{
    req *q = a;
    gb_argv_init(b, 3, 0);
    gb_argv_lit(b, "PUBLISH");
    gb_argv_add(b, q->key);
    gb_argv_add(b, q->arg);
}

/* XAdd. The fast path takes the requests a producer sends: a well-formed
 * ID and trim. Anything Redis refuses while parsing (MAXLEN with MINID, a
 * negative MAXLEN or LIMIT, LIMIT without "~", no fields) runs as the RESP
 * form instead, whose parser answers with Redis's text in Redis's order.
 * The entry itself, its reply and its errors ("0-0", "equal or smaller
 * than the target stream top item", WRONGTYPE, NOMKSTREAM's nil) are the
 * engine's XADD (gb_cmd_xadd), shared with the RESP handler. */
static bool xadd_plain(const gb_sbe_xadd_opts *o, size_t n)
{
    unsigned f = o->flags;
    if (n == 0 || ((f & GB_SBE_XADD_MAXLEN) && (f & GB_SBE_XADD_MINID)))
        return false;
    if ((f & GB_SBE_XADD_MAXLEN) && o->maxlen < 0)
        return false;
    return !(f & GB_SBE_XADD_LIMIT) || ((f & GB_SBE_XADD_APPROX) && o->limit >= 0);
}

static void xadd_args(gb_client *c, const gb_sbe_xadd_opts *o, gb_xadd_args *a)
{
    unsigned f = o->flags;
    memset(a, 0, sizeof *a);
    a->nomkstream = (f & GB_SBE_XADD_NOMKSTREAM) != 0;
    a->id_given = !(f & GB_SBE_XADD_AUTO_ID);
    a->seq_given = a->id_given && !(f & GB_SBE_XADD_AUTO_SEQ);
    a->id = gb_stream_id_make(a->id_given ? o->id_ms : 0, a->seq_given ? o->id_seq : 0);
    if (f & GB_SBE_XADD_MAXLEN) {
        a->trim.strategy = GB_TRIM_MAXLEN;
        a->trim.maxlen = (uint64_t)o->maxlen;
    } else if (f & GB_SBE_XADD_MINID) {
        a->trim.strategy = GB_TRIM_MINID;
        a->trim.minid = gb_stream_id_make(o->minid_ms, o->minid_seq);
    }
    a->trim.approx = (f & GB_SBE_XADD_APPROX) != 0;
    /* as XADD's parser: LIMIT's count, else "~" works up to the default */
    if (f & GB_SBE_XADD_LIMIT)
        a->trim.limit = o->limit;
    else
        a->trim.limit = a->trim.approx ? gb_stream_default_trim_limit(c->eng) : 0;
}

/* The RESP form: XADD key [NOMKSTREAM] [MAXLEN =|~ n] [MINID =|~ id]
 * [LIMIT n] id field value ...; *idpos and *trim_arg (0: none) say where
 * the ID and the threshold are, for the rewritten effect. */
static void argv_xadd_at(req *q, gb_argv_builder *b, int *idpos, int *trim_arg)
{
    const gb_sbe_xadd_opts *o = &q->xadd;
    unsigned f = o->flags;
    const char *trim_word = (f & GB_SBE_XADD_APPROX) ? "~" : "=";
    char id[GB_STREAM_ID_TEXT_MAX];
    /* number room: MAXLEN and LIMIT one each, two IDs two each */
    gb_argv_init(b, 12 + 2 * q->n, 6);
    gb_argv_lit(b, "XADD");
    gb_argv_add(b, q->key);
    if (f & GB_SBE_XADD_NOMKSTREAM)
        gb_argv_lit(b, "NOMKSTREAM");
    *trim_arg = 0;
    if (f & GB_SBE_XADD_MAXLEN) {
        gb_argv_lit(b, "MAXLEN");
        gb_argv_lit(b, trim_word);
        *trim_arg = b->n;
        gb_argv_ll(b, o->maxlen);
    }
    if (f & GB_SBE_XADD_MINID) {
        gb_argv_lit(b, "MINID");
        gb_argv_lit(b, trim_word);
        *trim_arg = b->n;
        gb_argv_text(b, id, gb_stream_id_format(id, gb_stream_id_make(o->minid_ms, o->minid_seq)));
    }
    if (f & GB_SBE_XADD_LIMIT) {
        gb_argv_lit(b, "LIMIT");
        gb_argv_ll(b, o->limit);
    }
    *idpos = b->n;
    if (f & GB_SBE_XADD_AUTO_ID) {
        gb_argv_lit(b, "*");
    } else if (f & GB_SBE_XADD_AUTO_SEQ) {
        size_t k = gb_ull2str(id, o->id_ms);
        memcpy(id + k, "-*", 2);
        gb_argv_text(b, id, k + 2);
    } else {
        gb_argv_text(b, id, gb_stream_id_format(id, gb_stream_id_make(o->id_ms, o->id_seq)));
    }
    for (size_t i = 0; i < 2 * q->n; i++)
        gb_argv_add(b, q->a[i]);
}

static void argv_xadd(void *a, gb_argv_builder *b)
{
    int idpos, trim_arg;
    argv_xadd_at(a, b, &idpos, &trim_arg);
}

static bool run_xadd(gb_client *c, void *p)
{
    req *q = p;
    if (!xadd_plain(&q->xadd, q->n))
        return false;
    gb_xadd_args a;
    xadd_args(c, &q->xadd, &a);
    gb_stream_id id;
    gb_xadd_rewrite rw;
    if (gb_cmd_xadd(c, q->key, &a, q->n, q->a, &id, &rw)) {
        /* something records effects and "*" or "~" must replay as what happened */
        gb_argv_builder b;
        int idpos, trim_arg;
        argv_xadd_at(q, &b, &idpos, &trim_arg);
        gb_xadd_propagate_rewritten(c, b.n, b.v, idpos, id, trim_arg, &a, &rw);
        gb_argv_free(&b);
    }
    return true;
}

/* The keys of each typed call. Their access flags are the command
 * description's key spec (gb_typed_key_flags), but SET's, which its spec
 * leaves to the arguments (GET). */
static void keys_one(void *a, gb_typed_keys *k)
{
    req *q = a;
    k->keys = &q->key;
    k->n = 1;
    k->flags = 0;
}

static void keys_set(void *a, gb_typed_keys *k)
{
    req *q = a;
    keys_one(q, k);
    k->flags = gb_set_key_flags((q->flags & GB_SBE_SET_GET) != 0);
}

static void keys_del(void *a, gb_typed_keys *k)
{
    req *q = a;
    k->keys = q->a;
    k->n = q->n;
    k->flags = 0;
}

static const gb_typed_call typed_calls[GB_SBE_REQUEST_MAX + 1] = {
    [GB_SBE_PING] = {run_ping, argv_ping, NULL},
    [GB_SBE_GET] = {run_get, argv_get, keys_one},
    [GB_SBE_SET] = {run_set, argv_set, keys_set},
    [GB_SBE_DEL] = {run_del, argv_del, keys_del},
    [GB_SBE_INCR] = {run_incr, argv_incr, keys_one},
    [GB_SBE_HSET] = {run_hset, argv_hset, keys_one},
    [GB_SBE_HGET] = {run_hget, argv_hget, keys_one},
    [GB_SBE_ZADD] = {run_zadd, argv_zadd, keys_one},
    [GB_SBE_ZSCORE] = {run_zscore, argv_zscore, keys_one},
    [GB_SBE_LPUSH] = {run_lpush, argv_lpush, keys_one},
    [GB_SBE_RPOP] = {run_rpop, argv_rpop, keys_one},
    /* channels, not keys: a user limited to some channels takes the RESP form */
    [GB_SBE_PUBLISH] = {run_publish, argv_publish, NULL},
    [GB_SBE_XADD] = {run_xadd, argv_xadd, keys_one},
};

const gb_typed_call *gb_sbe_typed_call(unsigned tid)
{
    return tid <= GB_SBE_REQUEST_MAX && typed_calls[tid].run ? &typed_calls[tid] : NULL;
}

/* The templates without a typed call run as argument vectors. BLPop: the
 * keys sit in the scratch with a spare slot on each side (name before,
 * timeout after), no allocation; blocking keeps a copy anyway. */
static void execute_blpop(gb_client *c, req *q)
{
    char num[GB_ARGV_NUM_ROOM];
    size_t k = gb_format_double_arg(num, q->f64);
    q->a[-1] = gb_slice_cstr("BLPOP");
    q->a[q->n] = gb_slice_make(num, k);
    gb_gate_execute(c, (int)q->n + 2, q->a - 1);
}

static void execute_generic(gb_client *c, req *q)
{
    if (q->n == 0) {
        /* the gate runs nothing for an empty argv; the client still waits
         * for one reply */
        gb_reply_error(c, "ERR SBE: Generic: empty argument list");
        return;
    }
    gb_gate_execute(c, (int)q->n, q->a);
}

static void dispatch(gb_client *c, gb_sbe_replier *r, req *q)
{
    unsigned tid = q->hdr.template_id;
    const gb_typed_call *t = &typed_calls[tid];
    if (GB_LIKELY(t->run != NULL)) {
        gb_command *cmd = (tid == GB_SBE_INCR && q->i64 != 1) ? r->incrby : r->cmds[tid];
        gb_gate_execute_typed(c, cmd, t, q);
    } else if (tid == GB_SBE_BLPOP) {
        execute_blpop(c, q);
    } else {
        execute_generic(c, q);
    }
}

int gb_sbe_execute(gb_client *c, const uint8_t *msg, size_t len)
{
    if (c->rops != &gb_sbe_reply_ops)
        return GB_EINVAL;
    gb_sbe_replier *r = c->rctx;
    gb_sbe_request q;
    if (!gb_sbe_read_header(msg, len, &q.hdr) || q.hdr.schema_id != GB_SBE_SCHEMA_ID)
        return GB_EPROTO;
    unsigned tid = q.hdr.template_id;
    gb_sbe_request_decoder *dec = tid <= GB_SBE_REQUEST_MAX ? gb_sbe_request_decoders[tid] : NULL;
    if (GB_UNLIKELY(!dec)) {
        c->eng->stats.protocol_errors++;
        gb_reply_errorf(c, "ERR SBE: template id %u is not a request", tid);
        return 0;
    }
    const char *why = "malformed";
    int drc = dec(msg, len, &q, &r->scratch, &why);
    if (GB_UNLIKELY(drc != 0)) {
        if (drc != GB_ENOMEM) /* out of memory for the scratch: an error reply, not the client's fault */
            c->eng->stats.protocol_errors++;
        gb_reply_errorf(c, "ERR SBE: %s: %s", gb_sbe_template_name(tid), why);
        return 0;
    }
    dispatch(c, r, &q);
    if (GB_UNLIKELY(r->scratch.cap > KEEP_SCRATCH))
        gb_sbe_scratch_free(&r->scratch);
    return 0;
}
