/*
 * The sorted-set type's typed key operations, on top of engine/ds/zset.h.
 */
#include "engine/types/t_zset.h"

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/core/request/blocking.h"

static gb_result lookup_result(int found) { return found < 0 ? GB_R_WRONGTYPE : GB_R_NOTFOUND; }

/* Stores z (possibly empty or NULL, then freed) under dst; returns its
 * size. */
static int64_t store(gb_db *db, gb_slice dst, gb_zset *z)
{
    size_t n = z ? gb_zset_card(z) : 0;
    if (n == 0) {
        gb_zset_free(z);
        z = NULL;
    }
    gb_types_store(db, dst, GB_TYPE_ZSET, z);
    return (int64_t)n;
}

/* ---- ZADD / ZINCRBY ------------------------------------------------------------------------ */

gb_result gb_zset_zadd(gb_db *db, gb_slice key, int flags, size_t n, const double *scores, const gb_slice *members,
                       gb_zadd_result *res)
{
    memset(res, 0, sizeof *res);
    bool nx = flags & GB_ZADD_NX, xx = flags & GB_ZADD_XX, gt = flags & GB_ZADD_GT, lt = flags & GB_ZADD_LT;
    if ((nx && xx) || (nx && (gt || lt)) || (gt && lt) || ((flags & GB_ZADD_INCR) && n != 1))
        return GB_R_SYNTAX;
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_ZSET, true, &o);
    if (found < 0)
        return GB_R_WRONGTYPE;
    gb_types_config cfg = gb_types_cfg(db->eng);
    if (!found) {
        if (xx || n == 0)
            return GB_R_OK;
        /* redis-server 7.0 sizes a new set by its first member only. */
        gb_tobj_add(db, key, GB_TYPE_ZSET, gb_zset_new(&cfg, 1, members[0].len), &o);
    }
    int rc = gb_zset_add_many(&o.o.z, &cfg, flags & ~GB_ZADD_CH, n, scores, members, res);
    if (res->added || res->updated) {
        gb_engine_key_changed(db, key, (uint64_t)(res->added + res->updated));
        if (res->added)
            gb_blocking_signal_key(db, key);
    }
    gb_tobj_sync_or_delete(db, key, &o); /* deleted when created and then nothing was added */
    if (rc == 0)
        return GB_R_OK;
    return rc == GB_ERANGE ? GB_R_NAN : GB_R_SYNTAX;
}

/* ---- lookups --------------------------------------------------------------------------------- */

gb_result gb_zset_zscore(gb_db *db, gb_slice key, gb_slice member, double *out)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_ZSET, false, &o);
    if (found <= 0)
        return lookup_result(found);
    return gb_zset_score(&o.o.z, member, out) ? GB_R_OK : GB_R_NOTFOUND;
}

gb_result gb_zset_zmscore(gb_db *db, gb_slice key, size_t n, const gb_slice *members, const gb_sink *sink)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_ZSET, false, &o);
    if (found < 0)
        return GB_R_WRONGTYPE;
    gb_sink_len(sink, n);
    for (size_t i = 0; i < n; i++) {
        double s;
        if (found && gb_zset_score(&o.o.z, members[i], &s))
            sink->scored(sink->ctx, members[i], s);
        else
            sink->missing(sink->ctx);
    }
    return GB_R_OK;
}

/* The sorted set under key for reading, or NULL when it is missing or
 * holds another type (*r says which). */
static const gb_zset *zset_read(gb_db *db, gb_slice key, gb_tobj *o, gb_result *r)
{
    int found = gb_tobj_lookup(db, key, GB_TYPE_ZSET, false, o);
    *r = found < 0 ? GB_R_WRONGTYPE : GB_R_OK;
    return found > 0 ? &o->o.z : NULL;
}

