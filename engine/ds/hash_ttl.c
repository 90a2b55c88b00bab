/*
 * Hash-field deadlines: the GB_HASH_TTL wrapper of engine/ds/hash_ttl.h.
 */
#include "engine/ds/hash_ttl.h"

#include <math.h>
#include <stdlib.h>

#include "engine/base/mem.h"
#include "engine/base/score.h"
#include "engine/ds/listpack.h"

/* The deadline index's own thresholds (Redis's zset defaults): they are not
 * the user's sorted sets, so CONFIG SET zset-max-* does not reach them. */
static const gb_types_config ttl_index_cfg = {
    .zset_max_listpack_entries = 128,
    .zset_max_listpack_value = 64,
};

static gb_hash_ex *ex_of(const gb_hash *h) { return (gb_hash_ex *)h->p; }

static void adopt_zset(gb_zset *dst, gb_zset *heap)
{
    *dst = *heap;
    gb_free(heap);
}

void gb_hash_ttl_enable(gb_hash *h)
{
    if (h->enc == GB_HASH_TTL)
        return;
    gb_hash_ex *ex = gb_malloc(sizeof *ex);
    ex->fields = *h;
    adopt_zset(&ex->ttl, gb_zset_new(&ttl_index_cfg, 0, 0));
    h->enc = GB_HASH_TTL;
    h->p = ex;
}

int64_t gb_hash_ttl_get(const gb_hash *h, gb_slice field)
{
    double when;
    if (h->enc != GB_HASH_TTL || !gb_zset_score(&ex_of(h)->ttl, field, &when))
        return -1;
    return (int64_t)when;
}

/* ---- the listpack's order (Redis 7.4's listpackex) ----------------------------
 * While the fields are a listpack, Redis keeps them in deadline order: the
 * fields that have one first, earliest first (a field given a deadline goes
 * before the first field whose deadline is equal or later, or has none),
 * then the fields without one, in the order they got there (a new field, or
 * one whose deadline went, is appended). HGETALL, HKEYS, HVALS, HSCAN and
 * HRANDFIELD show that order, so the fields here keep it too. */

static bool fields_in_listpack(const gb_hash *h)
{
    return h->enc == GB_HASH_TTL && ex_of(h)->fields.enc == GB_HASH_LISTPACK;
}

/* The entry of field in a field/value listpack and its pair index, or NULL. */
static unsigned char *find_pair(unsigned char *lp, gb_slice field, size_t *index)
{
    gb_lp_key k;
    gb_lp_key_init(&k, field);
    size_t i = 0;
    for (unsigned char *p = gb_lp_first(lp); p; i++) {
        if (gb_lp_key_eq(p, &k)) {
            *index = i;
            return p;
        }
        p = gb_lp_next(lp, p);
        p = p ? gb_lp_next(lp, p) : NULL;
    }
    return NULL;
}

static gb_slice copy_slice(gb_slice s)
{
    char *p = gb_malloc(s.len ? s.len : 1);
    if (s.len)
        memcpy(p, s.ptr, s.len);
    return gb_slice_make(p, s.len);
}

/* Moves field's pair to pair index `to`, counted among the other pairs
 * (their count: the end). */
static void move_pair(gb_hash *fields, gb_slice field, size_t to)
{
    unsigned char *lp = fields->p;
    size_t at;
    unsigned char *fp = find_pair(lp, field, &at);
    if (!fp || at == to)
        return;
    char fbuf[GB_LP_INT_BUF], vbuf[GB_LP_INT_BUF];
    unsigned char *vp = gb_lp_next(lp, fp);
    gb_slice f = copy_slice(gb_lp_get_slice(fp, fbuf)), v = copy_slice(gb_lp_get_slice(vp, vbuf));
    lp = gb_lp_delete(lp, fp, &vp);
    lp = gb_lp_delete(lp, vp, NULL);
    unsigned char *newp;
    lp = gb_lp_insert(lp, gb_lp_seek(lp, (long)(2 * to)), false, f, &newp);
    fields->p = gb_lp_insert(lp, newp, true, v, NULL);
    gb_free((void *)f.ptr);
    gb_free((void *)v.ptr);
}

