/*
 * The SBE codec: encoders and validating decoders for every template of
 * goblin.xml. Layouts are documented field by field in sbe_codec.h and
 * docs/sbe.md.
 */
#include "transport/sbe/sbe_codec.h"

#include <limits.h>
#include <stdlib.h>

/* ---- sizing ---------------------------------------------------------------------- */

/* Message sizes are summed in 64 bits so that no caller-supplied length can
 * wrap them; anything over SIZE_MAX (or with a var-data field over the
 * schema's maximum) cannot be encoded. */
#define NO_FIT UINT64_MAX

static uint64_t var_size(gb_slice s)
{
    if (s.len > GB_SBE_VAR_MAX)
        return NO_FIT;
    return GB_SBE_VAR_LEN_SIZE + (uint64_t)s.len;
}

static uint64_t add(uint64_t a, uint64_t b) { return (a == NO_FIT || b == NO_FIT || a + b < a) ? NO_FIT : a + b; }

/* Sum of the var-data sizes of n slices. */
static uint64_t vars_size(size_t n, const gb_slice *v)
{
    uint64_t t = 0;
    for (size_t i = 0; i < n; i++)
        t = add(t, var_size(v[i]));
    return t;
}

/* What an encoder returns for a message of `need` bytes: the size when only
 * sizing (buf NULL), 0 when it does not fit. */
static size_t check_fit(const uint8_t *buf, size_t cap, uint64_t need)
{
    if (need == NO_FIT || need > SIZE_MAX)
        return 0;
    if (!buf)
        return (size_t)need;
    return need <= cap ? (size_t)need : 0;
}

static uint8_t *put_group_dim(uint8_t *p, uint16_t block_length, size_t n)
{
    gb_sbe_put_u16(p, block_length);
    gb_sbe_put_u16(p + 2, (uint16_t)n);
    return p + GB_SBE_GROUP_DIM_SIZE;
}

static uint8_t *put_large_group_dim(uint8_t *p, uint16_t block_length, size_t n)
{
    gb_sbe_put_u16(p, block_length);
    gb_sbe_put_u32(p + 2, (uint32_t)n);
    return p + GB_SBE_LARGE_GROUP_DIM_SIZE;
}

/* ---- request encoders ------------------------------------------------------------ */

/* Messages whose body is only var-data fields, maybe none (Ping, Get,
 * HGet, ZScore, RPop; the status, error, bulk and nil replies). */
static size_t encode_vars(uint8_t *buf, size_t cap, uint16_t tid, size_t nv, const gb_slice *v)
{
    size_t n = check_fit(buf, cap, add(GB_SBE_HEADER_SIZE, vars_size(nv, v)));
    if (!n || !buf)
        return n;
    gb_sbe_write_header(buf, 0, tid);
    uint8_t *p = buf + GB_SBE_HEADER_SIZE;
    for (size_t i = 0; i < nv; i++)
        p = gb_sbe_put_var(p, v[i].ptr, v[i].len);
    return n;
}

size_t gb_sbe_encode_ping(uint8_t *buf, size_t cap) { return encode_vars(buf, cap, GB_SBE_PING, 0, NULL); }

size_t gb_sbe_encode_get(uint8_t *buf, size_t cap, gb_slice key) { return encode_vars(buf, cap, GB_SBE_GET, 1, &key); }

size_t gb_sbe_encode_hget(uint8_t *buf, size_t cap, gb_slice key, gb_slice field)
{
    gb_slice v[2] = {key, field};
    return encode_vars(buf, cap, GB_SBE_HGET, 2, v);
}

size_t gb_sbe_encode_zscore(uint8_t *buf, size_t cap, gb_slice key, gb_slice member)
{
    gb_slice v[2] = {key, member};
    return encode_vars(buf, cap, GB_SBE_ZSCORE, 2, v);
}

size_t gb_sbe_encode_publish(uint8_t *buf, size_t cap, gb_slice channel, gb_slice message)
{
    gb_slice v[2] = {channel, message};
    return encode_vars(buf, cap, GB_SBE_PUBLISH, 2, v);
}

size_t gb_sbe_encode_rpop(uint8_t *buf, size_t cap, gb_slice key) { return encode_vars(buf, cap, GB_SBE_RPOP, 1, &key); }

size_t gb_sbe_encode_set(uint8_t *buf, size_t cap, gb_slice key, gb_slice value, unsigned flags, int64_t expiry)
{
    uint64_t need = add(add(GB_SBE_HEADER_SIZE + GB_SBE_SET_BLOCK_LENGTH, var_size(key)), var_size(value));
    if (flags > 0xffu)
        return 0;
    size_t n = check_fit(buf, cap, need);
    if (!n || !buf)
        return n;
    gb_sbe_write_header(buf, GB_SBE_SET_BLOCK_LENGTH, GB_SBE_SET);
    uint8_t *p = buf + GB_SBE_HEADER_SIZE;
    gb_sbe_put_i64(p + GB_SBE_SET_EXPIRY_OFFSET, expiry);
    p[GB_SBE_SET_FLAGS_OFFSET] = (uint8_t)flags;
    p += GB_SBE_SET_BLOCK_LENGTH;
    p = gb_sbe_put_var(p, key.ptr, key.len);
    gb_sbe_put_var(p, value.ptr, value.len);
    return n;
}

size_t gb_sbe_encode_incr(uint8_t *buf, size_t cap, gb_slice key, int64_t delta)
{
    size_t n = check_fit(buf, cap, add(GB_SBE_HEADER_SIZE + GB_SBE_INCR_BLOCK_LENGTH, var_size(key)));
    if (!n || !buf)
        return n;
    gb_sbe_write_header(buf, GB_SBE_INCR_BLOCK_LENGTH, GB_SBE_INCR);
    uint8_t *p = buf + GB_SBE_HEADER_SIZE;
    gb_sbe_put_i64(p + GB_SBE_INCR_DELTA_OFFSET, delta);
    gb_sbe_put_var(p + GB_SBE_INCR_BLOCK_LENGTH, key.ptr, key.len);
    return n;
}

/* Templates with an empty root block, one group of single var-data entries
 * and optionally a trailing key (Del, LPush) or a root block (BLPop). */
