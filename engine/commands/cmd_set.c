/*
 * Set commands: the arguments, the replies and the propagated effects
 * around engine/types/t_set.h (the work on the keys). Argument order, error
 * texts and reply shapes follow Redis 7.0's t_set.c (7.0.15's SRANDMEMBER
 * count range); encodings follow Redis 7.2 (listpack for small non-integer
 * sets).
 */
#include "engine/commands/cmd_collection.h"
#include "engine/commands/cmd_util.h"
#include "engine/core/request/propagate.h"
#include "engine/core/engine.h"
#include "engine/base/mem.h"
#include "engine/types/t_set.h"
#include "engine/base/util.h"

/* ---- replies -------------------------------------------------------------------- */

static void reply_len(void *ctx, size_t n) { gb_reply_array(ctx, (int64_t)n); }
static void emit_bulk(void *ctx, gb_slice m) { gb_reply_slice(ctx, m); }

/* An element stream replied as an array: its length first. */
static gb_sink array_sink(gb_client *c)
{
    gb_sink s = {.len = reply_len, .value = emit_bulk, .ctx = c};
    return s;
}

/* The same as a set (RESP3 '~'): SUNION, SDIFF, as Redis 7.0. */
static void reply_set_len(void *ctx, size_t n) { gb_reply_set(ctx, (int64_t)n); }
static gb_sink set_sink(gb_client *c)
{
    gb_sink s = {.len = reply_set_len, .value = emit_bulk, .ctx = c};
    return s;
}

/* ---- writes -------------------------------------------------------------------- */

static void cmd_sadd(gb_client *c, int argc, gb_slice *argv)
{
    int64_t n;
    gb_result r = gb_set_sadd(c->db, argv[1], (size_t)(argc - 2), argv + 2, &n);
    gb_reply_int_result(c, r, n);
    if (r == GB_R_OK && n > 0)
        gb_notify_key(c, GB_NOTIFY_SET, "sadd", argv[1]);
}

static void cmd_srem(gb_client *c, int argc, gb_slice *argv)
{
    int64_t n;
    gb_result r = gb_set_srem(c->db, argv[1], (size_t)(argc - 2), argv + 2, &n);
    gb_reply_int_result(c, r, n);
    if (r == GB_R_OK && n > 0) {
        gb_notify_key(c, GB_NOTIFY_SET, "srem", argv[1]);
        gb_notify_del_if_gone(c, argv[1]);
    }
}

/* SMOVE source destination member */
static void cmd_smove(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t n;
    bool added;
    gb_result r = gb_set_smove(c->db, argv[1], argv[2], argv[3], &n, &added);
    gb_reply_int_result(c, r, n);
    if (r == GB_R_OK && n > 0 && !gb_slice_eq(argv[1], argv[2])) {
        gb_notify_key(c, GB_NOTIFY_SET, "srem", argv[1]);
        gb_notify_del_if_gone(c, argv[1]);
        if (added) /* a member the destination had already: no sadd (Redis 7.0) */
            gb_notify_key(c, GB_NOTIFY_SET, "sadd", argv[2]);
    }
}

/* SPOP's effect: which members were popped is chance, so it is propagated
 * as SREM key member ... (in batches, as Redis 7.0 does), unless the whole
 * set went (or nobody listens): then as the key's deletion. */
#define SPOP_BATCH 1024
typedef struct spop_ctx {
    gb_client *c;
    gb_slice key;
    int64_t count;  /* -1: SPOP key (one member, not in an array) */
    size_t card;    /* the set's size before the pop */
    size_t popping; /* how many go */
    bool srem;
    size_t n;
    gb_slice argv[2 + SPOP_BATCH]; /* SREM key, then owned copies of members */
} spop_ctx;

static void spop_flush(spop_ctx *e)
{
    if (!e->n)
        return;
    e->argv[0] = gb_slice_cstr("SREM");
    e->argv[1] = e->key;
    gb_propagate_command(e->c, (int)e->n + 2, e->argv);
    for (size_t i = 0; i < e->n; i++)
        gb_free((void *)e->argv[2 + i].ptr);
    e->n = 0;
}

static void spop_len(void *ctx, size_t n)
{
    spop_ctx *e = ctx;
    e->popping = n;
    if (e->count >= 0)
        gb_reply_set(e->c, (int64_t)n);
    e->srem = gb_propagating(&e->c->eng->prop) && (uint64_t)(e->count < 0 ? 1 : e->count) < e->card;
}

