/*
 * Every SBE template against a real engine, compared with the RESP path:
 * two engines run the same sequence, one through gb_gate_execute with the
 * RESP2 writer, the other through gb_sbe_execute; each pair of replies must
 * mean the same (canonical text, sbe_test_util.h), and at the end both
 * engines must hold the same INFO commandstats. Covers the typed fast paths,
 * their fallbacks (option conflicts, empty groups, NaN), MULTI/EXEC, AUTH and
 * maxmemory.
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

#include "sbe_test_util.h"

/* One engine (the hash seed is per process, so two engines cannot live side
 * by side), two clients: RESP on db 0, SBE on db 1. Both databases see the
 * same commands, so they hold the same data; the statistics are compared
 * as per-command deltas. */
typedef struct pair {
    gb_engine *eng;
    resp_conn *r;
    sbe_conn *s;
    int64_t now_ms;
} pair;

static pair *pair_new(void (*tweak)(gb_settings *s))
{
    pair *p = calloc(1, sizeof *p);
    p->eng = sbe_engine_new(tweak);
    p->r = resp_conn_new(p->eng);
    p->s = sbe_conn_new(p->eng);
    p->s->c->db = &p->eng->dbs[1];
    gb_engine_update_time(p->eng);
    p->now_ms = p->eng->now_ms;
    return p;
}

/* The same wall clock for both runs, so expiry decisions and TTLs agree. */
static void sync_time(pair *p) { p->eng->now_ms = p->now_ms; }

static void pair_free(pair *p)
{
    resp_conn_free(p->r);
    sbe_conn_free(p->s);
    gb_engine_free(p->eng);
    free(p);
}

/* ---- statistics deltas --------------------------------------------------------------- */

typedef struct stat_row {
    const gb_command *cmd;
    uint64_t calls, failed, rejected;
} stat_row;

typedef struct snapshot {
    stat_row rows[512];
    size_t n;
    uint64_t processed, errors, hits, misses;
} snapshot;

static void snap_one(gb_command *cmd, void *ctx)
{
    snapshot *s = ctx;
    assert_true(s->n < 512);
    s->rows[s->n++] = (stat_row){cmd, cmd->calls, cmd->failed_calls, cmd->rejected_calls};
}

/* By record address: the table's iteration order may change as it rehashes. */
static int by_cmd(const void *a, const void *b)
{
    const gb_command *x = ((const stat_row *)a)->cmd, *y = ((const stat_row *)b)->cmd;
    return x < y ? -1 : x > y;
}

static void snap(gb_engine *eng, snapshot *s)
{
    s->n = 0;
    gb_commands_foreach(eng, true, snap_one, s);
    qsort(s->rows, s->n, sizeof s->rows[0], by_cmd);
    s->processed = eng->stats.total_commands_processed;
    s->errors = eng->stats.total_error_replies;
    s->hits = eng->stats.keyspace_hits;
    s->misses = eng->stats.keyspace_misses;
}

/* after - before, written back into after */
static void delta(snapshot *after, const snapshot *before)
{
    assert_int_equal(after->n, before->n);
    for (size_t i = 0; i < after->n; i++) {
        assert_ptr_equal(after->rows[i].cmd, before->rows[i].cmd);
        after->rows[i].calls -= before->rows[i].calls;
        after->rows[i].failed -= before->rows[i].failed;
        after->rows[i].rejected -= before->rows[i].rejected;
    }
    after->processed -= before->processed;
    after->errors -= before->errors;
    after->hits -= before->hits;
    after->misses -= before->misses;
}

static void same_deltas(const snapshot *r, const snapshot *s, const char *what, int line)
{
    for (size_t i = 0; i < r->n; i++) {
        const stat_row *a = &r->rows[i], *b = &s->rows[i];
        if (a->calls != b->calls || a->failed != b->failed || a->rejected != b->rejected)
            fail_msg("line %d: %s: commandstats %s: RESP +%llu calls +%llu failed +%llu rejected, SBE +%llu "
                     "+%llu +%llu",
                     line, what, a->cmd->def->name, (unsigned long long)a->calls, (unsigned long long)a->failed,
                     (unsigned long long)a->rejected, (unsigned long long)b->calls, (unsigned long long)b->failed,
                     (unsigned long long)b->rejected);
    }
    if (r->processed != s->processed || r->errors != s->errors || r->hits != s->hits || r->misses != s->misses)
        fail_msg("line %d: %s: stats RESP processed +%llu errors +%llu hits +%llu misses +%llu, SBE +%llu +%llu "
                 "+%llu +%llu",
                 line, what, (unsigned long long)r->processed, (unsigned long long)r->errors,
                 (unsigned long long)r->hits, (unsigned long long)r->misses, (unsigned long long)s->processed,
                 (unsigned long long)s->errors, (unsigned long long)s->hits, (unsigned long long)s->misses);
}

