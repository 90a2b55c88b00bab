/*
 * Write propagation proved by replay (engine/core/request/propagate.h).
 *
 * test_random_streams_replay: seeded random command streams over every
 * type (streams and consumer groups included) - blocking pops and
 * XREADGROUP BLOCK served later, MULTI/EXEC/DISCARD, WATCH, expiry
 * (a fake clock that moves, lazy and active), SELECT/MOVE/SWAPDB/FLUSHDB -
 * from several clients at once: RESP clients through the RESP parser and
 * SBE clients through the SBE decoder (typed templates and Generic). A test
 * sink records every effect; a fresh engine replays them (SELECT where the
 * database changes, each at the time it was recorded); then both datasets
 * must be identical key by key: type, content and expiry time.
 *
 * The other tests hold the contract's single clauses: no-op writes emit
 * nothing, the rewrites (BLPOP -> LPOP, SPOP -> SREM, INCRBYFLOAT -> SET,
 * relative expiry -> absolute), MULTI ... EXEC around a unit, expired keys
 * as DEL, and a typed SBE call emitting exactly what its RESP form emits.
 *
 * GB_REPLAY_SEEDS and GB_REPLAY_COMMANDS override the defaults (50 x 3000).
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sbe_test_util.h"

#include "engine/dataset_dump.h"

#include <strings.h>

#include "engine/base/random.h"
#include "engine/base/util.h"
#include "engine/core/request/blocking.h"
#include "engine/core/request/propagate.h"
#include "transport/resp/resp_parser.h"

/* ---- the recording sink ------------------------------------------------------------- */

typedef struct effect {
    int dbid;
    int64_t now_ms; /* the recording engine's clock when it was emitted */
    int argc;
    char **argv;
    size_t *lens;
} effect;

typedef struct recorder {
    gb_engine *eng;
    effect *e;
    size_t n, cap;
} recorder;

static void rec_emit(void *ctx, int dbid, int argc, const gb_slice *argv)
{
    recorder *r = ctx;
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 256;
        r->e = realloc(r->e, r->cap * sizeof *r->e);
    }
    effect *e = &r->e[r->n++];
    e->dbid = dbid;
    e->now_ms = r->eng->now_ms;
    e->argc = argc;
    e->argv = malloc((size_t)argc * sizeof *e->argv);
    e->lens = malloc((size_t)argc * sizeof *e->lens);
    for (int i = 0; i < argc; i++) {
        e->argv[i] = malloc(argv[i].len + 1);
        memcpy(e->argv[i], argv[i].ptr, argv[i].len);
        e->argv[i][argv[i].len] = '\0';
        e->lens[i] = argv[i].len;
    }
}

static void rec_clear(recorder *r)
{
    for (size_t i = 0; i < r->n; i++) {
        for (int j = 0; j < r->e[i].argc; j++)
            free(r->e[i].argv[j]);
        free(r->e[i].argv);
        free(r->e[i].lens);
    }
    r->n = 0;
}

static void rec_free(recorder *r)
{
    rec_clear(r);
    free(r->e);
}

/* "SET k v PXAT 5 | DEL k" : every effect, one line each, for messages. */
static char *rec_text(const recorder *r)
{
    text t = {0};
    text_cstr(&t, "");
    for (size_t i = 0; i < r->n; i++) {
        char b[32];
        snprintf(b, sizeof b, "%s[%d]", i ? " | " : "", r->e[i].dbid);
        text_cstr(&t, b);
        for (int j = 0; j < r->e[i].argc; j++) {
            text_cstr(&t, " ");
            text_put(&t, r->e[i].argv[j], r->e[i].lens[j]);
        }
    }
    return t.s;
}

/* ---- engines with a fake clock ------------------------------------------------------ */

#define T0 1700000000000LL

static void set_clock(gb_engine *eng, int64_t now_ms)
{
    eng->now_ms = now_ms;
    eng->now_mono_ms = (uint64_t)(now_ms - T0) + 1000000;
}

/* A RESP client fed through the RESP parser, as a socket's bytes are. */
typedef struct wire_client {
    resp_conn *rc;
    gb_resp_parser parser;
    text in;
} wire_client;

static void resp_encode(text *t, int argc, const gb_slice *argv)
{
    char b[32];
    snprintf(b, sizeof b, "*%d\r\n", argc);
    text_cstr(t, b);
    for (int i = 0; i < argc; i++) {
        snprintf(b, sizeof b, "$%zu\r\n", argv[i].len);
        text_cstr(t, b);
        text_put(t, argv[i].ptr, argv[i].len);
        text_cstr(t, "\r\n");
    }
}

static void wire_run(wire_client *w, int argc, const gb_slice *argv)
{
    w->in.len = 0;
    resp_encode(&w->in, argc, argv);
    size_t consumed;
    char err[256];
    int rc = gb_resp_parse(&w->parser, w->in.s, w->in.len, &consumed, err, sizeof err);
    assert_int_equal(rc, GB_RESP_COMMAND);
    assert_int_equal(consumed, w->in.len);
    assert_true(gb_resp_execute(&w->parser, w->in.s, w->rc->c));
    gb_resp_parser_reset(&w->parser);
    if (getenv("GB_REPLAY_DEBUG")) fprintf(stderr, "[%.*s] -> %.*s\n", (int)argv[0].len, argv[0].ptr, (int)w->rc->out.len, w->rc->out.data);
    w->rc->out.len = 0; /* replies are not under test here */
}

/* Runs a space-separated command on a RESP client (set-up and dumps). */
static void run_words(wire_client *w, const char *line)
{
    char *copy = strdup(line);
    gb_slice argv[64];
    int argc = 0;
    for (char *save = NULL, *t = strtok_r(copy, " ", &save); t && argc < 64; t = strtok_r(NULL, " ", &save))
        argv[argc++] = gb_slice_cstr(t);
    wire_run(w, argc, argv);
    free(copy);
}

static wire_client *wire_new(gb_engine *eng)
{
    wire_client *w = calloc(1, sizeof *w);
    w->rc = resp_conn_new(eng);
    gb_resp_parser_init(&w->parser, 512 * 1024 * 1024);
    return w;
}

