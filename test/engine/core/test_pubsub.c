/* engine/core/pubsub/pubsub.c: subscriptions and their confirmations, delivery
 * (exact, pattern, shard; subscription order; the flush hook), unsubscribe
 * all, a client going away, glob patterns through PUBLISH, ACL revocation,
 * notify-keyspace-events parsing and rendering, keyspace notifications.
 * test/integration/test_pubsub.py compares the wire with redis-server. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine_harness.h"
#include "engine/core/pubsub/pubsub.h"

/* A second client with its own rendered output and hooks that count. */
typedef struct sub_client {
    gb_client *c;
    harness_out out;
    int flushes, closes;
} sub_client;

static sub_client *current_sub;

static void count_flush(gb_client *c)
{
    (void)c;
    current_sub->flushes++;
}
static void count_close(gb_client *c)
{
    (void)c;
    current_sub->closes++;
}
static const gb_client_hooks counting_hooks = {count_flush, count_close, NULL, NULL};

static void sub_init(harness *h, sub_client *s)
{
    memset(s, 0, sizeof *s);
    s->c = gb_client_new(h->eng, &harness_ops, &s->out, &counting_hooks, NULL, 0);
    current_sub = s;
}

static const char *sub_run(sub_client *s, const char *cmdline)
{
    char *copy = strdup(cmdline);
    gb_slice argv[64];
    int argc = 0;
    for (char *save = NULL, *t = strtok_r(copy, " ", &save); t && argc < 64; t = strtok_r(NULL, " ", &save))
        argv[argc++] = gb_slice_cstr(t);
    s->out.len = 0;
    s->out.buf[0] = '\0';
    gb_gate_execute(s->c, argc, argv);
    free(copy);
    return s->out.buf;
}

static void sub_clear(sub_client *s)
{
    s->out.len = 0;
    s->out.buf[0] = '\0';
}

static void test_subscribe_and_publish(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    sub_client s;
    sub_init(h, &s);
    assert_string_equal(sub_run(&s, "SUBSCRIBE a b a"),
                        "*3 $subscribe $a :1 *3 $subscribe $b :2 *3 $subscribe $a :2");
    assert_string_equal(sub_run(&s, "PSUBSCRIBE a*"), "*3 $psubscribe $a* :3");
    assert_string_equal(sub_run(&s, "SSUBSCRIBE a"), "*3 $ssubscribe $a :1");
    sub_clear(&s);
    int before = s.flushes;
    assert_string_equal(run(h, "PUBLISH a hello"), ":2");
    assert_string_equal(s.out.buf, "*3 $message $a $hello *4 $pmessage $a* $a $hello");
    assert_int_equal(s.flushes - before, 2); /* the transport is told after each message */
    sub_clear(&s);
    assert_string_equal(run(h, "SPUBLISH a sh"), ":1");
    assert_string_equal(s.out.buf, "*3 $smessage $a $sh");
    sub_clear(&s);
    assert_string_equal(run(h, "PUBLISH zz x"), ":0");
    assert_string_equal(s.out.buf, "");
    assert_string_equal(run(h, "PUBSUB NUMSUB a b zz"), "*6 $a :1 $b :1 $zz :0");
    assert_string_equal(run(h, "PUBSUB NUMPAT"), ":1");
    assert_string_equal(run(h, "PUBSUB SHARDNUMSUB a"), "*2 $a :1");
    /* the RESP2 subscribed mode */
    assert_string_equal(sub_run(&s, "GET k"), "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / "
                                              "PING / QUIT / RESET are allowed in this context");
    assert_string_equal(sub_run(&s, "PING"), "*2 $pong $");
    /* a client going away leaves nothing behind */
    gb_client_free(s.c);
    assert_string_equal(run(h, "PUBSUB NUMSUB a"), "*2 $a :0");
    assert_string_equal(run(h, "PUBSUB NUMPAT"), ":0");
    assert_int_equal(gb_pubsub_count(h->eng, GB_PUBSUB_CHANNEL), 0);
    assert_int_equal(gb_pubsub_count(h->eng, GB_PUBSUB_SHARD), 0);
    assert_string_equal(run(h, "PUBLISH a x"), ":0");
    harness_free(h);
}

