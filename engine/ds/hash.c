#include "engine/ds/hash.h"

#include "engine/ds/collection.h"

#include <math.h>

#include "engine/ds/hash_impl.h"
#include "engine/ds/hash_ttl.h"
#include "engine/ds/listpack.h"
#include "engine/base/mem.h"
#include "engine/base/random.h"
#include "engine/base/score.h"

/* ---- hashtable records (layout: engine/ds/hash_impl.h) ---- */

static size_t hrec_size(const hbig *b, gb_slice f, gb_slice v)
{
    return sizeof(hrec) + gb_zmember_size(f.len) + f.len + gb_zmember_size(v.len) + v.len +
           (b->timed ? GB_HREC_TRAILER : 0);
}

/* Writes a varint length and bytes; the bytes may overlap dst. */
static void put_bytes(unsigned char *dst, gb_slice s)
{
    size_t hdr = gb_zmember_size(s.len), len = s.len;
    if (s.len)
        memmove(dst + hdr, s.ptr, s.len);
    for (size_t i = 0; i < hdr; i++) {
        dst[i] = (unsigned char)((len & 0x7f) | (i + 1 < hdr ? 0x80 : 0));
        len >>= 7;
    }
}

static uint64_t hrec_hash(const gb_hnode *n) { return gb_hash_slice(hrec_field((const hrec *)n)); }

static bool hrec_eq(const gb_hnode *n, const void *key)
{
    return gb_slice_eq(hrec_field((const hrec *)n), *(const gb_slice *)key);
}

static const gb_htable_type hrec_type = {hrec_hash, hrec_eq};

hbig *gb_hbig_new(bool timed)
{
    hbig *b = gb_malloc(sizeof *b);
    memset(b, 0, sizeof *b);
    gb_htable_init(&b->ht, &hrec_type);
    b->timed = timed;
    return b;
}

static void free_rec(gb_hnode *n, void *ctx)
{
    (void)ctx;
    gb_free(n);
}

void gb_hbig_free(hbig *b)
{
    gb_htable_clear(&b->ht, free_rec, NULL);
    gb_free(b->heap);
    gb_free(b);
}

bool gb_hbig_clear_step(hbig *b, uint64_t *cursor, size_t max_nodes)
{
    return gb_htable_clear_step(&b->ht, free_rec, NULL, cursor, max_nodes);
}

hrec *gb_hbig_find(hbig *b, gb_slice f) { return (hrec *)gb_htable_find(&b->ht, &f, gb_hash_slice(f)); }

/* Overwrites the value of the record at *link with v (its trailer kept). */
static hrec *hbig_overwrite(hbig *b, gb_hnode **link, gb_slice f, gb_slice v)
{
    hrec *r = (hrec *)gb_hlink_record(link);
    size_t need = hrec_size(b, f, v);
    size_t usable = gb_mem_usable(r);
    size_t off = (size_t)((const unsigned char *)hrec_field(r).ptr + f.len - (const unsigned char *)r);
    unsigned char trailer[GB_HREC_TRAILER];
    if (b->timed)
        memcpy(trailer, hrec_trailer(r), sizeof trailer);
    /* Keep the block unless it is too small or mostly empty. */
    if (need > usable || (usable > 2 * need && usable - need >= 64)) {
        if (v.ptr >= (const char *)r && v.ptr < (const char *)r + usable) {
            /* v is this record's own value: setting it is a no-op. */
            return r;
        }
        b->rec_bytes -= usable;
        r = gb_realloc(r, need);
        gb_hlink_set(link, &r->node); /* realloc copied the chain pointer */
        b->rec_bytes += gb_mem_accounted(r);
    }
    put_bytes((unsigned char *)r + off, v);
    if (b->timed) {
        memcpy(hrec_trailer(r), trailer, sizeof trailer);
        gb_hbig_moved(b, r); /* (the trailer is where it belongs now) */
    }
    return r;
}

