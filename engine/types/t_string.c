/*
 * The string type's typed key operations, on top of engine/core/keyspace/db.h (short
 * strings live in the key's record).
 */
#include "engine/types/t_string.h"

#include <math.h>

#include "engine/core/engine.h"
#include "engine/core/pubsub/pubsub.h"
#include "engine/base/mem.h"
#include "engine/base/score.h"
#include "engine/base/util.h"

gb_result gb_string_get(gb_db *db, gb_slice key, gb_slice *out, char *intbuf)
{
    gb_kv *kv = gb_db_lookup_read(db, key);
    if (!kv)
        return GB_R_NOTFOUND;
    if (kv->type != GB_TYPE_STRING)
        return GB_R_WRONGTYPE;
    *out = gb_kv_string(kv, intbuf);
    return GB_R_OK;
}

gb_result gb_string_getdel(gb_db *db, gb_slice key, const gb_sink *sink)
{
    gb_slice v;
    char buf[GB_INT_BUF];
    gb_result r = gb_string_get(db, key, &v, buf);
    if (r != GB_R_OK)
        return r;
    sink->value(sink->ctx, v); /* before the bytes go with the key */
    gb_db_delete(db, key);
    gb_engine_key_modified(db, key);
    return GB_R_OK;
}

gb_result gb_string_getex(gb_db *db, gb_slice key, const int64_t *when_ms, bool persist, const gb_sink *sink,
                          gb_expiry_change *change)
{
    *change = GB_EXPIRY_NONE;
    gb_kv *kv = gb_db_lookup_read(db, key);
    if (!kv)
        return GB_R_NOTFOUND;
    if (kv->type != GB_TYPE_STRING)
        return GB_R_WRONGTYPE;
    if (!when_ms)
        return GB_R_BADARG;
    char buf[GB_INT_BUF];
    sink->value(sink->ctx, gb_kv_string(kv, buf));
    if (*when_ms >= 0) {
        *change = gb_keys_expire_record(db, key, kv, *when_ms);
    } else if (persist && gb_kv_volatile(kv)) {
        gb_db_persist(db, kv);
        gb_engine_key_modified(db, key);
        *change = GB_EXPIRY_PERSISTED;
    }
    return GB_R_OK;
}

gb_result gb_string_getrange(gb_db *db, gb_slice key, int64_t start, int64_t end, gb_slice *out, char *intbuf)
{
    gb_slice v;
    gb_result r = gb_string_get(db, key, &v, intbuf);
    *out = gb_slice_make("", 0);
    if (r != GB_R_OK)
        return r;
    int64_t len = (int64_t)v.len;
    if (start < 0 && end < 0 && start > end)
        return GB_R_OK;
    if (start < 0)
        start += len;
    if (end < 0)
        end += len;
    if (start < 0)
        start = 0;
    if (end < 0)
        end = 0;
    if (end >= len)
        end = len - 1;
    if (start <= end && len != 0)
        *out = gb_slice_make(v.ptr + start, (size_t)(end - start + 1));
    return GB_R_OK;
}

gb_result gb_string_mget(gb_db *db, size_t n, const gb_slice *keys, const gb_sink *sink)
{
    gb_sink_len(sink, n);
    for (size_t i = 0; i < n; i++) {
        gb_kv *kv = gb_db_lookup_read(db, keys[i]);
        if (!kv || kv->type != GB_TYPE_STRING) {
            sink->missing(sink->ctx);
            continue;
        }
        char buf[GB_INT_BUF];
        sink->value(sink->ctx, gb_kv_string(kv, buf));
    }
    return GB_R_OK;
}

gb_result gb_string_mset(gb_db *db, size_t npairs, const gb_slice *kv, bool nx, bool *set)
{
    *set = false;
    if (nx) {
        for (size_t i = 0; i < npairs; i++)
            if (gb_db_lookup_write(db, kv[2 * i]))
                return GB_R_OK;
    }
    for (size_t i = 0; i < npairs; i++) {
        gb_db_set_string(db, kv[2 * i], kv[2 * i + 1], false);
        gb_engine_key_modified(db, kv[2 * i]);
        gb_notify_keyspace_event(db->eng, GB_NOTIFY_STRING, "set", kv[2 * i], db->id);
    }
    *set = true;
    return GB_R_OK;
}

gb_result gb_string_set(gb_db *db, gb_slice key, gb_slice val, unsigned flags, int64_t expire_at_ms,
                        bool *old_found, char **old_owned, size_t *old_len)
{
    /* GET reads the old value with a read lookup of its own, as Redis's
     * getGenericCommand: a hit or miss counted, the key touched once more. */
    if (flags & GB_SET_GET)
        (void)gb_db_lookup_read(db, key);
    gb_kv *kv = gb_db_lookup_write(db, key);
    if (flags & GB_SET_GET) {
        *old_found = false;
        *old_owned = NULL;
        *old_len = 0;
        if (kv) {
            if (kv->type != GB_TYPE_STRING)
                return GB_R_WRONGTYPE;
            char buf[GB_INT_BUF];
            gb_slice old = gb_kv_string(kv, buf);
            *old_found = true;
            *old_owned = gb_memdup(old.ptr, old.len);
            *old_len = old.len;
        }
    }
    if (((flags & GB_SET_NX) && kv) || ((flags & GB_SET_XX) && !kv))
        return GB_R_SKIPPED;
    /* The value may alias the old record's bytes (SET k from a GET of k in a
     * script-less world this cannot happen; argv is the caller's). */
    gb_kv *nkv = kv ? gb_db_set_string_found(db, kv, val, (flags & GB_SET_KEEPTTL) != 0) : gb_db_add_string(db, key, val);
    if (expire_at_ms >= 0)
        gb_db_set_expire(db, nkv, expire_at_ms);
    gb_engine_key_modified(db, key);
    return GB_R_OK;
}