static uint8_t B[1 << 16];
#define CAP sizeof B
#define S(lit) ((gb_slice){lit, sizeof(lit) - 1}) /* an lvalue: &S("k") works */

/* The RESP command and the SBE message (already in B, len bytes) answer alike. */
static snapshot g_before, g_resp, g_sbe;

static void same_at(pair *p, const char *resp, size_t len, int line)
{
    assert_true(len > 0);
    sync_time(p);
    snap(p->eng, &g_before);
    char *a = resp_run(p->r, resp);
    snap(p->eng, &g_resp);
    delta(&g_resp, &g_before);
    char *b;
    snap(p->eng, &g_before);
    int rc = sbe_run(p->s, B, len, &b);
    snap(p->eng, &g_sbe);
    delta(&g_sbe, &g_before);
    if (rc)
        fail_msg("line %d: %s: gb_sbe_execute returned %d", line, resp, rc);
    if (strcmp(a, b))
        fail_msg("line %d: %s\n  RESP: %s\n  SBE:  %s", line, resp, a, b);
    same_deltas(&g_resp, &g_sbe, resp, line);
    free(a);
    free(b);
}
#define SAME(resp, enc) same_at(p, resp, (enc), __LINE__)

/* A Generic message from a space-separated command. */
static size_t generic(const char *cmd)
{
    char *copy = strdup(cmd);
    gb_slice argv[64];
    size_t argc = 0;
    static char keep[4096];
    size_t used = 0;
    for (char *save = NULL, *w = strtok_r(copy, " ", &save); w && argc < 64; w = strtok_r(NULL, " ", &save)) {
        size_t n = strcmp(w, "''") ? strlen(w) : 0;
        memcpy(keep + used, w, n);
        argv[argc++] = gb_slice_make(keep + used, n);
        used += n;
    }
    size_t len = gb_sbe_encode_generic(B, CAP, argc, argv);
    free(copy);
    return len;
}
#define GEN(cmd) SAME(cmd, generic(cmd))

static size_t set(const char *k, const char *v, unsigned flags, int64_t expiry)
{
    return gb_sbe_encode_set(B, CAP, gb_slice_cstr(k), gb_slice_cstr(v), flags, expiry);
}

/* ---- strings ------------------------------------------------------------------------- */

