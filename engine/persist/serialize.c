#include "engine/persist/serialize.h"

#include <math.h>
#include <stdlib.h>

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/ds/hash_ttl.h"
#include "engine/ds/listpack.h"
#include "engine/persist/load_pipe.h"
#include "engine/persist/snap_stream.h"
#include "engine/persist/snapfmt.h"
#include "engine/types/t_list.h"
#include "engine/types/tobj.h"
#include "platform/mem.h"

#include "goblin/version.h"

/* ---- writing ---------------------------------------------------------------------------- */

static bool put_list_elem(void *ctx, size_t index, gb_slice v)
{
    (void)index;
    gb_snap_put_str(ctx, v.ptr, v.len);
    return true;
}

static void put_member(void *ctx, gb_slice m) { gb_snap_put_str(ctx, m.ptr, m.len); }

static void put_pair(void *ctx, gb_slice f, gb_slice v)
{
    gb_snap_put_str(ctx, f.ptr, f.len);
    gb_snap_put_str(ctx, v.ptr, v.len);
}

static void put_deadline(void *ctx, gb_slice f, int64_t when_ms)
{
    gb_snap_put_str(ctx, f.ptr, f.len);
    gb_snap_put_varint(ctx, (uint64_t)when_ms);
}

static void put_scored(void *ctx, gb_slice m, double score)
{
    gb_snap_put_str(ctx, m.ptr, m.len);
    gb_snap_put_f64(ctx, score);
}

static void put_blob(gb_snap_writer *w, const void *p, size_t n) { gb_snap_put_str(w, p, n); }

/* The record type of kv, and its compact bytes when it has them. */
/* As Redis 7.4 saves a hash (rdbSaveObjectType): a hash table none of whose
 * fields has a deadline any more is a plain hash in the file, and loads
 * as a listpack or a hash table by its size; a listpackex stays one. */
static bool saved_with_deadlines(const gb_hash *h)
{
    return gb_hash_has_ttl_enc(h) &&
           (gb_hash_ttl_count(h) > 0 || gb_hash_encoding(gb_hash_fields_c(h)) == GB_HASH_LISTPACK);
}

static uint8_t type_of_kv(const gb_kv *kv, gb_tobj_hdr *o, const void **blob, size_t *bloblen)
{
    *blob = NULL;
    switch (kv->type) {
    case GB_TYPE_STRING:
        return kv->enc == GB_ENC_INT ? GB_SNAP_T_STRING_INT : GB_SNAP_T_STRING;
    case GB_TYPE_LIST:
        if ((*blob = gb_list_listpack(gb_kv_ptr(kv))) != NULL) {
            *bloblen = gb_lp_bytes(*blob);
            return GB_SNAP_T_LIST_LISTPACK;
        }
        return GB_SNAP_T_LIST;
    case GB_TYPE_SET:
        *o = gb_tobj_unpack(gb_kv_ptr(kv));
        if ((*blob = gb_set_intset(&o->s)) != NULL) {
            *bloblen = gb_set_intset_bytes(&o->s);
            return GB_SNAP_T_SET_INTSET;
        }
        if ((*blob = gb_set_listpack(&o->s)) != NULL) {
            *bloblen = gb_lp_bytes(*blob);
            return GB_SNAP_T_SET_LISTPACK;
        }
        return GB_SNAP_T_SET;
    case GB_TYPE_STREAM:
        return GB_SNAP_T_STREAM;
    case GB_TYPE_HASH:
        *o = gb_tobj_unpack(gb_kv_ptr(kv));
        if (saved_with_deadlines(&o->h))
            return GB_SNAP_T_HASH_TTL;
        if ((*blob = gb_hash_listpack(&o->h)) != NULL) {
            *bloblen = gb_lp_bytes(*blob);
            return GB_SNAP_T_HASH_LISTPACK;
        }
        return GB_SNAP_T_HASH;
    default:
        *o = gb_tobj_unpack(gb_kv_ptr(kv));
        if ((*blob = gb_zset_listpack(&o->z)) != NULL) {
            *bloblen = gb_lp_bytes(*blob);
            return GB_SNAP_T_ZSET_LISTPACK;
        }
        return GB_SNAP_T_ZSET;
    }
}

