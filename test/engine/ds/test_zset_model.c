/* engine/t_zset: random operation sequences against a sorted-array model,
 * crossing the listpack -> btree threshold under default and tiny
 * thresholds; algebra against a model of Redis's arithmetic; memory per
 * member for large and small sets. */
#include "types_tutil.h"

#include <math.h>

#include "engine/ds/set.h"
#include "engine/ds/zset.h"

/* ---- model ---- */

#define MLEN 96

typedef struct zent {
    double score;
    size_t len;
    char m[MLEN];
} zent;

typedef struct zmodel {
    zent *e;
    size_t n, cap;
    bool big;
} zmodel;

static gb_slice ms(const zent *e) { return gb_slice_make(e->m, e->len); }

static int pcmp(double s1, gb_slice a, double s2, gb_slice b)
{
    if (s1 < s2)
        return -1;
    if (s1 > s2)
        return 1;
    return gb_slice_cmp(a, b);
}

static ssize_t model_find(const zmodel *md, gb_slice m)
{
    for (size_t i = 0; i < md->n; i++)
        if (gb_slice_eq(ms(&md->e[i]), m))
            return (ssize_t)i;
    return -1;
}

static void model_insert(zmodel *md, double s, gb_slice m)
{
    if (md->n == md->cap) {
        md->cap = md->cap ? md->cap * 2 : 64;
        md->e = realloc(md->e, md->cap * sizeof *md->e);
    }
    size_t pos = 0;
    while (pos < md->n && pcmp(md->e[pos].score, ms(&md->e[pos]), s, m) < 0)
        pos++;
    memmove(&md->e[pos + 1], &md->e[pos], (md->n - pos) * sizeof *md->e);
    md->e[pos].score = s;
    md->e[pos].len = m.len;
    memcpy(md->e[pos].m, m.ptr, m.len);
    md->n++;
}

static void model_remove(zmodel *md, size_t i, size_t k)
{
    if (k == 0)
        return;
    memmove(&md->e[i], &md->e[i + k], (md->n - i - k) * sizeof *md->e);
    md->n -= k;
}

/* ---- collecting emitted pairs ---- */

typedef struct coll {
    zent *e;
    size_t n, cap;
} coll;

static void coll_emit(void *ctx, gb_slice m, double s)
{
    coll *c = ctx;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->e = realloc(c->e, c->cap * sizeof *c->e);
    }
    TU_CHECK(m.len < MLEN, "member too long");
    c->e[c->n].score = s;
    c->e[c->n].len = m.len;
    memcpy(c->e[c->n].m, m.ptr, m.len);
    c->n++;
}

static void same_score(double a, double b, const char *what)
{
    if (memcmp(&a, &b, sizeof a) != 0)
        TU_FAIL("%s: score %.17g vs model %.17g", what, a, b);
}

static void expect_list(const coll *got, const zent *want, size_t n, const char *what)
{
    TU_CHECK(got->n == n, "%s: %zu entries, model %zu", what, got->n, n);
    for (size_t i = 0; i < n; i++) {
        TU_CHECK(gb_slice_eq(ms(&got->e[i]), ms(&want[i])), "%s: entry %zu is %.*s, model %.*s", what, i,
                 (int)got->e[i].len, got->e[i].m, (int)want[i].len, want[i].m);
        same_score(got->e[i].score, want[i].score, what);
    }
}

/* ---- generators ---- */

static double rand_score(bool equal)
{
    if (equal)
        return 7;
    switch (tu_rand(24)) {
    case 0:
        return INFINITY;
    case 1:
        return -INFINITY;
    case 2:
        return -0.0;
    case 3:
        return 0.0;
    case 4:
        return (double)tu_rand(1000) / 8.0 - 50;
    case 5:
        return 1e300 * (tu_rand(2) ? 1 : -1);
    case 6:
        return 5e-324;
    case 7: {
        double d;
        uint64_t b = gb_random_u64();
        memcpy(&d, &b, 8);
        return isnan(d) ? 1.25 : d;
    }
    case 8:
        return 0.1 + 0.2;
    default:
        return (double)tu_rand(30) - 10;
    }
}

static size_t rand_member(char *buf, uint64_t universe) { return tu_member(buf, MLEN, universe, 66); }

/* ---- the checks run after every operation ---- */

static void verify(const gb_zset *z)
{
    char why[128];
    if (!gb_zset_verify(z, why, sizeof why))
        TU_FAIL("zset verify: %s", why);
}