static void wire_free(wire_client *w)
{
    resp_conn_free(w->rc);
    gb_resp_parser_free(&w->parser);
    free(w->in.s);
    free(w);
}

/* Replays recorded effects into eng through one RESP client: SELECT when
 * the database changes, each effect at the time it was recorded. */
static void replay(gb_engine *eng, const recorder *r)
{
    wire_client *w = wire_new(eng);
    int db = 0;
    for (size_t i = 0; i < r->n; i++) {
        const effect *e = &r->e[i];
        set_clock(eng, e->now_ms);
        if (e->dbid != db) {
            char sel[32];
            snprintf(sel, sizeof sel, "SELECT %d", e->dbid);
            run_words(w, sel);
            db = e->dbid;
        }
        gb_slice argv[2100];
        assert_true(e->argc <= 2100);
        for (int j = 0; j < e->argc; j++)
            argv[j] = gb_slice_make(e->argv[j], e->lens[j]);
        wire_run(w, e->argc, argv);
    }
    wire_free(w);
}

/* ---- the random stream ------------------------------------------------------------------ */

/* A command under construction: words, numbers formatted into the builder. */
typedef struct cmdbuf {
    gb_slice v[64];
    int n;
    char num[64][32];
    int nn;
} cmdbuf;

static void cw(cmdbuf *b, const char *w) { b->v[b->n++] = gb_slice_cstr(w); }
static void cnum(cmdbuf *b, long long v)
{
    int k = snprintf(b->num[b->nn], 32, "%lld", v);
    b->v[b->n++] = gb_slice_make(b->num[b->nn++], (size_t)k);
}

static uint64_t rnd(uint64_t n) { return gb_random_u64() % n; }
static bool chance(int pct) { return (int)rnd(100) < pct; }

