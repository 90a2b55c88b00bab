/*
 * transport/sbe/sbe_server.c: the reply encoder for every sink call (nested
 * arrays, deferred lengths, null arrays, several replies, incomplete ones)
 * and gb_sbe_execute's handling of malformed messages, statistics and
 * blocking against a real engine.
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
#include "engine/core/replication/replica.h"
#include "sbe_test_util.h"

/* ---- the reply sink ------------------------------------------------------------------ */

typedef struct sink {
    gb_sbe_replier r;
    gb_outbuf out;
} sink;

static void sink_init(sink *s)
{
    memset(&s->r, 0, sizeof s->r); /* the sink needs no engine */
    gb_outbuf_init(&s->out);
}

static void sink_free(sink *s)
{
    gb_sbe_replier_free(&s->r);
    gb_outbuf_free(&s->out);
}

/* The next finished message, rendered (NULL when finish has none). */
static char *next(sink *s)
{
    size_t before = s->out.len;
    size_t n = gb_sbe_reply_finish(&s->r, &s->out);
    if (!n)
        return NULL;
    assert_int_equal(s->out.len, before + n);
    return render_sbe_message((const uint8_t *)s->out.data + before, n);
}

static void expect(sink *s, const char *want)
{
    char *got = next(s);
    if (!got)
        fail_msg("no reply; wanted %s", want);
    assert_string_equal(got, want);
    free(got);
}

static const gb_reply_ops *O = &gb_sbe_reply_ops;

static void test_sink_scalars(void **state)
{
    (void)state;
    sink s;
    sink_init(&s);
    assert_null(next(&s));
    O->status(&s.r, "OK", 2);
    expect(&s, "+OK");
    O->error(&s.r, "ERR boom", 8);
    expect(&s, "-ERR boom");
    O->integer(&s.r, -42);
    expect(&s, ":-42");
    O->dbl(&s.r, 1.5);
    expect(&s, "$1.5");
    O->bulk(&s.r, "", 0);
    expect(&s, "$");
    O->bulk(&s.r, "a\0b", 3);
    char *got = next(&s);
    assert_memory_equal(got, "$a\0b", 4);
    free(got);
    O->nil(&s.r);
    expect(&s, "$nil");
    assert_null(next(&s));
    /* A native double keeps its bits (no text round trip). */
    s.out.len = 0;
    O->dbl(&s.r, 0.1);
    size_t n = gb_sbe_reply_finish(&s.r, &s.out);
    gb_sbe_reply_view v;
    assert_int_equal(gb_sbe_decode_reply((const uint8_t *)s.out.data, n, &v, NULL, NULL), 0);
    assert_true(v.dbl == 0.1);
    /* Everything was consumed: the arena is reused from the start. */
    assert_int_equal(s.r.nitems, 0);
    assert_int_equal(s.r.nbytes, 0);
    sink_free(&s);
}

static void test_sink_arrays(void **state)
{
    (void)state;
    sink s;
    sink_init(&s);
    O->array(&s.r, 0);
    expect(&s, "*0[]");
    O->array(&s.r, -1);
    expect(&s, "*nil");
    O->array(&s.r, -7); /* any negative length is the null array */
    expect(&s, "*nil");
    /* EXEC-like: [OK, [1, [a, nil]], null array, 2.5] */
    O->array(&s.r, 4);
    O->status(&s.r, "OK", 2);
    O->array(&s.r, 2);
    O->integer(&s.r, 1);
    O->array(&s.r, 2);
    O->bulk(&s.r, "a", 1);
    assert_null(next(&s)); /* incomplete: one element still owed */
    O->nil(&s.r);
    assert_null(next(&s));
    O->array(&s.r, -1);
    O->dbl(&s.r, 2.5);
    expect(&s, "*4[+OK *2[:1 *2[$a $nil]] *nil $2.5]");
    assert_null(next(&s));
    sink_free(&s);
}

/* Frame mode: every finished reply lands in the frame buffer as
 * [u32 length][message], in the order given, whether it went the direct
 * path (a scalar with nothing pending) or through the item list. */
static void expect_frames(gb_outbuf *f, const char *const *want, size_t nwant)
{
    size_t off = 0;
    for (size_t i = 0; i < nwant; i++) {
        uint32_t len;
        assert_true(off + 4 <= f->len);
        memcpy(&len, f->data + off, 4);
        assert_true(off + 4 + len <= f->len);
        char *got = render_sbe_message((const uint8_t *)f->data + off + 4, len);
        assert_string_equal(got, want[i]);
        free(got);
        off += 4 + len;
    }
    assert_int_equal(off, f->len);
}