void gb_snap_write_key(gb_snap_writer *w, const gb_kv *kv)
{
    gb_tobj_hdr o;
    const void *blob;
    size_t bloblen = 0;
    uint8_t type = type_of_kv(kv, &o, &blob, &bloblen);
    gb_snap_put_u8(w, GB_SNAP_OP_KEY);
    gb_snap_put_u8(w, type);
    gb_snap_put_u8(w, gb_kv_volatile(kv) ? GB_SNAP_KEY_HAS_EXPIRE : 0);
    if (gb_kv_volatile(kv))
        gb_snap_put_u64(w, (uint64_t)gb_kv_expire(kv));
    gb_slice key = gb_kv_key(kv);
    gb_snap_put_str(w, key.ptr, key.len);
    if (blob) {
        put_blob(w, blob, bloblen);
        return;
    }
    switch (type) {
    case GB_SNAP_T_STRING_INT:
        gb_snap_put_svarint(w, gb_kv_int(kv));
        break;
    case GB_SNAP_T_STRING: {
        char buf[GB_INT_BUF];
        gb_slice v = gb_kv_string(kv, buf);
        gb_snap_put_str(w, v.ptr, v.len);
        break;
    }
    case GB_SNAP_T_LIST:
        gb_snap_put_varint(w, gb_list_len(gb_kv_ptr(kv)));
        gb_list_range(gb_kv_ptr(kv), 0, -1, false, put_list_elem, w);
        break;
    case GB_SNAP_T_SET:
        gb_snap_put_varint(w, gb_set_card(&o.s));
        gb_set_members(&o.s, put_member, w);
        break;
    case GB_SNAP_T_HASH:
        gb_snap_put_varint(w, gb_hash_len(&o.h));
        gb_hash_each(&o.h, put_pair, w);
        break;
    case GB_SNAP_T_HASH_TTL:
        gb_snap_put_varint(w, gb_hash_len(&o.h));
        gb_hash_each(&o.h, put_pair, w);
        gb_snap_put_varint(w, gb_hash_ttl_count(&o.h));
        gb_hash_ttl_each(&o.h, put_deadline, w);
        break;
    case GB_SNAP_T_STREAM:
        gb_snap_write_stream(w, gb_kv_ptr(kv));
        break;
    default:
        gb_snap_put_varint(w, gb_zset_card(&o.z));
        gb_zset_range_rank(&o.z, 0, -1, false, put_scored, w);
        break;
    }
}

static void put_aux(gb_snap_writer *w, const char *name, const char *value)
{
    gb_snap_put_u8(w, GB_SNAP_OP_AUX);
    gb_snap_put_str(w, name, strlen(name));
    gb_snap_put_str(w, value, strlen(value));
}

static void put_function(void *ctx, gb_slice code)
{
    gb_snap_put_u8(ctx, GB_SNAP_OP_FUNCTION);
    gb_snap_put_str(ctx, code.ptr, code.len);
}

void gb_snap_write_header_records(gb_snap_writer *w, gb_engine *eng)
{
    char t[32];
    gb_ll2str(t, eng->now_ms / 1000);
    put_aux(w, "goblin-ver", GOBLIN_VERSION);
    put_aux(w, "ctime", t);
    /* The replication history at this moment, which a restart continues
     * (Redis's repl-stream-db, repl-id, repl-offset aux fields). */
    char replid[GB_REPL_ID_LEN + 1];
    int64_t offset;
    int stream_db;
    if (gb_repl_history(eng, replid, &offset, &stream_db)) {
        gb_ll2str(t, stream_db);
        put_aux(w, "repl-stream-db", t);
        put_aux(w, "repl-id", replid);
        gb_ll2str(t, offset);
        put_aux(w, "repl-offset", t);
    }
    /* The function libraries: they are part of the dataset (Redis keeps
     * them in the RDB file too). */
    if (eng->scripting)
        eng->scripting->foreach_library(eng->scripting->ctx, put_function, w);
    for (int d = 0; d < eng->ndbs; d++) {
        size_t n = gb_db_size(&eng->dbs[d]);
        if (!n)
            continue;
        gb_snap_put_u8(w, GB_SNAP_OP_DBSIZE);
        gb_snap_put_varint(w, (uint64_t)d);
        gb_snap_put_varint(w, n);
    }
}