static size_t encode_list(uint8_t *buf, size_t cap, uint16_t tid, uint16_t block_length, const uint8_t *block,
                          size_t n, const gb_slice *items, const gb_slice *key, bool large)
{
    if (n > (large ? (size_t)GB_SBE_LARGE_GROUP_MAX : (size_t)GB_SBE_GROUP_MAX))
        return 0;
    uint64_t need = GB_SBE_HEADER_SIZE + (uint64_t)block_length +
                    (large ? GB_SBE_LARGE_GROUP_DIM_SIZE : GB_SBE_GROUP_DIM_SIZE);
    need = add(need, vars_size(n, items));
    if (key)
        need = add(need, var_size(*key));
    size_t len = check_fit(buf, cap, need);
    if (!len || !buf)
        return len;
    gb_sbe_write_header(buf, block_length, tid);
    uint8_t *p = buf + GB_SBE_HEADER_SIZE;
    if (block_length)
        memcpy(p, block, block_length);
    p += block_length;
    p = large ? put_large_group_dim(p, 0, n) : put_group_dim(p, 0, n);
    for (size_t i = 0; i < n; i++)
        p = gb_sbe_put_var(p, items[i].ptr, items[i].len);
    if (key)
        gb_sbe_put_var(p, key->ptr, key->len);
    return len;
}

size_t gb_sbe_encode_del(uint8_t *buf, size_t cap, size_t n, const gb_slice *keys)
{
    return encode_list(buf, cap, GB_SBE_DEL, 0, NULL, n, keys, NULL, false);
}

size_t gb_sbe_encode_lpush(uint8_t *buf, size_t cap, gb_slice key, size_t n, const gb_slice *values)
{
    return encode_list(buf, cap, GB_SBE_LPUSH, 0, NULL, n, values, &key, false);
}

size_t gb_sbe_encode_blpop(uint8_t *buf, size_t cap, size_t n, const gb_slice *keys, double timeout_s)
{
    uint8_t block[GB_SBE_BLPOP_BLOCK_LENGTH];
    gb_sbe_put_f64(block + GB_SBE_BLPOP_TIMEOUT_OFFSET, timeout_s);
    return encode_list(buf, cap, GB_SBE_BLPOP, GB_SBE_BLPOP_BLOCK_LENGTH, block, n, keys, NULL, false);
}

size_t gb_sbe_encode_generic(uint8_t *buf, size_t cap, size_t argc, const gb_slice *argv)
{
    return encode_list(buf, cap, GB_SBE_GENERIC, 0, NULL, argc, argv, NULL, true);
}

size_t gb_sbe_encode_hset(uint8_t *buf, size_t cap, gb_slice key, size_t n, const gb_slice *fields,
                          const gb_slice *values)
{
    if (n > GB_SBE_GROUP_MAX)
        return 0;
    uint64_t need = GB_SBE_HEADER_SIZE + GB_SBE_GROUP_DIM_SIZE;
    need = add(add(add(need, vars_size(n, fields)), vars_size(n, values)), var_size(key));
    size_t len = check_fit(buf, cap, need);
    if (!len || !buf)
        return len;
    gb_sbe_write_header(buf, 0, GB_SBE_HSET);
    uint8_t *p = put_group_dim(buf + GB_SBE_HEADER_SIZE, 0, n);
    for (size_t i = 0; i < n; i++) {
        p = gb_sbe_put_var(p, fields[i].ptr, fields[i].len);
        p = gb_sbe_put_var(p, values[i].ptr, values[i].len);
    }
    gb_sbe_put_var(p, key.ptr, key.len);
    return len;
}

size_t gb_sbe_encode_zadd(uint8_t *buf, size_t cap, gb_slice key, unsigned flags, size_t n, const double *scores,
                          const gb_slice *members)
{
    if (n > GB_SBE_GROUP_MAX || flags > 0xffu)
        return 0;
    uint64_t need = GB_SBE_HEADER_SIZE + GB_SBE_ZADD_BLOCK_LENGTH + GB_SBE_GROUP_DIM_SIZE +
                    (uint64_t)n * GB_SBE_ZADD_MEMBER_BLOCK_LENGTH;
    need = add(add(need, vars_size(n, members)), var_size(key));
    size_t len = check_fit(buf, cap, need);
    if (!len || !buf)
        return len;
    gb_sbe_write_header(buf, GB_SBE_ZADD_BLOCK_LENGTH, GB_SBE_ZADD);
    uint8_t *p = buf + GB_SBE_HEADER_SIZE;
    p[GB_SBE_ZADD_FLAGS_OFFSET] = (uint8_t)flags;
    p = put_group_dim(p + GB_SBE_ZADD_BLOCK_LENGTH, GB_SBE_ZADD_MEMBER_BLOCK_LENGTH, n);
    for (size_t i = 0; i < n; i++) {
        gb_sbe_put_f64(p + GB_SBE_ZADD_MEMBER_SCORE_OFFSET, scores[i]);
        p = gb_sbe_put_var(p + GB_SBE_ZADD_MEMBER_BLOCK_LENGTH, members[i].ptr, members[i].len);
    }
    gb_sbe_put_var(p, key.ptr, key.len);
    return len;
}

