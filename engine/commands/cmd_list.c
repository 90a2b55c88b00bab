/*
 * List commands, blocking ones included: the arguments, the replies and the
 * propagated effects around engine/types/t_list.h (the work on the keys) and
 * engine/core/request/blocking.h (wait queues, deadlines, serving).
 * Argument order, error texts and reply shapes follow Redis 7.0's t_list.c.
 */
#include <stdlib.h>

#include "engine/core/request/blocking.h"
#include "engine/commands/cmd_util.h"
#include "engine/commands/typed.h"
#include "engine/core/request/propagate.h"
#include "engine/core/engine.h"
#include "engine/types/t_list.h"
#include "engine/base/util.h"

/* ---- replies --------------------------------------------------------------------- */

static void emit_bulk(void *ctx, gb_slice v) { gb_reply_slice(ctx, v); }
static void reply_len(void *ctx, size_t n) { gb_reply_array(ctx, (int64_t)n); }

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

static const char *pop_event(gb_list_end end) { return end == GB_LIST_HEAD ? "lpop" : "rpop"; }

void gb_cmd_list_notify_pop(gb_client *c, gb_slice key, gb_list_end end)
{
    gb_notify_key(c, GB_NOTIFY_LIST, pop_event(end), key);
    gb_notify_del_if_gone(c, key);
}

static void pushx(gb_client *c, int argc, gb_slice *argv, gb_list_end end)
{
    int64_t len;
    gb_result r = gb_list_lpushx(c->db, argv[1], end, (size_t)(argc - 2), argv + 2, &len);
    gb_reply_int_result(c, r, len);
    if (r == GB_R_OK && len > 0)
        gb_notify_key(c, GB_NOTIFY_LIST, end == GB_LIST_HEAD ? "lpush" : "rpush", argv[1]);
}

static void cmd_lpush(gb_client *c, int argc, gb_slice *argv) { gb_cmd_push(c, argv[1], false, (size_t)(argc - 2), argv + 2); }
static void cmd_rpush(gb_client *c, int argc, gb_slice *argv) { gb_cmd_push(c, argv[1], true, (size_t)(argc - 2), argv + 2); }
static void cmd_lpushx(gb_client *c, int argc, gb_slice *argv) { pushx(c, argc, argv, GB_LIST_HEAD); }
static void cmd_rpushx(gb_client *c, int argc, gb_slice *argv) { pushx(c, argc, argv, GB_LIST_TAIL); }

/* ---- pop ------------------------------------------------------------------------- */

static void pop_generic(gb_client *c, int argc, gb_slice *argv, gb_list_end end)
{
    if (argc > 3) {
        gb_reply_wrong_arity(c, end == GB_LIST_HEAD ? "lpop" : "rpop");
        return;
    }
    if (argc == 2) {
        gb_cmd_pop(c, argv[1], end == GB_LIST_TAIL);
        return;
    }
    int64_t count;
    if (!gb_arg_ll_range(c, argv[2], 0, INT64_MAX, "ERR value is out of range, must be positive", &count))
        return;
    gb_sink s = {.len = reply_len, .value = emit_bulk, .ctx = c};
    gb_result r = gb_list_lpop(c->db, argv[1], end, (size_t)count, &s);
    if (r == GB_R_NOTFOUND)
        gb_reply_nil_array(c);
    else if (r != GB_R_OK)
        gb_reply_result(c, r);
    else if (count > 0)
        gb_cmd_list_notify_pop(c, argv[1], end);
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
    int64_t len;
    gb_result r = gb_list_llen(c->db, argv[1], &len);
    gb_reply_int_result(c, r, len);
}

static void cmd_lindex(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t idx;
    bool idx_ok = gb_slice2ll(argv[2], &idx);
    char buf[GB_LIST_INT_BUF];
    gb_slice v;
    gb_result r = gb_list_lindex(c->db, argv[1], idx_ok ? &idx : NULL, &v, buf);
    if (r == GB_R_OK)
        gb_reply_slice(c, v);
    else if (r == GB_R_NOTFOUND || r == GB_R_RANGE)
        gb_reply_nil(c);
    else if (r == GB_R_BADARG)
        gb_reply_error(c, GB_ERR_NOT_INT);
    else
        gb_reply_result(c, r);
}

