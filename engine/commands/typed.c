/*
 * The typed operations (engine/commands/typed.h): each command's rules,
 * replies and effect on native arguments, which the RESP handlers in
 * cmd_*.c call once they have parsed their text and the SBE transport calls
 * with the values it decoded (through the gate).
 */
#include "engine/cluster/cluster.h"
#include "engine/commands/typed.h"

#include <math.h>

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/commands/cmd_stream.h"
#include "engine/commands/cmd_util.h"
#include "engine/core/engine.h"
#include "engine/core/request/propagate.h"
#include "engine/core/pubsub/pubsub.h"
#include "engine/types/t_hash.h"
#include "engine/types/t_keys.h"
#include "engine/types/t_list.h"
#include "engine/types/t_string.h"
#include "engine/types/t_zset.h"

/* ---- PING ----------------------------------------------------------------------------------- */

void gb_cmd_ping(gb_client *c)
{
    if (GB_UNLIKELY(c->pubsub && c->resp == 2)) {
        /* A subscribed RESP2 client reads pushes: the answer looks like one. */
        gb_reply_array(c, 2);
        gb_reply_cstr(c, "pong");
        gb_reply_slice(c, gb_slice_make("", 0));
        return;
    }
    gb_reply_status(c, "PONG");
}

/* ---- strings -------------------------------------------------------------------------------- */

void gb_cmd_get(gb_client *c, gb_slice key)
{
    gb_slice v;
    char buf[GB_INT_BUF];
    gb_result r = gb_string_get(c->db, key, &v, buf);
    gb_reply_read_result(c, r, &v);
}

/* Turns an EX/PX/EXAT/PXAT value into absolute Unix ms (Redis's
 * getExpireMillisecondsOrReply, after the integer parse). */
static bool expire_to_ms(gb_client *c, int64_t v, unsigned flags, const char *cmdname, int64_t *out)
{
    if (!gb_string_expire_at(v, flags & (GB_SETOPT_EX | GB_SETOPT_EXAT), flags & (GB_SETOPT_EX | GB_SETOPT_PX), c->eng->now_ms, out)) {
        gb_reply_errorf(c, "ERR invalid expire time in '%s' command", cmdname);
        return false;
    }
    return true;
}

/* Options that cannot go together (the text parser never produces them;
 * a typed call may). */
static bool set_options_conflict(unsigned f)
{
    unsigned exp = f & GB_SETOPT_ANY_EXPIRE;
    return ((f & GB_SETOPT_NX) && (f & GB_SETOPT_XX)) || (exp & (exp - 1)) || ((f & GB_SETOPT_KEEPTTL) && exp) || (f & GB_SETOPT_PERSIST);
}

/* A SET that happened propagates as SET key value, with the absolute
 * expiry it got (PXAT) or KEEPTTL: relative times and the conditions that
 * held need not be replayed. */
static void propagate_set(gb_client *c, gb_slice key, gb_slice val, unsigned oflags, int64_t when)
{
    if (!gb_propagating(&c->eng->prop))
        return;
    char num[GB_INT_BUF];
    gb_slice v[5] = {gb_slice_cstr("SET"), key, val};
    int n = 3;
    if (when >= 0) {
        v[n++] = gb_slice_cstr("PXAT");
        v[n++] = gb_slice_make(num, gb_ll2str(num, when));
    } else if (oflags & GB_SETOPT_KEEPTTL) {
        v[n++] = gb_slice_cstr("KEEPTTL");
    }
    gb_propagate_command(c, n, v);
}

void gb_cmd_set(gb_client *c, gb_slice key, gb_slice val, unsigned oflags, int64_t expire, const char *cmdname,
                bool reply_int)
{
    if (set_options_conflict(oflags)) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    int64_t when = -1;
    if ((oflags & GB_SETOPT_ANY_EXPIRE) && !expire_to_ms(c, expire, oflags, cmdname, &when))
        return;
    unsigned f = 0;
    if (oflags & GB_SETOPT_NX)
        f |= GB_SET_NX;
    if (oflags & GB_SETOPT_XX)
        f |= GB_SET_XX;
    if (oflags & GB_SETOPT_KEEPTTL)
        f |= GB_SET_KEEPTTL;
    if (oflags & GB_SETOPT_GET)
        f |= GB_SET_GET;
    bool found = false;
    char *old = NULL;
    size_t oldlen = 0;
    gb_result r = gb_string_set(c->db, key, val, f, when, &found, &old, &oldlen);
    if (r == GB_R_WRONGTYPE) {
        gb_reply_result(c, r);
        return;
    }
    if (r == GB_R_OK) {
        propagate_set(c, key, val, oflags, when);
        gb_notify_key(c, GB_NOTIFY_STRING, "set", key);
        if (when >= 0)
            gb_notify_key(c, GB_NOTIFY_GENERIC, "expire", key);
    }
    if (oflags & GB_SETOPT_GET) {
        if (found)
            gb_reply_bulk(c, old, oldlen);
        else
            gb_reply_nil(c);
        gb_free(old);
        return;
    }
    if (reply_int)
        gb_reply_int(c, r == GB_R_OK ? 1 : 0);
    else if (r == GB_R_OK)
        gb_reply_ok(c);
    else
        gb_reply_nil(c);
}

