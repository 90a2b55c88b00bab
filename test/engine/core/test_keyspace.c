/* engine/core/keyspace/db.c and the string/key commands through the engine's execute
 * path: lazy and active expiry (with the engine's clock moved by hand),
 * record reallocation when expiry is added or removed, RENAME/MOVE/COPY
 * keeping TTLs, WATCH invalidation, maxmemory. */
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
