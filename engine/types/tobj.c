#include "engine/types/tobj.h"

#include <stdlib.h>

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/ds/hash_ttl.h"

int gb_tobj_lookup(gb_db *db, gb_slice key, enum gb_type t, bool write, gb_tobj *o)
{
    gb_kv *kv = write ? gb_db_lookup_write(db, key) : gb_db_lookup_read(db, key);
    o->kv = NULL;
    if (!kv)
        return 0;
    if (kv->type != t)
        return -1;
    o->kv = kv;
    o->o = gb_tobj_unpack(gb_kv_ptr(kv));
    return 1;
}

void gb_tobj_sync_or_delete(gb_db *db, gb_slice key, gb_tobj *o)
{
    gb_tobj_sync(o);
    size_t n = 0;
    switch (o->kv->type) {
    case GB_TYPE_HASH:
        n = gb_hash_len(&o->o.h);
        break;
    case GB_TYPE_SET:
        n = gb_set_card(&o->o.s);
        break;
    case GB_TYPE_ZSET:
        n = gb_zset_card(&o->o.z);
        break;
    default:
        abort(); /* not a collection: a caller's bug */
    }
    if (n == 0)
        gb_db_delete(db, key);
}

void *gb_tobj_adopt(void *heap_hdr)
{
    gb_tobj_hdr *u = heap_hdr;
    void *packed = gb_tobj_pack(u->h.enc, u->h.p);
    if (((uintptr_t)u->h.p & 3u) || u->h.enc > 3)
        abort(); /* representations are malloc'd: never */
    gb_free(heap_hdr);
    return packed;
}

void gb_tobj_add(gb_db *db, gb_slice key, enum gb_type t, void *heap_hdr, gb_tobj *o)
{
    void *packed = gb_tobj_adopt(heap_hdr);
    o->kv = gb_db_add_object(db, key, t, packed);
    o->o = gb_tobj_unpack(packed);
}

void gb_types_store(gb_db *db, gb_slice key, enum gb_type t, void *obj)
{
    if (obj) {
        gb_db_set_object(db, key, t, gb_tobj_adopt(obj)); /* signals BZPOP* waiters for a zset */
        gb_engine_key_modified(db, key);
    } else if (gb_db_delete(db, key)) {
        gb_engine_key_modified(db, key);
    }
}

/* ---- HSCAN / SSCAN / ZSCAN ------------------------------------------------------------------ */

/* Passes the elements the pattern accepts on to the caller's sink, counting
 * them. */
typedef struct scan_filter {
    const gb_scan_opts *opts;
    const gb_sink *sink;
    size_t n;
    const gb_hash *ttl_hash; /* a hash with field deadlines: expired fields are skipped */
    int64_t now_ms;
} scan_filter;

static bool scan_accepts(scan_filter *f, gb_slice member)
{
    const gb_scan_opts *o = f->opts;
    if (o->use_pattern && !gb_glob_match(o->pattern.ptr, o->pattern.len, member.ptr, member.len, false))
        return false;
    f->n++;
    return true;
}

static void scan_pair(void *ctx, gb_slice field, gb_slice value)
{
    scan_filter *f = ctx;
    if (f->ttl_hash && gb_hash_field_expired(f->ttl_hash, field, f->now_ms))
        return; /* past its deadline: never served */
    if (scan_accepts(f, field))
        f->sink->pair(f->sink->ctx, field, value);
}

static void scan_member(void *ctx, gb_slice member)
{
    scan_filter *f = ctx;
    if (scan_accepts(f, member))
        f->sink->value(f->sink->ctx, member);
}

static void scan_scored(void *ctx, gb_slice member, double score)
{
    scan_filter *f = ctx;
    if (scan_accepts(f, member))
        f->sink->scored(f->sink->ctx, member, score);
}

static uint64_t scan_batch(gb_tobj_hdr *o, enum gb_type t, uint64_t cursor, scan_filter *f)
{
    switch (t) {
    case GB_TYPE_HASH:
        return gb_hash_scan(&o->h, cursor, scan_pair, f);
    case GB_TYPE_SET:
        return gb_set_scan(&o->s, cursor, scan_member, f);
    case GB_TYPE_ZSET:
        return gb_zset_scan(&o->z, cursor, scan_scored, f);
    default:
        abort(); /* not a collection: a caller's bug */
    }
}