void gb_cmd_incrby(gb_client *c, gb_slice key, int64_t by)
{
    int64_t out;
    gb_result r = gb_string_incrby(c->db, key, by, &out);
    gb_reply_int_result(c, r, out);
    if (r == GB_R_OK)
        gb_notify_key(c, GB_NOTIFY_STRING, "incrby", key);
}

/* ---- keys ----------------------------------------------------------------------------------- */

/* DEL (lazy as lazyfree-lazy-user-del says) and UNLINK (always lazy). */
static void del_generic(gb_client *c, size_t nkeys, const gb_slice *keys, bool lazy)
{
    int64_t n;
    gb_result r = gb_keys_del(c->db, nkeys, keys, lazy, &n);
    gb_reply_int_result(c, r, n);
}

void gb_cmd_del(gb_client *c, size_t nkeys, const gb_slice *keys)
{
    del_generic(c, nkeys, keys, c->eng->cfg.lazyfree_lazy_user_del);
}

void gb_cmd_unlink(gb_client *c, size_t nkeys, const gb_slice *keys) { del_generic(c, nkeys, keys, true); }

/* ---- hashes --------------------------------------------------------------------------------- */

void gb_cmd_hset(gb_client *c, gb_slice key, size_t n, const gb_slice *fields, const gb_slice *values)
{
    int64_t added;
    gb_result r = gb_hash_hset(c->db, key, n, fields, values, &added);
    gb_reply_int_result(c, r, added);
    if (r == GB_R_OK)
        gb_notify_key(c, GB_NOTIFY_HASH, "hset", key);
}

void gb_cmd_hget(gb_client *c, gb_slice key, gb_slice field)
{
    char buf[GB_HASH_VALUE_BUF];
    gb_slice v;
    gb_result r = gb_hash_hget(c->db, key, field, &v, buf);
    gb_reply_read_result(c, r, &v);
}

/* ---- sorted sets ---------------------------------------------------------------------------- */

#define ERR_NAN "ERR resulting score is not a number (NaN)"

bool gb_cmd_zadd_flags_ok(gb_client *c, int flags, size_t n)
{
    bool incr = flags & GB_ZADD_INCR, nx = flags & GB_ZADD_NX, xx = flags & GB_ZADD_XX;
    bool gt = flags & GB_ZADD_GT, lt = flags & GB_ZADD_LT;
    if (nx && xx) {
        gb_reply_error(c, "ERR XX and NX options at the same time are not compatible");
        return false;
    }
    if ((gt && nx) || (lt && nx) || (gt && lt)) {
        gb_reply_error(c, "ERR GT, LT, and/or NX options at the same time are not compatible");
        return false;
    }
    if (incr && n > 1) {
        gb_reply_error(c, "ERR INCR option supports a single increment-element pair");
        return false;
    }
    return true;
}

void gb_cmd_zadd(gb_client *c, gb_slice key, int flags, size_t n, const double *scores, const gb_slice *members)
{
    if (!gb_cmd_zadd_flags_ok(c, flags, n))
        return;
    for (size_t i = 0; i < n; i++) {
        if (isnan(scores[i])) { /* what the text parser says of "nan" */
            gb_reply_error(c, GB_ERR_NOT_FLOAT);
            return;
        }
    }
    gb_zadd_result res;
    gb_result r = gb_zset_zadd(c->db, key, flags, n, scores, members, &res);
    if (r == GB_R_WRONGTYPE)
        gb_reply_error(c, GB_ERR_WRONGTYPE);
    else if (r == GB_R_NAN)
        gb_reply_error(c, ERR_NAN);
    else if (r != GB_R_OK)
        gb_reply_result(c, r);
    else if (flags & GB_ZADD_INCR) {
        if (res.processed)
            gb_reply_double(c, res.score);
        else
            gb_reply_nil(c);
    } else {
        gb_reply_int(c, (int64_t)((flags & GB_ZADD_CH) ? res.added + res.updated : res.added));
    }
    if (r == GB_R_OK && res.added + res.updated > 0)
        gb_notify_key(c, GB_NOTIFY_ZSET, (flags & GB_ZADD_INCR) ? "zincr" : "zadd", key);
}

