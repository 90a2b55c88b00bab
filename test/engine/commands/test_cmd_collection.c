/* The hash, set and sorted-set commands through the engine's execute path
 * (engine/commands/cmd_hash.c, cmd_set.c, cmd_zset.c, cmd_types.c): happy paths,
 * Redis's error texts, encodings and their conversions as OBJECT ENCODING
 * shows them, CONFIG SET of the thresholds, delete-when-empty, STORE
 * overwrites, blocking pops served and timed out with two clients, MULTI,
 * WATCH, and the typed operations of engine/types/t_list.h.
 *
 * The harness renders doubles with "%.17g" (the RESP writer's shortest
 * round-trip form is tested with score.h), arrays as "*n" followed by their
 * elements, and deferred-length arrays as "*?". */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <time.h>

#include "engine_harness.h"
#include "engine/core/request/blocking.h"
#include "engine/types/t_hash.h"
#include "engine/types/t_list.h"
#include "engine/types/t_zset.h"

#define EXPECT(h, cmd, want) assert_string_equal(run(h, cmd), want)

/* ---- a second client with its own output ---------------------------------------- */

typedef struct peer {
    gb_client *c;
    harness_out out;
} peer;

static peer *peer_new(harness *h)
{
    peer *p = calloc(1, sizeof *p);
    p->c = gb_client_new(h->eng, &harness_ops, &p->out, NULL, NULL, 0);
    return p;
}

static void peer_free(peer *p)
{
    gb_client_free(p->c);
    free(p);
}

/* Runs cmdline on the peer; returns what the peer received (from this
 * command or from being served meanwhile) and clears it. */
static const char *prun(peer *p, const char *cmdline)
{
    static char last[1 << 16];
    char *copy = strdup(cmdline);
    gb_slice argv[64];
    int argc = 0;
    for (char *save = NULL, *t = strtok_r(copy, " ", &save); t && argc < 64; t = strtok_r(NULL, " ", &save))
        argv[argc++] = gb_slice_cstr(t);
    gb_gate_execute(p->c, argc, argv);
    free(copy);
    snprintf(last, sizeof last, "%s", p->out.buf);
    p->out.len = 0;
    p->out.buf[0] = '\0';
    return last;
}