static void check_all(const gb_zset *z, const zmodel *md)
{
    verify(z);
    TU_CHECK(gb_zset_card(z) == md->n, "card %zu vs %zu", gb_zset_card(z), md->n);
    TU_CHECK(gb_zset_encoding(z) == (md->big ? GB_ZSET_BTREE : GB_ZSET_LISTPACK), "encoding %s, model %s",
             gb_zset_encoding_name(z), md->big ? "btree" : "listpack");
    coll c = {0};
    gb_zset_range_rank(z, 0, -1, false, coll_emit, &c);
    expect_list(&c, md->e, md->n, "full range");
    free(c.e);
}

/* Redis's rank normalisation. */
static bool norm(int64_t start, int64_t stop, size_t card, size_t *a, size_t *b)
{
    int64_t n = (int64_t)card;
    if (start < 0)
        start += n;
    if (stop < 0)
        stop += n;
    if (start < 0)
        start = 0;
    if (start > stop || start >= n)
        return false;
    if (stop >= n)
        stop = n - 1;
    *a = (size_t)start;
    *b = (size_t)stop;
    return true;
}

static void rand_score_range(gb_score_range *r, bool equal)
{
    r->min = rand_score(equal && tu_rand(2));
    r->max = rand_score(equal && tu_rand(2));
    if (tu_rand(3) && r->min > r->max) {
        double t = r->min;
        r->min = r->max;
        r->max = t;
    }
    r->minex = tu_rand(3) == 0;
    r->maxex = tu_rand(3) == 0;
}

static void rand_lex_bound(gb_lex_bound *b, char *buf, uint64_t universe)
{
    b->inf = 0;
    b->ex = tu_rand(2);
    switch (tu_rand(8)) {
    case 0:
        b->inf = -1;
        b->ex = true;
        break;
    case 1:
        b->inf = 1;
        b->ex = true;
        break;
    default:
        b->s = gb_slice_make(buf, rand_member(buf, universe));
        if (tu_rand(4) == 0)
            b->s.len /= 2;
    }
}

/* Redis's listpack walk for lex ranges (see t_zset.c): the reference for
 * compact sets always, and for btree sets when all scores are equal. */
static size_t model_lex(const zmodel *md, const gb_lex_range *r, bool reverse, int64_t offset, int64_t limit,
                        zent *out)
{
    if (md->n == 0 || gb_lex_range_empty(r))
        return 0;
    if (!gb_lex_gte_min(ms(&md->e[md->n - 1]), r) || !gb_lex_lte_max(ms(&md->e[0]), r))
        return 0;
    ssize_t i = -1;
    if (!reverse) {
        for (size_t k = 0; k < md->n; k++)
            if (gb_lex_gte_min(ms(&md->e[k]), r)) {
                if (gb_lex_lte_max(ms(&md->e[k]), r))
                    i = (ssize_t)k;
                break;
            }
    } else {
        for (size_t k = md->n; k-- > 0;)
            if (gb_lex_lte_max(ms(&md->e[k]), r)) {
                if (gb_lex_gte_min(ms(&md->e[k]), r))
                    i = (ssize_t)k;
                break;
            }
    }
    if (i < 0 || offset < 0 || limit == 0)
        return 0;
    i += reverse ? -offset : offset;
    size_t n = 0;
    while (i >= 0 && (size_t)i < md->n && (limit < 0 || (int64_t)n < limit)) {
        const zent *e = &md->e[i];
        if (reverse ? !gb_lex_gte_min(ms(e), r) : !gb_lex_lte_max(ms(e), r))
            break;
        out[n++] = *e;
        i += reverse ? -1 : 1;
    }
    return n;
}

/* Whether v is inside r, as Redis reads a range (zslValueGteMin and
 * zslValueLteMax): the model's own reading, not score.h's. An empty range
 * (min > max, or min == max with an exclusive end) holds no score. */
static bool model_in_range(double v, const gb_score_range *r)
{
    return (r->minex ? v > r->min : v >= r->min) && (r->maxex ? v < r->max : v <= r->max);
}

static size_t model_score(const zmodel *md, const gb_score_range *r, bool reverse, int64_t offset,
                          int64_t limit, zent *out)
{
    if (offset < 0 || limit == 0)
        return 0;
    size_t n = 0;
    int64_t skip = offset;
    for (size_t k = 0; k < md->n; k++) {
        size_t i = reverse ? md->n - 1 - k : k;
        if (!model_in_range(md->e[i].score, r))
            continue;
        if (skip > 0) {
            skip--;
            continue;
        }
        if (limit >= 0 && (int64_t)n >= limit)
            break;
        out[n++] = md->e[i];
    }
    return n;
}