gb_result gb_string_incrby(gb_db *db, gb_slice key, int64_t by, int64_t *out)
{
    gb_kv *kv = gb_db_lookup_write(db, key);
    int64_t cur = 0;
    if (kv) {
        if (kv->type != GB_TYPE_STRING)
            return GB_R_WRONGTYPE;
        if (kv->enc == GB_ENC_INT) {
            cur = gb_kv_int(kv);
        } else {
            char buf[GB_INT_BUF];
            gb_slice s = gb_kv_string(kv, buf);
            if (!gb_slice2ll(s, &cur))
                return GB_R_NOTINT;
        }
    }
    if ((by < 0 && cur < 0 && by < INT64_MIN - cur) || (by > 0 && cur > 0 && by > INT64_MAX - cur))
        return GB_R_OVERFLOW;
    cur += by;
    if (kv)
        gb_db_set_int_found(db, kv, cur);
    else
        gb_db_set_int(db, key, cur);
    gb_engine_key_modified(db, key);
    *out = cur;
    return GB_R_OK;
}

gb_result gb_string_incrbyfloat(gb_db *db, gb_slice key, gb_slice incr, char *buf, size_t *len)
{
    gb_kv *kv = gb_db_lookup_write(db, key);
    long double cur = 0, by;
    if (kv) {
        if (kv->type != GB_TYPE_STRING)
            return GB_R_WRONGTYPE;
        char ib[GB_INT_BUF];
        if (gb_parse_long_double(gb_kv_string(kv, ib), &cur) != 0)
            return GB_R_NOTFLOAT;
    }
    if (gb_parse_long_double(incr, &by) != 0)
        return GB_R_NOTFLOAT;
    cur += by;
    if (isnan(cur) || isinf(cur))
        return GB_R_NAN;
    *len = gb_format_long_double(cur, buf, GB_LONG_DOUBLE_BUF);
    gb_db_set_string_text(db, key, gb_slice_make(buf, *len), true);
    gb_engine_key_modified(db, key);
    return GB_R_OK;
}

gb_result gb_string_append(gb_db *db, gb_slice key, gb_slice val, size_t max_len, size_t *out)
{
    gb_kv *kv = gb_db_lookup_write(db, key);
    if (!kv) {
        if (val.len > max_len)
            return GB_R_TOOBIG;
        gb_db_set_string(db, key, val, false);
        gb_engine_key_modified(db, key);
        *out = val.len;
        return GB_R_OK;
    }
    if (kv->type != GB_TYPE_STRING)
        return GB_R_WRONGTYPE;
    char buf[GB_INT_BUF];
    size_t cur = gb_kv_string(kv, buf).len;
    if (cur + val.len > max_len)
        return GB_R_TOOBIG;
    gb_str *s = gb_db_string_writable(db, kv, cur + val.len);
    memcpy(s->data + s->len, val.ptr, val.len);
    s->len += val.len;
    gb_engine_key_modified(db, key);
    *out = s->len;
    return GB_R_OK;
}

gb_result gb_string_setrange(gb_db *db, gb_slice key, int64_t offset, gb_slice val, size_t max_len, size_t *out)
{
    if (offset < 0)
        return GB_R_RANGE;
    gb_kv *kv = gb_db_lookup_write(db, key);
    if (kv && kv->type != GB_TYPE_STRING)
        return GB_R_WRONGTYPE;
    char buf[GB_INT_BUF];
    size_t cur = kv ? gb_kv_string(kv, buf).len : 0;
    if (val.len == 0) {
        /* Nothing to write: report the length, create nothing. */
        *out = cur;
        return GB_R_OK;
    }
    if ((uint64_t)offset + val.len > max_len)
        return GB_R_TOOBIG;
    size_t need = (size_t)offset + val.len;
    if (!kv)
        kv = gb_db_set_string(db, key, gb_slice_make("", 0), false);
    gb_str *s = gb_db_string_writable(db, kv, GB_MAX(need, cur));
    if (need > s->len) {
        memset(s->data + s->len, 0, need - s->len);
        s->len = need;
    }
    memcpy(s->data + offset, val.ptr, val.len);
    gb_engine_key_modified(db, key);
    *out = s->len;
    return GB_R_OK;
}

gb_result gb_string_strlen(gb_db *db, gb_slice key, size_t *out)
{
    gb_kv *kv = gb_db_lookup_read(db, key);
    *out = 0;
    if (!kv)
        return GB_R_OK;
    if (kv->type != GB_TYPE_STRING)
        return GB_R_WRONGTYPE;
    char buf[GB_INT_BUF];
    *out = gb_kv_string(kv, buf).len;
    return GB_R_OK;
}