gb_result gb_zset_zcard(gb_db *db, gb_slice key, int64_t *card)
{
    gb_tobj o;
    gb_result r;
    const gb_zset *z = zset_read(db, key, &o, &r);
    *card = z ? (int64_t)gb_zset_card(z) : 0;
    return r;
}

gb_result gb_zset_zcount(gb_db *db, gb_slice key, const gb_score_range *range, int64_t *n)
{
    gb_tobj o;
    gb_result r;
    const gb_zset *z = zset_read(db, key, &o, &r);
    *n = z ? (int64_t)gb_zset_count(z, range) : 0;
    return r;
}

gb_result gb_zset_zlexcount(gb_db *db, gb_slice key, const gb_lex_range *range, int64_t *n)
{
    gb_tobj o;
    gb_result r;
    const gb_zset *z = zset_read(db, key, &o, &r);
    *n = z ? (int64_t)gb_zset_lexcount(z, range) : 0;
    return r;
}

gb_result gb_zset_zrank(gb_db *db, gb_slice key, gb_slice member, bool reverse, int64_t *rank, double *score)
{
    gb_tobj o;
    gb_result r;
    const gb_zset *z = zset_read(db, key, &o, &r);
    size_t rk;
    if (r != GB_R_OK)
        return r;
    if (!z || !gb_zset_rank(z, member, reverse, &rk, score))
        return GB_R_NOTFOUND;
    *rank = (int64_t)rk;
    return GB_R_OK;
}

/* ---- ranges ---------------------------------------------------------------------------------- */

/* Streams range of z to emit; returns how many. */
static size_t range_emit(const gb_zset *z, const gb_zrange *range, gb_zset_emit_fn emit, void *ctx)
{
    if (range->by == GB_ZRANGE_RANK)
        return gb_zset_range_rank(z, range->start, range->stop, range->rev, emit, ctx);
    if (range->by == GB_ZRANGE_SCORE)
        return gb_zset_range_score(z, &range->score, range->rev, range->offset, range->limit, emit, ctx);
    return gb_zset_range_lex(z, &range->lex, range->rev, range->offset, range->limit, emit, ctx);
}

gb_result gb_zset_zrange(gb_db *db, gb_slice key, const gb_zrange *range, const gb_sink *sink, size_t *n)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_ZSET, false, &o);
    *n = 0;
    if (found <= 0)
        return lookup_result(found);
    const gb_zset *z = &o.o.z;
    if (range->by == GB_ZRANGE_RANK) {
        size_t first, last;
        *n = gb_index_range(range->start, range->stop, gb_zset_card(z), &first, &last) ? last - first + 1 : 0;
        gb_sink_len(sink, *n);
        if (*n)
            gb_zset_range_rank(z, range->start, range->stop, range->rev, sink->scored, sink->ctx);
        return GB_R_OK;
    }
    gb_sink_len(sink, GB_SINK_LEN_UNKNOWN);
    *n = range_emit(z, range, sink->scored, sink->ctx);
    return GB_R_OK;
}

/* ZRANGESTORE's sink: every member in range goes into a new set. */
typedef struct store_ctx {
    gb_zset *z;
    gb_types_config cfg;
} store_ctx;

static void emit_store(void *ctx, gb_slice m, double score)
{
    store_ctx *s = ctx;
    gb_zadd_result res;
    gb_zset_add_many(s->z, &s->cfg, 0, 1, &score, &m, &res);
}

gb_result gb_zset_zrangestore(gb_db *db, gb_slice dst, gb_slice src, const gb_zrange *range, int64_t *card)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, src, GB_TYPE_ZSET, false, &o);
    *card = 0;
    if (found < 0)
        return GB_R_WRONGTYPE;
    if (!found) {
        *card = store(db, dst, NULL);
        return GB_R_OK;
    }
    store_ctx sc;
    sc.cfg = gb_types_cfg(db->eng);
    sc.z = gb_zset_new(&sc.cfg, 0, 0);
    range_emit(&o.o.z, range, emit_store, &sc);
    *card = store(db, dst, sc.z);
    return GB_R_OK;
}