static void test_sink_frames(void **state)
{
    (void)state;
    sink s;
    sink_init(&s);
    gb_sbe_replier_set_frames(&s.r, &s.out);
    /* Scalars go straight to the frames: no items, nothing to finish. */
    O->status(&s.r, "PONG", 4);
    O->integer(&s.r, 7);
    assert_int_equal(s.r.nitems, 0);
    /* An array collects items; a scalar given while it is pending is one of
     * its elements, not a reply of its own. */
    size_t h = O->array_deferred(&s.r);
    O->bulk(&s.r, "a", 1);
    O->nil(&s.r);
    O->set_deferred(&s.r, h, 2);
    /* A scalar after a complete but unfinished array waits behind it. */
    O->dbl(&s.r, 2.5);
    assert_int_equal(s.r.nitems, 4);
    gb_sbe_reply_finish_frames(&s.r);
    O->error(&s.r, "ERR x", 5); /* nothing pending again: direct */
    const char *want[] = {"+PONG", ":7", "*2[$a $nil]", "$2.5", "-ERR x"};
    expect_frames(&s.out, want, 5);
    assert_int_equal(s.r.nitems, 0);
    sink_free(&s);
}

static void test_sink_deferred(void **state)
{
    (void)state;
    sink s;
    sink_init(&s);
    size_t h = O->array_deferred(&s.r);
    O->bulk(&s.r, "x", 1);
    size_t h2 = O->array_deferred(&s.r);
    O->integer(&s.r, 1);
    O->integer(&s.r, 2);
    assert_null(next(&s)); /* lengths unset */
    O->set_deferred(&s.r, h2, 2);
    assert_null(next(&s));
    O->bulk(&s.r, "y", 1);
    O->set_deferred(&s.r, h, 3);
    expect(&s, "*3[$x *2[:1 :2] $y]");
    /* A deferred empty array, and a deferred array inside a known one. */
    h = O->array_deferred(&s.r);
    O->set_deferred(&s.r, h, 0);
    expect(&s, "*0[]");
    O->array(&s.r, 2);
    h = O->array_deferred(&s.r);
    O->status(&s.r, "a", 1);
    O->set_deferred(&s.r, h, 1);
    O->error(&s.r, "ERR e", 5);
    expect(&s, "*2[*1[+a] -ERR e]");
    /* Bogus handles are ignored rather than corrupting a reply. */
    O->set_deferred(&s.r, 12345, 1);
    O->integer(&s.r, 3);
    O->set_deferred(&s.r, 0, 9); /* item 0 is an integer, not a deferred array */
    expect(&s, ":3");
    sink_free(&s);
}

static void test_sink_several(void **state)
{
    (void)state;
    sink s;
    sink_init(&s);
    /* Two replies before a finish come out as two messages, in order. */
    O->status(&s.r, "QUEUED", 6);
    O->array(&s.r, 1);
    O->integer(&s.r, 9);
    O->bulk(&s.r, "tail", 4);
    expect(&s, "+QUEUED");
    expect(&s, "*1[:9]");
    expect(&s, "$tail");
    assert_null(next(&s));
    /* An incomplete array holds back what follows it (order is kept). */
    O->array(&s.r, 2);
    O->integer(&s.r, 1);
    assert_null(next(&s));
    O->integer(&s.r, 2);
    O->integer(&s.r, 3);
    expect(&s, "*2[:1 :2]");
    expect(&s, ":3");
    sink_free(&s);
}

static void test_sink_large(void **state)
{
    (void)state;
    sink s;
    sink_init(&s);
    /* A 2 MiB bulk and a 100000-element array (past uint16 counts). */
    size_t big = 2u << 20;
    char *v = malloc(big);
    memset(v, 'z', big);
    O->bulk(&s.r, v, big);
    size_t n = gb_sbe_reply_finish(&s.r, &s.out);
    gb_sbe_reply_view root;
    assert_int_equal(gb_sbe_decode_reply((const uint8_t *)s.out.data, n, &root, NULL, NULL), 0);
    assert_int_equal(root.len, big);
    assert_memory_equal(root.ptr, v, big);
    free(v);
    s.out.len = 0;
    size_t count = 100000;
    O->array(&s.r, (int64_t)count);
    for (size_t i = 0; i < count; i++)
        O->integer(&s.r, (int64_t)i);
    n = gb_sbe_reply_finish(&s.r, &s.out);
    gb_sbe_reply_view *nodes = calloc(count, sizeof *nodes);
    size_t nn = count;
    assert_int_equal(gb_sbe_decode_reply((const uint8_t *)s.out.data, n, &root, nodes, &nn), 0);
    assert_int_equal(root.nelems, count);
    assert_int_equal(root.elems[count - 1].integer, (int64_t)count - 1);
    free(nodes);
    sink_free(&s);
}

