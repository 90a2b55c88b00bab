/*
 * The SBE codec (transport/sbe/sbe_codec.c, sbe_client.c): every request
 * template encodes and decodes back to the same values (empty groups,
 * zero-length var-data, the largest counts); encoders respect capacity;
 * decoders reject truncation, forged counts and short blocks, and accept a
 * newer peer's longer blocks and trailing data; reply messages decode into
 * view trees (nested and null arrays included).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "transport/sbe/sbe_client.h"
#include "transport/sbe/sbe_codec.h"

static void assert_slice(gb_slice s, const char *ptr, size_t len)
{
    assert_int_equal(s.len, len);
    if (len)
        assert_memory_equal(s.ptr, ptr, len);
}

static void assert_slice_eq(gb_slice a, gb_slice b) { assert_slice(a, b.ptr, b.len); }

/* Encodes with buf == NULL (sizing), with one byte too few (0, no write past
 * the capacity), and for real; returns a malloc'd message. */
typedef size_t (*encode_fn)(uint8_t *buf, size_t cap, void *ctx);

static uint8_t *encode_checked(encode_fn fn, void *ctx, size_t *len)
{
    size_t need = fn(NULL, 0, ctx);
    assert_true(need >= GB_SBE_HEADER_SIZE);
    uint8_t *buf = malloc(need + 16);
    memset(buf, 0xA5, need + 16);
    assert_int_equal(fn(buf, need - 1, ctx), 0);
    for (size_t i = 0; i < need + 16; i++)
        assert_int_equal(buf[i], 0xA5); /* nothing written when it does not fit */
    assert_int_equal(fn(buf, need, ctx), need);
    for (size_t i = need; i < need + 16; i++)
        assert_int_equal(buf[i], 0xA5);
    *len = need;
    return buf;
}

/* Every strict prefix of a valid request is rejected (all fields are
 * required), never read past. */
static void assert_prefixes_rejected(const uint8_t *msg, size_t len)
{
    gb_sbe_scratch s = {0};
    for (size_t n = 0; n < len; n++) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, msg, n);
        gb_sbe_request req;
        const char *why = NULL;
        int rc = gb_sbe_decode_request(copy, n, &req, &s, &why);
        if (n < GB_SBE_HEADER_SIZE)
            assert_int_equal(rc, GB_EPROTO);
        else
            assert_int_equal(rc, GB_EPARSE);
        assert_non_null(why);
        free(copy);
    }
    gb_sbe_scratch_free(&s);
}

static gb_sbe_scratch g_scratch;

static void decode_ok(const uint8_t *msg, size_t len, gb_sbe_request *req, unsigned tid)
{
    const char *why = NULL;
    int rc = gb_sbe_decode_request(msg, len, req, &g_scratch, &why);
    if (rc)
        fail_msg("decode of template %u failed: %d %s", tid, rc, why ? why : "");
    assert_int_equal(req->hdr.template_id, tid);
    assert_int_equal(req->hdr.schema_id, GB_SBE_SCHEMA_ID);
    assert_int_equal(req->hdr.version, GB_SBE_SCHEMA_VERSION);
}

/* ---- requests ------------------------------------------------------------------------ */

typedef struct req_spec {
    unsigned tid;
    gb_slice key, arg;
    unsigned flags;
    int64_t i64;
    double f64;
    size_t n;
    const gb_slice *a, *b;
    const double *d;
    gb_sbe_xadd_opts xo; /* XAdd */
} req_spec;

static size_t enc_spec(uint8_t *buf, size_t cap, void *ctx)
{
    const req_spec *s = ctx;
    switch (s->tid) {
    case GB_SBE_PING: return gb_sbe_encode_ping(buf, cap);
    case GB_SBE_GET: return gb_sbe_encode_get(buf, cap, s->key);
    case GB_SBE_SET: return gb_sbe_encode_set(buf, cap, s->key, s->arg, s->flags, s->i64);
    case GB_SBE_DEL: return gb_sbe_encode_del(buf, cap, s->n, s->a);
    case GB_SBE_INCR: return gb_sbe_encode_incr(buf, cap, s->key, s->i64);
    case GB_SBE_HSET: return gb_sbe_encode_hset(buf, cap, s->key, s->n, s->a, s->b);
    case GB_SBE_HGET: return gb_sbe_encode_hget(buf, cap, s->key, s->arg);
    case GB_SBE_ZADD: return gb_sbe_encode_zadd(buf, cap, s->key, s->flags, s->n, s->d, s->a);
    case GB_SBE_ZSCORE: return gb_sbe_encode_zscore(buf, cap, s->key, s->arg);
    case GB_SBE_LPUSH: return gb_sbe_encode_lpush(buf, cap, s->key, s->n, s->a);
    case GB_SBE_RPOP: return gb_sbe_encode_rpop(buf, cap, s->key);
    case GB_SBE_BLPOP: return gb_sbe_encode_blpop(buf, cap, s->n, s->a, s->f64);
    case GB_SBE_GENERIC: return gb_sbe_encode_generic(buf, cap, s->n, s->a);
    case GB_SBE_PUBLISH: return gb_sbe_encode_publish(buf, cap, s->key, s->arg);
    case GB_SBE_XADD: return gb_sbe_encode_xadd(buf, cap, s->key, &s->xo, s->n, s->a, s->b);
    }
    fail();
    return 0;
}

