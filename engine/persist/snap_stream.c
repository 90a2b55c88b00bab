#include "engine/persist/snap_stream.h"

#include <stdlib.h>

#include "engine/base/mem.h"
#include "engine/ds/stream_cg.h"

/* ---- writing ---------------------------------------------------------------------------------- */

static void put_id(gb_snap_writer *w, gb_stream_id id)
{
    gb_snap_put_varint(w, id.ms);
    gb_snap_put_varint(w, id.seq);
}

static void put_pel(gb_snap_writer *w, const gb_rax *pel, bool with_state)
{
    gb_snap_put_varint(w, gb_rax_size(pel));
    gb_rax_iter it;
    gb_rax_iter_init(&it, pel);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it)) {
        put_id(w, gb_stream_id_decode(it.key));
        if (with_state) {
            const gb_stream_nack *nack = it.value;
            gb_snap_put_svarint(w, nack->delivery_time);
            gb_snap_put_varint(w, nack->delivery_count);
        }
    }
    gb_rax_iter_done(&it);
}

static void put_group(gb_snap_writer *w, gb_slice name, const gb_stream_cg *cg)
{
    gb_snap_put_str(w, name.ptr, name.len);
    put_id(w, cg->last_id);
    gb_snap_put_svarint(w, cg->entries_read);
    put_pel(w, &cg->pel, true);
    gb_snap_put_varint(w, gb_rax_size(&cg->consumers));
    gb_rax_iter it;
    gb_rax_iter_init(&it, &cg->consumers);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it)) {
        const gb_stream_consumer *c = it.value;
        gb_snap_put_str(w, c->name, c->name_len);
        gb_snap_put_svarint(w, c->seen_time);
        put_pel(w, &c->pel, false);
    }
    gb_rax_iter_done(&it);
}

void gb_snap_write_stream(gb_snap_writer *w, const gb_stream *s)
{
    gb_snap_put_varint(w, gb_rax_size(&s->nodes));
    gb_rax_iter it;
    gb_rax_iter_init(&it, &s->nodes);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it)) {
        const gb_snode *n = it.value;
        gb_snap_put_str(w, it.key, it.key_len);
        gb_snap_put_str(w, n->data, n->used - sizeof(gb_snode));
    }
    gb_rax_iter_done(&it);
    gb_snap_put_varint(w, s->length);
    put_id(w, s->last_id);
    put_id(w, s->first_id);
    put_id(w, s->max_deleted);
    gb_snap_put_varint(w, s->entries_added);
    gb_snap_put_varint(w, gb_stream_groups_count(s));
    if (!s->groups)
        return;
    gb_rax_iter_init(&it, s->groups);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it))
        put_group(w, gb_slice_make((const char *)it.key, it.key_len), it.value);
    gb_rax_iter_done(&it);
}

/* ---- loading ---------------------------------------------------------------------------------- */

/* A node's bytes or a name: at most what a client could have stored. */
#define MAX_STRING ((uint64_t)1 << 32)

typedef struct loader {
    gb_snap_reader *r;
    char *buf;
    size_t cap, len;
    const char *why;
} loader;

static bool bad(loader *L, const char *why)
{
    L->why = why;
    return false;
}

static bool get_str(loader *L) { return gb_snap_get_str(L->r, &L->buf, &L->cap, &L->len, MAX_STRING); }
static gb_slice str(const loader *L) { return gb_slice_make(L->buf, L->len); }

static bool get_id(loader *L, gb_stream_id *id)
{
    return gb_snap_get_varint(L->r, &id->ms) && gb_snap_get_varint(L->r, &id->seq);
}

/* The first and last live entries of node n (master key master). */
static void live_edges(const gb_snode *n, gb_stream_id master, bool *any, gb_stream_id *first, gb_stream_id *last)
{
    gb_snode_cursor c;
    gb_snode_cursor_init(&c, n, master);
    while (gb_snode_cursor_next(&c)) {
        if (c.e.flags & GB_SNODE_DELETED)
            continue;
        if (!*any)
            *first = c.e.id;
        *any = true;
        *last = c.e.id;
    }
}