static const char *const keys[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
static const char *const vals[] = {"1", "2", "10", "-3", "x", "yy", "0.5", "hello", "", "99999999999999999999"};
static const char *const fields[] = {"f1", "f2", "f3", "f4"};

static const char *key(void) { return keys[rnd(GB_ARRAY_LEN(keys))]; }
static const char *val(void) { return vals[rnd(GB_ARRAY_LEN(vals))]; }
static const char *field(void) { return fields[rnd(GB_ARRAY_LEN(fields))]; }
static const char *lr(void) { return chance(50) ? "LEFT" : "RIGHT"; }

/* Relative expiry of 1..400 ms (the clock moves 0..20 ms a step). */
static void add_ttl_ms(cmdbuf *b) { cnum(b, 1 + (int)rnd(400)); }

static void gen_string(cmdbuf *b, int64_t now)
{
    switch (rnd(16)) {
    case 0:
    case 1:
        cw(b, "SET");
        cw(b, key());
        cw(b, val());
        switch (rnd(7)) {
        case 0:
            cw(b, "PX");
            add_ttl_ms(b);
            break;
        case 1:
            cw(b, "EX");
            cw(b, "1");
            break;
        case 2:
            cw(b, "PXAT");
            cnum(b, (long long)(now + (int64_t)rnd(400)));
            break;
        case 3:
            cw(b, "KEEPTTL");
            break;
        case 4:
            cw(b, chance(50) ? "NX" : "XX");
            break;
        case 5:
            cw(b, "GET");
            break;
        }
        break;
    case 2:
        cw(b, "SETEX");
        cw(b, key());
        cw(b, "1");
        cw(b, val());
        break;
    case 3:
        cw(b, "PSETEX");
        cw(b, key());
        add_ttl_ms(b);
        cw(b, val());
        break;
    case 4:
        cw(b, "GETSET");
        cw(b, key());
        cw(b, val());
        break;
    case 5:
        cw(b, "GETDEL");
        cw(b, key());
        break;
    case 6:
        cw(b, "GETEX");
        cw(b, key());
        if (chance(50)) {
            cw(b, "PX");
            add_ttl_ms(b);
        } else {
            cw(b, "PERSIST");
        }
        break;
    case 7:
        cw(b, chance(50) ? "MSET" : "MSETNX");
        cw(b, key());
        cw(b, val());
        cw(b, key());
        cw(b, val());
        break;
    case 8:
        cw(b, chance(50) ? "INCR" : "DECR");
        cw(b, key());
        break;
    case 9:
        cw(b, "INCRBY");
        cw(b, key());
        cnum(b, (int)rnd(200) - 100);
        break;
    case 10:
        cw(b, "INCRBYFLOAT");
        cw(b, key());
        cw(b, chance(50) ? "0.1" : "1.5e3");
        break;
    case 11:
        cw(b, "APPEND");
        cw(b, key());
        cw(b, val());
        break;
    case 12:
        cw(b, "SETRANGE");
        cw(b, key());
        cnum(b, (int)rnd(8));
        cw(b, val());
        break;
    case 13:
        cw(b, "SETNX");
        cw(b, key());
        cw(b, val());
        break;
    default:
        cw(b, "GET");
        cw(b, key());
        break;
    }
}

static void gen_keys(cmdbuf *b, int64_t now)
{
    switch (rnd(14)) {
    case 0:
        cw(b, chance(50) ? "DEL" : "UNLINK");
        cw(b, key());
        if (chance(50))
            cw(b, key());
        break;
    case 1:
        cw(b, chance(50) ? "PEXPIRE" : "EXPIRE");
        cw(b, key());
        if (b->v[0].ptr[0] == 'P')
            add_ttl_ms(b);
        else
            cw(b, chance(80) ? "1" : "-1");
        if (chance(30))
            cw(b, (const char *[]){"NX", "XX", "GT", "LT"}[rnd(4)]);
        break;
    case 2:
        cw(b, chance(50) ? "PEXPIREAT" : "EXPIREAT");
        cw(b, key());
        if (b->v[0].ptr[0] == 'P')
            cnum(b, (long long)(now + (int64_t)rnd(400) - 50));
        else
            cnum(b, (long long)(now / 1000 + (int64_t)rnd(3)));
        break;
    case 3:
        cw(b, "PERSIST");
        cw(b, key());
        break;
    case 4:
        cw(b, chance(50) ? "RENAME" : "RENAMENX");
        cw(b, key());
        cw(b, key());
        break;
    case 5:
        cw(b, "MOVE");
        cw(b, key());
        cnum(b, (int)rnd(3));
        break;
    case 6:
        cw(b, "COPY");
        cw(b, key());
        cw(b, key());
        if (chance(50)) {
            cw(b, "DB");
            cnum(b, (int)rnd(3));
        }
        if (chance(50))
            cw(b, "REPLACE");
        break;
    case 7:
        cw(b, "SELECT");
        cnum(b, (int)rnd(3));
        break;
    case 8:
        if (chance(20)) {
            cw(b, "SWAPDB");
            cnum(b, (int)rnd(3));
            cnum(b, (int)rnd(3));
        } else if (chance(10)) {
            cw(b, "FLUSHDB");
        } else {
            cw(b, "EXISTS");
            cw(b, key());
        }
        break;
    default:
        cw(b, "TTL");
        cw(b, key());
        break;
    }
}

static void gen_list(cmdbuf *b)
{
    switch (rnd(18)) {
    case 0:
    case 1:
        cw(b, chance(50) ? "LPUSH" : "RPUSH");
        cw(b, key());
        for (int i = 1 + (int)rnd(3); i > 0; i--)
            cw(b, val());
        break;
    case 2:
        cw(b, chance(50) ? "LPUSHX" : "RPUSHX");
        cw(b, key());
        cw(b, val());
        break;
    case 3:
        cw(b, chance(50) ? "LPOP" : "RPOP");
        cw(b, key());
        if (chance(30))
            cnum(b, (int)rnd(4));
        break;
    case 4:
        cw(b, "LSET");
        cw(b, key());
        cnum(b, (int)rnd(4) - 2);
        cw(b, val());
        break;
    case 5:
        cw(b, "LTRIM");
        cw(b, key());
        cnum(b, (int)rnd(3));
        cnum(b, (int)rnd(6) - 3);
        break;
    case 6:
        cw(b, "LREM");
        cw(b, key());
        cnum(b, (int)rnd(5) - 2);
        cw(b, val());
        break;
    case 7:
        cw(b, "LINSERT");
        cw(b, key());
        cw(b, chance(50) ? "BEFORE" : "AFTER");
        cw(b, val());
        cw(b, val());
        break;
    case 8:
        cw(b, "LMOVE");
        cw(b, key());
        cw(b, key());
        cw(b, lr());
        cw(b, lr());
        break;
    case 9:
        cw(b, "RPOPLPUSH");
        cw(b, key());
        cw(b, key());
        break;
    case 10:
        cw(b, "LMPOP");
        cw(b, "2");
        cw(b, key());
        cw(b, key());
        cw(b, lr());
        if (chance(50)) {
            cw(b, "COUNT");
            cnum(b, 1 + (int)rnd(3));
        }
        break;
    case 11:
    case 12:
        cw(b, chance(50) ? "BLPOP" : "BRPOP");
        cw(b, key());
        if (chance(50))
            cw(b, key());
        cw(b, "0");
        break;
    case 13:
        cw(b, "BLMOVE");
        cw(b, key());
        cw(b, key());
        cw(b, lr());
        cw(b, lr());
        cw(b, "0");
        break;
    case 14:
        cw(b, "BRPOPLPUSH");
        cw(b, key());
        cw(b, key());
        cw(b, "0");
        break;
    case 15:
        cw(b, "BLMPOP");
        cw(b, "0");
        cw(b, "2");
        cw(b, key());
        cw(b, key());
        cw(b, lr());
        if (chance(50)) {
            cw(b, "COUNT");
            cnum(b, 1 + (int)rnd(3));
        }
        break;
    default:
        cw(b, "LRANGE");
        cw(b, key());
        cw(b, "0");
        cw(b, "-1");
        break;
    }
}

static void gen_hash(cmdbuf *b)
{
    switch (rnd(8)) {
    case 0:
    case 1:
        cw(b, chance(80) ? "HSET" : "HMSET");
        cw(b, key());
        for (int i = 1 + (int)rnd(3); i > 0; i--) {
            cw(b, field());
            cw(b, val());
        }
        break;
    case 2:
        cw(b, "HSETNX");
        cw(b, key());
        cw(b, field());
        cw(b, val());
        break;
    case 3:
        cw(b, "HDEL");
        cw(b, key());
        cw(b, field());
        cw(b, field());
        break;
    case 4:
        cw(b, "HINCRBY");
        cw(b, key());
        cw(b, field());
        cnum(b, (int)rnd(20) - 10);
        break;
    case 5:
        cw(b, "HINCRBYFLOAT");
        cw(b, key());
        cw(b, field());
        cw(b, chance(50) ? "0.1" : "-2.5");
        break;
    default:
        cw(b, "HGET");
        cw(b, key());
        cw(b, field());
        break;
    }
}

static void gen_set(cmdbuf *b)
{
    switch (rnd(8)) {
    case 0:
    case 1:
        cw(b, "SADD");
        cw(b, key());
        for (int i = 1 + (int)rnd(4); i > 0; i--)
            cw(b, chance(50) ? val() : field());
        break;
    case 2:
        cw(b, "SREM");
        cw(b, key());
        cw(b, val());
        cw(b, field());
        break;
    case 3:
        cw(b, "SMOVE");
        cw(b, key());
        cw(b, key());
        cw(b, val());
        break;
    case 4:
    case 5:
        cw(b, "SPOP");
        cw(b, key());
        if (chance(60))
            cnum(b, (int)rnd(5));
        break;
    case 6:
        cw(b, (const char *[]){"SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"}[rnd(3)]);
        cw(b, key());
        cw(b, key());
        cw(b, key());
        break;
    default:
        cw(b, "SMEMBERS");
        cw(b, key());
        break;
    }
}

static void gen_zset(cmdbuf *b)
{
    switch (rnd(12)) {
    case 0:
    case 1:
        cw(b, "ZADD");
        cw(b, key());
        if (chance(30))
            cw(b, (const char *[]){"NX", "XX", "GT", "LT", "CH"}[rnd(5)]);
        for (int i = 1 + (int)rnd(3); i > 0; i--) {
            cnum(b, (int)rnd(10));
            cw(b, field());
        }
        break;
    case 2:
        cw(b, "ZINCRBY");
        cw(b, key());
        cw(b, chance(50) ? "1.5" : "-1");
        cw(b, field());
        break;
    case 3:
        cw(b, "ZREM");
        cw(b, key());
        cw(b, field());
        break;
    case 4:
        cw(b, (const char *[]){"ZREMRANGEBYRANK", "ZREMRANGEBYSCORE"}[rnd(2)]);
        cw(b, key());
        cw(b, "0");
        cw(b, "2");
        break;
    case 5:
        cw(b, chance(50) ? "ZPOPMIN" : "ZPOPMAX");
        cw(b, key());
        if (chance(50))
            cnum(b, (int)rnd(3));
        break;
    case 6:
        cw(b, "ZMPOP");
        cw(b, "2");
        cw(b, key());
        cw(b, key());
        cw(b, chance(50) ? "MIN" : "MAX");
        break;
    case 7:
        cw(b, chance(50) ? "BZPOPMIN" : "BZPOPMAX");
        cw(b, key());
        cw(b, key());
        cw(b, "0");
        break;
    case 8:
        cw(b, "BZMPOP");
        cw(b, "0");
        cw(b, "1");
        cw(b, key());
        cw(b, chance(50) ? "MIN" : "MAX");
        cw(b, "COUNT");
        cw(b, "2");
        break;
    case 9:
        cw(b, (const char *[]){"ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"}[rnd(3)]);
        cw(b, key());
        cw(b, "2");
        cw(b, key());
        cw(b, key());
        break;
    case 10:
        cw(b, "ZRANGESTORE");
        cw(b, key());
        cw(b, key());
        cw(b, "0");
        cw(b, "1");
        break;
    default:
        cw(b, "ZSCORE");
        cw(b, key());
        cw(b, field());
        break;
    }
}

static const char *group(void) { return chance(50) ? "g1" : "g2"; }
static const char *consumer(void) { return (const char *[]){"alice", "bob", "carol"}[rnd(3)]; }

/* An ID near the others: explicit IDs collide, go backwards and hit deleted entries. */
static void stream_id(cmdbuf *b)
{
    int k = snprintf(b->num[b->nn], 32, "%d-%d", (int)rnd(40), (int)rnd(3));
    b->v[b->n++] = gb_slice_make(b->num[b->nn++], (size_t)k);
}

static void gen_stream(cmdbuf *b)
{
    switch (rnd(14)) {
    case 0:
    case 1:
    case 2:
        cw(b, "XADD");
        cw(b, key());
        if (chance(20)) {
            cw(b, chance(50) ? "MAXLEN" : "MINID");
            cw(b, chance(50) ? "~" : "=");
            chance(50) ? cnum(b, (int)rnd(6)) : stream_id(b);
        }
        chance(60) ? cw(b, "*") : stream_id(b);
        for (int i = 1 + (int)rnd(2); i > 0; i--) {
            cw(b, field());
            cw(b, val());
        }
        break;
    case 3:
        cw(b, "XDEL");
        cw(b, key());
        stream_id(b);
        break;
    case 4:
        cw(b, "XTRIM");
        cw(b, key());
        cw(b, "MAXLEN");
        cnum(b, (int)rnd(5));
        break;
    case 5:
        cw(b, "XGROUP");
        cw(b, "CREATE");
        cw(b, key());
        cw(b, group());
        cw(b, chance(50) ? "$" : "0");
        cw(b, "MKSTREAM");
        if (chance(30)) {
            cw(b, "ENTRIESREAD");
            cnum(b, (int)rnd(5));
        }
        break;
    case 6:
        cw(b, "XGROUP");
        switch (rnd(4)) {
        case 0:
            cw(b, "SETID"); cw(b, key()); cw(b, group()); cw(b, chance(50) ? "$" : "0");
            break;
        case 1:
            cw(b, "DESTROY"); cw(b, key()); cw(b, group());
            break;
        case 2:
            cw(b, "CREATECONSUMER"); cw(b, key()); cw(b, group()); cw(b, consumer());
            break;
        default:
            cw(b, "DELCONSUMER"); cw(b, key()); cw(b, group()); cw(b, consumer());
            break;
        }
        break;
    case 7:
    case 8:
    case 9: /* new entries, history, NOACK, and blocking (served later, or never) */
        cw(b, "XREADGROUP");
        cw(b, "GROUP");
        cw(b, group());
        cw(b, consumer());
        cw(b, "COUNT");
        cnum(b, 1 + (int)rnd(3));
        if (chance(15))
            cw(b, "NOACK");
        if (chance(25)) {
            cw(b, "BLOCK");
            cw(b, "0");
        }
        cw(b, "STREAMS");
        cw(b, key());
        cw(b, chance(75) ? ">" : "0");
        break;
    case 10:
        cw(b, "XACK");
        cw(b, key());
        cw(b, group());
        stream_id(b);
        stream_id(b);
        break;
    case 11:
        cw(b, "XCLAIM");
        cw(b, key());
        cw(b, group());
        cw(b, consumer());
        cw(b, "0");
        stream_id(b);
        stream_id(b);
        if (chance(30))
            cw(b, "JUSTID");
        if (chance(20)) {
            cw(b, "RETRYCOUNT");
            cnum(b, (int)rnd(9));
        }
        break;
    case 12:
        cw(b, "XAUTOCLAIM");
        cw(b, key());
        cw(b, group());
        cw(b, consumer());
        cw(b, "0");
        cw(b, "0-0");
        cw(b, "COUNT");
        cnum(b, 1 + (int)rnd(3));
        break;
    default:
        cw(b, "XSETID");
        cw(b, key());
        cw(b, "100-0");
        break;
    }
}

static void gen_command(cmdbuf *b, int64_t now)
{
    b->n = b->nn = 0;
    switch (rnd(7)) {
    case 6:
        gen_stream(b);
        break;
    case 0:
        gen_string(b, now);
        break;
    case 1:
        gen_keys(b, now);
        break;
    case 2:
        gen_list(b);
        break;
    case 3:
        gen_hash(b);
        break;
    case 4:
        gen_set(b);
        break;
    default:
        gen_zset(b);
        break;
    }
}

/* Whether b may block (client 0 never does: it unblocks the others). */
static bool blocks(const cmdbuf *b)
{
    if ((b->v[0].ptr[0] == 'B' || b->v[0].ptr[0] == 'b') && !gb_slice_ieq(b->v[0], "BITCOUNT"))
        return true;
    for (int i = 1; i < b->n; i++)
        if (gb_slice_ieq(b->v[i], "BLOCK"))
            return true;
    return false;
}

/* ---- clients of the recording engine ------------------------------------------------------ */

#define NWIRE 3
#define NSBE 2

typedef struct world {
    gb_engine *eng;
    wire_client *wire[NWIRE];
    sbe_conn *sbe[NSBE];
    uint8_t msg[1 << 16];
} world;

/* Sends b over an SBE client: the typed template where one exists for the
 * command as written, else Generic. */
static void sbe_send(world *w, sbe_conn *s, cmdbuf *b)
{
    size_t n = 0;
    const gb_slice *v = b->v;
    int64_t x;
    if (gb_slice_ieq(v[0], "GET") && b->n == 2)
        n = gb_sbe_encode_get(w->msg, sizeof w->msg, v[1]);
    else if (gb_slice_ieq(v[0], "SET") && b->n == 3)
        n = gb_sbe_encode_set(w->msg, sizeof w->msg, v[1], v[2], 0, 0);
    else if (gb_slice_ieq(v[0], "SET") && b->n == 5 && gb_slice_ieq(v[3], "PX") && gb_slice2ll(v[4], &x))
        n = gb_sbe_encode_set(w->msg, sizeof w->msg, v[1], v[2], GB_SBE_SET_PX, x);
    else if (gb_slice_ieq(v[0], "DEL"))
        n = gb_sbe_encode_del(w->msg, sizeof w->msg, (size_t)b->n - 1, v + 1);
    else if (gb_slice_ieq(v[0], "INCR"))
        n = gb_sbe_encode_incr(w->msg, sizeof w->msg, v[1], 1);
    else if (gb_slice_ieq(v[0], "INCRBY") && gb_slice2ll(v[2], &x))
        n = gb_sbe_encode_incr(w->msg, sizeof w->msg, v[1], x);
    else if (gb_slice_ieq(v[0], "HGET"))
        n = gb_sbe_encode_hget(w->msg, sizeof w->msg, v[1], v[2]);
    else if (gb_slice_ieq(v[0], "ZSCORE"))
        n = gb_sbe_encode_zscore(w->msg, sizeof w->msg, v[1], v[2]);
    else if (gb_slice_ieq(v[0], "LPUSH"))
        n = gb_sbe_encode_lpush(w->msg, sizeof w->msg, v[1], (size_t)b->n - 2, v + 2);
    else if (gb_slice_ieq(v[0], "RPOP") && b->n == 2)
        n = gb_sbe_encode_rpop(w->msg, sizeof w->msg, v[1]);
    else if (gb_slice_ieq(v[0], "BLPOP"))
        n = gb_sbe_encode_blpop(w->msg, sizeof w->msg, (size_t)b->n - 2, v + 1, 0);
    else if (gb_slice_ieq(v[0], "HSET") && b->n % 2 == 0) {
        gb_slice f[8], vv[8];
        size_t np = (size_t)(b->n - 2) / 2;
        for (size_t i = 0; i < np; i++) {
            f[i] = v[2 + 2 * i];
            vv[i] = v[3 + 2 * i];
        }
        n = gb_sbe_encode_hset(w->msg, sizeof w->msg, v[1], np, f, vv);
    } else if (gb_slice_ieq(v[0], "ZADD") && b->n % 2 == 0) {
        double sc[8];
        gb_slice m[8];
        size_t np = (size_t)(b->n - 2) / 2;
        for (size_t i = 0; i < np; i++) {
            sc[i] = strtod(v[2 + 2 * i].ptr, NULL);
            m[i] = v[3 + 2 * i];
        }
        n = gb_sbe_encode_zadd(w->msg, sizeof w->msg, v[1], 0, np, sc, m);
    }
    if (!n)
        n = gb_sbe_encode_generic(w->msg, sizeof w->msg, (size_t)b->n, v);
    assert_true(n > 0);
    assert_int_equal(gb_sbe_execute(s->c, w->msg, n), 0);
    s->out.len = 0;
    while (gb_sbe_reply_finish(&s->r, &s->out))
        s->out.len = 0;
}

static gb_client *client_of(world *w, int i) { return i < NWIRE ? w->wire[i]->rc->c : w->sbe[i - NWIRE]->c; }

static void run_on(world *w, int i, cmdbuf *b)
{
    if (i < NWIRE)
        wire_run(w->wire[i], b->n, b->v);
    else
        sbe_send(w, w->sbe[i - NWIRE], b);
}

static void run_on_words(world *w, int i, const char *word)
{
    cmdbuf b = {.n = 0};
    cw(&b, word);
    run_on(w, i, &b);
}

/* One seed: the stream on a recording engine, then the replay. */
static void one_seed(uint64_t seed, int ncommands)
{
    world *w = calloc(1, sizeof *w);
    w->eng = sbe_engine_new(NULL);
    gb_random_seed(seed); /* after the engine: the stream is the seed's */
    recorder rec = {.eng = w->eng};
    gb_prop_sink sink = {rec_emit, &rec};
    gb_propagate_attach(w->eng, &sink);
    int64_t now = T0;
    set_clock(w->eng, now);
    for (int i = 0; i < NWIRE; i++)
        w->wire[i] = wire_new(w->eng);
    for (int i = 0; i < NSBE; i++)
        w->sbe[i] = sbe_conn_new(w->eng);

    cmdbuf b;
    for (int step = 0; step < ncommands; step++) {
        now += (int64_t)rnd(21);
        set_clock(w->eng, now);
        int who = (int)rnd(NWIRE + NSBE);
        gb_client *c = client_of(w, who);
        if (c->flags & GB_CLIENT_BLOCKED) {
            /* It waits for a push. Client 0 never blocks: it pushes, or
             * now and then unblocks the waiter (CLIENT UNBLOCK), so the
             * stream never stalls with everyone waiting. */
            if (chance(15)) {
                b.n = b.nn = 0;
                cw(&b, "CLIENT");
                cw(&b, "UNBLOCK");
                cnum(&b, (long long)c->id);
                if (chance(50))
                    cw(&b, "ERROR");
                run_on(w, 0, &b);
                continue;
            }
            who = 0;
            c = client_of(w, 0);
        }
        uint64_t r = rnd(100);
        if (r < 4 && !(c->flags & GB_CLIENT_MULTI)) {
            if (chance(40)) {
                b.n = b.nn = 0;
                cw(&b, "WATCH");
                cw(&b, key());
                run_on(w, who, &b);
            }
            run_on_words(w, who, "MULTI");
        } else if (r < 9 && (c->flags & GB_CLIENT_MULTI)) {
            run_on_words(w, who, chance(85) ? "EXEC" : "DISCARD");
        } else if (r < 10) {
            /* active expiry, as the cron runs it */
            for (int d = 0; d < 3; d++)
                gb_db_active_expire(&w->eng->dbs[d], UINT64_MAX);
        } else {
            do
                gen_command(&b, now);
            while (who == 0 && blocks(&b));
            run_on(w, who, &b);
        }
    }
    /* Close open transactions (their effects are part of the stream). */
    for (int i = 0; i < NWIRE + NSBE; i++)
        if (client_of(w, i)->flags & GB_CLIENT_MULTI)
            run_on_words(w, i, "EXEC");
    gb_propagate_detach(w->eng, &sink);

    /* Every effect is a plain replayable write: no blocking command, no
     * relative time, nothing random. */
    static const char *const never[] = {"BLPOP",  "BRPOP",    "BLMOVE",   "BRPOPLPUSH", "BLMPOP", "BZPOPMIN",
                                        "BZPOPMAX", "BZMPOP", "SPOP",     "INCRBYFLOAT", "HINCRBYFLOAT", "EXPIRE",
                                        "PEXPIRE",  "SETEX",  "PSETEX",   "GETEX",      "EXPIREAT"};
    for (size_t i = 0; i < rec.n; i++)
        for (size_t j = 0; j < GB_ARRAY_LEN(never); j++)
            if (strcasecmp(rec.e[i].argv[0], never[j]) == 0)
                fail_msg("seed %llu: effect %zu is %s", (unsigned long long)seed, i, never[j]);

    gb_engine *fresh = sbe_engine_new(NULL);
    replay(fresh, &rec);
    set_clock(w->eng, now);
    set_clock(fresh, now);
    char *want = dump_dataset(w->eng);
    if (getenv("GB_REPLAY_DEBUG")) fprintf(stderr, "seed %llu: %zu effects, %zu bytes of dataset\n", (unsigned long long)seed, rec.n, strlen(want));
    char *got = dump_dataset(fresh);
    if (strcmp(want, got) != 0) {
        fprintf(stderr, "seed %llu: datasets differ after replaying %zu effects\n--- original\n%s--- replayed\n%s",
                (unsigned long long)seed, rec.n, want, got);
        fail();
    }
    free(want);
    free(got);
    gb_engine_free(fresh);
    for (int i = 0; i < NWIRE; i++)
        wire_free(w->wire[i]);
    for (int i = 0; i < NSBE; i++)
        sbe_conn_free(w->sbe[i]);
    gb_engine_free(w->eng);
    rec_free(&rec);
    free(w);
}

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && atoi(v) > 0 ? atoi(v) : dflt;
}

