/* engine/core/memory/evict.c through the engine's execute path: the LFU counter
 * (initial value, increments, decay by the engine's clock, saturation),
 * OBJECT FREQ/IDLETIME per policy, and what each kind of policy evicts
 * (LRU keeps the recently used, volatile-ttl takes the nearest deadline,
 * volatile-* refuse when only persistent keys are left), with maxmemory
 * set just above the memory in use. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine_harness.h"
#include "engine/base/mem.h"
#include "engine/core/keyspace/db.h"
#include "engine/core/memory/evict.h"

static void lfu_exact(gb_settings *s)
{
    s->maxmemory_policy = GB_POLICY_ALLKEYS_LFU;
    s->lfu_log_factor = 0; /* every access counts one */
}

static void test_lfu_counter_grows_and_decays(void **state)
{
    (void)state;
    harness *h = harness_new(lfu_exact);
    run(h, "SET k v");
    assert_string_equal(run(h, "OBJECT FREQ k"), ":5");
    for (int i = 0; i < 3; i++)
        run(h, "GET k");
    assert_string_equal(run(h, "OBJECT FREQ k"), ":8");
    run(h, "EXISTS k"); /* not a touch */
    run(h, "TYPE k");
    assert_string_equal(run(h, "OBJECT FREQ k"), ":8");
    /* lfu-decay-time 1: one less per idle minute, read without a touch */
    h->eng->now_ms += 3 * 60000;
    assert_string_equal(run(h, "OBJECT FREQ k"), ":5");
    h->eng->now_ms += 10 * 60000;
    assert_string_equal(run(h, "OBJECT FREQ k"), ":0");
    assert_string_equal(run(h, "OBJECT IDLETIME k"),
                        "-ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
                        "switching between policies at runtime LRU and LFU data will take some time to adjust.");
    harness_free(h);
}

static void test_lfu_counter_saturates(void **state)
{
    (void)state;
    harness *h = harness_new(lfu_exact);
    run(h, "SET k v");
    for (int i = 0; i < 300; i++)
        run(h, "GET k");
    assert_string_equal(run(h, "OBJECT FREQ k"), ":255");
    harness_free(h);
}

static void test_freq_refused_without_lfu(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    run(h, "SET k v");
    assert_string_equal(run(h, "OBJECT FREQ k"),
                        "-ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
                        "that when switching between policies at runtime LRU and LFU data will take some time "
                        "to adjust.");
    h->eng->now_mono_ms += 3000;
    assert_string_equal(run(h, "OBJECT IDLETIME k"), ":3");
    harness_free(h);
}

/* Sets maxmemory to the memory in use plus room. */
static void limit_to(harness *h, size_t room)
{
    char cmd[64];
    snprintf(cmd, sizeof cmd, "CONFIG SET maxmemory %zu", gb_mem_used() + room);
    assert_string_equal(run(h, cmd), "+OK");
}

static void fill(harness *h, const char *prefix, int n, const char *opts)
{
    char cmd[128];
    for (int i = 0; i < n; i++) {
        snprintf(cmd, sizeof cmd, "SET %s:%d vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv%s", prefix, i,
                 opts);
        assert_string_equal(run(h, cmd), "+OK");
    }
}

static int count_present(harness *h, const char *prefix, int n, int step)
{
    char cmd[64];
    int present = 0;
    for (int i = 0; i < n; i += step) {
        snprintf(cmd, sizeof cmd, "EXISTS %s:%d", prefix, i);
        present += strcmp(run(h, cmd), ":1") == 0;
    }
    return present;
}

static void allkeys_lru(gb_settings *s) { s->maxmemory_policy = GB_POLICY_ALLKEYS_LRU; }

