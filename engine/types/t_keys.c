/*
 * The keyspace's own typed operations, on top of engine/core/keyspace/db.h.
 */
#include "engine/types/t_keys.h"
#include "engine/core/pubsub/pubsub.h"

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/ds/list.h"
#include "engine/core/request/blocking.h"
#include "engine/core/engine.h"
#include "engine/core/memory/evict.h"
#include "engine/core/request/multi.h"
#include "engine/types/tobj.h"

/* ---- existence and deletion ------------------------------------------------------------ */

gb_result gb_keys_del(gb_db *db, size_t n, const gb_slice *keys, bool lazy, int64_t *deleted)
{
    *deleted = 0;
    for (size_t i = 0; i < n; i++) {
        if (gb_db_lookup_write(db, keys[i]) && gb_db_delete_lazy(db, keys[i], lazy)) {
            gb_engine_key_modified(db, keys[i]);
            gb_notify_keyspace_event(db->eng, GB_NOTIFY_GENERIC, "del", keys[i], db->id);
            (*deleted)++;
        }
    }
    return GB_R_OK;
}

static int64_t count_found(gb_db *db, size_t n, const gb_slice *keys, gb_kv *(*lookup)(gb_db *, gb_slice))
{
    int64_t count = 0;
    for (size_t i = 0; i < n; i++)
        if (lookup(db, keys[i]))
            count++;
    return count;
}

gb_result gb_keys_exists(gb_db *db, size_t n, const gb_slice *keys, int64_t *count)
{
    *count = count_found(db, n, keys, gb_db_lookup_read_notouch);
    return GB_R_OK;
}

gb_result gb_keys_touch(gb_db *db, size_t n, const gb_slice *keys, int64_t *count)
{
    *count = count_found(db, n, keys, gb_db_lookup_read);
    return GB_R_OK;
}

gb_result gb_keys_type(gb_db *db, gb_slice key, const char **name)
{
    gb_kv *kv = gb_db_lookup_read_notouch(db, key);
    *name = kv ? gb_type_name((enum gb_type)kv->type) : "none";
    return kv ? GB_R_OK : GB_R_NOTFOUND;
}

/* ---- iteration --------------------------------------------------------------------------- */

/* Whether kv has not expired: iteration skips expired keys without
 * deleting them, which would change the table under the iterator. */
static bool key_live(const gb_db *db, const gb_kv *kv)
{
    return !gb_kv_expired_at(kv, db->eng->now_ms);
}

static bool pattern_matches(gb_slice pattern, gb_slice key)
{
    return gb_glob_match(pattern.ptr, pattern.len, key.ptr, key.len, false);
}

gb_result gb_keys_keys(gb_db *db, gb_slice pattern, const gb_sink *sink, size_t *n)
{
    bool all = pattern.len == 1 && pattern.ptr[0] == '*';
    *n = 0;
    gb_sink_len(sink, GB_SINK_LEN_UNKNOWN);
    gb_htable_iter it;
    gb_htable_iter_init(&it, &db->keys);
    for (gb_hnode *node; (node = gb_htable_iter_next(&it));) {
        gb_kv *kv = (gb_kv *)node;
        gb_slice k = gb_kv_key(kv);
        if (!key_live(db, kv))
            continue;
        if (all || pattern_matches(pattern, k)) {
            sink->value(sink->ctx, k);
            (*n)++;
        }
    }
    gb_htable_iter_done(&it);
    return GB_R_OK;
}

/* The keys a SCAN batch visited, by reference: nothing changes the table
 * until they are streamed (an expired key is deleted then, after its
 * visit: the others' records stay where they are). */
typedef struct scan_refs {
    gb_slice *keys;
    size_t n, cap;
} scan_refs;

static void scan_collect(gb_hnode *node, void *ctx)
{
    scan_refs *st = ctx;
    if (st->n == st->cap) {
        st->cap = st->cap ? st->cap * 2 : 16;
        st->keys = gb_realloc(st->keys, st->cap * sizeof *st->keys);
    }
    st->keys[st->n++] = gb_kv_key((gb_kv *)node);
}