size_t gb_sbe_encode_xadd(uint8_t *buf, size_t cap, gb_slice key, const gb_sbe_xadd_opts *o, size_t n,
                          const gb_slice *fields, const gb_slice *values)
{
    if (n > GB_SBE_GROUP_MAX || o->flags > 0xffu)
        return 0;
    uint64_t need = GB_SBE_HEADER_SIZE + GB_SBE_XADD_BLOCK_LENGTH + GB_SBE_GROUP_DIM_SIZE;
    need = add(add(add(need, vars_size(n, fields)), vars_size(n, values)), var_size(key));
    size_t len = check_fit(buf, cap, need);
    if (!len || !buf)
        return len;
    gb_sbe_write_header(buf, GB_SBE_XADD_BLOCK_LENGTH, GB_SBE_XADD);
    uint8_t *p = buf + GB_SBE_HEADER_SIZE;
    gb_sbe_put_u64(p + GB_SBE_XADD_ID_MS_OFFSET, o->id_ms);
    gb_sbe_put_u64(p + GB_SBE_XADD_ID_SEQ_OFFSET, o->id_seq);
    gb_sbe_put_i64(p + GB_SBE_XADD_MAXLEN_OFFSET, o->maxlen);
    gb_sbe_put_u64(p + GB_SBE_XADD_MINID_MS_OFFSET, o->minid_ms);
    gb_sbe_put_u64(p + GB_SBE_XADD_MINID_SEQ_OFFSET, o->minid_seq);
    gb_sbe_put_i64(p + GB_SBE_XADD_LIMIT_OFFSET, o->limit);
    p[GB_SBE_XADD_FLAGS_OFFSET] = (uint8_t)o->flags;
    p = put_group_dim(p + GB_SBE_XADD_BLOCK_LENGTH, 0, n);
    for (size_t i = 0; i < n; i++) {
        p = gb_sbe_put_var(p, fields[i].ptr, fields[i].len);
        p = gb_sbe_put_var(p, values[i].ptr, values[i].len);
    }
    gb_sbe_put_var(p, key.ptr, key.len);
    return len;
}

/* ---- request decoders ------------------------------------------------------------ */

int gb_sbe_scratch_reserve(gb_sbe_scratch *s, size_t n)
{
    if (n <= s->cap)
        return 0;
    size_t cap = s->cap ? s->cap : 16;
    while (cap < n)
        cap *= 2;
    if (cap > SIZE_MAX / sizeof(gb_slice))
        return GB_ENOMEM;
    void *(*grow)(void *, size_t) = s->realloc_fn ? s->realloc_fn : realloc;
    /* Each array keeps its old contents' capacity until all three have
     * grown: s->cap changes last, so a failure half way leaves a scratch
     * that is still consistent (some arrays merely larger). */
    gb_slice *a = grow(s->a, cap * sizeof *a);
    if (!a)
        return GB_ENOMEM;
    s->a = a;
    gb_slice *b = grow(s->b, cap * sizeof *b);
    if (!b)
        return GB_ENOMEM;
    s->b = b;
    double *d = grow(s->d, cap * sizeof *d);
    if (!d)
        return GB_ENOMEM;
    s->d = d;
    s->cap = cap;
    return 0;
}

void gb_sbe_scratch_free(gb_sbe_scratch *s)
{
    void (*release)(void *) = s->free_fn ? s->free_fn : free;
    release(s->a);
    release(s->b);
    release(s->d);
    s->a = s->b = NULL;
    s->d = NULL;
    s->cap = 0;
}

static int bad(const char **why, const char *what)
{
    *why = what;
    return GB_EPARSE;
}

/* Every decoder's start: clears req but for its header, and positions c
 * after the root block, which must be at least `min` bytes (the sender's
 * may be longer: a newer version's fields are skipped). */
static bool take_root(const uint8_t *msg, size_t len, gb_sbe_request *req, size_t min, gb_sbe_cursor *c,
                      const uint8_t **block)
{
    /* A compound literal, not memset: the compiler clears the struct with a
     * few vector stores instead of a call (every ring request comes here). */
    *req = (gb_sbe_request){.hdr = req->hdr};
    c->p = msg + GB_SBE_HEADER_SIZE;
    c->end = msg + len;
    return req->hdr.block_length >= min && gb_sbe_take(c, req->hdr.block_length, block);
}

/* Room for n entries plus the spare slot before and after (see gb_sbe_request). */
static int reserve(gb_sbe_scratch *s, gb_sbe_request *req, size_t n, const char **why)
{
    if (gb_sbe_scratch_reserve(s, n + 2)) {
        *why = "out of memory";
        return GB_ENOMEM;
    }
    req->n = n;
    req->a = s->a + 1;
    req->b = s->b + 1;
    req->d = s->d + 1;
    return 0;
}

/* A group whose entries are one var-data each, into req->a. */
static int take_list(gb_sbe_cursor *c, bool large, gb_sbe_request *req, gb_sbe_scratch *s, const char **why,
                     const char *what_dim, const char *what_entry)
{
    gb_sbe_group g;
    if (!gb_sbe_take_group(c, large, 0, 1, &g))
        return bad(why, what_dim);
    /* argc is an int in the engine; the size check above already limits
     * count to a quarter of the message. */
    if (g.count > INT_MAX - 2)
        return bad(why, what_dim);
    int rc = reserve(s, req, g.count, why);
    if (rc)
        return rc;
    for (size_t i = 0; i < g.count; i++) {
        const uint8_t *blk;
        if (!gb_sbe_take(c, g.block_length, &blk) || !gb_sbe_take_var(c, &req->a[i]))
            return bad(why, what_entry);
    }
    return 0;
}

static int dec_ping(const uint8_t *msg, size_t len, gb_sbe_request *req, gb_sbe_scratch *s, const char **why)
{
    (void)s;
    gb_sbe_cursor c;
    const uint8_t *blk;
    if (!take_root(msg, len, req, 0, &c, &blk))
        return bad(why, "root block exceeds the message");
    return 0;
}

/* Get, RPop: key */
static int dec_key(const uint8_t *msg, size_t len, gb_sbe_request *req, gb_sbe_scratch *s, const char **why)
{
    (void)s;
    gb_sbe_cursor c;
    const uint8_t *blk;
    if (!take_root(msg, len, req, 0, &c, &blk))
        return bad(why, "root block exceeds the message");
    if (!gb_sbe_take_var(&c, &req->key))
        return bad(why, "key exceeds the message");
    return 0;
}

/* HGet, ZScore: key, field/member */
static int dec_key_arg(const uint8_t *msg, size_t len, gb_sbe_request *req, gb_sbe_scratch *s, const char **why)
{
    (void)s;
    gb_sbe_cursor c;
    const uint8_t *blk;
    if (!take_root(msg, len, req, 0, &c, &blk))
        return bad(why, "root block exceeds the message");
    if (!gb_sbe_take_var(&c, &req->key))
        return bad(why, "key exceeds the message");
    if (!gb_sbe_take_var(&c, &req->arg))
        return bad(why, req->hdr.template_id == GB_SBE_HGET ? "field exceeds the message"
                                                            : "member exceeds the message");
    return 0;
}