static void spot_checks(gb_zset *z, const zmodel *md, uint64_t universe, bool equal)
{
    char buf[MLEN], buf2[MLEN];
    zent *want = malloc((md->n + 1) * sizeof *want);
    /* score and rank of a random (probably present) member */
    gb_slice m =
        md->n && tu_rand(4) ? ms(&md->e[tu_rand(md->n)]) : gb_slice_make(buf, rand_member(buf, universe));
    ssize_t at = model_find(md, m);
    double s;
    TU_CHECK(gb_zset_score(z, m, &s) == (at >= 0), "score presence");
    if (at >= 0)
        same_score(s, md->e[at].score, "score");
    size_t rank;
    bool rev = tu_rand(2);
    TU_CHECK(gb_zset_rank(z, m, rev, &rank, &s) == (at >= 0), "rank presence");
    if (at >= 0)
        TU_CHECK(rank == (rev ? md->n - 1 - (size_t)at : (size_t)at), "rank %zu", rank);

    /* rank range */
    int64_t a = (int64_t)tu_rand(md->n + 6) - 3 - (tu_rand(2) ? (int64_t)md->n : 0);
    int64_t b = (int64_t)tu_rand(md->n + 6) - 3 - (tu_rand(2) ? (int64_t)md->n : 0);
    size_t x, y, wn = 0;
    if (norm(a, b, md->n, &x, &y))
        for (size_t i = x; i <= y; i++)
            want[wn++] = md->e[rev ? md->n - 1 - i : i];
    coll c = {0};
    size_t got = gb_zset_range_rank(z, a, b, rev, coll_emit, &c);
    TU_CHECK(got == wn, "range_rank count");
    expect_list(&c, want, wn, "range_rank");

    /* score range: count and walk */
    gb_score_range r;
    rand_score_range(&r, equal);
    static const int64_t offs[] = {-1, 0, 0, 0, 1, 2, 5}, lims[] = {-1, -1, 0, 1, 3, 100};
    int64_t off = offs[tu_rand(GB_ARRAY_LEN(offs))], lim = lims[tu_rand(GB_ARRAY_LEN(lims))];
    wn = model_score(md, &r, false, 0, -1, want);
    TU_CHECK(gb_zset_count(z, &r) == wn, "count [%s%g, %s%g]: %zu vs %zu", r.minex ? "(" : "", r.min,
             r.maxex ? "(" : "", r.max, gb_zset_count(z, &r), wn);
    wn = model_score(md, &r, rev, off, lim, want);
    c.n = 0;
    got = gb_zset_range_score(z, &r, rev, off, lim, coll_emit, &c);
    TU_CHECK(got == wn, "range_score count");
    expect_list(&c, want, wn, "range_score");

    /* lex ranges, where the semantics are defined */
    if (equal || !md->big) {
        gb_lex_range lr;
        rand_lex_bound(&lr.min, buf, universe);
        rand_lex_bound(&lr.max, buf2, universe);
        wn = model_lex(md, &lr, false, 0, -1, want);
        TU_CHECK(gb_zset_lexcount(z, &lr) == wn, "lexcount %zu vs %zu", gb_zset_lexcount(z, &lr), wn);
        wn = model_lex(md, &lr, rev, off, lim, want);
        c.n = 0;
        got = gb_zset_range_lex(z, &lr, rev, off, lim, coll_emit, &c);
        TU_CHECK(got == wn, "range_lex count %zu vs %zu", got, wn);
        expect_list(&c, want, wn, "range_lex");
    }

    /* random members */
    int64_t counts[] = {-5, 1, 3, (int64_t)md->n, (int64_t)md->n + 2, (int64_t)md->n / 2};
    int64_t cnt = counts[tu_rand(GB_ARRAY_LEN(counts))];
    c.n = 0;
    gb_zset_random(z, cnt, coll_emit, &c);
    size_t expect_n = cnt < 0 ? (md->n ? (size_t)-cnt : 0) : ((size_t)cnt < md->n ? (size_t)cnt : md->n);
    TU_CHECK(c.n == expect_n, "random count %" PRId64 ": %zu emitted", cnt, c.n);
    for (size_t i = 0; i < c.n; i++) {
        ssize_t k = model_find(md, ms(&c.e[i]));
        TU_CHECK(k >= 0, "random emitted a non-member");
        same_score(c.e[i].score, md->e[k].score, "random score");
        if (cnt > 0)
            for (size_t j = 0; j < i; j++)
                TU_CHECK(!gb_slice_eq(ms(&c.e[i]), ms(&c.e[j])), "random repeated a member");
    }
    if (cnt > 0 && (size_t)cnt >= md->n)
        expect_list(&c, md->e, md->n, "random whole set");

    /* scan until the cursor returns to 0: every member at least once */
    c.n = 0;
    uint64_t cur = 0;
    do {
        cur = gb_zset_scan(z, cur, coll_emit, &c);
    } while (cur);
    for (size_t i = 0; i < md->n; i++) {
        bool seen = false;
        for (size_t j = 0; j < c.n && !seen; j++)
            seen = gb_slice_eq(ms(&c.e[j]), ms(&md->e[i]));
        TU_CHECK(seen, "scan missed a member");
    }
    TU_CHECK(c.n >= md->n, "scan");
    free(c.e);
    free(want);
}

