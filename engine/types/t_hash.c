/*
 * The hash type's typed key operations, on top of engine/ds/hash.h.
 */
#include "engine/types/t_hash.h"

#include "engine/base/util.h"
#include "engine/types/t_hash_ttl.h"

/* ---- lookups ------------------------------------------------------------------------------ */

static gb_result lookup_result(int found) { return found < 0 ? GB_R_WRONGTYPE : GB_R_NOTFOUND; }

/* Redis's hashTypeLookupWriteOrCreate: true with the hash under key in o,
 * created empty when missing; false when the key holds another type. */
static bool hash_for_write(gb_db *db, gb_slice key, gb_tobj *o)
{
    int found = gb_tobj_lookup(db, key, GB_TYPE_HASH, true, o);
    if (found < 0)
        return false;
    if (!found)
        gb_tobj_add(db, key, GB_TYPE_HASH, gb_hash_new(), o);
    return true;
}

/* hash_for_write for a command about to use one field (HSETNX, HINCRBY,
 * HINCRBYFLOAT): an expired field is deleted first (Redis 8.0's
 * HFE_LAZY_EXPIRE), and a key that went with it is created again. */
static bool hash_for_field_write(gb_db *db, gb_slice key, gb_slice field, gb_tobj *o)
{
    if (!hash_for_write(db, key, o))
        return false;
    if (gb_hfe_expire_field(db, key, o, field, true) && !o->kv)
        return hash_for_write(db, key, o);
    return true;
}

/* ---- writes ------------------------------------------------------------------------------- */

gb_result gb_hash_hset(gb_db *db, gb_slice key, size_t n, const gb_slice *fields, const gb_slice *values,
                       int64_t *added)
{
    *added = 0;
    gb_tobj o;
    if (n == 0) /* native callers only: the RESP form's arity refuses it */
        return gb_tobj_lookup(db, key, GB_TYPE_HASH, true, &o) < 0 ? GB_R_WRONGTYPE : GB_R_OK;
    if (!hash_for_write(db, key, &o))
        return GB_R_WRONGTYPE;
    gb_types_config cfg = gb_types_cfg(db->eng);
    *added = (int64_t)gb_hash_set_many(&o.o.h, &cfg, n, fields, values);
    gb_tobj_sync(&o);
    gb_engine_key_changed(db, key, n); /* Redis counts every pair, new or not */
    return GB_R_OK;
}

gb_result gb_hash_hsetnx(gb_db *db, gb_slice key, gb_slice field, gb_slice value, int64_t *set)
{
    *set = 0;
    gb_tobj o;
    if (!hash_for_field_write(db, key, field, &o))
        return GB_R_WRONGTYPE;
    gb_types_config cfg = gb_types_cfg(db->eng);
    if (gb_hash_setnx(&o.o.h, &cfg, field, value)) {
        gb_tobj_sync(&o);
        gb_engine_key_modified(db, key);
        *set = 1;
    }
    return GB_R_OK;
}

gb_result gb_hash_hdel(gb_db *db, gb_slice key, size_t n, const gb_slice *fields, int64_t *removed)
{
    *removed = 0;
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_HASH, true, &o);
    if (found <= 0)
        return found < 0 ? GB_R_WRONGTYPE : GB_R_OK;
    *removed = (int64_t)gb_hash_del(&o.o.h, n, fields);
    if (*removed) {
        gb_tobj_sync_or_delete(db, key, &o);
        gb_engine_key_changed(db, key, (uint64_t)*removed);
    }
    return GB_R_OK;
}

gb_result gb_hash_hincrby(gb_db *db, gb_slice key, gb_slice field, int64_t incr, int64_t *out)
{
    gb_tobj o;
    if (!hash_for_field_write(db, key, field, &o))
        return GB_R_WRONGTYPE;
    gb_types_config cfg = gb_types_cfg(db->eng);
    int rc = gb_hash_incrby(&o.o.h, &cfg, field, incr, out);
    if (rc == 0)
        gb_engine_key_modified(db, key);
    gb_tobj_sync_or_delete(db, key, &o); /* a key created for nothing goes again */
    if (rc == 0)
        return GB_R_OK;
    return rc == GB_EINVAL ? GB_R_NOTINT : GB_R_OVERFLOW;
}

gb_result gb_hash_hincrbyfloat(gb_db *db, gb_slice key, gb_slice field, long double incr, char *buf, size_t *len)
{
    gb_tobj o;
    if (!hash_for_field_write(db, key, field, &o))
        return GB_R_WRONGTYPE;
    gb_types_config cfg = gb_types_cfg(db->eng);
    *len = 0;
    int rc = gb_hash_incrbyfloat(&o.o.h, &cfg, field, incr, buf, len);
    if (rc == 0)
        gb_engine_key_modified(db, key);
    gb_tobj_sync_or_delete(db, key, &o);
    if (rc == 0)
        return GB_R_OK;
    return rc == GB_EINVAL ? GB_R_NOTFLOAT : GB_R_NAN;
}

/* ---- reads -------------------------------------------------------------------------------- */

gb_result gb_hash_hget(gb_db *db, gb_slice key, gb_slice field, gb_slice *out, char *buf)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_HASH, false, &o);
    if (found <= 0)
        return lookup_result(found);
    if (gb_hfe_expire_field(db, key, &o, field, true))
        return GB_R_NOTFOUND;
    return gb_hash_get(&o.o.h, field, out, buf) ? GB_R_OK : GB_R_NOTFOUND;
}

