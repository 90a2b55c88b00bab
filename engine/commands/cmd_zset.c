/*
 * Sorted-set commands, the blocking ones included: the arguments, the
 * replies and the propagated effects around engine/types/t_zset.h (the work
 * on the keys) and engine/core/request/blocking.h (wait queues, deadlines, serving).
 * Argument order, error texts and reply shapes (RESP2) follow Redis 7.0's
 * t_zset.c; ZRANK/ZREVRANK also take 7.2's WITHSCORE.
 */
#include <math.h>

#include "engine/core/request/blocking.h"
#include "engine/commands/cmd_collection.h"
#include "engine/commands/cmd_util.h"
#include "engine/commands/typed.h"
#include "engine/core/request/propagate.h"
#include "engine/core/engine.h"
#include "engine/base/mem.h"
#include "engine/types/t_zset.h"
#include "engine/base/score.h"
#include "engine/base/util.h"

#define ERR_MINMAX "ERR min or max is not a float"
#define ERR_LEX "ERR min or max not valid string range item"

/* ---- replies -------------------------------------------------------------------- */

/* Replies the members (and scores) streamed: an array of their count, or of
 * a count known only at the end (finish_reply). */
typedef struct emit_ctx {
    gb_client *c;
    bool withscores;
    bool pairs;      /* each member and score as its own 2-array (ZMPOP/BZMPOP) */
    bool deferred;
    size_t handle;
    bool flat;       /* [member, score, ...] in RESP3 too (ZPOPMIN without a count, BZPOPMIN) */
} emit_ctx;

/* Whether each member and its score form a 2-array: always for ZMPOP's
 * shape, and in RESP3 for every WITHSCORES reply but the flat ones (Redis
 * 7.0's "if (withscores && c->resp > 2) addReplyArrayLen(c,2)"). */
static bool nested(const emit_ctx *e)
{
    return e->pairs || (e->withscores && e->c->resp > 2 && !e->flat);
}

static int64_t items(const emit_ctx *e, size_t n) { return (int64_t)(e->withscores && !nested(e) ? n * 2 : n); }

static void emit_len(void *ctx, size_t n)
{
    emit_ctx *e = ctx;
    if (n == GB_SINK_LEN_UNKNOWN) {
        e->deferred = true;
        e->handle = gb_reply_array_deferred(e->c);
    } else {
        gb_reply_array(e->c, items(e, n));
    }
}

static void emit_reply(void *ctx, gb_slice m, double score)
{
    emit_ctx *e = ctx;
    if (nested(e))
        gb_reply_array(e->c, 2);
    gb_reply_slice(e->c, m);
    if (e->withscores)
        gb_reply_double(e->c, score);
}

static gb_sink emit_sink(emit_ctx *e)
{
    gb_sink s = {.len = emit_len, .scored = emit_reply, .ctx = e};
    return s;
}

/* After a stream that went to emit_sink: the deferred length, or the reply
 * for a missing key (an empty array) or an error. */
static void finish_reply(emit_ctx *e, gb_result r, size_t n)
{
    if (r == GB_R_OK && e->deferred)
        gb_reply_set_deferred(e->c, e->handle, items(e, n));
    else if (r == GB_R_NOTFOUND)
        gb_reply_array(e->c, 0);
    else if (r != GB_R_OK)
        gb_reply_result(e->c, r);
}

enum rtype { RT_AUTO = 0, RT_RANK, RT_SCORE, RT_LEX };

/* Parses min and max as bounds of type rt (not RT_AUTO) into r; replies
 * Redis's error and returns false on bad input. */
static bool parse_range(gb_client *c, enum rtype rt, gb_slice min, gb_slice max, gb_zrange *r)
{
    if (rt == RT_RANK) {
        r->by = GB_ZRANGE_RANK;
        return gb_arg_ll(c, min, &r->start) && gb_arg_ll(c, max, &r->stop);
    }
    if (rt == RT_SCORE) {
        r->by = GB_ZRANGE_SCORE;
        if (gb_score_parse_range(min, max, &r->score) != 0) {
            gb_reply_error(c, ERR_MINMAX);
            return false;
        }
    }
    if (rt == RT_LEX) {
        r->by = GB_ZRANGE_LEX;
        if (gb_lex_parse_range(min, max, &r->lex) != 0) {
            gb_reply_error(c, ERR_LEX);
            return false;
        }
    }
    return true;
}