static void test_random_streams_replay(void **state)
{
    (void)state;
    int seeds = env_int("GB_REPLAY_SEEDS", 50), n = env_int("GB_REPLAY_COMMANDS", 3000);
    for (int s = 1; s <= seeds; s++)
        one_seed((uint64_t)s * 7919u, n);
}

/* ---- the contract, clause by clause ---------------------------------------------------------- */

typedef struct probe {
    gb_engine *eng;
    wire_client *w;
    recorder rec;
    gb_prop_sink sink;
} probe;

static probe *probe_new(void)
{
    probe *p = calloc(1, sizeof *p);
    p->eng = sbe_engine_new(NULL);
    set_clock(p->eng, T0);
    p->w = wire_new(p->eng);
    p->rec.eng = p->eng;
    p->sink = (gb_prop_sink){rec_emit, &p->rec};
    gb_propagate_attach(p->eng, &p->sink);
    return p;
}

static void probe_free(probe *p)
{
    wire_free(p->w);
    gb_engine_free(p->eng);
    rec_free(&p->rec);
    free(p);
}

/* Runs set-up lines unrecorded, then `line`, and checks the effects. */
static void run_lines(wire_client *w, const char *lines)
{
    char *copy = strdup(lines);
    for (char *save = NULL, *t = strtok_r(copy, ";", &save); t; t = strtok_r(NULL, ";", &save))
        run_words(w, t);
    free(copy);
}

