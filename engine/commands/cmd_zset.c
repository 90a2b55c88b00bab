/*
 * Sorted-set commands, the blocking ones included, on top of
 * engine/ds/zset.h (representations, ranges, algebra) and engine/core/blocking.h.
 * Argument order, error texts and reply shapes (RESP2) follow Redis 7.0's
 * t_zset.c; ZRANK/ZREVRANK also take 7.2's WITHSCORE.
 */
#include <math.h>

#include "engine/core/blocking.h"
#include "engine/commands/cmd_collection.h"
#include "engine/commands/cmd_util.h"
#include "engine/commands/typed.h"
#include "engine/core/propagate.h"
#include "engine/core/engine.h"
#include "engine/base/mem.h"
#include "engine/types/t_zset.h"
#include "engine/base/score.h"
#include "engine/ds/set.h"
#include "engine/ds/zset.h"
#include "engine/base/util.h"

#define ERR_NAN "ERR resulting score is not a number (NaN)"
#define ERR_MINMAX "ERR min or max is not a float"
#define ERR_LEX "ERR min or max not valid string range item"

/* ---- helpers --------------------------------------------------------------------- */

/* The sorted set under key in o (NULL when missing); NULL after replying
 * WRONGTYPE, with *wrong set. */
static gb_zset *lookup_zset(gb_client *c, gb_slice key, bool write, gb_tobj *o, bool *wrong)
{
    return gb_tobj_lookup_or_reply(c, key, GB_TYPE_ZSET, write, o, wrong) ? &o->o.z : NULL;
}

/* Replies member (and score) for each emitted pair. */
typedef struct emit_ctx {
    gb_client *c;
    bool withscores;
    bool pairs; /* each pair as its own 2-array (ZMPOP/BZMPOP) */
} emit_ctx;

static void emit_reply(void *ctx, gb_slice m, double score)
{
    emit_ctx *e = ctx;
    if (e->pairs)
        gb_reply_array(e->c, 2);
    gb_reply_slice(e->c, m);
    if (e->withscores)
        gb_reply_double(e->c, score);
}

enum rtype { RT_AUTO = 0, RT_RANK, RT_SCORE, RT_LEX };

/* The bounds of a rank, score or lex range. */
typedef struct range_args {
    int64_t start, end; /* RT_RANK */
    gb_score_range score;
    gb_lex_range lex;
} range_args;

/* Parses min and max as a range of type rt (not RT_AUTO); replies Redis's
 * error and returns false on bad input. */
static bool parse_range(gb_client *c, enum rtype rt, gb_slice min, gb_slice max, range_args *r)
{
    if (rt == RT_RANK)
        return gb_arg_ll(c, min, &r->start) && gb_arg_ll(c, max, &r->end);
    if (rt == RT_SCORE && gb_score_parse_range(min, max, &r->score) != 0) {
        gb_reply_error(c, ERR_MINMAX);
        return false;
    }
    if (rt == RT_LEX && gb_lex_parse_range(min, max, &r->lex) != 0) {
        gb_reply_error(c, ERR_LEX);
        return false;
    }
    return true;
}

/* ---- ZADD / ZINCRBY ---------------------------------------------------------------------- */

/* Redis's zaddGenericCommand: options from argv[2] on (ZINCRBY too, which is
 * why "ZINCRBY k nx m" is a syntax error), then score-member pairs. */
/* Redis's option rules for ZADD, each with its own text; replies and
 * returns false when broken. */
static bool zadd_flags_ok(gb_client *c, int flags, size_t n)
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
    if (!zadd_flags_ok(c, flags, n))
        return;
    for (size_t i = 0; i < n; i++) {
        if (isnan(scores[i])) { /* what the text parser says of "nan" */
            gb_reply_error(c, GB_ERR_NOT_FLOAT);
            return;
        }
    }
    gb_zadd_result res;
    gb_result r = gb_op_zadd(c->db, key, flags, n, scores, members, &res);
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
}

