/* engine/core/memory/client_memory.c: the one client-output-buffer-limit policy
 * every transport applies - a client's class (normal, replica, pubsub),
 * its limits as CONFIG SET leaves them, the hard limit, the soft limit and
 * its seconds, and what enforcing does (Redis's log line, the count, the
 * mark, the transport's close hook, once). test/integration/
 * test_client_memory.py drives the same policy through sockets and rings. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine_harness.h"
#include "engine/core/memory/client_memory.h"
#include "engine/core/pubsub/pubsub.h"

static int closes;
static void count_close(gb_client *c)
{
    (void)c;
    closes++;
}
static const gb_client_hooks closing_hooks = {NULL, count_close, NULL, NULL};

/* CONFIG SET client-output-buffer-limit VALUE, the value one argument. */
static const char *set_limits(harness *h, const char *value)
{
    gb_slice argv[] = {gb_slice_cstr("CONFIG"), gb_slice_cstr("SET"), gb_slice_cstr("client-output-buffer-limit"),
                       gb_slice_cstr(value)};
    h->out.len = 0;
    h->out.buf[0] = '\0';
    gb_gate_execute(h->c, 4, argv);
    return h->out.buf;
}

/* A client as a transport makes one: hooks, and a sink that is not read. */
static gb_client *transport_client(harness *h, harness_out *out)
{
    closes = 0;
    return gb_client_new(h->eng, &harness_ops, out, &closing_hooks, NULL, 0);
}

static void test_class_follows_the_client(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    harness_out out = {0};
    gb_client *c = transport_client(h, &out);
    assert_int_equal(gb_client_obuf_class(c), GB_CLIENT_CLASS_NORMAL);
    gb_slice feed = gb_slice_cstr("feed");
    gb_pubsub_subscribe(c, GB_PUBSUB_CHANNEL, 1, &feed);
    assert_int_equal(gb_client_obuf_class(c), GB_CLIENT_CLASS_PUBSUB);
    gb_pubsub_unsubscribe(c, GB_PUBSUB_CHANNEL, 1, &feed);
    assert_int_equal(gb_client_obuf_class(c), GB_CLIENT_CLASS_NORMAL);
    c->flags |= GB_CLIENT_REPLICA;
    assert_int_equal(gb_client_obuf_class(c), GB_CLIENT_CLASS_REPLICA);
    assert_string_equal(gb_client_class_name(GB_CLIENT_CLASS_NORMAL), "normal");
    assert_string_equal(gb_client_class_name(GB_CLIENT_CLASS_REPLICA), "replica");
    assert_string_equal(gb_client_class_name(GB_CLIENT_CLASS_PUBSUB), "pubsub");
    gb_client_free(c);
    harness_free(h);
}

static void test_limits_are_the_configured_ones(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_string_equal(set_limits(h, "normal 1000 500 3 replica 2000 0 0 "
                               "pubsub 3000 1500 7"), "+OK");
    harness_out out = {0};
    gb_client *c = transport_client(h, &out);
    gb_obuf_limit l = gb_client_obuf_limit(c);
    assert_int_equal(l.hard, 1000);
    assert_int_equal(l.soft, 500);
    assert_int_equal(l.soft_seconds, 3);
    c->flags |= GB_CLIENT_REPLICA;
    l = gb_client_obuf_limit(c);
    assert_int_equal(l.hard, 2000);
    assert_int_equal(l.soft, 0);
    c->flags &= ~(uint32_t)GB_CLIENT_REPLICA;
    gb_slice feed = gb_slice_cstr("feed");
    gb_pubsub_subscribe(c, GB_PUBSUB_CHANNEL, 1, &feed);
    l = gb_client_obuf_limit(c);
    assert_int_equal(l.hard, 3000);
    assert_int_equal(l.soft, 1500);
    assert_int_equal(l.soft_seconds, 7);
    gb_client_free(c);
    harness_free(h);
}

