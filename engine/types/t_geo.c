/*
 * Geo indexes over the sorted-set type (see t_geo.h).
 */
#include "engine/types/t_geo.h"

#include <stdlib.h>

#include "engine/base/mem.h"

void gb_geo_points_free(gb_geo_points *pts)
{
    gb_free(pts->p);
    gb_strbuf_free(&pts->names);
    memset(pts, 0, sizeof *pts);
}

gb_result gb_geo_read(gb_db *db, gb_slice key, gb_tobj *o, const gb_zset **z)
{
    int found = gb_tobj_lookup(db, key, GB_TYPE_ZSET, false, o);
    *z = found > 0 ? &o->o.z : NULL;
    return found < 0 ? GB_R_WRONGTYPE : GB_R_OK;
}

bool gb_geo_member_xy(const gb_zset *z, gb_slice member, double xy[2])
{
    double score;
    if (!gb_zset_score(z, member, &score))
        return false;
    gb_geo_decode_score(score, xy);
    return true;
}

typedef struct scan_ctx {
    gb_geo_matcher match;
    gb_geo_points *out;
    size_t limit;
    gb_geo_point pending; /* the match want() found, completed by emit() */
} scan_ctx;

static bool points_full(const scan_ctx *s) { return s->limit && s->out->n >= s->limit; }

static int scan_want(void *ctx, double score)
{
    scan_ctx *s = ctx;
    if (points_full(s))
        return GB_ZSCAN_STOP; /* ANY: Redis stops the range here */
    double xy[2];
    if (!gb_geo_match(&s->match, score, xy, &s->pending.dist))
        return GB_ZSCAN_SKIP;
    s->pending.lon = xy[0];
    s->pending.lat = xy[1];
    s->pending.score = score;
    return GB_ZSCAN_EMIT;
}

static void scan_emit(void *ctx, gb_slice member, double score)
{
    (void)score;
    scan_ctx *s = ctx;
    gb_geo_points *out = s->out;
    if (out->n == out->cap) {
        out->cap = out->cap ? out->cap * 2 : 8;
        out->p = gb_realloc(out->p, out->cap * sizeof *out->p);
    }
    gb_geo_point p = s->pending;
    p.member = out->names.len;
    uint64_t len = member.len;
    gb_strbuf_add(&out->names, &len, sizeof len);
    gb_strbuf_add(&out->names, member.ptr, member.len);
    out->p[out->n++] = p;
}

void gb_geo_search(const gb_zset *z, const gb_geo_shape *shape, size_t limit, gb_geo_points *out)
{
    gb_geo_cover cover;
    gb_geo_cover_shape(shape, &cover);
    scan_ctx s = {.out = out, .limit = limit};
    gb_geo_matcher_init(&s.match, shape);
    int last = -1;
    for (int i = 0; i < 9; i++) {
        gb_geohash b = cover.box[i];
        if (!b.bits && !b.step)
            continue;
        /* Huge radii make neighbours coincide: a box equal to the last one
         * scanned is skipped (Redis compares with that one only). */
        if (last > 0 && b.bits == cover.box[last].bits && b.step == cover.box[last].step)
            continue;
        if (points_full(&s))
            break;
        double min, max;
        gb_geo_box_scores(b, &min, &max);
        gb_zset_scan_scores(z, min, max, scan_want, scan_emit, &s);
        last = i;
    }
}

/* ---- ordering ---- */

typedef int point_cmp(const void *, const void *);

static int by_dist_asc(const void *a, const void *b)
{
    const gb_geo_point *pa = a, *pb = b;
    return pa->dist > pb->dist ? 1 : pa->dist == pb->dist ? 0 : -1;
}

static int by_dist_desc(const void *a, const void *b) { return -by_dist_asc(a, b); }

static void swap_points(gb_geo_point *a, gb_geo_point *b)
{
    gb_geo_point t = *a;
    *a = *b;
    *b = t;
}

/* Swaps the n points from a with the n from b, pairwise. */
static void swap_runs(gb_geo_point *a, gb_geo_point *b, ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++)
        swap_points(a + i, b + i);
}

static gb_geo_point *median3(gb_geo_point *a, gb_geo_point *b, gb_geo_point *c, point_cmp *cmp)
{
    return cmp(a, b) < 0 ? (cmp(b, c) < 0 ? b : (cmp(a, c) < 0 ? c : a))
                         : (cmp(b, c) > 0 ? b : (cmp(a, c) < 0 ? a : c));
}

