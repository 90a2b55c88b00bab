/*
 * Hash commands: the arguments, the replies and the propagated effects
 * around engine/types/t_hash.h (the work on the keys). Argument order,
 * error texts and reply shapes follow Redis 7.0's t_hash.c (7.0.15:
 * HRANDFIELD's count ranges, HINCRBYFLOAT's "value is NaN or Infinity").
 */
#include <math.h>

#include "engine/commands/cmd_collection.h"
#include "engine/commands/cmd_util.h"
#include "engine/commands/typed.h"
#include "engine/core/request/propagate.h"
#include "engine/base/mem.h"
#include "engine/types/t_hash.h"
#include "engine/base/score.h"
#include "engine/base/util.h"

/* ---- writes ------------------------------------------------------------------- */

/* HSET key field value [field value ...] / HMSET: the pairs are argv[2..]. */
static void hset_generic(gb_client *c, int argc, gb_slice *argv, bool hmset)
{
    if (argc % 2 == 1) {
        gb_reply_wrong_arity(c, hmset ? "hmset" : "hset");
        return;
    }
    size_t n = (size_t)(argc - 2) / 2;
    gb_slice stackf[16] = {{0}}, stackv[16] = {{0}}; /* (zeroed: keeps gcc -O2 from a false "maybe uninitialized") */
    gb_slice *fields = n <= 16 ? stackf : gb_malloc(n * sizeof *fields);
    gb_slice *values = n <= 16 ? stackv : gb_malloc(n * sizeof *values);
    for (size_t i = 0; i < n; i++) {
        fields[i] = argv[2 + 2 * i];
        values[i] = argv[3 + 2 * i];
    }
    int64_t added;
    gb_result r = gb_hash_hset(c->db, argv[1], n, fields, values, &added);
    if (fields != stackf) {
        gb_free(fields);
        gb_free(values);
    }
    if (r != GB_R_OK) {
        gb_reply_result(c, r);
        return;
    }
    if (hmset)
        gb_reply_ok(c);
    else
        gb_reply_int(c, added);
    gb_notify_key(c, GB_NOTIFY_HASH, "hset", argv[1]);
}

static void cmd_hset(gb_client *c, int argc, gb_slice *argv) { hset_generic(c, argc, argv, false); }
static void cmd_hmset(gb_client *c, int argc, gb_slice *argv) { hset_generic(c, argc, argv, true); }

static void cmd_hsetnx(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t set;
    gb_result r = gb_hash_hsetnx(c->db, argv[1], argv[2], argv[3], &set);
    gb_reply_int_result(c, r, set);
    if (r == GB_R_OK && set)
        gb_notify_key(c, GB_NOTIFY_HASH, "hset", argv[1]);
}

static void cmd_hdel(gb_client *c, int argc, gb_slice *argv)
{
    int64_t n;
    gb_result r = gb_hash_hdel(c->db, argv[1], (size_t)(argc - 2), argv + 2, &n);
    gb_reply_int_result(c, r, n);
    if (r == GB_R_OK && n) {
        gb_notify_key(c, GB_NOTIFY_HASH, "hdel", argv[1]);
        gb_notify_del_if_gone(c, argv[1]);
    }
}

static void cmd_hincrby(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t incr, v;
    if (!gb_arg_ll(c, argv[3], &incr))
        return;
    gb_result r = gb_hash_hincrby(c->db, argv[1], argv[2], incr, &v);
    if (r == GB_R_NOTINT)
        gb_reply_error(c, "ERR hash value is not an integer");
    else
        gb_reply_int_result(c, r, v);
    if (r == GB_R_OK)
        gb_notify_key(c, GB_NOTIFY_HASH, "hincrby", argv[1]);
}

static void cmd_hincrbyfloat(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    long double incr;
    if (gb_parse_long_double(argv[3], &incr) != 0) {
        gb_reply_error(c, GB_ERR_NOT_FLOAT);
        return;
    }
    if (isnan(incr) || isinf(incr)) {
        gb_reply_error(c, "ERR value is NaN or Infinity");
        return;
    }
    char buf[GB_LONG_DOUBLE_BUF];
    size_t len;
    gb_result r = gb_hash_hincrbyfloat(c->db, argv[1], argv[2], incr, buf, &len);
    if (r == GB_R_NOTFLOAT) {
        gb_reply_error(c, "ERR hash value is not a float");
    } else if (r != GB_R_OK) {
        gb_reply_result(c, r); /* NaN: "increment would produce NaN or Infinity" */
    } else {
        gb_reply_bulk(c, buf, len);
        /* The result, not the increment (Redis: HSET key field value). */
        gb_slice eff[4] = {gb_slice_cstr("HSET"), argv[1], argv[2], gb_slice_make(buf, len)};
        gb_propagate_command(c, 4, eff);
        gb_notify_key(c, GB_NOTIFY_HASH, "hincrbyfloat", argv[1]);
    }
}

/* ---- reads -------------------------------------------------------------------- */

static void cmd_hget(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_cmd_hget(c, argv[1], argv[2]);
}

static void reply_len(void *ctx, size_t n) { gb_reply_array(ctx, (int64_t)n); }
static void reply_value(void *ctx, gb_slice v) { gb_reply_slice(ctx, v); }
static void reply_nil(void *ctx) { gb_reply_nil(ctx); }