static void expect_effects(const char *setup, const char *line, const char *want)
{
    probe *p = probe_new();
    run_lines(p->w, setup);
    rec_clear(&p->rec);
    run_words(p->w, line);
    char *got = rec_text(&p->rec);
    if (strcmp(got, want) != 0)
        fail_msg("after '%s', '%s' emitted '%s', expected '%s'", setup, line, got, want);
    free(got);
    probe_free(p);
}

static void test_noop_writes_emit_nothing(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"SET k v", "DEL missing"},
        {"SADD s a", "SADD s a"},
        {"SADD s a", "SREM s b"},
        {"HSET h f v", "HDEL h g"},
        {"RPUSH l a", "LREM l 0 b"},
        {"RPUSH l a", "LPUSHX nolist x"},
        {"SET k v", "SET k w NX"},
        {"SET k v", "SET nokey w XX"},
        {"SET k v", "EXPIRE missing 10"},
        {"SET k v", "PERSIST k"},
        {"ZADD z 1 m", "ZADD z XX 1 other"},
        {"ZADD z 1 m", "ZREM z other"},
        {"SET a 1;SET b 2", "RENAMENX a b"},
        {"SET k v", "MOVE missing 1"},
        {"SADD s a;SADD t b", "SMOVE s t zz"},
        {"SET k v", "GETDEL missing"},
        {"SET k v", "INCRBYFLOAT k 1"},
        {"SET k v", "INCR k"},
        {"RPUSH l a", "LPOP missing"},
        {"SET k v", "SPOP missing"},
        {"SET k v", "GET k"},
        {"RPUSH l a", "LTRIM l 0 -1"},
        {"SET k v", "EXPIRE k 100 GT"},
        {"RPUSH l a;SET d x", "BLMOVE l d LEFT RIGHT 0"},  /* WRONGTYPE on the destination */
        {"RPUSH l a;SET d x", "BRPOPLPUSH l d 0"},
    };
    for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++)
        expect_effects(cases[i][0], cases[i][1], "");
}

