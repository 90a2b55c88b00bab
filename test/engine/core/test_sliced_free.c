/* engine/core/memory/sliced_free.c: big values (sets, hashes, sorted sets,
 * streams with big pending lists) deleted without lazy freeing
 * (DEL, an overwrite, FLUSHDB/FLUSHALL without ASYNC) leave the keyspace at
 * once and are freed by the engine thread in slices; small ones at once;
 * eviction takes the pending memory before any key; the lazy-free
 * counters never see any of it; an engine freed with slices pending leaks
 * nothing. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine_harness.h"
#include "engine/base/mem.h"
#include "engine/core/memory/lazyfree.h"
#include "engine/core/memory/sliced_free.h"

/* Past the threshold: sliced. */
#define BIG (GB_SLICED_FREE_MIN_EFFORT + 4000)

/* Fills key with n elements of a set, sorted set or hash ("SADD", "ZADD",
 * "HSET"), 50 per command. */
static void fill(harness *h, const char *cmd, const char *key, int n)
{
    char line[4096];
    for (int i = 0; i < n;) {
        int len = snprintf(line, sizeof line, "%s %s", cmd, key);
        for (int j = 0; j < 30 && i < n; j++, i++) {
            if (cmd[0] == 'S')
                len += snprintf(line + len, sizeof line - (size_t)len, " member:%d", i);
            else if (cmd[0] == 'Z')
                len += snprintf(line + len, sizeof line - (size_t)len, " %d member:%d", i, i);
            else
                len += snprintf(line + len, sizeof line - (size_t)len, " field:%d value:%d", i, i);
        }
        const char *r = run(h, line);
        assert_true(r[0] == ':');
    }
}

static void no_lazy_free(harness *h)
{
    assert_int_equal(gb_lazyfree_pending(h->eng->lazyfree), 0);
    assert_int_equal(gb_lazyfree_done(h->eng->lazyfree), 0);
}

/* Runs slices that end at once (each frees one step of elements) until
 * nothing is pending; returns how many it took. */
static int slices_until_done(harness *h)
{
    int n = 0;
    while (gb_sliced_free_pending(h->eng->sliced_free)) {
        gb_sliced_free_step(h->eng, 0);
        n++;
    }
    return n;
}

/* For each large encoding: DEL answers at once with the key gone, the
 * value's memory comes back over several slices, all of it. */
static void test_del_of_big_value_is_freed_in_slices(void **state)
{
    (void)state;
    const char *types[][2] = {{"SADD", "hashtable"}, {"ZADD", "btree"}, {"HSET", "hashtable"}};
    for (size_t t = 0; t < 3; t++) {
        harness *h = harness_new(NULL);
        size_t base = gb_mem_used();
        fill(h, types[t][0], "big", BIG);
        char enc[64];
        snprintf(enc, sizeof enc, "$%s", types[t][1]);
        assert_string_equal(run(h, "OBJECT ENCODING big"), enc);
        size_t full = gb_mem_used();
        assert_string_equal(run(h, "DEL big"), ":1");
        assert_string_equal(run(h, "EXISTS big"), ":0");
        assert_true(gb_sliced_free_pending(h->eng->sliced_free));
        /* still held: less than a tenth has been freed */
        assert_true(gb_mem_used() > base + (full - base) * 9 / 10);
        /* a key of the same name is a new value, untouched by the slices */
        fill(h, types[t][0], "big", 10);
        int slices = slices_until_done(h);
        assert_true(slices >= BIG / 1024); /* 512 elements a step */
        assert_true(slices <= BIG / 256);
        assert_true(gb_mem_used() < base + (full - base) / 20); /* the 10 new elements, and tables that grew */
        assert_string_equal(run(h, t == 0 ? "SCARD big" : t == 1 ? "ZCARD big" : "HLEN big"), ":10");
        no_lazy_free(h);
        harness_free(h);
    }
}

/* Hash fields with TTLs keep a heap of deadlines beside the records. */
static void test_hash_with_field_ttls(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    fill(h, "HSET", "h", BIG);
    char cmd[256];
    for (int i = 0; i < BIG; i += 20) {
        snprintf(cmd, sizeof cmd, "HEXPIRE h 1000 FIELDS 1 field:%d", i);
        assert_string_equal(run(h, cmd), "*1 :1");
    }
    assert_string_equal(run(h, "DEL h"), ":1");
    assert_true(slices_until_done(h) > 1);
    harness_free(h);
}

/* A stream whose group has a big pending-entries list, split between two
 * consumers: its trees are torn down in slices. */
static void test_stream_with_big_pel(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    size_t base = gb_mem_used();
    for (int i = 0; i < BIG; i++)
        run(h, "XADD s * f v");
    assert_string_equal(run(h, "XGROUP CREATE s g 0"), "+OK");
    run(h, "XREADGROUP GROUP g c1 COUNT 5000 STREAMS s >");
    run(h, "XREADGROUP GROUP g c2 STREAMS s >");
    assert_string_equal(run(h, "XGROUP CREATE s g2 $"), "+OK");
    size_t full = gb_mem_used();
    assert_string_equal(run(h, "DEL s"), ":1");
    assert_true(gb_sliced_free_pending(h->eng->sliced_free));
    assert_true(gb_mem_used() > base + (full - base) / 2);
    assert_true(slices_until_done(h) > 10);
    assert_true(gb_mem_used() < base + (full - base) / 20);
    no_lazy_free(h);
    harness_free(h);
}

