/* Reply buffers when memory runs out (transport/resp/resp_writer.c,
 * transport/sbe/sbe_server.c): a buffer that cannot grow is marked, the
 * replies written after the failure are dropped (never a write through
 * NULL, never bytes after a hole), and the owner can tell. The fault
 * injector (engine/base/mem.h) makes the allocation fail. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/base/mem.h"
#include "sbe_test_util.h"

static int teardown(void **state)
{
    (void)state;
    gb_mem_fault_disarm();
    return 0;
}

static void test_outbuf_first_growth_fails(void **state)
{
    (void)state;
    gb_outbuf b;
    gb_outbuf_init(&b);
    gb_mem_fault_arm(1, false);
    gb_outbuf_append(&b, "hello", 5);
    assert_true(gb_outbuf_oom(&b));
    assert_int_equal(b.len, 0);
    /* Later writes are dropped even though memory is back: the stream has
     * a hole and must never be sent. */
    gb_resp2_reply_ops.status(&b, "OK", 2);
    gb_resp2_reply_ops.bulk(&b, "x", 1);
    gb_resp2_reply_ops.integer(&b, 42);
    assert_int_equal(b.len, 0);
    gb_outbuf_free(&b);
    assert_false(gb_outbuf_oom(&b));
}

static void test_outbuf_growth_fails_mid_stream(void **state)
{
    (void)state;
    gb_outbuf b;
    gb_outbuf_init(&b);
    gb_resp2_reply_ops.status(&b, "OK", 2); /* first growth: 1024 bytes */
    assert_int_equal(b.len, 5);
    size_t handle = gb_resp2_reply_ops.array_deferred(&b);
    gb_mem_fault_arm(1, false);
    char big[4096];
    memset(big, 'v', sizeof big);
    gb_resp2_reply_ops.bulk(&b, big, sizeof big); /* needs growth: fails */
    assert_true(gb_outbuf_oom(&b));
    size_t len = b.len;
    /* Small writes that would fit the old capacity are refused too. */
    gb_resp2_reply_ops.integer(&b, 1);
    gb_resp2_reply_ops.nil(&b);
    gb_resp2_reply_ops.set_deferred(&b, handle, 1);
    assert_int_equal(b.len, len);
    assert_memory_equal(b.data, "+OK\r\n", 5);
    gb_outbuf_free(&b);
}

/* An engine client whose socket output cannot grow: the command still runs
 * (the engine is fail-stop and whole), the reply is lost, the buffer says
 * so, and a fresh client sees the data. */
static void test_engine_reply_to_failing_client(void **state)
{
    (void)state;
    gb_engine *eng = sbe_engine_new(NULL);
    resp_conn *a = resp_conn_new(eng);
    resp_conn *b = resp_conn_new(eng);
    gb_slice set[] = {gb_slice_cstr("SET"), gb_slice_cstr("k"), gb_slice_cstr("v")};
    gb_mem_fault_arm(1, true);
    gb_gate_execute(a->c, 3, set);
    assert_true(gb_outbuf_oom(&a->out));
    gb_mem_fault_disarm();
    gb_slice get[] = {gb_slice_cstr("GET"), gb_slice_cstr("k")};
    gb_gate_execute(b->c, 2, get);
    assert_false(gb_outbuf_oom(&b->out));
    assert_int_equal(b->out.len, 7);
    assert_memory_equal(b->out.data, "$1\r\nv\r\n", 7);
    resp_conn_free(a);
    resp_conn_free(b);
    gb_engine_free(eng);
}

/* SBE: the reply items (an array reply) cannot grow: the replier is marked
 * and writes nothing more; its frames stay empty. */
static void test_sbe_replier_items_fail(void **state)
{
    (void)state;
    gb_engine *eng = sbe_engine_new(NULL);
    sbe_conn *s = sbe_conn_new(eng);
    gb_sbe_replier_set_frames(&s->r, &s->out);
    gb_mem_fault_arm(1, false);
    gb_reply_array(s->c, 2);
    assert_true(gb_sbe_replier_oom(&s->r));
    gb_reply_bulk(s->c, "a", 1);
    gb_reply_int(s->c, 7);
    gb_sbe_reply_finish_frames(&s->r);
    assert_int_equal(s->out.len, 0);
    sbe_conn_free(s);
    gb_engine_free(eng);
}

/* SBE: a scalar reply straight into a frame buffer that cannot grow. */
static void test_sbe_frame_fails(void **state)
{
    (void)state;
    gb_engine *eng = sbe_engine_new(NULL);
    sbe_conn *s = sbe_conn_new(eng);
    gb_sbe_replier_set_frames(&s->r, &s->out);
    gb_mem_fault_arm(1, false);
    gb_reply_status(s->c, "OK");
    assert_true(gb_outbuf_oom(&s->out));
    assert_false(gb_sbe_replier_oom(&s->r));
    gb_reply_int(s->c, 7);
    gb_sbe_reply_finish_frames(&s->r);
    assert_int_equal(s->out.len, 0);
    sbe_conn_free(s);
    gb_engine_free(eng);
}

/* SBE decode scratch cannot grow: an error reply, the client stays usable. */
static void test_sbe_scratch_fails(void **state)
{
    (void)state;
    gb_engine *eng = sbe_engine_new(NULL);
    sbe_conn *s = sbe_conn_new(eng);
    gb_slice argv[] = {gb_slice_cstr("MSET"), gb_slice_cstr("a"), gb_slice_cstr("1")};
    uint8_t msg[256];
    size_t n = gb_sbe_encode_generic(msg, sizeof msg, 3, argv);
    assert_true(n > 0);
    gb_mem_fault_arm(1, false); /* the scratch's first growth */
    assert_int_equal(gb_sbe_execute(s->c, msg, n), 0);
    assert_false(gb_sbe_replier_oom(&s->r));
    size_t len = gb_sbe_reply_finish(&s->r, &s->out);
    assert_true(len > 0);
    char *got = render_sbe_message((const uint8_t *)s->out.data, len);
    assert_non_null(strstr(got, "out of memory"));
    free(got);
    gb_mem_fault_disarm();
    s->out.len = 0;
    assert_int_equal(gb_sbe_execute(s->c, msg, n), 0);
    len = gb_sbe_reply_finish(&s->r, &s->out);
    got = render_sbe_message((const uint8_t *)s->out.data, len);
    assert_string_equal(got, "+OK");
    free(got);
    sbe_conn_free(s);
    gb_engine_free(eng);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_outbuf_first_growth_fails, teardown),
        cmocka_unit_test_teardown(test_outbuf_growth_fails_mid_stream, teardown),
        cmocka_unit_test_teardown(test_engine_reply_to_failing_client, teardown),
        cmocka_unit_test_teardown(test_sbe_replier_items_fail, teardown),
        cmocka_unit_test_teardown(test_sbe_frame_fails, teardown),
        cmocka_unit_test_teardown(test_sbe_scratch_fails, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