static void test_deterministic_rewrites(void **state)
{
    (void)state;
    /* T0 = 1700000000000: relative times become absolute ones. */
    expect_effects("SET x 1", "SET k v EX 10", "[0] SET k v PXAT 1700000010000");
    expect_effects("SET x 1", "SET k v PX 5 GET", "[0] SET k v PXAT 1700000000005");
    expect_effects("SET x 1", "SETEX k 2 v", "[0] SET k v PXAT 1700000002000");
    expect_effects("SET k v EX 100", "SET k w KEEPTTL", "[0] SET k w KEEPTTL");
    expect_effects("SET k v", "EXPIRE k 3", "[0] PEXPIREAT k 1700000003000");
    expect_effects("SET k v", "EXPIRE k -1", "[0] DEL k");
    expect_effects("SET k v", "GETEX k PX 7", "[0] PEXPIREAT k 1700000000007");
    expect_effects("SET k v EX 9", "GETEX k PERSIST", "[0] PERSIST k");
    expect_effects("SET k v", "GETDEL k", "[0] DEL k");
    expect_effects("SET k 1.5", "INCRBYFLOAT k 1", "[0] SET k 2.5 KEEPTTL");
    expect_effects("HSET h f 1", "HINCRBYFLOAT h f 0.5", "[0] HSET h f 1.5");
    expect_effects("RPUSH l a b", "BLPOP x l 0", "[0] LPOP l");
    expect_effects("RPUSH l a b", "BRPOP l 0", "[0] RPOP l");
    expect_effects("RPUSH l a b", "BLMPOP 0 1 l RIGHT COUNT 5", "[0] RPOP l 2");
    expect_effects("RPUSH l a b", "LMPOP 1 l LEFT", "[0] LPOP l 1");
    expect_effects("RPUSH l a b", "BLMOVE l m RIGHT LEFT 0", "[0] LMOVE l m RIGHT LEFT");
    expect_effects("RPUSH l a b", "BRPOPLPUSH l m 0", "[0] RPOPLPUSH l m"); /* Redis 7.0 writes it so */
    expect_effects("ZADD z 1 a 2 b", "BZPOPMAX z 0", "[0] ZPOPMAX z");
    expect_effects("ZADD z 1 a 2 b", "BZMPOP 0 1 z MIN COUNT 9", "[0] ZPOPMIN z 2");
    expect_effects("SADD s a b c", "SPOP s 3", "[0] DEL s");
    expect_effects("SELECT 2;SET k v", "SET k w", "[2] SET k w");
}

