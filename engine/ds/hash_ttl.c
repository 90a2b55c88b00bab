/*
 * Hash-field deadlines: the GB_HASH_TTL wrapper of engine/ds/hash_ttl.h.
 * A listpack keeps its fields' deadlines in one sorted array beside it (the
 * fields are in deadline order); a hash table keeps each in its record's
 * trailer, with a min-heap of the records (engine/ds/hash_impl.h).
 */
#include "engine/ds/hash_ttl.h"

#include <stdlib.h>

#include "engine/base/mem.h"
#include "engine/ds/hash_impl.h"
#include "engine/ds/listpack.h"

static gb_hash_ex *ex_of(const gb_hash *h) { return (gb_hash_ex *)h->p; }

static bool fields_in_listpack(const gb_hash *h)
{
    return h->enc == GB_HASH_TTL && ex_of(h)->fields.enc == GB_HASH_LISTPACK;
}

static bool fields_in_table(const gb_hash *h)
{
    return h->enc == GB_HASH_TTL && ex_of(h)->fields.enc == GB_HASH_HASHTABLE;
}

static hbig *table_of(const gb_hash *h) { return (hbig *)ex_of(h)->fields.p; }

/* ---- the deadline heap of a timed table --------------------------------------- */

static void put_slot(hrec *r, uint32_t slot) { memcpy(hrec_trailer(r) + 6, &slot, sizeof slot); }

static int64_t heap_when(const hbig *b, uint32_t i) { return trailer_deadline(hrec_trailer(b->heap[i])); }

static void heap_place(hbig *b, uint32_t i, hrec *r)
{
    b->heap[i] = r;
    put_slot(r, i);
}

/* Moves the record at slot i up or down to where its deadline belongs. */
static void heap_fix(hbig *b, uint32_t i)
{
    hrec *r = b->heap[i];
    int64_t when = heap_when(b, i);
    while (i > 0 && heap_when(b, (i - 1) / 2) > when) {
        heap_place(b, i, b->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= b->nheap || c < i) /* (c < i: past 2^32) */
            break;
        if (c + 1 < b->nheap && heap_when(b, c + 1) < heap_when(b, c))
            c++;
        if (heap_when(b, c) >= when)
            break;
        heap_place(b, i, b->heap[c]);
        i = c;
    }
    heap_place(b, i, r);
}

static void heap_resize(hbig *b, uint32_t cap)
{
    b->heap = gb_realloc(b->heap, (size_t)cap * sizeof *b->heap);
    b->heap_cap = cap;
}

void gb_hbig_set_deadline(hbig *b, hrec *r, int64_t when_ms)
{
    unsigned char *t = hrec_trailer(r);
    uint32_t slot = trailer_slot(t);
    trailer_put(t, when_ms, slot);
    if (slot == GB_HREC_NO_SLOT) {
        if (b->nheap == b->heap_cap)
            heap_resize(b, b->heap_cap ? b->heap_cap + b->heap_cap / 2 : 4);
        slot = b->nheap++;
        heap_place(b, slot, r);
    }
    heap_fix(b, slot);
}

bool gb_hbig_clear_deadline(hbig *b, hrec *r)
{
    uint32_t slot = trailer_slot(hrec_trailer(r));
    if (slot == GB_HREC_NO_SLOT)
        return false;
    put_slot(r, GB_HREC_NO_SLOT);
    hrec *last = b->heap[--b->nheap];
    if (slot < b->nheap) {
        heap_place(b, slot, last);
        heap_fix(b, slot);
    }
    if (b->nheap == 0) {
        gb_free(b->heap);
        b->heap = NULL;
        b->heap_cap = 0;
    } else if (b->heap_cap > 16 && b->nheap < b->heap_cap / 4) {
        heap_resize(b, b->heap_cap / 2);
    }
    return true;
}

void gb_hbig_moved(hbig *b, hrec *r)
{
    uint32_t slot = trailer_slot(hrec_trailer(r));
    if (slot != GB_HREC_NO_SLOT)
        b->heap[slot] = r;
}

/* How many heap entries from slot i down are past at now_ms (only the due
 * part of the heap is visited). */
static size_t heap_count_due(const hbig *b, uint32_t i, int64_t now_ms)
{
    if (i >= b->nheap || heap_when(b, i) >= now_ms)
        return 0;
    return 1 + heap_count_due(b, 2 * i + 1, now_ms) + heap_count_due(b, 2 * i + 2, now_ms);
}

/* A timed copy of a table: every record with a trailer, deadlines kept. */
static hbig *timed_copy(hbig *src)
{
    hbig *t = gb_hbig_new(true);
    gb_htable_iter it;
    gb_htable_iter_init(&it, &src->ht);
    for (gb_hnode *n; (n = gb_htable_iter_next(&it));) {
        const hrec *r = (const hrec *)n;
        bool created;
        hrec *c = gb_hbig_put(t, hrec_field(r), hrec_value(r), &created);
        int64_t when = src->timed ? hrec_deadline(r) : -1;
        if (when >= 0)
            gb_hbig_set_deadline(t, c, when);
    }
    gb_htable_iter_done(&it);
    return t;
}