static bool same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Encode, decode, compare every field; then every prefix is rejected. */
static void round_trip(const req_spec *s, bool prefixes)
{
    size_t len;
    uint8_t *msg = encode_checked(enc_spec, (void *)s, &len);
    gb_sbe_request q;
    decode_ok(msg, len, &q, s->tid);
    switch (s->tid) {
    case GB_SBE_GET:
    case GB_SBE_RPOP:
        assert_slice_eq(q.key, s->key);
        break;
    case GB_SBE_HGET:
    case GB_SBE_ZSCORE:
    case GB_SBE_PUBLISH:
        assert_slice_eq(q.key, s->key);
        assert_slice_eq(q.arg, s->arg);
        break;
    case GB_SBE_SET:
        assert_slice_eq(q.key, s->key);
        assert_slice_eq(q.arg, s->arg);
        assert_int_equal(q.flags, s->flags);
        assert_int_equal(q.i64, s->i64);
        break;
    case GB_SBE_INCR:
        assert_slice_eq(q.key, s->key);
        assert_int_equal(q.i64, s->i64);
        break;
    case GB_SBE_DEL:
    case GB_SBE_GENERIC:
    case GB_SBE_BLPOP:
    case GB_SBE_LPUSH:
    case GB_SBE_HSET:
    case GB_SBE_ZADD:
        assert_int_equal(q.n, s->n);
        for (size_t i = 0; i < s->n; i++) {
            assert_slice_eq(q.a[i], s->a[i]);
            if (s->tid == GB_SBE_HSET)
                assert_slice_eq(q.b[i], s->b[i]);
            if (s->tid == GB_SBE_ZADD)
                assert_true(same_double(q.d[i], s->d[i]));
        }
        if (s->tid == GB_SBE_LPUSH || s->tid == GB_SBE_HSET || s->tid == GB_SBE_ZADD)
            assert_slice_eq(q.key, s->key);
        if (s->tid == GB_SBE_ZADD)
            assert_int_equal(q.flags, s->flags);
        if (s->tid == GB_SBE_BLPOP)
            assert_true(same_double(q.f64, s->f64));
        break;
    case GB_SBE_XADD:
        assert_slice_eq(q.key, s->key);
        assert_int_equal(q.flags, s->xo.flags);
        assert_int_equal(q.xadd.flags, s->xo.flags);
        assert_true(q.xadd.id_ms == s->xo.id_ms && q.xadd.id_seq == s->xo.id_seq);
        assert_true(q.xadd.maxlen == s->xo.maxlen && q.xadd.limit == s->xo.limit);
        assert_true(q.xadd.minid_ms == s->xo.minid_ms && q.xadd.minid_seq == s->xo.minid_seq);
        assert_int_equal(q.n, s->n);
        for (size_t i = 0; i < s->n; i++) { /* interleaved: field, value, field ... */
            assert_slice_eq(q.a[2 * i], s->a[i]);
            assert_slice_eq(q.a[2 * i + 1], s->b[i]);
        }
        break;
    }
    if (prefixes)
        assert_prefixes_rejected(msg, len);
    free(msg);
}

static const gb_slice K = {"key", 3}, V = {"value", 5}, E = {"", 0};

static void test_scalar_templates(void **state)
{
    (void)state;
    static const unsigned keyed[] = {GB_SBE_GET, GB_SBE_RPOP, GB_SBE_HGET, GB_SBE_ZSCORE, GB_SBE_PUBLISH};
    for (size_t i = 0; i < sizeof keyed / sizeof keyed[0]; i++) {
        req_spec s = {.tid = keyed[i], .key = K, .arg = V};
        round_trip(&s, true);
        req_spec z = {.tid = keyed[i], .key = E, .arg = E}; /* zero-length var-data */
        round_trip(&z, true);
    }
    req_spec ping = {.tid = GB_SBE_PING};
    round_trip(&ping, true);
    for (unsigned f = 0; f < 256; f += 17) {
        req_spec s = {.tid = GB_SBE_SET, .key = K, .arg = V, .flags = f, .i64 = (int64_t)f * -123456789};
        round_trip(&s, f == 0);
    }
    req_spec se = {.tid = GB_SBE_SET, .key = E, .arg = E, .flags = 0xff, .i64 = INT64_MIN};
    round_trip(&se, true);
    int64_t deltas[] = {1, -1, 0, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < 5; i++) {
        req_spec s = {.tid = GB_SBE_INCR, .key = K, .i64 = deltas[i]};
        round_trip(&s, i == 0);
    }
}

