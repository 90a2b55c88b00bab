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
    advance(h, 50); /* the deadline's own millisecond: still there (Redis: now > when) */
    assert_string_equal(run(h, "PTTL k"), ":0");
    assert_string_equal(run(h, "GET k"), "$v");
    advance(h, 1);
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

/* OBJECT REFCOUNT of integers 0..9999 (keyrecord.h, GB_KV_INT_SHARED):
 * the mark an INT record keeps in its vlen bits survives what moves or
 * rewrites the record (an expiry added, an in-place overwrite of an
 * embedded string) and is set again by each new integer value. */
static void test_shared_integer_refcount(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    const char *shared = ":2147483647";
    run(h, "SET k 5");
    assert_string_equal(run(h, "OBJECT REFCOUNT k"), shared);
    run(h, "SET k 10000");
    assert_string_equal(run(h, "OBJECT REFCOUNT k"), ":1");
    assert_string_equal(run(h, "DECR k"), ":9999");
    assert_string_equal(run(h, "OBJECT REFCOUNT k"), shared);
    /* COPY's duplicate is private; a new value makes it shared again. */
    assert_string_equal(run(h, "COPY k c"), ":1");
    assert_string_equal(run(h, "OBJECT REFCOUNT c"), ":1");
    assert_string_equal(run(h, "EXPIRE c 100"), ":1"); /* the record grows an expiry field */
    assert_string_equal(run(h, "OBJECT REFCOUNT c"), ":1");
    assert_string_equal(run(h, "RENAME c r"), "+OK");
    assert_string_equal(run(h, "OBJECT REFCOUNT r"), ":1");
    assert_string_equal(run(h, "INCRBY r -9000"), ":999");
    assert_string_equal(run(h, "OBJECT REFCOUNT r"), shared);
    /* An embedded string of 10 bytes overwritten in place by an integer:
     * its length must not read as the mark. */
    run(h, "SET e abcdefghij");
    run(h, "SET e 12");
    assert_string_equal(run(h, "OBJECT ENCODING e"), "$int");
    assert_string_equal(run(h, "OBJECT REFCOUNT e"), shared);
    assert_string_equal(run(h, "OBJECT REFCOUNT nokey"), "$nil");
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

/* ---- a random walk over string keys against a model ----
 * Keys whose ends fall at every alignment of the value word and on both
 * sides of the 14-bit length; values of every encoding; expiries coming
 * and going (the record is rebuilt); renames (a new record for the same
 * value). After every step the key's value and TTL are read back. */

#define WALK_KEYS 14
#define WALK_VAL_MAX 700

typedef struct walk_key {
    char *name;
    size_t len;
    bool present, ttl;
    char val[WALK_VAL_MAX * 2];
    size_t vlen;
} walk_key;

static uint64_t walk_rng = 0x9e3779b97f4a7c15ull;
static uint64_t walk_next(void)
{
    walk_rng ^= walk_rng << 13;
    walk_rng ^= walk_rng >> 7;
    walk_rng ^= walk_rng << 17;
    return walk_rng;
}

static const char *walk_run(harness *h, gb_slice a, gb_slice key, const char *b, size_t blen, const char *c)
{
    gb_slice argv[4] = {a, key, gb_slice_make(b, blen), c ? gb_slice_cstr(c) : gb_slice_make("", 0)};
    return run_argv(h, b ? (c ? 4 : 3) : 2, argv);
}

static void walk_fill_value(char *out, size_t *len)
{
    static const size_t sizes[] = {0, 1, 3, 7, 8, 15, 16, 44, 45, 100, 511, 512, 513, 650};
    uint64_t r = walk_next();
    if (r % 4 == 0) {
        *len = (size_t)snprintf(out, 32, "%lld", (long long)((int64_t)(walk_next() % 2000001) - 1000000));
        return;
    }
    *len = sizes[r % (sizeof sizes / sizeof sizes[0])];
    for (size_t i = 0; i < *len; i++)
        out[i] = (char)('a' + (walk_next() % 26));
}

/* The model's value as a canonical integer of at most 7 characters (INCRBY
 * 1000 on it then never overflows). */
static bool walk_int(const walk_key *k, long long *v)
{
    if (k->vlen == 0 || k->vlen > 7)
        return false;
    char buf[16];
    memcpy(buf, k->val, k->vlen);
    buf[k->vlen] = '\0';
    char *end;
    *v = strtoll(buf, &end, 10);
    char back[24];
    snprintf(back, sizeof back, "%lld", *v);
    return *end == '\0' && strcmp(back, buf) == 0;
}

static void walk_check(harness *h, const walk_key *k)
{
    gb_slice key = gb_slice_make(k->name, k->len);
    const char *got = walk_run(h, gb_slice_cstr("GET"), key, NULL, 0, NULL);
    if (!k->present) {
        assert_string_equal(got, "$nil");
        return;
    }
    assert_int_equal(got[0], '$');
    assert_int_equal(strlen(got + 1), k->vlen);
    assert_memory_equal(got + 1, k->val, k->vlen);
    got = walk_run(h, gb_slice_cstr("TTL"), key, NULL, 0, NULL);
    assert_string_equal(got, k->ttl ? ":1000" : ":-1");
    gb_kv *kv = gb_db_lookup_quiet(&h->eng->dbs[0], key);
    assert_int_equal(gb_kv_keylen(kv), k->len);
    assert_memory_equal(gb_kv_key_ptr(kv), k->name, k->len);
}

static void test_string_records_random_walk(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    static const size_t lens[WALK_KEYS] = {1, 2, 5, 7, 8, 9, 12, 15, 16, 17, GB_KV_KLEN_LONG - 1, GB_KV_KLEN_LONG,
                                           GB_KV_KLEN_LONG + 1, GB_KV_KLEN_LONG + 5};
    static walk_key keys[WALK_KEYS];
    for (int i = 0; i < WALK_KEYS; i++) {
        keys[i] = (walk_key){.name = malloc(lens[i]), .len = lens[i]};
        memset(keys[i].name, 'a' + i, lens[i]);
    }
    char val[WALK_VAL_MAX];
    for (int step = 0; step < 6000; step++) {
        walk_key *k = &keys[walk_next() % WALK_KEYS];
        gb_slice key = gb_slice_make(k->name, k->len);
        size_t vlen;
        long long iv;
        switch (walk_next() % 9) {
        case 0: /* SET, or SET ... EX */
        case 1:
            walk_fill_value(val, &vlen);
            if (walk_next() % 3 == 0) {
                assert_string_equal(walk_run(h, gb_slice_cstr("SET"), key, val, vlen, "KEEPTTL"), "+OK");
                k->ttl = k->present && k->ttl;
            } else if (walk_next() % 3 == 0) {
                gb_slice argv[5] = {gb_slice_cstr("SET"), key, gb_slice_make(val, vlen), gb_slice_cstr("EX"),
                                    gb_slice_cstr("1000")};
                assert_string_equal(run_argv(h, 5, argv), "+OK");
                k->ttl = true;
            } else {
                assert_string_equal(walk_run(h, gb_slice_cstr("SET"), key, val, vlen, NULL), "+OK");
                k->ttl = false;
            }
            memcpy(k->val, val, vlen);
            k->vlen = vlen;
            k->present = true;
            break;
        case 2: /* APPEND */
            vlen = walk_next() % 12;
            for (size_t i = 0; i < vlen; i++)
                val[i] = (char)('0' + walk_next() % 10);
            if (k->vlen + vlen > sizeof k->val)
                break;
            walk_run(h, gb_slice_cstr("APPEND"), key, val, vlen, NULL);
            if (!k->present)
                k->vlen = 0, k->ttl = false;
            memcpy(k->val + k->vlen, val, vlen);
            k->vlen += vlen;
            k->present = true;
            break;
        case 3: /* INCRBY on an integer */
            if (!k->present || !walk_int(k, &iv))
                break;
            k->vlen = (size_t)snprintf(k->val, sizeof k->val, "%lld", iv + 1000);
            snprintf(val, sizeof val, ":%lld", iv + 1000);
            assert_string_equal(walk_run(h, gb_slice_cstr("INCRBY"), key, "1000", 4, NULL), val);
            break;
        case 4: /* an expiry comes or goes */
            if (!k->present)
                break;
            if (k->ttl)
                assert_string_equal(walk_run(h, gb_slice_cstr("PERSIST"), key, NULL, 0, NULL), ":1");
            else
                assert_string_equal(walk_run(h, gb_slice_cstr("EXPIRE"), key, "1000", 4, NULL), ":1");
            k->ttl = !k->ttl;
            break;
        case 5: /* DEL */
            assert_string_equal(walk_run(h, gb_slice_cstr("DEL"), key, NULL, 0, NULL), k->present ? ":1" : ":0");
            k->present = k->ttl = false;
            break;
        case 6: { /* RENAME to another key */
            walk_key *to = &keys[walk_next() % WALK_KEYS];
            if (!k->present || to == k)
                break;
            gb_slice argv[3] = {gb_slice_cstr("RENAME"), key, gb_slice_make(to->name, to->len)};
            assert_string_equal(run_argv(h, 3, argv), "+OK");
            memcpy(to->val, k->val, k->vlen);
            to->vlen = k->vlen;
            to->ttl = k->ttl;
            to->present = true;
            k->present = k->ttl = false;
            walk_check(h, to);
            break;
        }
        case 7: { /* SETRANGE inside the value */
            if (!k->present || k->vlen == 0)
                break;
            size_t off = walk_next() % k->vlen;
            vlen = 1 + walk_next() % 5;
            if (off + vlen > sizeof k->val)
                break;
            for (size_t i = 0; i < vlen; i++)
                val[i] = (char)('A' + walk_next() % 26);
            char offs[24];
            snprintf(offs, sizeof offs, "%zu", off);
            gb_slice argv[4] = {gb_slice_cstr("SETRANGE"), key, gb_slice_cstr(offs), gb_slice_make(val, vlen)};
            run_argv(h, 4, argv);
            memcpy(k->val + off, val, vlen);
            if (off + vlen > k->vlen)
                k->vlen = off + vlen;
            break;
        }
        default: /* GETDEL or GETEX PERSIST */
            if (walk_next() % 2) {
                walk_run(h, gb_slice_cstr("GETDEL"), key, NULL, 0, NULL);
                k->present = k->ttl = false;
            } else if (k->present) {
                walk_run(h, gb_slice_cstr("GETEX"), key, "PERSIST", 7, NULL);
                k->ttl = false;
            }
            break;
        }
        walk_check(h, k);
    }
    size_t present = 0;
    for (int i = 0; i < WALK_KEYS; i++) {
        present += keys[i].present;
        walk_check(h, &keys[i]);
        free(keys[i].name);
    }
    assert_int_equal(gb_db_size(&h->eng->dbs[0]), present);
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
        cmocka_unit_test(test_shared_integer_refcount),
        cmocka_unit_test(test_string_records_random_walk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