/* ---- loading -------------------------------------------------------------------------------- */

/* A string read from the stream (system allocator: the reader grows it). */
typedef struct sbuf {
    char *p;
    size_t cap, len;
} sbuf;

/* A value's elements are limited by what a client could have stored. */
#define MAX_STRING ((uint64_t)1 << 32)

static bool get_s(gb_snap_reader *r, sbuf *b) { return gb_snap_get_str(r, &b->p, &b->cap, &b->len, MAX_STRING); }
static gb_slice sl(const sbuf *b) { return gb_slice_make(b->p, b->len); }

typedef struct loader {
    gb_engine *eng;
    gb_snap_reader *r;
    gb_db *db;
    sbuf key, a, b;
    gb_types_config tcfg;
    gb_list_config lcfg;
    /* Keys built and not yet in their tables: they go in some keys later
     * (engine/persist/load_pipe.h), so the cache misses of their buckets
     * and chains overlap with decoding the keys after them instead of
     * stalling the load. Before any record other than a key, the pipe is
     * emptied into the tables. */
    gb_load_pipe pipe;
} loader;

static bool fail_key(loader *L, const char *what)
{
    return gb_snap_reader_fail(L->r, "key '%.*s' holds %s", (int)GB_MIN(L->key.len, 64), L->key.p, what);
}

static bool load_count(loader *L, uint64_t *n)
{
    if (!gb_snap_get_varint(L->r, n))
        return false;
    return *n ? true : fail_key(L, "an empty collection");
}

static bool dup(loader *L, const char *what, gb_slice elem)
{
    return gb_snap_reader_fail(L->r, "key '%.*s' holds the %s '%.*s' twice", (int)GB_MIN(L->key.len, 64), L->key.p, what,
                               (int)GB_MIN(elem.len, 64), elem.ptr);
}

static void *load_list(loader *L)
{
    uint64_t n;
    if (!load_count(L, &n))
        return NULL;
    gb_list *l = gb_list_new(&L->lcfg);
    for (uint64_t i = 0; i < n; i++) {
        if (!get_s(L->r, &L->a)) {
            gb_list_free(l);
            return NULL;
        }
        gb_slice v = sl(&L->a);
        gb_list_push(l, GB_LIST_TAIL, &v, 1);
    }
    return l;
}

static void *load_set(loader *L)
{
    uint64_t n;
    if (!load_count(L, &n))
        return NULL;
    gb_set *s = NULL;
    for (uint64_t i = 0; i < n; i++) {
        if (!get_s(L->r, &L->a))
            goto fail;
        gb_slice m = sl(&L->a);
        if (!s)
            s = gb_set_new_for(&L->tcfg, m, (size_t)GB_MIN(n, (uint64_t)1 << 20));
        if (!gb_set_add(s, &L->tcfg, m)) {
            dup(L, "member", m);
            goto fail;
        }
    }
    return gb_tobj_adopt(s);
fail:
    if (s)
        gb_set_free(s);
    return NULL;
}

/* A HASH_TTL record's deadlines, after its pairs: each for a field of h, once,
 * within Redis's range. Fields whose deadline passed while the file lay
 * are loaded as they are; the expiry cycle deletes them (propagating HDEL). */
static bool load_deadlines(loader *L, gb_hash *h)
{
    uint64_t m, when;
    if (!gb_snap_get_varint(L->r, &m))
        return false;
    gb_hash_ttl_enable(h);
    for (uint64_t i = 0; i < m; i++) {
        if (!get_s(L->r, &L->a) || !gb_snap_get_varint(L->r, &when))
            return false;
        gb_slice f = sl(&L->a);
        if (when > (uint64_t)GB_HASH_TTL_MAX || !gb_hash_exists(h, f))
            return fail_key(L, "a field deadline out of range or for no field");
        if (gb_hash_ttl_get(h, f) >= 0)
            return dup(L, "field deadline", f);
        gb_hash_ttl_load(h, f, (int64_t)when);
    }
    return true;
}