hrec *gb_hbig_put(hbig *b, gb_slice f, gb_slice v, bool *created)
{
    uint64_t h = gb_hash_slice(f);
    gb_hnode **link = gb_htable_find_link(&b->ht, &f, h);
    *created = !link;
    if (link)
        return hbig_overwrite(b, link, f, v);
    hrec *r = gb_malloc(hrec_size(b, f, v));
    put_bytes(r->data, f);
    put_bytes(r->data + gb_zmember_size(f.len) + f.len, v);
    if (b->timed)
        trailer_put(hrec_trailer(r), 0, GB_HREC_NO_SLOT);
    b->rec_bytes += gb_mem_accounted(r);
    gb_htable_insert(&b->ht, &r->node, h);
    return r;
}

/* Sets f = v; returns true when f is new. */
static bool hbig_set(hbig *b, gb_slice f, gb_slice v)
{
    bool created;
    gb_hbig_put(b, f, v, &created);
    return created;
}

static bool hbig_del(hbig *b, gb_slice f)
{
    gb_hnode *n = gb_htable_remove(&b->ht, &f, gb_hash_slice(f));
    if (!n)
        return false;
    if (b->timed)
        gb_hbig_clear_deadline(b, (hrec *)n);
    b->rec_bytes -= gb_mem_accounted(n);
    gb_free(n);
    return true;
}

/* ---- object ---- */

gb_hash *gb_hash_new(void)
{
    gb_hash *h = gb_malloc(sizeof *h);
    memset(h, 0, sizeof *h);
    h->enc = GB_HASH_LISTPACK;
    h->p = gb_lp_new(0);
    return h;
}

static void to_hashtable(gb_hash *h);

gb_hash *gb_hash_new_sized(const gb_types_config *cfg, size_t size_hint)
{
    if (size_hint <= cfg->hash_max_listpack_entries)
        return gb_hash_new();
    gb_hash *h = gb_malloc(sizeof *h);
    memset(h, 0, sizeof *h);
    hbig *b = gb_hbig_new(false);
    gb_htable_reserve(&b->ht, size_hint);
    h->enc = GB_HASH_HASHTABLE;
    h->p = b;
    return h;
}

/* Whether any entry of lp is longer than max bytes. */
static bool lp_has_longer(unsigned char *lp, size_t max)
{
    for (unsigned char *p = gb_lp_first(lp); p; p = gb_lp_next(lp, p)) {
        gb_lp_entry e;
        gb_lp_get(p, &e);
        if (!e.is_int && e.len > max)
            return true;
    }
    return false;
}

gb_hash *gb_hash_from_listpack(unsigned char *lp, size_t size, const gb_types_config *cfg, const char **why)
{
    uint32_t n = 0;
    if (!gb_lp_validate(lp, size))
        *why = "a damaged listpack";
    else if ((n = gb_lp_count(lp)) == 0 || n % 2)
        *why = "a hash listpack without field, value pairs";
    else if (!gb_lp_keys_unique(lp, 2))
        *why = "a hash listpack with a field twice";
    else
        *why = NULL;
    if (*why) {
        gb_lp_free(lp);
        return NULL;
    }
    gb_hash *h = gb_malloc(sizeof *h);
    memset(h, 0, sizeof *h);
    h->enc = GB_HASH_LISTPACK;
    h->p = lp;
    if (n / 2 > cfg->hash_max_listpack_entries || lp_has_longer(lp, cfg->hash_max_listpack_value))
        to_hashtable(h);
    return h;
}

void gb_hash_release(gb_hash *h)
{
    if (h->enc == GB_HASH_TTL) {
        gb_hash_ttl_release(h);
        return;
    }
    if (h->enc == GB_HASH_LISTPACK)
        gb_lp_free(h->p);
    else
        gb_hbig_free(h->p);
    h->p = NULL;
}

bool gb_hash_release_step(gb_hash *h, uint64_t *cursor, size_t max_nodes)
{
    gb_hash *fields = h->enc == GB_HASH_TTL ? gb_hash_fields(h) : h;
    if (fields->enc == GB_HASH_HASHTABLE && !gb_hbig_clear_step(fields->p, cursor, max_nodes))
        return false;
    gb_hash_release(h); /* the emptied table's struct, a TTL hash's deadlines */
    return true;
}