static void test_strings(void **state)
{
    (void)state;
    pair *p = pair_new(NULL);
    SAME("PING", gb_sbe_encode_ping(B, CAP));
    SAME("GET k", gb_sbe_encode_get(B, CAP, S("k")));
    SAME("SET k v", set("k", "v", 0, 0));
    SAME("GET k", gb_sbe_encode_get(B, CAP, S("k")));
    SAME("SET k v2 NX", set("k", "v2", GB_SBE_SET_NX, 0));
    SAME("SET k2 v NX", set("k2", "v", GB_SBE_SET_NX, 0));
    SAME("SET k v3 XX", set("k", "v3", GB_SBE_SET_XX, 0));
    SAME("SET nokey v XX", set("nokey", "v", GB_SBE_SET_XX, 0));
    SAME("SET k v4 GET", set("k", "v4", GB_SBE_SET_GET, 0));
    SAME("SET newk v GET", set("newk", "v", GB_SBE_SET_GET, 0));
    SAME("SET k v5 NX GET", set("k", "v5", GB_SBE_SET_NX | GB_SBE_SET_GET, 0));
    SAME("SET k v NX XX", set("k", "v", GB_SBE_SET_NX | GB_SBE_SET_XX, 0));
    SAME("SET k v EX 0", set("k", "v", GB_SBE_SET_EX, 0));
    SAME("SET k v PX -5", set("k", "v", GB_SBE_SET_PX, -5));
    SAME("SET k v EX 9223372036854775807", set("k", "v", GB_SBE_SET_EX, INT64_MAX));
    SAME("SET k v PX 9223372036854775807", set("k", "v", GB_SBE_SET_PX, INT64_MAX));
    SAME("SET k v EX 100", set("k", "v", GB_SBE_SET_EX, 100));
    GEN("TTL k");
    SAME("SET k v PX 5000", set("k", "v", GB_SBE_SET_PX, 5000));
    GEN("PTTL k");
    SAME("SET k v KEEPTTL", set("k", "v", GB_SBE_SET_KEEPTTL, 0));
    GEN("PTTL k");
    SAME("SET k v PX 100 KEEPTTL", set("k", "v", GB_SBE_SET_PX | GB_SBE_SET_KEEPTTL, 100));
    SAME("SET k v EX 10 PX 10", set("k", "v", GB_SBE_SET_EX | GB_SBE_SET_PX, 10));
    char cmd[128];
    int64_t at = p->now_ms / 1000 + 1000;
    snprintf(cmd, sizeof cmd, "SET k v EXAT %lld", (long long)at);
    SAME(cmd, set("k", "v", GB_SBE_SET_EXAT, at));
    GEN("TTL k");
    snprintf(cmd, sizeof cmd, "SET k v PXAT %lld", (long long)(p->now_ms + 777));
    SAME(cmd, set("k", "v", GB_SBE_SET_PXAT, p->now_ms + 777));
    GEN("PTTL k");
    SAME("SET k v PXAT 1", set("k", "v", GB_SBE_SET_PXAT, 1)); /* in the past: the key goes */
    SAME("GET k", gb_sbe_encode_get(B, CAP, S("k")));
    SAME("SET '' ''", gb_sbe_encode_set(B, CAP, S(""), S(""), 0, 0)); /* zero-length key and value */
    SAME("GET ''", gb_sbe_encode_get(B, CAP, S("")));
    SAME("LPUSH l a", gb_sbe_encode_lpush(B, CAP, S("l"), 1, &S("a")));
    SAME("SET l v GET", set("l", "v", GB_SBE_SET_GET, 0));
    SAME("GET l", gb_sbe_encode_get(B, CAP, S("l")));
    SAME("SET l v", set("l", "v", 0, 0)); /* SET overwrites any type */
    SAME("GET l", gb_sbe_encode_get(B, CAP, S("l")));

    SAME("INCR c", gb_sbe_encode_incr(B, CAP, S("c"), 1));
    SAME("INCRBY c 10", gb_sbe_encode_incr(B, CAP, S("c"), 10));
    SAME("INCRBY c -3", gb_sbe_encode_incr(B, CAP, S("c"), -3));
    SAME("INCRBY c 0", gb_sbe_encode_incr(B, CAP, S("c"), 0));
    SAME("INCRBY c 9223372036854775807", gb_sbe_encode_incr(B, CAP, S("c"), INT64_MAX));
    SAME("INCRBY c -9223372036854775808", gb_sbe_encode_incr(B, CAP, S("c"), INT64_MIN));
    SAME("INCR l", gb_sbe_encode_incr(B, CAP, S("l"), 1));
    SAME("LPUSH lst a", gb_sbe_encode_lpush(B, CAP, S("lst"), 1, &S("a")));
    SAME("INCR lst", gb_sbe_encode_incr(B, CAP, S("lst"), 1));
    SAME("INCRBY lst 2", gb_sbe_encode_incr(B, CAP, S("lst"), 2));

    gb_slice keys[] = {S("k2"), S("newk"), S("nokey"), S("c")};
    SAME("DEL k2 newk nokey c", gb_sbe_encode_del(B, CAP, 4, keys));
    SAME("DEL k2", gb_sbe_encode_del(B, CAP, 1, keys));
    SAME("DEL", gb_sbe_encode_del(B, CAP, 0, keys));
    GEN("DBSIZE");
    pair_free(p);
}

/* ---- lists --------------------------------------------------------------------------- */

