/*
 * The list type: its gb_type_ops and its typed key operations, on top of
 * engine/ds/list.h (the representations).
 */
#include "engine/types/t_list.h"

#include "engine/core/request/blocking.h"
#include "engine/core/engine.h"

/* ---- the type --------------------------------------------------------------- */

static bool dup_visit(void *ctx, size_t index, gb_slice v)
{
    (void)index;
    gb_list_push(ctx, GB_LIST_TAIL, &v, 1);
    return true;
}

static void *list_dup(const void *obj)
{
    gb_list *src = (gb_list *)obj;
    gb_list_config cfg = gb_list_config_of(src); /* not the defaults: the server's settings */
    gb_list *dst = gb_list_new(&cfg);
    gb_list_range(src, 0, -1, false, dup_visit, dst);
    return dst;
}

static void list_free(void *obj) { gb_list_free(obj); }
static const char *list_encoding(const void *obj) { return gb_list_encoding_name(obj); }
static size_t list_mem(const void *obj) { return gb_list_mem_usage(obj); }

static size_t list_effort(const void *obj) { return gb_list_free_effort(obj); }

static const gb_type_ops list_type_ops = {"list", list_free, list_dup, list_encoding, list_mem, list_effort};

void gb_list_type_register(void) { gb_type_register(GB_TYPE_LIST, &list_type_ops); }

gb_list_config gb_list_config_for(const gb_engine *eng)
{
    gb_list_config cfg = {eng->cfg.list_max_listpack_size,
                          eng->cfg.list_implementation == GB_LISTIMPL_PMA ? GB_LIST_PMA : GB_LIST_SEGMENTED,
                          eng->cfg.list_compress_depth};
    return cfg;
}

/* ---- lookups ---------------------------------------------------------------------- */

/* The list under key: 1 (and *l) when the key holds a list, 0 when it is
 * missing, -1 when it holds another type. Reads count keyspace hits and
 * misses, writes do not (as in Redis). */
static int list_lookup(gb_db *db, gb_slice key, bool write, gb_list **l)
{
    gb_kv *kv = write ? gb_db_lookup_write(db, key) : gb_db_lookup_read(db, key);
    if (!kv)
        return 0;
    if (kv->type != GB_TYPE_LIST)
        return -1;
    *l = gb_kv_ptr(kv);
    return 1;
}

static gb_result lookup_result(int found) { return found < 0 ? GB_R_WRONGTYPE : GB_R_NOTFOUND; }

/* Redis's lookup-or-create for the receiving end of a push: the list under
 * key, created empty (with the current settings) when missing; NULL when
 * the key holds another type. */
static gb_list *list_for_push(gb_db *db, gb_slice key)
{
    gb_list *l;
    int found = list_lookup(db, key, true, &l);
    if (found)
        return found > 0 ? l : NULL;
    gb_list_config cfg = gb_list_config_for(db->eng);
    l = gb_list_new(&cfg);
    gb_db_add_object(db, key, GB_TYPE_LIST, l);
    return l;
}

/* After a removal: Redis never keeps an empty list. */
static void delete_if_empty(gb_db *db, gb_slice key, gb_list *l)
{
    if (gb_list_len(l) == 0)
        gb_db_delete(db, key);
}

/* ---- pushes and pops ----------------------------------------------------------------- */

static void push_into(gb_db *db, gb_slice key, gb_list *l, gb_list_end end, size_t n, const gb_slice *vals,
                      int64_t *len)
{
    *len = (int64_t)gb_list_push(l, end, vals, n);
    gb_engine_key_changed(db, key, n);
    gb_blocking_signal_key(db, key);
}

gb_result gb_list_lpush(gb_db *db, gb_slice key, gb_list_end end, size_t n, const gb_slice *vals, int64_t *len)
{
    gb_list *l = list_for_push(db, key);
    if (!l)
        return GB_R_WRONGTYPE;
    push_into(db, key, l, end, n, vals, len);
    return GB_R_OK;
}

gb_result gb_list_lpushx(gb_db *db, gb_slice key, gb_list_end end, size_t n, const gb_slice *vals, int64_t *len)
{
    gb_list *l;
    int found = list_lookup(db, key, true, &l);
    *len = 0;
    if (found < 0)
        return GB_R_WRONGTYPE;
    if (found)
        push_into(db, key, l, end, n, vals, len);
    return GB_R_OK;
}

/* Pops n values (at most the list's length when a sink wants the count;
 * a plain pop need not count the list first: gb_list_pop stops at its
 * end). */
static void pop_n(gb_db *db, gb_slice key, gb_list *l, gb_list_end end, size_t n, const gb_sink *sink)
{
    gb_sink_len(sink, n);
    if (n == 0)
        return;
    size_t before = gb_list_len(l);
    gb_list_pop(l, end, n, sink->value, sink->ctx);
    size_t popped = before - gb_list_len(l);
    delete_if_empty(db, key, l);
    gb_engine_key_changed(db, key, popped);
}

gb_result gb_list_lpop(gb_db *db, gb_slice key, gb_list_end end, size_t count, const gb_sink *sink)
{
    gb_list *l;
    int found = list_lookup(db, key, true, &l);
    if (found <= 0)
        return lookup_result(found);
    pop_n(db, key, l, end, sink->len ? GB_MIN(count, gb_list_len(l)) : count, sink);
    return GB_R_OK;
}

