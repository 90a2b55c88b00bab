/*
 * The set type's typed key operations, on top of engine/ds/set.h.
 */
#include "engine/types/t_set.h"

#include "engine/base/mem.h"

static gb_result lookup_result(int found) { return found < 0 ? GB_R_WRONGTYPE : GB_R_NOTFOUND; }

/* ---- writes ------------------------------------------------------------------------------ */

gb_result gb_set_sadd(gb_db *db, gb_slice key, size_t n, const gb_slice *members, int64_t *added)
{
    *added = 0;
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_SET, true, &o);
    if (found < 0)
        return GB_R_WRONGTYPE;
    if (n == 0) /* native callers only: the RESP form's arity refuses it */
        return GB_R_OK;
    gb_types_config cfg = gb_types_cfg(db->eng);
    if (!found)
        gb_tobj_add(db, key, GB_TYPE_SET, gb_set_new_for(&cfg, members[0], n), &o);
    *added = (int64_t)gb_set_add_many(&o.o.s, &cfg, n, members);
    gb_tobj_sync(&o);
    if (*added)
        gb_engine_key_changed(db, key, (uint64_t)*added);
    return GB_R_OK;
}

gb_result gb_set_srem(gb_db *db, gb_slice key, size_t n, const gb_slice *members, int64_t *removed)
{
    *removed = 0;
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_SET, true, &o);
    if (found <= 0)
        return found < 0 ? GB_R_WRONGTYPE : GB_R_OK;
    *removed = (int64_t)gb_set_remove_many(&o.o.s, n, members);
    if (*removed) {
        gb_tobj_sync_or_delete(db, key, &o);
        gb_engine_key_changed(db, key, (uint64_t)*removed);
    }
    return GB_R_OK;
}

gb_result gb_set_smove(gb_db *db, gb_slice src_key, gb_slice dst_key, gb_slice member, int64_t *moved,
                       bool *dst_added)
{
    *moved = 0;
    if (dst_added)
        *dst_added = false;
    gb_tobj os, od;
    int found_src = gb_tobj_lookup(db, src_key, GB_TYPE_SET, true, &os);
    int found_dst = gb_tobj_lookup(db, dst_key, GB_TYPE_SET, true, &od);
    if (found_src == 0)
        return GB_R_OK;
    if (found_src < 0 || found_dst < 0)
        return GB_R_WRONGTYPE;
    gb_set *src = &os.o.s, *dst = found_dst ? &od.o.s : NULL;
    if (dst && os.kv == od.kv) { /* the same key */
        *moved = gb_set_ismember(src, member);
        return GB_R_OK;
    }
    if (!gb_set_ismember(src, member))
        return GB_R_OK;
    gb_types_config cfg = gb_types_cfg(db->eng);
    gb_set *fresh = NULL;
    if (!dst)
        dst = fresh = gb_set_new_for(&cfg, member, 1);
    size_t before = gb_set_card(dst);
    gb_set_move(src, dst, &cfg, member);
    size_t after = gb_set_card(dst);
    if (!fresh)
        gb_tobj_sync(&od);
    gb_tobj_sync_or_delete(db, src_key, &os);
    if (fresh)
        gb_tobj_add(db, dst_key, GB_TYPE_SET, fresh, &od);
    /* Redis counts and signals the removal, and the destination only when
     * it did not hold the member yet (a WATCH on it stays intact). */
    gb_engine_key_modified(db, src_key);
    if (after != before)
        gb_engine_key_modified(db, dst_key);
    if (dst_added)
        *dst_added = after != before;
    *moved = 1;
    return GB_R_OK;
}

