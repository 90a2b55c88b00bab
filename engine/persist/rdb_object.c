#include "engine/persist/rdb_object.h"

#include <math.h>

#include "engine/base/mem.h"
#include "engine/base/score.h"
#include "engine/base/util.h"
#include "engine/ds/hash.h"
#include "engine/ds/hash_ttl.h"
#include "engine/ds/set.h"
#include "engine/ds/zset.h"
#include "engine/persist/rdb_compact.h"
#include "engine/persist/rdb_stream.h"
#include "engine/types/t_list.h"
#include "engine/types/tobj.h"

/* No single string in a value is larger than a client could have stored
 * (proto-max-bulk-len's ceiling); the reader also bounds it by the bytes. */
#define RDB_MAX_STRING ((size_t)1 << 32)

#define FAIL(msg)     \
    do {              \
        *why = (msg); \
        goto fail;    \
    } while (0)

/* ---- the value being built ----------------------------------------------------------------- */

typedef struct builder {
    const gb_rdb_build_config *cfg;
    enum gb_type type;
    gb_list *list;
    gb_set *set;
    gb_hash *hash;
    gb_zset *zset;
    /* pairs: the field (hash) or member (zset) waiting for its partner */
    char *pending;
    size_t pending_len;
    bool have_pending;
    size_t size_hint;
    const char *why;
} builder;

static void builder_free(builder *B)
{
    if (B->list)
        gb_list_free(B->list);
    if (B->set)
        gb_set_free(B->set);
    if (B->hash)
        gb_hash_free(B->hash);
    if (B->zset)
        gb_zset_free(B->zset);
    gb_free(B->pending);
    B->list = NULL, B->set = NULL, B->hash = NULL, B->zset = NULL, B->pending = NULL;
}

static bool add_list(builder *B, gb_slice v)
{
    if (!B->list)
        B->list = gb_list_new(&B->cfg->list);
    gb_list_push(B->list, GB_LIST_TAIL, &v, 1);
    return true;
}

static bool add_set(builder *B, gb_slice m)
{
    if (!B->set)
        B->set = gb_set_new_for(&B->cfg->types, m, B->size_hint);
    if (!gb_set_add(B->set, &B->cfg->types, m)) {
        B->why = "a set member twice";
        return false;
    }
    return true;
}

static bool add_hash_pair(builder *B, gb_slice f, gb_slice v)
{
    if (!B->hash)
        B->hash = gb_hash_new_sized(&B->cfg->types, B->size_hint);
    if (!gb_hash_set(B->hash, &B->cfg->types, f, v)) {
        B->why = "a hash field twice";
        return false;
    }
    return true;
}

static bool add_zset_pair(builder *B, gb_slice m, double score)
{
    if (isnan(score)) {
        B->why = "a NaN score";
        return false;
    }
    if (!B->zset)
        B->zset = gb_zset_new(&B->cfg->types, B->size_hint, 0);
    gb_zadd_result res;
    gb_zset_add_many(B->zset, &B->cfg->types, 0, 1, &score, &m, &res);
    if (res.added != 1) {
        B->why = "a sorted set member twice";
        return false;
    }
    return true;
}

/* One element of a pair encoding (hash field/value, zset member/score). */
static bool add_pair_elem(builder *B, gb_slice e)
{
    if (!B->have_pending) {
        gb_free(B->pending);
        B->pending = gb_memdup(e.ptr, e.len);
        B->pending_len = e.len;
        B->have_pending = true;
        return true;
    }
    B->have_pending = false;
    gb_slice first = gb_slice_make(B->pending, B->pending_len);
    if (B->type == GB_TYPE_HASH)
        return add_hash_pair(B, first, e);
    double score;
    if (gb_score_parse(e, &score) != 0) {
        B->why = "a sorted set score that is not a number";
        return false;
    }
    return add_zset_pair(B, first, score);
}

static bool add_elem(builder *B, gb_slice e)
{
    switch (B->type) {
    case GB_TYPE_LIST:
        return add_list(B, e);
    case GB_TYPE_SET:
        return add_set(B, e);
    default:
        return add_pair_elem(B, e);
    }
}

static bool emit_elem(void *ctx, const gb_rdb_elem *e) { return add_elem(ctx, gb_slice_make(e->ptr, e->len)); }