/* ---- the listpack's deadlines ---------------------------------------------------
 * While the fields are a listpack, Redis 7.4 keeps them in deadline order:
 * the fields that have one first, earliest first (a field given a deadline
 * goes before the first field whose deadline is equal or later, or has
 * none), then the fields without one, in the order they got there (a new
 * field, or one whose deadline went, is appended). HGETALL, HKEYS, HVALS,
 * HSCAN and HRANDFIELD show that order, so the fields here keep it too --
 * which makes the deadlines of the first ndl pairs one sorted array. */

static void dl_resize(gb_hash_ex *ex, uint32_t n)
{
    ex->ndl = n;
    if (n == 0) {
        gb_free(ex->dl);
        ex->dl = NULL;
        return;
    }
    ex->dl = gb_realloc(ex->dl, (size_t)n * sizeof *ex->dl);
}

static void dl_remove(gb_hash_ex *ex, size_t at, size_t n)
{
    memmove(&ex->dl[at], &ex->dl[at + n], (ex->ndl - at - n) * sizeof *ex->dl);
    dl_resize(ex, ex->ndl - (uint32_t)n);
}

/* The first index whose deadline is >= when (or > when: after_equals). */
static size_t dl_bound(const gb_hash_ex *ex, int64_t when, bool after_equals)
{
    size_t lo = 0, hi = ex->ndl;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ex->dl[mid] < when || (after_equals && ex->dl[mid] == when))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
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

/* Moves the pair whose field entry is fp (pair index at) to pair index
 * `to`, counted among the other pairs (their count: the end). */
