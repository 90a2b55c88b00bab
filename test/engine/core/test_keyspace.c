/* engine/core/keyspace/db.c and the string/key commands through the engine's execute
 * path: lazy and active expiry (with the engine's clock moved by hand),
 * record reallocation when expiry is added or removed, RENAME/MOVE/COPY
 * keeping TTLs, WATCH invalidation, maxmemory, and the record layout's
 * edges (keyrecord.h): string encodings replacing each other in place in
 * the smallest value field, and keys too long for the 14-bit length. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine_harness.h"
#include "engine/base/mem.h"

/* Moves the engine's wall clock; commands see it because tests call
 * gb_gate_execute without a transport refreshing the time. */
static void advance(harness *h, int64_t ms) { h->eng->now_ms += ms; }

static void test_lazy_expiry(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    assert_string_equal(run(h, "SET k v PX 100"), "+OK");
    assert_string_equal(run(h, "PTTL k"), ":100");
    advance(h, 50);
    assert_string_equal(run(h, "GET k"), "$v");
    advance(h, 50);
    assert_string_equal(run(h, "GET k"), "$nil");
    assert_string_equal(run(h, "EXISTS k"), ":0");
    assert_int_equal(h->eng->stats.expired_keys, 1);
    assert_int_equal(gb_db_size(&h->eng->dbs[0]), 0);
    assert_int_equal(gb_db_volatile_count(&h->eng->dbs[0]), 0);
    harness_free(h);
}

static void test_active_expiry_sweeps_untouched_keys(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    char cmd[64];
    for (int i = 0; i < 5000; i++) {
        snprintf(cmd, sizeof cmd, "SET key:%d v PX %d", i, i < 4000 ? 10 : 100000);
        run(h, cmd);
    }
    for (int i = 0; i < 1000; i++) {
        snprintf(cmd, sizeof cmd, "SET plain:%d v", i);
        run(h, cmd);
    }
    assert_int_equal(gb_db_size(&h->eng->dbs[0]), 6000);
    advance(h, 20);
    /* The cron samples and deletes; repeat as the server's timer would. */
    for (int i = 0; i < 200 && gb_db_size(&h->eng->dbs[0]) > 2000; i++) {
        int64_t keep = h->eng->now_ms;
        gb_engine_cron(h->eng); /* refreshes now from the real clock */
        h->eng->now_ms = keep;  /* ... which we override to stay in "the future" */
        gb_db_active_expire(&h->eng->dbs[0], gb_clock_mono_ns() + 10000000);
    }
    /* Sampling stops when under 25% of a sample is expired, so a few may
     * remain; the bulk must be gone without any key being touched. */
    assert_true(gb_db_size(&h->eng->dbs[0]) < 2000 + 4000 / 10);
    assert_int_equal(gb_db_volatile_count(&h->eng->dbs[0]) + 1000, gb_db_size(&h->eng->dbs[0]));
    harness_free(h);
}

static void test_expiry_realloc_keeps_values(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    /* int, embstr and raw values, each gaining and losing an expiry */
    run(h, "SET i 12345");
    run(h, "SET e hello");
    run(h, "SET r 0123456789012345678901234567890123456789012345678901234567890123456789");
    const char *keys[] = {"i", "e", "r"};
    for (int round = 0; round < 3; round++) {
        for (int k = 0; k < 3; k++) {
            char cmd[64];
            snprintf(cmd, sizeof cmd, "EXPIRE %s 1000", keys[k]);
            assert_string_equal(run(h, cmd), ":1");
            snprintf(cmd, sizeof cmd, "PERSIST %s", keys[k]);
            assert_string_equal(run(h, cmd), ":1");
        }
    }
    assert_string_equal(run(h, "GET i"), "$12345");
    assert_string_equal(run(h, "OBJECT ENCODING i"), "$int");
    assert_string_equal(run(h, "GET e"), "$hello");
    assert_string_equal(run(h, "OBJECT ENCODING e"), "$embstr");
    assert_string_equal(run(h, "STRLEN r"), ":70");
    assert_string_equal(run(h, "OBJECT ENCODING r"), "$raw");
    assert_string_equal(run(h, "TTL e"), ":-1");
    harness_free(h);
}

static void test_rename_move_copy_keep_ttl(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    run(h, "SET a 1 EX 100");
    assert_string_equal(run(h, "RENAME a b"), "+OK");
    assert_string_equal(run(h, "TTL b"), ":100");
    assert_string_equal(run(h, "COPY b c DB 3"), ":1");
    assert_string_equal(run(h, "MOVE b 2"), ":1");
    assert_string_equal(run(h, "EXISTS b"), ":0");
    run(h, "SELECT 2");
    assert_string_equal(run(h, "TTL b"), ":100");
    run(h, "SELECT 3");
    assert_string_equal(run(h, "GET c"), "$1");
    assert_string_equal(run(h, "TTL c"), ":100");
    assert_string_equal(run(h, "RENAME nope x"), "-ERR no such key");
    harness_free(h);
}