static void test_lists(void **state)
{
    (void)state;
    pair *p = pair_new(NULL);
    gb_slice v3[] = {S("a"), S("b"), S("c")};
    SAME("LPUSH l a b c", gb_sbe_encode_lpush(B, CAP, S("l"), 3, v3));
    SAME("LPUSH l ''", gb_sbe_encode_lpush(B, CAP, S("l"), 1, &S("")));
    SAME("RPOP l", gb_sbe_encode_rpop(B, CAP, S("l")));
    GEN("LRANGE l 0 -1");
    SAME("RPOP nokey", gb_sbe_encode_rpop(B, CAP, S("nokey")));
    SAME("SET s v", set("s", "v", 0, 0));
    SAME("RPOP s", gb_sbe_encode_rpop(B, CAP, S("s")));
    SAME("LPUSH s x", gb_sbe_encode_lpush(B, CAP, S("s"), 1, v3));
    SAME("LPUSH l", gb_sbe_encode_lpush(B, CAP, S("l"), 0, v3));
    SAME("LPUSH one x", gb_sbe_encode_lpush(B, CAP, S("one"), 1, &S("x")));
    SAME("RPOP one", gb_sbe_encode_rpop(B, CAP, S("one"))); /* the last element: the key goes */
    GEN("EXISTS one");
    gb_slice bk[] = {S("nokey"), S("l")};
    SAME("BLPOP nokey l 0", gb_sbe_encode_blpop(B, CAP, 2, bk, 0));
    SAME("BLPOP nokey l 1.5", gb_sbe_encode_blpop(B, CAP, 2, bk, 1.5));
    gb_slice sk[] = {S("s"), S("l")};
    SAME("BLPOP s l 0", gb_sbe_encode_blpop(B, CAP, 2, sk, 0));
    SAME("BLPOP l -1", gb_sbe_encode_blpop(B, CAP, 1, bk + 1, -1));
    SAME("BLPOP l nan", gb_sbe_encode_blpop(B, CAP, 1, bk + 1, NAN));
    SAME("BLPOP l inf", gb_sbe_encode_blpop(B, CAP, 1, bk + 1, INFINITY));
    SAME("BLPOP 0", gb_sbe_encode_blpop(B, CAP, 0, bk, 0));
    GEN("LMPOP 2 nokey l LEFT COUNT 5");
    GEN("LMPOP 1 nokey LEFT");
    pair_free(p);
}

/* ---- generic ------------------------------------------------------------------------- */

static void test_generic(void **state)
{
    (void)state;
    pair *p = pair_new(NULL);
    GEN("MSET a 1 b 2 c 3");
    GEN("MGET a b nokey c");
    GEN("GET");
    GEN("NOSUCHCOMMAND x y");
    GEN("get a");
    GEN("APPEND a xyz");
    GEN("STRLEN a");
    GEN("RPUSH l 1 2 3 4 5");
    GEN("LRANGE l 1 -2");
    GEN("TYPE l");
    GEN("CONFIG GET maxmemory");
    GEN("SCAN 0 COUNT 100 MATCH nomatch*");
    GEN("ECHO ''");
    GEN("SADD s a");
    GEN("ZRANGE z 0 -1 WITHSCORES");
    pair_free(p);
}

/* ---- hashes and sorted sets ------------------------------------------------------------- */

static void test_hash(void **state)
{
    (void)state;
    pair *p = pair_new(NULL);
    assert_non_null(gb_command_lookup(p->eng, S("hset"))); /* else this would compare two "unknown command"s */
    gb_slice f[] = {S("f"), S("g"), S("h")}, v[] = {S("1"), S("two"), S("")};
    SAME("HSET h f 1", gb_sbe_encode_hset(B, CAP, S("h"), 1, f, v));
    SAME("HSET h f 1 g two h ''", gb_sbe_encode_hset(B, CAP, S("h"), 3, f, v));
    SAME("HGET h f", gb_sbe_encode_hget(B, CAP, S("h"), S("f")));
    SAME("HGET h h", gb_sbe_encode_hget(B, CAP, S("h"), S("h")));
    SAME("HGET h nofield", gb_sbe_encode_hget(B, CAP, S("h"), S("nofield")));
    SAME("HGET nokey f", gb_sbe_encode_hget(B, CAP, S("nokey"), S("f")));
    SAME("HSET h", gb_sbe_encode_hset(B, CAP, S("h"), 0, f, v));
    SAME("SET s v", set("s", "v", 0, 0));
    SAME("HSET s f 1", gb_sbe_encode_hset(B, CAP, S("s"), 1, f, v));
    SAME("HGET s f", gb_sbe_encode_hget(B, CAP, S("s"), S("f")));
    GEN("HGETALL h");
    pair_free(p);
}