gb_result gb_keys_scan(gb_db *db, uint64_t cursor, const gb_keys_scan_opts *opts, const gb_sink *sink,
                       uint64_t *next, size_t *n)
{
    scan_refs st = {NULL, 0, 0};
    /* Visit buckets until `count` keys or 10x as many empty steps (Redis). */
    int64_t budget = gb_scan_step_budget(opts->count);
    do {
        cursor = gb_htable_scan(&db->keys, cursor, scan_collect, &st);
    } while (cursor && budget-- > 0 && (int64_t)st.n < opts->count);
    *next = cursor;
    *n = 0;
    gb_sink_len(sink, GB_SINK_LEN_UNKNOWN);
    for (size_t i = 0; i < st.n; i++) {
        gb_slice k = st.keys[i];
        gb_kv *kv = (gb_kv *)gb_htable_find(&db->keys, &k, gb_hash_slice(k));
        if (!kv || (opts->use_pattern && !pattern_matches(opts->pattern, k)))
            continue;
        /* A key that passes the pattern and is past its time is deleted
         * here, an expiry like any other (notified, propagated), as Redis's
         * SCAN does (expireIfNeeded; with TYPE, a read lookup, which also
         * counts a keyspace hit or miss). Its bytes go with it: nothing
         * below reads k then. */
        if (opts->type >= 0) {
            kv = gb_db_lookup_read_notouch(db, k);
            if (!kv || kv->type != opts->type)
                continue;
        } else if (!key_live(db, kv)) {
            gb_db_lookup_quiet(db, k);
            continue;
        }
        sink->value(sink->ctx, k);
        (*n)++;
    }
    gb_free(st.keys);
    return GB_R_OK;
}

gb_result gb_keys_randomkey(gb_db *db, gb_slice *key)
{
    gb_kv *kv = gb_db_random(db);
    if (!kv)
        return GB_R_NOTFOUND;
    *key = gb_kv_key(kv);
    return GB_R_OK;
}

/* ---- moving values ----------------------------------------------------------------------- */

gb_result gb_keys_rename(gb_db *db, gb_slice src_key, gb_slice dst_key, bool nx, int64_t *renamed)
{
    *renamed = 0;
    gb_kv *src = gb_db_lookup_write(db, src_key);
    if (!src)
        return GB_R_NOTFOUND;
    if (gb_slice_eq(src_key, dst_key))
        return GB_R_OK;
    if (gb_db_lookup_write(db, dst_key)) {
        if (nx)
            return GB_R_OK;
        /* Redis deletes the destination and adds it anew (a "new" key
         * event; first in its slot's list, for GETKEYSINSLOT) rather than
         * overwriting it in place. */
        gb_db_delete(db, dst_key);
    }
    gb_db_insert_value(db, dst_key, src, false, gb_db_expire_of(src));
    /* The value moved to the new record: detach it so deleting the old
     * record frees only the key. Re-find it: insertion may have rehashed. */
    src = gb_db_lookup_quiet(db, src_key);
    gb_db_steal_value(src);
    gb_db_delete(db, src_key);
    gb_engine_key_modified(db, src_key);
    gb_engine_key_changed(db, dst_key, 0); /* Redis counts a rename once */
    *renamed = 1;
    return GB_R_OK;
}

gb_result gb_keys_move(gb_db *db, gb_slice key, gb_db *dstdb, int64_t *moved)
{
    *moved = 0;
    gb_kv *src = gb_db_lookup_write(db, key);
    if (!src || gb_db_lookup_write(dstdb, key))
        return GB_R_OK;
    gb_db_insert_value(dstdb, key, src, false, gb_db_expire_of(src));
    gb_db_steal_value(src);
    gb_db_delete(db, key);
    gb_engine_key_modified(db, key);
    gb_engine_key_changed(dstdb, key, 0); /* Redis counts a move once */
    *moved = 1;
    return GB_R_OK;
}

gb_result gb_keys_copy(gb_db *db, gb_slice src_key, gb_db *dstdb, gb_slice dst_key, bool replace, int64_t *copied)
{
    *copied = 0;
    gb_kv *src = gb_db_lookup_read(db, src_key);
    if (!src)
        return GB_R_OK;
    if (gb_db_lookup_write(dstdb, dst_key)) {
        if (!replace)
            return GB_R_OK;
        gb_db_delete(dstdb, dst_key);
    }
    gb_db_insert_value(dstdb, dst_key, src, true, gb_db_expire_of(src));
    gb_engine_key_modified(dstdb, dst_key);
    *copied = 1;
    return GB_R_OK;
}

/* ---- expiry ------------------------------------------------------------------------------ */

gb_expiry_change gb_keys_expire_record(gb_db *db, gb_slice key, gb_kv *kv, int64_t when_ms)
{
    gb_expiry_change change;
    if (gb_db_already_expired(db, when_ms)) {
        gb_db_delete(db, key);
        change = GB_EXPIRY_DELETED;
    } else {
        gb_db_set_expire(db, kv, when_ms);
        change = GB_EXPIRY_SET;
    }
    gb_engine_key_modified(db, key);
    return change;
}