/* Publish: channel, message */
static int dec_publish(const uint8_t *msg, size_t len, gb_sbe_request *req, gb_sbe_scratch *s, const char **why)
{
    (void)s;
    gb_sbe_cursor c;
    const uint8_t *blk;
    if (!take_root(msg, len, req, 0, &c, &blk))
        return bad(why, "root block exceeds the message");
    if (!gb_sbe_take_var(&c, &req->key))
        return bad(why, "channel exceeds the message");
    if (!gb_sbe_take_var(&c, &req->arg))
        return bad(why, "message field exceeds the message");
    return 0;
}

static int dec_set(const uint8_t *msg, size_t len, gb_sbe_request *req, gb_sbe_scratch *s, const char **why)
{
    (void)s;
    gb_sbe_cursor c;
    const uint8_t *blk;
    if (!take_root(msg, len, req, GB_SBE_SET_BLOCK_LENGTH, &c, &blk))
        return bad(why, "root block shorter than 9 bytes or exceeds the message");
    req->i64 = gb_sbe_get_i64(blk + GB_SBE_SET_EXPIRY_OFFSET);
    req->flags = blk[GB_SBE_SET_FLAGS_OFFSET];
    if (!gb_sbe_take_var(&c, &req->key))
        return bad(why, "key exceeds the message");
    if (!gb_sbe_take_var(&c, &req->arg))
        return bad(why, "value exceeds the message");
    return 0;
}

static int dec_incr(const uint8_t *msg, size_t len, gb_sbe_request *req, gb_sbe_scratch *s, const char **why)
{
    (void)s;
    gb_sbe_cursor c;
    const uint8_t *blk;
    if (!take_root(msg, len, req, GB_SBE_INCR_BLOCK_LENGTH, &c, &blk))
        return bad(why, "root block shorter than 8 bytes or exceeds the message");
    req->i64 = gb_sbe_get_i64(blk + GB_SBE_INCR_DELTA_OFFSET);
    if (!gb_sbe_take_var(&c, &req->key))
        return bad(why, "key exceeds the message");
    return 0;
}

static int dec_del(const uint8_t *msg, size_t len, gb_sbe_request *req, gb_sbe_scratch *s, const char **why)
{
    gb_sbe_cursor c;
    const uint8_t *blk;
    if (!take_root(msg, len, req, 0, &c, &blk))
        return bad(why, "root block exceeds the message");
    return take_list(&c, false, req, s, why, "keys group exceeds the message", "keys entry exceeds the message");
}

static int dec_lpush(const uint8_t *msg, size_t len, gb_sbe_request *req, gb_sbe_scratch *s, const char **why)
{
    gb_sbe_cursor c;
    const uint8_t *blk;
    if (!take_root(msg, len, req, 0, &c, &blk))
        return bad(why, "root block exceeds the message");
    int rc = take_list(&c, false, req, s, why, "values group exceeds the message", "values entry exceeds the message");
    if (rc)
        return rc;
    if (!gb_sbe_take_var(&c, &req->key))
        return bad(why, "key exceeds the message");
    return 0;
}

static int dec_blpop(const uint8_t *msg, size_t len, gb_sbe_request *req, gb_sbe_scratch *s, const char **why)
{
    gb_sbe_cursor c;
    const uint8_t *blk;
    if (!take_root(msg, len, req, GB_SBE_BLPOP_BLOCK_LENGTH, &c, &blk))
        return bad(why, "root block shorter than 8 bytes or exceeds the message");
    req->f64 = gb_sbe_get_f64(blk + GB_SBE_BLPOP_TIMEOUT_OFFSET);
    return take_list(&c, false, req, s, why, "keys group exceeds the message", "keys entry exceeds the message");
}

static int dec_generic(const uint8_t *msg, size_t len, gb_sbe_request *req, gb_sbe_scratch *s, const char **why)
{
    gb_sbe_cursor c;
    const uint8_t *blk;
    if (!take_root(msg, len, req, 0, &c, &blk))
        return bad(why, "root block exceeds the message");
    return take_list(&c, true, req, s, why, "args group exceeds the message", "args entry exceeds the message");
}

static int dec_hset(const uint8_t *msg, size_t len, gb_sbe_request *req, gb_sbe_scratch *s, const char **why)
{
    gb_sbe_cursor c;
    const uint8_t *blk;
    if (!take_root(msg, len, req, 0, &c, &blk))
        return bad(why, "root block exceeds the message");
    gb_sbe_group g;
    if (!gb_sbe_take_group(&c, false, 0, 2, &g))
        return bad(why, "fields group exceeds the message");
    int rc = reserve(s, req, g.count, why);
    if (rc)
        return rc;
    for (size_t i = 0; i < g.count; i++) {
        if (!gb_sbe_take(&c, g.block_length, &blk) || !gb_sbe_take_var(&c, &req->a[i]) ||
            !gb_sbe_take_var(&c, &req->b[i]))
            return bad(why, "fields entry exceeds the message");
    }
    if (!gb_sbe_take_var(&c, &req->key))
        return bad(why, "key exceeds the message");
    return 0;
}

static int dec_zadd(const uint8_t *msg, size_t len, gb_sbe_request *req, gb_sbe_scratch *s, const char **why)
{
    gb_sbe_cursor c;
    const uint8_t *blk;
    if (!take_root(msg, len, req, GB_SBE_ZADD_BLOCK_LENGTH, &c, &blk))
        return bad(why, "root block shorter than 1 byte or exceeds the message");
    req->flags = blk[GB_SBE_ZADD_FLAGS_OFFSET];
    /* Refused rather than ignored: a newer client asking for an option this
     * server does not know must not get a silently different command. */
    if (req->flags & ~GB_SBE_ZADD_ALL)
        return bad(why, "unknown flag bits");
    gb_sbe_group g;
    if (!gb_sbe_take_group(&c, false, GB_SBE_ZADD_MEMBER_BLOCK_LENGTH, 1, &g))
        return bad(why, "members group exceeds the message or its block is shorter than 8 bytes");
    int rc = reserve(s, req, g.count, why);
    if (rc)
        return rc;
    for (size_t i = 0; i < g.count; i++) {
        if (!gb_sbe_take(&c, g.block_length, &blk) || !gb_sbe_take_var(&c, &req->a[i]))
            return bad(why, "members entry exceeds the message");
        req->d[i] = gb_sbe_get_f64(blk + GB_SBE_ZADD_MEMBER_SCORE_OFFSET);
    }
    if (!gb_sbe_take_var(&c, &req->key))
        return bad(why, "key exceeds the message");
    return 0;
}