void gb_cmd_zscore(gb_client *c, gb_slice key, gb_slice member)
{
    double s;
    gb_result r = gb_zset_zscore(c->db, key, member, &s);
    if (r == GB_R_OK)
        gb_reply_double(c, s);
    else if (r == GB_R_NOTFOUND)
        gb_reply_nil(c);
    else
        gb_reply_result(c, r);
}

/* ---- lists ---------------------------------------------------------------------------------- */

void gb_cmd_push(gb_client *c, gb_slice key, bool tail, size_t n, const gb_slice *vals)
{
    int64_t len;
    gb_result r = gb_list_lpush(c->db, key, tail ? GB_LIST_TAIL : GB_LIST_HEAD, n, vals, &len);
    gb_reply_int_result(c, r, len);
    if (r == GB_R_OK)
        gb_notify_key(c, GB_NOTIFY_LIST, tail ? "rpush" : "lpush", key);
}

static void emit_bulk(void *ctx, gb_slice v) { gb_reply_slice(ctx, v); }

/* LPOP/RPOP key: one value, not in an array. */
static inline void pop_one(gb_client *c, gb_slice key, gb_list_end end)
{
    gb_sink s = {.value = emit_bulk, .ctx = c};
    gb_result r = gb_list_lpop(c->db, key, end, 1, &s);
    if (r == GB_R_NOTFOUND)
        gb_reply_nil(c);
    else if (r != GB_R_OK)
        gb_reply_result(c, r);
    else
        gb_cmd_list_notify_pop(c, key, end);
}

void gb_cmd_pop(gb_client *c, gb_slice key, bool tail) { pop_one(c, key, tail ? GB_LIST_TAIL : GB_LIST_HEAD); }

/* ---- pub/sub -------------------------------------------------------------------------------- */

static void publish_to_cluster(gb_client *c, bool shard, gb_slice channel, gb_slice message)
{
    gb_cluster *cl = c->eng->cluster;
    if (cl && cl->publish)
        cl->publish(cl->hook_ctx, shard, channel.ptr, channel.len, message.ptr, message.len);
}

void gb_cmd_publish_delivered(gb_client *c, bool shard, gb_slice channel, gb_slice message)
{
    gb_engine *eng = c->eng;
    if (GB_UNLIKELY(eng->cluster != NULL)) {
        publish_to_cluster(c, shard, channel, message);
        return;
    }
    /* Redis's forceCommandPropagation(c, PROPAGATE_REPL): the replicas'
     * subscribers get the message too; the log does not keep it. */
    if (!gb_propagating(&eng->prop))
        return;
    size_t mark = eng->prop.npending;
    gb_slice argv[3] = {gb_slice_cstr(shard ? "SPUBLISH" : "PUBLISH"), channel, message};
    gb_propagate_command(c, 3, argv);
    gb_propagate_target_since(eng, mark, GB_PROP_REPL);
}

void gb_cmd_publish(gb_client *c, gb_slice channel, gb_slice message)
{
    gb_reply_int(c, (int64_t)gb_pubsub_publish(c->eng, GB_PUBSUB_CHANNEL, channel, message));
    gb_cmd_publish_delivered(c, false, channel, message);
}

/* ---- streams -------------------------------------------------------------------------------- */

bool gb_cmd_xadd(gb_client *c, gb_slice key, const gb_xadd_args *a, size_t npairs, const gb_slice *fv,
                 gb_stream_id *id, gb_xadd_rewrite *rw)
{
    if (a->id_given && a->seq_given && gb_stream_id_is_zero(a->id)) {
        gb_reply_error(c, "ERR The ID specified in XADD must be greater than 0-0");
        return false;
    }
    switch (gb_stream_op_add(c->db, key, a, fv, npairs, id, rw)) {
    case GB_XADD_WRONGTYPE:
        gb_reply_error(c, GB_ERR_WRONGTYPE);
        return false;
    case GB_XADD_NOKEY:
        gb_reply_nil(c);
        return false;
    case GB_XADD_EXHAUSTED:
        gb_reply_error(c, "ERR The stream has exhausted the last possible ID, unable to add more items");
        return false;
    case GB_XADD_ID_TOO_SMALL:
        gb_reply_error(c, "ERR The ID specified in XADD is equal or smaller than the target stream top item");
        return false;
    case GB_XADD_TOO_LARGE:
        gb_reply_error(c, "ERR Elements are too large to be stored");
        return false;
    case GB_XADD_OK:
        break;
    }
    gb_xreply_id(c, *id);
    return (rw->id || rw->trim) && gb_propagating(&c->eng->prop);
}