void gb_hash_free(gb_hash *h)
{
    if (!h)
        return;
    gb_hash_release(h);
    gb_free(h);
}

const char *gb_hash_encoding_name(const gb_hash *h)
{
    if (h->enc == GB_HASH_TTL) /* Redis 7.4's names */
        return gb_hash_fields_c(h)->enc == GB_HASH_LISTPACK ? "listpackex" : "hashtable";
    return h->enc == GB_HASH_LISTPACK ? "listpack" : "hashtable";
}

size_t gb_hash_len(const gb_hash *h)
{
    h = gb_hash_fields_c(h);
    if (h->enc == GB_HASH_LISTPACK)
        return gb_lp_count(h->p) / 2;
    return gb_htable_size(&((const hbig *)h->p)->ht);
}

size_t gb_hash_payload_mem(const gb_hash *h)
{
    if (h->enc == GB_HASH_TTL)
        return gb_hash_payload_mem(gb_hash_fields_c(h)) + gb_hash_ttl_mem(h);
    size_t n = gb_mem_accounted(h->p);
    if (h->enc == GB_HASH_HASHTABLE) {
        const hbig *b = h->p;
        n += b->rec_bytes + gb_htable_overhead_bytes(&b->ht);
    }
    return n;
}

void gb_hash_each(const gb_hash *h, gb_hash_emit_fn emit, void *ctx)
{
    h = gb_hash_fields_c(h);
    if (h->enc == GB_HASH_LISTPACK) {
        unsigned char *lp = h->p;
        char fb[GB_LP_INT_BUF], vb[GB_LP_INT_BUF];
        for (unsigned char *p = gb_lp_first(lp); p;) {
            unsigned char *v = gb_lp_next(lp, p);
            emit(ctx, gb_lp_get_slice(p, fb), gb_lp_get_slice(v, vb));
            p = gb_lp_next(lp, v);
        }
        return;
    }
    hbig *b = h->p;
    gb_htable_iter it;
    gb_htable_iter_init(&it, &b->ht);
    for (gb_hnode *n; (n = gb_htable_iter_next(&it));)
        emit(ctx, hrec_field((const hrec *)n), hrec_value((const hrec *)n));
    gb_htable_iter_done(&it);
}

static void put_big(void *ctx, gb_slice f, gb_slice v) { hbig_set(ctx, f, v); }

static void to_hashtable(gb_hash *h)
{
    hbig *b = gb_hbig_new(false);
    gb_hash_each(h, put_big, b);
    gb_lp_free(h->p);
    h->enc = GB_HASH_HASHTABLE;
    h->p = b;
}

gb_hash *gb_hash_dup(const gb_hash *h)
{
    gb_hash *c = gb_malloc(sizeof *c);
    memset(c, 0, sizeof *c);
    if (h->enc == GB_HASH_TTL) {
        gb_hash_ttl_dup_into(h, c);
        return c;
    }
    c->enc = h->enc;
    if (h->enc == GB_HASH_LISTPACK) {
        size_t n = gb_lp_bytes(h->p);
        c->p = gb_malloc(n);
        memcpy(c->p, h->p, n);
    } else {
        hbig *b = gb_hbig_new(false);
        gb_hash_each(h, put_big, b);
        c->p = b;
    }
    return c;
}

static bool too_long(const gb_types_config *cfg, gb_slice f, gb_slice v)
{
    return f.len > cfg->hash_max_listpack_value || v.len > cfg->hash_max_listpack_value;
}

/* Past the listpack's limits: a hash table (a hash with field TTLs keeps
 * its deadlines through the change). */
static void convert(gb_hash *top)
{
    if (top->enc == GB_HASH_TTL)
        gb_hash_ttl_to_hashtable(top);
    else
        to_hashtable(top);
}

