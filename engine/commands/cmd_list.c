/*
 * List commands, blocking ones included, on top of engine/ds/list.h (the list
 * representations) and engine/core/blocking.h (wait queues, deadlines, serving).
 * Argument order, error texts and reply shapes follow Redis 7.0's t_list.c.
 */
#include <stdlib.h>

#include "engine/core/blocking.h"
#include "engine/commands/cmd_util.h"
#include "engine/commands/typed.h"
#include "engine/core/propagate.h"
#include "engine/core/engine.h"
#include "engine/core/multi.h"
#include "engine/ds/list.h"
#include "engine/base/mem.h"
#include "engine/types/t_list.h"
#include "engine/base/util.h"

/* ---- helpers ------------------------------------------------------------------- */

/* The list under key (NULL when missing); NULL after replying WRONGTYPE,
 * with *wrongtype set, when it holds another type. Reads count keyspace
 * hits/misses, writes do not (as in Redis). */
static gb_list *lookup_list_for(gb_client *c, gb_slice key, bool write, bool *wrongtype)
{
    *wrongtype = false;
    gb_kv *kv = write ? gb_db_lookup_write(c->db, key) : gb_db_lookup_read(c->db, key);
    if (!kv)
        return NULL;
    if (kv->type != GB_TYPE_LIST) {
        *wrongtype = true;
        gb_reply_error(c, GB_ERR_WRONGTYPE);
        return NULL;
    }
    return kv->v.ptr;
}

static gb_list *lookup_list(gb_client *c, gb_slice key, bool *wrongtype)
{
    return lookup_list_for(c, key, true, wrongtype);
}

static gb_list *lookup_list_read(gb_client *c, gb_slice key, bool *wrongtype)
{
    return lookup_list_for(c, key, false, wrongtype);
}

/* After a removal: an empty list's key is deleted, as in Redis. */
static void delete_if_empty(gb_client *c, gb_slice key, gb_list *l)
{
    if (gb_list_len(l) == 0)
        gb_db_delete(c->db, key);
}

static void emit_bulk(void *ctx, gb_slice v) { gb_reply_slice(ctx, v); }

static bool parse_end(gb_client *c, gb_slice arg, gb_list_end *out)
{
    if (gb_slice_ieq(arg, "left"))
        *out = GB_LIST_HEAD;
    else if (gb_slice_ieq(arg, "right"))
        *out = GB_LIST_TAIL;
    else {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return false;
    }
    return true;
}

/* ---- push ------------------------------------------------------------------------ */

static void push_generic(gb_client *c, int argc, gb_slice *argv, gb_list_end end, bool only_existing)
{
    if (only_existing) {
        bool wrong;
        gb_list *l = lookup_list(c, argv[1], &wrong);
        if (wrong)
            return;
        if (!l) {
            gb_reply_int(c, 0);
            return;
        }
    }
    gb_cmd_push(c, argv[1], end == GB_LIST_TAIL, (size_t)(argc - 2), argv + 2);
}

void gb_cmd_push(gb_client *c, gb_slice key, bool tail, size_t n, const gb_slice *vals)
{
    int64_t len;
    gb_result r = gb_op_push(c->db, key, tail, n, vals, &len);
    gb_reply_int_result(c, r, len);
}

static void cmd_lpush(gb_client *c, int argc, gb_slice *argv) { push_generic(c, argc, argv, GB_LIST_HEAD, false); }
static void cmd_rpush(gb_client *c, int argc, gb_slice *argv) { push_generic(c, argc, argv, GB_LIST_TAIL, false); }
static void cmd_lpushx(gb_client *c, int argc, gb_slice *argv) { push_generic(c, argc, argv, GB_LIST_HEAD, true); }
static void cmd_rpushx(gb_client *c, int argc, gb_slice *argv) { push_generic(c, argc, argv, GB_LIST_TAIL, true); }

/* ---- pop ------------------------------------------------------------------------- */