static void test_lru_keeps_recently_used(void **state)
{
    (void)state;
    harness *h = harness_new(allkeys_lru);
    fill(h, "old", 2000, "");
    limit_to(h, 16 * 1024); /* full: each new key evicts about one */
    h->eng->now_mono_ms += 2000;
    char cmd[64];
    for (int i = 0; i < 2000; i += 4) { /* a hot quarter, read later */
        snprintf(cmd, sizeof cmd, "GET old:%d", i);
        run(h, cmd);
    }
    h->eng->now_mono_ms += 2000;
    fill(h, "new", 1000, ""); /* fewer than the 1500 cold ones */
    assert_true(h->eng->stats.evicted_keys > 500);
    assert_true(gb_mem_used() <= (size_t)h->eng->cfg.maxmemory + 4096);
    int hot = count_present(h, "old", 2000, 4);
    assert_true(hot >= 500 * 9 / 10);
    harness_free(h);
}

static void volatile_ttl(gb_settings *s) { s->maxmemory_policy = GB_POLICY_VOLATILE_TTL; }

static void test_volatile_ttl_takes_nearest_deadlines(void **state)
{
    (void)state;
    harness *h = harness_new(volatile_ttl);
    limit_to(h, 300 * 1024);
    fill(h, "p", 200, ""); /* persistent: never evicted */
    char cmd[128];
    for (int i = 0; i < 3000; i++) {
        snprintf(cmd, sizeof cmd, "SET t:%d vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv EX %d", i, 100000 + i);
        assert_string_equal(run(h, cmd), "+OK");
    }
    assert_true(h->eng->stats.evicted_keys > 500);
    assert_int_equal(count_present(h, "p", 200, 1), 200);
    /* the evicted are the early deadlines: the last thousand all survive */
    int late = 0;
    for (int i = 2000; i < 3000; i++) {
        snprintf(cmd, sizeof cmd, "EXISTS t:%d", i);
        late += strcmp(run(h, cmd), ":1") == 0;
    }
    assert_true(late >= 950);
    harness_free(h);
}

static void volatile_lru(gb_settings *s) { s->maxmemory_policy = GB_POLICY_VOLATILE_LRU; }

static void test_volatile_refuses_without_ttl_keys(void **state)
{
    (void)state;
    harness *h = harness_new(volatile_lru);
    limit_to(h, 64 * 1024);
    char cmd[128];
    const char *reply = "+OK";
    for (int i = 0; i < 5000 && strcmp(reply, "+OK") == 0; i++) {
        snprintf(cmd, sizeof cmd, "SET p:%d vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv", i);
        reply = run(h, cmd);
    }
    assert_string_equal(reply, "-OOM command not allowed when used memory > 'maxmemory'.");
    assert_int_equal(h->eng->stats.evicted_keys, 0);
    assert_string_equal(run(h, "GET p:0"), "$vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv");
    harness_free(h);
}

/* A cache value of 200 bytes is one block with its key, not a record and
 * a separate buffer: the room under maxmemory holds more keys. */
static void test_cache_value_is_one_block(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    char cmd[300] = "SET key:123456 ";
    memset(cmd + strlen(cmd), 'v', 200);
    assert_string_equal(run(h, cmd), "+OK");
    /* One allocation: the value is inline in the key's record, so what
     * MEMORY USAGE counts is that record alone. (A byte count would depend
     * on which free chunk glibc hands out: a 248-byte request can get 264.) */
    gb_kv *kv = gb_db_lookup_quiet(&h->eng->dbs[0], gb_slice_cstr("key:123456"));
    assert_non_null(kv);
    assert_int_equal(kv->enc, GB_ENC_EMBSTR);
    assert_int_equal(gb_kv_mem(kv), gb_mem_accounted(kv));
    assert_string_equal(run(h, "OBJECT ENCODING key:123456"), "$raw");
    run(h, "SET e44 vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv");
    run(h, "SET e45 vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv");
    assert_string_equal(run(h, "OBJECT ENCODING e44"), "$embstr");
    assert_string_equal(run(h, "OBJECT ENCODING e45"), "$raw");
    harness_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lfu_counter_grows_and_decays),
        cmocka_unit_test(test_lfu_counter_saturates),
        cmocka_unit_test(test_freq_refused_without_lfu),
        cmocka_unit_test(test_lru_keeps_recently_used),
        cmocka_unit_test(test_volatile_ttl_takes_nearest_deadlines),
        cmocka_unit_test(test_volatile_refuses_without_ttl_keys),
        cmocka_unit_test(test_cache_value_is_one_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