/* ---- execute against an engine ------------------------------------------------------- */

static uint8_t B[1 << 16];
#define CAP sizeof B
#define S(lit) gb_slice_make(lit, sizeof(lit) - 1)

static void expect_run(sbe_conn *c, size_t len, const char *want)
{
    char *got;
    assert_int_equal(sbe_run(c, B, len, &got), 0);
    assert_string_equal(got, want);
    free(got);
}

static void test_execute_basics(void **state)
{
    (void)state;
    gb_engine *eng = sbe_engine_new(NULL);
    sbe_conn *c = sbe_conn_new(eng);
    expect_run(c, gb_sbe_encode_ping(B, CAP), "+PONG");
    expect_run(c, gb_sbe_encode_set(B, CAP, S("k"), S("v"), 0, 0), "+OK");
    expect_run(c, gb_sbe_encode_get(B, CAP, S("k")), "$v");
    expect_run(c, gb_sbe_encode_incr(B, CAP, S("n"), 5), ":5");
    expect_run(c, gb_sbe_encode_incr(B, CAP, S("n"), 1), ":6");
    gb_slice vals[] = {S("a"), S("b")};
    expect_run(c, gb_sbe_encode_lpush(B, CAP, S("l"), 2, vals), ":2");
    expect_run(c, gb_sbe_encode_rpop(B, CAP, S("l")), "$a");
    gb_slice args[] = {S("LRANGE"), S("l"), S("0"), S("-1")};
    expect_run(c, gb_sbe_encode_generic(B, CAP, 4, args), "*1[$b]");
    gb_slice keys[] = {S("k"), S("n"), S("missing")};
    expect_run(c, gb_sbe_encode_del(B, CAP, 3, keys), ":2");

    /* Statistics: typed templates count in commandstats like RESP commands. */
    gb_command *set = gb_command_lookup(eng, S("set")), *incr = gb_command_lookup(eng, S("incr")),
               *incrby = gb_command_lookup(eng, S("incrby")), *ping = gb_command_lookup(eng, S("ping"));
    assert_int_equal(set->calls, 1);
    assert_int_equal(ping->calls, 1);
    assert_int_equal(incr->calls, 1);
    assert_int_equal(incrby->calls, 1);
    assert_true(set->cycles > 0 || set->calls == 1);
    assert_int_equal(eng->stats.total_commands_processed, 9);
    expect_run(c, gb_sbe_encode_incr(B, CAP, S("l"), 1), "-WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_int_equal(incr->failed_calls, 1);
    assert_ptr_equal(c->c->last_cmd, incr);

    /* Hashes and sorted sets: typed, and a score comes back as a native double. */
    gb_slice f[] = {S("f1"), S("f2")}, v[] = {S("v1"), S("v2")};
    expect_run(c, gb_sbe_encode_hset(B, CAP, S("h"), 2, f, v), ":2");
    expect_run(c, gb_sbe_encode_hget(B, CAP, S("h"), S("f2")), "$v2");
    double sc[] = {0.1, -3};
    expect_run(c, gb_sbe_encode_zadd(B, CAP, S("z"), GB_SBE_ZADD_CH, 2, sc, f), ":2");
    expect_run(c, gb_sbe_encode_zadd(B, CAP, S("z"), GB_SBE_ZADD_INCR, 1, sc, f + 1), "$-2.9");
    size_t n = gb_sbe_encode_zscore(B, CAP, S("z"), S("f1"));
    c->out.len = 0;
    assert_int_equal(gb_sbe_execute(c->c, B, n), 0);
    n = gb_sbe_reply_finish(&c->r, &c->out);
    gb_sbe_reply_view view;
    assert_int_equal(gb_sbe_decode_reply((const uint8_t *)c->out.data, n, &view, NULL, NULL), 0);
    assert_int_equal(view.kind, GB_SBE_KIND_DOUBLE);
    assert_true(view.dbl == 0.1);
    assert_int_equal(gb_command_lookup(eng, S("hset"))->calls, 1);
    assert_int_equal(gb_command_lookup(eng, S("hget"))->calls, 1);
    assert_int_equal(gb_command_lookup(eng, S("zadd"))->calls, 2);
    assert_int_equal(gb_command_lookup(eng, S("zscore"))->calls, 1);

    sbe_conn_free(c);
    gb_engine_free(eng);
}

/* A replica's refusals hold for typed calls too (the gate's fast path
 * leaves a replica to admission): READONLY for a write, MASTERDOWN while
 * the link is down and replica-serve-stale-data is no. */
static void test_execute_on_replica(void **state)
{
    (void)state;
    gb_engine *eng = sbe_engine_new(NULL);
    sbe_conn *c = sbe_conn_new(eng);
    expect_run(c, gb_sbe_encode_set(B, CAP, S("k"), S("v"), 0, 0), "+OK");
    gb_replica_set_master(eng, "127.0.0.1", 1);
    expect_run(c, gb_sbe_encode_set(B, CAP, S("k"), S("w"), 0, 0),
               "-READONLY You can't write against a read only replica.");
    expect_run(c, gb_sbe_encode_incr(B, CAP, S("n"), 1), "-READONLY You can't write against a read only replica.");
    expect_run(c, gb_sbe_encode_get(B, CAP, S("k")), "$v");
    eng->cfg.replica_serve_stale_data = 0;
    expect_run(c, gb_sbe_encode_get(B, CAP, S("k")),
               "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
    gb_replica_unset_master(eng);
    expect_run(c, gb_sbe_encode_set(B, CAP, S("k"), S("w"), 0, 0), "+OK");
    sbe_conn_free(c);
    gb_engine_free(eng);
}

/* A typed call's keys and their access flags are exactly those the key
 * specs find in its RESP form: the gate's ACL shortcut for a user limited
 * to some keys (typed_permitted) relies on it. */
static void expect_keys_as_resp_form(gb_engine *eng, size_t n)
{
    gb_sbe_request q;
    gb_sbe_scratch scratch = {.realloc_fn = realloc, .free_fn = free};
    const char *why = NULL;
    assert_int_equal(gb_sbe_decode_request(B, n, &q, &scratch, &why), 0);
    const gb_typed_call *t = gb_sbe_typed_call(q.hdr.template_id);
    assert_non_null(t);
    gb_argv_builder b;
    t->to_argv(&q, &b);
    gb_command *cmd = gb_command_lookup(eng, b.v[0]);
    assert_non_null(cmd);
    gb_keys_result r;
    int nkeys = gb_command_keys(cmd->meta, b.n, b.v, &r);
    if (!t->keys) {
        assert_int_equal(nkeys, 0);
    } else {
        gb_typed_keys k;
        t->keys(&q, &k);
        assert_int_equal((int)k.n, nkeys);
        for (int i = 0; i < nkeys; i++) {
            assert_true(gb_slice_eq(k.keys[i], b.v[r.keys[i].pos]));
            assert_int_equal(gb_typed_key_flags(cmd, &k), r.keys[i].flags);
        }
    }
    gb_keys_result_free(&r);
    gb_argv_free(&b);
    gb_sbe_scratch_free(&scratch);
}

static void test_typed_keys_match_resp_form(void **state)
{
    (void)state;
    gb_engine *eng = sbe_engine_new(NULL);
    gb_slice keys[] = {S("k1"), S("k2"), S("k3")}, f[] = {S("f1"), S("f2")}, v[] = {S("v1"), S("v2")};
    double sc[] = {1, 2};
    expect_keys_as_resp_form(eng, gb_sbe_encode_ping(B, CAP));
    expect_keys_as_resp_form(eng, gb_sbe_encode_get(B, CAP, S("k")));
    expect_keys_as_resp_form(eng, gb_sbe_encode_set(B, CAP, S("k"), S("v"), 0, 0));
    expect_keys_as_resp_form(eng, gb_sbe_encode_set(B, CAP, S("k"), S("v"), GB_SBE_SET_GET, 0));
    expect_keys_as_resp_form(eng, gb_sbe_encode_set(B, CAP, S("k"), S("v"), GB_SBE_SET_NX | GB_SBE_SET_PX, 100));
    expect_keys_as_resp_form(eng, gb_sbe_encode_set(B, CAP, S("k"), S("v"), GB_SBE_SET_XX | GB_SBE_SET_GET, 0));
    expect_keys_as_resp_form(eng, gb_sbe_encode_del(B, CAP, 3, keys));
    expect_keys_as_resp_form(eng, gb_sbe_encode_del(B, CAP, 1, keys));
    expect_keys_as_resp_form(eng, gb_sbe_encode_incr(B, CAP, S("n"), 1));
    expect_keys_as_resp_form(eng, gb_sbe_encode_incr(B, CAP, S("n"), -7));
    expect_keys_as_resp_form(eng, gb_sbe_encode_hset(B, CAP, S("h"), 2, f, v));
    expect_keys_as_resp_form(eng, gb_sbe_encode_hget(B, CAP, S("h"), S("f")));
    expect_keys_as_resp_form(eng, gb_sbe_encode_zadd(B, CAP, S("z"), 0, 2, sc, f));
    expect_keys_as_resp_form(eng, gb_sbe_encode_zadd(B, CAP, S("z"), GB_SBE_ZADD_INCR | GB_SBE_ZADD_XX, 1, sc, f));
    expect_keys_as_resp_form(eng, gb_sbe_encode_zscore(B, CAP, S("z"), S("m")));
    expect_keys_as_resp_form(eng, gb_sbe_encode_lpush(B, CAP, S("l"), 2, v));
    expect_keys_as_resp_form(eng, gb_sbe_encode_rpop(B, CAP, S("l")));
    expect_keys_as_resp_form(eng, gb_sbe_encode_publish(B, CAP, S("ch"), S("m")));
    gb_sbe_xadd_opts xo[] = {
        {.flags = GB_SBE_XADD_AUTO_ID},
        {.flags = GB_SBE_XADD_NOMKSTREAM | GB_SBE_XADD_AUTO_SEQ, .id_ms = 5},
        {.flags = GB_SBE_XADD_MAXLEN | GB_SBE_XADD_APPROX | GB_SBE_XADD_LIMIT, .id_ms = 1, .maxlen = 10, .limit = 5},
        {.flags = GB_SBE_XADD_MINID, .id_ms = 1, .id_seq = 2, .minid_ms = 1},
    };
    for (size_t i = 0; i < GB_ARRAY_LEN(xo); i++)
        expect_keys_as_resp_form(eng, gb_sbe_encode_xadd(B, CAP, S("st"), &xo[i], 2, f, v));
    /* Every typed template is covered above. */
    for (unsigned tid = 1; tid <= GB_SBE_REQUEST_MAX; tid++)
        if (gb_sbe_typed_call(tid))
            assert_true(tid <= GB_SBE_RPOP || tid == GB_SBE_PUBLISH || tid == GB_SBE_XADD);
    gb_engine_free(eng);
}

static void test_execute_malformed(void **state)
{
    (void)state;
    gb_engine *eng = sbe_engine_new(NULL);
    sbe_conn *c = sbe_conn_new(eng);
    char *got;
    /* Not this protocol: GB_EPROTO (the ring drops the client), no reply. */
    assert_int_equal(sbe_run(c, B, 7, &got), GB_EPROTO);
    assert_string_equal(got, "");
    free(got);
    size_t n = gb_sbe_encode_ping(B, CAP);
    gb_sbe_put_u16(B + 4, 999);
    assert_int_equal(sbe_run(c, B, n, &got), GB_EPROTO);
    free(got);
    /* Malformed but ours: an error reply, the client stays. */
    n = gb_sbe_encode_ping(B, CAP);
    gb_sbe_put_u16(B + 2, GB_SBE_BULK_REPLY);
    expect_run(c, n, "-ERR SBE: template id 105 is not a request");
    gb_sbe_put_u16(B + 2, 77);
    expect_run(c, n, "-ERR SBE: template id 77 is not a request");
    n = gb_sbe_encode_get(B, CAP, S("key"));
    expect_run(c, n - 1, "-ERR SBE: Get: key exceeds the message");
    n = gb_sbe_encode_set(B, CAP, S("k"), S("v"), 0, 0);
    gb_sbe_put_u16(B, 3);
    expect_run(c, n, "-ERR SBE: Set: root block shorter than 9 bytes or exceeds the message");
    double sc = 1;
    gb_slice m = S("m");
    n = gb_sbe_encode_zadd(B, CAP, S("z"), 0x80, 1, &sc, &m);
    expect_run(c, n, "-ERR SBE: ZAdd: unknown flag bits");
    n = gb_sbe_encode_generic(B, CAP, 0, NULL);
    expect_run(c, n, "-ERR SBE: Generic: empty argument list");
    assert_true(eng->stats.protocol_errors >= 5);
    /* Still serving. */
    expect_run(c, gb_sbe_encode_ping(B, CAP), "+PONG");
    /* A client whose sink is not SBE is refused. */
    resp_conn *r = resp_conn_new(eng);
    assert_int_equal(gb_sbe_execute(r->c, B, 8), GB_EINVAL);
    resp_conn_free(r);
    sbe_conn_free(c);
    gb_engine_free(eng);
}

/* BLPOP blocks (no reply), and the reply arrives through the same sink when a
 * typed LPUSH from another client serves it; a timeout gives the null array. */
static void test_execute_blocking(void **state)
{
    (void)state;
    gb_engine *eng = sbe_engine_new(NULL);
    gb_engine_update_time(eng);
    sbe_conn *waiter = sbe_conn_new(eng), *pusher = sbe_conn_new(eng);
    gb_slice keys[] = {S("q1"), S("q2")};
    char *got;
    size_t n = gb_sbe_encode_blpop(B, CAP, 2, keys, 0);
    assert_int_equal(sbe_run(waiter, B, n, &got), 0);
    assert_string_equal(got, "");
    free(got);
    assert_true(waiter->c->flags & GB_CLIENT_BLOCKED);
    gb_slice v = S("job");
    expect_run(pusher, gb_sbe_encode_lpush(B, CAP, S("q2"), 1, &v), ":1");
    /* The push served the waiter: its reply is waiting in its sink. */
    waiter->out.len = 0;
    n = gb_sbe_reply_finish(&waiter->r, &waiter->out);
    assert_true(n > 0);
    got = render_sbe_message((const uint8_t *)waiter->out.data, n);
    assert_string_equal(got, "*2[$q2 $job]");
    free(got);
    assert_false(waiter->c->flags & GB_CLIENT_BLOCKED);

    /* Timeout: 0.01 s from a cached clock a second behind, so the deadline
     * (gb_blocking_expire reads the real clock) has already passed. */
    eng->now_mono_ms = gb_clock_mono_ms() - 1000;
    n = gb_sbe_encode_blpop(B, CAP, 1, keys, 0.01);
    assert_int_equal(sbe_run(waiter, B, n, &got), 0);
    assert_string_equal(got, "");
    free(got);
    assert_int_equal(gb_blocking_expire(eng), 1);
    waiter->out.len = 0;
    n = gb_sbe_reply_finish(&waiter->r, &waiter->out);
    got = render_sbe_message((const uint8_t *)waiter->out.data, n);
    assert_string_equal(got, "*nil");
    free(got);

    /* Timeout texts come from the same parser as RESP's. */
    expect_run(waiter, gb_sbe_encode_blpop(B, CAP, 1, keys, -1), "-ERR timeout is negative");
    expect_run(waiter, gb_sbe_encode_blpop(B, CAP, 1, keys, NAN), "-ERR timeout is not a float or out of range");
    expect_run(waiter, gb_sbe_encode_blpop(B, CAP, 0, keys, 1),
               "-ERR wrong number of arguments for 'blpop' command");
    sbe_conn_free(waiter);
    sbe_conn_free(pusher);
    gb_engine_free(eng);
}

/* Generic command from words (test helper). */
static size_t generic(int argc, const char *const *words)
{
    gb_slice a[8];
    for (int i = 0; i < argc; i++)
        a[i] = gb_slice_cstr(words[i]);
    return gb_sbe_encode_generic(B, CAP, (size_t)argc, a);
}

/* PUBLISH as a typed call: the receiver count, delivery to a RESP
 * subscriber in Redis's framing, commandstats, MULTI's queue (its RESP
 * form), and the malformed template. */
static void test_execute_publish(void **state)
{
    (void)state;
    gb_engine *eng = sbe_engine_new(NULL);
    sbe_conn *p = sbe_conn_new(eng);
    resp_conn *sub = resp_conn_new(eng);
    expect_run(p, gb_sbe_encode_publish(B, CAP, S("ch"), S("hi")), ":0");
    char *got = resp_run(sub, "SUBSCRIBE ch");
    assert_string_equal(got, "*3[$subscribe $ch :1]");
    free(got);
    sub->out.len = 0;
    expect_run(p, gb_sbe_encode_publish(B, CAP, S("ch"), S("hi")), ":1");
    static const char framed[] = "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n";
    assert_int_equal(sub->out.len, sizeof framed - 1);
    assert_memory_equal(sub->out.data, framed, sizeof framed - 1);
    /* Binary-safe payload, empty channel. */
    sub->out.len = 0;
    expect_run(p, gb_sbe_encode_publish(B, CAP, S(""), gb_slice_make("\0\r\n", 3)), ":0");
    assert_int_equal(sub->out.len, 0);
    assert_int_equal(gb_command_lookup(eng, S("publish"))->calls, 3);

    /* MULTI queues the RESP form; EXEC runs it. */
    static const char *const multi[] = {"MULTI"}, *const exec[] = {"EXEC"};
    expect_run(p, generic(1, multi), "+OK");
    expect_run(p, gb_sbe_encode_publish(B, CAP, S("ch"), S("queued")), "+QUEUED");
    sub->out.len = 0;
    expect_run(p, generic(1, exec), "*1[:1]");
    static const char queued[] = "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$6\r\nqueued\r\n";
    assert_int_equal(sub->out.len, sizeof queued - 1);
    assert_memory_equal(sub->out.data, queued, sizeof queued - 1);

    /* Malformed: each field checked against the message. */
    size_t n = gb_sbe_encode_publish(B, CAP, S("ch"), S("hi"));
    expect_run(p, n - 1, "-ERR SBE: Publish: message field exceeds the message");
    expect_run(p, GB_SBE_HEADER_SIZE + 5, "-ERR SBE: Publish: channel exceeds the message");
    gb_sbe_put_u32(B + GB_SBE_HEADER_SIZE + 4 + 2, 0xffffffffu); /* a forged message length */
    expect_run(p, n, "-ERR SBE: Publish: message field exceeds the message");
    resp_conn_free(sub);
    sbe_conn_free(p);
    gb_engine_free(eng);
}

/* Every message the sink has finished, rendered and joined by " | ". */
static char *all_replies(sbe_conn *c)
{
    text t = {0};
    text_cstr(&t, "");
    size_t n;
    c->out.len = 0;
    while ((n = gb_sbe_reply_finish(&c->r, &c->out)) > 0) {
        char *one = render_sbe_message((const uint8_t *)c->out.data + c->out.len - n, n);
        if (t.len)
            text_cstr(&t, " | ");
        text_cstr(&t, one);
        free(one);
    }
    return t.s;
}

static void expect_all(sbe_conn *c, const char *want)
{
    char *got = all_replies(c);
    assert_string_equal(got, want);
    free(got);
}

/* An SBE subscriber: confirmations are Subscription messages, deliveries
 * Message messages (one per matching subscription, as Redis), in order
 * with its replies; in frame mode a push goes straight into the frame. */
static void test_execute_subscriber(void **state)
{
    (void)state;
    gb_engine *eng = sbe_engine_new(NULL);
    sbe_conn *s = sbe_conn_new(eng), *p = sbe_conn_new(eng);
    static const char *const sub2[] = {"SUBSCRIBE", "news", "sport"}, *const psub[] = {"PSUBSCRIBE", "n*"},
                             *const ssub[] = {"SSUBSCRIBE", "shard"}, *const unsub[] = {"UNSUBSCRIBE"},
                             *const punsub[] = {"PUNSUBSCRIBE"}, *const ping[] = {"PING"};
    assert_int_equal(gb_sbe_execute(s->c, B, generic(3, sub2)), 0);
    expect_all(s, "*3[$subscribe $news :1] | *3[$subscribe $sport :2]");
    assert_int_equal(gb_sbe_execute(s->c, B, generic(2, psub)), 0);
    expect_all(s, "*3[$psubscribe $n* :3]");
    assert_int_equal(gb_sbe_execute(s->c, B, generic(2, ssub)), 0);
    expect_all(s, "*3[$ssubscribe $shard :1]");

    /* news matches the channel and the pattern: two messages, two receivers. */
    expect_run(p, gb_sbe_encode_publish(B, CAP, S("news"), S("hello")), ":2");
    expect_all(s, "*3[$message $news $hello] | *4[$pmessage $n* $news $hello]");
    expect_run(p, gb_sbe_encode_publish(B, CAP, S("nope"), gb_slice_make("\0x", 2)), ":1");
    char *got = all_replies(s);
    assert_int_equal(strlen(got), strlen("*4[$pmessage $n* $nope $")); /* the payload's NUL ends the C string */
    free(got);
    static const char *const spub[] = {"SPUBLISH", "shard", "m"};
    expect_run(p, generic(3, spub), ":1");
    expect_all(s, "*3[$smessage $shard $m]");

    /* The wire bytes of a Message: header, kind, channel, pattern, payload. */
    expect_run(p, gb_sbe_encode_publish(B, CAP, S("sport"), S("goal")), ":1");
    s->out.len = 0;
    size_t n = gb_sbe_reply_finish(&s->r, &s->out);
    uint8_t want[64];
    size_t wn = gb_sbe_encode_message(want, sizeof want, GB_SBE_MSG_MESSAGE, S("sport"), S(""), S("goal"));
    assert_int_equal(n, wn);
    assert_memory_equal(s->out.data, want, wn);

    /* Subscribed mode (RESP2's rules): PING answers the array form. */
    assert_int_equal(gb_sbe_execute(s->c, B, generic(1, ping)), 0);
    expect_all(s, "*2[$pong $]");

    /* Frame mode: the push is one frame [u32 len][Message], no item. */
    gb_outbuf frames;
    gb_outbuf_init(&frames);
    gb_sbe_replier_set_frames(&s->r, &frames);
    expect_run(p, gb_sbe_encode_publish(B, CAP, S("sport"), S("x")), ":1");
    assert_int_equal(s->r.nitems, 0);
    uint32_t flen;
    assert_true(frames.len > 4);
    memcpy(&flen, frames.data, 4);
    assert_int_equal(frames.len, 4 + (size_t)flen);
    got = render_sbe_message((const uint8_t *)frames.data + 4, flen);
    assert_string_equal(got, "*3[$message $sport $x]");
    free(got);
    gb_sbe_replier_set_frames(&s->r, NULL);
    gb_outbuf_free(&frames);

    /* Unsubscribing from all, then from nothing: Redis's nil name. */
    assert_int_equal(gb_sbe_execute(s->c, B, generic(1, unsub)), 0);
    got = all_replies(s); /* the order is the client's table's, as in Redis (a dict) */
    assert_true(!strcmp(got, "*3[$unsubscribe $news :2] | *3[$unsubscribe $sport :1]") ||
                !strcmp(got, "*3[$unsubscribe $sport :2] | *3[$unsubscribe $news :1]"));
    free(got);
    assert_int_equal(gb_sbe_execute(s->c, B, generic(1, punsub)), 0);
    expect_all(s, "*3[$punsubscribe $n* :0]");
    assert_int_equal(gb_sbe_execute(s->c, B, generic(1, punsub)), 0);
    expect_all(s, "*3[$punsubscribe $nil :0]");
    expect_run(p, gb_sbe_encode_publish(B, CAP, S("news"), S("gone")), ":0");
    expect_all(s, "");
    sbe_conn_free(s);
    sbe_conn_free(p);
    gb_engine_free(eng);
}

/* The push decoder on hostile bytes: every prefix, bad kinds, short blocks. */
static void test_push_decoder(void **state)
{
    (void)state;
    uint8_t m[64];
    gb_sbe_push_view v;
    size_t n = gb_sbe_encode_message(m, sizeof m, GB_SBE_MSG_PMESSAGE, S("ch"), S("c*"), S("pay"));
    assert_int_equal(gb_sbe_decode_push(m, n, &v), 0);
    assert_int_equal(v.kind, GB_SBE_MSG_PMESSAGE);
    assert_int_equal(v.payload.len, 3);
    assert_memory_equal(v.pattern.ptr, "c*", 2);
    for (size_t k = 0; k < n; k++)
        assert_int_equal(gb_sbe_decode_push(m, k, &v), GB_EPROTO);
    m[GB_SBE_HEADER_SIZE] = 4;
    assert_int_equal(gb_sbe_decode_push(m, n, &v), GB_EPROTO);
    m[GB_SBE_HEADER_SIZE] = 0;
    assert_int_equal(gb_sbe_decode_push(m, n, &v), GB_EPROTO);
    n = gb_sbe_encode_subscription(m, sizeof m, GB_SBE_SUB_UNSUBSCRIBE, NULL, 0);
    assert_int_equal(gb_sbe_decode_push(m, n, &v), 0);
    assert_true(v.name_is_null);
    for (size_t k = 0; k < n; k++)
        assert_int_equal(gb_sbe_decode_push(m, k, &v), GB_EPROTO);
    m[GB_SBE_HEADER_SIZE + GB_SBE_SUBSCRIPTION_NAME_NULL_OFFSET] = 2;
    assert_int_equal(gb_sbe_decode_push(m, n, &v), GB_EPROTO);
    gb_sbe_put_u16(m, 9); /* a block shorter than this version's */
    assert_int_equal(gb_sbe_decode_push(m, n, &v), GB_EPROTO);
    n = gb_sbe_encode_integer_reply(m, sizeof m, 1);
    assert_int_equal(gb_sbe_decode_push(m, n, &v), GB_ENOENT);
    /* A newer peer's longer block is skipped by its blockLength. */
    uint8_t big[64];
    n = gb_sbe_encode_message(m, sizeof m, GB_SBE_MSG_MESSAGE, S("c"), S(""), S("p"));
    memcpy(big, m, GB_SBE_HEADER_SIZE + 1);
    big[GB_SBE_HEADER_SIZE + 1] = 0xee;
    memcpy(big + GB_SBE_HEADER_SIZE + 2, m + GB_SBE_HEADER_SIZE + 1, n - GB_SBE_HEADER_SIZE - 1);
    gb_sbe_put_u16(big, 2);
    assert_int_equal(gb_sbe_decode_push(big, n + 1, &v), 0);
    assert_memory_equal(v.payload.ptr, "p", 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sink_scalars),     cmocka_unit_test(test_sink_arrays),
        cmocka_unit_test(test_sink_deferred),    cmocka_unit_test(test_sink_several),
        cmocka_unit_test(test_sink_frames),
        cmocka_unit_test(test_sink_large),       cmocka_unit_test(test_execute_basics),
        cmocka_unit_test(test_execute_malformed), cmocka_unit_test(test_execute_blocking),
        cmocka_unit_test(test_typed_keys_match_resp_form), cmocka_unit_test(test_execute_on_replica),
        cmocka_unit_test(test_execute_publish), cmocka_unit_test(test_execute_subscriber),
        cmocka_unit_test(test_push_decoder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
