/*
 * Hostile input for the SBE server and client decoders: random bytes,
 * random bytes behind a valid header, and random single-byte corruptions,
 * truncations and extensions of valid messages, fed to gb_sbe_execute
 * against a real engine and to gb_sbe_decode_reply. Each message sits in an
 * allocation of exactly its size, so any read past the end is an ASan
 * finding. Whatever comes in, the server answers exactly one well-formed
 * reply (or none while blocked), or GB_EPROTO when the header is not ours.
 *
 * GOBLIN_FUZZ_SEED and GOBLIN_FUZZ_ITERS override the fixed seed and count.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/core/request/blocking.h"
#include "sbe_test_util.h"

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
    /* xorshift64* */
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 0x2545F4914F6CDD1Dull;
}

static size_t rnd_below(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static unsigned long env_ul(const char *name, unsigned long dflt)
{
    const char *v = getenv(name);
    return v && *v ? strtoul(v, NULL, 0) : dflt;
}

/* ---- a corpus of valid requests ------------------------------------------------------ */

typedef struct msg {
    uint8_t *p;
    size_t len;
} msg;

static msg g_corpus[64];
static size_t g_ncorpus;

static void add(size_t len, const uint8_t *buf)
{
    assert_true(len > 0 && g_ncorpus < 64);
    g_corpus[g_ncorpus].p = malloc(len);
    memcpy(g_corpus[g_ncorpus].p, buf, len);
    g_corpus[g_ncorpus].len = len;
    g_ncorpus++;
}

#define S(lit) ((gb_slice){lit, sizeof(lit) - 1})

static void build_corpus(void)
{
    uint8_t b[4096];
    gb_slice keys[] = {S("k"), S("l"), S("h"), S("z"), S("")};
    gb_slice vals[] = {S("1"), S("value"), S(""), S("42"), S("x")};
    double scores[] = {1, -2.5, 1e300, 0, 3};
    add(gb_sbe_encode_ping(b, sizeof b), b);
    add(gb_sbe_encode_get(b, sizeof b, S("k")), b);
    add(gb_sbe_encode_set(b, sizeof b, S("k"), S("v"), 0, 0), b);
    add(gb_sbe_encode_set(b, sizeof b, S("k"), S("v"), GB_SBE_SET_NX | GB_SBE_SET_PX, 100), b);
    add(gb_sbe_encode_set(b, sizeof b, S("n"), S("10"), GB_SBE_SET_GET | GB_SBE_SET_EX, 5), b);
    add(gb_sbe_encode_del(b, sizeof b, 5, keys), b);
    add(gb_sbe_encode_del(b, sizeof b, 0, keys), b);
    add(gb_sbe_encode_incr(b, sizeof b, S("n"), 1), b);
    add(gb_sbe_encode_incr(b, sizeof b, S("n"), -7), b);
    add(gb_sbe_encode_hset(b, sizeof b, S("h"), 3, keys, vals), b);
    add(gb_sbe_encode_hget(b, sizeof b, S("h"), S("k")), b);
    add(gb_sbe_encode_zadd(b, sizeof b, S("z"), GB_SBE_ZADD_CH, 5, scores, keys), b);
    add(gb_sbe_encode_zadd(b, sizeof b, S("z"), GB_SBE_ZADD_INCR, 1, scores, keys), b);
    add(gb_sbe_encode_zscore(b, sizeof b, S("z"), S("k")), b);
    add(gb_sbe_encode_lpush(b, sizeof b, S("l"), 5, vals), b);
    add(gb_sbe_encode_rpop(b, sizeof b, S("l")), b);
    add(gb_sbe_encode_publish(b, sizeof b, S("ch"), S("msg")), b);
    gb_sbe_xadd_opts xo = {.flags = GB_SBE_XADD_AUTO_ID | GB_SBE_XADD_MAXLEN | GB_SBE_XADD_APPROX, .maxlen = 3};
    add(gb_sbe_encode_xadd(b, sizeof b, S("x"), &xo, 3, keys, vals), b);
    xo = (gb_sbe_xadd_opts){.flags = GB_SBE_XADD_AUTO_SEQ | GB_SBE_XADD_MINID | GB_SBE_XADD_LIMIT, .id_ms = 7,
                            .minid_ms = 2, .limit = 4};
    add(gb_sbe_encode_xadd(b, sizeof b, S("x"), &xo, 1, vals, keys), b);
    add(gb_sbe_encode_blpop(b, sizeof b, 2, keys, 0.001), b);
    add(gb_sbe_encode_blpop(b, sizeof b, 3, keys + 1, 0), b);
    gb_slice g1[] = {S("LRANGE"), S("l"), S("0"), S("-1")};
    add(gb_sbe_encode_generic(b, sizeof b, 4, g1), b);
    gb_slice g2[] = {S("MSET"), S("a"), S("1"), S("b"), S("2")};
    add(gb_sbe_encode_generic(b, sizeof b, 5, g2), b);
    gb_slice g3[] = {S("MULTI")};
    add(gb_sbe_encode_generic(b, sizeof b, 1, g3), b);
    gb_slice g4[] = {S("EXEC")};
    add(gb_sbe_encode_generic(b, sizeof b, 1, g4), b);
    gb_slice g5[] = {S("LMPOP"), S("2"), S("z"), S("l"), S("LEFT"), S("COUNT"), S("3")};
    add(gb_sbe_encode_generic(b, sizeof b, 7, g5), b);
}

static void free_corpus(void)
{
    for (size_t i = 0; i < g_ncorpus; i++)
        free(g_corpus[i].p);
    g_ncorpus = 0;
}

/* ---- one hostile request --------------------------------------------------------------- */

static size_t g_replies, g_eproto, g_errors;

/* Every message the server emits must decode. */
static void check_output(sbe_conn *c)
{
    size_t n;
    while ((n = gb_sbe_reply_finish(&c->r, &c->out)) > 0) {
        const uint8_t *m = (const uint8_t *)c->out.data + c->out.len - n;
        gb_sbe_reply_view root;
        size_t nn = 0;
        int rc = gb_sbe_decode_reply(m, n, &root, NULL, &nn);
        if (rc == GB_ERANGE) {
            gb_sbe_reply_view *nodes = calloc(nn, sizeof *nodes);
            rc = gb_sbe_decode_reply(m, n, &root, nodes, &nn);
            free(nodes);
        }
        assert_int_equal(rc, 0);
        if (root.kind == GB_SBE_KIND_ERROR)
            g_errors++;
        g_replies++;
    }
    c->out.len = 0;
}

static void feed(sbe_conn *c, const uint8_t *bytes, size_t len)
{
    /* Exactly len bytes of heap: one byte more read is an ASan report. */
    uint8_t *m = malloc(len ? len : 1);
    if (len)
        memcpy(m, bytes, len);
    int rc = gb_sbe_execute(c->c, m, len);
    free(m);
    gb_sbe_header h;
    bool ours = gb_sbe_read_header(bytes, len, &h) && h.schema_id == GB_SBE_SCHEMA_ID;
    if (ours)
        assert_int_equal(rc, 0);
    else
        assert_int_equal(rc, GB_EPROTO);
    if (rc == GB_EPROTO)
        g_eproto++;
    /* A corrupted BLPOP may block (for up to forever): time it out so the
     * next request is processed, as the ring would after the deadline. */
    if (c->c->flags & GB_CLIENT_BLOCKED)
        gb_blocking_unblock(c->c, GB_UNBLOCK_TIMEOUT);
    check_output(c);
}

static void test_fuzz_execute(void **state)
{
    (void)state;
    g_rng = env_ul("GOBLIN_FUZZ_SEED", 0x5BE5BE5Bul) | 1;
    unsigned long iters = env_ul("GOBLIN_FUZZ_ITERS", 200000);
    build_corpus();
    gb_engine *eng = sbe_engine_new(NULL);
    sbe_conn *c = sbe_conn_new(eng);
    uint8_t buf[4200];
    for (unsigned long it = 0; it < iters; it++) {
        if (it % 1024 == 0)
            gb_engine_update_time(eng);
        const msg *base = &g_corpus[rnd_below(g_ncorpus)];
        size_t len = base->len;
        memcpy(buf, base->p, len);
        switch (rnd_below(8)) {
        case 0: /* pure noise */
            len = rnd_below(64);
            for (size_t i = 0; i < len; i++)
                buf[i] = (uint8_t)rnd();
            break;
        case 1: /* noise behind a valid header of a request template */
            len = GB_SBE_HEADER_SIZE + rnd_below(96);
            for (size_t i = 0; i < len; i++)
                buf[i] = (uint8_t)rnd();
            gb_sbe_write_header(buf, (uint16_t)rnd_below(12), (uint16_t)(1 + rnd_below(GB_SBE_REQUEST_MAX + 2)));
            break;
        case 2: /* truncation */
            len = rnd_below(len + 1);
            break;
        case 3: /* extension with trailing noise (a "newer peer") */
            for (size_t k = rnd_below(16); k > 0; k--)
                buf[len++] = (uint8_t)rnd();
            break;
        case 4: /* a small value in a random 16/32-bit slot (lengths, counts) */
            if (len >= 4) {
                size_t at = rnd_below(len - 3);
                uint32_t v = (uint32_t)rnd_below(8) + (rnd() & 1 ? 0 : 0xfffffff8u);
                if (rnd() & 1)
                    gb_sbe_put_u16(buf + at, (uint16_t)v);
                else
                    gb_sbe_put_u32(buf + at, v);
            }
            break;
        default: /* one to three random byte corruptions */
            for (size_t k = 1 + rnd_below(3); k > 0; k--)
                buf[rnd_below(len)] = (uint8_t)rnd();
            break;
        }
        feed(c, buf, len);
    }
    /* Plenty of each outcome, not only rejections. */
    assert_true(g_replies > iters / 2);
    assert_true(g_eproto > 0);
    assert_true(g_errors > 0);
    print_message("fuzz: %lu requests, %zu replies (%zu errors), %zu GB_EPROTO\n", iters, g_replies, g_errors,
                  g_eproto);
    sbe_conn_free(c);
    gb_engine_free(eng);
    free_corpus();
}

/* The client's reply decoder on corrupted server output. */
static void test_fuzz_reply_decoder(void **state)
{
    (void)state;
    g_rng = env_ul("GOBLIN_FUZZ_SEED", 0xDEC0DEul) | 1;
    unsigned long iters = env_ul("GOBLIN_FUZZ_ITERS", 200000);
    gb_sbe_replier r;
    memset(&r, 0, sizeof r);
    gb_outbuf out;
    gb_outbuf_init(&out);
    const gb_reply_ops *o = &gb_sbe_reply_ops;
    /* A few valid replies to corrupt. */
    o->array(&r, 3);
    o->integer(&r, 1);
    o->array(&r, 2);
    o->bulk(&r, "ab", 2);
    o->array(&r, -1);
    o->dbl(&r, 2.5);
    o->status(&r, "OK", 2);
    o->error(&r, "ERR x", 5);
    o->bulk(&r, "bulk", 4);
    o->integer(&r, 7);
    o->dbl(&r, -1);
    o->nil(&r);
    msg replies[16];
    size_t nrep = 0, n;
    while ((n = gb_sbe_reply_finish(&r, &out)) > 0) {
        replies[nrep].p = malloc(n);
        memcpy(replies[nrep].p, out.data + out.len - n, n);
        replies[nrep].len = n;
        nrep++;
    }
    uint8_t buf[512];
    gb_sbe_reply_view root, nodes[16];
    for (unsigned long it = 0; it < iters; it++) {
        const msg *base = &replies[rnd_below(nrep)];
        size_t len = base->len;
        memcpy(buf, base->p, len);
        if (rnd() & 1)
            len = rnd_below(len + 1);
        for (size_t k = rnd_below(3); k > 0 && len; k--)
            buf[rnd_below(len)] = (uint8_t)rnd();
        uint8_t *m = malloc(len ? len : 1);
        memcpy(m, buf, len);
        size_t nn = rnd_below(17);
        int rc = gb_sbe_decode_reply(m, len, &root, nodes, &nn);
        assert_true(rc == 0 || rc == GB_EPROTO || rc == GB_ERANGE);
        if (rc == 0 && root.kind == GB_SBE_KIND_ARRAY) {
            /* A tree that decoded is consistent: every element in bounds. */
            for (size_t i = 0; i < nn; i++) {
                assert_true(nodes[i].kind >= GB_SBE_KIND_STATUS && nodes[i].kind <= GB_SBE_KIND_ARRAY);
                if (nodes[i].nelems)
                    assert_true(nodes[i].elems >= nodes && nodes[i].elems + nodes[i].nelems <= nodes + nn);
            }
        }
        free(m);
    }
    for (size_t i = 0; i < nrep; i++)
        free(replies[i].p);
    gb_sbe_replier_free(&r);
    gb_outbuf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fuzz_execute),
        cmocka_unit_test(test_fuzz_reply_decoder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
