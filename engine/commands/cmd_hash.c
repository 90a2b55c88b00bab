/*
 * Hash commands on top of engine/ds/hash.h. Argument order, error texts and
 * reply shapes follow Redis 7.0's t_hash.c (7.0.15: HRANDFIELD's count
 * ranges, HINCRBYFLOAT's "value is NaN or Infinity").
 */
#include <math.h>

#include "engine/commands/cmd_collection.h"
#include "engine/commands/cmd_util.h"
#include "engine/commands/typed.h"
#include "engine/core/propagate.h"
#include "engine/core/engine.h"
#include "engine/base/mem.h"
#include "engine/types/t_hash.h"
#include "engine/base/score.h"
#include "engine/ds/hash.h"
#include "engine/base/util.h"

/* ---- helpers ---------------------------------------------------------------- */

/* The hash under key in o (NULL when missing); NULL after replying
 * WRONGTYPE, with *wrong set. */
static gb_hash *lookup_hash(gb_client *c, gb_slice key, bool write, gb_tobj *o, bool *wrong)
{
    return gb_tobj_lookup_or_reply(c, key, GB_TYPE_HASH, write, o, wrong) ? &o->o.h : NULL;
}

/* Redis's hashTypeLookupWriteOrCreate: the hash under key, created empty
 * (and added to the db) when missing; NULL after replying WRONGTYPE. */
static gb_hash *lookup_or_create(gb_client *c, gb_slice key, gb_tobj *o)
{
    bool wrong;
    gb_hash *h = lookup_hash(c, key, true, o, &wrong);
    if (wrong)
        return NULL;
    if (!h) {
        gb_tobj_add(c->db, key, GB_TYPE_HASH, gb_hash_new(), o);
        h = &o->o.h;
    }
    return h;
}

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
    gb_result r = gb_op_hset(c->db, argv[1], n, fields, values, &added);
    if (fields != stackf) {
        gb_free(fields);
        gb_free(values);
    }
    if (r != GB_R_OK)
        gb_reply_result(c, r);
    else if (hmset)
        gb_reply_ok(c);
    else
        gb_reply_int(c, added);
}

void gb_cmd_hset(gb_client *c, gb_slice key, size_t n, const gb_slice *fields, const gb_slice *values)
{
    int64_t added;
    gb_result r = gb_op_hset(c->db, key, n, fields, values, &added);
    gb_reply_int_result(c, r, added);
}

static void cmd_hset(gb_client *c, int argc, gb_slice *argv) { hset_generic(c, argc, argv, false); }
static void cmd_hmset(gb_client *c, int argc, gb_slice *argv) { hset_generic(c, argc, argv, true); }

static void cmd_hsetnx(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_tobj o;
    gb_hash *h = lookup_or_create(c, argv[1], &o);
    if (!h)
        return;
    gb_types_config cfg = gb_types_cfg(c->eng);
    if (gb_hash_setnx(h, &cfg, argv[2], argv[3])) {
        gb_tobj_sync(&o);
        gb_engine_key_modified(c->db, argv[1]);
        gb_reply_int(c, 1);
    } else {
        gb_reply_int(c, 0);
    }
}

static void cmd_hdel(gb_client *c, int argc, gb_slice *argv)
{
    bool wrong;
    gb_tobj o;
    gb_hash *h = lookup_hash(c, argv[1], true, &o, &wrong);
    if (wrong)
        return;
    if (!h) {
        gb_reply_int(c, 0);
        return;
    }
    size_t n = gb_hash_del(h, (size_t)(argc - 2), argv + 2);
    if (n) {
        gb_tobj_sync_or_delete(c->db, argv[1], &o);
        gb_engine_key_modified(c->db, argv[1]);
    }
    gb_reply_int(c, (int64_t)n);
}