/* PUBLISH: the receiver count as the RESP command gives it. */
static void test_publish(void **state)
{
    (void)state;
    pair *p = pair_new(NULL);
    SAME("PUBLISH ch msg", gb_sbe_encode_publish(B, CAP, S("ch"), S("msg")));
    SAME("PUBLISH '' ''", gb_sbe_encode_publish(B, CAP, S(""), S("")));
    pair_free(p);
}

static size_t zadd(const char *key, unsigned flags, size_t n, const double *sc, const gb_slice *m)
{
    return gb_sbe_encode_zadd(B, CAP, gb_slice_cstr(key), flags, n, sc, m);
}

static void test_zset(void **state)
{
    (void)state;
    pair *p = pair_new(NULL);
    assert_non_null(gb_command_lookup(p->eng, S("zadd")));
    gb_slice m[] = {S("a"), S("b"), S("c")};
    double s1[] = {1, 2, 3}, s2[] = {5, 0.5, -2.25};
    SAME("ZADD z 1 a 2 b", zadd("z", 0, 2, s1, m));
    SAME("ZADD z CH 5 a 0.5 b -2.25 c", zadd("z", GB_SBE_ZADD_CH, 3, s2, m));
    SAME("ZADD z 1 a 2 b 3 c", zadd("z", 0, 3, s1, m));
    SAME("ZADD z NX 10 a", zadd("z", GB_SBE_ZADD_NX, 1, (double[]){10}, m));
    SAME("ZADD z XX 10 nope", zadd("z", GB_SBE_ZADD_XX, 1, (double[]){10}, (gb_slice[]){S("nope")}));
    SAME("ZADD z XX CH 10 a", zadd("z", GB_SBE_ZADD_XX | GB_SBE_ZADD_CH, 1, (double[]){10}, m));
    SAME("ZADD z GT CH 1 a", zadd("z", GB_SBE_ZADD_GT | GB_SBE_ZADD_CH, 1, (double[]){1}, m));
    SAME("ZADD z LT CH 1 a", zadd("z", GB_SBE_ZADD_LT | GB_SBE_ZADD_CH, 1, (double[]){1}, m));
    SAME("ZADD z INCR 2.5 a", zadd("z", GB_SBE_ZADD_INCR, 1, (double[]){2.5}, m));
    SAME("ZADD z NX INCR 1 a", zadd("z", GB_SBE_ZADD_NX | GB_SBE_ZADD_INCR, 1, (double[]){1}, m));
    SAME("ZADD z XX INCR 1 nope", zadd("z", GB_SBE_ZADD_XX | GB_SBE_ZADD_INCR, 1, (double[]){1},
                                      (gb_slice[]){S("nope")}));
    SAME("ZADD z NX XX 1 a", zadd("z", GB_SBE_ZADD_NX | GB_SBE_ZADD_XX, 1, s1, m));
    SAME("ZADD z GT LT 1 a", zadd("z", GB_SBE_ZADD_GT | GB_SBE_ZADD_LT, 1, s1, m));
    SAME("ZADD z NX GT 1 a", zadd("z", GB_SBE_ZADD_NX | GB_SBE_ZADD_GT, 1, s1, m));
    SAME("ZADD z INCR 1 a 2 b", zadd("z", GB_SBE_ZADD_INCR, 2, s1, m));
    SAME("ZADD z nan a", zadd("z", 0, 1, (double[]){NAN}, m));
    SAME("ZADD z inf a", zadd("z", 0, 1, (double[]){INFINITY}, m));
    SAME("ZADD z INCR -inf a", zadd("z", GB_SBE_ZADD_INCR, 1, (double[]){-INFINITY}, m));
    SAME("ZADD z -inf b", zadd("z", 0, 1, (double[]){-INFINITY}, m + 1));
    SAME("ZADD z", zadd("z", 0, 0, s1, m));
    SAME("ZADD z NX", zadd("z", GB_SBE_ZADD_NX, 0, s1, m));
    SAME("ZADD z 0.1 c", zadd("z", 0, 1, (double[]){0.1}, m + 2));
    SAME("ZSCORE z a", gb_sbe_encode_zscore(B, CAP, S("z"), S("a")));
    SAME("ZSCORE z b", gb_sbe_encode_zscore(B, CAP, S("z"), S("b")));
    SAME("ZSCORE z c", gb_sbe_encode_zscore(B, CAP, S("z"), S("c")));
    SAME("ZSCORE z nope", gb_sbe_encode_zscore(B, CAP, S("z"), S("nope")));
    SAME("ZSCORE nokey a", gb_sbe_encode_zscore(B, CAP, S("nokey"), S("a")));
    SAME("SET s v", set("s", "v", 0, 0));
    SAME("ZADD s 1 a", zadd("s", 0, 1, s1, m));
    SAME("ZSCORE s a", gb_sbe_encode_zscore(B, CAP, S("s"), S("a")));
    GEN("ZRANGE z 0 -1 WITHSCORES");
    pair_free(p);
}