/* What the peer has received since the last look. */
static const char *ptake(peer *p)
{
    static char last[1 << 16];
    snprintf(last, sizeof last, "%s", p->out.buf);
    p->out.len = 0;
    p->out.buf[0] = '\0';
    return last;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- hashes --------------------------------------------------------------------------- */

static void test_hash_basics(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    EXPECT(h, "HSET h a 1 b 2", ":2");
    EXPECT(h, "HSET h a 10 c 3", ":1");
    EXPECT(h, "HGET h a", "$10");
    EXPECT(h, "HGET h zz", "$nil");
    EXPECT(h, "HGET nokey a", "$nil");
    EXPECT(h, "HMGET h a zz c", "*3 $10 $nil $3");
    EXPECT(h, "HMGET nokey a b", "*2 $nil $nil");
    EXPECT(h, "HLEN h", ":3");
    EXPECT(h, "HEXISTS h b", ":1");
    EXPECT(h, "HEXISTS h q", ":0");
    EXPECT(h, "HSTRLEN h a", ":2");
    EXPECT(h, "HSTRLEN h q", ":0");
    EXPECT(h, "HGETALL h", "*6 $a $10 $b $2 $c $3"); /* listpack: insertion order */
    EXPECT(h, "HKEYS h", "*3 $a $b $c");
    EXPECT(h, "HVALS h", "*3 $10 $2 $3");
    EXPECT(h, "HGETALL nokey", "*0");
    EXPECT(h, "HSETNX h a x", ":0");
    EXPECT(h, "HSETNX h d 4", ":1");
    EXPECT(h, "HMSET h e 5 f 6", "+OK");
    EXPECT(h, "HSET h a", "-ERR wrong number of arguments for 'hset' command");
    EXPECT(h, "HMSET h a 1 b", "-ERR wrong number of arguments for 'hmset' command");
    EXPECT(h, "HDEL h a b zz", ":2");
    EXPECT(h, "HDEL nokey a", ":0");
    EXPECT(h, "HDEL h c d e f", ":4");
    EXPECT(h, "EXISTS h", ":0"); /* the last field took the key with it */
    run(h, "SET s str");
    const char *wt = "-WRONGTYPE Operation against a key holding the wrong kind of value";
    EXPECT(h, "HSET s a 1", wt);
    EXPECT(h, "HGET s a", wt);
    EXPECT(h, "HMGET s a", wt);
    EXPECT(h, "HGETALL s", wt);
    EXPECT(h, "HSETNX s a 1", wt);
    EXPECT(h, "HINCRBY s a 1", wt);
    EXPECT(h, "HSCAN s 0", wt);
    EXPECT(h, "HRANDFIELD s", wt);
    EXPECT(h, "HLEN s", wt);
    harness_free(h);
}

static void test_hash_incr(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    EXPECT(h, "HINCRBY h n 5", ":5");
    EXPECT(h, "HINCRBY h n -7", ":-2");
    EXPECT(h, "HINCRBY h n abc", "-ERR value is not an integer or out of range");
    run(h, "HSET h s hello f 1.5 big 9223372036854775807");
    EXPECT(h, "HINCRBY h s 1", "-ERR hash value is not an integer");
    EXPECT(h, "HINCRBY h big 1", "-ERR increment or decrement would overflow");
    EXPECT(h, "HINCRBY h big 0", ":9223372036854775807");
    EXPECT(h, "HINCRBYFLOAT h f 1", "$2.5");
    EXPECT(h, "HINCRBYFLOAT h f 0.1", "$2.6");
    EXPECT(h, "HINCRBYFLOAT h new 3.0e3", "$3000");
    EXPECT(h, "HINCRBYFLOAT h f abc", "-ERR value is not a valid float");
    EXPECT(h, "HINCRBYFLOAT h f nan", "-ERR value is not a valid float");
    EXPECT(h, "HINCRBYFLOAT h f inf", "-ERR value is NaN or Infinity");
    EXPECT(h, "HINCRBYFLOAT h s 1", "-ERR hash value is not a float");
    run(h, "HSET h huge 1.1e4932");
    EXPECT(h, "HINCRBYFLOAT h huge 1.1e4932", "-ERR increment would produce NaN or Infinity");
    EXPECT(h, "HGET h f", "$2.6");
    /* A failed increment of a new key leaves no key behind. */
    EXPECT(h, "HINCRBYFLOAT nokey f inf", "-ERR value is NaN or Infinity");
    EXPECT(h, "EXISTS nokey", ":0");
    harness_free(h);
}

static void test_hash_encoding(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    run(h, "HSET h a 1");
    EXPECT(h, "OBJECT ENCODING h", "$listpack");
    /* A value longer than hash-max-listpack-value (64). */
    char cmd[200];
    snprintf(cmd, sizeof cmd, "HSET h long %065d", 0);
    run(h, cmd);
    EXPECT(h, "OBJECT ENCODING h", "$hashtable");
    EXPECT(h, "HLEN h", ":2");
    /* More fields than hash-max-listpack-entries, changed at run time. */
    EXPECT(h, "CONFIG SET hash-max-listpack-entries 3", "+OK");
    run(h, "HSET g a 1 b 2 c 3");
    EXPECT(h, "OBJECT ENCODING g", "$listpack");
    run(h, "HSET g d 4");
    EXPECT(h, "OBJECT ENCODING g", "$hashtable");
    EXPECT(h, "HGET g d", "$4");
    /* Deleting does not convert back. */
    run(h, "HDEL g a b c");
    EXPECT(h, "OBJECT ENCODING g", "$hashtable");
    /* A lowered threshold applies at the hash's next write, an update
     * included (Redis's hashTypeSet). */
    run(h, "CONFIG SET hash-max-listpack-entries 128");
    run(h, "HSET k a 1 b 2");
    run(h, "CONFIG SET hash-max-listpack-entries 1");
    EXPECT(h, "OBJECT ENCODING k", "$listpack");
    EXPECT(h, "HINCRBY k a 1", ":2");
    EXPECT(h, "OBJECT ENCODING k", "$hashtable");
    /* COPY keeps contents and encoding. */
    EXPECT(h, "COPY g g2", ":1");
    EXPECT(h, "HGETALL g2", "*2 $d $4");
    EXPECT(h, "TYPE g2", "+hash");
    harness_free(h);
}

static void test_hash_random_scan(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    run(h, "HSET h a 1 b 2 c 3");
    EXPECT(h, "HRANDFIELD nokey", "$nil");
    EXPECT(h, "HRANDFIELD nokey 3", "*0");
    EXPECT(h, "HRANDFIELD h 0", "*0");
    EXPECT(h, "HRANDFIELD h 5", "*3 $a $b $c"); /* count >= size: all, in order */
    EXPECT(h, "HRANDFIELD h 5 WITHVALUES", "*6 $a $1 $b $2 $c $3");
    assert_int_equal(strncmp(run(h, "HRANDFIELD h -5"), "*5 ", 3), 0);
    assert_int_equal(strncmp(run(h, "HRANDFIELD h -2 withvalues"), "*4 ", 3), 0);
    assert_int_equal(strncmp(run(h, "HRANDFIELD h 2"), "*2 ", 3), 0);
    const char *one = run(h, "HRANDFIELD h");
    assert_true(!strcmp(one, "$a") || !strcmp(one, "$b") || !strcmp(one, "$c"));
    EXPECT(h, "HRANDFIELD h abc", "-ERR value is not an integer or out of range");
    EXPECT(h, "HRANDFIELD h -9223372036854775808",
           "-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
    EXPECT(h, "HRANDFIELD h -4611686018427387904 WITHVALUES", "-ERR value is out of range");
    EXPECT(h, "HRANDFIELD h -4611686018427387904 BAD", "-ERR syntax error");
    EXPECT(h, "HRANDFIELD h 1 WITHVALUES x", "-ERR syntax error");
    EXPECT(h, "HSCAN h 0", "*2 $0 *6 $a $1 $b $2 $c $3");
    EXPECT(h, "HSCAN h 0 MATCH b*", "*2 $0 *2 $b $2");
    EXPECT(h, "HSCAN h 0 COUNT 0", "-ERR syntax error");
    EXPECT(h, "HSCAN h 0 COUNT x", "-ERR value is not an integer or out of range");
    EXPECT(h, "HSCAN h 0 TYPE string", "-ERR syntax error");
    EXPECT(h, "HSCAN h abc", "-ERR invalid cursor");
    EXPECT(h, "HSCAN nokey 0 COUNT 0", "*2 $0 *0"); /* options are not looked at */
    /* A hashtable hash: a full scan returns every field exactly once here
     * (no resize during the scan). */
    run(h, "CONFIG SET hash-max-listpack-entries 2");
    for (int i = 0; i < 100; i++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "HSET big f%d %d", i, i);
        run(h, cmd);
    }
    EXPECT(h, "OBJECT ENCODING big", "$hashtable");
    int seen[100] = {0};
    char cursor[32] = "0";
    int total = 0;
    do {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "HSCAN big %s COUNT 7", cursor);
        const char *r = run(h, cmd);
        assert_int_equal(strncmp(r, "*2 $", 4), 0);
        sscanf(r + 4, "%31s", cursor);
        for (const char *p = strstr(r, "$f"); p; p = strstr(p + 2, "$f")) {
            int i = atoi(p + 2);
            assert_true(i >= 0 && i < 100);
            seen[i]++;
            total++;
        }
    } while (strcmp(cursor, "0") != 0);
    for (int i = 0; i < 100; i++)
        assert_int_equal(seen[i], 1);
    assert_int_equal(total, 100);
    harness_free(h);
}

/* ---- sets ------------------------------------------------------------------------------- */