static void cmd_lset(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t idx;
    bool idx_ok = gb_slice2ll(argv[2], &idx);
    gb_result r = gb_list_lset(c->db, argv[1], idx_ok ? &idx : NULL, argv[3]);
    if (r == GB_R_BADARG)
        gb_reply_error(c, GB_ERR_NOT_INT);
    else
        gb_reply_result(c, r); /* +OK, or "no such key", "index out of range", WRONGTYPE */
    if (r == GB_R_OK)
        gb_notify_key(c, GB_NOTIFY_LIST, "lset", argv[1]);
}

static void cmd_lrange(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t start, stop;
    if (!gb_arg_ll(c, argv[2], &start) || !gb_arg_ll(c, argv[3], &stop))
        return;
    gb_sink s = {.len = reply_len, .value = emit_bulk, .ctx = c};
    gb_result r = gb_list_lrange(c->db, argv[1], start, stop, &s);
    if (r == GB_R_NOTFOUND)
        gb_reply_array(c, 0);
    else if (r != GB_R_OK)
        gb_reply_result(c, r);
}

static void cmd_ltrim(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t start, stop;
    if (!gb_arg_ll(c, argv[2], &start) || !gb_arg_ll(c, argv[3], &stop))
        return;
    /* LTRIM of a missing key answers OK and changes nothing (no event). */
    bool existed = GB_UNLIKELY(c->eng->cfg.notify_keyspace_events & (GB_NOTIFY_LIST | GB_NOTIFY_GENERIC)) &&
                   gb_db_lookup_quiet(c->db, argv[1]);
    gb_result r = gb_list_ltrim(c->db, argv[1], start, stop);
    gb_reply_result(c, r);
    if (r == GB_R_OK && existed) {
        gb_notify_key(c, GB_NOTIFY_LIST, "ltrim", argv[1]);
        gb_notify_del_if_gone(c, argv[1]);
    }
}

static void cmd_lrem(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t count, removed;
    if (!gb_arg_ll(c, argv[2], &count))
        return;
    gb_result r = gb_list_lrem(c->db, argv[1], count, argv[3], &removed);
    gb_reply_int_result(c, r, removed);
    if (r == GB_R_OK && removed > 0) {
        gb_notify_key(c, GB_NOTIFY_LIST, "lrem", argv[1]);
        gb_notify_del_if_gone(c, argv[1]);
    }
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
    int64_t len;
    gb_result r = gb_list_linsert(c->db, argv[1], after, argv[3], argv[4], &len);
    gb_reply_int_result(c, r, len);
    if (r == GB_R_OK && len > 0)
        gb_notify_key(c, GB_NOTIFY_LIST, "linsert", argv[1]);
}

typedef struct pos_ctx {
    gb_client *c;
    size_t deferred; /* the COUNT form's array */
    int64_t first;
    bool found;
} pos_ctx;

static void pos_open(void *ctx, size_t n)
{
    (void)n;
    pos_ctx *p = ctx;
    p->deferred = gb_reply_array_deferred(p->c);
}

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
            /* Redis 7.0 negates a RANK of LONG_MIN (undefined behaviour: it
             * acts as RANK -1 until COUNT overflows too); 7.2 refuses it
             * with getRangeLongFromObjectOrReply's text, as we do. */
            if (!gb_arg_ll_within(c, argv[++j], -INT64_MAX, INT64_MAX, &rank))
                return;
            if (rank == 0) {
                gb_reply_error(c, "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second "
                                  "... or use negative to start from the end of the list");
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
    pos_ctx p = {c, 0, 0, false};
    gb_sink s = {.ctx = &p};
    bool many = count != -1;
    if (many) {
        s.len = pos_open;
        s.position = pos_reply;
    } else {
        s.position = pos_first;
    }
    size_t n;
    gb_result r = gb_list_lpos(c->db, argv[1], argv[2], rank, many ? (size_t)count : 1, (size_t)maxlen, &s, &n);
    if (r == GB_R_NOTFOUND) {
        if (many)
            gb_reply_array(c, 0);
        else
            gb_reply_nil(c);
    } else if (r != GB_R_OK) {
        gb_reply_result(c, r);
    } else if (many) {
        gb_reply_set_deferred(c, p.deferred, (int64_t)n);
    } else if (p.found) {
        gb_reply_int(c, p.first);
    } else {
        gb_reply_nil(c);
    }
}