/* Moves the built value into out; false when it is empty (Redis refuses
 * empty keys: RDB_LOAD_ERR_EMPTY_KEY) or a pair was left half. */
static bool builder_finish(builder *B, gb_rdb_value *out, const char **why)
{
    if (B->have_pending) {
        *why = "an odd number of elements in a pair encoding";
        return false;
    }
    out->type = B->type;
    switch (B->type) {
    case GB_TYPE_LIST:
        if (!B->list || gb_list_len(B->list) == 0)
            break;
        out->obj = B->list;
        B->list = NULL;
        return true;
    case GB_TYPE_SET:
        if (!B->set)
            break;
        out->obj = gb_tobj_adopt(B->set);
        B->set = NULL;
        return true;
    case GB_TYPE_HASH:
        if (!B->hash || gb_hash_len(B->hash) == 0)
            break;
        out->obj = gb_tobj_adopt(B->hash);
        B->hash = NULL;
        return true;
    default:
        if (!B->zset)
            break;
        gb_zset_convert_if_fits(B->zset, &B->cfg->types);
        out->obj = gb_tobj_adopt(B->zset);
        B->zset = NULL;
        return true;
    }
    *why = "an empty value";
    return false;
}

/* ---- reading -------------------------------------------------------------------------------- */

/* A count read from the stream, bounded by the bytes left (every element
 * takes at least one), so no count drives an allocation. */
static bool read_count(gb_rdb_reader *r, uint64_t *n, const char **why)
{
    bool enc;
    if (gb_rdb_read_len(r, n, &enc) != 0 || enc) {
        *why = "a truncated or malformed length";
        return false;
    }
    if (*n > r->len - r->pos) {
        *why = "a count larger than the bytes that follow";
        return false;
    }
    return true;
}

static bool read_str(gb_rdb_reader *r, gb_rdb_str *s, const char **why)
{
    if (gb_rdb_read_str(r, RDB_MAX_STRING, s) != 0) {
        *why = "a truncated or malformed string";
        return false;
    }
    return true;
}

/* Redis's rdbLoadDoubleValue: a length byte (253 NaN, 254 +inf, 255 -inf)
 * and that many bytes of decimal text. */
static bool read_text_double(gb_rdb_reader *r, double *d, const char **why)
{
    int n = gb_rdb_read_byte(r);
    if (n < 0)
        goto bad;
    if (n == 253) {
        *d = NAN;
        return true;
    }
    if (n == 254 || n == 255) {
        *d = n == 254 ? INFINITY : -INFINITY;
        return true;
    }
    if ((size_t)n > r->len - r->pos)
        goto bad;
    gb_slice text = gb_slice_make((const char *)r->p + r->pos, (size_t)n);
    r->pos += (size_t)n;
    if (gb_score_parse(text, d) == 0)
        return true;
bad:
    *why = "a malformed score";
    return false;
}

static bool read_binary_double(gb_rdb_reader *r, double *d, const char **why)
{
    if (r->len - r->pos < 8) {
        *why = "a truncated score";
        return false;
    }
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = u << 8 | r->p[r->pos + (size_t)i];
    memcpy(d, &u, sizeof *d);
    r->pos += 8;
    return true;
}

/* Plain (non-compact) encodings: a count, then elements or pairs. */
static bool read_plain(gb_rdb_reader *r, int rdbtype, builder *B, const char **why)
{
    uint64_t n;
    if (!read_count(r, &n, why))
        return false;
    B->size_hint = (size_t)GB_MIN(n, (uint64_t)1 << 20);
    for (uint64_t i = 0; i < n; i++) {
        gb_rdb_str a = {0}, b = {0};
        bool ok = read_str(r, &a, why);
        if (ok) {
            gb_slice sa = gb_slice_make(a.ptr, a.len);
            if (rdbtype == GB_RDB_TYPE_HASH) {
                ok = read_str(r, &b, why) && add_hash_pair(B, sa, gb_slice_make(b.ptr, b.len));
            } else if (rdbtype == GB_RDB_TYPE_ZSET || rdbtype == GB_RDB_TYPE_ZSET_2) {
                double score;
                ok = (rdbtype == GB_RDB_TYPE_ZSET ? read_text_double(r, &score, why)
                                                  : read_binary_double(r, &score, why)) &&
                     add_zset_pair(B, sa, score);
            } else {
                ok = add_elem(B, sa);
            }
        }
        gb_rdb_str_free(&a);
        gb_rdb_str_free(&b);
        if (!ok) {
            if (B->why)
                *why = B->why;
            return false;
        }
    }
    return true;
}