static void test_hard_and_soft_decisions(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_string_equal(set_limits(h, "normal 1000 500 2"), "+OK");
    harness_out out = {0};
    gb_client *c = transport_client(h, &out);
    /* a limit is reached at its value, as Redis's >= */
    assert_int_equal(gb_client_obuf_check(c, 499, 10000), GB_OBUF_WITHIN);
    assert_int_equal(c->obuf_soft_since_ms, 0);
    assert_int_equal(gb_client_obuf_check(c, 1000, 10000), GB_OBUF_OVER_HARD);
    /* over soft: the clock starts, and runs while the client stays over,
     * in whole seconds as Redis's unixtime (past 2 s: in second 13) */
    assert_int_equal(gb_client_obuf_check(c, 500, 10500), GB_OBUF_WITHIN);
    assert_int_equal(c->obuf_soft_since_ms, 10500);
    assert_int_equal(gb_client_obuf_check(c, 700, 12999), GB_OBUF_WITHIN); /* not past 2 s yet */
    assert_int_equal(gb_client_obuf_check(c, 700, 13000), GB_OBUF_OVER_SOFT);
    /* back under: forgotten, and a later excursion starts afresh */
    assert_int_equal(gb_client_obuf_check(c, 100, 13000), GB_OBUF_WITHIN);
    assert_int_equal(c->obuf_soft_since_ms, 0);
    assert_int_equal(gb_client_obuf_check(c, 600, 20000), GB_OBUF_WITHIN);
    assert_int_equal(gb_client_obuf_check(c, 600, 21000), GB_OBUF_WITHIN);
    /* 0 turns a limit off */
    assert_string_equal(set_limits(h, "normal 0 0 0"), "+OK");
    assert_int_equal(gb_client_obuf_check(c, (size_t)1 << 40, 99000), GB_OBUF_WITHIN);
    gb_client_free(c);
    harness_free(h);
}

static void test_enforce_closes_once_through_the_transport(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_string_equal(set_limits(h, "pubsub 4096 0 0"), "+OK");
    FILE *log = tmpfile();
    assert_non_null(log);
    gb_log_set(GB_LOG_NOTICE, log);
    harness_out out = {0};
    gb_client *c = transport_client(h, &out);
    gb_slice feed = gb_slice_cstr("feed");
    gb_pubsub_subscribe(c, GB_PUBSUB_CHANNEL, 1, &feed);
    uint64_t before = h->eng->stats.client_obuf_disconnects;
    assert_false(gb_client_obuf_enforce(c, 4095));
    assert_int_equal(closes, 0);
    assert_true(gb_client_obuf_enforce(c, 4096));
    assert_true(c->flags & GB_CLIENT_CLOSE_ASAP);
    assert_int_equal(closes, 1);
    assert_int_equal(h->eng->stats.client_obuf_disconnects, before + 1);
    /* going already: nothing more is kept, nothing counted twice */
    assert_true(gb_client_obuf_enforce(c, 1));
    assert_int_equal(closes, 1);
    assert_int_equal(h->eng->stats.client_obuf_disconnects, before + 1);
    gb_log_set(GB_LOG_NOTICE, NULL);
    char text[4096] = "";
    rewind(log);
    size_t n = fread(text, 1, sizeof text - 1, log);
    text[n] = '\0';
    fclose(log);
    assert_non_null(strstr(text, "scheduled to be closed ASAP for overcoming of output buffer limits. (4096 bytes "
                                 "pending, over the hard limit of client-output-buffer-limit pubsub)"));
    assert_non_null(strstr(text, "Client id="));
    gb_client_free(c);
    harness_free(h);
}

static void test_reply_over_limit_uses_the_same_class(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_string_equal(set_limits(h, "normal 1000 0 0 pubsub 0 0 0"), "+OK");
    gb_log_set(GB_LOG_WARNING + 1, NULL); /* quiet */
    harness_out out = {0};
    gb_client *c = transport_client(h, &out);
    gb_slice feed = gb_slice_cstr("feed");
    gb_pubsub_subscribe(c, GB_PUBSUB_CHANNEL, 1, &feed);
    assert_false(gb_client_reply_over_limit(c, 5000)); /* pubsub: no hard limit */
    gb_pubsub_unsubscribe(c, GB_PUBSUB_CHANNEL, 1, &feed);
    assert_false(gb_client_reply_over_limit(c, 1000));
    assert_true(gb_client_reply_over_limit(c, 1001));
    assert_int_equal(closes, 1);
    c->flags |= GB_CLIENT_SCRIPT; /* a script's client is no connection */
    assert_false(gb_client_reply_over_limit(c, 5000));
    gb_log_set(GB_LOG_NOTICE, NULL);
    gb_client_free(c);
    harness_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_class_follows_the_client),
        cmocka_unit_test(test_limits_are_the_configured_ones),
        cmocka_unit_test(test_hard_and_soft_decisions),
        cmocka_unit_test(test_enforce_closes_once_through_the_transport),
        cmocka_unit_test(test_reply_over_limit_uses_the_same_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
