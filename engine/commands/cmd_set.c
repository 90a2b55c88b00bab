/*
 * Set commands on top of engine/ds/set.h. Argument order, error texts and
 * reply shapes follow Redis 7.0's t_set.c (7.0.15's SRANDMEMBER count
 * range); encodings follow Redis 7.2 (listpack for small non-integer sets).
 */
#include "engine/commands/cmd_collection.h"
#include "engine/commands/cmd_util.h"
#include "engine/core/propagate.h"
#include "engine/core/engine.h"
#include "engine/base/mem.h"
#include "engine/ds/set.h"
#include "engine/base/util.h"

/* ---- helpers ----------------------------------------------------------------- */

/* The set under key in o (NULL when missing); NULL after replying
 * WRONGTYPE, with *wrong set. */
static gb_set *lookup_set(gb_client *c, gb_slice key, bool write, gb_tobj *o, bool *wrong)
{
    return gb_tobj_lookup_or_reply(c, key, GB_TYPE_SET, write, o, wrong) ? &o->o.s : NULL;
}

static void emit_bulk(void *ctx, gb_slice m) { gb_reply_slice(ctx, m); }

/* ---- writes -------------------------------------------------------------------- */

static void cmd_sadd(gb_client *c, int argc, gb_slice *argv)
{
    bool wrong;
    gb_tobj o;
    gb_set *s = lookup_set(c, argv[1], true, &o, &wrong);
    if (wrong)
        return;
    gb_types_config cfg = gb_types_cfg(c->eng);
    if (!s) {
        gb_tobj_add(c->db, argv[1], GB_TYPE_SET, gb_set_new_for(&cfg, argv[2], (size_t)(argc - 2)), &o);
        s = &o.o.s;
    }
    size_t added = gb_set_add_many(s, &cfg, (size_t)(argc - 2), argv + 2);
    gb_tobj_sync(&o);
    if (added)
        gb_engine_key_modified(c->db, argv[1]);
    gb_reply_int(c, (int64_t)added);
}

static void cmd_srem(gb_client *c, int argc, gb_slice *argv)
{
    bool wrong;
    gb_tobj o;
    gb_set *s = lookup_set(c, argv[1], true, &o, &wrong);
    if (wrong)
        return;
    if (!s) {
        gb_reply_int(c, 0);
        return;
    }
    size_t n = gb_set_remove_many(s, (size_t)(argc - 2), argv + 2);
    if (n) {
        gb_tobj_sync_or_delete(c->db, argv[1], &o);
        gb_engine_key_modified(c->db, argv[1]);
    }
    gb_reply_int(c, (int64_t)n);
}

/* SMOVE source destination member */
static void cmd_smove(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_tobj os, od; /* looked up before replying anything: SMOVE decides the order of its checks */
    int found_src = gb_tobj_lookup(c->db, argv[1], GB_TYPE_SET, true, &os);
    int found_dst = gb_tobj_lookup(c->db, argv[2], GB_TYPE_SET, true, &od);
    if (found_src == 0) {
        gb_reply_int(c, 0);
        return;
    }
    if (found_src < 0 || found_dst < 0) {
        gb_reply_error(c, GB_ERR_WRONGTYPE);
        return;
    }
    gb_set *src = &os.o.s, *dst = found_dst ? &od.o.s : NULL;
    if (dst && os.kv == od.kv) { /* the same key */
        gb_reply_int(c, gb_set_ismember(src, argv[3]));
        return;
    }
    if (!gb_set_ismember(src, argv[3])) {
        gb_reply_int(c, 0);
        return;
    }
    gb_types_config cfg = gb_types_cfg(c->eng);
    gb_set *fresh = NULL;
    if (!dst)
        dst = fresh = gb_set_new_for(&cfg, argv[3], 1);
    size_t before = gb_set_card(dst);
    gb_set_move(src, dst, &cfg, argv[3]);
    size_t after = gb_set_card(dst);
    if (!fresh)
        gb_tobj_sync(&od);
    gb_tobj_sync_or_delete(c->db, argv[1], &os);
    if (fresh)
        gb_tobj_add(c->db, argv[2], GB_TYPE_SET, fresh, &od);
    gb_engine_key_modified(c->db, argv[1]);
    if (after != before)
        gb_engine_key_modified(c->db, argv[2]);
    gb_reply_int(c, 1);
}

/* SPOP's effect: which members were popped is chance, so it is
 * propagated as SREM key member ... (in batches, as Redis 7.0 does). */