/* One compact blob (a string holding a listpack, ziplist, intset or
 * zipmap), its elements added to B. Empty blobs inside a quicklist are
 * skipped as Redis skips them. */
static bool read_blob(gb_rdb_reader *r, int64_t (*each)(const uint8_t *, size_t, gb_rdb_elem_fn, void *, const char **),
                      builder *B, const char **why)
{
    gb_rdb_str blob;
    if (!read_str(r, &blob, why))
        return false;
    B->size_hint = GB_MIN(blob.len, (size_t)1 << 20);
    int64_t got = each((const uint8_t *)blob.ptr, blob.len, emit_elem, B, why);
    gb_rdb_str_free(&blob);
    if (got < 0) {
        if (B->why)
            *why = B->why;
        return false;
    }
    return true;
}

static bool read_quicklist(gb_rdb_reader *r, bool v2, builder *B, const char **why)
{
    uint64_t nodes;
    if (!read_count(r, &nodes, why))
        return false;
    for (uint64_t i = 0; i < nodes; i++) {
        uint64_t container = 2; /* quicklist 1: always a ziplist */
        if (v2) {
            bool enc;
            if (gb_rdb_read_len(r, &container, &enc) != 0 || enc || (container != 1 && container != 2)) {
                *why = "a quicklist node of an unknown container";
                return false;
            }
        }
        if (container == 1) { /* PLAIN: one element, stored as it is */
            gb_rdb_str s;
            if (!read_str(r, &s, why))
                return false;
            add_list(B, gb_slice_make(s.ptr, s.len));
            gb_rdb_str_free(&s);
        } else if (!read_blob(r, v2 ? gb_rdb_listpack_each : gb_rdb_ziplist_each, B, why)) {
            return false;
        }
    }
    return true;
}

/* ---- hashes with field deadlines (Redis 7.4) ---- */

static bool read_ms(gb_rdb_reader *r, uint64_t *ms, const char **why)
{
    if (r->len - r->pos < 8) {
        *why = "a truncated time";
        return false;
    }
    *ms = 0;
    for (int i = 7; i >= 0; i--)
        *ms = *ms << 8 | r->p[r->pos + (size_t)i];
    r->pos += 8;
    return true;
}

/* A field just added gets its deadline (0: none). */
static bool set_field_deadline(builder *B, gb_slice field, uint64_t when)
{
    if (when == 0)
        return true;
    if (when > (uint64_t)GB_HASH_TTL_MAX) {
        B->why = "a field deadline past the largest one (2^48 - 1 ms)";
        return false;
    }
    gb_hash_ttl_load(B->hash, field, (int64_t)when);
    return true;
}

static bool read_hash_metadata(gb_rdb_reader *r, bool relative, builder *B, const char **why)
{
    uint64_t min = 0, n;
    if (relative && !read_ms(r, &min, why))
        return false;
    if (!read_count(r, &n, why))
        return false;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t ttl;
        bool enc;
        if (gb_rdb_read_len(r, &ttl, &enc) != 0 || enc) {
            *why = "a truncated field deadline";
            return false;
        }
        gb_rdb_str f = {0}, v = {0};
        bool ok = read_str(r, &f, why) && read_str(r, &v, why);
        gb_slice field = gb_slice_make(f.ptr, f.len);
        uint64_t when = ttl == 0 ? 0 : relative ? ttl + min - 1 : ttl;
        if (ok)
            ok = add_hash_pair(B, field, gb_slice_make(v.ptr, v.len)) && set_field_deadline(B, field, when);
        gb_rdb_str_free(&f);
        gb_rdb_str_free(&v);
        if (!ok) {
            if (B->why)
                *why = B->why;
            return false;
        }
    }
    return true;
}

/* A listpack of field, value, deadline triples. */
typedef struct triple {
    builder *B;
    int at;
    char *field, *value;
    size_t flen, vlen;
} triple;