/* ---- ZADD model (Redis's zsetAdd) ---- */

static int model_add(zmodel *md, const gb_types_config *cfg, int flags, size_t n, const double *sc,
                     const gb_slice *mm, gb_zadd_result *res)
{
    bool nx = flags & GB_ZADD_NX, xx = flags & GB_ZADD_XX, gt = flags & GB_ZADD_GT, lt = flags & GB_ZADD_LT;
    bool incr = flags & GB_ZADD_INCR;
    memset(res, 0, sizeof *res);
    if ((nx && xx) || (gt && nx) || (lt && nx) || (gt && lt) || (incr && n != 1))
        return GB_EINVAL;
    for (size_t i = 0; i < n; i++) {
        double score = sc[i];
        if (isnan(score))
            return GB_ERANGE;
        ssize_t at = model_find(md, mm[i]);
        if (at >= 0) {
            double cur = md->e[at].score;
            if (nx)
                continue;
            if (incr) {
                score += cur;
                if (isnan(score))
                    return GB_ERANGE;
            }
            if ((lt && score >= cur) || (gt && score <= cur))
                continue;
            res->processed++;
            res->score = score;
            if (score != cur) {
                model_remove(md, (size_t)at, 1);
                model_insert(md, score, mm[i]);
                res->updated++;
            }
        } else if (!xx) {
            if (!md->big &&
                (md->n + 1 > cfg->zset_max_listpack_entries || mm[i].len > cfg->zset_max_listpack_value))
                md->big = true;
            model_insert(md, score, mm[i]);
            res->added++;
            res->processed++;
            res->score = score;
        }
    }
    return 0;
}

static const int flag_sets[] = {
    0,
    GB_ZADD_NX,
    GB_ZADD_XX,
    GB_ZADD_GT,
    GB_ZADD_LT,
    GB_ZADD_XX | GB_ZADD_GT,
    GB_ZADD_XX | GB_ZADD_LT,
    GB_ZADD_NX | GB_ZADD_XX, /* invalid */
    GB_ZADD_GT | GB_ZADD_LT, /* invalid */
};