static void test_unsubscribe(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    sub_client s;
    sub_init(h, &s);
    assert_string_equal(sub_run(&s, "UNSUBSCRIBE"), "*3 $unsubscribe $nil :0");
    assert_string_equal(sub_run(&s, "PUNSUBSCRIBE"), "*3 $punsubscribe $nil :0");
    assert_string_equal(sub_run(&s, "SUNSUBSCRIBE"), "*3 $sunsubscribe $nil :0");
    assert_null(s.c->pubsub);
    sub_run(&s, "SUBSCRIBE x");
    sub_run(&s, "PSUBSCRIBE p*");
    assert_string_equal(sub_run(&s, "UNSUBSCRIBE nope"), "*3 $unsubscribe $nope :2");
    assert_string_equal(sub_run(&s, "UNSUBSCRIBE"), "*3 $unsubscribe $x :1");
    assert_string_equal(sub_run(&s, "PUNSUBSCRIBE"), "*3 $punsubscribe $p* :0");
    assert_null(s.c->pubsub); /* out of subscribed mode */
    assert_string_equal(sub_run(&s, "PING"), "+PONG");
    harness_free(h);
}

/* Subscribers of a channel receive in subscription order, after one of
 * them left too. */
static void test_order_and_many(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    enum { N = 40 };
    sub_client subs[N];
    for (int i = 0; i < N; i++) {
        sub_init(h, &subs[i]);
        sub_run(&subs[i], "SUBSCRIBE ch");
    }
    current_sub = &subs[0];
    sub_run(&subs[7], "UNSUBSCRIBE ch");
    for (int i = 0; i < N; i++)
        if (i != 7)
            sub_clear(&subs[i]);
    assert_string_equal(run(h, "PUBLISH ch m"), ":39");
    for (int i = 0; i < N; i++)
        assert_string_equal(subs[i].out.buf, i == 7 ? "*3 $unsubscribe $ch :0" : "*3 $message $ch $m");
    for (int i = 0; i < N; i++)
        gb_client_free(subs[i].c);
    assert_int_equal(gb_pubsub_count(h->eng, GB_PUBSUB_CHANNEL), 0);
    harness_free(h);
}

static void test_patterns(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    sub_client s;
    sub_init(h, &s);
    static const struct {
        const char *pattern, *channel;
        int match;
    } cases[] = {{"*", "", 0} /* Redis: "*" never matches an empty channel */,       {"a?c", "abc", 1},    {"a?c", "ac", 0},   {"a[bc]d", "acd", 1},
                 {"a[^b]d", "abd", 0}, {"a[^b]d", "acd", 1}, {"a[b-d]e", "ace", 1}, {"a[d-b]e", "ace", 1},
                 {"a\\*b", "a*b", 1}, {"a\\*b", "axb", 0}, {"h*o", "hello", 1}, {"H*", "hello", 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "PSUBSCRIBE %s", cases[i].pattern);
        sub_run(&s, cmd);
        gb_slice ch = gb_slice_cstr(cases[i].channel);
        size_t n = gb_pubsub_publish(h->eng, GB_PUBSUB_CHANNEL, ch, gb_slice_cstr("m"));
        if (n != (size_t)cases[i].match)
            fail_msg("pattern '%s' on '%s': %zu receivers", cases[i].pattern, cases[i].channel, n);
        snprintf(cmd, sizeof cmd, "PUNSUBSCRIBE %s", cases[i].pattern);
        sub_run(&s, cmd);
    }
    harness_free(h);
}