static bool emit_triple(void *ctx, const gb_rdb_elem *e)
{
    triple *T = ctx;
    builder *B = T->B;
    if (T->at < 2) {
        char **dst = T->at == 0 ? &T->field : &T->value;
        gb_free(*dst);
        *dst = gb_memdup(e->ptr, e->len);
        *(T->at == 0 ? &T->flen : &T->vlen) = e->len;
        T->at++;
        return true;
    }
    T->at = 0;
    if (!e->is_int || e->ival < 0) {
        B->why = "a field deadline that is not a number";
        return false;
    }
    gb_slice field = gb_slice_make(T->field, T->flen);
    return add_hash_pair(B, field, gb_slice_make(T->value, T->vlen)) &&
           set_field_deadline(B, field, (uint64_t)e->ival);
}

static bool read_hash_listpack_ex(gb_rdb_reader *r, bool with_min, builder *B, const char **why)
{
    uint64_t min;
    if (with_min && !read_ms(r, &min, why))
        return false;
    gb_rdb_str blob;
    if (!read_str(r, &blob, why))
        return false;
    triple T = {.B = B};
    int64_t got = gb_rdb_listpack_each((const uint8_t *)blob.ptr, blob.len, emit_triple, &T, why);
    gb_rdb_str_free(&blob);
    gb_free(T.field);
    gb_free(T.value);
    if (got >= 0 && T.at != 0) {
        *why = "a field without its value and deadline";
        return false;
    }
    if (got < 0 && B->why)
        *why = B->why;
    return got >= 0;
}

static enum gb_type type_of_rdb(int rdbtype)
{
    switch (rdbtype) {
    case GB_RDB_TYPE_LIST:
    case GB_RDB_TYPE_LIST_ZIPLIST:
    case GB_RDB_TYPE_LIST_QUICKLIST:
    case GB_RDB_TYPE_LIST_QUICKLIST_2:
        return GB_TYPE_LIST;
    case GB_RDB_TYPE_SET:
    case GB_RDB_TYPE_SET_INTSET:
    case GB_RDB_TYPE_SET_LISTPACK:
        return GB_TYPE_SET;
    case GB_RDB_TYPE_ZSET:
    case GB_RDB_TYPE_ZSET_2:
    case GB_RDB_TYPE_ZSET_ZIPLIST:
    case GB_RDB_TYPE_ZSET_LISTPACK:
        return GB_TYPE_ZSET;
    case GB_RDB_TYPE_HASH:
    case GB_RDB_TYPE_HASH_ZIPMAP:
    case GB_RDB_TYPE_HASH_ZIPLIST:
    case GB_RDB_TYPE_HASH_LISTPACK:
    case GB_RDB_TYPE_HASH_METADATA_PRE_GA:
    case GB_RDB_TYPE_HASH_LISTPACK_EX_PRE_GA:
    case GB_RDB_TYPE_HASH_METADATA:
    case GB_RDB_TYPE_HASH_LISTPACK_EX:
        return GB_TYPE_HASH;
    default:
        return GB_TYPE_COUNT;
    }
}