static void cmd_hincrby(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t incr;
    if (!gb_arg_ll(c, argv[3], &incr))
        return;
    gb_tobj o;
    gb_hash *h = lookup_or_create(c, argv[1], &o);
    if (!h)
        return;
    gb_types_config cfg = gb_types_cfg(c->eng);
    int64_t v;
    int rc = gb_hash_incrby(h, &cfg, argv[2], incr, &v);
    if (rc == GB_EINVAL) {
        gb_reply_error(c, "ERR hash value is not an integer");
    } else if (rc != 0) {
        gb_reply_error(c, GB_ERR_OVERFLOW);
    } else {
        gb_engine_key_modified(c->db, argv[1]);
        gb_reply_int(c, v);
    }
    gb_tobj_sync_or_delete(c->db, argv[1], &o); /* a key created for nothing goes again */
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
    gb_tobj o;
    gb_hash *h = lookup_or_create(c, argv[1], &o);
    if (!h)
        return;
    gb_types_config cfg = gb_types_cfg(c->eng);
    char buf[GB_LONG_DOUBLE_BUF];
    size_t len = 0;
    int rc = gb_hash_incrbyfloat(h, &cfg, argv[2], incr, buf, &len);
    if (rc == GB_EINVAL) {
        gb_reply_error(c, "ERR hash value is not a float");
    } else if (rc != 0) {
        gb_reply_error(c, "ERR increment would produce NaN or Infinity");
    } else {
        gb_engine_key_modified(c->db, argv[1]);
        gb_reply_bulk(c, buf, len);
        /* The result, not the increment (Redis: HSET key field value). */
        gb_slice eff[4] = {gb_slice_cstr("HSET"), argv[1], argv[2], gb_slice_make(buf, len)};
        gb_propagate_command(c, 4, eff);
    }
    gb_tobj_sync_or_delete(c->db, argv[1], &o);
}

/* ---- reads -------------------------------------------------------------------- */

void gb_cmd_hget(gb_client *c, gb_slice key, gb_slice field)
{
    char buf[GB_HASH_VALUE_BUF];
    gb_slice v;
    gb_result r = gb_op_hget(c->db, key, field, &v, buf);
    gb_reply_read_result(c, r, &v);
}

static void cmd_hget(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_cmd_hget(c, argv[1], argv[2]);
}

static void cmd_hmget(gb_client *c, int argc, gb_slice *argv)
{
    bool wrong;
    gb_tobj o;
    gb_hash *h = lookup_hash(c, argv[1], false, &o, &wrong);
    if (wrong)
        return;
    gb_reply_array(c, argc - 2);
    for (int i = 2; i < argc; i++) {
        char buf[GB_HASH_VALUE_BUF];
        gb_slice v;
        if (h && gb_hash_get(h, argv[i], &v, buf))
            gb_reply_slice(c, v);
        else
            gb_reply_nil(c);
    }
}

/* HLEN, HEXISTS, HSTRLEN: an integer, 0 for a missing key. */
enum int_query { Q_LEN, Q_EXISTS, Q_STRLEN };

static void int_query(gb_client *c, gb_slice *argv, enum int_query q)
{
    bool wrong;
    gb_tobj o;
    gb_hash *h = lookup_hash(c, argv[1], false, &o, &wrong);
    if (wrong)
        return;
    int64_t v = 0;
    if (h) {
        if (q == Q_LEN)
            v = (int64_t)gb_hash_len(h);
        else if (q == Q_EXISTS)
            v = gb_hash_exists(h, argv[2]);
        else
            v = (int64_t)gb_hash_strlen(h, argv[2]);
    }
    gb_reply_int(c, v);
}

static void cmd_hlen(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int_query(c, argv, Q_LEN);
}
static void cmd_hexists(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int_query(c, argv, Q_EXISTS);
}
static void cmd_hstrlen(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int_query(c, argv, Q_STRLEN);
}

enum { WANT_FIELD = 1, WANT_VALUE = 2 };

typedef struct emit_ctx {
    gb_client *c;
    int want;
} emit_ctx;

static void emit_pair(void *ctx, gb_slice field, gb_slice value)
{
    emit_ctx *e = ctx;
    if (e->want & WANT_FIELD)
        gb_reply_slice(e->c, field);
    if (e->want & WANT_VALUE)
        gb_reply_slice(e->c, value);
}