/* XAdd's flags as the schema allows them. Refused rather than ignored or
 * guessed: bits this version lacks, and combinations no XADD command line
 * can say ("*" and "<ms>-*" at once; "~" with no MAXLEN or MINID). The
 * combinations that a command line can say but Redis refuses (MAXLEN with
 * MINID, LIMIT without "~") reach the server's XADD, which answers them. */
static const char *xadd_flags_wrong(unsigned f)
{
    if (f & ~GB_SBE_XADD_ALL)
        return "unknown flag bits";
    if ((f & GB_SBE_XADD_AUTO_ID) && (f & GB_SBE_XADD_AUTO_SEQ))
        return "autoId and autoSeq both set";
    if ((f & GB_SBE_XADD_APPROX) && !(f & (GB_SBE_XADD_MAXLEN | GB_SBE_XADD_MINID)))
        return "approx set without maxLen or minId";
    return NULL;
}

static int dec_xadd(const uint8_t *msg, size_t len, gb_sbe_request *req, gb_sbe_scratch *s, const char **why)
{
    gb_sbe_cursor c;
    const uint8_t *blk;
    if (!take_root(msg, len, req, GB_SBE_XADD_BLOCK_LENGTH, &c, &blk))
        return bad(why, "root block shorter than 49 bytes or exceeds the message");
    gb_sbe_xadd_opts *o = &req->xadd;
    o->id_ms = gb_sbe_get_u64(blk + GB_SBE_XADD_ID_MS_OFFSET);
    o->id_seq = gb_sbe_get_u64(blk + GB_SBE_XADD_ID_SEQ_OFFSET);
    o->maxlen = gb_sbe_get_i64(blk + GB_SBE_XADD_MAXLEN_OFFSET);
    o->minid_ms = gb_sbe_get_u64(blk + GB_SBE_XADD_MINID_MS_OFFSET);
    o->minid_seq = gb_sbe_get_u64(blk + GB_SBE_XADD_MINID_SEQ_OFFSET);
    o->limit = gb_sbe_get_i64(blk + GB_SBE_XADD_LIMIT_OFFSET);
    o->flags = req->flags = blk[GB_SBE_XADD_FLAGS_OFFSET];
    const char *wrong = xadd_flags_wrong(o->flags);
    if (wrong)
        return bad(why, wrong);
    gb_sbe_group g;
    if (!gb_sbe_take_group(&c, false, 0, 2, &g))
        return bad(why, "fields group exceeds the message");
    /* Pairs interleaved (the engine's field, value, field ... order): 2n
     * slices, counted by a u16 and checked against the bytes above. */
    if (gb_sbe_scratch_reserve(s, 2 * (size_t)g.count + 2)) {
        *why = "out of memory";
        return GB_ENOMEM;
    }
    req->n = g.count;
    req->a = s->a + 1;
    req->b = s->b + 1;
    req->d = s->d + 1;
    for (size_t i = 0; i < g.count; i++) {
        if (!gb_sbe_take(&c, g.block_length, &blk) || !gb_sbe_take_var(&c, &req->a[2 * i]) ||
            !gb_sbe_take_var(&c, &req->a[2 * i + 1]))
            return bad(why, "fields entry exceeds the message");
    }
    if (!gb_sbe_take_var(&c, &req->key))
        return bad(why, "key exceeds the message");
    return 0;
}

gb_sbe_request_decoder *const gb_sbe_request_decoders[GB_SBE_REQUEST_MAX + 1] = {
    [GB_SBE_PING] = dec_ping,    [GB_SBE_GET] = dec_key,       [GB_SBE_SET] = dec_set,
    [GB_SBE_DEL] = dec_del,      [GB_SBE_INCR] = dec_incr,     [GB_SBE_HSET] = dec_hset,
    [GB_SBE_HGET] = dec_key_arg, [GB_SBE_ZADD] = dec_zadd,     [GB_SBE_ZSCORE] = dec_key_arg,
    [GB_SBE_LPUSH] = dec_lpush,  [GB_SBE_RPOP] = dec_key,      [GB_SBE_BLPOP] = dec_blpop,
    [GB_SBE_GENERIC] = dec_generic, [GB_SBE_PUBLISH] = dec_publish, [GB_SBE_XADD] = dec_xadd,
};

int gb_sbe_decode_request(const uint8_t *msg, size_t len, gb_sbe_request *req, gb_sbe_scratch *s, const char **why)
{
    if (!gb_sbe_read_header(msg, len, &req->hdr)) {
        *why = "shorter than a message header";
        return GB_EPROTO;
    }
    if (req->hdr.schema_id != GB_SBE_SCHEMA_ID) {
        *why = "not Goblin's schema id";
        return GB_EPROTO;
    }
    unsigned tid = req->hdr.template_id;
    if (tid > GB_SBE_REQUEST_MAX || !gb_sbe_request_decoders[tid]) {
        *why = "not a request template";
        return GB_ENOENT;
    }
    return gb_sbe_request_decoders[tid](msg, len, req, s, why);
}

/* ---- reply encoders -------------------------------------------------------------- */

/* encode_vars for exactly one var-data field, spelled out: every status
 * and bulk reply on a ring comes through here (the hot path of PING, GET,
 * SET). */
static size_t encode_text_reply(uint8_t *buf, size_t cap, uint16_t tid, const char *s, size_t len)
{
    if (len > GB_SBE_VAR_MAX)
        return 0;
    size_t n = GB_SBE_HEADER_SIZE + GB_SBE_VAR_LEN_SIZE + len;
    if (!buf)
        return n;
    if (n > cap)
        return 0;
    gb_sbe_write_header(buf, 0, tid);
    gb_sbe_put_var(buf + GB_SBE_HEADER_SIZE, s, len);
    return n;
}