/* Below the threshold, and lists and strings of any size: freed at once. */
static void test_small_values_go_at_once(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    fill(h, "SADD", "s", 1000);
    assert_string_equal(run(h, "DEL s"), ":1");
    assert_false(gb_sliced_free_pending(h->eng->sliced_free));
    for (int i = 0; i < 400; i++)
        run(h, "RPUSH l aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa a b c d e f "
               "g h i j k l m n o p q r s t u v w x y z 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0");
    assert_string_equal(run(h, "DEL l"), ":1");
    assert_false(gb_sliced_free_pending(h->eng->sliced_free));
    harness_free(h);
}

/* An overwrite (SET over a big set) frees the old value in slices too. */
static void test_overwrite(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    fill(h, "SADD", "k", BIG);
    assert_string_equal(run(h, "SET k v"), "+OK");
    assert_string_equal(run(h, "GET k"), "$v");
    assert_true(gb_sliced_free_pending(h->eng->sliced_free));
    assert_true(slices_until_done(h) > 1);
    harness_free(h);
}

/* FLUSHALL without ASYNC: many small keys and a big value among them. */
static void test_flushall_in_slices(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    size_t base = gb_mem_used();
    char cmd[128];
    for (int i = 0; i < 3 * GB_SLICED_FREE_MIN_EFFORT; i++) {
        snprintf(cmd, sizeof cmd, "SET key:%d value:%d", i, i);
        run(h, cmd);
        if (i % 3 == 0) {
            snprintf(cmd, sizeof cmd, "EXPIRE key:%d 1000", i);
            run(h, cmd);
        }
    }
    fill(h, "ZADD", "z", BIG);
    assert_string_equal(run(h, "FLUSHALL"), "+OK");
    assert_string_equal(run(h, "DBSIZE"), ":0");
    assert_true(gb_sliced_free_pending(h->eng->sliced_free));
    run(h, "SET key:1 new");
    assert_true(slices_until_done(h) > 3 * GB_SLICED_FREE_MIN_EFFORT / 512);
    assert_string_equal(run(h, "GET key:1"), "$new");
    assert_string_equal(run(h, "DBSIZE"), ":1");
    assert_true(gb_mem_used() < base + 64 * 1024);
    no_lazy_free(h);
    /* a small database goes at once */
    run(h, "SET a b");
    assert_string_equal(run(h, "FLUSHDB"), "+OK");
    assert_false(gb_sliced_free_pending(h->eng->sliced_free));
    harness_free(h);
}

/* Over maxmemory with a big value still pending: the next write frees it
 * before evicting, so no key is evicted for memory on its way back. */
static void allkeys_lru(gb_settings *s) { s->maxmemory_policy = GB_POLICY_ALLKEYS_LRU; }

static void test_eviction_takes_pending_memory_first(void **state)
{
    (void)state;
    harness *h = harness_new(allkeys_lru);
    for (int i = 0; i < 100; i++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "SET keep:%d v", i);
        run(h, cmd);
    }
    size_t before_big = gb_mem_used();
    fill(h, "SADD", "big", BIG);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "CONFIG SET maxmemory %zu", before_big + 64 * 1024);
    assert_string_equal(run(h, "DEL big"), ":1");
    assert_string_equal(run(h, cmd), "+OK");
    assert_true(gb_sliced_free_pending(h->eng->sliced_free));
    assert_string_equal(run(h, "SET another v"), "+OK");
    assert_false(gb_sliced_free_pending(h->eng->sliced_free));
    assert_int_equal(h->eng->stats.evicted_keys, 0);
    assert_string_equal(run(h, "DBSIZE"), ":101");
    harness_free(h);
}

/* The engine's end frees what is still pending (ASan/LSan and the
 * allocator's count would see a leak). */
static void test_engine_end_with_slices_pending(void **state)
{
    (void)state;
    size_t base = gb_mem_used();
    harness *h = harness_new(NULL);
    fill(h, "ZADD", "z", BIG);
    fill(h, "HSET", "h", BIG);
    run(h, "DEL z h");
    assert_true(gb_sliced_free_pending(h->eng->sliced_free));
    gb_sliced_free_step(h->eng, 0);
    harness_free(h);
    assert_true(gb_mem_used() <= base + 4096);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_del_of_big_value_is_freed_in_slices),
        cmocka_unit_test(test_hash_with_field_ttls),
        cmocka_unit_test(test_stream_with_big_pel),
        cmocka_unit_test(test_small_values_go_at_once),
        cmocka_unit_test(test_overwrite),
        cmocka_unit_test(test_flushall_in_slices),
        cmocka_unit_test(test_eviction_takes_pending_memory_first),
        cmocka_unit_test(test_engine_end_with_slices_pending),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