/* After field got the deadline when_ms (it is in the index): its place. */
static void place_by_deadline(gb_hash *h, gb_slice field, int64_t when_ms)
{
    if (!fields_in_listpack(h))
        return;
    gb_score_range earlier = {-INFINITY, (double)when_ms, false, true};
    move_pair(&ex_of(h)->fields, field, gb_zset_count(&ex_of(h)->ttl, &earlier));
}

/* After field lost its deadline: to the end. */
static void place_last(gb_hash *h, gb_slice field)
{
    if (fields_in_listpack(h))
        move_pair(&ex_of(h)->fields, field, gb_lp_count(ex_of(h)->fields.p) / 2 - 1);
}

static void index_set(gb_hash *h, gb_slice field, int64_t when_ms)
{
    gb_hash_ttl_enable(h);
    double score = (double)when_ms; /* exact: when_ms <= 2^48 */
    gb_zadd_result res;
    gb_zset_add_many(&ex_of(h)->ttl, &ttl_index_cfg, 0, 1, &score, &field, &res);
}

void gb_hash_ttl_set(gb_hash *h, gb_slice field, int64_t when_ms)
{
    index_set(h, field, when_ms);
    place_by_deadline(h, field, when_ms);
}

bool gb_hash_ttl_forget(gb_hash *h, gb_slice field)
{
    return h->enc == GB_HASH_TTL && gb_zset_remove(&ex_of(h)->ttl, 1, &field) == 1;
}

bool gb_hash_ttl_clear(gb_hash *h, gb_slice field)
{
    if (!gb_hash_ttl_forget(h, field))
        return false;
    place_last(h, field);
    return true;
}

void gb_hash_ttl_load(gb_hash *h, gb_slice field, int64_t when_ms) { index_set(h, field, when_ms); }

/* One pair of the listpack and its deadline, for the sort after a load. */
typedef struct timed_pair {
    unsigned char *at; /* its field entry in the old listpack */
    size_t bytes;      /* of both entries */
    int64_t when;      /* INT64_MAX: none */
    size_t index;      /* its place in the file: keeps the sort stable */
} timed_pair;