static void cmd_hmget(gb_client *c, int argc, gb_slice *argv)
{
    gb_sink s = {.len = reply_len, .value = reply_value, .missing = reply_nil, .ctx = c};
    gb_result r = gb_hash_hmget(c->db, argv[1], (size_t)(argc - 2), argv + 2, &s);
    if (r != GB_R_OK)
        gb_reply_result(c, r);
}

static void cmd_hlen(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t n;
    gb_result r = gb_hash_hlen(c->db, argv[1], &n);
    gb_reply_int_result(c, r, n);
}
static void cmd_hexists(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t n;
    gb_result r = gb_hash_hexists(c->db, argv[1], argv[2], &n);
    gb_reply_int_result(c, r, n);
}
static void cmd_hstrlen(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t n;
    gb_result r = gb_hash_hstrlen(c->db, argv[1], argv[2], &n);
    gb_reply_int_result(c, r, n);
}

enum { WANT_FIELD = 1, WANT_VALUE = 2 };

/* Replies the fields, the values or both of the pairs streamed. */
typedef struct emit_ctx {
    gb_client *c;
    int want;
    bool map; /* HGETALL: a map of the pairs (RESP3 '%') */
} emit_ctx;

/* Field and value as their own 2-array: HRANDFIELD WITHVALUES in RESP3
 * (Redis 7.0's "if (withvalues && c->resp > 2) addReplyArrayLen(c,2)"). */
static bool nested(const emit_ctx *e) { return !e->map && e->want == (WANT_FIELD | WANT_VALUE) && e->c->resp > 2; }

static void emit_len(void *ctx, size_t n)
{
    emit_ctx *e = ctx;
    if (e->map)
        gb_reply_map(e->c, (int64_t)n);
    else
        gb_reply_array(e->c, (int64_t)(e->want == (WANT_FIELD | WANT_VALUE) && !nested(e) ? n * 2 : n));
}

static void emit_pair(void *ctx, gb_slice field, gb_slice value)
{
    emit_ctx *e = ctx;
    if (nested(e))
        gb_reply_array(e->c, 2);
    if (e->want & WANT_FIELD)
        gb_reply_slice(e->c, field);
    if (e->want & WANT_VALUE)
        gb_reply_slice(e->c, value);
}

static void getall_generic(gb_client *c, gb_slice key, int want)
{
    emit_ctx e = {c, want, want == (WANT_FIELD | WANT_VALUE)};
    gb_sink s = {.len = emit_len, .pair = emit_pair, .ctx = &e};
    gb_result r = gb_hash_hgetall(c->db, key, &s);
    if (r == GB_R_NOTFOUND && e.map)
        gb_reply_map(c, 0);
    else if (r == GB_R_NOTFOUND)
        gb_reply_array(c, 0);
    else if (r != GB_R_OK)
        gb_reply_result(c, r);
}

static void cmd_hgetall(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    getall_generic(c, argv[1], WANT_FIELD | WANT_VALUE);
}
static void cmd_hkeys(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    getall_generic(c, argv[1], WANT_FIELD);
}
static void cmd_hvals(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    getall_generic(c, argv[1], WANT_VALUE);
}

static bool hrandfield_fits(void *ctx, uint64_t n, uint64_t element_bytes)
{
    const emit_ctx *e = ctx;
    return gb_types_reply_fits(e->c, n, (e->want & WANT_VALUE) ? 2 : 1, element_bytes);
}

/* HRANDFIELD key [count [WITHVALUES]] */
static void cmd_hrandfield(gb_client *c, int argc, gb_slice *argv)
{
    emit_ctx e = {c, WANT_FIELD, false};
    gb_sink s = {.pair = emit_pair, .ctx = &e};
    if (argc == 2) { /* one field, not in an array */
        gb_result r = gb_hash_hrandfield(c->db, argv[1], 1, &s);
        if (r == GB_R_NOTFOUND)
            gb_reply_nil(c);
        else if (r != GB_R_OK)
            gb_reply_result(c, r);
        return;
    }
    int64_t count;
    if (!gb_types_random_count(c, argv[2], &count))
        return;
    if (argc > 4 || (argc == 4 && !gb_slice_ieq(argv[3], "withvalues"))) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    if (argc == 4) {
        e.want |= WANT_VALUE;
        if (!gb_types_random_pairs_ok(c, count))
            return;
    }
    s.len = emit_len;
    s.fits = hrandfield_fits;
    gb_result r = gb_hash_hrandfield(c->db, argv[1], count, &s);
    if (r == GB_R_NOTFOUND)
        gb_reply_array(c, 0);
    else if (r != GB_R_OK)
        gb_reply_result(c, r);
}

/* HSCAN key cursor [MATCH pattern] [COUNT count] */
static void cmd_hscan(gb_client *c, int argc, gb_slice *argv)
{
    gb_types_scan(c, argc, argv, GB_TYPE_HASH);
}

GB_DEFINE_COMMANDS(hash,
    {"hset", cmd_hset},
    {"hmset", cmd_hmset},
    {"hsetnx", cmd_hsetnx},
    {"hget", cmd_hget},
    {"hmget", cmd_hmget},
    {"hdel", cmd_hdel},
    {"hlen", cmd_hlen},
    {"hexists", cmd_hexists},
    {"hstrlen", cmd_hstrlen},
    {"hgetall", cmd_hgetall},
    {"hkeys", cmd_hkeys},
    {"hvals", cmd_hvals},
    {"hincrby", cmd_hincrby},
    {"hincrbyfloat", cmd_hincrbyfloat},
    {"hrandfield", cmd_hrandfield},
    {"hscan", cmd_hscan});