#define SPOP_BATCH 1024
typedef struct spop_effect {
    gb_client *c;
    gb_slice key;
    size_t n;
    gb_slice argv[2 + SPOP_BATCH]; /* SREM key, then owned copies of members */
} spop_effect;

static void spop_effect_flush(spop_effect *e)
{
    if (!e->n)
        return;
    e->argv[0] = gb_slice_cstr("SREM");
    e->argv[1] = e->key;
    gb_propagate_command(e->c, (int)e->n + 2, e->argv);
    for (size_t i = 0; i < e->n; i++)
        gb_free((void *)e->argv[2 + i].ptr);
    e->n = 0;
}

static void spop_emit(void *ctx, gb_slice m)
{
    spop_effect *e = ctx;
    gb_reply_slice(e->c, m);
    e->argv[2 + e->n++] = gb_slice_make(gb_memdup(m.ptr, m.len), m.len);
    if (e->n == SPOP_BATCH)
        spop_effect_flush(e);
}

/* SPOP key [count] */
static void cmd_spop(gb_client *c, int argc, gb_slice *argv)
{
    if (argc > 3) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    int64_t count = 1;
    if (argc == 3 &&
        !gb_arg_ll_range(c, argv[2], 0, INT64_MAX, "ERR value is out of range, must be positive", &count))
        return;
    bool wrong;
    gb_tobj o;
    gb_set *s = lookup_set(c, argv[1], true, &o, &wrong);
    if (wrong)
        return;
    if (!s) {
        if (argc == 3)
            gb_reply_array(c, 0);
        else
            gb_reply_nil(c);
        return;
    }
    if (count == 0) {
        gb_reply_array(c, 0);
        return;
    }
    gb_types_config cfg = gb_types_cfg(c->eng);
    if (argc == 3)
        gb_reply_array(c, (int64_t)GB_MIN((uint64_t)count, gb_set_card(s)));
    if (gb_propagating(&c->eng->prop) && (uint64_t)count < gb_set_card(s)) {
        spop_effect e = {c, argv[1], 0, {{0}}};
        gb_set_pop(s, &cfg, (size_t)count, spop_emit, &e);
        spop_effect_flush(&e);
    } else {
        gb_set_pop(s, &cfg, (size_t)count, emit_bulk, c);
        /* All of it (or nobody listens): the effect is the key's deletion. */
        gb_propagate_del(c, argv[1]);
    }
    gb_tobj_sync_or_delete(c->db, argv[1], &o);
    gb_engine_key_modified(c->db, argv[1]);
}

/* ---- reads ------------------------------------------------------------------------ */

static void cmd_sismember(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    bool wrong;
    gb_tobj o;
    gb_set *s = lookup_set(c, argv[1], false, &o, &wrong);
    if (!wrong)
        gb_reply_int(c, s && gb_set_ismember(s, argv[2]));
}

static void cmd_smismember(gb_client *c, int argc, gb_slice *argv)
{
    bool wrong;
    gb_tobj o;
    gb_set *s = lookup_set(c, argv[1], false, &o, &wrong);
    if (wrong)
        return;
    gb_reply_array(c, argc - 2);
    for (int j = 2; j < argc; j++)
        gb_reply_int(c, s && gb_set_ismember(s, argv[j]));
}

static void cmd_scard(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    bool wrong;
    gb_tobj o;
    gb_set *s = lookup_set(c, argv[1], false, &o, &wrong);
    if (!wrong)
        gb_reply_int(c, s ? (int64_t)gb_set_card(s) : 0);
}

/* SRANDMEMBER key [count] */
static void cmd_srandmember(gb_client *c, int argc, gb_slice *argv)
{
    if (argc > 3) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    bool wrong;
    gb_tobj o;
    if (argc == 2) {
        gb_set *s = lookup_set(c, argv[1], false, &o, &wrong);
        if (s)
            gb_set_random(s, 1, emit_bulk, c);
        else if (!wrong)
            gb_reply_nil(c);
        return;
    }
    int64_t count;
    if (!gb_types_random_count(c, argv[2], &count))
        return;
    gb_set *s = lookup_set(c, argv[1], false, &o, &wrong);
    if (wrong)
        return;
    if (!s || count == 0) {
        gb_reply_array(c, 0);
        return;
    }
    gb_reply_array(c, (int64_t)gb_types_random_n(count, gb_set_card(s)));
    gb_set_random(s, count, emit_bulk, c);
}

/* ---- algebra ------------------------------------------------------------------------- */

/* Looks up every key (missing: NULL, an empty set) into objs[] and
 * sets[]; the same key named twice gives the same pointer (the algebra
 * recognizes repeated inputs). Replies WRONGTYPE and returns false at the
 * first key of another type. *missing counts the missing keys. */