static void test_group_templates(void **state)
{
    (void)state;
    gb_slice items[5] = {{"a", 1}, {"", 0}, {"ccc", 3}, {"\0\1\2", 3}, {"e", 1}};
    gb_slice vals[5] = {{"1", 1}, {"22", 2}, {"", 0}, {"4444", 4}, {"5", 1}};
    double scores[5] = {1.5, -0.0, INFINITY, -INFINITY, 0x1.fffffffffffffp+1023};
    static const unsigned tids[] = {GB_SBE_DEL,  GB_SBE_LPUSH, GB_SBE_BLPOP,
                                    GB_SBE_HSET, GB_SBE_ZADD,  GB_SBE_GENERIC};
    for (size_t t = 0; t < sizeof tids / sizeof tids[0]; t++) {
        for (size_t n = 0; n <= 5; n++) { /* n = 0: the empty group */
            req_spec s = {.tid = tids[t], .key = n == 2 ? E : K, .n = n, .a = items, .b = vals, .d = scores,
                          .flags = GB_SBE_ZADD_CH | GB_SBE_ZADD_GT, .f64 = 0.25 * (double)n};
            round_trip(&s, n == 0 || n == 3);
        }
    }
    /* NaN scores travel bit for bit (the server decides what they mean). */
    double nan_score = NAN;
    req_spec s = {.tid = GB_SBE_ZADD, .key = K, .n = 1, .a = items, .d = &nan_score};
    round_trip(&s, false);
}

static void test_max_sizes(void **state)
{
    (void)state;
    /* The largest typed group: 65535 entries; one more does not encode. */
    size_t n = GB_SBE_GROUP_MAX;
    gb_slice *keys = calloc(n + 1, sizeof *keys);
    double *scores = calloc(n + 1, sizeof *scores);
    for (size_t i = 0; i <= n; i++) {
        keys[i] = gb_slice_make("member", i % 7);
        scores[i] = (double)i;
    }
    req_spec del = {.tid = GB_SBE_DEL, .n = n, .a = keys};
    round_trip(&del, false);
    req_spec zadd = {.tid = GB_SBE_ZADD, .key = K, .n = n, .a = keys, .d = scores};
    round_trip(&zadd, false);
    req_spec hset = {.tid = GB_SBE_HSET, .key = K, .n = n, .a = keys, .b = keys};
    round_trip(&hset, false);
    assert_int_equal(gb_sbe_encode_del(NULL, 0, n + 1, keys), 0);
    assert_int_equal(gb_sbe_encode_lpush(NULL, 0, K, n + 1, keys), 0);
    assert_int_equal(gb_sbe_encode_blpop(NULL, 0, n + 1, keys, 1), 0);
    assert_int_equal(gb_sbe_encode_hset(NULL, 0, K, n + 1, keys, keys), 0);
    assert_int_equal(gb_sbe_encode_zadd(NULL, 0, K, 0, n + 1, scores, keys), 0);
    /* Generic's group has a 32-bit count: past 65535 is fine. */
    req_spec gen = {.tid = GB_SBE_GENERIC, .n = n + 1, .a = keys};
    round_trip(&gen, false);
    free(keys);
    free(scores);

    /* A 4 MiB value (above uint16's reach: why var-data lengths are u32). */
    size_t big = 4u << 20;
    char *v = malloc(big);
    for (size_t i = 0; i < big; i++)
        v[i] = (char)(i * 31);
    req_spec set = {.tid = GB_SBE_SET, .key = K, .arg = gb_slice_make(v, big)};
    round_trip(&set, false);
    free(v);
    /* Over the schema's var-data maximum: never encoded (the bytes are not touched). */
    gb_slice huge = gb_slice_make("x", (size_t)GB_SBE_VAR_MAX + 1);
    assert_int_equal(gb_sbe_encode_get(NULL, 0, huge), 0);
    assert_int_equal(gb_sbe_encode_set(NULL, 0, K, huge, 0, 0), 0);
    assert_int_equal(gb_sbe_encode_bulk_reply(NULL, 0, huge.ptr, huge.len), 0);
    assert_int_equal(gb_sbe_encode_set(NULL, 0, K, V, 0x100, 0), 0); /* flags are one byte */
}

/* ---- hostile and evolved requests ------------------------------------------------- */

static size_t build(uint8_t *buf, uint16_t bl, uint16_t tid, uint16_t schema)
{
    gb_sbe_put_u16(buf, bl);
    gb_sbe_put_u16(buf + 2, tid);
    gb_sbe_put_u16(buf + 4, schema);
    gb_sbe_put_u16(buf + 6, 1);
    return GB_SBE_HEADER_SIZE;
}