static void test_watch_invalidation(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    gb_client *other = gb_client_new(h->eng, &harness_ops, &h->out, NULL, NULL, 0);
    run(h, "SET k 1");
    run(h, "WATCH k");
    run(h, "MULTI");
    assert_string_equal(run(h, "INCR k"), "+QUEUED");
    gb_slice argv[] = {gb_slice_cstr("SET"), gb_slice_cstr("k"), gb_slice_cstr("2")};
    gb_gate_execute(other, 3, argv);
    assert_string_equal(run(h, "EXEC"), "*-1");
    /* A watched key that expires also aborts the transaction. */
    run(h, "SET t 1 PX 10");
    run(h, "WATCH t");
    advance(h, 20);
    run(h, "GET t");
    run(h, "MULTI");
    run(h, "SET t 2");
    assert_string_equal(run(h, "EXEC"), "*-1");
    /* Unrelated writes do not. */
    run(h, "WATCH k");
    run(h, "SET other 1");
    run(h, "MULTI");
    run(h, "GET k");
    assert_string_equal(run(h, "EXEC"), "*1 $2");
    gb_client_free(other);
    harness_free(h);
}

/* Runs a command given as slices (arguments with spaces or of megabytes). */
static const char *run_argv(harness *h, int argc, gb_slice *argv)
{
    h->out.len = 0;
    h->out.buf[0] = '\0';
    gb_gate_execute(h->c, argc, argv);
    return h->out.buf;
}

static void test_string_encodings_replace_each_other_in_place(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    /* An empty embedded string has the smallest value field (8 bytes):
     * an integer and a heap string's pointer must both fit it. */
    gb_slice set_empty[] = {gb_slice_cstr("SET"), gb_slice_cstr("k"), gb_slice_make("", 0)};
    assert_string_equal(run_argv(h, 3, set_empty), "+OK");
    assert_string_equal(run(h, "STRLEN k"), ":0");
    assert_string_equal(run(h, "INCR k"), "-ERR value is not an integer or out of range");
    assert_string_equal(run(h, "APPEND k 7"), ":1");
    assert_string_equal(run(h, "INCR k"), ":8");
    assert_string_equal(run(h, "OBJECT ENCODING k"), "$int");
    assert_string_equal(run(h, "APPEND k x"), ":2");
    assert_string_equal(run(h, "OBJECT ENCODING k"), "$raw");
    assert_string_equal(run(h, "GET k"), "$8x");
    assert_string_equal(run(h, "SET k -9223372036854775808"), "+OK");
    assert_string_equal(run(h, "DECR k"), "-ERR increment or decrement would overflow");
    assert_string_equal(run(h, "GET k"), "$-9223372036854775808");
    assert_string_equal(run(h, "SETRANGE k 0 +"), ":20");
    assert_string_equal(run(h, "GET k"), "$+9223372036854775808");
    /* A long inline value, replaced in place by shorter ones and an int. */
    char big[GB_INLINE_MAX + 1];
    memset(big, 'b', GB_INLINE_MAX);
    big[GB_INLINE_MAX] = '\0';
    gb_slice set_big[] = {gb_slice_cstr("SET"), gb_slice_cstr("k"), gb_slice_cstr(big)};
    assert_string_equal(run_argv(h, 3, set_big), "+OK");
    assert_string_equal(run(h, "STRLEN k"), ":512");
    assert_string_equal(run(h, "SET k 42 KEEPTTL"), "+OK");
    assert_string_equal(run(h, "INCRBY k 100"), ":142");
    assert_string_equal(run(h, "SET k abc"), "+OK");
    assert_string_equal(run(h, "APPEND k def"), ":6");
    assert_string_equal(run(h, "GET k"), "$abcdef");
    /* The same with an expiry field before the key. */
    assert_string_equal(run(h, "SET t 1 EX 100"), "+OK");
    assert_string_equal(run(h, "INCR t"), ":2");
    assert_string_equal(run(h, "APPEND t 0"), ":2");
    assert_string_equal(run(h, "SET t xy KEEPTTL"), "+OK");
    assert_string_equal(run(h, "GET t"), "$xy");
    assert_string_equal(run(h, "TTL t"), ":100");
    harness_free(h);
}