/* ---- streams: XAdd ------------------------------------------------------------------ */

static size_t xadd(const char *key, gb_sbe_xadd_opts o, size_t n, const gb_slice *f, const gb_slice *v)
{
    return gb_sbe_encode_xadd(B, CAP, gb_slice_cstr(key), &o, n, f, v);
}
#define XO(...) ((gb_sbe_xadd_opts){__VA_ARGS__})
enum {
    AUTO_ID = GB_SBE_XADD_AUTO_ID, AUTO_SEQ = GB_SBE_XADD_AUTO_SEQ, NOMK = GB_SBE_XADD_NOMKSTREAM,
    MAXLEN = GB_SBE_XADD_MAXLEN, MINID = GB_SBE_XADD_MINID, APPROX = GB_SBE_XADD_APPROX, LIMIT = GB_SBE_XADD_LIMIT,
};

/* Every option and every refusal: the typed fast path, its RESP fallbacks
 * (parser errors, no fields) and the engine's own errors answer alike and
 * count alike. "*" is safe to compare: both clients run at one clock. */
static void test_xadd(void **state)
{
    (void)state;
    pair *p = pair_new(NULL);
    assert_non_null(gb_command_lookup(p->eng, S("xadd")));
    gb_slice f[] = {S("f"), S("n"), S("")}, v[] = {S("v"), S("1"), S("")};
    SAME("XADD s 1-1 f v n 1", xadd("s", XO(.id_ms = 1, .id_seq = 1), 2, f, v));
    SAME("XADD s 1-* f v", xadd("s", XO(.flags = AUTO_SEQ, .id_ms = 1), 1, f, v));
    SAME("XADD s 1-1 f v", xadd("s", XO(.id_ms = 1, .id_seq = 1), 1, f, v));
    SAME("XADD s 0-* f v", xadd("s", XO(.flags = AUTO_SEQ), 1, f, v));
    SAME("XADD s * f v n 1 '' ''", xadd("s", XO(.flags = AUTO_ID), 3, f, v));
    SAME("XADD s * f v", xadd("s", XO(.flags = AUTO_ID), 1, f, v));
    SAME("XADD new 0-0 f v", xadd("new", XO(0), 1, f, v));
    SAME("XADD new 0-* f v", xadd("new", XO(.flags = AUTO_SEQ), 1, f, v));
    SAME("XADD gone NOMKSTREAM * f v", xadd("gone", XO(.flags = NOMK | AUTO_ID), 1, f, v));
    SAME("XADD gone NOMKSTREAM 1-0 f v", xadd("gone", XO(.flags = NOMK, .id_ms = 1), 1, f, v));
    GEN("EXISTS gone");
    SAME("XADD t 1-0 f v", xadd("t", XO(.id_ms = 1), 1, f, v));
    SAME("XADD t NOMKSTREAM 2-0 f v", xadd("t", XO(.flags = NOMK, .id_ms = 2), 1, f, v));
    SAME("XADD t MAXLEN = 2 3-0 f v", xadd("t", XO(.flags = MAXLEN, .id_ms = 3, .maxlen = 2), 1, f, v));
    SAME("XADD t MAXLEN ~ 1 4-0 f v", xadd("t", XO(.flags = MAXLEN | APPROX, .id_ms = 4, .maxlen = 1), 1, f, v));
    SAME("XADD t MAXLEN ~ 1 LIMIT 10 5-0 f v",
         xadd("t", XO(.flags = MAXLEN | APPROX | LIMIT, .id_ms = 5, .maxlen = 1, .limit = 10), 1, f, v));
    SAME("XADD t MAXLEN = 0 6-0 f v", xadd("t", XO(.flags = MAXLEN, .id_ms = 6), 1, f, v));
    GEN("XLEN t");
    SAME("XADD t MINID = 6-0 7-0 f v", xadd("t", XO(.flags = MINID, .id_ms = 7, .minid_ms = 6), 1, f, v));
    SAME("XADD t MINID ~ 7-1 LIMIT 0 8-* f v",
         xadd("t", XO(.flags = MINID | APPROX | LIMIT | AUTO_SEQ, .id_ms = 8, .minid_ms = 7, .minid_seq = 1), 1, f,
              v));
    GEN("XRANGE t - +");
    /* Refusals the RESP parser words, in its order. */
    SAME("XADD t MAXLEN = 2 LIMIT 5 9-0 f v",
         xadd("t", XO(.flags = MAXLEN | LIMIT, .id_ms = 9, .maxlen = 2, .limit = 5), 1, f, v));
    SAME("XADD t MAXLEN = -1 9-0 f v", xadd("t", XO(.flags = MAXLEN, .id_ms = 9, .maxlen = -1), 1, f, v));
    SAME("XADD t MAXLEN ~ 1 LIMIT -1 9-0 f v",
         xadd("t", XO(.flags = MAXLEN | APPROX | LIMIT, .id_ms = 9, .maxlen = 1, .limit = -1), 1, f, v));
    SAME("XADD t MAXLEN = -1 MINID = 1-0 9-0 f v",
         xadd("t", XO(.flags = MAXLEN | MINID, .id_ms = 9, .maxlen = -1, .minid_ms = 1), 1, f, v));
    SAME("XADD t MAXLEN = 1 MINID = 1-0 9-0 f v",
         xadd("t", XO(.flags = MAXLEN | MINID, .id_ms = 9, .maxlen = 1, .minid_ms = 1), 1, f, v));
    SAME("XADD t LIMIT 5 9-0 f v", xadd("t", XO(.flags = LIMIT, .id_ms = 9, .limit = 5), 1, f, v));
    SAME("XADD t LIMIT 0 9-0 f v", xadd("t", XO(.flags = LIMIT, .id_ms = 9), 1, f, v));
    SAME("XADD t 9-0", xadd("t", XO(.id_ms = 9), 0, f, v));
    SAME("XADD t NOMKSTREAM 9-0", xadd("t", XO(.flags = NOMK, .id_ms = 9), 0, f, v));
    /* The engine's refusals. */
    SAME("SET str x", set("str", "x", 0, 0));
    SAME("XADD str 1-0 f v", xadd("str", XO(.id_ms = 1), 1, f, v));
    SAME("XADD str NOMKSTREAM * f v", xadd("str", XO(.flags = NOMK | AUTO_ID), 1, f, v));
    SAME("XADD max 18446744073709551615-18446744073709551615 f v",
         xadd("max", XO(.id_ms = UINT64_MAX, .id_seq = UINT64_MAX), 1, f, v));
    SAME("XADD max * f v", xadd("max", XO(.flags = AUTO_ID), 1, f, v));
    SAME("XADD max 18446744073709551615-* f v", xadd("max", XO(.flags = AUTO_SEQ, .id_ms = UINT64_MAX), 1, f, v));
    GEN("XRANGE s - +");
    GEN("XINFO STREAM t");
    pair_free(p);
}