static void spop_value(void *ctx, gb_slice m)
{
    spop_ctx *e = ctx;
    gb_reply_slice(e->c, m);
    if (!e->srem)
        return;
    e->argv[2 + e->n++] = gb_slice_make(gb_memdup(m.ptr, m.len), m.len);
    if (e->n == SPOP_BATCH)
        spop_flush(e);
}

/* SPOP key [count] */
static void cmd_spop(gb_client *c, int argc, gb_slice *argv)
{
    if (argc > 3) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    int64_t count = -1;
    if (argc == 3 &&
        !gb_arg_ll_range(c, argv[2], 0, INT64_MAX, "ERR value is out of range, must be positive", &count))
        return;
    spop_ctx e;
    e.c = c;
    e.key = argv[1];
    e.count = count;
    e.popping = e.n = 0;
    e.srem = false;
    gb_sink s = {.len = spop_len, .value = spop_value, .ctx = &e};
    gb_result r = gb_set_spop(c->db, argv[1], count < 0 ? 1 : (size_t)count, &s, &e.card);
    if (r == GB_R_NOTFOUND) {
        if (count >= 0)
            gb_reply_set(c, 0);
        else
            gb_reply_nil(c);
    } else if (r != GB_R_OK) {
        gb_reply_result(c, r);
        return;
    } else if (e.srem) {
        spop_flush(&e);
    } else if (e.popping) {
        gb_propagate_del(c, argv[1]);
    }
    if (r == GB_R_OK && count != 0) {
        gb_notify_key(c, GB_NOTIFY_SET, "spop", argv[1]);
        gb_notify_del_if_gone(c, argv[1]);
    }
}

/* ---- reads ------------------------------------------------------------------------ */

static void cmd_sismember(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t is;
    gb_result r = gb_set_sismember(c->db, argv[1], argv[2], &is);
    gb_reply_int_result(c, r, is);
}

static void reply_one(void *ctx, gb_slice m)
{
    (void)m;
    gb_reply_int(ctx, 1);
}
static void reply_zero(void *ctx) { gb_reply_int(ctx, 0); }

static void cmd_smismember(gb_client *c, int argc, gb_slice *argv)
{
    gb_sink s = {.len = reply_len, .value = reply_one, .missing = reply_zero, .ctx = c};
    gb_result r = gb_set_smismember(c->db, argv[1], (size_t)(argc - 2), argv + 2, &s);
    if (r != GB_R_OK)
        gb_reply_result(c, r);
}

static void cmd_scard(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t n;
    gb_result r = gb_set_scard(c->db, argv[1], &n);
    gb_reply_int_result(c, r, n);
}

/* SRANDMEMBER key [count] */
static bool srandmember_fits(void *ctx, uint64_t n, uint64_t element_bytes)
{
    return gb_types_reply_fits(ctx, n, 1, element_bytes);
}

static void cmd_srandmember(gb_client *c, int argc, gb_slice *argv)
{
    if (argc > 3) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    gb_sink s = array_sink(c);
    s.fits = srandmember_fits;
    int64_t count = 1;
    if (argc == 2)
        s.len = NULL; /* one member, not in an array */
    else if (!gb_types_random_count(c, argv[2], &count))
        return;
    gb_result r = gb_set_srandmember(c->db, argv[1], count, &s);
    if (r == GB_R_NOTFOUND && argc == 2)
        gb_reply_nil(c);
    else if (r == GB_R_NOTFOUND)
        gb_reply_array(c, 0);
    else if (r != GB_R_OK)
        gb_reply_result(c, r);
}

/* ---- algebra ------------------------------------------------------------------------- */

/* A stream whose length is known once it is replied (SINTER, SMEMBERS). */
typedef struct deferred_ctx {
    gb_client *c;
    size_t handle;
} deferred_ctx;

static void deferred_open(void *ctx, size_t n)
{
    (void)n;
    deferred_ctx *d = ctx;
    d->handle = gb_reply_array_deferred(d->c);
}

static void deferred_value(void *ctx, gb_slice m) { gb_reply_slice(((deferred_ctx *)ctx)->c, m); }

static void inter_reply(gb_client *c, gb_slice *keys, size_t nkeys)
{
    deferred_ctx d = {c, 0};
    gb_sink s = {.len = deferred_open, .value = deferred_value, .ctx = &d};
    size_t n;
    gb_result r = gb_set_sinter(c->db, nkeys, keys, &s, &n);
    if (r == GB_R_OK)
        gb_reply_set_deferred_set(c, d.handle, (int64_t)n);
    else if (r == GB_R_NOTFOUND)
        gb_reply_set(c, 0);
    else
        gb_reply_result(c, r);
}