gb_result gb_set_spop(gb_db *db, gb_slice key, size_t count, const gb_sink *sink, size_t *card)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_SET, true, &o);
    *card = 0;
    if (found <= 0)
        return lookup_result(found);
    *card = gb_set_card(&o.o.s);
    size_t n = GB_MIN(count, *card);
    gb_sink_len(sink, n);
    if (n == 0)
        return GB_R_OK;
    gb_types_config cfg = gb_types_cfg(db->eng);
    gb_set_pop(&o.o.s, &cfg, count, sink->value, sink->ctx);
    gb_tobj_sync_or_delete(db, key, &o);
    gb_engine_key_changed(db, key, n);
    return GB_R_OK;
}

/* ---- reads ------------------------------------------------------------------------------- */

gb_result gb_set_sismember(gb_db *db, gb_slice key, gb_slice member, int64_t *is)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_SET, false, &o);
    *is = found > 0 && gb_set_ismember(&o.o.s, member);
    return found < 0 ? GB_R_WRONGTYPE : GB_R_OK;
}

gb_result gb_set_scard(gb_db *db, gb_slice key, int64_t *card)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_SET, false, &o);
    *card = found > 0 ? (int64_t)gb_set_card(&o.o.s) : 0;
    return found < 0 ? GB_R_WRONGTYPE : GB_R_OK;
}

gb_result gb_set_smismember(gb_db *db, gb_slice key, size_t n, const gb_slice *members, const gb_sink *sink)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_SET, false, &o);
    if (found < 0)
        return GB_R_WRONGTYPE;
    gb_sink_len(sink, n);
    for (size_t i = 0; i < n; i++) {
        if (found && gb_set_ismember(&o.o.s, members[i]))
            sink->value(sink->ctx, members[i]);
        else
            sink->missing(sink->ctx);
    }
    return GB_R_OK;
}

gb_result gb_set_srandmember(gb_db *db, gb_slice key, int64_t count, const gb_sink *sink)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_SET, false, &o);
    if (found <= 0)
        return lookup_result(found);
    uint64_t n = gb_types_random_n(count, gb_set_card(&o.o.s));
    if (!gb_sink_fits(sink, n, gb_set_payload_mem(&o.o.s) / GB_MAX(gb_set_card(&o.o.s), 1)))
        return GB_R_OK;
    gb_sink_len(sink, (size_t)n);
    if (n)
        gb_set_random(&o.o.s, count, sink->value, sink->ctx);
    return GB_R_OK;
}

/* ---- algebra ----------------------------------------------------------------------------- */

/* The input sets of an algebra command, looked up in order (a missing key:
 * NULL, an empty set); the same key named twice gives the same pointer, as
 * the algebra recognizes repeated inputs. */
typedef struct set_inputs {
    const gb_set **sets;
    gb_tobj *objs;
    size_t missing;
    const gb_set *stack[8];
    gb_tobj stackobj[8];
} set_inputs;

static gb_result inputs_open(gb_db *db, size_t n, const gb_slice *keys, set_inputs *in)
{
    in->sets = n <= 8 ? in->stack : gb_malloc(n * sizeof *in->sets);
    in->objs = n <= 8 ? in->stackobj : gb_malloc(n * sizeof *in->objs);
    in->missing = 0;
    for (size_t i = 0; i < n; i++) {
        int found = gb_tobj_lookup(db, keys[i], GB_TYPE_SET, false, &in->objs[i]);
        if (found < 0)
            return GB_R_WRONGTYPE;
        in->sets[i] = found ? &in->objs[i].o.s : NULL;
        for (size_t j = 0; found && j < i; j++)
            if (in->objs[j].kv == in->objs[i].kv)
                in->sets[i] = in->sets[j];
        if (!found)
            in->missing++;
    }
    return GB_R_OK;
}

static void inputs_close(set_inputs *in)
{
    if (in->sets != in->stack) {
        gb_free((void *)in->sets);
        gb_free(in->objs);
    }
}

/* Stores s (possibly empty or NULL, then freed) under dst; returns its
 * size. */
static int64_t store(gb_db *db, gb_slice dst, gb_set *s)
{
    size_t n = s ? gb_set_card(s) : 0;
    if (n == 0) {
        gb_set_free(s);
        s = NULL;
    }
    gb_types_store(db, dst, GB_TYPE_SET, s);
    return (int64_t)n;
}