static void move_pair(gb_hash *fields, unsigned char *fp, size_t at, size_t to)
{
    if (at == to)
        return;
    unsigned char *lp = fields->p;
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

/* Gives an existing field of the listpack the deadline when_ms, in its
 * place among the others' (before equal ones, or after: after_equals). */
static void listpack_set(gb_hash *h, gb_slice field, int64_t when_ms, bool after_equals)
{
    gb_hash_ex *ex = ex_of(h);
    size_t at;
    unsigned char *fp = find_pair(ex->fields.p, field, &at);
    if (!fp)
        return;
    bool had = at < ex->ndl;
    if (had) { /* out of the array, which keeps its room for the new one */
        memmove(&ex->dl[at], &ex->dl[at + 1], (ex->ndl - at - 1) * sizeof *ex->dl);
        ex->ndl--;
    }
    size_t to = dl_bound(ex, when_ms, after_equals);
    move_pair(&ex->fields, fp, at, to);
    if (!had)
        dl_resize(ex, ex->ndl + 1);
    else
        ex->ndl++;
    memmove(&ex->dl[to + 1], &ex->dl[to], (ex->ndl - 1 - to) * sizeof *ex->dl);
    ex->dl[to] = when_ms;
}

/* Turns a listpackex's fields into a timed table, deadlines kept. */
void gb_hash_ttl_to_hashtable(gb_hash *h)
{
    gb_hash_ex *ex = ex_of(h);
    unsigned char *lp = ex->fields.p;
    hbig *b = gb_hbig_new(true);
    char fb[GB_LP_INT_BUF], vb[GB_LP_INT_BUF];
    size_t i = 0;
    for (unsigned char *p = gb_lp_first(lp); p; i++) {
        unsigned char *vp = gb_lp_next(lp, p);
        bool created;
        hrec *r = gb_hbig_put(b, gb_lp_get_slice(p, fb), gb_lp_get_slice(vp, vb), &created);
        if (i < ex->ndl)
            gb_hbig_set_deadline(b, r, ex->dl[i]);
        p = gb_lp_next(lp, vp);
    }
    gb_lp_free(lp);
    dl_resize(ex, 0);
    ex->fields.enc = GB_HASH_HASHTABLE;
    ex->fields.p = b;
}

size_t gb_hash_ttl_del_listpack(gb_hash *h, size_t n, const gb_slice *fields)
{
    gb_hash_ex *ex = ex_of(h);
    size_t removed = 0;
    for (size_t i = 0; i < n; i++) {
        size_t at;
        unsigned char *p = find_pair(ex->fields.p, fields[i], &at);
        if (!p)
            continue;
        unsigned char *next;
        unsigned char *lp = gb_lp_delete(ex->fields.p, p, &next);
        ex->fields.p = gb_lp_delete(lp, next, NULL);
        if (at < ex->ndl)
            dl_remove(ex, at, 1);
        removed++;
    }
    return removed;
}

/* ---- the API ------------------------------------------------------------------- */

void gb_hash_ttl_enable(gb_hash *h)
{
    if (h->enc == GB_HASH_TTL)
        return;
    gb_hash_ex *ex = gb_malloc(sizeof *ex);
    memset(ex, 0, sizeof *ex);
    ex->fields = *h;
    if (h->enc == GB_HASH_HASHTABLE) { /* every record gets its trailer */
        ex->fields.p = timed_copy(h->p);
        gb_hbig_free(h->p);
    }
    h->enc = GB_HASH_TTL;
    h->p = ex;
}

int64_t gb_hash_ttl_get(const gb_hash *h, gb_slice field)
{
    if (h->enc != GB_HASH_TTL)
        return -1;
    const gb_hash_ex *ex = ex_of(h);
    if (ex->fields.enc == GB_HASH_HASHTABLE) {
        hrec *r = gb_hbig_find(ex->fields.p, field);
        return r ? hrec_deadline(r) : -1;
    }
    size_t at;
    if (ex->ndl == 0 || !find_pair(ex->fields.p, field, &at))
        return -1;
    return at < ex->ndl ? ex->dl[at] : -1;
}

static void set_deadline(gb_hash *h, gb_slice field, int64_t when_ms, bool after_equals)
{
    gb_hash_ttl_enable(h);
    if (fields_in_listpack(h)) {
        listpack_set(h, field, when_ms, after_equals);
        return;
    }
    hrec *r = gb_hbig_find(table_of(h), field);
    if (r)
        gb_hbig_set_deadline(table_of(h), r, when_ms);
}

void gb_hash_ttl_set(gb_hash *h, gb_slice field, int64_t when_ms) { set_deadline(h, field, when_ms, false); }

void gb_hash_ttl_load(gb_hash *h, gb_slice field, int64_t when_ms) { set_deadline(h, field, when_ms, true); }

bool gb_hash_ttl_clear(gb_hash *h, gb_slice field)
{
    if (fields_in_table(h)) {
        hrec *r = gb_hbig_find(table_of(h), field);
        return r && gb_hbig_clear_deadline(table_of(h), r);
    }
    gb_hash_ex *ex = ex_of(h);
    size_t at;
    unsigned char *fp;
    if (h->enc != GB_HASH_TTL || ex->ndl == 0 || !(fp = find_pair(ex->fields.p, field, &at)) || at >= ex->ndl)
        return false;
    dl_remove(ex, at, 1);
    move_pair(&ex->fields, fp, at, gb_lp_count(ex->fields.p) / 2 - 1); /* to the end, as Redis */
    return true;
}

size_t gb_hash_ttl_count(const gb_hash *h)
{
    if (h->enc != GB_HASH_TTL)
        return 0;
    return fields_in_table(h) ? table_of(h)->nheap : ex_of(h)->ndl;
}

int64_t gb_hash_ttl_min(const gb_hash *h)
{
    if (gb_hash_ttl_count(h) == 0)
        return -1;
    return fields_in_table(h) ? heap_when(table_of(h), 0) : ex_of(h)->dl[0];
}

size_t gb_hash_ttl_expired_count(const gb_hash *h, int64_t now_ms)
{
    if (h->enc != GB_HASH_TTL)
        return 0;
    return fields_in_table(h) ? heap_count_due(table_of(h), 0, now_ms) : dl_bound(ex_of(h), now_ms, false);
}

typedef struct timed_rec {
    const hrec *r;
    int64_t when;
} timed_rec;

static int by_deadline(const void *a, const void *b)
{
    const timed_rec *x = a, *y = b;
    return x->when < y->when ? -1 : x->when > y->when;
}

/* A table's fields with deadlines, earliest first (the heap, sorted). */
static void table_each(const hbig *b, gb_hash_ttl_emit_fn emit, void *ctx)
{
    timed_rec *t = gb_malloc((b->nheap ? b->nheap : 1) * sizeof *t);
    for (uint32_t i = 0; i < b->nheap; i++)
        t[i] = (timed_rec){b->heap[i], heap_when(b, i)};
    qsort(t, b->nheap, sizeof *t, by_deadline);
    for (uint32_t i = 0; i < b->nheap; i++)
        emit(ctx, hrec_field(t[i].r), t[i].when);
    gb_free(t);
}

void gb_hash_ttl_each(const gb_hash *h, gb_hash_ttl_emit_fn emit, void *ctx)
{
    if (h->enc != GB_HASH_TTL)
        return;
    if (fields_in_table(h)) {
        table_each(table_of(h), emit, ctx);
        return;
    }
    const gb_hash_ex *ex = ex_of(h);
    unsigned char *lp = ex->fields.p;
    char buf[GB_LP_INT_BUF];
    unsigned char *p = gb_lp_first(lp);
    for (uint32_t i = 0; i < ex->ndl && p; i++) {
        emit(ctx, gb_lp_get_slice(p, buf), ex->dl[i]);
        p = gb_lp_next(lp, gb_lp_next(lp, p));
    }
}

size_t gb_hash_ttl_expire(gb_hash *h, int64_t now_ms, size_t max, gb_hash_field_fn gone, void *ctx)
{
    size_t n = gb_hash_ttl_any_expired(h, now_ms) ? gb_hash_ttl_expired_count(h, now_ms) : 0;
    n = n < max ? n : max;
    if (n == 0)
        return 0;
    gb_hash_ex *ex = ex_of(h);
    if (fields_in_table(h)) {
        for (size_t i = 0; i < n; i++) { /* the earliest is on top of the heap */
            gb_slice f = hrec_field(table_of(h)->heap[0]);
            if (gone)
                gone(ctx, f);
            gb_hash_del(&ex->fields, 1, &f); /* the record leaves the heap */
        }
        return n;
    }
    /* The due fields are the first n pairs. */
    unsigned char *lp = ex->fields.p;
    char buf[GB_LP_INT_BUF];
    unsigned char *p = gb_lp_first(lp);
    for (size_t i = 0; i < n && gone; i++) {
        gone(ctx, gb_lp_get_slice(p, buf));
        p = gb_lp_next(lp, gb_lp_next(lp, p));
    }
    ex->fields.p = gb_lp_delete_range(lp, 0, (unsigned long)(2 * n));
    dl_remove(ex, 0, n);
    return n;
}

size_t gb_hash_ttl_mem(const gb_hash *h)
{
    if (h->enc != GB_HASH_TTL)
        return 0;
    const gb_hash_ex *ex = ex_of(h);
    size_t n = gb_mem_accounted(h->p);
    if (ex->dl)
        n += gb_mem_accounted(ex->dl);
    if (fields_in_table(h) && table_of(h)->heap)
        n += gb_mem_accounted(table_of(h)->heap);
    return n;
}

void gb_hash_ttl_release(gb_hash *h)
{
    gb_hash_ex *ex = ex_of(h);
    gb_hash_release(&ex->fields);
    gb_free(ex->dl);
    gb_free(ex);
    h->p = NULL;
}

void gb_hash_ttl_dup_into(const gb_hash *src, gb_hash *dst)
{
    const gb_hash_ex *s = ex_of(src);
    gb_hash_ex *d = gb_malloc(sizeof *d);
    memset(d, 0, sizeof *d);
    d->fields.enc = s->fields.enc;
    if (s->fields.enc == GB_HASH_HASHTABLE) {
        d->fields.p = timed_copy(s->fields.p);
    } else {
        gb_hash *f = gb_hash_dup(&s->fields);
        d->fields = *f;
        gb_free(f);
        if (s->ndl) {
            dl_resize(d, s->ndl);
            memcpy(d->dl, s->dl, (size_t)s->ndl * sizeof *d->dl);
        }
    }
    dst->enc = GB_HASH_TTL;
    dst->p = d;
}

/* A timed table: each record's slot names it in the heap, the heap's count
 * is the records with a deadline, every parent is due no later. */
static bool table_verify(const hbig *b)
{
    if (!b->timed || b->nheap > b->heap_cap)
        return false;
    size_t timed = 0;
    bool ok = true;
    gb_htable_iter it;
    gb_htable_iter_init(&it, (gb_htable *)&b->ht);
    for (gb_hnode *n; ok && (n = gb_htable_iter_next(&it));) {
        const hrec *r = (const hrec *)n;
        uint32_t slot = trailer_slot(hrec_trailer(r));
        if (slot == GB_HREC_NO_SLOT)
            continue;
        timed++;
        ok = slot < b->nheap && b->heap[slot] == r && hrec_deadline(r) <= GB_HASH_TTL_MAX;
    }
    gb_htable_iter_done(&it);
    for (uint32_t i = 1; ok && i < b->nheap; i++)
        ok = heap_when(b, (i - 1) / 2) <= heap_when(b, i);
    return ok && timed == b->nheap;
}

bool gb_hash_ttl_verify(const gb_hash *h)
{
    const gb_hash_ex *ex = ex_of(h);
    if (ex->fields.enc == GB_HASH_TTL || !gb_hash_verify(&ex->fields))
        return false;
    if (ex->fields.enc == GB_HASH_HASHTABLE)
        return ex->ndl == 0 && table_verify(ex->fields.p);
    if (ex->ndl > gb_lp_count(ex->fields.p) / 2)
        return false;
    for (uint32_t i = 0; i < ex->ndl; i++)
        if (ex->dl[i] < 0 || ex->dl[i] > GB_HASH_TTL_MAX || (i && ex->dl[i - 1] > ex->dl[i]))
            return false;
    return true;
}