/* ---- MULTI, AUTH, maxmemory ------------------------------------------------------------ */

static void test_multi(void **state)
{
    (void)state;
    pair *p = pair_new(NULL);
    GEN("MULTI");
    SAME("SET m 1", set("m", "1", 0, 0));
    SAME("INCR m", gb_sbe_encode_incr(B, CAP, S("m"), 1));
    SAME("INCRBY m 5", gb_sbe_encode_incr(B, CAP, S("m"), 5));
    SAME("LPUSH ml x", gb_sbe_encode_lpush(B, CAP, S("ml"), 1, &S("x")));
    SAME("BLPOP nokey 0", gb_sbe_encode_blpop(B, CAP, 1, &S("nokey"), 0));
    SAME("ZADD mz 1 a", zadd("mz", 0, 1, (double[]){1}, &S("a")));
    SAME("XADD mx MAXLEN ~ 5 1-* f v", gb_sbe_encode_xadd(B, CAP, S("mx"),
                                                          &(gb_sbe_xadd_opts){.flags = GB_SBE_XADD_MAXLEN |
                                                                                       GB_SBE_XADD_APPROX |
                                                                                       GB_SBE_XADD_AUTO_SEQ,
                                                                              .id_ms = 1, .maxlen = 5},
                                                          1, &S("f"), &S("v")));
    SAME("SET m v NX XX", set("m", "v", GB_SBE_SET_NX | GB_SBE_SET_XX, 0));
    SAME("GET m", gb_sbe_encode_get(B, CAP, S("m")));
    SAME("PING", gb_sbe_encode_ping(B, CAP));
    SAME("RPOP ml", gb_sbe_encode_rpop(B, CAP, S("ml")));
    SAME("DEL m", gb_sbe_encode_del(B, CAP, 1, &S("m")));
    GEN("EXEC");
    /* An arity error while queueing aborts the EXEC. */
    GEN("MULTI");
    SAME("DEL", gb_sbe_encode_del(B, CAP, 0, NULL));
    SAME("SET q 1", set("q", "1", 0, 0));
    GEN("EXEC");
    SAME("GET q", gb_sbe_encode_get(B, CAP, S("q")));
    GEN("MULTI");
    SAME("SET q 1", set("q", "1", 0, 0));
    GEN("DISCARD");
    SAME("GET q", gb_sbe_encode_get(B, CAP, S("q")));
    pair_free(p);
}