static void run(const gb_types_config *cfg, size_t ops, uint64_t universe, bool equal)
{
    gb_zset *z = gb_zset_new(cfg, 0, 0);
    zmodel md = {0};
    md.big = false;
    char bufs[4][MLEN];
    size_t max_n = 0;
    bool was_big = false;
    for (size_t op = 0; op < ops; op++) {
        int what = (int)tu_rand(100);
        if (what < 45) {
            size_t n = 1 + (size_t)tu_rand(3);
            int flags = flag_sets[tu_rand(GB_ARRAY_LEN(flag_sets))];
            if (!equal && tu_rand(6) == 0) { /* INCR would break the equal scores */
                flags |= GB_ZADD_INCR;
                if (tu_rand(8))
                    n = 1;
            }
            double sc[4];
            gb_slice mm[4];
            for (size_t i = 0; i < n; i++) {
                sc[i] = rand_score(equal);
                mm[i] = gb_slice_make(bufs[i], rand_member(bufs[i], universe));
            }
            /* Sometimes aim at a NaN: +inf + -inf. */
            if ((flags & GB_ZADD_INCR) && n == 1 && md.n && tu_rand(4) == 0) {
                const zent *e = &md.e[tu_rand(md.n)];
                memcpy(bufs[0], e->m, e->len);
                mm[0].len = e->len;
                sc[0] = isinf(e->score) ? -e->score : sc[0];
            }
            gb_zadd_result got, want;
            int wrc = model_add(&md, cfg, flags, n, sc, mm, &want);
            int grc = gb_zset_add_many(z, cfg, flags, n, sc, mm, &got);
            TU_CHECK(grc == wrc, "zadd rc %d vs %d (flags %x)", grc, wrc, flags);
            if (grc == 0) {
                TU_CHECK(got.added == want.added && got.updated == want.updated &&
                             got.processed == want.processed,
                         "zadd counts %zu/%zu/%zu vs %zu/%zu/%zu", got.added, got.updated, got.processed,
                         want.added, want.updated, want.processed);
                if (want.processed)
                    same_score(got.score, want.score, "zadd result score");
            }
        } else if (what < 60) {
            size_t n = 1 + (size_t)tu_rand(3);
            gb_slice mm[3];
            size_t want = 0;
            for (size_t i = 0; i < n; i++) {
                mm[i] = md.n && tu_rand(3) ? ms(&md.e[tu_rand(md.n)])
                                           : gb_slice_make(bufs[i], rand_member(bufs[i], universe));
            }
            /* The model's slices point into the model: copy first. */
            for (size_t i = 0; i < n; i++) {
                memmove(bufs[i], mm[i].ptr, mm[i].len);
                mm[i].ptr = bufs[i];
            }
            for (size_t i = 0; i < n; i++) {
                ssize_t at = model_find(&md, mm[i]);
                if (at >= 0) {
                    model_remove(&md, (size_t)at, 1);
                    want++;
                }
            }
            TU_CHECK(gb_zset_remove(z, n, mm) == want, "zrem count");
        } else if (what < 66) {
            int64_t a = (int64_t)tu_rand(md.n + 4) - 2 - (tu_rand(3) ? 0 : (int64_t)md.n);
            int64_t b = a + (int64_t)tu_rand(6);
            size_t x, y, want = 0;
            if (norm(a, b, md.n, &x, &y)) {
                want = y - x + 1;
                model_remove(&md, x, want);
            }
            TU_CHECK(gb_zset_remrange_rank(z, a, b) == want, "remrange_rank");
        } else if (what < 72) {
            gb_score_range r;
            rand_score_range(&r, equal);
            size_t want = 0;
            for (size_t i = 0; i < md.n;) {
                if (model_in_range(md.e[i].score, &r)) {
                    model_remove(&md, i, 1);
                    want++;
                } else {
                    i++;
                }
            }
            TU_CHECK(gb_zset_remrange_score(z, &r) == want, "remrange_score");
        } else if (what < 76 && (equal || !md.big)) {
            gb_lex_range lr;
            rand_lex_bound(&lr.min, bufs[0], universe);
            rand_lex_bound(&lr.max, bufs[1], universe);
            zent *del = malloc((md.n + 1) * sizeof *del);
            size_t want = model_lex(&md, &lr, false, 0, -1, del);
            if (want) {
                ssize_t at = model_find(&md, ms(&del[0]));
                model_remove(&md, (size_t)at, want);
            }
            free(del);
            TU_CHECK(gb_zset_remrange_lex(z, &lr) == want, "remrange_lex");
        } else if (what < 82) {
            bool max = tu_rand(2);
            size_t count = (size_t)tu_rand(4) + (tu_rand(10) == 0 ? md.n : 0);
            size_t k = count < md.n ? count : md.n;
            zent *want = malloc((k + 1) * sizeof *want);
            for (size_t i = 0; i < k; i++)
                want[i] = md.e[max ? md.n - 1 - i : i];
            coll c = {0};
            TU_CHECK(gb_zset_pop(z, max, count, coll_emit, &c) == k, "pop count");
            expect_list(&c, want, k, "pop");
            model_remove(&md, max ? md.n - k : 0, k);
            free(want);
            free(c.e);
        } else if (what < 84) {
            gb_zset_convert_if_fits(z, cfg);
            size_t maxlen = 0;
            for (size_t i = 0; i < md.n; i++)
                maxlen = md.e[i].len > maxlen ? md.e[i].len : maxlen;
            if (md.big && md.n <= cfg->zset_max_listpack_entries && maxlen <= cfg->zset_max_listpack_value)
                md.big = false;
        } else if (what < 85) {
            gb_zset *c = gb_zset_dup(z);
            check_all(c, &md);
            gb_zset_free(z);
            z = c;
        }
        check_all(z, &md);
        spot_checks(z, &md, universe, equal);
        max_n = md.n > max_n ? md.n : max_n;
        was_big |= md.big;
    }
    /* The run must have crossed the threshold it is about. */
    TU_CHECK(was_big || max_n == 0, "never converted (max %zu members)", max_n);
    gb_zset_free(z);
    free(md.e);
}

static gb_types_config cfg_with(size_t entries, size_t value)
{
    gb_types_config c;
    gb_types_config_defaults(&c);
    c.zset_max_listpack_entries = entries;
    c.zset_max_listpack_value = value;
    return c;
}

static void test_model_default(void **state)
{
    (void)state;
    tu_reseed("default");
    gb_types_config c = cfg_with(128, 64);
    run(&c, 4000, 300, false);
}