static void *load_hash(loader *L, bool with_ttl)
{
    uint64_t n;
    if (!load_count(L, &n))
        return NULL;
    gb_hash *h = gb_hash_new_sized(&L->tcfg, (size_t)GB_MIN(n, (uint64_t)1 << 20));
    for (uint64_t i = 0; i < n; i++) {
        if (!get_s(L->r, &L->a) || !get_s(L->r, &L->b))
            goto fail;
        if (!gb_hash_set(h, &L->tcfg, sl(&L->a), sl(&L->b))) {
            dup(L, "field", sl(&L->a));
            goto fail;
        }
    }
    if (with_ttl && !load_deadlines(L, h))
        goto fail;
    return gb_tobj_adopt(h);
fail:
    gb_hash_free(h);
    return NULL;
}

static void *load_zset(loader *L)
{
    uint64_t n;
    if (!load_count(L, &n))
        return NULL;
    gb_zset *z = gb_zset_new(&L->tcfg, (size_t)GB_MIN(n, (uint64_t)1 << 20), 0);
    for (uint64_t i = 0; i < n; i++) {
        double score;
        if (!get_s(L->r, &L->a) || !gb_snap_get_f64(L->r, &score))
            goto fail;
        if (isnan(score)) {
            fail_key(L, "a NaN score");
            goto fail;
        }
        gb_slice m = sl(&L->a);
        gb_zadd_result res;
        gb_zset_add_many(z, &L->tcfg, 0, 1, &score, &m, &res);
        if (res.added != 1) {
            dup(L, "member", m);
            goto fail;
        }
    }
    gb_zset_convert_if_fits(z, &L->tcfg);
    return gb_tobj_adopt(z);
fail:
    gb_zset_free(z);
    return NULL;
}

static void *load_stream(loader *L)
{
    const char *why;
    gb_stream *s = gb_snap_load_stream(L->r, &why);
    if (!s && why)
        fail_key(L, why);
    return s;
}

/* A compact encoding's bytes, checked whole by the type's module before
 * anything uses them. */
static void *load_blob(loader *L, uint8_t type)
{
    if (!get_s(L->r, &L->a))
        return NULL;
    size_t n = L->a.len;
    unsigned char *bytes = gb_malloc(n ? n : 1);
    if (n) /* an empty blob first: L->a.p is still NULL, and memcpy's source must not be */
        memcpy(bytes, L->a.p, n);
    const char *why = NULL;
    void *obj = NULL;
    switch (type) {
    case GB_SNAP_T_LIST_LISTPACK:
        obj = gb_list_from_listpack(&L->lcfg, bytes, n, &why);
        return obj ? obj : (fail_key(L, why), NULL);
    case GB_SNAP_T_SET_LISTPACK:
        obj = gb_set_from_listpack(bytes, n, &L->tcfg, &why);
        break;
    case GB_SNAP_T_SET_INTSET:
        obj = gb_set_from_intset(bytes, n, &L->tcfg, &why);
        break;
    case GB_SNAP_T_HASH_LISTPACK:
        obj = gb_hash_from_listpack(bytes, n, &L->tcfg, &why);
        break;
    default:
        obj = gb_zset_from_listpack(bytes, n, &L->tcfg, &why);
        break;
    }
    if (!obj) {
        fail_key(L, why);
        return NULL;
    }
    return gb_tobj_adopt(obj);
}

static const enum gb_type type_of[GB_SNAP_T_MAX + 1] = {
    [GB_SNAP_T_STRING] = GB_TYPE_STRING,       [GB_SNAP_T_STRING_INT] = GB_TYPE_STRING,
    [GB_SNAP_T_LIST] = GB_TYPE_LIST,           [GB_SNAP_T_SET] = GB_TYPE_SET,
    [GB_SNAP_T_HASH] = GB_TYPE_HASH,           [GB_SNAP_T_ZSET] = GB_TYPE_ZSET,
    [GB_SNAP_T_LIST_LISTPACK] = GB_TYPE_LIST,  [GB_SNAP_T_SET_LISTPACK] = GB_TYPE_SET,
    [GB_SNAP_T_SET_INTSET] = GB_TYPE_SET,      [GB_SNAP_T_HASH_LISTPACK] = GB_TYPE_HASH,
    [GB_SNAP_T_ZSET_LISTPACK] = GB_TYPE_ZSET,  [GB_SNAP_T_STREAM] = GB_TYPE_STREAM,
    [GB_SNAP_T_HASH_TTL] = GB_TYPE_HASH,
};