/* ---- move ---------------------------------------------------------------------------- */

/* A move happened: Redis's order, the push on the destination, the pop on
 * the source, its "del" if it emptied. */
static void notify_move(gb_client *c, gb_slice src_key, gb_slice dst_key, gb_list_end from, gb_list_end to)
{
    gb_notify_key(c, GB_NOTIFY_LIST, to == GB_LIST_HEAD ? "lpush" : "rpush", dst_key);
    gb_cmd_list_notify_pop(c, src_key, from);
}

/* LMOVE's reply, shared by RPOPLPUSH. */
static void move_generic(gb_client *c, gb_slice src_key, gb_slice dst_key, gb_list_end from, gb_list_end to)
{
    gb_sink s = {.value = emit_bulk, .ctx = c};
    gb_result r = gb_list_lmove(c->db, src_key, dst_key, from, to, &s, NULL);
    if (r == GB_R_NOTFOUND)
        gb_reply_nil(c);
    else if (r != GB_R_OK)
        gb_reply_result(c, r);
    else
        notify_move(c, src_key, dst_key, from, to);
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

/* [key, [values]] (LMPOP, BLMPOP) or [key, value] (BLPOP, BRPOP). */
typedef struct mpop_ctx {
    gb_client *c;
    const gb_slice *keys;
    size_t which;
    size_t n;
} mpop_ctx;

static void mpop_open(void *ctx, size_t n)
{
    mpop_ctx *m = ctx;
    m->n = n;
    gb_reply_array(m->c, 2);
    gb_reply_slice(m->c, m->keys[m->which]);
    gb_reply_array(m->c, (int64_t)n);
}

static void mpop_value(void *ctx, gb_slice v) { gb_reply_slice(((mpop_ctx *)ctx)->c, v); }

/* BLPOP's one value, after its key: no count to announce. */
static void bpop_value(void *ctx, gb_slice v)
{
    mpop_ctx *m = ctx;
    gb_reply_array(m->c, 2);
    gb_reply_slice(m->c, m->keys[m->which]);
    gb_reply_slice(m->c, v);
}

/* Pops up to count from the first non-empty list among keys, replies and
 * propagates the pop. Returns false (nothing replied) if every key is empty
 * or missing; true after replying (including WRONGTYPE). nested: LMPOP's
 * shape, propagated with its count; else BLPOP's (count 1). */
static bool mpop_first(gb_client *c, const gb_slice *keys, int nkeys, gb_list_end end, int64_t count, bool nested)
{
    mpop_ctx m = {c, keys, 0, 0};
    gb_sink s = {.len = nested ? mpop_open : NULL, .value = nested ? mpop_value : bpop_value, .ctx = &m};
    gb_result r = gb_list_lmpop(c->db, (size_t)nkeys, keys, end, (size_t)count, &s, &m.which);
    if (r == GB_R_NOTFOUND)
        return false;
    if (r != GB_R_OK)
        gb_reply_result(c, r);
    else {
        propagate_pop(c, keys[m.which], end, nested ? (int64_t)m.n : -1);
        gb_cmd_list_notify_pop(c, keys[m.which], end);
    }
    return true;
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
    if (!mpop_first(c, argv + 2, (int)numkeys, end, count, true))
        gb_reply_nil_array(c);
}

/* ---- blocking ------------------------------------------------------------------------- */

/* BLPOP/BRPOP key [key ...] timeout */
static void bpop_generic(gb_client *c, int argc, gb_slice *argv, gb_list_end end)
{
    uint64_t deadline;
    if (!gb_blocking_parse_timeout(c, argv[argc - 1], &deadline))
        return;
    const gb_slice *keys = argv + 1;
    int nkeys = argc - 2;
    gb_blocking_ready_keys(c, &keys, &nkeys);
    if (mpop_first(c, keys, nkeys, end, 1, false))
        return;
    if (!gb_blocking_allowed(c)) {
        gb_reply_nil_array(c);
        return;
    }
    gb_blocking_block(c, argv + 1, argc - 2, deadline, GB_TYPE_LIST, argc, argv);
}

static void cmd_blpop(gb_client *c, int argc, gb_slice *argv) { bpop_generic(c, argc, argv, GB_LIST_HEAD); }
static void cmd_brpop(gb_client *c, int argc, gb_slice *argv) { bpop_generic(c, argc, argv, GB_LIST_TAIL); }

static void bmove_generic(gb_client *c, int argc, gb_slice *argv, gb_list_end from, gb_list_end to,
                          uint64_t deadline)
{
    gb_sink s = {.value = emit_bulk, .ctx = c};
    bool src_found;
    gb_result r = gb_list_lmove(c->db, argv[1], argv[2], from, to, &s, &src_found);
    if (src_found) {
        if (r == GB_R_NOTFOUND) /* an empty source, which the keyspace never holds */
            gb_reply_nil(c);
        else if (r != GB_R_OK)
            gb_reply_result(c, r);
        if (r != GB_R_OK)
            return; /* nothing moved (the destination holds another type): nothing to replay */
        /* Propagated as the move it was, never a blocking command: BLMOVE
         * as LMOVE, BRPOPLPUSH (argc 4) as RPOPLPUSH, as Redis 7.0 does. */
        gb_slice eff[5] = {gb_slice_cstr("LMOVE"), argv[1], argv[2],
                           gb_slice_cstr(from == GB_LIST_HEAD ? "LEFT" : "RIGHT"),
                           gb_slice_cstr(to == GB_LIST_HEAD ? "LEFT" : "RIGHT")};
        if (argc == 4)
            eff[0] = gb_slice_cstr("RPOPLPUSH");
        gb_propagate_command(c, argc == 4 ? 3 : 5, eff);
        notify_move(c, argv[1], argv[2], from, to);
        return;
    }
    if (r != GB_R_NOTFOUND) {
        gb_reply_result(c, r);
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
    const gb_slice *keys = argv + 3;
    int nkeys = (int)numkeys;
    gb_blocking_ready_keys(c, &keys, &nkeys);
    if (mpop_first(c, keys, nkeys, end, count, true))
        return;
    if (!gb_blocking_allowed(c)) {
        gb_reply_nil_array(c);
        return;
    }
    gb_blocking_block(c, argv + 3, (int)numkeys, deadline, GB_TYPE_LIST, argc, argv);
}

GB_DEFINE_COMMANDS(list,
    {"lpush", cmd_lpush},
    {"rpush", cmd_rpush},
    {"lpushx", cmd_lpushx},
    {"rpushx", cmd_rpushx},
    {"lpop", cmd_lpop},
    {"rpop", cmd_rpop},
    {"llen", cmd_llen},
    {"lindex", cmd_lindex},
    {"lset", cmd_lset},
    {"lrange", cmd_lrange},
    {"ltrim", cmd_ltrim},
    {"lrem", cmd_lrem},
    {"linsert", cmd_linsert},
    {"lpos", cmd_lpos},
    {"lmove", cmd_lmove},
    {"rpoplpush", cmd_rpoplpush},
    {"lmpop", cmd_lmpop},
    {"blpop", cmd_blpop},
    {"brpop", cmd_brpop},
    {"blmove", cmd_blmove},
    {"brpoplpush", cmd_brpoplpush},
    {"blmpop", cmd_blmpop});