static void test_model_tiny(void **state)
{
    (void)state;
    tu_reseed("tiny");
    size_t entries[] = {0, 1, 2, 3, 8};
    size_t values[] = {3, 5, 64};
    for (size_t i = 0; i < GB_ARRAY_LEN(entries); i++)
        for (size_t j = 0; j < GB_ARRAY_LEN(values); j++) {
            gb_types_config c = cfg_with(entries[i], values[j]);
            run(&c, 600, 12, false);
        }
}

static void test_model_equal_scores(void **state)
{
    (void)state;
    tu_reseed("equal");
    gb_types_config c = cfg_with(16, 64);
    run(&c, 3000, 200, true);
    c = cfg_with(128, 64);
    run(&c, 1500, 60, true);
}

static void test_bad_flags_change_nothing(void **state)
{
    (void)state;
    gb_types_config cfg;
    gb_types_config_defaults(&cfg);
    gb_zset *z = gb_zset_new(&cfg, 1, 1);
    double s[2] = {1, 2};
    gb_slice m[2] = {gb_slice_cstr("a"), gb_slice_cstr("b")};
    gb_zadd_result r;
    assert_int_equal(gb_zset_add_many(z, &cfg, GB_ZADD_NX | GB_ZADD_XX, 1, s, m, &r), GB_EINVAL);
    assert_int_equal(gb_zset_add_many(z, &cfg, GB_ZADD_GT | GB_ZADD_NX, 1, s, m, &r), GB_EINVAL);
    assert_int_equal(gb_zset_add_many(z, &cfg, GB_ZADD_INCR, 2, s, m, &r), GB_EINVAL);
    assert_int_equal(gb_zset_card(z), 0);
    double nan = NAN;
    assert_int_equal(gb_zset_add_many(z, &cfg, 0, 1, &nan, m, &r), GB_ERANGE);
    /* pairs before a failing one stay applied */
    double s2[2] = {INFINITY, NAN};
    assert_int_equal(gb_zset_add_many(z, &cfg, 0, 2, s2, m, &r), GB_ERANGE);
    assert_int_equal(gb_zset_card(z), 1);
    double minus = -INFINITY;
    assert_int_equal(gb_zset_add_many(z, &cfg, GB_ZADD_INCR, 1, &minus, m, &r), GB_ERANGE);
    double got;
    assert_true(gb_zset_score(z, m[0], &got) && isinf(got) && got > 0);
    assert_int_equal(gb_zset_incrby(z, &cfg, m[0], -INFINITY, &got), GB_ERANGE);
    assert_int_equal(gb_zset_incrby(z, &cfg, m[1], 2.5, &got), 0);
    assert_true(got == 2.5);
    assert_int_equal(gb_zset_incrby(z, &cfg, m[1], -1, &got), 0);
    assert_true(got == 1.5 && gb_zset_score(z, m[1], &got) && got == 1.5);
    gb_zset_free(z);
}

/* Scores whose listpack form is unusual: -0, int64 limits, and a double
 * whose 8 raw bytes spell "12345678" (stored with a marker byte). */
static void test_listpack_score_forms(void **state)
{
    (void)state;
    gb_types_config cfg;
    gb_types_config_defaults(&cfg);
    double digits;
    memcpy(&digits, "12345678", 8);
    double scores[] = {-0.0,
                       0.0,
                       9223372036854775807.0,
                       -9223372036854775808.0,
                       9223372036854775808.0,
                       4611686018427387904.0,
                       digits,
                       1e-300,
                       -1.5,
                       127,
                       128,
                       -4096,
                       5e-324};
    gb_zset *z = gb_zset_new(&cfg, 1, 1);
    char buf[16];
    for (size_t i = 0; i < GB_ARRAY_LEN(scores); i++) {
        gb_slice m = gb_slice_make(buf, (size_t)snprintf(buf, sizeof buf, "k%zu", i));
        gb_zadd_result r;
        assert_int_equal(gb_zset_add_many(z, &cfg, 0, 1, &scores[i], &m, &r), 0);
    }
    assert_int_equal(gb_zset_encoding(z), GB_ZSET_LISTPACK);
    verify(z);
    for (size_t i = 0; i < GB_ARRAY_LEN(scores); i++) {
        gb_slice m = gb_slice_make(buf, (size_t)snprintf(buf, sizeof buf, "k%zu", i));
        double got;
        assert_true(gb_zset_score(z, m, &got));
        same_score(got, scores[i], "listpack score form");
    }
    gb_zset_free(z);
}

/* ---- algebra ---- */

typedef struct msrc {
    int kind; /* 0 missing, 1 zset, 2 set */
    zmodel md;
    gb_zset *z;
    gb_set *s;
    double w;
} msrc;