size_t gb_sbe_encode_status_reply(uint8_t *buf, size_t cap, const char *s, size_t len)
{
    return encode_text_reply(buf, cap, GB_SBE_STATUS_REPLY, s, len);
}

size_t gb_sbe_encode_error_reply(uint8_t *buf, size_t cap, const char *s, size_t len)
{
    return encode_text_reply(buf, cap, GB_SBE_ERROR_REPLY, s, len);
}

size_t gb_sbe_encode_bulk_reply(uint8_t *buf, size_t cap, const char *s, size_t len)
{
    return encode_text_reply(buf, cap, GB_SBE_BULK_REPLY, s, len);
}

size_t gb_sbe_encode_nil_reply(uint8_t *buf, size_t cap)
{
    return encode_vars(buf, cap, GB_SBE_NIL_REPLY, 0, NULL);
}

size_t gb_sbe_encode_integer_reply(uint8_t *buf, size_t cap, int64_t v)
{
    size_t n = check_fit(buf, cap, GB_SBE_HEADER_SIZE + GB_SBE_INTEGER_REPLY_BLOCK_LENGTH);
    if (!n || !buf)
        return n;
    gb_sbe_write_header(buf, GB_SBE_INTEGER_REPLY_BLOCK_LENGTH, GB_SBE_INTEGER_REPLY);
    gb_sbe_put_i64(buf + GB_SBE_HEADER_SIZE + GB_SBE_INTEGER_REPLY_VALUE_OFFSET, v);
    return n;
}

size_t gb_sbe_encode_double_reply(uint8_t *buf, size_t cap, double v)
{
    size_t n = check_fit(buf, cap, GB_SBE_HEADER_SIZE + GB_SBE_DOUBLE_REPLY_BLOCK_LENGTH);
    if (!n || !buf)
        return n;
    gb_sbe_write_header(buf, GB_SBE_DOUBLE_REPLY_BLOCK_LENGTH, GB_SBE_DOUBLE_REPLY);
    gb_sbe_put_f64(buf + GB_SBE_HEADER_SIZE + GB_SBE_DOUBLE_REPLY_VALUE_OFFSET, v);
    return n;
}

#define ARRAY_FIXED (GB_SBE_HEADER_SIZE + GB_SBE_ARRAY_REPLY_BLOCK_LENGTH + GB_SBE_LARGE_GROUP_DIM_SIZE)
#define ARRAY_PER_ITEM (GB_SBE_ARRAY_ITEM_BLOCK_LENGTH + GB_SBE_VAR_LEN_SIZE)

static uint64_t array_size(size_t n, size_t bytes)
{
    if (n > GB_SBE_LARGE_GROUP_MAX)
        return NO_FIT;
    return add(ARRAY_FIXED + (uint64_t)n * ARRAY_PER_ITEM, bytes);
}

size_t gb_sbe_array_reply_size(size_t n, size_t bytes)
{
    uint64_t s = array_size(n, bytes);
    return (s == NO_FIT || s > SIZE_MAX) ? SIZE_MAX : (size_t)s;
}

size_t gb_sbe_encode_array_reply(uint8_t *buf, size_t cap, int64_t length, size_t n, const gb_sbe_reply_item *items,
                                 const char *base)
{
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        if (items[i].len > GB_SBE_VAR_MAX)
            return 0;
        bytes += items[i].len;
    }
    if (bytes > SIZE_MAX)
        return 0;
    size_t len = check_fit(buf, cap, array_size(n, (size_t)bytes));
    if (!len || !buf)
        return len;
    gb_sbe_write_header(buf, GB_SBE_ARRAY_REPLY_BLOCK_LENGTH, GB_SBE_ARRAY_REPLY);
    uint8_t *p = buf + GB_SBE_HEADER_SIZE;
    gb_sbe_put_i64(p + GB_SBE_ARRAY_REPLY_LENGTH_OFFSET, length);
    p = put_large_group_dim(p + GB_SBE_ARRAY_REPLY_BLOCK_LENGTH, GB_SBE_ARRAY_ITEM_BLOCK_LENGTH, n);
    for (size_t i = 0; i < n; i++) {
        const gb_sbe_reply_item *it = &items[i];
        gb_sbe_put_i64(p + GB_SBE_ARRAY_ITEM_INTEGER_OFFSET, it->integer);
        gb_sbe_put_f64(p + GB_SBE_ARRAY_ITEM_DBL_OFFSET, it->dbl);
        p[GB_SBE_ARRAY_ITEM_KIND_OFFSET] = it->kind;
        p = gb_sbe_put_var(p + GB_SBE_ARRAY_ITEM_BLOCK_LENGTH, it->len ? base + it->off : NULL, it->len);
    }
    return len;
}

/* ---- pushes ---------------------------------------------------------------------- */

size_t gb_sbe_encode_message(uint8_t *buf, size_t cap, unsigned kind, gb_slice channel, gb_slice pattern,
                             gb_slice payload)
{
    uint64_t need = add(add(add(GB_SBE_HEADER_SIZE + GB_SBE_MESSAGE_BLOCK_LENGTH, var_size(channel)),
                            var_size(pattern)),
                        var_size(payload));
    size_t n = check_fit(buf, cap, need);
    if (!n || !buf)
        return n;
    gb_sbe_write_header(buf, GB_SBE_MESSAGE_BLOCK_LENGTH, GB_SBE_MESSAGE);
    uint8_t *p = buf + GB_SBE_HEADER_SIZE;
    p[GB_SBE_MESSAGE_KIND_OFFSET] = (uint8_t)kind;
    p += GB_SBE_MESSAGE_BLOCK_LENGTH;
    p = gb_sbe_put_var(p, channel.ptr, channel.len);
    p = gb_sbe_put_var(p, pattern.ptr, pattern.len);
    gb_sbe_put_var(p, payload.ptr, payload.len);
    return n;
}