static void pop_generic(gb_client *c, int argc, gb_slice *argv, gb_list_end end)
{
    bool hascount = argc == 3;
    int64_t count = 0;
    if (argc > 3) {
        gb_reply_wrong_arity(c, end == GB_LIST_HEAD ? "lpop" : "rpop");
        return;
    }
    if (hascount && !gb_arg_ll_range(c, argv[2], 0, INT64_MAX, "ERR value is out of range, must be positive", &count))
        return;
    bool wrong;
    gb_list *l = lookup_list(c, argv[1], &wrong);
    if (wrong)
        return;
    if (!l) {
        if (hascount)
            gb_reply_nil_array(c);
        else
            gb_reply_nil(c);
        return;
    }
    if (hascount && count == 0) {
        gb_reply_array(c, 0);
        return;
    }
    if (!hascount) {
        gb_list_pop(l, end, 1, emit_bulk, c);
    } else {
        size_t n = GB_MIN((size_t)count, gb_list_len(l));
        gb_reply_array(c, (int64_t)n);
        gb_list_pop(l, end, n, emit_bulk, c);
    }
    delete_if_empty(c, argv[1], l);
    gb_engine_key_modified(c->db, argv[1]);
}

void gb_cmd_pop(gb_client *c, gb_slice key, bool tail)
{
    gb_slice argv[2] = {gb_slice_cstr(tail ? "RPOP" : "LPOP"), key};
    pop_generic(c, 2, argv, tail ? GB_LIST_TAIL : GB_LIST_HEAD);
}

/* The effect of a pop that a blocking or multi-key command did: LPOP/RPOP
 * key [count] (Redis 7.0 propagates BLPOP, BLMPOP and LMPOP so). */
static void propagate_pop(gb_client *c, gb_slice key, gb_list_end end, int64_t count)
{
    if (!gb_propagating(&c->eng->prop))
        return;
    char num[GB_INT_BUF];
    gb_slice eff[3] = {gb_slice_cstr(end == GB_LIST_TAIL ? "RPOP" : "LPOP"), key};
    int n = 2;
    if (count >= 0)
        eff[n++] = gb_slice_make(num, gb_ll2str(num, count));
    gb_propagate_command(c, n, eff);
}

static void cmd_lpop(gb_client *c, int argc, gb_slice *argv) { pop_generic(c, argc, argv, GB_LIST_HEAD); }
static void cmd_rpop(gb_client *c, int argc, gb_slice *argv) { pop_generic(c, argc, argv, GB_LIST_TAIL); }

/* ---- read ------------------------------------------------------------------------- */

static void cmd_llen(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    bool wrong;
    gb_list *l = lookup_list_read(c, argv[1], &wrong);
    if (!wrong)
        gb_reply_int(c, l ? (int64_t)gb_list_len(l) : 0);
}

static void cmd_lindex(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    bool wrong;
    gb_list *l = lookup_list_read(c, argv[1], &wrong);
    if (wrong)
        return;
    if (!l) {
        gb_reply_nil(c);
        return;
    }
    int64_t idx;
    if (!gb_arg_ll(c, argv[2], &idx))
        return;
    char buf[GB_LIST_INT_BUF];
    gb_slice v;
    if (gb_list_index(l, idx, buf, &v))
        gb_reply_slice(c, v);
    else
        gb_reply_nil(c);
}

static void cmd_lset(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    bool wrong;
    gb_list *l = lookup_list(c, argv[1], &wrong);
    if (wrong)
        return;
    if (!l) {
        gb_reply_error(c, GB_ERR_NO_KEY);
        return;
    }
    int64_t idx;
    if (!gb_arg_ll(c, argv[2], &idx))
        return;
    if (!gb_list_set(l, idx, argv[3])) {
        gb_reply_error(c, "ERR index out of range");
        return;
    }
    gb_engine_key_modified(c->db, argv[1]);
    gb_reply_ok(c);
}

static bool range_visit(void *ctx, size_t index, gb_slice v)
{
    (void)index;
    gb_reply_slice(ctx, v);
    return true;
}

static void cmd_lrange(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t start, stop;
    if (!gb_arg_ll(c, argv[2], &start) || !gb_arg_ll(c, argv[3], &stop))
        return;
    bool wrong;
    gb_list *l = lookup_list_read(c, argv[1], &wrong);
    if (wrong)
        return;
    if (!l) {
        gb_reply_array(c, 0);
        return;
    }
    gb_reply_array(c, (int64_t)gb_list_range_len(l, start, stop));
    gb_list_range(l, start, stop, false, range_visit, c);
}