gb_result gb_set_sinter(gb_db *db, size_t nkeys, const gb_slice *keys, const gb_sink *sink, size_t *n)
{
    set_inputs in;
    gb_result r = inputs_open(db, nkeys, keys, &in);
    *n = 0;
    if (r == GB_R_OK && in.missing)
        r = GB_R_NOTFOUND;
    if (r == GB_R_OK) {
        gb_sink_len(sink, GB_SINK_LEN_UNKNOWN);
        *n = gb_set_inter(in.sets, nkeys, 0, sink->value, sink->ctx);
    }
    inputs_close(&in);
    return r;
}

gb_result gb_set_sintercard(gb_db *db, size_t nkeys, const gb_slice *keys, size_t limit, int64_t *card)
{
    set_inputs in;
    gb_result r = inputs_open(db, nkeys, keys, &in);
    *card = 0;
    if (r == GB_R_OK && !in.missing)
        *card = (int64_t)gb_set_inter(in.sets, nkeys, limit, NULL, NULL);
    inputs_close(&in);
    return r;
}

typedef struct store_ctx {
    gb_set *s;
    gb_types_config cfg;
} store_ctx;

static void emit_store(void *ctx, gb_slice m)
{
    store_ctx *st = ctx;
    gb_set_add(st->s, &st->cfg, m);
}

gb_result gb_set_sinterstore(gb_db *db, gb_slice dst, size_t nkeys, const gb_slice *keys, int64_t *card)
{
    set_inputs in;
    gb_result r = inputs_open(db, nkeys, keys, &in);
    *card = 0;
    if (r == GB_R_OK && in.missing) {
        *card = store(db, dst, NULL);
    } else if (r == GB_R_OK) {
        store_ctx st = {gb_set_new(), gb_types_cfg(db->eng)};
        gb_set_inter(in.sets, nkeys, 0, emit_store, &st);
        *card = store(db, dst, st.s);
    }
    inputs_close(&in);
    return r;
}

/* SUNION/SDIFF and their STORE forms: the result to sink (dst NULL) or
 * stored under *dst. */
static gb_result union_diff(gb_db *db, const gb_slice *dst, size_t nkeys, const gb_slice *keys, bool diff,
                            const gb_sink *sink, int64_t *card)
{
    set_inputs in;
    gb_result r = inputs_open(db, nkeys, keys, &in);
    if (card)
        *card = 0;
    if (r == GB_R_OK) {
        gb_types_config cfg = gb_types_cfg(db->eng);
        gb_set *s = diff ? gb_set_diff(in.sets, nkeys, &cfg) : gb_set_union(in.sets, nkeys, &cfg);
        if (dst) {
            *card = store(db, *dst, s);
        } else {
            gb_sink_len(sink, gb_set_card(s));
            gb_set_members(s, sink->value, sink->ctx);
            gb_set_free(s);
        }
    }
    inputs_close(&in);
    return r;
}

gb_result gb_set_sunion(gb_db *db, size_t nkeys, const gb_slice *keys, const gb_sink *sink)
{
    return union_diff(db, NULL, nkeys, keys, false, sink, NULL);
}

gb_result gb_set_sdiff(gb_db *db, size_t nkeys, const gb_slice *keys, const gb_sink *sink)
{
    return union_diff(db, NULL, nkeys, keys, true, sink, NULL);
}

gb_result gb_set_sunionstore(gb_db *db, gb_slice dst, size_t nkeys, const gb_slice *keys, int64_t *card)
{
    return union_diff(db, &dst, nkeys, keys, false, NULL, card);
}

gb_result gb_set_sdiffstore(gb_db *db, gb_slice dst, size_t nkeys, const gb_slice *keys, int64_t *card)
{
    return union_diff(db, &dst, nkeys, keys, true, NULL, card);
}