size_t gb_sbe_encode_subscription(uint8_t *buf, size_t cap, unsigned kind, const gb_slice *name, int64_t count)
{
    gb_slice nm = name ? *name : gb_slice_make(NULL, 0);
    size_t n = check_fit(buf, cap, add(GB_SBE_HEADER_SIZE + GB_SBE_SUBSCRIPTION_BLOCK_LENGTH, var_size(nm)));
    if (!n || !buf)
        return n;
    gb_sbe_write_header(buf, GB_SBE_SUBSCRIPTION_BLOCK_LENGTH, GB_SBE_SUBSCRIPTION);
    uint8_t *p = buf + GB_SBE_HEADER_SIZE;
    gb_sbe_put_i64(p + GB_SBE_SUBSCRIPTION_COUNT_OFFSET, count);
    p[GB_SBE_SUBSCRIPTION_KIND_OFFSET] = (uint8_t)kind;
    p[GB_SBE_SUBSCRIPTION_NAME_NULL_OFFSET] = name ? 0 : 1;
    gb_sbe_put_var(p + GB_SBE_SUBSCRIPTION_BLOCK_LENGTH, nm.ptr, nm.len);
    return n;
}

int gb_sbe_decode_push(const uint8_t *msg, size_t len, gb_sbe_push_view *v)
{
    gb_sbe_header h;
    if (!gb_sbe_read_header(msg, len, &h) || h.schema_id != GB_SBE_SCHEMA_ID)
        return GB_EPROTO;
    memset(v, 0, sizeof *v);
    v->template_id = h.template_id;
    gb_sbe_cursor c = {msg + GB_SBE_HEADER_SIZE, msg + len};
    const uint8_t *blk;
    if (h.template_id == GB_SBE_MESSAGE) {
        if (h.block_length < GB_SBE_MESSAGE_BLOCK_LENGTH || !gb_sbe_take(&c, h.block_length, &blk))
            return GB_EPROTO;
        v->kind = blk[GB_SBE_MESSAGE_KIND_OFFSET];
        if (v->kind < GB_SBE_MSG_MESSAGE || v->kind > GB_SBE_MSG_SMESSAGE)
            return GB_EPROTO;
        if (!gb_sbe_take_var(&c, &v->channel) || !gb_sbe_take_var(&c, &v->pattern) ||
            !gb_sbe_take_var(&c, &v->payload))
            return GB_EPROTO;
        return 0;
    }
    if (h.template_id == GB_SBE_SUBSCRIPTION) {
        if (h.block_length < GB_SBE_SUBSCRIPTION_BLOCK_LENGTH || !gb_sbe_take(&c, h.block_length, &blk))
            return GB_EPROTO;
        v->count = gb_sbe_get_i64(blk + GB_SBE_SUBSCRIPTION_COUNT_OFFSET);
        v->kind = blk[GB_SBE_SUBSCRIPTION_KIND_OFFSET];
        uint8_t null = blk[GB_SBE_SUBSCRIPTION_NAME_NULL_OFFSET];
        if (v->kind < GB_SBE_SUB_SUBSCRIBE || v->kind > GB_SBE_SUB_SUNSUBSCRIBE || null > 1)
            return GB_EPROTO;
        v->name_is_null = null;
        if (!gb_sbe_take_var(&c, &v->channel))
            return GB_EPROTO;
        return 0;
    }
    return GB_ENOENT;
}

/* ---- metadata -------------------------------------------------------------------- */

#define F(name, type, prim, off, size) {name, type, prim, off, size}
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *const d_key[] = {"key"};
static const char *const d_key_value[] = {"key", "value"};
static const char *const d_key_field[] = {"key", "field"};
static const char *const d_key_member[] = {"key", "member"};
static const char *const d_field_value[] = {"field", "value"};
static const char *const d_member[] = {"member"};
static const char *const d_value[] = {"value"};
static const char *const d_arg[] = {"arg"};
static const char *const d_channel_message[] = {"channel", "message"};
static const char *const d_text[] = {"text"};
static const char *const d_message[] = {"channel", "pattern", "payload"};
static const char *const d_name[] = {"name"};
static const char *const d_bytes[] = {"bytes"};

static const gb_sbe_field_desc f_set[] = {
    F("expiry", "int64", "int64", GB_SBE_SET_EXPIRY_OFFSET, 8),
    F("flags", "SetFlags", "uint8", GB_SBE_SET_FLAGS_OFFSET, 1),
};
static const gb_sbe_field_desc f_incr[] = {F("delta", "int64", "int64", GB_SBE_INCR_DELTA_OFFSET, 8)};
static const gb_sbe_field_desc f_zadd[] = {F("flags", "ZAddFlags", "uint8", GB_SBE_ZADD_FLAGS_OFFSET, 1)};
static const gb_sbe_field_desc f_zadd_member[] = {
    F("score", "double", "double", GB_SBE_ZADD_MEMBER_SCORE_OFFSET, 8)};
static const gb_sbe_field_desc f_blpop[] = {F("timeout", "double", "double", GB_SBE_BLPOP_TIMEOUT_OFFSET, 8)};
static const gb_sbe_field_desc f_xadd[] = {
    F("idMs", "uint64", "uint64", GB_SBE_XADD_ID_MS_OFFSET, 8),
    F("idSeq", "uint64", "uint64", GB_SBE_XADD_ID_SEQ_OFFSET, 8),
    F("maxLen", "int64", "int64", GB_SBE_XADD_MAXLEN_OFFSET, 8),
    F("minIdMs", "uint64", "uint64", GB_SBE_XADD_MINID_MS_OFFSET, 8),
    F("minIdSeq", "uint64", "uint64", GB_SBE_XADD_MINID_SEQ_OFFSET, 8),
    F("limit", "int64", "int64", GB_SBE_XADD_LIMIT_OFFSET, 8),
    F("flags", "XAddFlags", "uint8", GB_SBE_XADD_FLAGS_OFFSET, 1),
};
static const gb_sbe_field_desc f_int_reply[] = {
    F("value", "int64", "int64", GB_SBE_INTEGER_REPLY_VALUE_OFFSET, 8)};
static const gb_sbe_field_desc f_dbl_reply[] = {
    F("value", "double", "double", GB_SBE_DOUBLE_REPLY_VALUE_OFFSET, 8)};
static const gb_sbe_field_desc f_array[] = {
    F("length", "int64", "int64", GB_SBE_ARRAY_REPLY_LENGTH_OFFSET, 8)};