static void agg(double *t, double v, gb_zagg a)
{
    if (a == GB_ZAGG_SUM) {
        *t += v;
        if (isnan(*t))
            *t = 0;
    } else if (a == GB_ZAGG_MIN) {
        *t = v < *t ? v : *t;
    } else {
        *t = v > *t ? v : *t;
    }
}

static bool src_has(const msrc *s, gb_slice m, double *score)
{
    if (s->kind == 0)
        return false;
    ssize_t at = model_find(&s->md, m);
    if (at < 0)
        return false;
    *score = s->kind == 2 ? 1.0 : s->md.e[at].score;
    return true;
}

static void test_algebra(void **state)
{
    (void)state;
    tu_reseed("algebra");
    static const double weights[] = {1, 1, 2, 0.5, -1, 0, INFINITY, -INFINITY, 0.1};
    for (int round = 0; round < 400; round++) {
        gb_types_config cfg = cfg_with(round % 2 ? 128 : 4, round % 3 ? 64 : 6);
        size_t n = 1 + (size_t)tu_rand(4);
        msrc src[4];
        memset(src, 0, sizeof src);
        gb_zsrc zs[4];
        char buf[MLEN];
        for (size_t i = 0; i < n; i++) {
            src[i].kind = (int)tu_rand(8) == 0 ? 0 : (tu_rand(4) == 0 ? 2 : 1);
            src[i].w = weights[tu_rand(GB_ARRAY_LEN(weights))];
            if (i > 0 && tu_rand(8) == 0) { /* the same key twice */
                src[i] = src[i - 1];
                src[i].w = weights[tu_rand(GB_ARRAY_LEN(weights))];
                zs[i] = (gb_zsrc){src[i].z, src[i].s, src[i].w};
                continue;
            }
            size_t k = (size_t)tu_rand(round % 2 ? 40 : 8);
            if (src[i].kind == 1)
                src[i].z = gb_zset_new(&cfg, 0, 0);
            if (src[i].kind == 2)
                src[i].s = gb_set_new();
            for (size_t j = 0; j < k; j++) {
                gb_slice m = gb_slice_make(buf, rand_member(buf, 60));
                double s = rand_score(false);
                if (src[i].kind == 1) {
                    gb_zadd_result r, r2;
                    model_add(&src[i].md, &cfg, 0, 1, &s, &m, &r2);
                    gb_zset_add_many(src[i].z, &cfg, 0, 1, &s, &m, &r);
                } else if (src[i].kind == 2 && model_find(&src[i].md, m) < 0) {
                    model_insert(&src[i].md, 1.0, m);
                    gb_set_add(src[i].s, &cfg, m);
                }
            }
            zs[i] = (gb_zsrc){src[i].z, src[i].s, src[i].w};
        }
        gb_zagg ag = (gb_zagg)tu_rand(3);

        /* Model: inputs in stable size order, Redis's loops. */
        size_t order[4];
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && src[order[j - 1]].md.n > src[order[j]].md.n; j--) {
                size_t t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
        zmodel uni = {0}, inter = {0}, diff = {0};
        for (size_t oi = 0; oi < n; oi++) {
            const msrc *s = &src[order[oi]];
            if (s->kind == 0)
                continue;
            for (size_t j = 0; j < s->md.n; j++) {
                double v = s->w * (s->kind == 2 ? 1.0 : s->md.e[j].score);
                if (isnan(v))
                    v = 0;
                ssize_t at = model_find(&uni, ms(&s->md.e[j]));
                if (at >= 0)
                    agg(&uni.e[at].score, v, ag);
                else
                    model_insert(&uni, v, ms(&s->md.e[j])); /* re-sorted below */
            }
        }
        {
            const msrc *s0 = &src[order[0]];
            for (size_t j = 0; s0->kind && j < s0->md.n; j++) {
                gb_slice m = ms(&s0->md.e[j]);
                double score = s0->w * (s0->kind == 2 ? 1.0 : s0->md.e[j].score), v;
                if (isnan(score))
                    score = 0;
                size_t k = 1;
                for (; k < n; k++) {
                    if (!src_has(&src[order[k]], m, &v))
                        break;
                    agg(&score, v * src[order[k]].w, ag);
                }
                if (k == n)
                    model_insert(&inter, score, m);
            }
            for (size_t j = 0; src[0].kind && j < src[0].md.n; j++) {
                gb_slice m = ms(&src[0].md.e[j]);
                double v;
                size_t k = 1;
                for (; k < n; k++)
                    if (src_has(&src[k], m, &v))
                        break;
                if (k == n)
                    model_insert(&diff, src[0].kind == 2 ? 1.0 : src[0].md.e[j].score, m);
            }
        }
        /* the union model accumulated scores in place: re-sort it */
        zmodel sorted = {0};
        for (size_t i = 0; i < uni.n; i++)
            model_insert(&sorted, uni.e[i].score, ms(&uni.e[i]));

        zmodel *models[3] = {&sorted, &inter, &diff};
        gb_zset *res[3] = {gb_zset_union(zs, n, ag, &cfg), gb_zset_inter(zs, n, ag, &cfg),
                           gb_zset_diff(zs, n, &cfg)};
        static const char *names[] = {"union", "inter", "diff"};
        for (int k = 0; k < 3; k++) {
            size_t maxlen = 0;
            for (size_t i = 0; i < models[k]->n; i++)
                maxlen = models[k]->e[i].len > maxlen ? models[k]->e[i].len : maxlen;
            models[k]->big =
                !(models[k]->n <= cfg.zset_max_listpack_entries && maxlen <= cfg.zset_max_listpack_value);
            coll c = {0};
            gb_zset_range_rank(res[k], 0, -1, false, coll_emit, &c);
            expect_list(&c, models[k]->e, models[k]->n, names[k]);
            check_all(res[k], models[k]);
            free(c.e);
            gb_zset_free(res[k]);
        }
        size_t limit = tu_rand(3) == 0 ? (size_t)tu_rand(4) + 1 : 0;
        size_t want = limit && inter.n > limit ? limit : inter.n;
        TU_CHECK(gb_zset_intercard(zs, n, limit) == want, "intercard");

        for (size_t i = 0; i < n; i++) {
            if (i > 0 && src[i].z == src[i - 1].z && src[i].s == src[i - 1].s)
                continue; /* a repeated key shares its objects */
            bool dup = false;
            for (size_t j = 0; j < i; j++)
                dup |= (src[i].z && src[i].z == src[j].z) || (src[i].s && src[i].s == src[j].s);
            if (dup)
                continue;
            gb_zset_free(src[i].z);
            gb_set_free(src[i].s);
            free(src[i].md.e);
        }
        free(uni.e);
        free(sorted.e);
        free(inter.e);
        free(diff.e);
    }
}

