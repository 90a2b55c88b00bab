/*
 * SBE on the server: request messages into typed engine calls, engine
 * replies into SBE reply messages (sbe_server.h).
 *
 * Why the typed path is fast: the template id indexes a table (no command
 * name to hash or compare), numbers arrive as native int64/double (no
 * parsing), and group entries are decoded into per-client scratch arrays
 * that stop growing after the first few requests (no allocation).
 *
 * Why it is still exactly Redis: the typed path handles only the cases whose
 * reply it can give without the text path's parsing (valid flag combinations,
 * non-empty groups, real numbers); everything else — and any client in
 * MULTI, not authenticated, or writing over maxmemory — is turned into the
 * equivalent argument vector and run through gb_client_execute, the same code
 * the RESP path runs.
 */
#include "transport/sbe/sbe_server.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/core/blocking.h"
#include "engine/commands/cmd_util.h"
#include "engine/core/command.h"
#include "engine/core/engine.h"
#include "engine/base/mem.h"
#include "engine/core/object.h"
#include "engine/types/t_hash.h"
#include "engine/types/t_list.h"
#include "engine/types/t_zset.h"
#include "engine/types/t_string.h"

_Static_assert((int)GB_SBE_ZADD_NX == (int)GB_ZADD_NX && (int)GB_SBE_ZADD_XX == (int)GB_ZADD_XX &&
                   (int)GB_SBE_ZADD_GT == (int)GB_ZADD_GT && (int)GB_SBE_ZADD_LT == (int)GB_ZADD_LT &&
                   (int)GB_SBE_ZADD_CH == (int)GB_ZADD_CH && (int)GB_SBE_ZADD_INCR == (int)GB_ZADD_INCR,
               "ZAddFlags bits are engine/types/t_list.h's GB_ZADD_* bits");

/* ---- the reply sink ---------------------------------------------------------------- */

/* Buffers kept between requests; larger ones are released once used. */
#define KEEP_ITEMS 4096u
#define KEEP_BYTES (1u << 20)
#define KEEP_SCRATCH 4096u

/* An array_deferred whose length has not been set yet. */
#define UNSET_LENGTH INT64_MIN

static void die_oom(const char *what, size_t n)
{
    /* Same policy as the RESP output buffer (resp_writer.c): a reply sink
     * has no error path, and a server that cannot grow a reply buffer is
     * done. */
    fprintf(stderr, "goblin-core: out of memory growing the SBE %s to %zu bytes\n", what, n);
    abort();
}