/* The integer reply of a command (set-up and checks). */
static int64_t int_reply(gb_engine *eng, const char *line)
{
    collect col = {0};
    gb_client *c = gb_client_new(eng, &collect_ops, &col, NULL, NULL, 0);
    char *copy = strdup(line);
    gb_slice argv[16];
    int argc = 0;
    for (char *save = NULL, *t = strtok_r(copy, " ", &save); t && argc < 16; t = strtok_r(NULL, " ", &save))
        argv[argc++] = gb_slice_cstr(t);
    gb_gate_execute(c, argc, argv);
    assert_int_equal(col.n, 1);
    assert_int_equal(col.items[0][0], ':');
    int64_t v = atoll(col.items[0] + 1);
    col_clear(&col);
    free(col.items);
    free(copy);
    gb_client_free(c);
    return v;
}

/* Stream effects as redis-server 7.0.15 writes them to its log (checked
 * there with appendonly yes): a read through a group is an XCLAIM carrying
 * the delivery time, count and the group's last ID; NOACK creates the
 * consumer and moves the group (with its read counter); a claim of a
 * deleted entry drops it; an approximate trim is written as the exact
 * length it left, a generated ID as itself. */
static void test_stream_effects_as_redis(void **state)
{
    (void)state;
    const char *setup = "XADD s 1-0 f v;XADD s 2-0 f w;XGROUP CREATE s g 0";
    expect_effects(setup, "XREADGROUP GROUP g c COUNT 1 STREAMS s >",
                   "[0] XCLAIM s g c 0 1-0 TIME 1700000000000 RETRYCOUNT 1 FORCE JUSTID LASTID 1-0");
    expect_effects(setup, "XREADGROUP GROUP g d NOACK STREAMS s >",
                   "[0] MULTI | [0] XGROUP CREATECONSUMER s g d | [0] XGROUP SETID s g 2-0 ENTRIESREAD 2 | [0] EXEC");
    expect_effects("XADD s 1-0 f v;XADD s 2-0 f w;XGROUP CREATE s g 0;XREADGROUP GROUP g c COUNT 1 STREAMS s >;"
                   "XDEL s 1-0",
                   "XAUTOCLAIM s g e 0 0-0",
                   "[0] XCLAIM s g c 0 1-0 TIME 1700000000000 RETRYCOUNT 1 FORCE JUSTID LASTID 1-0");
    expect_effects("XADD s 1-0 f v;XADD s 2-0 f w", "XADD s MAXLEN ~ 1 3-0 a b", "[0] XADD s MAXLEN = 3 3-0 a b");
    expect_effects("XADD s 1-0 f v", "XADD s 1-* a b", "[0] XADD s 1-1 a b");
    /* A departure: a new consumer's empty history read creates it, which
     * Redis 7.0 does not log (its log replays without the consumer). */
    expect_effects(setup, "XREADGROUP GROUP g c STREAMS s 0", "[0] XGROUP CREATECONSUMER s g c");
    expect_effects("XADD s 1-0 f v;XGROUP CREATE s g 0;XREADGROUP GROUP g c STREAMS s >",
                   "XREADGROUP GROUP g c STREAMS s 9-0", ""); /* nothing read, nobody created */
}