static void *load_value(loader *L, uint8_t type)
{
    switch (type) {
    case GB_SNAP_T_LIST:
        return load_list(L);
    case GB_SNAP_T_SET:
        return load_set(L);
    case GB_SNAP_T_HASH:
        return load_hash(L, false);
    case GB_SNAP_T_HASH_TTL:
        return load_hash(L, true);
    case GB_SNAP_T_ZSET:
        return load_zset(L);
    case GB_SNAP_T_STREAM:
        return load_stream(L);
    default:
        return load_blob(L, type);
    }
}

static void drop_value(uint8_t type, void *obj)
{
    if (obj)
        gb_type_get(type_of[type])->free(obj);
}

/* The load fails: dup's key was in its table already. */
static bool fail_twice(loader *L, gb_loaded_key dup)
{
    gb_slice key = gb_kv_key(dup.kv);
    gb_snap_reader_fail(L->r, "key '%.*s' appears twice in database %d", (int)GB_MIN(key.len, 64), key.ptr,
                        dup.db->id);
    gb_kv_free(dup.kv);
    return false;
}

/* Adds the queued keys to their tables; false (the load fails) when one
 * is there already. */
static bool insert_queued(loader *L)
{
    gb_loaded_key dup;
    return gb_load_pipe_flush(&L->pipe, &dup) || fail_twice(L, dup);
}

static bool load_key(loader *L, gb_snap_load_stats *st)
{
    uint8_t type, flags;
    uint64_t expire = 0;
    if (!gb_snap_get_u8(L->r, &type) || !gb_snap_get_u8(L->r, &flags))
        return false;
    if (type > GB_SNAP_T_MAX)
        return gb_snap_reader_fail(L->r, "unknown value type %u", type);
    if (flags & ~GB_SNAP_KEY_HAS_EXPIRE)
        return gb_snap_reader_fail(L->r, "unknown key flags 0x%x", flags);
    if ((flags & GB_SNAP_KEY_HAS_EXPIRE) && !gb_snap_get_u64(L->r, &expire))
        return false;
    if (!get_s(L->r, &L->key))
        return false;
    gb_slice key = sl(&L->key);
    uint64_t hash = gb_db_prefetch_key(L->db, key);
    int64_t ival = 0;
    void *obj = NULL;
    if (type == GB_SNAP_T_STRING) {
        if (!get_s(L->r, &L->a))
            return false;
    } else if (type == GB_SNAP_T_STRING_INT) {
        if (!gb_snap_get_svarint(L->r, &ival))
            return false;
    } else if (!(obj = load_value(L, type))) {
        return false;
    }
    int64_t when = (flags & GB_SNAP_KEY_HAS_EXPIRE) ? (int64_t)expire : -1;
    if (when >= 0 && when <= L->eng->now_ms && !L->eng->loading) {
        drop_value(type, obj); /* already expired: as Redis, not loaded */
        st->expired++;
        return true;
    }
    gb_kv *kv;
    if (type == GB_SNAP_T_STRING_INT) {
        char num[GB_INT_BUF];
        kv = gb_db_loaded_string(L->db, key, gb_slice_make(num, gb_ll2str(num, ival)), when);
    } else if (type == GB_SNAP_T_STRING) {
        kv = gb_db_loaded_string(L->db, key, sl(&L->a), when);
    } else {
        kv = gb_db_loaded_object(L->db, key, type_of[type], obj, when);
    }
    st->keys++;
    gb_loaded_key dup;
    return gb_load_pipe_add(&L->pipe, (gb_loaded_key){kv, hash, L->db}, &dup) || fail_twice(L, dup);
}

/* Sizes a database's table for the keys that come (bounded by the file's
 * size: a key takes more than a byte of it, whatever a record claims). */
static bool load_dbsize(loader *L)
{
    uint64_t db, n;
    if (!gb_snap_get_varint(L->r, &db) || !gb_snap_get_varint(L->r, &n))
        return false;
    if (db >= (uint64_t)L->eng->ndbs)
        return gb_snap_reader_fail(L->r, "database %llu does not exist (databases is %d)", (unsigned long long)db,
                                   L->eng->ndbs);
    uint64_t cap = gb_snap_reader_size(L->r);
    gb_htable_reserve(&L->eng->dbs[db].keys, (size_t)GB_MIN(n, cap));
    return true;
}