/* Whether the points [s, e] miss the range [lo, hi] that must end sorted. */
static bool outside(const gb_geo_point *s, const gb_geo_point *e, const gb_geo_point *lo, const gb_geo_point *hi)
{
    return (lo < s && hi < s) || (lo > e && hi > e);
}

/* Redis's _pqsort over points: the same pivots, the same partition with
 * equal keys gathered at both ends, the same order of swaps. */
static void partial_sort(gb_geo_point *a, ptrdiff_t n, point_cmp *cmp, const gb_geo_point *lo,
                         const gb_geo_point *hi)
{
    for (;;) {
        if (n < 7) {
            for (gb_geo_point *pm = a + 1; pm < a + n; pm++)
                for (gb_geo_point *pl = pm; pl > a && cmp(pl - 1, pl) > 0; pl--)
                    swap_points(pl, pl - 1);
            return;
        }
        gb_geo_point *pm = a + n / 2;
        if (n > 7) {
            gb_geo_point *pl = a, *pn = a + n - 1;
            if (n > 40) {
                ptrdiff_t d = n / 8;
                pl = median3(pl, pl + d, pl + 2 * d, cmp);
                pm = median3(pm - d, pm, pm + d, cmp);
                pn = median3(pn - 2 * d, pn - d, pn, cmp);
            }
            pm = median3(pl, pm, pn, cmp);
        }
        swap_points(a, pm);
        gb_geo_point *pa = a + 1, *pb = a + 1, *pc = a + n - 1, *pd = a + n - 1;
        for (;;) {
            int r;
            while (pb <= pc && (r = cmp(pb, a)) <= 0) {
                if (r == 0)
                    swap_points(pa++, pb);
                pb++;
            }
            while (pb <= pc && (r = cmp(pc, a)) >= 0) {
                if (r == 0)
                    swap_points(pc, pd--);
                pc--;
            }
            if (pb > pc)
                break;
            swap_points(pb++, pc--);
        }
        gb_geo_point *pn = a + n;
        ptrdiff_t r = pa - a < pb - pa ? pa - a : pb - pa;
        swap_runs(a, pb - r, r);
        r = pd - pc < pn - pd - 1 ? pd - pc : pn - pd - 1;
        swap_runs(pb, pn - r, r);
        if ((r = pb - pa) > 1 && !outside(a, a + r - 1, lo, hi))
            partial_sort(a, r, cmp, lo, hi);
        if ((r = pd - pc) <= 1)
            return;
        a = pn - r; /* the upper part: iterate rather than recurse */
        n = r;
        if (outside(a, a + n - 1, lo, hi))
            return;
    }
}

void gb_geo_points_sort(gb_geo_points *pts, size_t first, bool desc)
{
    point_cmp *cmp = desc ? by_dist_desc : by_dist_asc;
    if (pts->n < 2)
        return; /* nothing to order (and qsort may not see a NULL array) */
    if (first >= pts->n)
        qsort(pts->p, pts->n, sizeof *pts->p, cmp);
    else if (first > 0)
        partial_sort(pts->p, (ptrdiff_t)pts->n, cmp, pts->p, pts->p + first - 1);
}

void gb_geo_store(gb_db *db, gb_slice dst, const gb_geo_points *pts, size_t n, bool by_dist, double conversion)
{
    if (n == 0) {
        gb_types_store(db, dst, GB_TYPE_ZSET, NULL);
        return;
    }
    size_t maxlen = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = gb_geo_point_member(pts, &pts->p[i]).len;
        maxlen = len > maxlen ? len : maxlen;
    }
    gb_types_config cfg = gb_types_cfg(db->eng);
    gb_zset *z = gb_zset_new(&cfg, n, maxlen);
    for (size_t i = 0; i < n; i++) {
        const gb_geo_point *p = &pts->p[i];
        double score = by_dist ? p->dist / conversion : p->score;
        gb_slice m = gb_geo_point_member(pts, p);
        gb_zadd_result res;
        gb_zset_add_many(z, &cfg, 0, 1, &score, &m, &res);
    }
    gb_types_store(db, dst, GB_TYPE_ZSET, z); /* one change... */
    db->eng->stats.dirty += n - 1;            /* ...Redis counts one per member stored */
}