/* ---- ZADD / ZINCRBY ---------------------------------------------------------------------- */

/* Redis's zaddGenericCommand: options from argv[2] on (ZINCRBY too, which is
 * why "ZINCRBY k nx m" is a syntax error), then score-member pairs. */
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
    if (!gb_cmd_zadd_flags_ok(c, flags, n))
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

static void cmd_zscore(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_cmd_zscore(c, argv[1], argv[2]);
}

static void reply_len(void *ctx, size_t n) { gb_reply_array(ctx, (int64_t)n); }
static void reply_score(void *ctx, gb_slice m, double score)
{
    (void)m;
    gb_reply_double(ctx, score);
}
static void reply_nil(void *ctx) { gb_reply_nil(ctx); }

static void cmd_zmscore(gb_client *c, int argc, gb_slice *argv)
{
    gb_sink s = {.len = reply_len, .scored = reply_score, .missing = reply_nil, .ctx = c};
    gb_result r = gb_zset_zmscore(c->db, argv[1], (size_t)(argc - 2), argv + 2, &s);
    if (r != GB_R_OK)
        gb_reply_result(c, r);
}

static void cmd_zcard(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t n;
    gb_result r = gb_zset_zcard(c->db, argv[1], &n);
    gb_reply_int_result(c, r, n);
}