static const gb_sbe_field_desc f_array_item[] = {
    F("integer", "int64", "int64", GB_SBE_ARRAY_ITEM_INTEGER_OFFSET, 8),
    F("dbl", "double", "double", GB_SBE_ARRAY_ITEM_DBL_OFFSET, 8),
    F("kind", "ReplyKind", "uint8", GB_SBE_ARRAY_ITEM_KIND_OFFSET, 1),
};

static const gb_sbe_field_desc f_message[] = {F("kind", "MessageKind", "uint8", GB_SBE_MESSAGE_KIND_OFFSET, 1)};
static const gb_sbe_field_desc f_subscription[] = {
    F("count", "int64", "int64", GB_SBE_SUBSCRIPTION_COUNT_OFFSET, 8),
    F("kind", "SubscriptionKind", "uint8", GB_SBE_SUBSCRIPTION_KIND_OFFSET, 1),
    F("nameIsNull", "BooleanType", "uint8", GB_SBE_SUBSCRIPTION_NAME_NULL_OFFSET, 1),
};

static const gb_sbe_group_desc g_del[] = {{"keys", "groupSizeEncoding", 0, NULL, 0, d_key, 1}};
static const gb_sbe_group_desc g_hset[] = {{"fields", "groupSizeEncoding", 0, NULL, 0, d_field_value, 2}};
static const gb_sbe_group_desc g_zadd[] = {{"members", "groupSizeEncoding", GB_SBE_ZADD_MEMBER_BLOCK_LENGTH,
                                            f_zadd_member, COUNT(f_zadd_member), d_member, 1}};
static const gb_sbe_group_desc g_xadd[] = {{"fields", "groupSizeEncoding", 0, NULL, 0, d_field_value, 2}};
static const gb_sbe_group_desc g_lpush[] = {{"values", "groupSizeEncoding", 0, NULL, 0, d_value, 1}};
static const gb_sbe_group_desc g_generic[] = {{"args", "largeGroupSizeEncoding", 0, NULL, 0, d_arg, 1}};
static const gb_sbe_group_desc g_array[] = {{"items", "largeGroupSizeEncoding", GB_SBE_ARRAY_ITEM_BLOCK_LENGTH,
                                             f_array_item, COUNT(f_array_item), d_bytes, 1}};

const gb_sbe_message_desc gb_sbe_messages[] = {
    {"Ping", GB_SBE_PING, 0, NULL, 0, NULL, 0, NULL, 0},
    {"Get", GB_SBE_GET, 0, NULL, 0, NULL, 0, d_key, 1},
    {"Set", GB_SBE_SET, GB_SBE_SET_BLOCK_LENGTH, f_set, COUNT(f_set), NULL, 0, d_key_value, 2},
    {"Del", GB_SBE_DEL, 0, NULL, 0, g_del, 1, NULL, 0},
    {"Incr", GB_SBE_INCR, GB_SBE_INCR_BLOCK_LENGTH, f_incr, COUNT(f_incr), NULL, 0, d_key, 1},
    {"HSet", GB_SBE_HSET, 0, NULL, 0, g_hset, 1, d_key, 1},
    {"HGet", GB_SBE_HGET, 0, NULL, 0, NULL, 0, d_key_field, 2},
    {"ZAdd", GB_SBE_ZADD, GB_SBE_ZADD_BLOCK_LENGTH, f_zadd, COUNT(f_zadd), g_zadd, 1, d_key, 1},
    {"ZScore", GB_SBE_ZSCORE, 0, NULL, 0, NULL, 0, d_key_member, 2},
    {"LPush", GB_SBE_LPUSH, 0, NULL, 0, g_lpush, 1, d_key, 1},
    {"RPop", GB_SBE_RPOP, 0, NULL, 0, NULL, 0, d_key, 1},
    {"BLPop", GB_SBE_BLPOP, GB_SBE_BLPOP_BLOCK_LENGTH, f_blpop, COUNT(f_blpop), g_del, 1, NULL, 0},
    {"Generic", GB_SBE_GENERIC, 0, NULL, 0, g_generic, 1, NULL, 0},
    {"Publish", GB_SBE_PUBLISH, 0, NULL, 0, NULL, 0, d_channel_message, 2},
    {"XAdd", GB_SBE_XADD, GB_SBE_XADD_BLOCK_LENGTH, f_xadd, COUNT(f_xadd), g_xadd, 1, d_key, 1},
    {"StatusReply", GB_SBE_STATUS_REPLY, 0, NULL, 0, NULL, 0, d_text, 1},
    {"ErrorReply", GB_SBE_ERROR_REPLY, 0, NULL, 0, NULL, 0, d_text, 1},
    {"IntegerReply", GB_SBE_INTEGER_REPLY, GB_SBE_INTEGER_REPLY_BLOCK_LENGTH, f_int_reply, 1, NULL, 0, NULL, 0},
    {"DoubleReply", GB_SBE_DOUBLE_REPLY, GB_SBE_DOUBLE_REPLY_BLOCK_LENGTH, f_dbl_reply, 1, NULL, 0, NULL, 0},
    {"BulkReply", GB_SBE_BULK_REPLY, 0, NULL, 0, NULL, 0, d_value, 1},
    {"NilReply", GB_SBE_NIL_REPLY, 0, NULL, 0, NULL, 0, NULL, 0},
    {"ArrayReply", GB_SBE_ARRAY_REPLY, GB_SBE_ARRAY_REPLY_BLOCK_LENGTH, f_array, COUNT(f_array), g_array, 1, NULL,
     0},
    {"Message", GB_SBE_MESSAGE, GB_SBE_MESSAGE_BLOCK_LENGTH, f_message, COUNT(f_message), NULL, 0, d_message, 3},
    {"Subscription", GB_SBE_SUBSCRIPTION, GB_SBE_SUBSCRIPTION_BLOCK_LENGTH, f_subscription, COUNT(f_subscription),
     NULL, 0, d_name, 1},
};
const size_t gb_sbe_message_count = COUNT(gb_sbe_messages);

const char *gb_sbe_template_name(unsigned id)
{
    for (size_t i = 0; i < gb_sbe_message_count; i++)
        if (gb_sbe_messages[i].id == id)
            return gb_sbe_messages[i].name;
    return NULL;
}