static void cmd_sinter(gb_client *c, int argc, gb_slice *argv) { inter_reply(c, argv + 1, (size_t)(argc - 1)); }

static void cmd_smembers(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    inter_reply(c, argv + 1, 1);
}

static void cmd_sinterstore(gb_client *c, int argc, gb_slice *argv)
{
    int64_t n;
    bool existed = gb_notify_store_begin(c, argv[1]);
    gb_result r = gb_set_sinterstore(c->db, argv[1], (size_t)(argc - 2), argv + 2, &n);
    gb_reply_int_result(c, r, n);
    if (r == GB_R_OK)
        gb_notify_store_end(c, GB_NOTIFY_SET, "sinterstore", argv[1], n, existed);
}

/* SINTERCARD numkeys key [key ...] [LIMIT limit] */
static void cmd_sintercard(gb_client *c, int argc, gb_slice *argv)
{
    int64_t numkeys, limit = 0;
    if (!gb_arg_ll_range(c, argv[1], 1, INT64_MAX, "ERR numkeys should be greater than 0", &numkeys))
        return;
    if (numkeys > argc - 2) {
        gb_reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (int j = 2 + (int)numkeys; j < argc; j++) {
        if (gb_slice_ieq(argv[j], "limit") && j + 1 < argc) {
            if (!gb_arg_ll_range(c, argv[++j], 0, INT64_MAX, "ERR LIMIT can't be negative", &limit))
                return;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    int64_t n;
    gb_result r = gb_set_sintercard(c->db, (size_t)numkeys, argv + 2, (size_t)limit, &n);
    gb_reply_int_result(c, r, n);
}

static void cmd_sunion(gb_client *c, int argc, gb_slice *argv)
{
    gb_sink s = set_sink(c);
    gb_result r = gb_set_sunion(c->db, (size_t)(argc - 1), argv + 1, &s);
    if (r != GB_R_OK)
        gb_reply_result(c, r);
}
static void cmd_sdiff(gb_client *c, int argc, gb_slice *argv)
{
    gb_sink s = set_sink(c);
    gb_result r = gb_set_sdiff(c->db, (size_t)(argc - 1), argv + 1, &s);
    if (r != GB_R_OK)
        gb_reply_result(c, r);
}
static void cmd_sunionstore(gb_client *c, int argc, gb_slice *argv)
{
    int64_t n;
    bool existed = gb_notify_store_begin(c, argv[1]);
    gb_result r = gb_set_sunionstore(c->db, argv[1], (size_t)(argc - 2), argv + 2, &n);
    gb_reply_int_result(c, r, n);
    if (r == GB_R_OK)
        gb_notify_store_end(c, GB_NOTIFY_SET, "sunionstore", argv[1], n, existed);
}
static void cmd_sdiffstore(gb_client *c, int argc, gb_slice *argv)
{
    int64_t n;
    bool existed = gb_notify_store_begin(c, argv[1]);
    gb_result r = gb_set_sdiffstore(c->db, argv[1], (size_t)(argc - 2), argv + 2, &n);
    gb_reply_int_result(c, r, n);
    if (r == GB_R_OK)
        gb_notify_store_end(c, GB_NOTIFY_SET, "sdiffstore", argv[1], n, existed);
}

/* SSCAN key cursor [MATCH pattern] [COUNT count] */
static void cmd_sscan(gb_client *c, int argc, gb_slice *argv)
{
    gb_types_scan(c, argc, argv, GB_TYPE_SET);
}

GB_DEFINE_COMMANDS(set,
    {"sadd", cmd_sadd},
    {"srem", cmd_srem},
    {"smove", cmd_smove},
    {"sismember", cmd_sismember},
    {"smismember", cmd_smismember},
    {"smembers", cmd_smembers},
    {"scard", cmd_scard},
    {"spop", cmd_spop},
    {"srandmember", cmd_srandmember},
    {"sinter", cmd_sinter},
    {"sintercard", cmd_sintercard},
    {"sinterstore", cmd_sinterstore},
    {"sunion", cmd_sunion},
    {"sunionstore", cmd_sunionstore},
    {"sdiff", cmd_sdiff},
    {"sdiffstore", cmd_sdiffstore},
    {"sscan", cmd_sscan});