static gb_sbe_reply_item *push_item(gb_sbe_replier *r, uint8_t kind)
{
    if (GB_UNLIKELY(r->nitems == r->capitems)) {
        size_t cap = r->capitems ? r->capitems * 2 : 16;
        gb_sbe_reply_item *it = realloc(r->items, cap * sizeof *it);
        if (!it)
            die_oom("reply items", cap * sizeof *it);
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
    if (GB_UNLIKELY(len > r->capbytes - r->nbytes)) {
        size_t cap = r->capbytes ? r->capbytes : 256;
        while (cap - r->nbytes < len) {
            if (cap > SIZE_MAX / 2)
                die_oom("reply bytes", SIZE_MAX);
            cap *= 2;
        }
        char *b = realloc(r->bytes, cap);
        if (!b)
            die_oom("reply bytes", cap);
        r->bytes = b;
        r->capbytes = cap;
    }
    if (len)
        memcpy(r->bytes + r->nbytes, s, len);
    it->off = r->nbytes;
    it->len = len;
    r->nbytes += len;
}

static size_t append_scalar(const gb_sbe_reply_item *it, const char *bytes, gb_outbuf *out);

/* A frame is [u32 length][message]: open leaves room for the length and
 * says where it goes; close writes it once the message is appended. */
static size_t frame_open(gb_outbuf *out)
{
    size_t at = out->len;
    gb_outbuf_reserve(out, 4);
    out->len += 4;
    return at;
}

static void frame_close(gb_outbuf *out, size_t at, size_t n)
{
    uint32_t n32 = (uint32_t)n;
    memcpy(out->data + at, &n32, 4);
}

/* Appends one scalar message to a frame buffer. */
static void append_frame(const gb_sbe_reply_item *it, const char *bytes, gb_outbuf *out)
{
    size_t at = frame_open(out);
    frame_close(out, at, append_scalar(it, bytes, out));
}

/* A scalar reply with nothing pending is a whole message by itself: with
 * a frame buffer set, encode it there now instead of listing it as an item
 * for gb_sbe_reply_finish (the ring's hot path: PING, GET, SET, INCR ...). */
static bool direct(gb_sbe_replier *r, uint8_t kind, const char *s, size_t len, int64_t integer, double dbl)
{
    if (!r->frames || r->head != r->nitems)
        return false;
    gb_sbe_reply_item it = {.integer = integer, .dbl = dbl, .len = len, .kind = kind};
    append_frame(&it, s, r->frames);
    return true;
}

static void s_status(void *ctx, const char *s, size_t len)
{
    gb_sbe_replier *r = ctx;
    if (!direct(r, GB_SBE_KIND_STATUS, s, len, 0, 0))
        push_bytes(r, push_item(r, GB_SBE_KIND_STATUS), s, len);
}

static void s_error(void *ctx, const char *s, size_t len)
{
    gb_sbe_replier *r = ctx;
    if (!direct(r, GB_SBE_KIND_ERROR, s, len, 0, 0))
        push_bytes(r, push_item(r, GB_SBE_KIND_ERROR), s, len);
}

static void s_integer(void *ctx, int64_t v)
{
    if (!direct(ctx, GB_SBE_KIND_INTEGER, NULL, 0, v, 0))
        push_item(ctx, GB_SBE_KIND_INTEGER)->integer = v;
}

static void s_dbl(void *ctx, double v)
{
    if (!direct(ctx, GB_SBE_KIND_DOUBLE, NULL, 0, 0, v))
        push_item(ctx, GB_SBE_KIND_DOUBLE)->dbl = v;
}

static void s_bulk(void *ctx, const char *s, size_t len)
{
    gb_sbe_replier *r = ctx;
    if (!direct(r, GB_SBE_KIND_BULK, s, len, 0, 0))
        push_bytes(r, push_item(r, GB_SBE_KIND_BULK), s, len);
}

static void s_nil(void *ctx)
{
    if (!direct(ctx, GB_SBE_KIND_NIL, NULL, 0, 0, 0))
        push_item(ctx, GB_SBE_KIND_NIL);
}

static void s_array(void *ctx, int64_t n) { push_item(ctx, GB_SBE_KIND_ARRAY)->integer = n < 0 ? -1 : n; }

static size_t s_array_deferred(void *ctx)
{
    gb_sbe_replier *r = ctx;
    push_item(r, GB_SBE_KIND_ARRAY)->integer = UNSET_LENGTH;
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

const gb_reply_ops gb_sbe_reply_ops = {
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
    size_t n = gb_sbe_encode_error_reply(p, need, text, len);
    out->len += n;
    return n;
}

#define TOO_LARGE "ERR SBE: reply too large to encode"

/* bytes: the item's text (status, error, bulk), if any. */
static size_t append_scalar(const gb_sbe_reply_item *it, const char *bytes, gb_outbuf *out)
{
    /* Every scalar reply is at most header + 8 bytes or header + var-data. */
    size_t fixed = GB_SBE_HEADER_SIZE + 8 + GB_SBE_VAR_LEN_SIZE;
    if (it->len > GB_SBE_VAR_MAX)
        return append_error(out, TOO_LARGE);
    uint8_t *p = (uint8_t *)gb_outbuf_reserve(out, fixed + it->len);
    size_t cap = fixed + it->len, n = 0;
    if (!it->len)
        bytes = "";
    switch (it->kind) {
    case GB_SBE_KIND_STATUS:
        n = gb_sbe_encode_status_reply(p, cap, bytes, it->len);
        break;
    case GB_SBE_KIND_ERROR:
        n = gb_sbe_encode_error_reply(p, cap, bytes, it->len);
        break;
    case GB_SBE_KIND_INTEGER:
        n = gb_sbe_encode_integer_reply(p, cap, it->integer);
        break;
    case GB_SBE_KIND_DOUBLE:
        n = gb_sbe_encode_double_reply(p, cap, it->dbl);
        break;
    case GB_SBE_KIND_BULK:
        n = gb_sbe_encode_bulk_reply(p, cap, bytes, it->len);
        break;
    default:
        n = gb_sbe_encode_nil_reply(p, cap);
        break;
    }
    out->len += n;
    return n;
}

size_t gb_sbe_reply_finish(gb_sbe_replier *r, gb_outbuf *out)
{
    if (r->head >= r->nitems)
        return 0;
    const gb_sbe_reply_item *first = &r->items[r->head];
    size_t n, end;
    if (GB_LIKELY(first->kind != GB_SBE_KIND_ARRAY)) {
        n = append_scalar(first, r->bytes + first->off, out);
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
            n = gb_sbe_encode_array_reply(p, size, first->integer, nitems, first + 1, r->bytes);
            out->len += n;
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
            free(r->items);
            free(r->bytes);
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
    [GB_SBE_ZSCORE] = "zscore", [GB_SBE_LPUSH] = "lpush", [GB_SBE_RPOP] = "rpop",
};

void gb_sbe_replier_init(gb_sbe_replier *r, gb_engine *eng)
{
    memset(r, 0, sizeof *r);
    for (unsigned t = 0; t <= GB_SBE_REQUEST_MAX; t++)
        if (typed_command[t])
            r->cmds[t] = gb_command_lookup(eng, gb_slice_cstr(typed_command[t]));
    r->incrby = gb_command_lookup(eng, gb_slice_cstr("incrby"));
}

void gb_sbe_replier_free(gb_sbe_replier *r)
{
    free(r->items);
    free(r->bytes);
    gb_sbe_scratch_free(&r->scratch);
    memset(r, 0, sizeof *r);
}

/* ---- the argv path ------------------------------------------------------------------ */

/* An argument vector built from a typed request; numbers are rendered into
 * `num` (32 bytes each is room for any int64 or %.17g double). */
typedef struct argv_buf {
    gb_slice *v;
    int n;
    char *num;
    size_t used;
} argv_buf;

#define NUM_ROOM 32

static bool argv_init(gb_client *c, argv_buf *b, size_t nslices, size_t nnums)
{
    b->n = 0;
    b->used = 0;
    b->v = malloc(nslices * sizeof *b->v);
    b->num = malloc(nnums * NUM_ROOM + 1);
    if (!b->v || !b->num) {
        free(b->v);
        free(b->num);
        gb_reply_error(c, "ERR SBE: out of memory");
        return false;
    }
    return true;
}

static void argv_add(argv_buf *b, gb_slice s) { b->v[b->n++] = s; }
static void argv_lit(argv_buf *b, const char *lit) { argv_add(b, gb_slice_cstr(lit)); }

static void argv_ll(argv_buf *b, int64_t v)
{
    char *p = b->num + b->used;
    int k = snprintf(p, NUM_ROOM, "%lld", (long long)v);
    argv_add(b, gb_slice_make(p, (size_t)k));
    b->used += (size_t)k;
}

/* The shortest of %.15g/%.16g/%.17g that reads back as the same double
 * (%.17g always does): the text a person would have typed ("0.1", not
 * "0.10000000000000001"), so that even replies quoting arguments match the
 * RESP path's. inf/-inf/nan come out as the words the text parsers accept
 * or reject exactly as they would from a RESP client. */
static size_t format_double(char *p, double v)
{
    int k = 0;
    for (int prec = 15; prec <= 17; prec++) {
        k = snprintf(p, NUM_ROOM, "%.*g", prec, v);
        if (isnan(v) || strtod(p, NULL) == v)
            break;
    }
    return (size_t)k;
}

static void argv_dbl(argv_buf *b, double v)
{
    char *p = b->num + b->used;
    size_t k = format_double(p, v);
    argv_add(b, gb_slice_make(p, k));
    b->used += k;
}

static void argv_run(gb_client *c, argv_buf *b)
{
    gb_client_execute(c, b->n, b->v);
    free(b->v);
    free(b->num);
}

static void argv_ping(gb_client *c, gb_sbe_request *q)
{
    (void)q;
    gb_slice v = gb_slice_cstr("PING");
    gb_client_execute(c, 1, &v);
}

static void argv_get(gb_client *c, gb_sbe_request *q)
{
    gb_slice v[2] = {gb_slice_cstr("GET"), q->key};
    gb_client_execute(c, 2, v);
}

static void argv_set(gb_client *c, gb_sbe_request *q)
{
    argv_buf b;
    if (!argv_init(c, &b, 16, 4))
        return;
    argv_lit(&b, "SET");
    argv_add(&b, q->key);
    argv_add(&b, q->arg);
    unsigned f = q->flags;
    /* Every flag becomes its word, conflicting ones included, so SET's own
     * option parser gives Redis's reply ("ERR syntax error"). */
    if (f & GB_SBE_SET_NX)
        argv_lit(&b, "NX");
    if (f & GB_SBE_SET_XX)
        argv_lit(&b, "XX");
    if (f & GB_SBE_SET_GET)
        argv_lit(&b, "GET");
    if (f & GB_SBE_SET_KEEPTTL)
        argv_lit(&b, "KEEPTTL");
    static const struct {
        unsigned bit;
        const char *word;
    } exp[] = {{GB_SBE_SET_EX, "EX"}, {GB_SBE_SET_PX, "PX"}, {GB_SBE_SET_EXAT, "EXAT"}, {GB_SBE_SET_PXAT, "PXAT"}};
    for (size_t i = 0; i < GB_ARRAY_LEN(exp); i++) {
        if (f & exp[i].bit) {
            argv_lit(&b, exp[i].word);
            argv_ll(&b, q->i64);
        }
    }
    argv_run(c, &b);
}

/* Templates whose argv is name, the group entries, then the key (Del has no
 * key; LPush puts the key first). Built in the scratch's spare slots where
 * possible. */
static void argv_del(gb_client *c, gb_sbe_request *q)
{
    q->a[-1] = gb_slice_cstr("DEL");
    gb_client_execute(c, (int)q->n + 1, q->a - 1);
}

static void argv_incr(gb_client *c, gb_sbe_request *q)
{
    if (q->i64 == 1) {
        gb_slice v[2] = {gb_slice_cstr("INCR"), q->key};
        gb_client_execute(c, 2, v);
        return;
    }
    char num[NUM_ROOM];
    int k = snprintf(num, sizeof num, "%lld", (long long)q->i64);
    gb_slice v[3] = {gb_slice_cstr("INCRBY"), q->key, gb_slice_make(num, (size_t)k)};
    gb_client_execute(c, 3, v);
}

static void argv_hset(gb_client *c, gb_sbe_request *q)
{
    argv_buf b;
    if (!argv_init(c, &b, 2 + 2 * q->n, 0))
        return;
    argv_lit(&b, "HSET");
    argv_add(&b, q->key);
    for (size_t i = 0; i < q->n; i++) {
        argv_add(&b, q->a[i]);
        argv_add(&b, q->b[i]);
    }
    argv_run(c, &b);
}

static void argv_key_arg(gb_client *c, gb_sbe_request *q, const char *name)
{
    gb_slice v[3] = {gb_slice_cstr(name), q->key, q->arg};
    gb_client_execute(c, 3, v);
}

static void argv_hget(gb_client *c, gb_sbe_request *q) { argv_key_arg(c, q, "HGET"); }
static void argv_zscore(gb_client *c, gb_sbe_request *q) { argv_key_arg(c, q, "ZSCORE"); }

static void argv_zadd(gb_client *c, gb_sbe_request *q)
{
    argv_buf b;
    if (!argv_init(c, &b, 8 + 2 * q->n, q->n))
        return;
    argv_lit(&b, "ZADD");
    argv_add(&b, q->key);
    static const struct {
        unsigned bit;
        const char *word;
    } opt[] = {{GB_SBE_ZADD_NX, "NX"}, {GB_SBE_ZADD_XX, "XX"}, {GB_SBE_ZADD_GT, "GT"},
               {GB_SBE_ZADD_LT, "LT"}, {GB_SBE_ZADD_CH, "CH"}, {GB_SBE_ZADD_INCR, "INCR"}};
    for (size_t i = 0; i < GB_ARRAY_LEN(opt); i++)
        if (q->flags & opt[i].bit)
            argv_lit(&b, opt[i].word);
    for (size_t i = 0; i < q->n; i++) {
        argv_dbl(&b, q->d[i]);
        argv_add(&b, q->a[i]);
    }
    argv_run(c, &b);
}

static void argv_lpush(gb_client *c, gb_sbe_request *q)
{
    argv_buf b;
    if (!argv_init(c, &b, 2 + q->n, 0))
        return;
    argv_lit(&b, "LPUSH");
    argv_add(&b, q->key);
    for (size_t i = 0; i < q->n; i++)
        argv_add(&b, q->a[i]);
    argv_run(c, &b);
}

static void argv_rpop(gb_client *c, gb_sbe_request *q)
{
    gb_slice v[2] = {gb_slice_cstr("RPOP"), q->key};
    gb_client_execute(c, 2, v);
}

/* BLPOP always runs as argv: blocking keeps a copy of it anyway. The keys
 * sit in the scratch with a spare slot on each side: name before, timeout
 * after, no allocation. */
static void argv_blpop(gb_client *c, gb_sbe_request *q)
{
    char num[NUM_ROOM];
    size_t k = format_double(num, q->f64);
    q->a[-1] = gb_slice_cstr("BLPOP");
    q->a[q->n] = gb_slice_make(num, k);
    gb_client_execute(c, (int)q->n + 2, q->a - 1);
}

static void argv_generic(gb_client *c, gb_sbe_request *q)
{
    if (q->n == 0) {
        /* gb_client_execute ignores an empty argv; the client still waits
         * for one reply. */
        gb_reply_error(c, "ERR SBE: Generic: empty argument list");
        return;
    }
    gb_client_execute(c, (int)q->n, q->a);
}

/* ---- the typed path ----------------------------------------------------------------- */
/* Each returns false, having done and replied nothing, when the request needs
 * the text path's handling (see the file comment). */

static bool typed_ping(gb_client *c, gb_sbe_request *q)
{
    (void)q;
    gb_reply_status(c, "PONG");
    return true;
}

static bool typed_get(gb_client *c, gb_sbe_request *q)
{
    gb_slice v;
    char buf[GB_INT_BUF];
    gb_result r = gb_string_get(c->db, q->key, &v, buf);
    gb_reply_read_result(c, r, &v);
    return true;
}

/* engine/commands/cmd_string.c's do_set with native options. */
static bool typed_set(gb_client *c, gb_sbe_request *q)
{
    unsigned f = q->flags;
    unsigned exp = f & (GB_SBE_SET_EX | GB_SBE_SET_PX | GB_SBE_SET_EXAT | GB_SBE_SET_PXAT);
    if (((f & GB_SBE_SET_NX) && (f & GB_SBE_SET_XX)) || (exp & (exp - 1)) || ((f & GB_SBE_SET_KEEPTTL) && exp))
        return false; /* syntax error: the text path says it */
    bool seconds = exp & (GB_SBE_SET_EX | GB_SBE_SET_EXAT), relative = exp & (GB_SBE_SET_EX | GB_SBE_SET_PX);
    int64_t when = -1;
    if (exp && !gb_string_expire_at(q->i64, seconds, relative, c->eng->now_ms, &when))
        return false; /* "invalid expire time in 'set' command" */
    unsigned sf = 0;
    if (f & GB_SBE_SET_NX)
        sf |= GB_SET_NX;
    if (f & GB_SBE_SET_XX)
        sf |= GB_SET_XX;
    if (f & GB_SBE_SET_KEEPTTL)
        sf |= GB_SET_KEEPTTL;
    if (f & GB_SBE_SET_GET)
        sf |= GB_SET_GET;
    bool found = false;
    char *old = NULL;
    size_t oldlen = 0;
    gb_result r = gb_string_set(c->db, q->key, q->arg, sf, when, &found, &old, &oldlen);
    if (r == GB_R_WRONGTYPE) {
        gb_reply_result(c, r);
    } else if (f & GB_SBE_SET_GET) {
        if (found)
            gb_reply_bulk(c, old, oldlen);
        else
            gb_reply_nil(c);
        gb_free(old);
    } else if (r == GB_R_OK) {
        gb_reply_ok(c);
    } else {
        gb_reply_nil(c);
    }
    return true;
}

static bool typed_del(gb_client *c, gb_sbe_request *q)
{
    if (q->n == 0)
        return false; /* wrong number of arguments */
    int64_t n = 0;
    for (size_t i = 0; i < q->n; i++) {
        if (gb_db_lookup_write(c->db, q->a[i]) && gb_db_delete(c->db, q->a[i])) {
            gb_engine_key_modified(c->db, q->a[i]);
            n++;
        }
    }
    gb_reply_int(c, n);
    return true;
}

static bool typed_incr(gb_client *c, gb_sbe_request *q)
{
    int64_t out;
    gb_result r = gb_string_incrby(c->db, q->key, q->i64, &out);
    gb_reply_int_result(c, r, out);
    return true;
}

static bool typed_lpush(gb_client *c, gb_sbe_request *q)
{
    if (q->n == 0)
        return false;
    int64_t len;
    gb_result r = gb_op_push(c->db, q->key, false, q->n, q->a, &len);
    gb_reply_int_result(c, r, len);
    return true;
}

static void emit_bulk(void *ctx, gb_slice v) { gb_reply_slice(ctx, v); }

static bool typed_rpop(gb_client *c, gb_sbe_request *q)
{
    gb_result r = gb_op_pop(c->db, q->key, true, emit_bulk, c);
    if (r == GB_R_NOTFOUND)
        gb_reply_nil(c);
    else if (r != GB_R_OK)
        gb_reply_result(c, r);
    return true;
}

static bool typed_hset(gb_client *c, gb_sbe_request *q)
{
    if (q->n == 0)
        return false; /* wrong number of arguments */
    int64_t added;
    gb_result r = gb_op_hset(c->db, q->key, q->n, q->a, q->b, &added);
    gb_reply_int_result(c, r, added);
    return true;
}

static bool typed_hget(gb_client *c, gb_sbe_request *q)
{
    gb_slice v;
    char buf[GB_INT_BUF];
    gb_result r = gb_op_hget(c->db, q->key, q->arg, &v, buf);
    gb_reply_read_result(c, r, &v);
    return true;
}

/* Option combinations Redis refuses, each with its own text: left to the
 * text path. */
static bool zadd_flags_ok(unsigned f, size_t n)
{
    if ((f & GB_SBE_ZADD_NX) && (f & GB_SBE_ZADD_XX))
        return false;
    if ((f & GB_SBE_ZADD_NX) && (f & (GB_SBE_ZADD_GT | GB_SBE_ZADD_LT)))
        return false;
    if ((f & GB_SBE_ZADD_GT) && (f & GB_SBE_ZADD_LT))
        return false;
    return !((f & GB_SBE_ZADD_INCR) && n != 1);
}

static bool typed_zadd(gb_client *c, gb_sbe_request *q)
{
    if (q->n == 0 || !zadd_flags_ok(q->flags, q->n))
        return false;
    for (size_t i = 0; i < q->n; i++)
        if (isnan(q->d[i]))
            return false; /* "value is not a valid float" */
    gb_zadd_result res;
    gb_result r = gb_op_zadd(c->db, q->key, (int)q->flags, q->n, q->d, q->a, &res);
    if (r == GB_R_NAN) {
        gb_reply_error(c, "ERR resulting score is not a number (NaN)"); /* INCR inf + -inf */
    } else if (r != GB_R_OK) {
        gb_reply_result(c, r);
    } else if (q->flags & GB_SBE_ZADD_INCR) {
        if (res.processed)
            gb_reply_double(c, res.score);
        else
            gb_reply_nil(c); /* NX/XX/GT/LT skipped it */
    } else {
        gb_reply_int(c, (int64_t)((q->flags & GB_SBE_ZADD_CH) ? res.added + res.updated : res.added));
    }
    return true;
}

static bool typed_zscore(gb_client *c, gb_sbe_request *q)
{
    double score;
    gb_result r = gb_op_zscore(c->db, q->key, q->arg, &score);
    if (r == GB_R_OK)
        gb_reply_double(c, score);
    else if (r == GB_R_NOTFOUND)
        gb_reply_nil(c);
    else
        gb_reply_result(c, r);
    return true;
}

/* ---- dispatch ----------------------------------------------------------------------- */

typedef bool typed_fn(gb_client *c, gb_sbe_request *q);
typedef void argv_fn(gb_client *c, gb_sbe_request *q);

typedef struct handler {
    typed_fn *typed; /* NULL: always the argv path */
    argv_fn *argv;
} handler;

static const handler handlers[GB_SBE_REQUEST_MAX + 1] = {
    [GB_SBE_PING] = {typed_ping, argv_ping},
    [GB_SBE_GET] = {typed_get, argv_get},
    [GB_SBE_SET] = {typed_set, argv_set},
    [GB_SBE_DEL] = {typed_del, argv_del},
    [GB_SBE_INCR] = {typed_incr, argv_incr},
    [GB_SBE_HSET] = {typed_hset, argv_hset},
    [GB_SBE_HGET] = {typed_hget, argv_hget},
    [GB_SBE_ZADD] = {typed_zadd, argv_zadd},
    [GB_SBE_ZSCORE] = {typed_zscore, argv_zscore},
    [GB_SBE_LPUSH] = {typed_lpush, argv_lpush},
    [GB_SBE_RPOP] = {typed_rpop, argv_rpop},
    [GB_SBE_BLPOP] = {NULL, argv_blpop},
    [GB_SBE_GENERIC] = {NULL, argv_generic},
};

/* A typed call, accounted as gb_client_call accounts a command. */
static void run(gb_client *c, gb_sbe_replier *r, const handler *h, gb_sbe_request *q)
{
    gb_engine *eng = c->eng;
    unsigned tid = q->hdr.template_id;
    gb_command *cmd = (tid == GB_SBE_INCR && q->i64 != 1) ? r->incrby : r->cmds[tid];
    c->last_ms = (int64_t)eng->now_mono_ms;
    if (GB_LIKELY(h->typed && cmd && (c->flags & (GB_CLIENT_AUTHED | GB_CLIENT_MULTI)) == GB_CLIENT_AUTHED) &&
        !((cmd->def->flags & GB_CMD_DENYOOM) && gb_engine_over_maxmemory(eng))) {
        const gb_command *prev = c->last_cmd;
        c->last_cmd = cmd;
        gb_call_stats st = gb_call_begin(eng, cmd);
        if (h->typed(c, q)) {
            gb_call_end(eng, cmd, st);
            /* A push may have made keys ready (gb_client_execute does the same). */
            if (eng->nready && !eng->serving_ready)
                gb_blocking_serve_ready(eng);
            return;
        }
        c->last_cmd = prev;
    }
    h->argv(c, q);
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
    if (GB_UNLIKELY(dec(msg, len, &q, &r->scratch, &why) != 0)) {
        c->eng->stats.protocol_errors++;
        gb_reply_errorf(c, "ERR SBE: %s: %s", gb_sbe_template_name(tid), why);
        return 0;
    }
    run(c, r, &handlers[tid], &q);
    if (GB_UNLIKELY(r->scratch.cap > KEEP_SCRATCH))
        gb_sbe_scratch_free(&r->scratch);
    return 0;
}