static void test_rejects(void **state)
{
    (void)state;
    uint8_t buf[256];
    gb_sbe_request q;
    const char *why;
    /* Another schema, a reply template, an unknown id. */
    size_t n = gb_sbe_encode_ping(buf, sizeof buf);
    gb_sbe_put_u16(buf + 4, 1);
    assert_int_equal(gb_sbe_decode_request(buf, n, &q, &g_scratch, &why), GB_EPROTO);
    build(buf, 0, GB_SBE_NIL_REPLY, GB_SBE_SCHEMA_ID);
    assert_int_equal(gb_sbe_decode_request(buf, 8, &q, &g_scratch, &why), GB_ENOENT);
    build(buf, 0, 0, GB_SBE_SCHEMA_ID);
    assert_int_equal(gb_sbe_decode_request(buf, 8, &q, &g_scratch, &why), GB_ENOENT);
    build(buf, 0, 60000, GB_SBE_SCHEMA_ID);
    assert_int_equal(gb_sbe_decode_request(buf, 8, &q, &g_scratch, &why), GB_ENOENT);

    /* A root block shorter than this version's. */
    n = gb_sbe_encode_set(buf, sizeof buf, K, V, 0, 0);
    gb_sbe_put_u16(buf, GB_SBE_SET_BLOCK_LENGTH - 1);
    assert_int_equal(gb_sbe_decode_request(buf, n, &q, &g_scratch, &why), GB_EPARSE);
    /* A root block longer than the message. */
    n = gb_sbe_encode_get(buf, sizeof buf, K);
    gb_sbe_put_u16(buf, 60000);
    assert_int_equal(gb_sbe_decode_request(buf, n, &q, &g_scratch, &why), GB_EPARSE);
    /* A var-data length past the end, and one of 4 GiB - 1. */
    n = gb_sbe_encode_get(buf, sizeof buf, K);
    gb_sbe_put_u32(buf + 8, 4);
    assert_int_equal(gb_sbe_decode_request(buf, n, &q, &g_scratch, &why), GB_EPARSE);
    gb_sbe_put_u32(buf + 8, UINT32_MAX);
    assert_int_equal(gb_sbe_decode_request(buf, n, &q, &g_scratch, &why), GB_EPARSE);
    /* ZADD: unknown flag bits; a member block shorter than a score. */
    double one = 1;
    n = gb_sbe_encode_zadd(buf, sizeof buf, K, 0, 1, &one, &V);
    buf[8] = 0x40;
    assert_int_equal(gb_sbe_decode_request(buf, n, &q, &g_scratch, &why), GB_EPARSE);
    assert_string_equal(why, "unknown flag bits");
    buf[8] = 0;
    gb_sbe_put_u16(buf + 9, 4);
    assert_int_equal(gb_sbe_decode_request(buf, n, &q, &g_scratch, &why), GB_EPARSE);

    /* Forged counts are rejected before anything is sized by them. */
    gb_sbe_scratch small = {0};
    n = build(buf, 0, GB_SBE_DEL, GB_SBE_SCHEMA_ID);
    gb_sbe_put_u16(buf + n, 0);
    gb_sbe_put_u16(buf + n + 2, 65535);
    assert_int_equal(gb_sbe_decode_request(buf, n + 4, &q, &small, &why), GB_EPARSE);
    n = build(buf, 0, GB_SBE_GENERIC, GB_SBE_SCHEMA_ID);
    gb_sbe_put_u16(buf + n, 0);
    gb_sbe_put_u32(buf + n + 2, UINT32_MAX);
    assert_int_equal(gb_sbe_decode_request(buf, n + 6 + 64, &q, &small, &why), GB_EPARSE);
    /* ... and a huge entry block length likewise. */
    n = build(buf, 0, GB_SBE_LPUSH, GB_SBE_SCHEMA_ID);
    gb_sbe_put_u16(buf + n, 65535);
    gb_sbe_put_u16(buf + n + 2, 2);
    assert_int_equal(gb_sbe_decode_request(buf, n + 4 + 100, &q, &small, &why), GB_EPARSE);
    assert_int_equal(small.cap, 0);
    gb_sbe_scratch_free(&small);
}

static void test_newer_peer(void **state)
{
    (void)state;
    /* A v2 client appended 4 bytes to Set's root block, 3 to ZAdd's member
     * entries and a var-data field after the key: v1 decodes the v1 values. */
    uint8_t buf[256];
    size_t n = build(buf, GB_SBE_SET_BLOCK_LENGTH + 4, GB_SBE_SET, GB_SBE_SCHEMA_ID);
    gb_sbe_put_i64(buf + n, 1234);
    buf[n + 8] = GB_SBE_SET_PX | GB_SBE_SET_NX;
    memset(buf + n + 9, 0xEE, 4);
    n += GB_SBE_SET_BLOCK_LENGTH + 4;
    n = (size_t)(gb_sbe_put_var(buf + n, "k", 1) - buf);
    n = (size_t)(gb_sbe_put_var(buf + n, "v", 1) - buf);
    n = (size_t)(gb_sbe_put_var(buf + n, "future", 6) - buf);
    gb_sbe_request q;
    decode_ok(buf, n, &q, GB_SBE_SET);
    assert_int_equal(q.i64, 1234);
    assert_int_equal(q.flags, GB_SBE_SET_PX | GB_SBE_SET_NX);
    assert_slice(q.key, "k", 1);
    assert_slice(q.arg, "v", 1);

    n = build(buf, GB_SBE_ZADD_BLOCK_LENGTH + 2, GB_SBE_ZADD, GB_SBE_SCHEMA_ID);
    buf[n] = GB_SBE_ZADD_CH;
    n += GB_SBE_ZADD_BLOCK_LENGTH + 2;
    gb_sbe_put_u16(buf + n, GB_SBE_ZADD_MEMBER_BLOCK_LENGTH + 3);
    gb_sbe_put_u16(buf + n + 2, 2);
    n += 4;
    for (int i = 0; i < 2; i++) {
        gb_sbe_put_f64(buf + n, 10.5 + i);
        n += GB_SBE_ZADD_MEMBER_BLOCK_LENGTH + 3;
        n = (size_t)(gb_sbe_put_var(buf + n, i ? "m2" : "m1", 2) - buf);
    }
    n = (size_t)(gb_sbe_put_var(buf + n, "zk", 2) - buf);
    decode_ok(buf, n, &q, GB_SBE_ZADD);
    assert_int_equal(q.flags, GB_SBE_ZADD_CH);
    assert_int_equal(q.n, 2);
    assert_true(q.d[0] == 10.5 && q.d[1] == 11.5);
    assert_slice(q.a[1], "m2", 2);
    assert_slice(q.key, "zk", 2);
}

