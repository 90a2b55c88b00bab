/*
 * The list type: its gb_type_ops and its typed key operations, on top of
 * engine/ds/list.h (the representations).
 */
#include "engine/types/t_list.h"

#include "engine/core/blocking.h"
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

static size_t list_effort(const void *obj)
{
    const gb_list *l = obj;
    return gb_list_listpack(l) ? 1 : gb_list_len(l);
}

static const gb_type_ops list_type_ops = {"list", list_free, list_dup, list_encoding, list_mem, list_effort};

void gb_list_type_register(void) { gb_type_register(GB_TYPE_LIST, &list_type_ops); }

gb_list_config gb_list_config_for(const gb_engine *eng)
{
    gb_list_config cfg = {eng->cfg.list_max_listpack_size,
                          eng->cfg.list_implementation == GB_LISTIMPL_PMA ? GB_LIST_PMA : GB_LIST_SEGMENTED};
    return cfg;
}

/* ---- key operations --------------------------------------------------------------- */

gb_result gb_op_push(gb_db *db, gb_slice key, bool tail, size_t n, const gb_slice *vals, int64_t *len)
{
    gb_kv *kv = gb_db_lookup_write(db, key);
    gb_list *l;
    if (kv) {
        if (kv->type != GB_TYPE_LIST)
            return GB_R_WRONGTYPE;
        l = kv->v.ptr;
    } else {
        gb_list_config cfg = gb_list_config_for(db->eng);
        l = gb_list_new(&cfg);
        gb_db_add_object(db, key, GB_TYPE_LIST, l);
    }
    *len = (int64_t)gb_list_push(l, tail ? GB_LIST_TAIL : GB_LIST_HEAD, vals, n);
    gb_engine_key_modified(db, key);
    gb_blocking_signal_key(db, key);
    return GB_R_OK;
}

gb_result gb_op_pop(gb_db *db, gb_slice key, bool tail, void (*emit)(void *ctx, gb_slice v), void *ctx)
{
    gb_kv *kv = gb_db_lookup_write(db, key);
    if (!kv)
        return GB_R_NOTFOUND;
    if (kv->type != GB_TYPE_LIST)
        return GB_R_WRONGTYPE;
    gb_list *l = kv->v.ptr;
    gb_list_pop(l, tail ? GB_LIST_TAIL : GB_LIST_HEAD, 1, emit, ctx);
    if (gb_list_len(l) == 0)
        gb_db_delete(db, key);
    gb_engine_key_modified(db, key);
    return GB_R_OK;
}