bool gb_rdb_object_read(gb_rdb_reader *r, int rdbtype, const gb_rdb_build_config *cfg, gb_rdb_value *out,
                        const char **why)
{
    memset(out, 0, sizeof *out);
    *why = NULL;
    if (rdbtype == GB_RDB_TYPE_STRING) {
        out->type = GB_TYPE_STRING;
        return read_str(r, &out->str, why);
    }
    if (rdbtype == GB_RDB_TYPE_MODULE || rdbtype == GB_RDB_TYPE_MODULE_2) {
        *why = "a module type, which Goblin Core cannot load";
        return false;
    }
    if (rdbtype == GB_RDB_TYPE_STREAM_LISTPACKS || rdbtype == GB_RDB_TYPE_STREAM_LISTPACKS_2 ||
        rdbtype == GB_RDB_TYPE_STREAM_LISTPACKS_3) {
        out->type = GB_TYPE_STREAM;
        out->obj = gb_rdb_stream_read(r, rdbtype, &cfg->stream, why);
        return out->obj != NULL;
    }
    builder B = {.cfg = cfg, .type = type_of_rdb(rdbtype)};
    if (B.type == GB_TYPE_COUNT) {
        *why = "an unknown object type";
        return false;
    }
    bool ok;
    switch (rdbtype) {
    case GB_RDB_TYPE_LIST:
    case GB_RDB_TYPE_SET:
    case GB_RDB_TYPE_ZSET:
    case GB_RDB_TYPE_ZSET_2:
    case GB_RDB_TYPE_HASH:
        ok = read_plain(r, rdbtype, &B, why);
        break;
    case GB_RDB_TYPE_LIST_QUICKLIST:
    case GB_RDB_TYPE_LIST_QUICKLIST_2:
        ok = read_quicklist(r, rdbtype == GB_RDB_TYPE_LIST_QUICKLIST_2, &B, why);
        break;
    case GB_RDB_TYPE_SET_INTSET:
        ok = read_blob(r, gb_rdb_intset_each, &B, why);
        break;
    case GB_RDB_TYPE_HASH_ZIPMAP:
        ok = read_blob(r, gb_rdb_zipmap_each, &B, why);
        break;
    case GB_RDB_TYPE_LIST_ZIPLIST:
    case GB_RDB_TYPE_ZSET_ZIPLIST:
    case GB_RDB_TYPE_HASH_ZIPLIST:
        ok = read_blob(r, gb_rdb_ziplist_each, &B, why);
        break;
    case GB_RDB_TYPE_HASH_METADATA_PRE_GA:
    case GB_RDB_TYPE_HASH_METADATA:
        ok = read_hash_metadata(r, rdbtype == GB_RDB_TYPE_HASH_METADATA, &B, why);
        break;
    case GB_RDB_TYPE_HASH_LISTPACK_EX_PRE_GA:
    case GB_RDB_TYPE_HASH_LISTPACK_EX:
        ok = read_hash_listpack_ex(r, rdbtype == GB_RDB_TYPE_HASH_LISTPACK_EX, &B, why);
        break;
    default: /* SET_LISTPACK, ZSET_LISTPACK, HASH_LISTPACK */
        ok = read_blob(r, gb_rdb_listpack_each, &B, why);
        break;
    }
    if (ok)
        ok = builder_finish(&B, out, why);
    builder_free(&B);
    return ok;
}

void gb_rdb_value_free(gb_rdb_value *v)
{
    if (v->type == GB_TYPE_STRING)
        gb_rdb_str_free(&v->str);
    else if (v->obj)
        gb_type_get(v->type)->free(v->obj);
    memset(v, 0, sizeof *v);
}

/* ---- writing -------------------------------------------------------------------------------- */

void gb_rdb_write_string_value(gb_strbuf *b, const void *s, size_t n)
{
    int64_t v;
    /* rdbTryIntegerEncoding: at most 11 characters, the canonical text of
     * an integer that fits 32 bits. */
    if (n <= 11 && gb_str2ll(s, n, &v) && v >= INT32_MIN && v <= INT32_MAX) {
        uint8_t buf[5];
        size_t w = (v >= INT8_MIN && v <= INT8_MAX) ? 1 : (v >= INT16_MIN && v <= INT16_MAX) ? 2 : 4;
        buf[0] = (uint8_t)(0xC0 | (w == 1 ? GB_RDB_ENC_INT8 : w == 2 ? GB_RDB_ENC_INT16 : GB_RDB_ENC_INT32));
        for (size_t i = 0; i < w; i++)
            buf[1 + i] = (uint8_t)((uint64_t)v >> (8 * i));
        gb_strbuf_add(b, buf, 1 + w);
        return;
    }
    gb_rdb_write_string(b, s, n);
}

static bool put_list_elem(void *ctx, size_t index, gb_slice v)
{
    (void)index;
    gb_rdb_write_string_value(ctx, v.ptr, v.len);
    return true;
}

static void put_member(void *ctx, gb_slice m) { gb_rdb_write_string_value(ctx, m.ptr, m.len); }

static void put_pair(void *ctx, gb_slice f, gb_slice v)
{
    gb_rdb_write_string_value(ctx, f.ptr, f.len);
    gb_rdb_write_string_value(ctx, v.ptr, v.len);
}

static void put_scored(void *ctx, gb_slice m, double score)
{
    gb_rdb_write_string_value(ctx, m.ptr, m.len);
    uint64_t u;
    memcpy(&u, &score, sizeof u);
    uint8_t buf[8];
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)(u >> (8 * i));
    gb_strbuf_add(ctx, buf, sizeof buf);
}