static void test_set_basics(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    EXPECT(h, "SADD s 3 1 2 2", ":3");
    EXPECT(h, "OBJECT ENCODING s", "$intset");
    EXPECT(h, "SMEMBERS s", "*? $1 $2 $3");
    EXPECT(h, "SADD s x", ":1");
    EXPECT(h, "OBJECT ENCODING s", "$listpack");
    EXPECT(h, "SCARD s", ":4");
    EXPECT(h, "SISMEMBER s x", ":1");
    EXPECT(h, "SISMEMBER s y", ":0");
    EXPECT(h, "SISMEMBER nokey y", ":0");
    EXPECT(h, "SMISMEMBER s 1 y x", "*3 :1 :0 :1");
    EXPECT(h, "SMISMEMBER nokey 1", "*1 :0");
    EXPECT(h, "SREM s 1 y", ":1");
    EXPECT(h, "SREM nokey 1", ":0");
    EXPECT(h, "SREM s 2 3 x", ":3");
    EXPECT(h, "EXISTS s", ":0");
    /* intset -> hashtable past set-max-intset-entries */
    EXPECT(h, "CONFIG SET set-max-intset-entries 2", "+OK");
    run(h, "SADD t 1 2");
    EXPECT(h, "OBJECT ENCODING t", "$intset");
    run(h, "SADD t 3");
    EXPECT(h, "OBJECT ENCODING t", "$hashtable");
    /* listpack -> hashtable past set-max-listpack-entries */
    EXPECT(h, "CONFIG SET set-max-listpack-entries 2", "+OK");
    run(h, "SADD u a b");
    EXPECT(h, "OBJECT ENCODING u", "$listpack");
    run(h, "SADD u c");
    EXPECT(h, "OBJECT ENCODING u", "$hashtable");
    run(h, "SET str v");
    EXPECT(h, "SADD str a", "-WRONGTYPE Operation against a key holding the wrong kind of value");
    EXPECT(h, "SMEMBERS str", "-WRONGTYPE Operation against a key holding the wrong kind of value");
    EXPECT(h, "SCARD str", "-WRONGTYPE Operation against a key holding the wrong kind of value");
    harness_free(h);
}

static void test_set_smove(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    run(h, "SADD a 1 2");
    run(h, "SET str v");
    EXPECT(h, "SMOVE nokey str 1", ":0"); /* a missing source wins over a wrong-type destination */
    EXPECT(h, "SMOVE a str 1", "-WRONGTYPE Operation against a key holding the wrong kind of value");
    EXPECT(h, "SMOVE str a 1", "-WRONGTYPE Operation against a key holding the wrong kind of value");
    EXPECT(h, "SMOVE a a 1", ":1");
    EXPECT(h, "SMOVE a a 9", ":0");
    EXPECT(h, "SMOVE a b 9", ":0");
    EXPECT(h, "EXISTS b", ":0");
    EXPECT(h, "SMOVE a b 1", ":1");
    EXPECT(h, "SMEMBERS b", "*? $1");
    EXPECT(h, "OBJECT ENCODING b", "$intset");
    EXPECT(h, "SMOVE a b 2", ":1");
    EXPECT(h, "EXISTS a", ":0");
    EXPECT(h, "SCARD b", ":2");
    harness_free(h);
}

static void test_set_algebra(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    run(h, "SADD a 1 2 3 x");
    run(h, "SADD b 2 3 4");
    run(h, "SADD c 3 y");
    run(h, "SET str v");
    EXPECT(h, "SINTER a b", "*? $2 $3");
    EXPECT(h, "SINTER a b c", "*? $3");
    EXPECT(h, "SINTER a nokey", "*0");
    EXPECT(h, "SINTER nokey str", "-WRONGTYPE Operation against a key holding the wrong kind of value");
    EXPECT(h, "SUNION b nokey", "*3 $2 $3 $4");
    EXPECT(h, "SDIFF a b", "*2 $1 $x");
    EXPECT(h, "SDIFF nokey a", "*0");
    EXPECT(h, "SINTERCARD 2 a b", ":2");
    EXPECT(h, "SINTERCARD 2 a b LIMIT 1", ":1");
    EXPECT(h, "SINTERCARD 2 a b LIMIT 0", ":2");
    EXPECT(h, "SINTERCARD 0 a", "-ERR numkeys should be greater than 0");
    EXPECT(h, "SINTERCARD x a", "-ERR numkeys should be greater than 0");
    EXPECT(h, "SINTERCARD 3 a b", "-ERR Number of keys can't be greater than number of args");
    EXPECT(h, "SINTERCARD 1 a LIMIT -1", "-ERR LIMIT can't be negative");
    EXPECT(h, "SINTERCARD 1 a LIMIT", "-ERR syntax error");
    EXPECT(h, "SINTERCARD 1 a FOO 1", "-ERR syntax error");
    /* STORE forms overwrite any type and drop the TTL. */
    run(h, "EXPIRE str 100");
    EXPECT(h, "SINTERSTORE str a b", ":2");
    EXPECT(h, "TYPE str", "+set");
    EXPECT(h, "TTL str", ":-1");
    EXPECT(h, "OBJECT ENCODING str", "$intset");
    EXPECT(h, "SUNIONSTORE u a c", ":5");
    EXPECT(h, "SCARD u", ":5");
    EXPECT(h, "SDIFFSTORE d a b c", ":2");
    EXPECT(h, "SMEMBERS d", "*? $1 $x");
    /* An empty result deletes the destination. */
    EXPECT(h, "SINTERSTORE d a nokey", ":0");
    EXPECT(h, "EXISTS d", ":0");
    EXPECT(h, "SDIFFSTORE u a a", ":0");
    EXPECT(h, "EXISTS u", ":0");
    /* The destination may be a source. */
    EXPECT(h, "SUNIONSTORE a a b", ":5");
    EXPECT(h, "SCARD a", ":5");
    harness_free(h);
}