static void cmd_ltrim(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t start, stop;
    if (!gb_arg_ll(c, argv[2], &start) || !gb_arg_ll(c, argv[3], &stop))
        return;
    bool wrong;
    gb_list *l = lookup_list(c, argv[1], &wrong);
    if (wrong)
        return;
    if (l) {
        size_t before = gb_list_len(l);
        gb_list_trim(l, start, stop);
        bool trimmed = gb_list_len(l) != before;
        delete_if_empty(c, argv[1], l);
        /* WATCH sees every LTRIM of an existing list (Redis signals the key
         * either way); only one that removed something is a change. */
        if (trimmed)
            gb_engine_key_modified(c->db, argv[1]);
        else
            gb_multi_touch_key(c->db, argv[1]);
    }
    gb_reply_ok(c);
}

static void cmd_lrem(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t count;
    if (!gb_arg_ll(c, argv[2], &count))
        return;
    bool wrong;
    gb_list *l = lookup_list(c, argv[1], &wrong);
    if (wrong)
        return;
    if (!l) {
        gb_reply_int(c, 0);
        return;
    }
    size_t removed = gb_list_remove(l, argv[3], count);
    if (removed) {
        delete_if_empty(c, argv[1], l);
        gb_engine_key_modified(c->db, argv[1]);
    }
    gb_reply_int(c, (int64_t)removed);
}