bool gb_hash_set_keep_ttl(gb_hash *top, const gb_types_config *cfg, gb_slice f, gb_slice v)
{
    gb_hash *h = gb_hash_fields(top);
    if (h->enc == GB_HASH_LISTPACK &&
        (too_long(cfg, f, v) || gb_lp_bytes(h->p) + f.len + v.len + 16 > GB_TYPES_LISTPACK_MAX_BYTES))
        convert(top);
    if (h->enc == GB_HASH_HASHTABLE)
        return hbig_set(h->p, f, v);
    unsigned char *lp = h->p;
    unsigned char *p = gb_lp_find(lp, gb_lp_first(lp), f, 1);
    bool created = !p;
    if (p) {
        unsigned char *vp = gb_lp_next(lp, p);
        h->p = gb_lp_replace(lp, &vp, v);
    } else {
        lp = gb_lp_append(lp, f);
        h->p = gb_lp_append(lp, v);
    }
    /* After an update too, as Redis's hashTypeSet: a hash left over the
     * threshold by a CONFIG SET converts at its next write. */
    if (gb_lp_count(h->p) / 2 > cfg->hash_max_listpack_entries)
        convert(top);
    return created;
}

bool gb_hash_set(gb_hash *h, const gb_types_config *cfg, gb_slice f, gb_slice v)
{
    if (h->enc == GB_HASH_TTL) { /* HSET: the new value has no deadline (Redis) */
        hbig *b = gb_hash_fields(h)->p;
        if (gb_hash_fields(h)->enc == GB_HASH_HASHTABLE) { /* one lookup for both */
            bool created;
            hrec *r = gb_hbig_put(b, f, v, &created);
            gb_hbig_clear_deadline(b, r);
            return created;
        }
        gb_hash_ttl_clear(h, f);
    }
    return gb_hash_set_keep_ttl(h, cfg, f, v);
}

size_t gb_hash_set_many(gb_hash *h, const gb_types_config *cfg, size_t n, const gb_slice *fields,
                        const gb_slice *values)
{
    gb_hash *top = h; /* gb_hash_set drops each field's deadline in turn, as Redis */
    h = gb_hash_fields(h);
    if (h->enc == GB_HASH_LISTPACK) {
        size_t sum = 0;
        for (size_t i = 0; i < n; i++) {
            if (too_long(cfg, fields[i], values[i])) {
                convert(top);
                break;
            }
            sum += fields[i].len + values[i].len;
        }
        if (h->enc == GB_HASH_LISTPACK && gb_lp_bytes(h->p) + sum > GB_TYPES_LISTPACK_MAX_BYTES)
            convert(top);
    }
    size_t created = 0;
    for (size_t i = 0; i < n; i++)
        created += gb_hash_set(top, cfg, fields[i], values[i]);
    return created;
}

bool gb_hash_get(const gb_hash *h, gb_slice f, gb_slice *value, char *buf)
{
    h = gb_hash_fields_c(h);
    if (h->enc == GB_HASH_LISTPACK) {
        unsigned char *lp = h->p;
        unsigned char *p = gb_lp_find(lp, gb_lp_first(lp), f, 1);
        if (!p)
            return false;
        *value = gb_lp_get_slice(gb_lp_next(lp, p), buf);
        return true;
    }
    hrec *r = gb_hbig_find(h->p, f);
    if (!r)
        return false;
    *value = hrec_value(r);
    return true;
}

bool gb_hash_setnx(gb_hash *h, const gb_types_config *cfg, gb_slice f, gb_slice v)
{
    if (gb_hash_exists(h, f))
        return false;
    gb_hash_set(h, cfg, f, v);
    return true;
}

bool gb_hash_exists(const gb_hash *h, gb_slice f)
{
    gb_slice v;
    char buf[GB_HASH_VALUE_BUF];
    return gb_hash_get(h, f, &v, buf);
}

size_t gb_hash_strlen(const gb_hash *h, gb_slice f)
{
    gb_slice v;
    char buf[GB_HASH_VALUE_BUF];
    return gb_hash_get(h, f, &v, buf) ? v.len : 0;
}