/* A function library: loaded as FUNCTION LOAD would (its code compiled
 * and run, its functions registered); a file whose code does not load is
 * refused like any other damage. */
static bool load_function(loader *L)
{
    if (!get_s(L->r, &L->a))
        return false;
    const gb_scripting_hooks *sh = L->eng->scripting;
    if (!sh)
        return gb_snap_reader_fail(L->r, "a function library, and this engine has no scripting");
    char err[512];
    if (sh->load_library(sh->ctx, sl(&L->a), err, sizeof err) != 0)
        return gb_snap_reader_fail(L->r, "function library does not load: %s", err);
    return true;
}

/* An aux field: the replication history is kept (gb_snap_load_stats), the
 * rest are read and checked for form; nothing in them changes the dataset. */
static bool load_aux(loader *L, gb_snap_load_stats *st)
{
    if (!get_s(L->r, &L->a) || !get_s(L->r, &L->b))
        return false;
    gb_slice name = gb_slice_make(L->a.p, L->a.len), value = gb_slice_make(L->b.p, L->b.len);
    gb_repl_history_aux(&st->history, name, value);
    return true;
}

bool gb_snap_load(gb_engine *eng, gb_snap_reader *r, gb_snap_load_stats *st,
                  void (*progress)(void *ctx, const gb_snap_reader *r, const gb_snap_load_stats *st), void *pctx)
{
    loader L = {.eng = eng, .r = r, .db = &eng->dbs[0]};
    L.tcfg = gb_types_cfg(eng);
    L.lcfg = gb_list_config_for(eng);
    memset(st, 0, sizeof *st);
    uint64_t next_report = 64u << 20, next_advice = 0;
    bool ok = false;
    gb_heap_bulk heap;
    gb_plat_heap_bulk_begin(&heap);
    for (;;) {
        uint8_t op;
        if (!gb_snap_get_u8(r, &op))
            break;
        if (op != GB_SNAP_OP_KEY && !insert_queued(&L))
            break;
        if (op == GB_SNAP_OP_KEY) {
            if (!load_key(&L, st))
                break;
        } else if (op == GB_SNAP_OP_SELECTDB) {
            uint64_t db;
            if (!gb_snap_get_varint(r, &db))
                break;
            if (db >= (uint64_t)eng->ndbs) {
                gb_snap_reader_fail(r, "database %llu does not exist (databases is %d)", (unsigned long long)db,
                                    eng->ndbs);
                break;
            }
            L.db = &eng->dbs[db];
        } else if (op == GB_SNAP_OP_DBSIZE) {
            if (!load_dbsize(&L))
                break;
        } else if (op == GB_SNAP_OP_AUX) {
            if (!load_aux(&L, st))
                break;
        } else if (op == GB_SNAP_OP_FUNCTION) {
            if (!load_function(&L))
                break;
        } else if (op == GB_SNAP_OP_EOF) {
            uint64_t keys;
            ok = gb_snap_get_varint(r, &keys) && gb_snap_reader_finish(r, keys);
            if (ok && keys != st->keys + st->expired)
                ok = gb_snap_reader_fail(r, "EOF counts %llu keys, the records hold %llu", (unsigned long long)keys,
                                         (unsigned long long)(st->keys + st->expired));
            break;
        } else {
            gb_snap_reader_fail(r, "unknown record type 0x%02x", op);
            break;
        }
        if (gb_snap_reader_offset(r) >= next_advice) { /* a megabyte of file: about 3 of heap */
            gb_plat_heap_bulk_advise(&heap);
            next_advice = gb_snap_reader_offset(r) + (1u << 20);
        }
        if (progress && gb_snap_reader_offset(r) >= next_report) {
            progress(pctx, r, st);
            next_report = gb_snap_reader_offset(r) + (64u << 20);
        }
    }
    gb_plat_heap_bulk_end(&heap);
    gb_load_pipe_discard(&L.pipe); /* keys a failed load left queued */
    gb_free(L.key.p);
    gb_free(L.a.p);
    gb_free(L.b.p);
    return ok;
}