static void cmd_linsert(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    bool after;
    if (gb_slice_ieq(argv[2], "after"))
        after = true;
    else if (gb_slice_ieq(argv[2], "before"))
        after = false;
    else {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    bool wrong;
    gb_list *l = lookup_list(c, argv[1], &wrong);
    if (wrong)
        return;
    if (!l) {
        gb_reply_int(c, 0);
        return;
    }
    long long n = gb_list_insert(l, after, argv[3], argv[4]);
    if (n > 0)
        gb_engine_key_modified(c->db, argv[1]);
    gb_reply_int(c, n);
}

typedef struct pos_ctx {
    gb_client *c;
    int64_t first;
    bool found;
} pos_ctx;

static void pos_reply(void *ctx, size_t index)
{
    pos_ctx *p = ctx;
    gb_reply_int(p->c, (int64_t)index);
}

static void pos_first(void *ctx, size_t index)
{
    pos_ctx *p = ctx;
    if (!p->found) {
        p->found = true;
        p->first = (int64_t)index;
    }
}

static void cmd_lpos(gb_client *c, int argc, gb_slice *argv)
{
    int64_t rank = 1, count = -1, maxlen = 0;
    for (int j = 3; j < argc; j++) {
        bool more = j + 1 < argc;
        if (gb_slice_ieq(argv[j], "rank") && more) {
            if (!gb_arg_ll(c, argv[++j], &rank))
                return;
            if (rank == 0) {
                gb_reply_error(c, "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second "
                                  "... or use negative to start from the end of the list");
                return;
            }
            if (rank == INT64_MIN) {
                /* Redis 7.0 negates LONG_MIN here (undefined behaviour: it
                 * acts as RANK -1 until COUNT overflows too); 7.2 rejects it
                 * with getRangeLongFromObjectOrReply's text, as we do. */
                gb_reply_error(c, "ERR value is out of range, value must between -9223372036854775807 and "
                                  "9223372036854775807");
                return;
            }
        } else if (gb_slice_ieq(argv[j], "count") && more) {
            if (!gb_arg_ll_range(c, argv[++j], 0, INT64_MAX, "ERR COUNT can't be negative", &count))
                return;
        } else if (gb_slice_ieq(argv[j], "maxlen") && more) {
            if (!gb_arg_ll_range(c, argv[++j], 0, INT64_MAX, "ERR MAXLEN can't be negative", &maxlen))
                return;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    bool wrong;
    gb_list *l = lookup_list_read(c, argv[1], &wrong);
    if (wrong)
        return;
    if (!l) {
        if (count != -1)
            gb_reply_array(c, 0);
        else
            gb_reply_nil(c);
        return;
    }
    pos_ctx p = {c, 0, false};
    if (count == -1) {
        gb_list_pos(l, argv[2], rank, 1, (size_t)maxlen, pos_first, &p);
        if (p.found)
            gb_reply_int(c, p.first);
        else
            gb_reply_nil(c);
        return;
    }
    size_t h = gb_reply_array_deferred(c);
    size_t n = gb_list_pos(l, argv[2], rank, (size_t)count, (size_t)maxlen, pos_reply, &p);
    gb_reply_set_deferred(c, h, (int64_t)n);
}

/* ---- move ---------------------------------------------------------------------------- */

/* LMOVE's body, shared by RPOPLPUSH, BLMOVE and BRPOPLPUSH (once data is
 * there). The destination's type is checked only when there is something
 * to move, as in Redis. */
static void move_generic(gb_client *c, gb_slice src_key, gb_slice dst_key, gb_list_end from, gb_list_end to)
{
    bool wrong;
    gb_list *src = lookup_list(c, src_key, &wrong);
    if (wrong)
        return;
    if (!src || gb_list_len(src) == 0) {
        gb_reply_nil(c);
        return;
    }
    gb_list *dst = lookup_list(c, dst_key, &wrong);
    if (wrong)
        return;
    bool created = false;
    if (!dst) {
        gb_list_config cfg = gb_list_config_for(c->eng);
        dst = gb_list_new(&cfg);
        created = true;
    }
    gb_list_move(src, from, dst, to, emit_bulk, c);
    if (created)
        gb_db_add_object(c->db, dst_key, GB_TYPE_LIST, dst);
    gb_engine_key_modified(c->db, src_key);
    gb_engine_key_modified(c->db, dst_key);
    if (src != dst)
        delete_if_empty(c, src_key, src);
    gb_blocking_signal_key(c->db, dst_key);
}

static void cmd_lmove(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_list_end from, to;
    if (!parse_end(c, argv[3], &from) || !parse_end(c, argv[4], &to))
        return;
    move_generic(c, argv[1], argv[2], from, to);
}

static void cmd_rpoplpush(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    move_generic(c, argv[1], argv[2], GB_LIST_TAIL, GB_LIST_HEAD);
}

/* ---- multi-key pops ------------------------------------------------------------------ */

/* Pops up to count from the first non-empty list among keys and replies
 * [key, [values]]. Returns false (nothing replied) if every key is empty or
 * missing; true after replying (including WRONGTYPE). */
static bool mpop_first(gb_client *c, gb_slice *keys, int nkeys, gb_list_end end, int64_t count)
{
    for (int i = 0; i < nkeys; i++) {
        bool wrong;
        gb_list *l = lookup_list(c, keys[i], &wrong);
        if (wrong)
            return true;
        if (!l || gb_list_len(l) == 0)
            continue;
        size_t n = GB_MIN((size_t)count, gb_list_len(l));
        gb_reply_array(c, 2);
        gb_reply_slice(c, keys[i]);
        gb_reply_array(c, (int64_t)n);
        gb_list_pop(l, end, n, emit_bulk, c);
        delete_if_empty(c, keys[i], l);
        gb_engine_key_modified(c->db, keys[i]);
        propagate_pop(c, keys[i], end, (int64_t)n);
        return true;
    }
    return false;
}

/* Parses "numkeys key... LEFT|RIGHT [COUNT n]" starting at argv[numkeys_idx]. */
static bool parse_mpop(gb_client *c, int argc, gb_slice *argv, int numkeys_idx, int64_t *numkeys, gb_list_end *end,
                       int64_t *count)
{
    bool right;
    if (!gb_parse_mpop_args(c, argc, argv, numkeys_idx, "left", "right", numkeys, &right, count))
        return false;
    *end = right ? GB_LIST_TAIL : GB_LIST_HEAD;
    return true;
}

static void cmd_lmpop(gb_client *c, int argc, gb_slice *argv)
{
    int64_t numkeys, count;
    gb_list_end end;
    if (!parse_mpop(c, argc, argv, 1, &numkeys, &end, &count))
        return;
    if (!mpop_first(c, argv + 2, (int)numkeys, end, count))
        gb_reply_nil_array(c);
}

/* ---- blocking ------------------------------------------------------------------------- */

/* BLPOP/BRPOP key [key ...] timeout */
static void bpop_generic(gb_client *c, int argc, gb_slice *argv, gb_list_end end)
{
    uint64_t deadline;
    if (!gb_blocking_parse_timeout(c, argv[argc - 1], &deadline))
        return;
    gb_slice *keys = argv + 1;
    int nkeys = argc - 2;
    for (int i = 0; i < nkeys; i++) {
        bool wrong;
        gb_list *l = lookup_list(c, keys[i], &wrong);
        if (wrong)
            return;
        if (!l || gb_list_len(l) == 0)
            continue;
        gb_reply_array(c, 2);
        gb_reply_slice(c, keys[i]);
        gb_list_pop(l, end, 1, emit_bulk, c);
        delete_if_empty(c, keys[i], l);
        gb_engine_key_modified(c->db, keys[i]);
        propagate_pop(c, keys[i], end, -1);
        return;
    }
    if (!gb_blocking_allowed(c)) {
        gb_reply_nil_array(c);
        return;
    }
    gb_blocking_block(c, keys, nkeys, deadline, GB_TYPE_LIST, argc, argv);
}

static void cmd_blpop(gb_client *c, int argc, gb_slice *argv) { bpop_generic(c, argc, argv, GB_LIST_HEAD); }
static void cmd_brpop(gb_client *c, int argc, gb_slice *argv) { bpop_generic(c, argc, argv, GB_LIST_TAIL); }

static void bmove_generic(gb_client *c, int argc, gb_slice *argv, gb_list_end from, gb_list_end to,
                          uint64_t deadline)
{
    bool wrong;
    gb_list *src = lookup_list(c, argv[1], &wrong);
    if (wrong)
        return;
    if (src) {
        move_generic(c, argv[1], argv[2], from, to);
        /* Propagated as the LMOVE it was: never a blocking command. */
        gb_slice eff[5] = {gb_slice_cstr("LMOVE"), argv[1], argv[2],
                           gb_slice_cstr(from == GB_LIST_HEAD ? "LEFT" : "RIGHT"),
                           gb_slice_cstr(to == GB_LIST_HEAD ? "LEFT" : "RIGHT")};
        gb_propagate_command(c, 5, eff);
        return;
    }
    if (!gb_blocking_allowed(c)) {
        gb_reply_nil(c); /* Redis answers a null bulk here, a null array on timeout */
        return;
    }
    gb_blocking_block(c, argv + 1, 1, deadline, GB_TYPE_LIST, argc, argv);
}

static void cmd_blmove(gb_client *c, int argc, gb_slice *argv)
{
    gb_list_end from, to;
    uint64_t deadline;
    if (!parse_end(c, argv[3], &from) || !parse_end(c, argv[4], &to))
        return;
    if (!gb_blocking_parse_timeout(c, argv[5], &deadline))
        return;
    bmove_generic(c, argc, argv, from, to, deadline);
}

static void cmd_brpoplpush(gb_client *c, int argc, gb_slice *argv)
{
    uint64_t deadline;
    if (!gb_blocking_parse_timeout(c, argv[3], &deadline))
        return;
    bmove_generic(c, argc, argv, GB_LIST_TAIL, GB_LIST_HEAD, deadline);
}

/* BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT n] */
static void cmd_blmpop(gb_client *c, int argc, gb_slice *argv)
{
    int64_t numkeys, count;
    gb_list_end end;
    if (!parse_mpop(c, argc, argv, 2, &numkeys, &end, &count))
        return;
    uint64_t deadline;
    if (!gb_blocking_parse_timeout(c, argv[1], &deadline))
        return;
    if (mpop_first(c, argv + 3, (int)numkeys, end, count))
        return;
    if (!gb_blocking_allowed(c)) {
        gb_reply_nil_array(c);
        return;
    }
    gb_blocking_block(c, argv + 3, (int)numkeys, deadline, GB_TYPE_LIST, argc, argv);
}

#define W (GB_CMD_WRITE | GB_CMD_DENYOOM | GB_CMD_FAST)
#define WF (GB_CMD_WRITE | GB_CMD_FAST)
#define RF (GB_CMD_READONLY | GB_CMD_FAST)
#define B (GB_CMD_WRITE | GB_CMD_BLOCKING)

GB_DEFINE_COMMANDS(list,
    {"lpush", -3, W, 1, 1, 1, cmd_lpush, "list", "Prepends one or more elements to a list. Creates the key if it doesn't exist.", "1.0.0"},
    {"rpush", -3, W, 1, 1, 1, cmd_rpush, "list", "Appends one or more elements to a list. Creates the key if it doesn't exist.", "1.0.0"},
    {"lpushx", -3, W, 1, 1, 1, cmd_lpushx, "list", "Prepends one or more elements to a list only when the list exists.", "2.2.0"},
    {"rpushx", -3, W, 1, 1, 1, cmd_rpushx, "list", "Appends an element to a list only when the list exists.", "2.2.0"},
    {"lpop", -2, WF, 1, 1, 1, cmd_lpop, "list", "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.", "1.0.0"},
    {"rpop", -2, WF, 1, 1, 1, cmd_rpop, "list", "Returns and removes the last elements of a list. Deletes the list if the last element was popped.", "1.0.0"},
    {"llen", 2, RF, 1, 1, 1, cmd_llen, "list", "Returns the length of a list.", "1.0.0"},
    {"lindex", 3, GB_CMD_READONLY, 1, 1, 1, cmd_lindex, "list", "Returns an element from a list by its index.", "1.0.0"},
    {"lset", 4, GB_CMD_WRITE | GB_CMD_DENYOOM, 1, 1, 1, cmd_lset, "list", "Sets the value of an element in a list by its index.", "1.0.0"},
    {"lrange", 4, GB_CMD_READONLY, 1, 1, 1, cmd_lrange, "list", "Returns a range of elements from a list.", "1.0.0"},
    {"ltrim", 4, GB_CMD_WRITE, 1, 1, 1, cmd_ltrim, "list", "Removes elements from both ends a list. Deletes the list if all elements were trimmed.", "1.0.0"},
    {"lrem", 4, GB_CMD_WRITE, 1, 1, 1, cmd_lrem, "list", "Removes elements from a list. Deletes the list if the last element was removed.", "1.0.0"},
    {"linsert", 5, GB_CMD_WRITE | GB_CMD_DENYOOM, 1, 1, 1, cmd_linsert, "list", "Inserts an element before or after another element in a list.", "2.2.0"},
    {"lpos", -3, GB_CMD_READONLY, 1, 1, 1, cmd_lpos, "list", "Returns the index of matching elements in a list.", "6.0.6"},
    {"lmove", 5, GB_CMD_WRITE | GB_CMD_DENYOOM, 1, 2, 1, cmd_lmove, "list", "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved.", "6.2.0"},
    {"rpoplpush", 3, GB_CMD_WRITE | GB_CMD_DENYOOM, 1, 2, 1, cmd_rpoplpush, "list", "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped.", "1.2.0"},
    {"lmpop", -4, GB_CMD_WRITE | GB_CMD_MOVABLEKEYS, 0, 0, 0, cmd_lmpop, "list", "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.", "7.0.0"},
    {"blpop", -3, B | GB_CMD_NOSCRIPT, 1, -2, 1, cmd_blpop, "list", "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", "2.0.0"},
    {"brpop", -3, B | GB_CMD_NOSCRIPT, 1, -2, 1, cmd_brpop, "list", "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", "2.0.0"},
    {"blmove", 6, B | GB_CMD_DENYOOM | GB_CMD_NOSCRIPT, 1, 2, 1, cmd_blmove, "list", "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.", "6.2.0"},
    {"brpoplpush", 4, B | GB_CMD_DENYOOM | GB_CMD_NOSCRIPT, 1, 2, 1, cmd_brpoplpush, "list", "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.", "2.2.0"},
    {"blmpop", -5, B | GB_CMD_MOVABLEKEYS, 0, 0, 0, cmd_blmpop, "list", "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", "7.0.0"});