gb_result gb_list_lmpop(gb_db *db, size_t nkeys, const gb_slice *keys, gb_list_end end, size_t count,
                        const gb_sink *sink, size_t *which)
{
    for (size_t i = 0; i < nkeys; i++) {
        gb_list *l;
        int found = list_lookup(db, keys[i], true, &l);
        if (found < 0)
            return GB_R_WRONGTYPE;
        size_t len = found ? gb_list_len(l) : 0;
        if (len == 0)
            continue;
        *which = i;
        pop_n(db, keys[i], l, end, GB_MIN(count, len), sink);
        return GB_R_OK;
    }
    return GB_R_NOTFOUND;
}

gb_result gb_list_lmove(gb_db *db, gb_slice src_key, gb_slice dst_key, gb_list_end from, gb_list_end to,
                        const gb_sink *sink, bool *src_found)
{
    gb_list *src;
    int found = list_lookup(db, src_key, true, &src);
    if (src_found)
        *src_found = found > 0;
    if (found <= 0 || gb_list_len(src) == 0)
        return found < 0 ? GB_R_WRONGTYPE : GB_R_NOTFOUND;
    gb_list *dst = list_for_push(db, dst_key);
    if (!dst)
        return GB_R_WRONGTYPE;
    gb_list_move(src, from, dst, to, sink->value, sink->ctx);
    gb_engine_key_modified(db, src_key);
    gb_engine_key_changed(db, dst_key, 0); /* Redis counts a move once */
    if (src != dst)
        delete_if_empty(db, src_key, src);
    gb_blocking_signal_key(db, dst_key);
    return GB_R_OK;
}

/* ---- reads ------------------------------------------------------------------------------ */

gb_result gb_list_llen(gb_db *db, gb_slice key, int64_t *len)
{
    gb_list *l;
    int found = list_lookup(db, key, false, &l);
    *len = found > 0 ? (int64_t)gb_list_len(l) : 0;
    return found < 0 ? GB_R_WRONGTYPE : GB_R_OK;
}

gb_result gb_list_lindex(gb_db *db, gb_slice key, const int64_t *index, gb_slice *out, char buf[GB_LIST_INT_BUF])
{
    gb_list *l;
    int found = list_lookup(db, key, false, &l);
    if (found <= 0)
        return lookup_result(found);
    if (!index)
        return GB_R_BADARG;
    return gb_list_index(l, *index, buf, out) ? GB_R_OK : GB_R_RANGE;
}

static bool range_visit(void *ctx, size_t index, gb_slice v)
{
    (void)index;
    const gb_sink *sink = ctx;
    sink->value(sink->ctx, v);
    return true;
}

gb_result gb_list_lrange(gb_db *db, gb_slice key, int64_t start, int64_t stop, const gb_sink *sink)
{
    gb_list *l;
    int found = list_lookup(db, key, false, &l);
    if (found <= 0)
        return lookup_result(found);
    gb_sink_len(sink, gb_list_range_len(l, start, stop));
    gb_list_range(l, start, stop, false, range_visit, (void *)sink);
    return GB_R_OK;
}

gb_result gb_list_lpos(gb_db *db, gb_slice key, gb_slice v, int64_t rank, size_t count, size_t maxlen,
                       const gb_sink *sink, size_t *n)
{
    gb_list *l;
    int found = list_lookup(db, key, false, &l);
    *n = 0;
    if (found <= 0)
        return lookup_result(found);
    gb_sink_len(sink, GB_SINK_LEN_UNKNOWN);
    *n = gb_list_pos(l, v, rank, count, maxlen, sink->position, sink->ctx);
    return GB_R_OK;
}

/* ---- in-place changes ------------------------------------------------------------------- */

gb_result gb_list_lset(gb_db *db, gb_slice key, const int64_t *index, gb_slice v)
{
    gb_list *l;
    int found = list_lookup(db, key, true, &l);
    if (found <= 0)
        return lookup_result(found);
    if (!index)
        return GB_R_BADARG;
    if (!gb_list_set(l, *index, v))
        return GB_R_RANGE;
    gb_engine_key_modified(db, key);
    return GB_R_OK;
}

gb_result gb_list_ltrim(gb_db *db, gb_slice key, int64_t start, int64_t stop)
{
    gb_list *l;
    int found = list_lookup(db, key, true, &l);
    if (found <= 0)
        return found < 0 ? GB_R_WRONGTYPE : GB_R_OK;
    size_t before = gb_list_len(l);
    gb_list_trim(l, start, stop);
    size_t trimmed = before - gb_list_len(l);
    delete_if_empty(db, key, l);
    /* WATCH sees every LTRIM of an existing list (Redis signals the key
     * either way); each element removed is a change. */
    gb_engine_key_changed(db, key, trimmed);
    return GB_R_OK;
}

gb_result gb_list_lrem(gb_db *db, gb_slice key, int64_t count, gb_slice v, int64_t *removed)
{
    gb_list *l;
    int found = list_lookup(db, key, true, &l);
    *removed = 0;
    if (found <= 0)
        return found < 0 ? GB_R_WRONGTYPE : GB_R_OK;
    *removed = (int64_t)gb_list_remove(l, v, count);
    if (*removed) {
        delete_if_empty(db, key, l);
        gb_engine_key_changed(db, key, (uint64_t)*removed);
    }
    return GB_R_OK;
}

gb_result gb_list_linsert(gb_db *db, gb_slice key, bool after, gb_slice pivot, gb_slice v, int64_t *len)
{
    gb_list *l;
    int found = list_lookup(db, key, true, &l);
    *len = 0;
    if (found <= 0)
        return found < 0 ? GB_R_WRONGTYPE : GB_R_OK;
    *len = gb_list_insert(l, after, pivot, v);
    if (*len > 0)
        gb_engine_key_modified(db, key);
    return GB_R_OK;
}