/* ---- removal --------------------------------------------------------------------------------- */

gb_result gb_zset_zrem(gb_db *db, gb_slice key, size_t n, const gb_slice *members, int64_t *removed)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_ZSET, true, &o);
    *removed = 0;
    if (found <= 0)
        return found < 0 ? GB_R_WRONGTYPE : GB_R_OK;
    *removed = (int64_t)gb_zset_remove(&o.o.z, n, members);
    if (*removed) {
        gb_tobj_sync_or_delete(db, key, &o);
        gb_engine_key_changed(db, key, (uint64_t)*removed);
    }
    return GB_R_OK;
}

gb_result gb_zset_zremrange(gb_db *db, gb_slice key, const gb_zrange *range, int64_t *removed)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_ZSET, true, &o);
    *removed = 0;
    if (found <= 0)
        return found < 0 ? GB_R_WRONGTYPE : GB_R_OK;
    gb_zset *z = &o.o.z;
    size_t n;
    if (range->by == GB_ZRANGE_RANK)
        n = gb_zset_remrange_rank(z, range->start, range->stop);
    else if (range->by == GB_ZRANGE_SCORE)
        n = gb_zset_remrange_score(z, &range->score);
    else
        n = gb_zset_remrange_lex(z, &range->lex);
    if (n) {
        gb_tobj_sync_or_delete(db, key, &o);
        gb_engine_key_changed(db, key, n);
    }
    *removed = (int64_t)n;
    return GB_R_OK;
}

static void pop_from(gb_db *db, gb_slice key, gb_tobj *o, bool max, size_t count, const gb_sink *sink)
{
    size_t n = GB_MIN(count, gb_zset_card(&o->o.z));
    gb_sink_len(sink, n);
    if (n == 0)
        return;
    gb_zset_pop(&o->o.z, max, n, sink->scored, sink->ctx);
    gb_tobj_sync_or_delete(db, key, o);
    gb_engine_key_changed(db, key, n);
}

gb_result gb_zset_zpopmin(gb_db *db, gb_slice key, bool max, size_t count, const gb_sink *sink)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_ZSET, true, &o);
    if (found <= 0)
        return lookup_result(found);
    pop_from(db, key, &o, max, count, sink);
    return GB_R_OK;
}

gb_result gb_zset_zmpop(gb_db *db, size_t nkeys, const gb_slice *keys, bool max, size_t count, const gb_sink *sink,
                        size_t *which)
{
    for (size_t i = 0; i < nkeys; i++) {
        gb_tobj o;
        int found = gb_tobj_lookup(db, keys[i], GB_TYPE_ZSET, true, &o);
        if (found < 0)
            return GB_R_WRONGTYPE;
        if (!found || gb_zset_card(&o.o.z) == 0)
            continue;
        *which = i;
        pop_from(db, keys[i], &o, max, count, sink);
        return GB_R_OK;
    }
    return GB_R_NOTFOUND;
}

gb_result gb_zset_zrandmember(gb_db *db, gb_slice key, int64_t count, const gb_sink *sink)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_ZSET, false, &o);
    if (found <= 0)
        return lookup_result(found);
    uint64_t n = gb_types_random_n(count, gb_zset_card(&o.o.z));
    if (!gb_sink_fits(sink, n, gb_zset_payload_mem(&o.o.z) / GB_MAX(gb_zset_card(&o.o.z), 1)))
        return GB_R_OK;
    gb_sink_len(sink, (size_t)n);
    if (n)
        gb_zset_random(&o.o.z, count, sink->scored, sink->ctx);
    return GB_R_OK;
}

/* ---- algebra --------------------------------------------------------------------------------- */

/* The inputs of an algebra command, looked up in order; the same key named
 * twice gives the same object, as the algebra compares pointers. */