static void test_notify_flags(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } cases[] = {{"KEA", "AKE"}, {"Kgx", "gxK"}, {"Enm", "nEm"}, {"AKEmnd", "AKEm"}, {"g$lshzxetd", "A"},
                 {"", ""},       {"E$", "$E"}, {"zhsl$gK", "g$lshzK"}};
    char buf[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int f = gb_notify_parse(cases[i].in);
        assert_true(f >= 0);
        gb_notify_format(f, buf);
        assert_string_equal(buf, cases[i].out);
    }
    assert_int_equal(gb_notify_parse("KQ"), -1);
    assert_int_equal(gb_notify_parse("a"), -1);
    assert_true(gb_notify_parse("AKEmn") & GB_NOTIFY_NEW); /* kept, though CONFIG GET shows no n beside A */
}

static void test_keyspace_events(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    sub_client s;
    sub_init(h, &s);
    sub_run(&s, "PSUBSCRIBE __key*__:*");
    sub_clear(&s);
    run(h, "SET k v"); /* off: nothing */
    assert_string_equal(s.out.buf, "");
    assert_string_equal(run(h, "CONFIG SET notify-keyspace-events KEA"), "+OK");
    run(h, "SET k v2");
    assert_string_equal(s.out.buf, "*4 $pmessage $__key*__:* $__keyspace@0__:k $set *4 $pmessage $__key*__:* $__keyevent@0__:set $k");
    sub_clear(&s);
    run(h, "LPUSH l a");
    run(h, "LPOP l");
    assert_string_equal(s.out.buf, "*4 $pmessage $__key*__:* $__keyspace@0__:l $lpush *4 $pmessage $__key*__:* $__keyevent@0__:lpush $l "
                                   "*4 $pmessage $__key*__:* $__keyspace@0__:l $lpop *4 $pmessage $__key*__:* $__keyevent@0__:lpop $l "
                                   "*4 $pmessage $__key*__:* $__keyspace@0__:l $del *4 $pmessage $__key*__:* $__keyevent@0__:del $l");
    sub_clear(&s);
    assert_string_equal(run(h, "CONFIG SET notify-keyspace-events Em"), "+OK");
    run(h, "GET nokey");
    run(h, "SET nokey x"); /* no $ class: nothing */
    assert_string_equal(s.out.buf, "*4 $pmessage $__key*__:* $__keyevent@0__:keymiss $nokey");
    /* a key longer than the stack buffer of the channel name */
    sub_clear(&s);
    assert_string_equal(run(h, "CONFIG SET notify-keyspace-events K$"), "+OK");
    char cmd[600] = "SET ";
    memset(cmd + 4, 'x', 400);
    strcpy(cmd + 404, " v");
    run(h, cmd);
    assert_true(strstr(s.out.buf, "$__keyspace@0__:xxxxxxxxxx") != NULL);
    assert_true(strstr(s.out.buf, " $set") != NULL);
    harness_free(h);
}

static void test_acl_revocation(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_string_equal(run(h, "ACL SETUSER u on nopass +@all ~* resetchannels &news.*"), "+OK");
    sub_client s;
    sub_init(h, &s);
    assert_string_equal(sub_run(&s, "AUTH u x"), "+OK");
    assert_string_equal(sub_run(&s, "SUBSCRIBE sport"),
                        "-NOPERM this user has no permissions to access one of the channels used as arguments");
    sub_run(&s, "SUBSCRIBE news.a");
    assert_string_equal(run(h, "ACL SETUSER u &other"), "+OK");
    assert_int_equal(s.closes, 0);
    assert_string_equal(run(h, "ACL SETUSER u resetchannels &other"), "+OK");
    assert_int_equal(s.closes, 1);
    assert_true(s.c->flags & GB_CLIENT_CLOSE_ASAP);
    /* a client closed is gone at once: no message, not counted */
    sub_clear(&s);
    assert_string_equal(run(h, "PUBLISH news.a m"), ":0");
    assert_string_equal(run(h, "PUBSUB NUMSUB news.a"), "*2 $news.a :0");
    assert_string_equal(s.out.buf, "");
    harness_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_subscribe_and_publish), cmocka_unit_test(test_unsubscribe),
        cmocka_unit_test(test_order_and_many),        cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_notify_flags),          cmocka_unit_test(test_keyspace_events),
        cmocka_unit_test(test_acl_revocation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