gb_result gb_tobj_scan(gb_db *db, gb_slice key, enum gb_type t, uint64_t cursor, const gb_scan_opts *opts,
                       const gb_sink *sink, uint64_t *next)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, t, false, &o);
    *next = 0;
    if (found <= 0)
        return found < 0 ? GB_R_WRONGTYPE : GB_R_NOTFOUND;
    if (!opts)
        return GB_R_BADARG;
    scan_filter f = {opts, sink, 0, NULL, db->eng->now_ms};
    if (t == GB_TYPE_HASH && gb_hash_has_ttl_enc(&o.o.h))
        f.ttl_hash = &o.o.h;
    size_t per = t == GB_TYPE_SET ? 1 : 2;
    int64_t budget = gb_scan_step_budget(opts->count);
    do {
        cursor = scan_batch(&o.o, t, cursor, &f);
    } while (cursor && budget-- > 0 && f.n * per < (size_t)opts->count);
    *next = cursor;
    return GB_R_OK;
}

/* ---- the types' gb_type_ops ---------------------------------------------------------- */

/* The keyspace holds packed pointers: each callback rebuilds the header (M,
 * its gb_tobj_hdr member) and calls the type module's gb_T_release, _release_step,
 * _dup, _encoding_name and _payload_mem. */
#define TOBJ_TYPE_OPS(T, M, TYPE)                                                                                    \
    static void T##_free(void *obj)                                                                                  \
    {                                                                                                                \
        gb_tobj_hdr u = gb_tobj_unpack(obj);                                                                         \
        gb_##T##_release(&u.M);                                                                                      \
    }                                                                                                                \
    static void *T##_dup(const void *obj)                                                                            \
    {                                                                                                                \
        gb_tobj_hdr u = gb_tobj_unpack(obj);                                                                         \
        return gb_tobj_adopt(gb_##T##_dup(&u.M));                                                                    \
    }                                                                                                                \
    static const char *T##_encoding(const void *obj)                                                                 \
    {                                                                                                                \
        gb_tobj_hdr u = gb_tobj_unpack(obj);                                                                         \
        return gb_##T##_encoding_name(&u.M);                                                                         \
    }                                                                                                                \
    static size_t T##_mem(const void *obj)                                                                           \
    {                                                                                                                \
        gb_tobj_hdr u = gb_tobj_unpack(obj);                                                                         \
        return gb_##T##_payload_mem(&u.M);                                                                           \
    }                                                                                                                \
    static bool T##_free_step(void *obj, uint64_t *cursor, size_t max_nodes)                                      \
    {                                                                                                                \
        gb_tobj_hdr u = gb_tobj_unpack(obj);                                                                         \
        return gb_##T##_release_step(&u.M, cursor, max_nodes);                                                      \
    }                                                                                                                \
    static const gb_type_ops T##_type_ops = {#T, T##_free, T##_dup, T##_encoding, T##_mem, T##_effort, T##_free_step}; \
    void gb_##T##_type_register(void) { gb_type_register(TYPE, &T##_type_ops); }

/* Free effort: one allocation for a compact encoding, one per element for
 * a large one. */
static size_t hash_effort(const void *obj)
{
    gb_tobj_hdr u = gb_tobj_unpack(obj);
    return u.h.enc != GB_HASH_LISTPACK ? gb_hash_len(&u.h) : 1;
}
static size_t set_effort(const void *obj)
{
    gb_tobj_hdr u = gb_tobj_unpack(obj);
    return u.s.enc == GB_SET_HASHTABLE ? gb_set_card(&u.s) : 1;
}
static size_t zset_effort(const void *obj)
{
    gb_tobj_hdr u = gb_tobj_unpack(obj);
    return u.z.enc == GB_ZSET_BTREE ? gb_zset_card(&u.z) : 1;
}

TOBJ_TYPE_OPS(hash, h, GB_TYPE_HASH)
TOBJ_TYPE_OPS(set, s, GB_TYPE_SET)
TOBJ_TYPE_OPS(zset, z, GB_TYPE_ZSET)