/* ---- XAdd ------------------------------------------------------------------------- */

static void test_xadd_template(void **state)
{
    (void)state;
    gb_slice f[5] = {{"a", 1}, {"", 0}, {"ccc", 3}, {"\0\1\2", 3}, {"e", 1}};
    gb_slice v[5] = {{"1", 1}, {"22", 2}, {"", 0}, {"4444", 4}, {"5", 1}};
    /* Every flag, the extremes of every number, zero to five pairs. */
    const gb_sbe_xadd_opts opts[] = {
        {.flags = GB_SBE_XADD_AUTO_ID},
        {.flags = 0, .id_ms = 1, .id_seq = 2},
        {.flags = GB_SBE_XADD_AUTO_SEQ | GB_SBE_XADD_NOMKSTREAM, .id_ms = UINT64_MAX},
        {.flags = GB_SBE_XADD_MAXLEN | GB_SBE_XADD_APPROX | GB_SBE_XADD_LIMIT, .id_ms = UINT64_MAX,
         .id_seq = UINT64_MAX, .maxlen = INT64_MIN, .limit = INT64_MAX},
        {.flags = GB_SBE_XADD_MINID, .minid_ms = UINT64_MAX, .minid_seq = 7, .limit = -1},
        {.flags = GB_SBE_XADD_ALL & ~GB_SBE_XADD_AUTO_SEQ, .maxlen = 5, .minid_ms = 1, .minid_seq = UINT64_MAX,
         .limit = 100},
    };
    for (size_t o = 0; o < sizeof opts / sizeof opts[0]; o++) {
        for (size_t n = 0; n <= 5; n++) {
            req_spec s = {.tid = GB_SBE_XADD, .key = n == 2 ? E : K, .n = n, .a = f, .b = v, .xo = opts[o]};
            round_trip(&s, n == 0 || n == 3);
        }
    }

    /* The largest group: 65535 pairs; one more, or flags over a byte, do not encode. */
    size_t max = GB_SBE_GROUP_MAX;
    gb_slice *many = calloc(max + 1, sizeof *many);
    for (size_t i = 0; i <= max; i++)
        many[i] = gb_slice_make("field", i % 6);
    req_spec big = {.tid = GB_SBE_XADD, .key = K, .n = max, .a = many, .b = many, .xo = opts[1]};
    round_trip(&big, false);
    assert_int_equal(gb_sbe_encode_xadd(NULL, 0, K, &opts[1], max + 1, many, many), 0);
    gb_sbe_xadd_opts wide = {.flags = 0x100};
    assert_int_equal(gb_sbe_encode_xadd(NULL, 0, K, &wide, 1, many, many), 0);
    free(many);

    /* Hostile: flags the schema refuses, a short root block, a forged count,
     * an entry block larger than the message; never a read past the end. */
    uint8_t buf[512];
    gb_sbe_request q;
    const char *why;
    size_t n = gb_sbe_encode_xadd(buf, sizeof buf, K, &opts[1], 1, &V, &V);
    static const struct {
        uint8_t flags;
        const char *why;
    } refused[] = {
        {0x80, "unknown flag bits"},
        {GB_SBE_XADD_AUTO_ID | GB_SBE_XADD_AUTO_SEQ, "autoId and autoSeq both set"},
        {GB_SBE_XADD_APPROX, "approx set without maxLen or minId"},
        {GB_SBE_XADD_APPROX | GB_SBE_XADD_LIMIT, "approx set without maxLen or minId"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        buf[GB_SBE_HEADER_SIZE + GB_SBE_XADD_FLAGS_OFFSET] = refused[i].flags;
        assert_int_equal(gb_sbe_decode_request(buf, n, &q, &g_scratch, &why), GB_EPARSE);
        assert_string_equal(why, refused[i].why);
    }
    buf[GB_SBE_HEADER_SIZE + GB_SBE_XADD_FLAGS_OFFSET] = 0;
    decode_ok(buf, n, &q, GB_SBE_XADD);
    gb_sbe_put_u16(buf, GB_SBE_XADD_BLOCK_LENGTH - 1);
    assert_int_equal(gb_sbe_decode_request(buf, n, &q, &g_scratch, &why), GB_EPARSE);
    gb_sbe_put_u16(buf, 60000);
    assert_int_equal(gb_sbe_decode_request(buf, n, &q, &g_scratch, &why), GB_EPARSE);
    gb_sbe_put_u16(buf, GB_SBE_XADD_BLOCK_LENGTH);

    gb_sbe_scratch small = {0};
    uint8_t *dim = buf + GB_SBE_HEADER_SIZE + GB_SBE_XADD_BLOCK_LENGTH;
    gb_sbe_put_u16(dim + 2, 65535); /* 65535 pairs claimed in a few bytes */
    assert_int_equal(gb_sbe_decode_request(buf, n, &q, &small, &why), GB_EPARSE);
    assert_string_equal(why, "fields group exceeds the message");
    assert_int_equal(small.cap, 0); /* nothing was sized by the forged count */
    gb_sbe_put_u16(dim + 2, 2); /* two claimed, one there: the second runs into the key */
    assert_int_equal(gb_sbe_decode_request(buf, n, &q, &small, &why), GB_EPARSE);
    gb_sbe_put_u16(dim + 2, 1);
    gb_sbe_put_u16(dim, 65535); /* an entry block past the end */
    assert_int_equal(gb_sbe_decode_request(buf, n, &q, &small, &why), GB_EPARSE);
    gb_sbe_put_u16(dim, 0);
    gb_sbe_put_u32(dim + 4, UINT32_MAX); /* the field's length */
    assert_int_equal(gb_sbe_decode_request(buf, n, &q, &small, &why), GB_EPARSE);
    gb_sbe_put_u32(dim + 4, (uint32_t)V.len);
    gb_sbe_put_u32(dim + 8 + V.len, (uint32_t)n); /* the value's length */
    assert_int_equal(gb_sbe_decode_request(buf, n, &q, &small, &why), GB_EPARSE);
    assert_true(small.cap <= 16); /* at most what the message's bytes could hold */
    gb_sbe_scratch_free(&small);

    /* A newer peer: 8 more root bytes, 3 more per entry, a var-data after the key. */
    n = build(buf, GB_SBE_XADD_BLOCK_LENGTH + 8, GB_SBE_XADD, GB_SBE_SCHEMA_ID);
    memset(buf + n, 0, GB_SBE_XADD_BLOCK_LENGTH + 8);
    gb_sbe_put_u64(buf + n + GB_SBE_XADD_ID_MS_OFFSET, 42);
    gb_sbe_put_i64(buf + n + GB_SBE_XADD_MAXLEN_OFFSET, 9);
    buf[n + GB_SBE_XADD_FLAGS_OFFSET] = GB_SBE_XADD_AUTO_SEQ | GB_SBE_XADD_MAXLEN;
    n += GB_SBE_XADD_BLOCK_LENGTH + 8;
    gb_sbe_put_u16(buf + n, 3);
    gb_sbe_put_u16(buf + n + 2, 2);
    n += 4;
    for (int i = 0; i < 2; i++) {
        memset(buf + n, 0xEE, 3);
        n += 3;
        n = (size_t)(gb_sbe_put_var(buf + n, i ? "f2" : "f1", 2) - buf);
        n = (size_t)(gb_sbe_put_var(buf + n, i ? "v2" : "v1", 2) - buf);
    }
    n = (size_t)(gb_sbe_put_var(buf + n, "sk", 2) - buf);
    n = (size_t)(gb_sbe_put_var(buf + n, "future", 6) - buf);
    decode_ok(buf, n, &q, GB_SBE_XADD);
    assert_int_equal(q.xadd.flags, GB_SBE_XADD_AUTO_SEQ | GB_SBE_XADD_MAXLEN);
    assert_true(q.xadd.id_ms == 42 && q.xadd.maxlen == 9);
    assert_int_equal(q.n, 2);
    assert_slice(q.a[2], "f2", 2);
    assert_slice(q.a[3], "v2", 2);
    assert_slice(q.key, "sk", 2);
}

/* ---- replies ---------------------------------------------------------------------- */

static void test_scalar_replies(void **state)
{
    (void)state;
    uint8_t buf[64];
    gb_sbe_reply_view v;
    size_t nn = 0;
    size_t n = gb_sbe_encode_status_reply(buf, sizeof buf, "PONG", 4);
    assert_int_equal(gb_sbe_decode_reply(buf, n, &v, NULL, &nn), 0);
    assert_int_equal(v.kind, GB_SBE_KIND_STATUS);
    assert_slice(gb_slice_make(v.ptr, v.len), "PONG", 4);
    n = gb_sbe_encode_error_reply(buf, sizeof buf, "ERR x", 5);
    assert_int_equal(gb_sbe_decode_reply(buf, n, &v, NULL, NULL), 0);
    assert_true(gb_sbe_reply_is_error(&v));
    assert_slice(gb_slice_make(v.ptr, v.len), "ERR x", 5);
    n = gb_sbe_encode_bulk_reply(buf, sizeof buf, "", 0);
    assert_int_equal(gb_sbe_decode_reply(buf, n, &v, NULL, NULL), 0);
    assert_int_equal(v.kind, GB_SBE_KIND_BULK);
    assert_int_equal(v.len, 0);
    n = gb_sbe_encode_nil_reply(buf, sizeof buf);
    assert_int_equal(gb_sbe_decode_reply(buf, n, &v, NULL, NULL), 0);
    assert_int_equal(v.kind, GB_SBE_KIND_NIL);
    n = gb_sbe_encode_integer_reply(buf, sizeof buf, INT64_MIN);
    assert_int_equal(gb_sbe_decode_reply(buf, n, &v, NULL, NULL), 0);
    assert_int_equal(v.kind, GB_SBE_KIND_INTEGER);
    assert_true(v.integer == INT64_MIN);
    double ds[] = {-0.0, 1e-308, INFINITY, NAN, 3.141592653589793};
    for (size_t i = 0; i < 5; i++) {
        n = gb_sbe_encode_double_reply(buf, sizeof buf, ds[i]);
        assert_int_equal(gb_sbe_decode_reply(buf, n, &v, NULL, NULL), 0);
        assert_int_equal(v.kind, GB_SBE_KIND_DOUBLE);
        assert_true(same_double(v.dbl, ds[i]));
    }
    /* Truncations and foreign messages. */
    n = gb_sbe_encode_status_reply(buf, sizeof buf, "OK", 2);
    for (size_t k = 0; k < n; k++)
        assert_int_equal(gb_sbe_decode_reply(buf, k, &v, NULL, NULL), GB_EPROTO);
    n = gb_sbe_encode_ping(buf, sizeof buf);
    assert_int_equal(gb_sbe_decode_reply(buf, n, &v, NULL, NULL), GB_EPROTO);
}

/* [1, ["a", [], "b"], nil, null-array, 2.5, -ERR, +OK, [[7]]] */
static const char g_arena[] = "abERR oopsOK";
static const gb_sbe_reply_item g_items[] = {
    {.kind = GB_SBE_KIND_INTEGER, .integer = 1},
    {.kind = GB_SBE_KIND_ARRAY, .integer = 3},
    {.kind = GB_SBE_KIND_BULK, .off = 0, .len = 1},
    {.kind = GB_SBE_KIND_ARRAY, .integer = 0},
    {.kind = GB_SBE_KIND_BULK, .off = 1, .len = 1},
    {.kind = GB_SBE_KIND_NIL},
    {.kind = GB_SBE_KIND_ARRAY, .integer = -1},
    {.kind = GB_SBE_KIND_DOUBLE, .dbl = 2.5},
    {.kind = GB_SBE_KIND_ERROR, .off = 2, .len = 8},
    {.kind = GB_SBE_KIND_STATUS, .off = 10, .len = 2},
    {.kind = GB_SBE_KIND_ARRAY, .integer = 1},
    {.kind = GB_SBE_KIND_ARRAY, .integer = 1},
    {.kind = GB_SBE_KIND_INTEGER, .integer = 7},
};
#define NITEMS (sizeof g_items / sizeof g_items[0])

static uint8_t *encode_tree(size_t *len)
{
    size_t need = gb_sbe_encode_array_reply(NULL, 0, 8, NITEMS, g_items, g_arena);
    assert_int_equal(need, gb_sbe_array_reply_size(NITEMS, 12));
    uint8_t *buf = malloc(need);
    assert_int_equal(gb_sbe_encode_array_reply(buf, need - 1, 8, NITEMS, g_items, g_arena), 0);
    assert_int_equal(gb_sbe_encode_array_reply(buf, need, 8, NITEMS, g_items, g_arena), need);
    *len = need;
    return buf;
}

static void test_array_reply(void **state)
{
    (void)state;
    size_t len;
    uint8_t *msg = encode_tree(&len);
    gb_sbe_reply_view root, nodes[NITEMS];
    size_t nn = 3;
    assert_int_equal(gb_sbe_decode_reply(msg, len, &root, nodes, &nn), GB_ERANGE);
    assert_int_equal(nn, NITEMS);
    nn = NITEMS;
    assert_int_equal(gb_sbe_decode_reply(msg, len, &root, nodes, &nn), 0);
    assert_int_equal(nn, NITEMS);
    assert_int_equal(root.kind, GB_SBE_KIND_ARRAY);
    assert_int_equal(root.nelems, 8);
    assert_null(root.parent);
    gb_sbe_reply_view *e = root.elems;
    assert_int_equal(e[0].kind, GB_SBE_KIND_INTEGER);
    assert_int_equal(e[0].integer, 1);
    assert_int_equal(e[1].kind, GB_SBE_KIND_ARRAY);
    assert_int_equal(e[1].nelems, 3);
    assert_ptr_equal(e[1].parent, &root);
    assert_slice(gb_slice_make(e[1].elems[0].ptr, e[1].elems[0].len), "a", 1);
    assert_int_equal(e[1].elems[1].kind, GB_SBE_KIND_ARRAY);
    assert_int_equal(e[1].elems[1].nelems, 0);
    assert_int_equal(e[1].elems[1].integer, 0);
    assert_false(gb_sbe_reply_is_null_array(&e[1].elems[1]));
    assert_slice(gb_slice_make(e[1].elems[2].ptr, e[1].elems[2].len), "b", 1);
    assert_ptr_equal(e[1].elems[2].parent, &e[1]);
    assert_int_equal(e[2].kind, GB_SBE_KIND_NIL);
    assert_true(gb_sbe_reply_is_null_array(&e[3]));
    assert_int_equal(e[3].nelems, 0);
    assert_true(e[4].kind == GB_SBE_KIND_DOUBLE && e[4].dbl == 2.5);
    assert_true(gb_sbe_reply_is_error(&e[5]));
    assert_slice(gb_slice_make(e[5].ptr, e[5].len), "ERR oops", 8);
    assert_int_equal(e[6].kind, GB_SBE_KIND_STATUS);
    assert_int_equal(e[7].nelems, 1);
    assert_int_equal(e[7].elems[0].nelems, 1);
    assert_int_equal(e[7].elems[0].elems[0].integer, 7);
    for (size_t i = 0; i < NITEMS; i++)
        if (nodes[i].kind == GB_SBE_KIND_ARRAY)
            assert_int_equal(nodes[i].len, 0); /* the fill counters are cleared */

    /* Every prefix is rejected. */
    for (size_t k = 0; k < len; k++) {
        nn = NITEMS;
        int rc = gb_sbe_decode_reply(msg, k, &root, nodes, &nn);
        assert_true(rc == GB_EPROTO);
    }
    free(msg);

    /* Null and empty arrays at the top. */
    uint8_t buf[64];
    size_t n = gb_sbe_encode_array_reply(buf, sizeof buf, -1, 0, NULL, NULL);
    nn = 0;
    assert_int_equal(gb_sbe_decode_reply(buf, n, &root, NULL, &nn), 0);
    assert_true(gb_sbe_reply_is_null_array(&root));
    n = gb_sbe_encode_array_reply(buf, sizeof buf, 0, 0, NULL, NULL);
    assert_int_equal(gb_sbe_decode_reply(buf, n, &root, NULL, &nn), 0);
    assert_int_equal(root.kind, GB_SBE_KIND_ARRAY);
    assert_int_equal(root.nelems, 0);
    assert_false(gb_sbe_reply_is_null_array(&root));
}

/* Inconsistent trees: counts promising more or fewer items than there are,
 * unknown kinds, lengths below -1. */
static void test_array_reply_malformed(void **state)
{
    (void)state;
    gb_sbe_reply_item it[4];
    gb_sbe_reply_view root, nodes[8];
    uint8_t buf[256];
    size_t nn;
#define EXPECT(rc, length, n)                                                              \
    do {                                                                                   \
        size_t len_ = gb_sbe_encode_array_reply(buf, sizeof buf, length, n, it, "xxxx");    \
        assert_true(len_ > 0);                                                             \
        nn = 8;                                                                            \
        assert_int_equal(gb_sbe_decode_reply(buf, len_, &root, nodes, &nn), rc);           \
    } while (0)
    memset(it, 0, sizeof it);
    for (int i = 0; i < 4; i++)
        it[i].kind = GB_SBE_KIND_INTEGER;
    EXPECT(0, 4, 4);
    EXPECT(GB_EPROTO, 5, 4);  /* more elements than items */
    EXPECT(GB_EPROTO, 3, 4);  /* an item no array holds */
    EXPECT(GB_EPROTO, 0, 4);
    EXPECT(GB_EPROTO, -1, 4); /* a null array with items */
    EXPECT(GB_EPROTO, -2, 0);
    it[1].kind = GB_SBE_KIND_ARRAY;
    it[1].integer = 3;
    EXPECT(GB_EPROTO, 2, 4); /* the nested array wants 3, only 2 follow */
    it[1].integer = 2;
    EXPECT(0, 2, 4);
    it[1].integer = -2;
    EXPECT(GB_EPROTO, 4, 4);
    it[1].integer = INT64_MAX;
    EXPECT(GB_EPROTO, 2, 4);
    it[1].kind = 0;
    it[1].integer = 0;
    EXPECT(GB_EPROTO, 4, 4);
    it[1].kind = 8;
    EXPECT(GB_EPROTO, 4, 4);
#undef EXPECT
}

static int teardown(void **state)
{
    (void)state;
    gb_sbe_scratch_free(&g_scratch);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_templates), cmocka_unit_test(test_group_templates),
        cmocka_unit_test(test_max_sizes),        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_newer_peer),       cmocka_unit_test(test_xadd_template),
        cmocka_unit_test(test_scalar_replies),
        cmocka_unit_test(test_array_reply),      cmocka_unit_test(test_array_reply_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
