#include "engine/types/t_sort.h"

#include "engine/ds/list.h"

gb_result gb_sort_source_find(gb_db *db, gb_slice key, gb_sort_source *src)
{
    gb_kv *kv = gb_db_lookup_read(db, key);
    if (!kv)
        return GB_R_NOTFOUND;
    src->type = (enum gb_type)kv->type;
    switch (src->type) {
    case GB_TYPE_LIST:
        src->list = gb_kv_ptr(kv);
        src->len = gb_list_len(src->list);
        return GB_R_OK;
    case GB_TYPE_SET:
        src->hdr = gb_tobj_unpack(gb_kv_ptr(kv));
        src->len = gb_set_card(&src->hdr.s);
        return GB_R_OK;
    case GB_TYPE_ZSET:
        src->hdr = gb_tobj_unpack(gb_kv_ptr(kv));
        src->len = gb_zset_card(&src->hdr.z);
        return GB_R_OK;
    default:
        return GB_R_WRONGTYPE;
    }
}

/* Adapters from the list and sorted-set walkers to one member callback. */
typedef struct source_emit {
    gb_set_emit_fn emit;
    void *ctx;
} source_emit;

static bool list_visit(void *ctx, size_t index, gb_slice v)
{
    (void)index;
    source_emit *e = ctx;
    e->emit(e->ctx, v);
    return true;
}

static void zset_visit(void *ctx, gb_slice member, double score)
{
    (void)score;
    source_emit *e = ctx;
    e->emit(e->ctx, member);
}

void gb_sort_source_emit(const gb_sort_source *src, size_t start, size_t stop, bool reverse, gb_set_emit_fn emit,
                         void *ctx)
{
    source_emit e = {emit, ctx};
    if (src->type == GB_TYPE_SET) {
        gb_set_members(&src->hdr.s, emit, ctx);
        return;
    }
    if (start > stop || stop >= src->len)
        return;
    if (src->type == GB_TYPE_LIST) {
        /* gb_list_range counts positions from the head either way. */
        size_t first = reverse ? src->len - 1 - stop : start, last = reverse ? src->len - 1 - start : stop;
        gb_list_range(src->list, (long long)first, (long long)last, reverse, list_visit, &e);
    } else
        gb_zset_range_rank(&src->hdr.z, (int64_t)start, (int64_t)stop, reverse, zset_visit, &e);
}