static int by_deadline_then_place(const void *a, const void *b)
{
    const timed_pair *x = a, *y = b;
    if (x->when != y->when)
        return x->when < y->when ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

void gb_hash_ttl_loaded(gb_hash *h)
{
    if (!fields_in_listpack(h))
        return;
    unsigned char *lp = ex_of(h)->fields.p;
    size_t n = gb_lp_count(lp) / 2;
    timed_pair *t = gb_malloc((n ? n : 1) * sizeof *t);
    size_t i = 0;
    char buf[GB_LP_INT_BUF];
    for (unsigned char *p = gb_lp_first(lp); p && i < n; i++) {
        unsigned char *vp = gb_lp_next(lp, p);
        int64_t when = gb_hash_ttl_get(h, gb_lp_get_slice(p, buf));
        t[i] = (timed_pair){p, gb_lp_entry_bytes(p) + gb_lp_entry_bytes(vp), when < 0 ? INT64_MAX : when, i};
        p = gb_lp_next(lp, vp);
    }
    /* Stable (equal deadlines keep the file's order): a file that kept
     * Redis's order loads exactly as it was. */
    qsort(t, i, sizeof *t, by_deadline_then_place);
    n = i;
    unsigned char *out = gb_lp_new(gb_lp_bytes(lp));
    for (i = 0; i < n; i++)
        out = gb_lp_append_raw(out, t[i].at, t[i].bytes, 2);
    gb_lp_free(lp);
    ex_of(h)->fields.p = out;
    gb_free(t);
}

size_t gb_hash_ttl_count(const gb_hash *h) { return h->enc == GB_HASH_TTL ? gb_zset_card(&ex_of(h)->ttl) : 0; }

static void keep_score(void *ctx, gb_slice member, double score)
{
    (void)member;
    *(int64_t *)ctx = (int64_t)score;
}

int64_t gb_hash_ttl_min(const gb_hash *h)
{
    int64_t min = -1;
    if (h->enc == GB_HASH_TTL)
        gb_zset_range_rank(&ex_of(h)->ttl, 0, 0, false, keep_score, &min);
    return min;
}

static gb_score_range upto(int64_t now_ms)
{
    gb_score_range r = {-INFINITY, (double)now_ms, false, false};
    return r;
}

size_t gb_hash_ttl_expired_count(const gb_hash *h, int64_t now_ms)
{
    if (h->enc != GB_HASH_TTL)
        return 0;
    gb_score_range r = upto(now_ms);
    return gb_zset_count(&ex_of(h)->ttl, &r);
}

typedef struct each_ctx {
    gb_hash_ttl_emit_fn emit;
    void *ctx;
} each_ctx;

static void each_one(void *ctx, gb_slice member, double score)
{
    each_ctx *e = ctx;
    e->emit(e->ctx, member, (int64_t)score);
}

void gb_hash_ttl_each(const gb_hash *h, gb_hash_ttl_emit_fn emit, void *ctx)
{
    if (h->enc != GB_HASH_TTL)
        return;
    each_ctx e = {emit, ctx};
    gb_zset_range_rank(&ex_of(h)->ttl, 0, -1, false, each_one, &e);
}

/* The expired fields, copied out of the index before any is deleted. */
typedef struct field_list {
    gb_slice *f;
    size_t n;
} field_list;

static void copy_field(void *ctx, gb_slice member, double score)
{
    (void)score;
    field_list *l = ctx;
    l->f[l->n++] = copy_slice(member);
}

size_t gb_hash_ttl_expire(gb_hash *h, int64_t now_ms, size_t max, gb_hash_field_fn gone, void *ctx)
{
    if (!gb_hash_ttl_any_expired(h, now_ms) || max == 0)
        return 0;
    gb_hash_ex *ex = ex_of(h);
    size_t n = gb_hash_ttl_expired_count(h, now_ms);
    if (n > max)
        n = max;
    field_list l = {gb_malloc(n * sizeof(gb_slice)), 0};
    gb_score_range r = upto(now_ms);
    gb_zset_range_score(&ex->ttl, &r, false, 0, (int64_t)n, copy_field, &l);
    for (size_t i = 0; i < l.n; i++) {
        if (gone)
            gone(ctx, l.f[i]);
        gb_hash_del(h, 1, &l.f[i]); /* drops the deadline too */
        gb_free((void *)l.f[i].ptr);
    }
    gb_free(l.f);
    return l.n;
}

size_t gb_hash_ttl_mem(const gb_hash *h)
{
    if (h->enc != GB_HASH_TTL)
        return 0;
    return gb_mem_accounted(h->p) + gb_zset_payload_mem(&ex_of(h)->ttl);
}

void gb_hash_ttl_release(gb_hash *h)
{
    gb_hash_ex *ex = ex_of(h);
    gb_hash_release(&ex->fields);
    gb_zset_release(&ex->ttl);
    gb_free(ex);
    h->p = NULL;
}

void gb_hash_ttl_dup_into(const gb_hash *src, gb_hash *dst)
{
    const gb_hash_ex *s = ex_of(src);
    gb_hash_ex *d = gb_malloc(sizeof *d);
    gb_hash *f = gb_hash_dup(&s->fields);
    d->fields = *f;
    gb_free(f);
    adopt_zset(&d->ttl, gb_zset_dup(&s->ttl));
    dst->enc = GB_HASH_TTL;
    dst->p = d;
}

typedef struct verify_ctx {
    const gb_hash *fields;
    bool ok;
} verify_ctx;

static void verify_one(void *ctx, gb_slice field, int64_t when)
{
    verify_ctx *v = ctx;
    if (when < 0 || when > GB_HASH_TTL_MAX || !gb_hash_exists(v->fields, field))
        v->ok = false;
}

bool gb_hash_ttl_verify(const gb_hash *h)
{
    const gb_hash_ex *ex = ex_of(h);
    if (ex->fields.enc == GB_HASH_TTL || !gb_hash_verify(&ex->fields))
        return false;
    verify_ctx v = {&ex->fields, true};
    gb_hash_ttl_each(h, verify_one, &v);
    return v.ok;
}