size_t gb_hash_del(gb_hash *h, size_t n, const gb_slice *fields)
{
    if (h->enc == GB_HASH_TTL) {
        if (gb_hash_fields(h)->enc == GB_HASH_LISTPACK)
            return gb_hash_ttl_del_listpack(h, n, fields);
        h = gb_hash_fields(h); /* a timed table's records drop their deadlines */
    }
    size_t removed = 0;
    for (size_t i = 0; i < n; i++) {
        if (h->enc == GB_HASH_LISTPACK) {
            unsigned char *lp = h->p;
            unsigned char *p = gb_lp_find(lp, gb_lp_first(lp), fields[i], 1);
            if (p) {
                unsigned char *next;
                lp = gb_lp_delete(lp, p, &next);
                h->p = gb_lp_delete(lp, next, NULL);
                removed++;
            }
        } else if (hbig_del(h->p, fields[i])) {
            removed++;
        }
    }
    if (removed && h->enc == GB_HASH_HASHTABLE)
        gb_htable_maybe_shrink(&((hbig *)h->p)->ht);
    return removed;
}

int gb_hash_incrby(gb_hash *h, const gb_types_config *cfg, gb_slice f, int64_t incr, int64_t *out)
{
    gb_slice cur;
    char buf[GB_HASH_VALUE_BUF];
    int64_t v = 0;
    if (gb_hash_get(h, f, &cur, buf) && !gb_lp_str2int(cur.ptr, cur.len, &v))
        return GB_EINVAL;
    if ((incr < 0 && v < 0 && incr < INT64_MIN - v) || (incr > 0 && v > 0 && incr > INT64_MAX - v))
        return GB_ERANGE;
    v += incr;
    char nb[GB_LP_INT_BUF];
    gb_hash_set_keep_ttl(h, cfg, f, gb_slice_make(nb, gb_lp_int2str(v, nb))); /* (Redis) */
    *out = v;
    return 0;
}

int gb_hash_incrbyfloat(gb_hash *h, const gb_types_config *cfg, gb_slice f, long double incr, char *out,
                        size_t *outlen)
{
    gb_slice cur;
    char buf[GB_HASH_VALUE_BUF];
    long double v = 0;
    if (gb_hash_get(h, f, &cur, buf) && gb_parse_long_double(cur, &v) != 0)
        return GB_EINVAL;
    v += incr;
    if (isnan(v) || isinf(v))
        return GB_ERANGE;
    size_t n = gb_format_long_double(v, out, GB_LONG_DOUBLE_BUF);
    if (n == 0)
        return GB_ERANGE;
    gb_hash_set_keep_ttl(h, cfg, f, gb_slice_make(out, n)); /* the deadline stays (Redis) */
    *outlen = n;
    return 0;
}

/* ---- random and scan ---- */

typedef struct pair_array {
    gb_slice *f, *v;
    char (*bufs)[2][GB_LP_INT_BUF];
    size_t n;
} pair_array;

static void pairs_of(const gb_hash *h, pair_array *a)
{
    h = gb_hash_fields_c(h);
    size_t n = gb_hash_len(h);
    a->f = gb_malloc((n ? n : 1) * sizeof *a->f);
    a->v = gb_malloc((n ? n : 1) * sizeof *a->v);
    a->bufs = NULL;
    a->n = 0;
    if (h->enc == GB_HASH_LISTPACK) {
        unsigned char *lp = h->p;
        a->bufs = gb_malloc((n ? n : 1) * sizeof *a->bufs);
        for (unsigned char *p = gb_lp_first(lp); p;) {
            unsigned char *vp = gb_lp_next(lp, p);
            a->f[a->n] = gb_lp_get_slice(p, a->bufs[a->n][0]);
            a->v[a->n] = gb_lp_get_slice(vp, a->bufs[a->n][1]);
            a->n++;
            p = gb_lp_next(lp, vp);
        }
        return;
    }
    hbig *b = h->p;
    gb_htable_iter it;
    gb_htable_iter_init(&it, &b->ht);
    for (gb_hnode *nd; (nd = gb_htable_iter_next(&it));) {
        a->f[a->n] = hrec_field((const hrec *)nd);
        a->v[a->n] = hrec_value((const hrec *)nd);
        a->n++;
    }
    gb_htable_iter_done(&it);
}