gb_result gb_hash_hmget(gb_db *db, gb_slice key, size_t n, const gb_slice *fields, const gb_sink *sink)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_HASH, false, &o);
    if (found < 0)
        return GB_R_WRONGTYPE;
    gb_sink_len(sink, n);
    size_t expired = 0;
    for (size_t i = 0; i < n; i++) {
        char buf[GB_HASH_VALUE_BUF];
        gb_slice v;
        if (found && gb_hfe_expire_field(db, key, &o, fields[i], false)) {
            expired++;
            found = o.kv != NULL; /* the hash went with its last field */
            sink->missing(sink->ctx);
        } else if (found && gb_hash_get(&o.o.h, fields[i], &v, buf)) {
            sink->value(sink->ctx, v);
        } else {
            sink->missing(sink->ctx);
        }
    }
    gb_hfe_notify_batch(db, key, expired, expired && !found);
    return GB_R_OK;
}

/* The hash under key for reading, or NULL when it is missing or holds
 * another type (*r says which). */
static const gb_hash *hash_read(gb_db *db, gb_slice key, gb_tobj *o, gb_result *r)
{
    int found = gb_tobj_lookup(db, key, GB_TYPE_HASH, false, o);
    *r = found < 0 ? GB_R_WRONGTYPE : GB_R_OK;
    return found > 0 ? &o->o.h : NULL;
}

/* hash_read for a command about to read one field, NULL also when that
 * field had expired (it is deleted, lazily). */
static const gb_hash *hash_read_field(gb_db *db, gb_slice key, gb_slice field, gb_tobj *o, gb_result *r)
{
    const gb_hash *h = hash_read(db, key, o, r);
    return h && !gb_hfe_expire_field(db, key, o, field, true) ? h : NULL;
}

gb_result gb_hash_hlen(gb_db *db, gb_slice key, int64_t *len)
{
    gb_tobj o;
    gb_result r;
    const gb_hash *h = hash_read(db, key, &o, &r);
    *len = h ? (int64_t)gb_hash_len(h) : 0;
    return r;
}

gb_result gb_hash_hexists(gb_db *db, gb_slice key, gb_slice field, int64_t *exists)
{
    gb_tobj o;
    gb_result r;
    const gb_hash *h = hash_read_field(db, key, field, &o, &r);
    *exists = h ? gb_hash_exists(h, field) : 0;
    return r;
}

gb_result gb_hash_hstrlen(gb_db *db, gb_slice key, gb_slice field, int64_t *len)
{
    gb_tobj o;
    gb_result r;
    const gb_hash *h = hash_read_field(db, key, field, &o, &r);
    *len = h ? (int64_t)gb_hash_strlen(h, field) : 0;
    return r;
}

/* Passes on the pairs whose field has not expired. */
typedef struct live_filter {
    const gb_hash *h;
    int64_t now;
    const gb_sink *sink;
} live_filter;

static void emit_live(void *ctx, gb_slice field, gb_slice value)
{
    live_filter *lf = ctx;
    if (!gb_hash_field_expired(lf->h, field, lf->now))
        lf->sink->pair(lf->sink->ctx, field, value);
}

/* A plain copy of a hash without its expired fields (HRANDFIELD's pool). */
typedef struct live_copy {
    const gb_hash *h;
    int64_t now;
    gb_hash *dst;
    gb_types_config cfg;
} live_copy;

static void copy_live(void *ctx, gb_slice field, gb_slice value)
{
    live_copy *lc = ctx;
    if (!gb_hash_field_expired(lc->h, field, lc->now))
        gb_hash_set(lc->dst, &lc->cfg, field, value);
}

gb_result gb_hash_hgetall(gb_db *db, gb_slice key, const gb_sink *sink)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_HASH, false, &o);
    if (found <= 0)
        return lookup_result(found);
    int64_t now = db->eng->now_ms;
    if (GB_LIKELY(!gb_hash_ttl_any_expired(&o.o.h, now))) {
        gb_sink_len(sink, gb_hash_len(&o.o.h));
        gb_hash_each(&o.o.h, sink->pair, sink->ctx);
        return GB_R_OK;
    }
    /* Fields past their deadline are left for the expiry to delete and
     * skipped here (Redis 8.0's HGETALL neither shows nor deletes them). */
    gb_sink_len(sink, gb_hash_len(&o.o.h) - gb_hash_ttl_expired_count(&o.o.h, now));
    live_filter lf = {&o.o.h, now, sink};
    gb_hash_each(&o.o.h, emit_live, &lf);
    return GB_R_OK;
}

gb_result gb_hash_hrandfield(gb_db *db, gb_slice key, int64_t count, const gb_sink *sink)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_HASH, false, &o);
    if (found <= 0)
        return lookup_result(found);
    const gb_hash *pool = &o.o.h;
    gb_hash *live = NULL;
    int64_t now = db->eng->now_ms;
    if (GB_UNLIKELY(gb_hash_ttl_any_expired(pool, now))) {
        /* Expired fields are never picked: draw from the live ones. */
        live = gb_hash_new();
        live_copy lc = {pool, now, live, gb_types_cfg(db->eng)};
        gb_hash_each(pool, copy_live, &lc);
        pool = live;
        if (gb_hash_len(live) == 0) { /* every field expired: an empty hash */
            gb_hash_free(live);
            return GB_R_NOTFOUND;
        }
    }
    uint64_t n = gb_types_random_n(count, gb_hash_len(pool));
    if (gb_sink_fits(sink, n, gb_hash_payload_mem(pool) / GB_MAX(gb_hash_len(pool), 1))) {
        gb_sink_len(sink, (size_t)n);
        if (n)
            gb_hash_random(pool, count, sink->pair, sink->ctx);
    }
    gb_hash_free(live);
    return GB_R_OK;
}