/* The nodes, in ID order; also checks the entry metadata that follows. */
static bool load_entries(loader *L, gb_stream *s)
{
    uint64_t nnodes, live = 0;
    if (!gb_snap_get_varint(L->r, &nnodes))
        return false;
    gb_stream_id prev_last = {0, 0}, first_live = {0, 0}, last_live = {0, 0};
    bool have_nodes = false, any_live = false;
    for (uint64_t i = 0; i < nnodes; i++) {
        if (!get_str(L))
            return false;
        if (L->len != GB_STREAM_ID_KEY)
            return bad(L, "a stream node key that is not an ID");
        uint8_t key[GB_STREAM_ID_KEY];
        memcpy(key, L->buf, sizeof key);
        gb_stream_id master = gb_stream_id_decode(key);
        if (have_nodes && gb_stream_id_cmp(master, prev_last) <= 0)
            return bad(L, "stream nodes out of order");
        if (!get_str(L))
            return false;
        gb_snode *n = gb_snode_from_bytes((const uint8_t *)L->buf, L->len, master, &L->why);
        if (!n)
            return false;
        gb_rax_insert(&s->nodes, key, sizeof key, n, NULL);
        live += n->live;
        prev_last = gb_snode_last(n);
        have_nodes = true;
        live_edges(n, master, &any_live, &first_live, &last_live);
    }
    gb_stream_id last, first, max_deleted;
    if (!gb_snap_get_varint(L->r, &s->length) || !get_id(L, &last) || !get_id(L, &first) ||
        !get_id(L, &max_deleted) || !gb_snap_get_varint(L->r, &s->entries_added))
        return false;
    if (s->length != live)
        return bad(L, "a stream whose length is not its live entries");
    if (have_nodes && gb_stream_id_cmp(last, prev_last) < 0)
        return bad(L, "a stream whose last ID is below an entry");
    if (any_live ? gb_stream_id_cmp(first, first_live) != 0 : !gb_stream_id_is_zero(first))
        return bad(L, "a stream whose first ID is not its first entry");
    if (s->entries_added < s->length)
        return bad(L, "a stream that added fewer entries than it holds");
    s->last_id = last;
    s->first_id = first;
    s->max_deleted = max_deleted;
    return true;
}

/* A group's pending entries, in ID order, owned by nobody yet. */
static bool load_group_pel(loader *L, gb_stream_cg *cg)
{
    uint64_t n;
    if (!gb_snap_get_varint(L->r, &n))
        return false;
    gb_stream_id prev = {0, 0};
    for (uint64_t i = 0; i < n; i++) {
        gb_stream_id id;
        int64_t time;
        uint64_t count;
        if (!get_id(L, &id) || !gb_snap_get_svarint(L->r, &time) || !gb_snap_get_varint(L->r, &count))
            return false;
        const char *why = gb_stream_cg_load_pending(cg, id, prev, i == 0, time, count);
        if (why)
            return bad(L, why);
        prev = id;
    }
    return true;
}

/* A consumer and its pending entries, each taken from the group's list. */
static bool load_consumer(loader *L, gb_stream_cg *cg, uint64_t *owned)
{
    int64_t seen;
    uint64_t n;
    if (!get_str(L) || !gb_snap_get_svarint(L->r, &seen))
        return false;
    gb_stream_consumer *c = gb_stream_consumer_create(cg, str(L), seen);
    if (!c)
        return bad(L, "a consumer twice in its group");
    if (!gb_snap_get_varint(L->r, &n))
        return false;
    for (uint64_t i = 0; i < n; i++) {
        gb_stream_id id;
        if (!get_id(L, &id))
            return false;
        const char *why = gb_stream_consumer_load_pending(cg, c, id);
        if (why)
            return bad(L, why);
        (*owned)++;
    }
    return true;
}

static bool load_group(loader *L, gb_stream *s)
{
    gb_stream_id last;
    int64_t entries_read;
    uint64_t nconsumers, owned = 0;
    if (!get_str(L) || !get_id(L, &last) || !gb_snap_get_svarint(L->r, &entries_read))
        return false; /* any 64 bits: a counter may have wrapped (rdb_stream.c) */
    gb_stream_cg *cg = gb_stream_cg_create(s, str(L), last, entries_read);
    if (!cg)
        return bad(L, "a consumer group twice");
    if (!load_group_pel(L, cg) || !gb_snap_get_varint(L->r, &nconsumers))
        return false;
    for (uint64_t i = 0; i < nconsumers; i++)
        if (!load_consumer(L, cg, &owned))
            return false;
    if (owned != gb_rax_size(&cg->pel))
        return bad(L, "a pending entry no consumer owns");
    return true;
}

gb_stream *gb_snap_load_stream(gb_snap_reader *r, const char **why)
{
    loader L = {r, NULL, 0, 0, NULL};
    gb_stream *s = gb_stream_new();
    uint64_t ngroups = 0;
    bool ok = load_entries(&L, s) && gb_snap_get_varint(r, &ngroups);
    for (uint64_t i = 0; ok && i < ngroups; i++)
        ok = load_group(&L, s);
    gb_free(L.buf);
    *why = L.why;
    if (ok)
        return s;
    gb_stream_free(s);
    return NULL;
}