/* ---- memory per member ---- */

static void test_memory(void **state)
{
    (void)state;
    tu_reseed("memory");
    gb_types_config cfg;
    gb_types_config_defaults(&cfg);
    char buf[32];
    size_t before = gb_mem_used();
    const size_t big_n = 1000000;
    gb_zset *z = gb_zset_new(&cfg, 1, 8);
    for (size_t i = 0; i < big_n; i++) {
        double s = (double)gb_random_below(1000000);
        gb_slice m = gb_slice_make(buf, (size_t)snprintf(buf, sizeof buf, "member:%zu", i));
        gb_zadd_result r;
        gb_zset_add_many(z, &cfg, 0, 1, &s, &m, &r);
    }
    size_t used = gb_mem_used() - before;
    double per = (double)used / (double)big_n;
    print_message("zset 1M members (\"member:N\", random integer scores): %.1f bytes/member (%s)\n", per,
                  gb_zset_encoding_name(z));
    TU_CHECK(per < 80, "large zset uses %.1f bytes/member", per);
    verify(z);
    gb_zset_free(z);
    TU_CHECK(gb_mem_used() == before, "leak after free: %zu", gb_mem_used() - before);

    const size_t small_n = 100000;
    gb_zset **v = malloc(small_n * sizeof *v);
    before = gb_mem_used();
    for (size_t k = 0; k < small_n; k++) {
        v[k] = gb_zset_new(&cfg, 1, 8);
        for (int i = 0; i < 10; i++) {
            double s = (double)gb_random_below(1000);
            gb_slice m = gb_slice_make(buf, (size_t)snprintf(buf, sizeof buf, "member:%d", i));
            gb_zadd_result r;
            gb_zset_add_many(v[k], &cfg, 0, 1, &s, &m, &r);
        }
    }
    used = gb_mem_used() - before;
    print_message("100k zsets x 10 members: %.1f bytes/member incl. the 16-byte object header (%s)\n",
                  (double)used / (double)(small_n * 10), gb_zset_encoding_name(v[0]));
    for (size_t k = 0; k < small_n; k++)
        gb_zset_free(v[k]);
    free(v);
    TU_CHECK(gb_mem_used() == before, "leak after free");
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_default),
        cmocka_unit_test(test_model_tiny),
        cmocka_unit_test(test_model_equal_scores),
        cmocka_unit_test(test_bad_flags_change_nothing),
        cmocka_unit_test(test_listpack_score_forms),
        cmocka_unit_test(test_algebra),
        cmocka_unit_test(test_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