gb_result gb_keys_expire(gb_db *db, gb_slice key, int64_t when_ms, unsigned flags, gb_expiry_change *change)
{
    *change = GB_EXPIRY_NONE;
    gb_kv *kv = gb_db_lookup_write(db, key);
    if (!kv)
        return GB_R_OK;
    int64_t cur = gb_db_expire_of(kv);
    if (((flags & GB_EXPIRE_NX) && cur != -1) || ((flags & GB_EXPIRE_XX) && cur == -1) ||
        ((flags & GB_EXPIRE_GT) && (when_ms <= cur || cur == -1)) ||
        ((flags & GB_EXPIRE_LT) && cur != -1 && when_ms >= cur))
        return GB_R_OK;
    *change = gb_keys_expire_record(db, key, kv, when_ms);
    return GB_R_OK;
}

gb_result gb_keys_ttl(gb_db *db, gb_slice key, int64_t *at_ms, int64_t *left_ms)
{
    *at_ms = *left_ms = -1;
    gb_kv *kv = gb_db_lookup_read_notouch(db, key);
    if (!kv)
        return GB_R_NOTFOUND;
    *at_ms = gb_db_expire_of(kv);
    if (*at_ms >= 0)
        *left_ms = GB_MAX(*at_ms - db->eng->now_ms, 0);
    return GB_R_OK;
}

gb_result gb_keys_persist(gb_db *db, gb_slice key, int64_t *persisted)
{
    *persisted = 0;
    gb_kv *kv = gb_db_lookup_write(db, key);
    if (!kv || !gb_kv_volatile(kv))
        return GB_R_OK;
    gb_db_persist(db, kv);
    gb_engine_key_modified(db, key);
    *persisted = 1;
    return GB_R_OK;
}

/* ---- introspection ----------------------------------------------------------------------- */

static const char *encoding_name(const gb_kv *kv)
{
    switch (kv->enc) {
    case GB_ENC_INT:
        return "int";
    case GB_ENC_EMBSTR: /* inline; Redis embeds up to 44 bytes, and calls longer strings raw */
        return gb_kv_embstr(kv).len <= GB_EMBSTR_MAX ? "embstr" : "raw";
    case GB_ENC_RAW:
        return "raw";
    default: {
        const gb_type_ops *ops = gb_type_get((enum gb_type)kv->type);
        return ops && ops->encoding ? ops->encoding(gb_kv_ptr(kv)) : "unknown";
    }
    }
}

gb_result gb_keys_object(gb_db *db, gb_slice key, gb_object_info *info)
{
    gb_kv *kv = gb_db_lookup_quiet(db, key);
    if (!kv)
        return GB_R_NOTFOUND;
    info->encoding = encoding_name(kv);
    info->representation = kv->type == GB_TYPE_LIST ? gb_list_representation_name(gb_kv_ptr(kv)) : NULL;
    info->list_compress = kv->type == GB_TYPE_LIST && gb_list_config_of(gb_kv_ptr(kv)).compress_depth != 0;
    info->compressed_segments = kv->type == GB_TYPE_LIST ? gb_list_compressed_segments(gb_kv_ptr(kv)) : 0;
    info->idle_s = (int64_t)gb_kv_idle_seconds(db->eng, kv);
    info->freq = gb_lfu_decayed(db->eng, kv);
    info->refcount = gb_kv_refcount(kv);
    return GB_R_OK;
}

/* ---- databases --------------------------------------------------------------------------- */

gb_result gb_keys_swapdb(gb_db *a, gb_db *b)
{
    a->eng->stats.dirty++; /* SWAPDB n n too: Redis counts (and so logs) it */
    if (a == b)
        return GB_R_OK;
    gb_multi_touch_swap(a, b);
    gb_multi_touch_swap(b, a);
    gb_db_swap_data(a, b);
    /* Waiters on either database may now find their key. */
    gb_blocking_signal_db(a);
    gb_blocking_signal_db(b);
    return GB_R_OK;
}

gb_result gb_keys_flushdb(gb_db *db, bool lazy)
{
    size_t removed = gb_db_size(db);
    gb_multi_touch_swap(db, NULL);
    if (lazy)
        gb_db_flush_lazy(db);
    else
        gb_db_flush_sliced(db);
    db->eng->stats.dirty += removed; /* Redis counts the keys removed */
    /* XREADGROUP waiters on streams that are gone fail (Redis 7.0). */
    gb_blocking_signal_db(db);
    return GB_R_OK;
}