static void test_set_pop_random(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    run(h, "SADD s 1 2 3 4 5");
    EXPECT(h, "SPOP nokey", "$nil");
    EXPECT(h, "SPOP nokey 2", "*0");
    EXPECT(h, "SPOP s 0", "*0");
    EXPECT(h, "SPOP s -1", "-ERR value is out of range, must be positive");
    EXPECT(h, "SPOP s x", "-ERR value is out of range, must be positive");
    EXPECT(h, "SPOP s 1 2", "-ERR syntax error");
    assert_int_equal(strncmp(run(h, "SPOP s 2"), "*2 $", 4), 0);
    EXPECT(h, "SCARD s", ":3");
    assert_int_equal(run(h, "SPOP s")[0], '$');
    EXPECT(h, "SCARD s", ":2");
    assert_int_equal(strncmp(run(h, "SPOP s 10"), "*2 $", 4), 0);
    EXPECT(h, "EXISTS s", ":0");
    run(h, "SADD s a b c");
    EXPECT(h, "SRANDMEMBER nokey", "$nil");
    EXPECT(h, "SRANDMEMBER nokey 5", "*0");
    EXPECT(h, "SRANDMEMBER s 0", "*0");
    EXPECT(h, "SRANDMEMBER s 10", "*3 $a $b $c");
    assert_int_equal(strncmp(run(h, "SRANDMEMBER s -7"), "*7 $", 4), 0);
    assert_int_equal(strncmp(run(h, "SRANDMEMBER s 2"), "*2 $", 4), 0);
    EXPECT(h, "SRANDMEMBER s -9223372036854775808",
           "-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807");
    EXPECT(h, "SRANDMEMBER s 1 2", "-ERR syntax error");
    EXPECT(h, "SSCAN s 0", "*2 $0 *3 $a $b $c");
    EXPECT(h, "SSCAN s 0 MATCH [ab] COUNT 1", "*2 $0 *2 $a $b");
    harness_free(h);
}

/* ---- sorted sets ------------------------------------------------------------------------------ */

static void test_zadd(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    EXPECT(h, "ZADD z 1 a 2 b", ":2");
    EXPECT(h, "ZADD z 3 a 2 b 4 c", ":1");
    EXPECT(h, "ZADD z CH 5 a 2 b 6 d", ":2");
    EXPECT(h, "ZADD z NX 9 a 7 e", ":1");
    EXPECT(h, "ZSCORE z a", "$5");
    EXPECT(h, "ZADD z XX 8 a 9 zz", ":0");
    EXPECT(h, "ZSCORE z a", "$8");
    EXPECT(h, "ZSCORE z zz", "$nil");
    EXPECT(h, "ZADD z GT CH 1 a 10 b", ":1");
    EXPECT(h, "ZADD z LT CH 1 a 20 b", ":1");
    EXPECT(h, "ZSCORE z a", "$1");
    EXPECT(h, "ZSCORE z b", "$10");
    EXPECT(h, "ZADD z INCR 2.5 a", "$3.5");
    EXPECT(h, "ZADD z NX INCR 1 a", "$nil");
    EXPECT(h, "ZADD z XX INCR 1 nope", "$nil");
    EXPECT(h, "ZINCRBY z -0.5 a", "$3");
    EXPECT(h, "ZINCRBY z 1 new", "$1");
    EXPECT(h, "ZADD z XX NX 1 a", "-ERR XX and NX options at the same time are not compatible");
    EXPECT(h, "ZADD z GT LT 1 a", "-ERR GT, LT, and/or NX options at the same time are not compatible");
    EXPECT(h, "ZADD z NX GT 1 a", "-ERR GT, LT, and/or NX options at the same time are not compatible");
    EXPECT(h, "ZADD z INCR 1 a 2 b", "-ERR INCR option supports a single increment-element pair");
    EXPECT(h, "ZADD z 1 a 2", "-ERR syntax error");
    EXPECT(h, "ZADD z NX 1", "-ERR syntax error");
    EXPECT(h, "ZADD z nan a", "-ERR value is not a valid float");
    EXPECT(h, "ZADD z 1e-400 a", "-ERR value is not a valid float");
    EXPECT(h, "ZADD z 1e309 a", "-ERR value is not a valid float");
    EXPECT(h, "ZADD z 1 a x b", "-ERR value is not a valid float"); /* nothing applied */
    EXPECT(h, "ZSCORE z a", "$3");
    EXPECT(h, "ZINCRBY z nx a", "-ERR syntax error"); /* options are parsed for ZINCRBY too */
    EXPECT(h, "ZADD inf +inf a -inf b", ":2");
    EXPECT(h, "ZINCRBY inf -inf a", "-ERR resulting score is not a number (NaN)");
    EXPECT(h, "ZADD inf INCR +inf b", "-ERR resulting score is not a number (NaN)");
    EXPECT(h, "ZSCORE inf a", "$inf");
    EXPECT(h, "ZSCORE inf b", "$-inf");
    EXPECT(h, "ZMSCORE inf a nope b", "*3 $inf $nil $-inf");
    EXPECT(h, "ZMSCORE nokey a", "*1 $nil");
    EXPECT(h, "ZADD x XX 1 a", ":0");
    EXPECT(h, "EXISTS x", ":0"); /* XX never creates the key */
    EXPECT(h, "ZCARD z", ":6");
    EXPECT(h, "ZCARD nokey", ":0");
    run(h, "SET str v");
    EXPECT(h, "ZADD str 1 a", "-WRONGTYPE Operation against a key holding the wrong kind of value");
    EXPECT(h, "ZSCORE str a", "-WRONGTYPE Operation against a key holding the wrong kind of value");
    EXPECT(h, "ZMSCORE str a", "-WRONGTYPE Operation against a key holding the wrong kind of value");
    harness_free(h);
}