static void pairs_free(pair_array *a)
{
    gb_free(a->f);
    gb_free(a->v);
    gb_free(a->bufs);
}

/* A record's field and value to emit (HRANDFIELD, HSCAN). */
typedef struct scan_ctx {
    gb_hash_emit_fn emit;
    void *ctx;
} scan_ctx;

static void scan_one(gb_hnode *n, void *ctx)
{
    scan_ctx *sc = ctx;
    sc->emit(sc->ctx, hrec_field((const hrec *)n), hrec_value((const hrec *)n));
}

void gb_hash_random(const gb_hash *h, int64_t count, gb_hash_emit_fn emit, void *ctx)
{
    h = gb_hash_fields_c(h);
    size_t size = gb_hash_len(h);
    if (count == 0 || size == 0)
        return;
    if (count > 0 && (uint64_t)count >= size) {
        gb_hash_each(h, emit, ctx);
        return;
    }
    uint64_t k = count < 0 ? (uint64_t)0 - (uint64_t)count : (uint64_t)count;
    if (count < 0 && h->enc == GB_HASH_HASHTABLE) {
        /* Repeats allowed: sample the table directly, no copy. */
        hbig *b = h->p;
        while (k--) {
            const hrec *r = (const hrec *)gb_htable_random(&b->ht);
            emit(ctx, hrec_field(r), hrec_value(r));
        }
        return;
    }
    if (h->enc == GB_HASH_HASHTABLE && k * 3 <= size) {
        /* A few distinct fields of many: drawn from the table, no copy. */
        scan_ctx sc = {emit, ctx};
        gb_htable_sample_distinct(&((hbig *)h->p)->ht, k, scan_one, &sc);
        return;
    }
    pair_array a;
    pairs_of(h, &a);
    if (count < 0) {
        while (k--) {
            size_t i = (size_t)gb_random_below(a.n);
            emit(ctx, a.f[i], a.v[i]);
        }
    } else {
        uint64_t *idx = gb_malloc((size_t)k * sizeof *idx);
        gb_sample_distinct(a.n, k, idx);
        for (uint64_t i = 0; i < k; i++)
            emit(ctx, a.f[idx[i]], a.v[idx[i]]);
        gb_free(idx);
    }
    pairs_free(&a);
}

uint64_t gb_hash_scan(gb_hash *h, uint64_t cursor, gb_hash_emit_fn emit, void *ctx)
{
    h = gb_hash_fields(h);
    if (h->enc == GB_HASH_LISTPACK) {
        gb_hash_each(h, emit, ctx);
        return 0;
    }
    scan_ctx sc = {emit, ctx};
    return gb_htable_scan(&((hbig *)h->p)->ht, cursor, scan_one, &sc);
}

/* ---- verification ---- */

static void count_one(gb_hnode *n, void *ctx)
{
    (void)n;
    (*(size_t *)ctx)++;
}

bool gb_hash_verify(const gb_hash *h)
{
    if (h->enc == GB_HASH_TTL)
        return gb_hash_ttl_verify(h);
    if (h->enc == GB_HASH_LISTPACK) {
        unsigned char *lp = h->p;
        if (!gb_lp_validate(lp, gb_lp_bytes(lp)) || gb_lp_count(lp) % 2)
            return false;
        char buf[GB_LP_INT_BUF];
        for (unsigned char *p = gb_lp_first(lp); p;) {
            unsigned char *v = gb_lp_next(lp, p);
            unsigned char *q = gb_lp_next(lp, v);
            if (q && gb_lp_find(lp, q, gb_lp_get_slice(p, buf), 1))
                return false;
            p = q;
        }
        return true;
    }
    hbig *b = h->p;
    if (gb_htable_is_rehashing(&b->ht))
        return true;
    size_t n = 0;
    uint64_t cur = 0;
    do {
        cur = gb_htable_scan(&b->ht, cur, count_one, &n);
    } while (cur);
    return n == gb_htable_size(&b->ht);
}