static void with_password(gb_settings *s)
{
    char err[128];
    /* through the config layer: it owns the string's allocator (gb_malloc, which is not libc's in every build) */
    assert_int_equal(gb_config_set(s, "requirepass", "secret", false, err, sizeof err), 0);
}

static void test_auth(void **state)
{
    (void)state;
    pair *p = pair_new(with_password);
    SAME("PING", gb_sbe_encode_ping(B, CAP));
    SAME("GET k", gb_sbe_encode_get(B, CAP, S("k")));
    SAME("SET k v", set("k", "v", 0, 0));
    SAME("INCR n", gb_sbe_encode_incr(B, CAP, S("n"), 1));
    SAME("BLPOP l 0", gb_sbe_encode_blpop(B, CAP, 1, &S("l"), 0));
    GEN("AUTH wrong");
    GEN("AUTH secret");
    SAME("SET k v", set("k", "v", 0, 0));
    SAME("GET k", gb_sbe_encode_get(B, CAP, S("k")));
    pair_free(p);
}

static void tiny_maxmemory(gb_settings *s) { s->maxmemory = 1; }

static void test_maxmemory(void **state)
{
    (void)state;
    pair *p = pair_new(tiny_maxmemory);
    SAME("SET k v", set("k", "v", 0, 0));
    SAME("GET k", gb_sbe_encode_get(B, CAP, S("k")));
    SAME("INCR n", gb_sbe_encode_incr(B, CAP, S("n"), 1));
    SAME("LPUSH l a", gb_sbe_encode_lpush(B, CAP, S("l"), 1, &S("a")));
    SAME("RPOP l", gb_sbe_encode_rpop(B, CAP, S("l")));
    SAME("HSET h f v", gb_sbe_encode_hset(B, CAP, S("h"), 1, &S("f"), &S("v")));
    SAME("ZADD z 1 a", zadd("z", 0, 1, (double[]){1}, &S("a")));
    SAME("DEL k", gb_sbe_encode_del(B, CAP, 1, &S("k")));
    SAME("PING", gb_sbe_encode_ping(B, CAP));
    pair_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings), cmocka_unit_test(test_lists), cmocka_unit_test(test_generic),
        cmocka_unit_test(test_hash),    cmocka_unit_test(test_zset),  cmocka_unit_test(test_multi),
        cmocka_unit_test(test_publish), cmocka_unit_test(test_xadd),
        cmocka_unit_test(test_auth),    cmocka_unit_test(test_maxmemory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