typedef struct zinputs {
    gb_zsrc *src;
    gb_tobj *objs;
    gb_zsrc stacksrc[8];
    gb_tobj stackobj[8];
} zinputs;

static gb_result zinputs_open(gb_db *db, size_t n, const gb_slice *keys, const double *weights, zinputs *in)
{
    in->src = n <= 8 ? in->stacksrc : gb_malloc(n * sizeof *in->src);
    in->objs = n <= 8 ? in->stackobj : gb_malloc(n * sizeof *in->objs);
    for (size_t i = 0; i < n; i++) {
        gb_zsrc *s = &in->src[i];
        s->zset = NULL;
        s->set = NULL;
        s->weight = weights ? weights[i] : 1.0;
        gb_tobj *o = &in->objs[i];
        o->kv = gb_db_lookup_read(db, keys[i]);
        if (!o->kv)
            continue;
        size_t first = i;
        for (size_t k = 0; k < i; k++)
            if (in->objs[k].kv == o->kv) {
                first = k;
                break;
            }
        o->o = gb_tobj_unpack(gb_kv_ptr(o->kv));
        if (o->kv->type == GB_TYPE_ZSET)
            s->zset = &in->objs[first].o.z;
        else if (o->kv->type == GB_TYPE_SET)
            s->set = &in->objs[first].o.s;
        else
            return GB_R_WRONGTYPE;
    }
    return GB_R_OK;
}

static void zinputs_close(zinputs *in)
{
    if (in->src != in->stacksrc) {
        gb_free(in->src);
        gb_free(in->objs);
    }
}

/* The result of op on the inputs (never NULL). */
static gb_zset *compute(gb_db *db, gb_zsetop op, const zinputs *in, size_t n, gb_zagg agg)
{
    gb_types_config cfg = gb_types_cfg(db->eng);
    if (op == GB_ZSETOP_UNION)
        return gb_zset_union(in->src, n, agg, &cfg);
    if (op == GB_ZSETOP_INTER)
        return gb_zset_inter(in->src, n, agg, &cfg);
    return gb_zset_diff(in->src, n, &cfg);
}

gb_result gb_zset_zunion(gb_db *db, gb_zsetop op, size_t nkeys, const gb_slice *keys, const gb_zsetop_opts *opts,
                         const gb_sink *sink)
{
    zinputs in;
    gb_result r = zinputs_open(db, nkeys, keys, opts ? opts->weights : NULL, &in);
    if (r == GB_R_OK && !opts)
        r = GB_R_BADARG;
    if (r == GB_R_OK) {
        gb_zset *z = compute(db, op, &in, nkeys, opts->agg);
        gb_sink_len(sink, gb_zset_card(z));
        gb_zset_range_rank(z, 0, -1, false, sink->scored, sink->ctx);
        gb_zset_free(z);
    }
    zinputs_close(&in);
    return r;
}

gb_result gb_zset_zunionstore(gb_db *db, gb_zsetop op, gb_slice dst, size_t nkeys, const gb_slice *keys,
                              const gb_zsetop_opts *opts, int64_t *card)
{
    zinputs in;
    gb_result r = zinputs_open(db, nkeys, keys, opts ? opts->weights : NULL, &in);
    *card = 0;
    if (r == GB_R_OK && !opts)
        r = GB_R_BADARG;
    if (r == GB_R_OK)
        *card = store(db, dst, compute(db, op, &in, nkeys, opts->agg));
    zinputs_close(&in);
    return r;
}

gb_result gb_zset_zintercard(gb_db *db, size_t nkeys, const gb_slice *keys, const size_t *limit, int64_t *card)
{
    zinputs in;
    gb_result r = zinputs_open(db, nkeys, keys, NULL, &in);
    *card = 0;
    if (r == GB_R_OK && !limit)
        r = GB_R_BADARG;
    if (r == GB_R_OK)
        *card = (int64_t)gb_zset_intercard(in.src, nkeys, *limit);
    zinputs_close(&in);
    return r;
}