static void getall_generic(gb_client *c, gb_slice key, int want)
{
    bool wrong;
    gb_tobj o;
    gb_hash *h = lookup_hash(c, key, false, &o, &wrong);
    if (wrong)
        return;
    if (!h) {
        gb_reply_array(c, 0);
        return;
    }
    size_t n = gb_hash_len(h);
    gb_reply_array(c, (int64_t)(want == (WANT_FIELD | WANT_VALUE) ? n * 2 : n));
    emit_ctx e = {c, want};
    gb_hash_each(h, emit_pair, &e);
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

/* HRANDFIELD key [count [WITHVALUES]] */
static void cmd_hrandfield(gb_client *c, int argc, gb_slice *argv)
{
    bool wrong;
    gb_tobj o;
    if (argc == 2) {
        gb_hash *h = lookup_hash(c, argv[1], false, &o, &wrong);
        if (wrong)
            return;
        if (!h)
            gb_reply_nil(c);
        else {
            emit_ctx e = {c, WANT_FIELD};
            gb_hash_random(h, 1, emit_pair, &e);
        }
        return;
    }
    int64_t count;
    if (!gb_types_random_count(c, argv[2], &count))
        return;
    bool withvalues = false;
    if (argc > 4 || (argc == 4 && !gb_slice_ieq(argv[3], "withvalues"))) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    if (argc == 4) {
        withvalues = true;
        if (!gb_types_random_pairs_ok(c, count))
            return;
    }
    gb_hash *h = lookup_hash(c, argv[1], false, &o, &wrong);
    if (wrong)
        return;
    if (!h || count == 0) {
        gb_reply_array(c, 0);
        return;
    }
    uint64_t n = gb_types_random_n(count, gb_hash_len(h));
    gb_reply_array(c, (int64_t)(withvalues ? n * 2 : n));
    emit_ctx e = {c, withvalues ? WANT_FIELD | WANT_VALUE : WANT_FIELD};
    gb_hash_random(h, count, emit_pair, &e);
}

static void scan_add(void *ctx, gb_slice field, gb_slice value) { gb_scan_buf_add(ctx, field, value, 0); }
static uint64_t scan_batch(gb_tobj_hdr *o, uint64_t cursor, gb_scan_buf *b)
{
    return gb_hash_scan(&o->h, cursor, scan_add, b);
}

/* HSCAN key cursor [MATCH pattern] [COUNT count] */
static void cmd_hscan(gb_client *c, int argc, gb_slice *argv)
{
    gb_types_scan(c, argc, argv, GB_TYPE_HASH, scan_batch);
}

#define W (GB_CMD_WRITE | GB_CMD_DENYOOM | GB_CMD_FAST)
#define WF (GB_CMD_WRITE | GB_CMD_FAST)
#define R (GB_CMD_READONLY)
#define RF (GB_CMD_READONLY | GB_CMD_FAST)

GB_DEFINE_COMMANDS(hash,
    {"hset", -4, W, 1, 1, 1, cmd_hset, "hash", "Creates or modifies the value of a field in a hash.", "2.0.0"},
    {"hmset", -4, W, 1, 1, 1, cmd_hmset, "hash", "Sets the values of multiple fields.", "2.0.0"},
    {"hsetnx", 4, W, 1, 1, 1, cmd_hsetnx, "hash", "Sets the value of a field in a hash only when the field doesn't exist.", "2.0.0"},
    {"hget", 3, RF, 1, 1, 1, cmd_hget, "hash", "Returns the value of a field in a hash.", "2.0.0"},
    {"hmget", -3, RF, 1, 1, 1, cmd_hmget, "hash", "Returns the values of all fields in a hash.", "2.0.0"},
    {"hdel", -3, WF, 1, 1, 1, cmd_hdel, "hash", "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", "2.0.0"},
    {"hlen", 2, RF, 1, 1, 1, cmd_hlen, "hash", "Returns the number of fields in a hash.", "2.0.0"},
    {"hexists", 3, RF, 1, 1, 1, cmd_hexists, "hash", "Determines whether a field exists in a hash.", "2.0.0"},
    {"hstrlen", 3, RF, 1, 1, 1, cmd_hstrlen, "hash", "Returns the length of the value of a field.", "3.2.0"},
    {"hgetall", 2, R, 1, 1, 1, cmd_hgetall, "hash", "Returns all fields and values in a hash.", "2.0.0"},
    {"hkeys", 2, R, 1, 1, 1, cmd_hkeys, "hash", "Returns all fields in a hash.", "2.0.0"},
    {"hvals", 2, R, 1, 1, 1, cmd_hvals, "hash", "Returns all values in a hash.", "2.0.0"},
    {"hincrby", 4, W, 1, 1, 1, cmd_hincrby, "hash", "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.", "2.0.0"},
    {"hincrbyfloat", 4, W, 1, 1, 1, cmd_hincrbyfloat, "hash", "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.", "2.6.0"},
    {"hrandfield", -2, R, 1, 1, 1, cmd_hrandfield, "hash", "Returns one or more random fields from a hash.", "6.2.0"},
    {"hscan", -3, R, 1, 1, 1, cmd_hscan, "hash", "Iterates over fields and values of a hash.", "2.8.0"});