static void test_spop_propagates_what_it_popped(void **state)
{
    (void)state;
    probe *p = probe_new();
    run_words(p->w, "SADD s a b c d e");
    rec_clear(&p->rec);
    run_words(p->w, "SPOP s 2");
    assert_int_equal(p->rec.n, 1);
    effect *e = &p->rec.e[0];
    assert_int_equal(e->argc, 4);
    assert_string_equal(e->argv[0], "SREM");
    assert_string_equal(e->argv[1], "s");
    assert_int_equal(int_reply(p->eng, "SCARD s"), 3);
    for (int i = 2; i < 4; i++) {
        char line[64];
        snprintf(line, sizeof line, "SISMEMBER s %s", e->argv[i]);
        assert_int_equal(int_reply(p->eng, line), 0);
    }
    probe_free(p);
}

static void test_units_are_wrapped(void **state)
{
    (void)state;
    probe *p = probe_new();
    run_words(p->w, "MULTI");
    run_words(p->w, "SET a 1");
    run_words(p->w, "GET a");
    run_words(p->w, "SELECT 1");
    run_words(p->w, "INCR n");
    run_words(p->w, "EXEC");
    char *got = rec_text(&p->rec);
    assert_string_equal(got, "[0] MULTI | [0] SET a 1 | [1] INCR n | [1] EXEC");
    free(got);
    /* One write in EXEC is atomic by itself: no wrapper. A transaction
     * that wrote nothing emits nothing. */
    rec_clear(&p->rec);
    run_words(p->w, "MULTI");
    run_words(p->w, "INCR n");
    run_words(p->w, "EXEC");
    run_words(p->w, "MULTI");
    run_words(p->w, "GET a");
    run_words(p->w, "EXEC");
    got = rec_text(&p->rec);
    assert_string_equal(got, "[1] INCR n");
    free(got);
    probe_free(p);
}

static void test_served_waiter_is_its_own_unit(void **state)
{
    (void)state;
    probe *p = probe_new();
    wire_client *waiter = wire_new(p->eng);
    run_words(waiter, "BLPOP q 0");
    assert_true(waiter->rc->c->flags & GB_CLIENT_BLOCKED);
    run_words(p->w, "RPUSH q a b");
    char *got = rec_text(&p->rec);
    assert_string_equal(got, "[0] RPUSH q a b | [0] LPOP q");
    free(got);
    wire_free(waiter);
    probe_free(p);
}

static void test_expired_keys_emit_del_first(void **state)
{
    (void)state;
    probe *p = probe_new();
    run_words(p->w, "SET k v PX 10");
    run_words(p->w, "RPUSH l x");
    run_words(p->w, "PEXPIRE l 10");
    rec_clear(&p->rec);
    set_clock(p->eng, T0 + 50);
    run_words(p->w, "GET k"); /* a read that finds it expired */
    run_words(p->w, "RPUSH l y");
    char *got = rec_text(&p->rec);
    assert_string_equal(got, "[0] DEL k | [0] MULTI | [0] DEL l | [0] RPUSH l y | [0] EXEC");
    free(got);
    /* active expiry, outside any command */
    run_words(p->w, "SET z v PX 1");
    rec_clear(&p->rec);
    set_clock(p->eng, T0 + 100);
    gb_db_active_expire(&p->eng->dbs[0], UINT64_MAX);
    got = rec_text(&p->rec);
    assert_string_equal(got, "[0] DEL z");
    free(got);
    probe_free(p);
}

/* A typed SBE call emits exactly what its RESP form does. */
static void test_typed_calls_propagate_like_resp(void **state)
{
    (void)state;
    for (int round = 0; round < 400; round++) {
        gb_random_seed((uint64_t)round + 1);
        probe *p = probe_new();
        probe *q;
        static world w;
        /* the same command, once per path, on the same starting state */
        cmdbuf b;
        gen_command(&b, T0);
        if (b.n == 0 || gb_slice_ieq(b.v[0], "SELECT"))
            b.n = 0;
        static const char setup[] = "RPUSH a 1 2;SET b 5;HSET c f1 1;ZADD d 1 f1;SADD e x y z";
        run_lines(p->w, setup);
        q = probe_new();
        run_lines(q->w, setup);
        sbe_conn *s = sbe_conn_new(q->eng);
        rec_clear(&p->rec);
        rec_clear(&q->rec);
        if (b.n) {
            uint64_t saved = gb_random_u64(); /* SPOP: the same draws on both sides */
            gb_random_seed(saved);
            wire_run(p->w, b.n, b.v);
            gb_random_seed(saved);
            w.eng = q->eng;
            sbe_send(&w, s, &b);
        }
        char *want = rec_text(&p->rec), *got = rec_text(&q->rec);
        if (strcmp(want, got) != 0)
            fail_msg("round %d: RESP emitted '%s', SBE '%s'", round, want, got);
        free(want);
        free(got);
        sbe_conn_free(s);
        probe_free(q);
        probe_free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_noop_writes_emit_nothing),
        cmocka_unit_test(test_deterministic_rewrites),
        cmocka_unit_test(test_stream_effects_as_redis),
        cmocka_unit_test(test_spop_propagates_what_it_popped),
        cmocka_unit_test(test_units_are_wrapped),
        cmocka_unit_test(test_served_waiter_is_its_own_unit),
        cmocka_unit_test(test_expired_keys_emit_del_first),
        cmocka_unit_test(test_typed_calls_propagate_like_resp),
        cmocka_unit_test(test_random_streams_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