static void test_zrange(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    run(h, "ZADD z 1 a 2 b 3 c 4 d 5 e");
    EXPECT(h, "ZRANGE z 0 -1", "*5 $a $b $c $d $e");
    EXPECT(h, "ZRANGE z 1 2 WITHSCORES", "*4 $b $2 $c $3");
    EXPECT(h, "ZRANGE z 0 1 REV", "*2 $e $d");
    EXPECT(h, "ZREVRANGE z 0 1 WITHSCORES", "*4 $e $5 $d $4");
    EXPECT(h, "ZRANGE z 5 10", "*0");
    EXPECT(h, "ZRANGE z -100 100", "*5 $a $b $c $d $e");
    EXPECT(h, "ZRANGE z (1 3 BYSCORE", "*? $b $c");
    EXPECT(h, "ZRANGE z 3 (1 BYSCORE REV WITHSCORES", "*? $c $3 $b $2");
    EXPECT(h, "ZRANGE z -inf +inf BYSCORE LIMIT 1 2", "*? $b $c");
    EXPECT(h, "ZRANGE z -inf +inf BYSCORE LIMIT -1 2", "*?");
    EXPECT(h, "ZRANGE z -inf +inf BYSCORE LIMIT 3 -1", "*? $d $e");
    EXPECT(h, "ZRANGE z [b (d BYLEX", "*? $b $c");
    EXPECT(h, "ZRANGE z + - BYLEX REV LIMIT 0 2", "*? $e $d");
    EXPECT(h, "ZRANGE z 0 1 LIMIT 0 1",
           "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
    EXPECT(h, "ZRANGE z - + BYLEX WITHSCORES",
           "-ERR syntax error, WITHSCORES not supported in combination with BYLEX");
    EXPECT(h, "ZRANGE z 0 1 BYSCORE BYLEX", "-ERR syntax error");
    EXPECT(h, "ZRANGE z a b", "-ERR value is not an integer or out of range");
    EXPECT(h, "ZRANGE z a b BYSCORE", "-ERR min or max is not a float");
    EXPECT(h, "ZRANGE z a b BYLEX", "-ERR min or max not valid string range item");
    EXPECT(h, "ZRANGE nokey 0 -1", "*0");
    EXPECT(h, "ZRANGEBYSCORE z 2 4", "*? $b $c $d");
    EXPECT(h, "ZRANGEBYSCORE z (2 (4 WITHSCORES", "*? $c $3");
    EXPECT(h, "ZRANGEBYSCORE z 0 1 BYSCORE", "-ERR syntax error");
    EXPECT(h, "ZRANGEBYSCORE z nan 1", "-ERR min or max is not a float");
    EXPECT(h, "ZREVRANGEBYSCORE z 4 2 LIMIT 1 5", "*? $c $b");
    EXPECT(h, "ZREVRANGE z 0 0 REV", "-ERR syntax error");
    EXPECT(h, "ZCOUNT z (1 3", ":2");
    EXPECT(h, "ZCOUNT z -inf +inf", ":5");
    EXPECT(h, "ZCOUNT z x 3", "-ERR min or max is not a float");
    EXPECT(h, "ZCOUNT nokey 0 1", ":0");
    /* Lex ranges on equal scores. */
    run(h, "ZADD l 0 a 0 b 0 c 0 d");
    EXPECT(h, "ZRANGEBYLEX l - [b", "*? $a $b");
    EXPECT(h, "ZREVRANGEBYLEX l + (b", "*? $d $c");
    EXPECT(h, "ZRANGEBYLEX l - + LIMIT 1 1", "*? $b");
    EXPECT(h, "ZRANGEBYLEX l a b", "-ERR min or max not valid string range item");
    EXPECT(h, "ZLEXCOUNT l [b +", ":3");
    EXPECT(h, "ZLEXCOUNT l b +", "-ERR min or max not valid string range item");
    /* Ranks; 7.2's WITHSCORE is an arity error, as in 7.0. */
    EXPECT(h, "ZRANK z c", ":2");
    EXPECT(h, "ZREVRANK z c", ":2");
    EXPECT(h, "ZRANK z nope", "$nil");
    EXPECT(h, "ZRANK nokey a", "$nil");
    EXPECT(h, "ZRANK z e WITHSCORE", "-ERR wrong number of arguments for 'zrank' command");
    EXPECT(h, "ZREVRANK z e withscore", "-ERR wrong number of arguments for 'zrevrank' command");
    /* ZRANGESTORE */
    run(h, "SET dst x");
    EXPECT(h, "ZRANGESTORE dst z 1 3", ":3");
    EXPECT(h, "ZRANGE dst 0 -1 WITHSCORES", "*6 $b $2 $c $3 $d $4");
    EXPECT(h, "ZRANGESTORE dst z 2 (1 BYSCORE REV", ":1");
    EXPECT(h, "ZRANGE dst 0 -1", "*1 $b");
    EXPECT(h, "ZRANGESTORE dst z 10 20", ":0");
    EXPECT(h, "EXISTS dst", ":0");
    EXPECT(h, "ZRANGESTORE dst nokey 0 -1", ":0");
    EXPECT(h, "ZRANGESTORE dst z 0 -1 WITHSCORES", "-ERR syntax error");
    EXPECT(h, "ZRANGESTORE z z 0 1", ":2"); /* source and destination */
    EXPECT(h, "ZRANGE z 0 -1", "*2 $a $b");
    harness_free(h);
}

static void test_zrem_pop(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    run(h, "ZADD z 1 a 2 b 3 c 4 d 5 e 6 f");
    EXPECT(h, "ZREM z a nope", ":1");
    EXPECT(h, "ZREM nokey a", ":0");
    EXPECT(h, "ZREMRANGEBYRANK z 0 0", ":1");
    EXPECT(h, "ZREMRANGEBYRANK z x 0", "-ERR value is not an integer or out of range");
    EXPECT(h, "ZREMRANGEBYSCORE z (5 +inf", ":1");
    EXPECT(h, "ZREMRANGEBYSCORE z x 0", "-ERR min or max is not a float");
    EXPECT(h, "ZRANGE z 0 -1", "*3 $c $d $e");
    EXPECT(h, "ZPOPMIN z", "*2 $c $3");
    EXPECT(h, "ZPOPMAX z 5", "*4 $e $5 $d $4");
    EXPECT(h, "EXISTS z", ":0");
    EXPECT(h, "ZPOPMIN z", "*0");
    run(h, "ZADD z 1 a 2 b");
    EXPECT(h, "ZPOPMIN z 0", "*0");
    EXPECT(h, "ZPOPMIN z -1", "-ERR value is out of range, must be positive");
    EXPECT(h, "ZPOPMIN z 1 2", "-ERR syntax error");
    run(h, "ZADD l 0 a 0 b 0 c");
    EXPECT(h, "ZREMRANGEBYLEX l (a +", ":2");
    EXPECT(h, "ZREMRANGEBYLEX l x +", "-ERR min or max not valid string range item");
    EXPECT(h, "ZREMRANGEBYLEX l - +", ":1");
    EXPECT(h, "EXISTS l", ":0");
    /* ZMPOP */
    EXPECT(h, "ZMPOP 2 nokey z MIN", "*2 $z *1 *2 $a $1");
    EXPECT(h, "ZMPOP 1 z MAX COUNT 10", "*2 $z *1 *2 $b $2");
    EXPECT(h, "EXISTS z", ":0");
    EXPECT(h, "ZMPOP 1 z MIN", "*-1");
    EXPECT(h, "ZMPOP 0 z MIN", "-ERR numkeys should be greater than 0");
    EXPECT(h, "ZMPOP 2 z MIN", "-ERR syntax error");
    EXPECT(h, "ZMPOP 1 z MID", "-ERR syntax error");
    EXPECT(h, "ZMPOP 1 z MIN COUNT 0", "-ERR count should be greater than 0");
    EXPECT(h, "ZMPOP 1 z MIN COUNT 1 COUNT 1", "-ERR syntax error");
    run(h, "SET str v");
    EXPECT(h, "ZMPOP 2 str z MIN", "-WRONGTYPE Operation against a key holding the wrong kind of value");
    harness_free(h);
}

static void test_zset_random_scan(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    run(h, "ZADD z 1 a 2 b 3 c");
    EXPECT(h, "ZRANDMEMBER nokey", "$nil");
    EXPECT(h, "ZRANDMEMBER nokey 2", "*0");
    EXPECT(h, "ZRANDMEMBER z 10 WITHSCORES", "*6 $a $1 $b $2 $c $3");
    assert_int_equal(strncmp(run(h, "ZRANDMEMBER z -4 WITHSCORES"), "*8 $", 4), 0);
    EXPECT(h, "ZRANDMEMBER z -4611686018427387904 WITHSCORES", "-ERR value is out of range");
    EXPECT(h, "ZRANDMEMBER z 1 BAD", "-ERR syntax error");
    EXPECT(h, "ZSCAN z 0", "*2 $0 *6 $a $1 $b $2 $c $3");
    EXPECT(h, "ZSCAN z 0 MATCH c", "*2 $0 *2 $c $3");
    EXPECT(h, "ZSCAN z x", "-ERR invalid cursor");
    harness_free(h);
}

static void test_zset_encoding(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    run(h, "ZADD z 1 a");
    EXPECT(h, "OBJECT ENCODING z", "$listpack");
    char cmd[200];
    snprintf(cmd, sizeof cmd, "ZADD z 2 %065d", 0);
    run(h, cmd);
    EXPECT(h, "OBJECT ENCODING z", "$btree");
    EXPECT(h, "CONFIG SET zset-max-listpack-entries 2", "+OK");
    run(h, "ZADD y 1 a 2 b");
    EXPECT(h, "OBJECT ENCODING y", "$listpack");
    run(h, "ZADD y 3 c");
    EXPECT(h, "OBJECT ENCODING y", "$btree");
    EXPECT(h, "ZRANGE y 0 -1 WITHSCORES", "*6 $a $1 $b $2 $c $3");
    /* A new key: Redis 7.0 sizes it by the first member only. */
    EXPECT(h, "CONFIG SET zset-max-listpack-entries 0", "+OK");
    run(h, "ZADD w 1 a");
    EXPECT(h, "OBJECT ENCODING w", "$btree");
    /* STORE results go back to listpack when they fit (as Redis). */
    EXPECT(h, "CONFIG SET zset-max-listpack-entries 128", "+OK");
    EXPECT(h, "ZUNIONSTORE u 2 y w", ":3");
    EXPECT(h, "OBJECT ENCODING u", "$listpack");
    EXPECT(h, "ZRANGESTORE r y 0 -1", ":3");
    EXPECT(h, "OBJECT ENCODING r", "$listpack");
    harness_free(h);
}

static void test_zset_algebra(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    run(h, "ZADD a 1 x 2 y 3 z");
    run(h, "ZADD b 10 y 20 z 30 w");
    run(h, "SADD s z w q");
    EXPECT(h, "ZUNION 2 a b WITHSCORES", "*8 $x $1 $y $12 $z $23 $w $30");
    EXPECT(h, "ZUNION 2 a b WEIGHTS 2 1 AGGREGATE MAX WITHSCORES", "*8 $x $2 $y $10 $z $20 $w $30");
    EXPECT(h, "ZINTER 2 a b AGGREGATE MIN WITHSCORES", "*4 $y $2 $z $3");
    EXPECT(h, "ZINTER 2 a s WITHSCORES", "*2 $z $4"); /* a plain set scores 1 */
    EXPECT(h, "ZDIFF 2 a b WITHSCORES", "*2 $x $1");
    EXPECT(h, "ZDIFF 1 nokey", "*0");
    EXPECT(h, "ZINTERCARD 2 a b", ":2");
    EXPECT(h, "ZINTERCARD 2 a b LIMIT 1", ":1");
    EXPECT(h, "ZINTERCARD 2 a b LIMIT -1", "-ERR LIMIT can't be negative");
    EXPECT(h, "ZINTERCARD 0 a", "-ERR at least 1 input key is needed for 'zintercard' command");
    EXPECT(h, "ZUNIONSTORE d 0 a", "-ERR at least 1 input key is needed for 'zunionstore' command");
    EXPECT(h, "ZUNIONSTORE d x a", "-ERR value is not an integer or out of range");
    EXPECT(h, "ZUNIONSTORE d 3 a b", "-ERR syntax error");
    EXPECT(h, "ZUNION 2 a b WEIGHTS 1 x", "-ERR weight value is not a float");
    EXPECT(h, "ZUNION 2 a b WEIGHTS 1", "-ERR syntax error");
    EXPECT(h, "ZUNION 2 a b AGGREGATE AVG", "-ERR syntax error");
    EXPECT(h, "ZDIFF 2 a b WEIGHTS 1 1", "-ERR syntax error");
    EXPECT(h, "ZUNIONSTORE d 2 a b WITHSCORES", "-ERR syntax error");
    run(h, "SET str v");
    /* Keys are type-checked before the options are parsed. */
    EXPECT(h, "ZUNION 2 a str WEIGHTS x y", "-WRONGTYPE Operation against a key holding the wrong kind of value");
    EXPECT(h, "ZUNIONSTORE str 2 a b", ":4");
    EXPECT(h, "TYPE str", "+zset");
    EXPECT(h, "ZINTERSTORE str 2 a nokey", ":0");
    EXPECT(h, "EXISTS str", ":0");
    EXPECT(h, "ZDIFFSTORE a 2 a b", ":1");
    EXPECT(h, "ZRANGE a 0 -1 WITHSCORES", "*2 $x $1");
    /* inf * 0 weights count as 0; +inf + -inf sums to 0 */
    run(h, "ZADD i +inf m");
    run(h, "ZADD j -inf m");
    EXPECT(h, "ZUNION 2 i j WITHSCORES", "*2 $m $0");
    EXPECT(h, "ZUNION 1 i WEIGHTS 0 WITHSCORES", "*2 $m $0");
    harness_free(h);
}

/* ---- blocking ---------------------------------------------------------------------------------- */

static void test_bzpop_served(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    peer *p1 = peer_new(h), *p2 = peer_new(h);
    /* Data present: no blocking. */
    run(h, "ZADD z 1 a 2 b");
    assert_string_equal(prun(p1, "BZPOPMIN nokey z 0"), "*3 $z $a $1");
    assert_string_equal(prun(p1, "BZPOPMAX z 0"), "*3 $z $b $2");
    /* Both block on z, FIFO. */
    assert_string_equal(prun(p1, "BZPOPMIN other z 0"), "");
    assert_string_equal(prun(p2, "BZMPOP 0 1 z MAX COUNT 5"), "");
    assert_int_equal(gb_blocking_waiters(&h->eng->dbs[0], gb_slice_cstr("z")), 2);
    EXPECT(h, "ZADD z 1 a 2 b 3 c", ":3");
    assert_string_equal(ptake(p1), "*3 $z $a $1");
    assert_string_equal(ptake(p2), "*2 $z *2 *2 $c $3 *2 $b $2");
    EXPECT(h, "EXISTS z", ":0");
    /* A store command that creates the key wakes a waiter too. */
    assert_string_equal(prun(p1, "BZPOPMAX z 0"), "");
    run(h, "ZADD src 5 m");
    EXPECT(h, "ZUNIONSTORE z 1 src", ":1");
    assert_string_equal(ptake(p1), "*3 $z $m $5");
    /* ZINCRBY on a new member, and a key that becomes a zset by RENAME. */
    assert_string_equal(prun(p1, "BZPOPMIN z 0"), "");
    EXPECT(h, "ZINCRBY z 2 q", "$2");
    assert_string_equal(ptake(p1), "*3 $z $q $2");
    assert_string_equal(prun(p1, "BZPOPMIN z 0"), "");
    run(h, "ZADD tmp 7 r");
    EXPECT(h, "RENAME tmp z", "+OK");
    assert_string_equal(ptake(p1), "*3 $z $r $7");
    /* A waiter on a key that turns into another type is not served. */
    assert_string_equal(prun(p1, "BZPOPMIN z 0"), "");
    run(h, "SADD z 1");
    assert_string_equal(ptake(p1), "");
    run(h, "DEL z");
    run(h, "ZADD z 1 x");
    assert_string_equal(ptake(p1), "*3 $z $x $1");
    /* Errors. */
    assert_string_equal(prun(p1, "BZPOPMIN z -1"), "-ERR timeout is negative");
    assert_string_equal(prun(p1, "BZPOPMIN z x"), "-ERR timeout is not a float or out of range");
    assert_string_equal(prun(p1, "BZMPOP 0 0 z MIN"), "-ERR numkeys should be greater than 0");
    assert_string_equal(prun(p1, "BZMPOP 0 1 z MIN COUNT 0"), "-ERR count should be greater than 0");
    run(h, "SET str v");
    assert_string_equal(prun(p1, "BZPOPMIN str z 0"),
                        "-WRONGTYPE Operation against a key holding the wrong kind of value");
    peer_free(p1);
    peer_free(p2);
    harness_free(h);
}

static void test_bzpop_timeout(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    peer *p = peer_new(h);
    /* The deadline counts from the engine's clock, which a transport
     * refreshes before each batch: refresh it here too (harness_new's is
     * older by the set-up). The waiter must not time out before its
     * deadline and must once the real clock passes it: checked as an order,
     * not as a 20 ms window that a stall of this process on a loaded
     * machine could outlast. */
    gb_engine_update_time(h->eng);
    uint64_t deadline = h->eng->now_mono_ms + 20;
    assert_string_equal(prun(p, "BZPOPMIN z 0.02"), "");
    size_t expired;
    while ((expired = gb_blocking_expire(h->eng)) == 0 && gb_clock_mono_ms() < deadline + 10000)
        sleep_ms(5);
    uint64_t fired = gb_clock_mono_ms();
    assert_int_equal(expired, 1);
    assert_true(fired >= deadline); /* not early */
    assert_string_equal(ptake(p), "*-1");
    gb_engine_update_time(h->eng);
    assert_string_equal(prun(p, "BZMPOP 0.01 2 a b MIN"), "");
    sleep_ms(30);
    gb_blocking_expire(h->eng);
    assert_string_equal(ptake(p), "*-1");
    assert_int_equal(gb_blocking_waiters(&h->eng->dbs[0], gb_slice_cstr("a")), 0);
    peer_free(p);
    harness_free(h);
}

static void test_bzpop_in_multi(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    EXPECT(h, "MULTI", "+OK");
    EXPECT(h, "BZPOPMIN z 0", "+QUEUED");
    EXPECT(h, "ZADD z 1 a", "+QUEUED");
    EXPECT(h, "BZPOPMAX z 0", "+QUEUED");
    EXPECT(h, "BZMPOP 0 1 z MIN", "+QUEUED");
    EXPECT(h, "EXEC", "*4 *-1 :1 *3 $z $a $1 *-1");
    harness_free(h);
}

static void test_watch(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    peer *p = peer_new(h);
    run(h, "HSET h a 1");
    run(h, "WATCH h");
    run(h, "MULTI");
    run(h, "HGET h a");
    prun(p, "HINCRBY h a 1");
    EXPECT(h, "EXEC", "*-1");
    /* A no-op write does not touch the key. */
    run(h, "ZADD z 1 a");
    run(h, "WATCH z");
    prun(p, "ZADD z 1 a");
    prun(p, "ZREM z nope");
    run(h, "MULTI");
    run(h, "ZSCORE z a");
    EXPECT(h, "EXEC", "*1 $1");
    run(h, "WATCH z");
    prun(p, "ZUNIONSTORE z 1 z");
    run(h, "MULTI");
    run(h, "ZSCORE z a");
    EXPECT(h, "EXEC", "*-1");
    peer_free(p);
    harness_free(h);
}

/* ---- typed operations -------------------------------------------------------------------------- */

static void test_typed_ops(void **state)
{
    (void)state;
    harness *h = harness_new(NULL);
    gb_db *db = &h->eng->dbs[0];
    gb_slice key = gb_slice_cstr("z");
    gb_slice ms[2] = {gb_slice_cstr("a"), gb_slice_cstr("b")};
    double sc[2] = {1.5, 2};
    gb_zadd_result r;
    assert_int_equal(gb_zset_zadd(db, key, 0, 2, sc, ms, &r), GB_R_OK);
    assert_int_equal(r.added, 2);
    assert_int_equal(r.updated, 0);
    sc[0] = 3;
    assert_int_equal(gb_zset_zadd(db, key, GB_ZADD_CH | GB_ZADD_GT, 2, sc, ms, &r), GB_R_OK);
    assert_int_equal(r.added + r.updated, 1);
    double out;
    assert_int_equal(gb_zset_zscore(db, key, ms[0], &out), GB_R_OK);
    assert_true(out == 3.0);
    assert_int_equal(gb_zset_zscore(db, key, gb_slice_cstr("nope"), &out), GB_R_NOTFOUND);
    assert_int_equal(gb_zset_zscore(db, gb_slice_cstr("nokey"), ms[0], &out), GB_R_NOTFOUND);
    double inc = 0.5;
    assert_int_equal(gb_zset_zadd(db, key, GB_ZADD_INCR, 1, &inc, ms, &r), GB_R_OK);
    assert_true(r.processed == 1 && r.score == 3.5);
    assert_int_equal(gb_zset_zadd(db, key, GB_ZADD_INCR | GB_ZADD_NX, 1, &inc, ms, &r), GB_R_OK);
    assert_int_equal(r.processed, 0);
    assert_int_equal(gb_zset_zadd(db, key, GB_ZADD_NX | GB_ZADD_XX, 1, sc, ms, &r), GB_R_SYNTAX);
    assert_int_equal(gb_zset_zadd(db, key, GB_ZADD_GT | GB_ZADD_LT, 1, sc, ms, &r), GB_R_SYNTAX);
    assert_int_equal(gb_zset_zadd(db, key, GB_ZADD_INCR, 2, sc, ms, &r), GB_R_SYNTAX);
    /* NaN from a native caller: refused, and a key created for it goes again. */
    double nan_score = NAN;
    assert_int_equal(gb_zset_zadd(db, gb_slice_cstr("n"), 0, 1, &nan_score, ms, &r), GB_R_NAN);
    EXPECT(h, "EXISTS n", ":0");
    double inf = INFINITY, ninf = -INFINITY;
    assert_int_equal(gb_zset_zadd(db, gb_slice_cstr("n"), 0, 1, &inf, ms, &r), GB_R_OK);
    assert_int_equal(gb_zset_zadd(db, gb_slice_cstr("n"), GB_ZADD_INCR, 1, &ninf, ms, &r), GB_R_NAN);
    EXPECT(h, "ZSCORE n a", "$inf");
    /* XX on a missing key creates nothing. */
    assert_int_equal(gb_zset_zadd(db, gb_slice_cstr("x"), GB_ZADD_XX, 1, sc, ms, &r), GB_R_OK);
    EXPECT(h, "EXISTS x", ":0");
    /* hashes */
    gb_slice f[2] = {gb_slice_cstr("f"), gb_slice_cstr("g")};
    gb_slice v[2] = {gb_slice_cstr("123"), gb_slice_cstr("hello")};
    int64_t added;
    assert_int_equal(gb_hash_hset(db, gb_slice_cstr("h"), 2, f, v, &added), GB_R_OK);
    assert_int_equal(added, 2);
    assert_int_equal(gb_hash_hset(db, gb_slice_cstr("h"), 1, f, v + 1, &added), GB_R_OK);
    assert_int_equal(added, 0);
    char buf[GB_HASH_VALUE_BUF];
    gb_slice got;
    assert_int_equal(gb_hash_hget(db, gb_slice_cstr("h"), f[0], &got, buf), GB_R_OK);
    assert_int_equal(got.len, 5);
    assert_memory_equal(got.ptr, "hello", 5);
    assert_int_equal(gb_hash_hget(db, gb_slice_cstr("h"), gb_slice_cstr("q"), &got, buf), GB_R_NOTFOUND);
    assert_int_equal(gb_hash_hget(db, gb_slice_cstr("nokey"), f[0], &got, buf), GB_R_NOTFOUND);
    assert_int_equal(gb_hash_hset(db, gb_slice_cstr("h2"), 0, f, v, &added), GB_R_OK);
    EXPECT(h, "EXISTS h2", ":0");
    /* wrong types */
    assert_int_equal(gb_hash_hget(db, key, f[0], &got, buf), GB_R_WRONGTYPE);
    assert_int_equal(gb_hash_hset(db, key, 1, f, v, &added), GB_R_WRONGTYPE);
    assert_int_equal(gb_zset_zadd(db, gb_slice_cstr("h"), 0, 1, sc, ms, &r), GB_R_WRONGTYPE);
    assert_int_equal(gb_zset_zscore(db, gb_slice_cstr("h"), ms[0], &out), GB_R_WRONGTYPE);
    harness_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_basics),
        cmocka_unit_test(test_hash_incr),
        cmocka_unit_test(test_hash_encoding),
        cmocka_unit_test(test_hash_random_scan),
        cmocka_unit_test(test_set_basics),
        cmocka_unit_test(test_set_smove),
        cmocka_unit_test(test_set_algebra),
        cmocka_unit_test(test_set_pop_random),
        cmocka_unit_test(test_zadd),
        cmocka_unit_test(test_zrange),
        cmocka_unit_test(test_zrem_pop),
        cmocka_unit_test(test_zset_random_scan),
        cmocka_unit_test(test_zset_encoding),
        cmocka_unit_test(test_zset_algebra),
        cmocka_unit_test(test_bzpop_served),
        cmocka_unit_test(test_bzpop_timeout),
        cmocka_unit_test(test_bzpop_in_multi),
        cmocka_unit_test(test_watch),
        cmocka_unit_test(test_typed_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