/* ZCOUNT / ZLEXCOUNT key min max */
static void count_generic(gb_client *c, gb_slice *argv, enum rtype rt)
{
    gb_zrange range;
    if (!parse_range(c, rt, argv[2], argv[3], &range))
        return;
    int64_t n;
    gb_result r = rt == RT_SCORE ? gb_zset_zcount(c->db, argv[1], &range.score, &n)
                                 : gb_zset_zlexcount(c->db, argv[1], &range.lex, &n);
    gb_reply_int_result(c, r, n);
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
/* ZRANK/ZREVRANK key member: Redis 7.0's form (7.2's WITHSCORE is refused
 * by the arity, as 7.0 refuses it). */
static void rank_generic(gb_client *c, gb_slice *argv, bool reverse)
{
    int64_t rank;
    double score;
    gb_result r = gb_zset_zrank(c->db, argv[1], argv[2], reverse, &rank, &score);
    if (r == GB_R_OK)
        gb_reply_int(c, rank);
    else if (r != GB_R_NOTFOUND)
        gb_reply_result(c, r);
    else
        gb_reply_nil(c);
}

static void cmd_zrank(gb_client *c, int argc, gb_slice *argv) { rank_generic(c, argv, false); }
static void cmd_zrevrank(gb_client *c, int argc, gb_slice *argv) { rank_generic(c, argv, true); }

/* ---- ranges ------------------------------------------------------------------------------ */

enum rdir { DIR_AUTO = 0, DIR_FWD, DIR_REV };

/* Redis's zrangeGenericCommand: ZRANGE, ZRANGESTORE and the older
 * Z[REV]RANGE[BYSCORE|BYLEX]. argv[start] is the source key; dst is
 * non-NULL for ZRANGESTORE. */
static void zrange_generic(gb_client *c, int argc, gb_slice *argv, int start, const gb_slice *dst, enum rtype rt,
                           enum rdir dir)
{
    bool store = dst != NULL;
    int minidx = start + 1, maxidx = start + 2;
    bool withscores = false;
    gb_zrange range;
    memset(&range, 0, sizeof range);
    range.limit = -1;
    for (int j = start + 3; j < argc; j++) {
        int left = argc - j - 1;
        if (!store && gb_slice_ieq(argv[j], "withscores")) {
            withscores = true;
        } else if (gb_slice_ieq(argv[j], "limit") && left >= 2) {
            if (!gb_arg_ll(c, argv[j + 1], &range.offset) || !gb_arg_ll(c, argv[j + 2], &range.limit))
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
    if (range.limit != -1 && rt == RT_RANK) {
        gb_reply_error(c, "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
        return;
    }
    if (withscores && rt == RT_LEX) {
        gb_reply_error(c, "ERR syntax error, WITHSCORES not supported in combination with BYLEX");
        return;
    }
    range.rev = dir == DIR_REV;
    if (range.rev && (rt == RT_SCORE || rt == RT_LEX)) {
        int t = minidx;
        minidx = maxidx;
        maxidx = t;
    }
    if (!parse_range(c, rt, argv[minidx], argv[maxidx], &range))
        return;
    if (store) {
        int64_t card;
        bool existed = gb_notify_store_begin(c, *dst);
        gb_result r = gb_zset_zrangestore(c->db, *dst, argv[start], &range, &card);
        gb_reply_int_result(c, r, card);
        if (r == GB_R_OK)
            gb_notify_store_end(c, GB_NOTIFY_ZSET, "zrangestore", *dst, card, existed);
        return;
    }
    emit_ctx e = {.c = c, .withscores = withscores};
    gb_sink s = emit_sink(&e);
    size_t n;
    gb_result r = gb_zset_zrange(c->db, argv[start], &range, &s, &n);
    finish_reply(&e, r, n);
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
    int64_t n;
    gb_result r = gb_zset_zrem(c->db, argv[1], (size_t)(argc - 2), argv + 2, &n);
    gb_reply_int_result(c, r, n);
    if (r == GB_R_OK && n > 0) {
        gb_notify_key(c, GB_NOTIFY_ZSET, "zrem", argv[1]);
        gb_notify_del_if_gone(c, argv[1]);
    }
}

static void remrange_generic(gb_client *c, gb_slice *argv, enum rtype rt)
{
    gb_zrange range;
    memset(&range, 0, sizeof range);
    if (!parse_range(c, rt, argv[2], argv[3], &range))
        return;
    int64_t n;
    gb_result r = gb_zset_zremrange(c->db, argv[1], &range, &n);
    gb_reply_int_result(c, r, n);
    if (r == GB_R_OK && n > 0) {
        static const char *const events[] = {[RT_RANK] = "zremrangebyrank", [RT_SCORE] = "zremrangebyscore",
                                             [RT_LEX] = "zremrangebylex"};
        gb_notify_key(c, GB_NOTIFY_ZSET, events[rt], argv[1]);
        gb_notify_del_if_gone(c, argv[1]);
    }
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
    /* [member, score] without a count; with one, [[member, score], ...] in RESP3 */
    emit_ctx e = {.c = c, .withscores = true, .flat = count == -1};
    gb_sink s = emit_sink(&e);
    gb_result r = gb_zset_zpopmin(c->db, argv[1], max, count == -1 ? 1 : (size_t)count, &s);
    finish_reply(&e, r, 0);
    if (r == GB_R_OK && count != 0) {
        gb_notify_key(c, GB_NOTIFY_ZSET, max ? "zpopmax" : "zpopmin", argv[1]);
        gb_notify_del_if_gone(c, argv[1]);
    }
}

static void cmd_zpopmin(gb_client *c, int argc, gb_slice *argv) { zpop_generic(c, argc, argv, false); }
static void cmd_zpopmax(gb_client *c, int argc, gb_slice *argv) { zpop_generic(c, argc, argv, true); }

/* The reply of a pop from one of several keys: [key, member, score]
 * (BZPOP*) or [key, [[member, score], ...]] (ZMPOP, BZMPOP). */
typedef struct mpop_ctx {
    emit_ctx e;
    const gb_slice *keys;
    size_t which;
    size_t n;
} mpop_ctx;

static void mpop_open(void *ctx, size_t n)
{
    mpop_ctx *m = ctx;
    m->n = n;
    if (!m->e.pairs) {
        gb_reply_array(m->e.c, (int64_t)n * 2 + 1);
        gb_reply_slice(m->e.c, m->keys[m->which]);
    } else {
        gb_reply_array(m->e.c, 2);
        gb_reply_slice(m->e.c, m->keys[m->which]);
        gb_reply_array(m->e.c, (int64_t)n);
    }
}

static void mpop_member(void *ctx, gb_slice member, double score) { emit_reply(&((mpop_ctx *)ctx)->e, member, score); }

/* ZMPOP's and the blocking pops' first pass: pops from the first non-empty
 * zset among keys and returns true after replying, WRONGTYPE for a key of
 * another type met first included; false when every key is missing.
 * mpop: ZMPOP's shape, else BZPOP's. */
static bool pop_first(gb_client *c, const gb_slice *keys, int nkeys, bool max, size_t count, bool mpop)
{
    mpop_ctx m = {{.c = c, .withscores = true, .pairs = mpop, .flat = !mpop}, keys, 0, 0};
    gb_sink s = {.len = mpop_open, .scored = mpop_member, .ctx = &m};
    gb_result r = gb_zset_zmpop(c->db, (size_t)nkeys, keys, max, count, &s, &m.which);
    if (r == GB_R_NOTFOUND)
        return false;
    if (r == GB_R_OK) {
        gb_notify_key(c, GB_NOTIFY_ZSET, max ? "zpopmax" : "zpopmin", keys[m.which]);
        gb_notify_del_if_gone(c, keys[m.which]);
    }
    if (r != GB_R_OK) {
        gb_reply_result(c, r);
    } else if (gb_propagating(&c->eng->prop)) {
        /* Propagated as the ZPOPMIN/ZPOPMAX that happened, as Redis 7.0
         * does. */
        char num[GB_INT_BUF];
        gb_slice eff[3] = {gb_slice_cstr(max ? "ZPOPMAX" : "ZPOPMIN"), keys[m.which],
                           gb_slice_make(num, gb_ll2str(num, (int64_t)m.n))};
        gb_propagate_command(c, mpop ? 3 : 2, eff);
    }
    return true;
}

/* ZMPOP numkeys key [key ...] MIN|MAX [COUNT n]: nil when every key is missing. */
static void cmd_zmpop(gb_client *c, int argc, gb_slice *argv)
{
    int64_t numkeys, count;
    bool max;
    if (!gb_parse_mpop_args(c, argc, argv, 1, "min", "max", &numkeys, &max, &count))
        return;
    if (!pop_first(c, argv + 2, (int)numkeys, max, (size_t)count, true))
        gb_reply_nil_array(c);
}

/* BZPOPMIN/BZPOPMAX key [key ...] timeout */
static void bzpop_generic(gb_client *c, int argc, gb_slice *argv, bool max)
{
    uint64_t deadline;
    if (!gb_blocking_parse_timeout(c, argv[argc - 1], &deadline))
        return;
    const gb_slice *keys = argv + 1;
    int nkeys = argc - 2;
    gb_blocking_ready_keys(c, &keys, &nkeys);
    if (pop_first(c, keys, nkeys, max, 1, false))
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
    const gb_slice *keys = argv + 3;
    int nkeys = (int)numkeys;
    gb_blocking_ready_keys(c, &keys, &nkeys);
    if (pop_first(c, keys, nkeys, max, (size_t)count, true))
        return;
    if (!gb_blocking_allowed(c)) {
        gb_reply_nil_array(c);
        return;
    }
    gb_blocking_block(c, argv + 3, (int)numkeys, deadline, GB_TYPE_ZSET, argc, argv);
}

/* ---- random and scan ---------------------------------------------------------------------- */

static bool zrandmember_fits(void *ctx, uint64_t n, uint64_t element_bytes)
{
    const emit_ctx *e = ctx;
    return gb_types_reply_fits(e->c, n, e->withscores ? 2 : 1, element_bytes);
}

/* ZRANDMEMBER key [count [WITHSCORES]] */
static void cmd_zrandmember(gb_client *c, int argc, gb_slice *argv)
{
    emit_ctx e = {.c = c};
    gb_sink s = emit_sink(&e);
    if (argc == 2) { /* one member, not in an array */
        s.len = NULL;
        gb_result r = gb_zset_zrandmember(c->db, argv[1], 1, &s);
        if (r == GB_R_NOTFOUND)
            gb_reply_nil(c);
        else if (r != GB_R_OK)
            gb_reply_result(c, r);
        return;
    }
    int64_t count;
    if (!gb_types_random_count(c, argv[2], &count))
        return;
    if (argc > 4 || (argc == 4 && !gb_slice_ieq(argv[3], "withscores"))) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    if (argc == 4) {
        e.withscores = true;
        if (!gb_types_random_pairs_ok(c, count))
            return;
    }
    s.fits = zrandmember_fits;
    finish_reply(&e, gb_zset_zrandmember(c->db, argv[1], count, &s), 0);
}

/* ZSCAN key cursor [MATCH pattern] [COUNT count] */
static void cmd_zscan(gb_client *c, int argc, gb_slice *argv)
{
    gb_types_scan(c, argc, argv, GB_TYPE_ZSET);
}

/* ---- algebra ------------------------------------------------------------------------------ */

/* Parses the options of ZUNION & co from argv[j..] into opts or *limit;
 * returns the error to reply, or NULL. WEIGHTS go to stackw when n <= 8,
 * else to an allocation the caller frees. Redis looks the keys up first, so
 * the operation reports a key's type before this error. */
static const char *parse_zsetop_opts(int argc, gb_slice *argv, int j, size_t n, enum gb_zsetop op, bool store,
                                     bool card_only, gb_zsetop_opts *opts, double stackw[8], bool *withscores,
                                     int64_t *limit)
{
    int remaining = argc - j;
    while (remaining) {
        if (op != GB_ZSETOP_DIFF && !card_only && remaining >= (int)n + 1 && gb_slice_ieq(argv[j], "weights")) {
            j++;
            remaining--;
            double *w = (double *)opts->weights;
            if (!w)
                opts->weights = w = n <= 8 ? stackw : gb_malloc(n * sizeof *w);
            for (size_t i = 0; i < n; i++, j++, remaining--)
                if (gb_score_parse(argv[j], &w[i]) != 0)
                    return "ERR weight value is not a float";
        } else if (op != GB_ZSETOP_DIFF && !card_only && remaining >= 2 && gb_slice_ieq(argv[j], "aggregate")) {
            gb_slice a = argv[j + 1];
            if (gb_slice_ieq(a, "sum"))
                opts->agg = GB_ZAGG_SUM;
            else if (gb_slice_ieq(a, "min"))
                opts->agg = GB_ZAGG_MIN;
            else if (gb_slice_ieq(a, "max"))
                opts->agg = GB_ZAGG_MAX;
            else
                return GB_ERR_SYNTAX;
            j += 2;
            remaining -= 2;
        } else if (!store && !card_only && gb_slice_ieq(argv[j], "withscores")) {
            j++;
            remaining--;
            *withscores = true;
        } else if (card_only && remaining >= 2 && gb_slice_ieq(argv[j], "limit")) {
            if (!gb_slice2ll(argv[j + 1], limit) || *limit < 0)
                return "ERR LIMIT can't be negative";
            j += 2;
            remaining -= 2;
        } else {
            return GB_ERR_SYNTAX;
        }
    }
    return NULL;
}

/* Redis's zunionInterDiffGenericCommand: ZUNION, ZINTER, ZDIFF, their STORE
 * forms (dst non-NULL) and ZINTERCARD (card_only). */
static void zsetop_generic(gb_client *c, int argc, gb_slice *argv, const gb_slice *dst, int numkeys_idx,
                           enum gb_zsetop op, bool card_only, const char *cmdname)
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
    const gb_slice *keys = argv + numkeys_idx + 1;
    double stackw[8];
    gb_zsetop_opts opts = {NULL, GB_ZAGG_SUM};
    bool withscores = false;
    int64_t limit = 0;
    const char *err = parse_zsetop_opts(argc, argv, numkeys_idx + 1 + (int)n, n, op, dst != NULL, card_only, &opts,
                                        stackw, &withscores, &limit);
    gb_result r;
    if (card_only) {
        size_t lim = (size_t)limit;
        int64_t card;
        r = gb_zset_zintercard(c->db, n, keys, err ? NULL : &lim, &card);
        if (r == GB_R_OK)
            gb_reply_int(c, card);
    } else if (dst) {
        int64_t card;
        bool existed = gb_notify_store_begin(c, *dst);
        r = gb_zset_zunionstore(c->db, op, *dst, n, keys, err ? NULL : &opts, &card);
        if (r == GB_R_OK) {
            gb_reply_int(c, card);
            gb_notify_store_end(c, GB_NOTIFY_ZSET, cmdname, *dst, card, existed);
        }
    } else {
        emit_ctx e = {.c = c, .withscores = withscores};
        gb_sink s = emit_sink(&e);
        r = gb_zset_zunion(c->db, op, n, keys, err ? NULL : &opts, &s);
    }
    if (r == GB_R_BADARG)
        gb_reply_error(c, err);
    else if (r != GB_R_OK)
        gb_reply_result(c, r);
    if (opts.weights && opts.weights != stackw)
        gb_free((void *)opts.weights);
}

static void cmd_zunion(gb_client *c, int argc, gb_slice *argv)
{
    zsetop_generic(c, argc, argv, NULL, 1, GB_ZSETOP_UNION, false, "zunion");
}
static void cmd_zinter(gb_client *c, int argc, gb_slice *argv)
{
    zsetop_generic(c, argc, argv, NULL, 1, GB_ZSETOP_INTER, false, "zinter");
}
static void cmd_zdiff(gb_client *c, int argc, gb_slice *argv)
{
    zsetop_generic(c, argc, argv, NULL, 1, GB_ZSETOP_DIFF, false, "zdiff");
}
static void cmd_zintercard(gb_client *c, int argc, gb_slice *argv)
{
    zsetop_generic(c, argc, argv, NULL, 1, GB_ZSETOP_INTER, true, "zintercard");
}
static void cmd_zunionstore(gb_client *c, int argc, gb_slice *argv)
{
    zsetop_generic(c, argc, argv, &argv[1], 2, GB_ZSETOP_UNION, false, "zunionstore");
}
static void cmd_zinterstore(gb_client *c, int argc, gb_slice *argv)
{
    zsetop_generic(c, argc, argv, &argv[1], 2, GB_ZSETOP_INTER, false, "zinterstore");
}
static void cmd_zdiffstore(gb_client *c, int argc, gb_slice *argv)
{
    zsetop_generic(c, argc, argv, &argv[1], 2, GB_ZSETOP_DIFF, false, "zdiffstore");
}

GB_DEFINE_COMMANDS(zset,
    {"zadd", cmd_zadd},
    {"zincrby", cmd_zincrby},
    {"zscore", cmd_zscore},
    {"zmscore", cmd_zmscore},
    {"zcard", cmd_zcard},
    {"zcount", cmd_zcount},
    {"zlexcount", cmd_zlexcount},
    {"zrank", cmd_zrank},
    {"zrevrank", cmd_zrevrank},
    {"zrange", cmd_zrange},
    {"zrangestore", cmd_zrangestore},
    {"zrevrange", cmd_zrevrange},
    {"zrangebyscore", cmd_zrangebyscore},
    {"zrevrangebyscore", cmd_zrevrangebyscore},
    {"zrangebylex", cmd_zrangebylex},
    {"zrevrangebylex", cmd_zrevrangebylex},
    {"zrem", cmd_zrem},
    {"zremrangebyrank", cmd_zremrangebyrank},
    {"zremrangebyscore", cmd_zremrangebyscore},
    {"zremrangebylex", cmd_zremrangebylex},
    {"zpopmin", cmd_zpopmin},
    {"zpopmax", cmd_zpopmax},
    {"zmpop", cmd_zmpop},
    {"bzpopmin", cmd_bzpopmin},
    {"bzpopmax", cmd_bzpopmax},
    {"bzmpop", cmd_bzmpop},
    {"zrandmember", cmd_zrandmember},
    {"zscan", cmd_zscan},
    {"zunion", cmd_zunion},
    {"zinter", cmd_zinter},
    {"zdiff", cmd_zdiff},
    {"zintercard", cmd_zintercard},
    {"zunionstore", cmd_zunionstore},
    {"zinterstore", cmd_zinterstore},
    {"zdiffstore", cmd_zdiffstore});