static void zadd_generic(gb_client *c, int argc, gb_slice *argv, int flags)
{
    int idx = 2;
    for (; idx < argc; idx++) {
        gb_slice o = argv[idx];
        if (gb_slice_ieq(o, "nx"))
            flags |= GB_ZADD_NX;
        else if (gb_slice_ieq(o, "xx"))
            flags |= GB_ZADD_XX;
        else if (gb_slice_ieq(o, "ch"))
            flags |= GB_ZADD_CH;
        else if (gb_slice_ieq(o, "incr"))
            flags |= GB_ZADD_INCR;
        else if (gb_slice_ieq(o, "gt"))
            flags |= GB_ZADD_GT;
        else if (gb_slice_ieq(o, "lt"))
            flags |= GB_ZADD_LT;
        else
            break;
    }
    int elements = argc - idx;
    if (elements % 2 || !elements) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    size_t n = (size_t)elements / 2;
    if (!zadd_flags_ok(c, flags, n))
        return;
    double stacks[16];
    gb_slice stackm[16];
    double *scores = n <= 16 ? stacks : gb_malloc(n * sizeof *scores);
    gb_slice *members = n <= 16 ? stackm : gb_malloc(n * sizeof *members);
    for (size_t j = 0; j < n; j++) {
        if (gb_score_parse(argv[idx + 2 * j], &scores[j]) != 0) {
            gb_reply_error(c, GB_ERR_NOT_FLOAT);
            goto done;
        }
        members[j] = argv[idx + 2 * j + 1];
    }
    gb_cmd_zadd(c, argv[1], flags, n, scores, members);
done:
    if (scores != stacks) {
        gb_free(scores);
        gb_free(members);
    }
}

static void cmd_zadd(gb_client *c, int argc, gb_slice *argv) { zadd_generic(c, argc, argv, 0); }
static void cmd_zincrby(gb_client *c, int argc, gb_slice *argv) { zadd_generic(c, argc, argv, GB_ZADD_INCR); }

/* ---- lookups ----------------------------------------------------------------------------- */

void gb_cmd_zscore(gb_client *c, gb_slice key, gb_slice member)
{
    double s;
    gb_result r = gb_op_zscore(c->db, key, member, &s);
    if (r == GB_R_OK)
        gb_reply_double(c, s);
    else if (r == GB_R_NOTFOUND)
        gb_reply_nil(c);
    else
        gb_reply_result(c, r);
}

static void cmd_zscore(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_cmd_zscore(c, argv[1], argv[2]);
}

static void cmd_zmscore(gb_client *c, int argc, gb_slice *argv)
{
    bool wrong;
    gb_tobj o;
    gb_zset *z = lookup_zset(c, argv[1], false, &o, &wrong);
    if (wrong)
        return;
    gb_reply_array(c, argc - 2);
    for (int j = 2; j < argc; j++) {
        double s;
        if (z && gb_zset_score(z, argv[j], &s))
            gb_reply_double(c, s);
        else
            gb_reply_nil(c);
    }
}

static void cmd_zcard(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    bool wrong;
    gb_tobj o;
    gb_zset *z = lookup_zset(c, argv[1], false, &o, &wrong);
    if (!wrong)
        gb_reply_int(c, z ? (int64_t)gb_zset_card(z) : 0);
}

/* ZCOUNT / ZLEXCOUNT key min max */
static void count_generic(gb_client *c, gb_slice *argv, enum rtype rt)
{
    range_args r;
    if (!parse_range(c, rt, argv[2], argv[3], &r))
        return;
    bool wrong;
    gb_tobj o;
    gb_zset *z = lookup_zset(c, argv[1], false, &o, &wrong);
    if (!wrong)
        gb_reply_int(c, !z ? 0 : (int64_t)(rt == RT_SCORE ? gb_zset_count(z, &r.score) : gb_zset_lexcount(z, &r.lex)));
}

static void cmd_zcount(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    count_generic(c, argv, RT_SCORE);
}
static void cmd_zlexcount(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    count_generic(c, argv, RT_LEX);
}