/* The hash of kv when it has fields with deadlines, else NULL. */
static const gb_hash *hash_with_deadlines(const gb_kv *kv, gb_tobj_hdr *o)
{
    if (kv->type != GB_TYPE_HASH)
        return NULL;
    *o = gb_tobj_unpack(gb_kv_ptr(kv));
    return gb_hash_has_ttl_enc(&o->h) && gb_hash_ttl_count(&o->h) > 0 ? &o->h : NULL;
}

int gb_rdb_object_version(const gb_kv *kv)
{
    gb_tobj_hdr o;
    return hash_with_deadlines(kv, &o) ? GB_RDB_VERSION_HFE : GB_RDB_VERSION_WRITTEN;
}

typedef struct meta_ctx {
    gb_strbuf *b;
    const gb_hash *h;
    int64_t min;
} meta_ctx;

static void put_meta_field(void *ctx, gb_slice f, gb_slice v)
{
    meta_ctx *m = ctx;
    int64_t when = gb_hash_ttl_get(m->h, f);
    gb_rdb_write_len(m->b, when < 0 ? 0 : (uint64_t)(when - m->min) + 1);
    gb_rdb_write_string_value(m->b, f.ptr, f.len);
    gb_rdb_write_string_value(m->b, v.ptr, v.len);
}

/* RDB_TYPE_HASH_METADATA, as Redis 7.4 writes a hash table with field
 * deadlines. */
static void write_hash_metadata(gb_strbuf *b, const gb_hash *h)
{
    meta_ctx m = {b, h, gb_hash_ttl_min(h)};
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)((uint64_t)m.min >> (8 * i));
    gb_strbuf_add(b, le, sizeof le);
    gb_rdb_write_len(b, gb_hash_len(h));
    gb_hash_each(h, put_meta_field, &m);
}

int gb_rdb_object_type(const gb_kv *kv)
{
    gb_tobj_hdr o;
    if (hash_with_deadlines(kv, &o))
        return GB_RDB_TYPE_HASH_METADATA;
    switch (kv->type) {
    case GB_TYPE_STRING:
        return GB_RDB_TYPE_STRING;
    case GB_TYPE_LIST:
        return GB_RDB_TYPE_LIST;
    case GB_TYPE_SET:
        return GB_RDB_TYPE_SET;
    case GB_TYPE_HASH:
        return GB_RDB_TYPE_HASH;
    case GB_TYPE_ZSET:
        return GB_RDB_TYPE_ZSET_2;
    case GB_TYPE_STREAM:
        return GB_RDB_TYPE_STREAM_LISTPACKS_2;
    default:
        return -1;
    }
}

void gb_rdb_object_write_value(gb_strbuf *b, const gb_kv *kv)
{
    gb_tobj_hdr o;
    switch (kv->type) {
    case GB_TYPE_STRING: {
        char num[GB_INT_BUF];
        gb_slice v = gb_kv_string(kv, num);
        gb_rdb_write_string_value(b, v.ptr, v.len);
        break;
    }
    case GB_TYPE_LIST:
        gb_rdb_write_len(b, gb_list_len(gb_kv_ptr(kv)));
        gb_list_range(gb_kv_ptr(kv), 0, -1, false, put_list_elem, b);
        break;
    case GB_TYPE_SET:
        o = gb_tobj_unpack(gb_kv_ptr(kv));
        gb_rdb_write_len(b, gb_set_card(&o.s));
        gb_set_members(&o.s, put_member, b);
        break;
    case GB_TYPE_HASH:
        if (hash_with_deadlines(kv, &o)) {
            write_hash_metadata(b, &o.h);
            break;
        }
        o = gb_tobj_unpack(gb_kv_ptr(kv));
        gb_rdb_write_len(b, gb_hash_len(&o.h));
        gb_hash_each(&o.h, put_pair, b);
        break;
    case GB_TYPE_ZSET:
        o = gb_tobj_unpack(gb_kv_ptr(kv));
        gb_rdb_write_len(b, gb_zset_card(&o.z));
        gb_zset_range_rank(&o.z, 0, -1, false, put_scored, b);
        break;
    case GB_TYPE_STREAM:
        gb_rdb_stream_write(b, gb_kv_ptr(kv));
        break;
    default:
        break;
    }
}

bool gb_rdb_object_write(gb_strbuf *b, const gb_kv *kv)
{
    int type = gb_rdb_object_type(kv);
    if (type < 0)
        return false;
    gb_strbuf_addc(b, (char)type);
    gb_rdb_object_write_value(b, kv);
    return true;
}