static bool lookup_sets(gb_client *c, gb_slice *keys, size_t n, gb_tobj *objs, const gb_set **sets,
                        size_t *missing)
{
    *missing = 0;
    for (size_t i = 0; i < n; i++) {
        bool wrong;
        sets[i] = lookup_set(c, keys[i], false, &objs[i], &wrong);
        for (size_t j = 0; sets[i] && j < i; j++)
            if (objs[j].kv == objs[i].kv)
                sets[i] = sets[j];
        if (wrong)
            return false;
        if (!sets[i])
            (*missing)++;
    }
    return true;
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

/* Stores s (possibly empty, then freed) under dst and replies its size. */
static void store_result(gb_client *c, gb_slice dst, gb_set *s)
{
    size_t n = s ? gb_set_card(s) : 0;
    if (n == 0) {
        gb_set_free(s);
        s = NULL;
    }
    gb_types_store(c->db, dst, GB_TYPE_SET, s);
    gb_reply_int(c, (int64_t)n);
}

enum { MODE_REPLY, MODE_STORE, MODE_CARD };

/* Redis's sinterGenericCommand: SINTER, SMEMBERS, SINTERSTORE, SINTERCARD. */
static void sinter_generic(gb_client *c, gb_slice *keys, size_t n, const gb_slice *dst, int mode, size_t limit)
{
    const gb_set *stack[8];
    gb_tobj stackobj[8];
    const gb_set **sets = n <= 8 ? stack : gb_malloc(n * sizeof *sets);
    gb_tobj *objs = n <= 8 ? stackobj : gb_malloc(n * sizeof *objs);
    size_t missing;
    if (!lookup_sets(c, keys, n, objs, sets, &missing))
        goto out;
    if (missing) {
        if (mode == MODE_STORE)
            store_result(c, *dst, NULL);
        else if (mode == MODE_CARD)
            gb_reply_int(c, 0);
        else
            gb_reply_array(c, 0);
        goto out;
    }
    if (mode == MODE_CARD) {
        gb_reply_int(c, (int64_t)gb_set_inter(sets, n, limit, NULL, NULL));
    } else if (mode == MODE_STORE) {
        store_ctx st = {gb_set_new(), gb_types_cfg(c->eng)};
        gb_set_inter(sets, n, 0, emit_store, &st);
        store_result(c, *dst, st.s);
    } else {
        size_t h = gb_reply_array_deferred(c);
        size_t k = gb_set_inter(sets, n, 0, emit_bulk, c);
        gb_reply_set_deferred(c, h, (int64_t)k);
    }
out:
    if (sets != stack) {
        gb_free((void *)sets);
        gb_free(objs);
    }
}

static void cmd_sinter(gb_client *c, int argc, gb_slice *argv)
{
    sinter_generic(c, argv + 1, (size_t)(argc - 1), NULL, MODE_REPLY, 0);
}

static void cmd_smembers(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    sinter_generic(c, argv + 1, 1, NULL, MODE_REPLY, 0);
}

static void cmd_sinterstore(gb_client *c, int argc, gb_slice *argv)
{
    sinter_generic(c, argv + 2, (size_t)(argc - 2), &argv[1], MODE_STORE, 0);
}

/* SINTERCARD numkeys key [key ...] [LIMIT limit] */
static void cmd_sintercard(gb_client *c, int argc, gb_slice *argv)
{
    int64_t numkeys, limit = 0;
    if (!gb_arg_ll_range(c, argv[1], 1, INT64_MAX, "ERR numkeys should be greater than 0", &numkeys))
        return;
    if (numkeys > argc - 2) {
        gb_reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (int j = 2 + (int)numkeys; j < argc; j++) {
        if (gb_slice_ieq(argv[j], "limit") && j + 1 < argc) {
            if (!gb_arg_ll_range(c, argv[++j], 0, INT64_MAX, "ERR LIMIT can't be negative", &limit))
                return;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    sinter_generic(c, argv + 2, (size_t)numkeys, NULL, MODE_CARD, (size_t)limit);
}

/* SUNION/SDIFF and their STORE forms. */
static void sunion_diff_generic(gb_client *c, gb_slice *keys, size_t n, const gb_slice *dst, bool diff)
{
    const gb_set *stack[8];
    gb_tobj stackobj[8];
    const gb_set **sets = n <= 8 ? stack : gb_malloc(n * sizeof *sets);
    gb_tobj *objs = n <= 8 ? stackobj : gb_malloc(n * sizeof *objs);
    size_t missing;
    if (lookup_sets(c, keys, n, objs, sets, &missing)) {
        gb_types_config cfg = gb_types_cfg(c->eng);
        gb_set *r = diff ? gb_set_diff(sets, n, &cfg) : gb_set_union(sets, n, &cfg);
        if (dst) {
            store_result(c, *dst, r);
        } else {
            gb_reply_array(c, (int64_t)gb_set_card(r));
            gb_set_members(r, emit_bulk, c);
            gb_set_free(r);
        }
    }
    if (sets != stack) {
        gb_free((void *)sets);
        gb_free(objs);
    }
}

static void cmd_sunion(gb_client *c, int argc, gb_slice *argv)
{
    sunion_diff_generic(c, argv + 1, (size_t)(argc - 1), NULL, false);
}
static void cmd_sunionstore(gb_client *c, int argc, gb_slice *argv)
{
    sunion_diff_generic(c, argv + 2, (size_t)(argc - 2), &argv[1], false);
}
static void cmd_sdiff(gb_client *c, int argc, gb_slice *argv)
{
    sunion_diff_generic(c, argv + 1, (size_t)(argc - 1), NULL, true);
}
static void cmd_sdiffstore(gb_client *c, int argc, gb_slice *argv)
{
    sunion_diff_generic(c, argv + 2, (size_t)(argc - 2), &argv[1], true);
}

/* SSCAN key cursor [MATCH pattern] [COUNT count] */
static void cmd_sscan(gb_client *c, int argc, gb_slice *argv)
{
    gb_types_scan(c, argc, argv, GB_TYPE_SET);
}

#define W (GB_CMD_WRITE | GB_CMD_DENYOOM | GB_CMD_FAST)
#define WD (GB_CMD_WRITE | GB_CMD_DENYOOM)
#define WF (GB_CMD_WRITE | GB_CMD_FAST)
#define R (GB_CMD_READONLY)
#define RF (GB_CMD_READONLY | GB_CMD_FAST)

GB_DEFINE_COMMANDS(set,
    {"sadd", -3, W, 1, 1, 1, cmd_sadd, "set", "Adds one or more members to a set. Creates the key if it doesn't exist.", "1.0.0"},
    {"srem", -3, WF, 1, 1, 1, cmd_srem, "set", "Removes one or more members from a set. Deletes the set if the last member was removed.", "1.0.0"},
    {"smove", 4, WF, 1, 2, 1, cmd_smove, "set", "Moves a member from one set to another.", "1.0.0"},
    {"sismember", 3, RF, 1, 1, 1, cmd_sismember, "set", "Determines whether a member belongs to a set.", "1.0.0"},
    {"smismember", -3, RF, 1, 1, 1, cmd_smismember, "set", "Determines whether multiple members belong to a set.", "6.2.0"},
    {"smembers", 2, R, 1, 1, 1, cmd_smembers, "set", "Returns all members of a set.", "1.0.0"},
    {"scard", 2, RF, 1, 1, 1, cmd_scard, "set", "Returns the number of members in a set.", "1.0.0"},
    {"spop", -2, WF, 1, 1, 1, cmd_spop, "set", "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.", "1.0.0"},
    {"srandmember", -2, R, 1, 1, 1, cmd_srandmember, "set", "Get one or multiple random members from a set", "1.0.0"},
    {"sinter", -2, R, 1, -1, 1, cmd_sinter, "set", "Returns the intersect of multiple sets.", "1.0.0"},
    {"sintercard", -3, R | GB_CMD_MOVABLEKEYS, 0, 0, 0, cmd_sintercard, "set", "Returns the number of members of the intersect of multiple sets.", "7.0.0"},
    {"sinterstore", -3, WD, 1, -1, 1, cmd_sinterstore, "set", "Stores the intersect of multiple sets in a key.", "1.0.0"},
    {"sunion", -2, R, 1, -1, 1, cmd_sunion, "set", "Returns the union of multiple sets.", "1.0.0"},
    {"sunionstore", -3, WD, 1, -1, 1, cmd_sunionstore, "set", "Stores the union of multiple sets in a key.", "1.0.0"},
    {"sdiff", -2, R, 1, -1, 1, cmd_sdiff, "set", "Returns the difference of multiple sets.", "1.0.0"},
    {"sdiffstore", -3, WD, 1, -1, 1, cmd_sdiffstore, "set", "Stores the difference of multiple sets in a key.", "1.0.0"},
    {"sscan", -3, R, 1, 1, 1, cmd_sscan, "set", "Iterates over members of a set.", "2.8.0"});