/* ZRANK/ZREVRANK key member [WITHSCORE] (WITHSCORE: Redis 7.2). */
static void rank_generic(gb_client *c, int argc, gb_slice *argv, bool reverse)
{
    bool withscore = false;
    if (argc > 4) {
        gb_reply_wrong_arity(c, reverse ? "zrevrank" : "zrank");
        return;
    }
    if (argc == 4) {
        if (!gb_slice_ieq(argv[3], "withscore")) {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
        withscore = true;
    }
    bool wrong;
    gb_tobj o;
    gb_zset *z = lookup_zset(c, argv[1], false, &o, &wrong);
    if (wrong)
        return;
    size_t rank;
    double score;
    if (z && gb_zset_rank(z, argv[2], reverse, &rank, &score)) {
        if (withscore)
            gb_reply_array(c, 2);
        gb_reply_int(c, (int64_t)rank);
        if (withscore)
            gb_reply_double(c, score);
    } else if (withscore) {
        gb_reply_nil_array(c);
    } else {
        gb_reply_nil(c);
    }
}

static void cmd_zrank(gb_client *c, int argc, gb_slice *argv) { rank_generic(c, argc, argv, false); }
static void cmd_zrevrank(gb_client *c, int argc, gb_slice *argv) { rank_generic(c, argc, argv, true); }

/* ---- ranges ------------------------------------------------------------------------------ */

enum rdir { DIR_AUTO = 0, DIR_FWD, DIR_REV };

/* ZRANGESTORE's sink: every emitted pair goes into a new set. */
typedef struct store_ctx {
    gb_zset *z;
    gb_types_config cfg;
} store_ctx;

static void emit_store(void *ctx, gb_slice m, double score)
{
    store_ctx *s = ctx;
    gb_zadd_result res;
    gb_zset_add(s->z, &s->cfg, 0, 1, &score, &m, &res);
}

/* Stores z (possibly empty) under dst and replies its size. */
static void store_result(gb_client *c, gb_slice dst, gb_zset *z)
{
    size_t n = z ? gb_zset_card(z) : 0;
    if (n == 0) {
        gb_zset_free(z);
        gb_types_store(c->db, dst, GB_TYPE_ZSET, NULL);
    } else {
        gb_types_store(c->db, dst, GB_TYPE_ZSET, z);
    }
    gb_reply_int(c, (int64_t)n);
}

/* Redis's zrangeGenericCommand: ZRANGE, ZRANGESTORE and the older
 * Z[REV]RANGE[BYSCORE|BYLEX]. argv[start] is the source key; dst is
 * non-NULL for ZRANGESTORE. */
static void zrange_generic(gb_client *c, int argc, gb_slice *argv, int start, const gb_slice *dst, enum rtype rt,
                           enum rdir dir)
{
    bool store = dst != NULL;
    int minidx = start + 1, maxidx = start + 2;
    bool withscores = false;
    int64_t offset = 0, limit = -1;
    for (int j = start + 3; j < argc; j++) {
        int left = argc - j - 1;
        if (!store && gb_slice_ieq(argv[j], "withscores")) {
            withscores = true;
        } else if (gb_slice_ieq(argv[j], "limit") && left >= 2) {
            if (!gb_arg_ll(c, argv[j + 1], &offset) || !gb_arg_ll(c, argv[j + 2], &limit))
                return;
            j += 2;
        } else if (dir == DIR_AUTO && gb_slice_ieq(argv[j], "rev")) {
            dir = DIR_REV;
        } else if (rt == RT_AUTO && gb_slice_ieq(argv[j], "bylex")) {
            rt = RT_LEX;
        } else if (rt == RT_AUTO && gb_slice_ieq(argv[j], "byscore")) {
            rt = RT_SCORE;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    if (dir == DIR_AUTO)
        dir = DIR_FWD;
    if (rt == RT_AUTO)
        rt = RT_RANK;
    if (limit != -1 && rt == RT_RANK) {
        gb_reply_error(c, "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
        return;
    }
    if (withscores && rt == RT_LEX) {
        gb_reply_error(c, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return;
    }
    bool rev = dir == DIR_REV;
    if (rev && (rt == RT_SCORE || rt == RT_LEX)) {
        int t = minidx;
        minidx = maxidx;
        maxidx = t;
    }
    range_args r;
    if (!parse_range(c, rt, argv[minidx], argv[maxidx], &r))
        return;

    bool wrong;
    gb_tobj o;
    gb_zset *z = lookup_zset(c, argv[start], false, &o, &wrong);
    if (wrong)
        return;
    if (!z) {
        if (store)
            store_result(c, *dst, NULL);
        else
            gb_reply_array(c, 0);
        return;
    }

    store_ctx sc;
    emit_ctx ec = {c, withscores, false};
    gb_zset_emit_fn emit = emit_reply;
    void *ctx = &ec;
    if (store) {
        sc.cfg = gb_types_cfg(c->eng);
        sc.z = gb_zset_new(&sc.cfg, 0, 0);
        emit = emit_store;
        ctx = &sc;
    }
    if (rt == RT_RANK) {
        if (!store) {
            size_t first, last;
            size_t n = gb_index_range(r.start, r.end, gb_zset_card(z), &first, &last) ? last - first + 1 : 0;
            gb_reply_array(c, (int64_t)(withscores ? n * 2 : n));
            if (n == 0)
                return;
        }
        gb_zset_range_rank(z, r.start, r.end, rev, emit, ctx);
    } else {
        size_t h = store ? 0 : gb_reply_array_deferred(c);
        size_t n;
        if (rt == RT_SCORE)
            n = gb_zset_range_score(z, &r.score, rev, offset, limit, emit, ctx);
        else
            n = gb_zset_range_lex(z, &r.lex, rev, offset, limit, emit, ctx);
        if (!store)
            gb_reply_set_deferred(c, h, (int64_t)(withscores ? n * 2 : n));
    }
    if (store)
        store_result(c, *dst, sc.z);
}

static void cmd_zrange(gb_client *c, int argc, gb_slice *argv) { zrange_generic(c, argc, argv, 1, NULL, RT_AUTO, DIR_AUTO); }
static void cmd_zrangestore(gb_client *c, int argc, gb_slice *argv)
{
    zrange_generic(c, argc, argv, 2, &argv[1], RT_AUTO, DIR_AUTO);
}
static void cmd_zrevrange(gb_client *c, int argc, gb_slice *argv) { zrange_generic(c, argc, argv, 1, NULL, RT_RANK, DIR_REV); }
static void cmd_zrangebyscore(gb_client *c, int argc, gb_slice *argv)
{
    zrange_generic(c, argc, argv, 1, NULL, RT_SCORE, DIR_FWD);
}
static void cmd_zrevrangebyscore(gb_client *c, int argc, gb_slice *argv)
{
    zrange_generic(c, argc, argv, 1, NULL, RT_SCORE, DIR_REV);
}
static void cmd_zrangebylex(gb_client *c, int argc, gb_slice *argv)
{
    zrange_generic(c, argc, argv, 1, NULL, RT_LEX, DIR_FWD);
}
static void cmd_zrevrangebylex(gb_client *c, int argc, gb_slice *argv)
{
    zrange_generic(c, argc, argv, 1, NULL, RT_LEX, DIR_REV);
}

/* ---- removal ----------------------------------------------------------------------------- */

static void cmd_zrem(gb_client *c, int argc, gb_slice *argv)
{
    bool wrong;
    gb_tobj o;
    gb_zset *z = lookup_zset(c, argv[1], true, &o, &wrong);
    if (wrong)
        return;
    if (!z) {
        gb_reply_int(c, 0);
        return;
    }
    size_t n = gb_zset_remove(z, (size_t)(argc - 2), argv + 2);
    if (n) {
        gb_tobj_sync_or_delete(c->db, argv[1], &o);
        gb_engine_key_modified(c->db, argv[1]);
    }
    gb_reply_int(c, (int64_t)n);
}

static void remrange_generic(gb_client *c, gb_slice *argv, enum rtype rt)
{
    range_args r;
    if (!parse_range(c, rt, argv[2], argv[3], &r))
        return;
    bool wrong;
    gb_tobj o;
    gb_zset *z = lookup_zset(c, argv[1], true, &o, &wrong);
    if (wrong)
        return;
    if (!z) {
        gb_reply_int(c, 0);
        return;
    }
    size_t n;
    if (rt == RT_RANK)
        n = gb_zset_remrange_rank(z, r.start, r.end);
    else if (rt == RT_SCORE)
        n = gb_zset_remrange_score(z, &r.score);
    else
        n = gb_zset_remrange_lex(z, &r.lex);
    if (n) {
        gb_tobj_sync_or_delete(c->db, argv[1], &o);
        gb_engine_key_modified(c->db, argv[1]);
    }
    gb_reply_int(c, (int64_t)n);
}

static void cmd_zremrangebyrank(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    remrange_generic(c, argv, RT_RANK);
}
static void cmd_zremrangebyscore(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    remrange_generic(c, argv, RT_SCORE);
}
static void cmd_zremrangebylex(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    remrange_generic(c, argv, RT_LEX);
}

/* ---- pops -------------------------------------------------------------------------------- */

/* Pops up to count from z (the set under key) and replies: flat
 * [member, score, ...] (ZPOPMIN/ZPOPMAX), [key, member, score] (BZPOP*) or
 * [key, [[member, score], ...]] (ZMPOP, BZMPOP). */
enum pop_shape { POP_FLAT, POP_BZPOP, POP_MPOP };

static void pop_reply(gb_client *c, gb_slice key, gb_tobj *o, bool max, size_t count, enum pop_shape shape)
{
    gb_zset *z = &o->o.z;
    size_t n = GB_MIN(count, gb_zset_card(z));
    emit_ctx ec = {c, true, shape == POP_MPOP};
    if (shape == POP_FLAT) {
        gb_reply_array(c, (int64_t)n * 2);
    } else if (shape == POP_BZPOP) {
        gb_reply_array(c, (int64_t)n * 2 + 1);
        gb_reply_slice(c, key);
    } else {
        gb_reply_array(c, 2);
        gb_reply_slice(c, key);
        gb_reply_array(c, (int64_t)n);
    }
    gb_zset_pop(z, max, n, emit_reply, &ec);
    gb_tobj_sync_or_delete(c->db, key, o);
    gb_engine_key_modified(c->db, key);
    if (shape != POP_FLAT && gb_propagating(&c->eng->prop)) {
        /* A blocking or multi-key pop is propagated as the ZPOPMIN/ZPOPMAX
         * that happened, as Redis 7.0 does. */
        char num[GB_INT_BUF];
        gb_slice eff[3] = {gb_slice_cstr(max ? "ZPOPMAX" : "ZPOPMIN"), key, gb_slice_make(num, gb_ll2str(num, (int64_t)n))};
        gb_propagate_command(c, shape == POP_BZPOP ? 2 : 3, eff);
    }
}

static void zpop_generic(gb_client *c, int argc, gb_slice *argv, bool max)
{
    if (argc > 3) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    int64_t count = -1;
    if (argc == 3 &&
        !gb_arg_ll_range(c, argv[2], 0, INT64_MAX, "ERR value is out of range, must be positive", &count))
        return;
    bool wrong;
    gb_tobj o;
    gb_zset *z = lookup_zset(c, argv[1], true, &o, &wrong);
    if (wrong)
        return;
    if (!z || count == 0) {
        gb_reply_array(c, 0);
        return;
    }
    pop_reply(c, argv[1], &o, max, count == -1 ? 1 : (size_t)count, POP_FLAT);
}

static void cmd_zpopmin(gb_client *c, int argc, gb_slice *argv) { zpop_generic(c, argc, argv, false); }
static void cmd_zpopmax(gb_client *c, int argc, gb_slice *argv) { zpop_generic(c, argc, argv, true); }

/* ZMPOP's and the blocking pops' first pass: pops from the first non-empty
 * zset among keys (the first existing one: an empty zset's key is deleted)
 * and returns true after replying, WRONGTYPE for a key of another type met
 * first included; false when every key is missing. */
static bool pop_first(gb_client *c, gb_slice *keys, int nkeys, bool max, size_t count, enum pop_shape shape)
{
    for (int i = 0; i < nkeys; i++) {
        bool wrong;
        gb_tobj o;
        gb_zset *z = lookup_zset(c, keys[i], true, &o, &wrong);
        if (wrong)
            return true;
        if (!z || gb_zset_card(z) == 0)
            continue;
        pop_reply(c, keys[i], &o, max, count, shape);
        return true;
    }
    return false;
}

/* ZMPOP numkeys key [key ...] MIN|MAX [COUNT n]: nil when every key is missing. */
static void cmd_zmpop(gb_client *c, int argc, gb_slice *argv)
{
    int64_t numkeys, count;
    bool max;
    if (!gb_parse_mpop_args(c, argc, argv, 1, "min", "max", &numkeys, &max, &count))
        return;
    if (!pop_first(c, argv + 2, (int)numkeys, max, (size_t)count, POP_MPOP))
        gb_reply_nil_array(c);
}

/* BZPOPMIN/BZPOPMAX key [key ...] timeout */
static void bzpop_generic(gb_client *c, int argc, gb_slice *argv, bool max)
{
    uint64_t deadline;
    if (!gb_blocking_parse_timeout(c, argv[argc - 1], &deadline))
        return;
    if (pop_first(c, argv + 1, argc - 2, max, 1, POP_BZPOP))
        return;
    if (!gb_blocking_allowed(c)) {
        gb_reply_nil_array(c);
        return;
    }
    gb_blocking_block(c, argv + 1, argc - 2, deadline, GB_TYPE_ZSET, argc, argv);
}

static void cmd_bzpopmin(gb_client *c, int argc, gb_slice *argv) { bzpop_generic(c, argc, argv, false); }
static void cmd_bzpopmax(gb_client *c, int argc, gb_slice *argv) { bzpop_generic(c, argc, argv, true); }

/* BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT n] */
static void cmd_bzmpop(gb_client *c, int argc, gb_slice *argv)
{
    int64_t numkeys, count;
    bool max;
    if (!gb_parse_mpop_args(c, argc, argv, 2, "min", "max", &numkeys, &max, &count))
        return;
    uint64_t deadline;
    if (!gb_blocking_parse_timeout(c, argv[1], &deadline))
        return;
    if (pop_first(c, argv + 3, (int)numkeys, max, (size_t)count, POP_MPOP))
        return;
    if (!gb_blocking_allowed(c)) {
        gb_reply_nil_array(c);
        return;
    }
    gb_blocking_block(c, argv + 3, (int)numkeys, deadline, GB_TYPE_ZSET, argc, argv);
}

/* ---- random and scan ---------------------------------------------------------------------- */

/* ZRANDMEMBER key [count [WITHSCORES]] */
static void cmd_zrandmember(gb_client *c, int argc, gb_slice *argv)
{
    bool wrong;
    if (argc == 2) {
        gb_tobj o;
        gb_zset *z = lookup_zset(c, argv[1], false, &o, &wrong);
        if (z) {
            emit_ctx ec = {c, false, false};
            gb_zset_random(z, 1, emit_reply, &ec);
        } else if (!wrong) {
            gb_reply_nil(c);
        }
        return;
    }
    int64_t count;
    if (!gb_types_random_count(c, argv[2], &count))
        return;
    bool withscores = false;
    if (argc > 4 || (argc == 4 && !gb_slice_ieq(argv[3], "withscores"))) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    if (argc == 4) {
        withscores = true;
        if (!gb_types_random_pairs_ok(c, count))
            return;
    }
    gb_tobj o;
    gb_zset *z = lookup_zset(c, argv[1], false, &o, &wrong);
    if (wrong)
        return;
    if (!z || count == 0) {
        gb_reply_array(c, 0);
        return;
    }
    uint64_t n = gb_types_random_n(count, gb_zset_card(z));
    gb_reply_array(c, (int64_t)(withscores ? n * 2 : n));
    emit_ctx ec = {c, withscores, false};
    gb_zset_random(z, count, emit_reply, &ec);
}

static void scan_add(void *ctx, gb_slice m, double score) { gb_scan_buf_add(ctx, m, gb_slice_make("", 0), score); }
static uint64_t scan_batch(gb_tobj_hdr *o, uint64_t cursor, gb_scan_buf *b)
{
    return gb_zset_scan(&o->z, cursor, scan_add, b);
}

/* ZSCAN key cursor [MATCH pattern] [COUNT count] */
static void cmd_zscan(gb_client *c, int argc, gb_slice *argv)
{
    gb_types_scan(c, argc, argv, GB_TYPE_ZSET, scan_batch);
}

/* ---- algebra ------------------------------------------------------------------------------ */

enum zop { OP_UNION, OP_INTER, OP_DIFF };

/* Redis's zunionInterDiffGenericCommand: ZUNION, ZINTER, ZDIFF, their STORE
 * forms (dst non-NULL) and ZINTERCARD (card_only). Every input key is
 * looked up (and type-checked) before the options are parsed, as in
 * Redis. */
static void zsetop_generic(gb_client *c, int argc, gb_slice *argv, const gb_slice *dst, int numkeys_idx, enum zop op,
                           bool card_only, const char *cmdname)
{
    int64_t setnum;
    if (!gb_arg_ll(c, argv[numkeys_idx], &setnum))
        return;
    if (setnum < 1) {
        gb_reply_errorf(c, "ERR at least 1 input key is needed for '%s' command", cmdname);
        return;
    }
    if (setnum > argc - (numkeys_idx + 1)) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    size_t n = (size_t)setnum;
    gb_zsrc stacksrc[8];
    gb_tobj stackobj[8];
    gb_zsrc *src = n <= 8 ? stacksrc : gb_malloc(n * sizeof *src);
    gb_tobj *objs = n <= 8 ? stackobj : gb_malloc(n * sizeof *objs);
    int j = numkeys_idx + 1;
    for (size_t i = 0; i < n; i++, j++) {
        src[i].zset = NULL;
        src[i].set = NULL;
        src[i].weight = 1.0;
        objs[i].kv = gb_db_lookup_read(c->db, argv[j]);
        if (!objs[i].kv)
            continue;
        size_t first = i; /* the same key twice: the same object (the algebra compares pointers) */
        for (size_t k = 0; k < i; k++)
            if (objs[k].kv == objs[i].kv) {
                first = k;
                break;
            }
        objs[i].o = gb_tobj_unpack(objs[i].kv->v.ptr);
        if (objs[i].kv->type == GB_TYPE_ZSET) {
            src[i].zset = &objs[first].o.z;
        } else if (objs[i].kv->type == GB_TYPE_SET) {
            src[i].set = &objs[first].o.s;
        } else {
            gb_reply_error(c, GB_ERR_WRONGTYPE);
            goto out;
        }
    }
    gb_zagg agg = GB_ZAGG_SUM;
    bool withscores = false;
    int64_t limit = 0;
    int remaining = argc - j;
    while (remaining) {
        if (op != OP_DIFF && !card_only && remaining >= setnum + 1 && gb_slice_ieq(argv[j], "weights")) {
            j++;
            remaining--;
            for (size_t i = 0; i < n; i++, j++, remaining--) {
                if (gb_score_parse(argv[j], &src[i].weight) != 0) {
                    gb_reply_error(c, "ERR weight value is not a float");
                    goto out;
                }
            }
        } else if (op != OP_DIFF && !card_only && remaining >= 2 && gb_slice_ieq(argv[j], "aggregate")) {
            gb_slice a = argv[j + 1];
            if (gb_slice_ieq(a, "sum"))
                agg = GB_ZAGG_SUM;
            else if (gb_slice_ieq(a, "min"))
                agg = GB_ZAGG_MIN;
            else if (gb_slice_ieq(a, "max"))
                agg = GB_ZAGG_MAX;
            else {
                gb_reply_error(c, GB_ERR_SYNTAX);
                goto out;
            }
            j += 2;
            remaining -= 2;
        } else if (!dst && !card_only && gb_slice_ieq(argv[j], "withscores")) {
            j++;
            remaining--;
            withscores = true;
        } else if (card_only && remaining >= 2 && gb_slice_ieq(argv[j], "limit")) {
            if (!gb_arg_ll_range(c, argv[j + 1], 0, INT64_MAX, "ERR LIMIT can't be negative", &limit))
                goto out;
            j += 2;
            remaining -= 2;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            goto out;
        }
    }

    if (card_only) {
        gb_reply_int(c, (int64_t)gb_zset_intercard(src, n, (size_t)limit));
        goto out;
    }
    gb_types_config cfg = gb_types_cfg(c->eng);
    gb_zset *z;
    if (op == OP_UNION)
        z = gb_zset_union(src, n, agg, &cfg);
    else if (op == OP_INTER)
        z = gb_zset_inter(src, n, agg, &cfg);
    else
        z = gb_zset_diff(src, n, &cfg);
    if (dst) {
        store_result(c, *dst, z);
    } else {
        size_t card = gb_zset_card(z);
        gb_reply_array(c, (int64_t)(withscores ? card * 2 : card));
        emit_ctx ec = {c, withscores, false};
        gb_zset_range_rank(z, 0, -1, false, emit_reply, &ec);
        gb_zset_free(z);
    }
out:
    if (src != stacksrc) {
        gb_free(src);
        gb_free(objs);
    }
}

static void cmd_zunion(gb_client *c, int argc, gb_slice *argv)
{
    zsetop_generic(c, argc, argv, NULL, 1, OP_UNION, false, "zunion");
}
static void cmd_zinter(gb_client *c, int argc, gb_slice *argv)
{
    zsetop_generic(c, argc, argv, NULL, 1, OP_INTER, false, "zinter");
}
static void cmd_zdiff(gb_client *c, int argc, gb_slice *argv) { zsetop_generic(c, argc, argv, NULL, 1, OP_DIFF, false, "zdiff"); }
static void cmd_zintercard(gb_client *c, int argc, gb_slice *argv)
{
    zsetop_generic(c, argc, argv, NULL, 1, OP_INTER, true, "zintercard");
}
static void cmd_zunionstore(gb_client *c, int argc, gb_slice *argv)
{
    zsetop_generic(c, argc, argv, &argv[1], 2, OP_UNION, false, "zunionstore");
}
static void cmd_zinterstore(gb_client *c, int argc, gb_slice *argv)
{
    zsetop_generic(c, argc, argv, &argv[1], 2, OP_INTER, false, "zinterstore");
}
static void cmd_zdiffstore(gb_client *c, int argc, gb_slice *argv)
{
    zsetop_generic(c, argc, argv, &argv[1], 2, OP_DIFF, false, "zdiffstore");
}

#define W (GB_CMD_WRITE | GB_CMD_DENYOOM | GB_CMD_FAST)
#define WD (GB_CMD_WRITE | GB_CMD_DENYOOM)
#define WF (GB_CMD_WRITE | GB_CMD_FAST)
#define WR (GB_CMD_WRITE)
#define R (GB_CMD_READONLY)
#define RF (GB_CMD_READONLY | GB_CMD_FAST)
#define B (GB_CMD_WRITE | GB_CMD_BLOCKING)
#define MK GB_CMD_MOVABLEKEYS

GB_DEFINE_COMMANDS(zset,
    {"zadd", -4, W, 1, 1, 1, cmd_zadd, "sorted-set", "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.", "1.2.0"},
    {"zincrby", 4, W, 1, 1, 1, cmd_zincrby, "sorted-set", "Increments the score of a member in a sorted set.", "1.2.0"},
    {"zscore", 3, RF, 1, 1, 1, cmd_zscore, "sorted-set", "Returns the score of a member in a sorted set.", "1.2.0"},
    {"zmscore", -3, RF, 1, 1, 1, cmd_zmscore, "sorted-set", "Returns the score of one or more members in a sorted set.", "6.2.0"},
    {"zcard", 2, RF, 1, 1, 1, cmd_zcard, "sorted-set", "Returns the number of members in a sorted set.", "1.2.0"},
    {"zcount", 4, RF, 1, 1, 1, cmd_zcount, "sorted-set", "Returns the count of members in a sorted set that have scores within a range.", "2.0.0"},
    {"zlexcount", 4, RF, 1, 1, 1, cmd_zlexcount, "sorted-set", "Returns the number of members in a sorted set within a lexicographical range.", "2.8.9"},
    {"zrank", -3, RF, 1, 1, 1, cmd_zrank, "sorted-set", "Returns the index of a member in a sorted set ordered by ascending scores.", "2.0.0"},
    {"zrevrank", -3, RF, 1, 1, 1, cmd_zrevrank, "sorted-set", "Returns the index of a member in a sorted set ordered by descending scores.", "2.0.0"},
    {"zrange", -4, R, 1, 1, 1, cmd_zrange, "sorted-set", "Returns members in a sorted set within a range of indexes.", "1.2.0"},
    {"zrangestore", -5, WD, 1, 2, 1, cmd_zrangestore, "sorted-set", "Stores a range of members from sorted set in a key.", "6.2.0"},
    {"zrevrange", -4, R, 1, 1, 1, cmd_zrevrange, "sorted-set", "Returns members in a sorted set within a range of indexes in reverse order.", "1.2.0"},
    {"zrangebyscore", -4, R, 1, 1, 1, cmd_zrangebyscore, "sorted-set", "Returns members in a sorted set within a range of scores.", "1.0.5"},
    {"zrevrangebyscore", -4, R, 1, 1, 1, cmd_zrevrangebyscore, "sorted-set", "Returns members in a sorted set within a range of scores in reverse order.", "2.2.0"},
    {"zrangebylex", -4, R, 1, 1, 1, cmd_zrangebylex, "sorted-set", "Returns members in a sorted set within a lexicographical range.", "2.8.9"},
    {"zrevrangebylex", -4, R, 1, 1, 1, cmd_zrevrangebylex, "sorted-set", "Returns members in a sorted set within a lexicographical range in reverse order.", "2.8.9"},
    {"zrem", -3, WF, 1, 1, 1, cmd_zrem, "sorted-set", "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", "1.2.0"},
    {"zremrangebyrank", 4, WR, 1, 1, 1, cmd_zremrangebyrank, "sorted-set", "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.", "2.0.0"},
    {"zremrangebyscore", 4, WR, 1, 1, 1, cmd_zremrangebyscore, "sorted-set", "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.", "1.2.0"},
    {"zremrangebylex", 4, WR, 1, 1, 1, cmd_zremrangebylex, "sorted-set", "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.", "2.8.9"},
    {"zpopmin", -2, WF, 1, 1, 1, cmd_zpopmin, "sorted-set", "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", "5.0.0"},
    {"zpopmax", -2, WF, 1, 1, 1, cmd_zpopmax, "sorted-set", "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", "5.0.0"},
    {"zmpop", -4, WR | MK, 0, 0, 0, cmd_zmpop, "sorted-set", "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.", "7.0.0"},
    {"bzpopmin", -3, B | GB_CMD_FAST | GB_CMD_NOSCRIPT, 1, -2, 1, cmd_bzpopmin, "sorted-set", "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", "5.0.0"},
    {"bzpopmax", -3, B | GB_CMD_FAST | GB_CMD_NOSCRIPT, 1, -2, 1, cmd_bzpopmax, "sorted-set", "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped.", "5.0.0"},
    {"bzmpop", -5, B | MK, 0, 0, 0, cmd_bzmpop, "sorted-set", "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", "7.0.0"},
    {"zrandmember", -2, R, 1, 1, 1, cmd_zrandmember, "sorted-set", "Returns one or more random members from a sorted set.", "6.2.0"},
    {"zscan", -3, R, 1, 1, 1, cmd_zscan, "sorted-set", "Iterates over members and scores of a sorted set.", "2.8.0"},
    {"zunion", -3, R | MK, 0, 0, 0, cmd_zunion, "sorted-set", "Returns the union of multiple sorted sets.", "6.2.0"},
    {"zinter", -3, R | MK, 0, 0, 0, cmd_zinter, "sorted-set", "Returns the intersect of multiple sorted sets.", "6.2.0"},
    {"zdiff", -3, R | MK, 0, 0, 0, cmd_zdiff, "sorted-set", "Returns the difference between multiple sorted sets.", "6.2.0"},
    {"zintercard", -3, R | MK, 0, 0, 0, cmd_zintercard, "sorted-set", "Returns the number of members of the intersect of multiple sorted sets.", "7.0.0"},
    {"zunionstore", -4, WD | MK, 1, 1, 1, cmd_zunionstore, "sorted-set", "Stores the union of multiple sorted sets in a key.", "2.0.0"},
    {"zinterstore", -4, WD | MK, 1, 1, 1, cmd_zinterstore, "sorted-set", "Stores the intersect of multiple sorted sets in a key.", "2.0.0"},
    {"zdiffstore", -4, WD | MK, 1, 1, 1, cmd_zdiffstore, "sorted-set", "Stores the difference of multiple sorted sets in a key.", "6.2.0"});