/* Keys of 2^14 - 1 bytes and more keep their length in a field of their own. */
static void test_keys_longer_than_the_length_field(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    const size_t lens[] = {GB_KV_KLEN_LONG - 1, GB_KV_KLEN_LONG, GB_KV_KLEN_LONG + 3};
    char *keys[3];
    for (int i = 0; i < 3; i++) {
        keys[i] = malloc(lens[i]);
        memset(keys[i], 'k', lens[i]); /* the three differ only in length */
    }
    for (int i = 0; i < 3; i++) {
        gb_slice key = gb_slice_make(keys[i], lens[i]);
        char val[8];
        snprintf(val, sizeof val, "v%d", i);
        assert_string_equal(run_argv(h, 3, (gb_slice[]){gb_slice_cstr("SET"), key, gb_slice_cstr(val)}), "+OK");
    }
    assert_int_equal(gb_db_size(&h->eng->dbs[0]), 3);
    for (int i = 0; i < 3; i++) {
        gb_slice key = gb_slice_make(keys[i], lens[i]);
        gb_kv *kv = gb_db_lookup_quiet(&h->eng->dbs[0], key);
        assert_non_null(kv);
        assert_int_equal(gb_kv_keylen(kv), lens[i]);
        assert_memory_equal(gb_kv_key_ptr(kv), key.ptr, key.len);
        char want[8];
        snprintf(want, sizeof want, "$v%d", i);
        assert_string_equal(run_argv(h, 2, (gb_slice[]){gb_slice_cstr("GET"), key}), want);
        /* The expiry field comes and goes before the long-length field. */
        assert_string_equal(run_argv(h, 3, (gb_slice[]){gb_slice_cstr("EXPIRE"), key, gb_slice_cstr("100")}), ":1");
        assert_string_equal(run_argv(h, 2, (gb_slice[]){gb_slice_cstr("TTL"), key}), ":100");
        assert_string_equal(run_argv(h, 2, (gb_slice[]){gb_slice_cstr("GET"), key}), want);
        assert_string_equal(run_argv(h, 3, (gb_slice[]){gb_slice_cstr("SET"), key, gb_slice_cstr("7")}), "+OK");
        assert_string_equal(run_argv(h, 2, (gb_slice[]){gb_slice_cstr("INCR"), key}), ":8");
        assert_string_equal(run_argv(h, 2, (gb_slice[]){gb_slice_cstr("PERSIST"), key}), ":0");
        assert_string_equal(run_argv(h, 3, (gb_slice[]){gb_slice_cstr("PEXPIRE"), key, gb_slice_cstr("5000")}),
                            ":1");
        assert_string_equal(run_argv(h, 2, (gb_slice[]){gb_slice_cstr("PERSIST"), key}), ":1");
        assert_string_equal(run_argv(h, 2, (gb_slice[]){gb_slice_cstr("TTL"), key}), ":-1");
        assert_string_equal(run_argv(h, 2, (gb_slice[]){gb_slice_cstr("GET"), key}), "$8");
        kv = gb_db_lookup_quiet(&h->eng->dbs[0], key);
        assert_int_equal(gb_kv_keylen(kv), lens[i]);
        assert_memory_equal(gb_kv_key_ptr(kv), key.ptr, key.len);
    }
    /* A long key renamed to a short one and back, as an object. */
    gb_slice key = gb_slice_make(keys[2], lens[2]);
    assert_string_equal(run_argv(h, 3, (gb_slice[]){gb_slice_cstr("DEL"), key, gb_slice_cstr("x")}), ":1");
    gb_slice push[] = {gb_slice_cstr("RPUSH"), key, gb_slice_cstr("a"), gb_slice_cstr("b")};
    assert_string_equal(run_argv(h, 4, push), ":2");
    assert_string_equal(run_argv(h, 3, (gb_slice[]){gb_slice_cstr("RENAME"), key, gb_slice_cstr("s")}), "+OK");
    assert_string_equal(run_argv(h, 3, (gb_slice[]){gb_slice_cstr("RENAME"), gb_slice_cstr("s"), key}), "+OK");
    assert_string_equal(run_argv(h, 2, (gb_slice[]){gb_slice_cstr("LLEN"), key}), ":2");
    assert_string_equal(run(h, "FLUSHALL"), "+OK");
    assert_int_equal(gb_db_size(&h->eng->dbs[0]), 0);
    for (int i = 0; i < 3; i++)
        free(keys[i]);
    harness_free(h);
}

static void set_maxmem(gb_settings *s) { s->maxmemory = 1; }

static void test_maxmemory_noeviction(void **state)
{
    (void)state;
    harness *h = harness_new(set_maxmem);
    assert_true(gb_mem_used() > 1);
    assert_string_equal(run(h, "SET k v"), "-OOM command not allowed when used memory > 'maxmemory'.");
    assert_string_equal(run(h, "GET k"), "$nil");
    assert_string_equal(run(h, "DEL k"), ":0");
    harness_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lazy_expiry),
        cmocka_unit_test(test_active_expiry_sweeps_untouched_keys),
        cmocka_unit_test(test_expiry_realloc_keeps_values),
        cmocka_unit_test(test_rename_move_copy_keep_ttl),
        cmocka_unit_test(test_watch_invalidation),
        cmocka_unit_test(test_maxmemory_noeviction),
        cmocka_unit_test(test_string_encodings_replace_each_other_in_place),
        cmocka_unit_test(test_keys_longer_than_the_length_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
