/*
 * Stream commands on entries: XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM,
 * XSETID, XREAD and XREADGROUP (BLOCK included). Argument order, error
 * texts, reply shapes and propagated effects are Redis 7.0's t_stream.c;
 * consumer groups and XINFO are in cmd_stream_group.c.
 */
#include "engine/commands/cmd_stream.h"

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/commands/cmd_util.h"
#include "engine/commands/typed.h"
#include "engine/core/request/blocking.h"
#include "engine/core/engine.h"
#include "engine/core/request/gate.h"
#include "engine/core/request/propagate.h"

/* ---- shared helpers ------------------------------------------------------------------------ */

bool gb_xarg_id(gb_client *c, gb_slice arg, uint64_t missing_seq, bool strict, gb_stream_id *id)
{
    if (gb_stream_id_parse(arg, missing_seq, strict, id, NULL))
        return true;
    gb_reply_error(c, GB_XERR_INVALID_ID);
    return false;
}

/* Redis's streamParseIntervalIDOrReply. */
static bool interval_id(gb_client *c, gb_slice arg, uint64_t missing_seq, gb_stream_id *id, bool *exclusive)
{
    *exclusive = arg.len > 1 && arg.ptr[0] == '(';
    if (*exclusive)
        return gb_xarg_id(c, gb_slice_make(arg.ptr + 1, arg.len - 1), missing_seq, true, id);
    return gb_xarg_id(c, arg, missing_seq, false, id);
}

bool gb_xarg_range_start(gb_client *c, gb_slice arg, gb_stream_id *id)
{
    bool exclusive;
    if (!interval_id(c, arg, 0, id, &exclusive))
        return false;
    if (exclusive && !gb_stream_id_incr(id)) {
        gb_reply_error(c, "ERR invalid start ID for the interval");
        return false;
    }
    return true;
}

bool gb_xarg_range_end(gb_client *c, gb_slice arg, gb_stream_id *id)
{
    bool exclusive;
    if (!interval_id(c, arg, UINT64_MAX, id, &exclusive))
        return false;
    if (exclusive && !gb_stream_id_decr(id)) {
        gb_reply_error(c, "ERR invalid end ID for the interval");
        return false;
    }
    return true;
}

void gb_xreply_id(gb_client *c, gb_stream_id id)
{
    char buf[GB_STREAM_ID_TEXT_MAX];
    gb_reply_bulk(c, buf, gb_stream_id_format(buf, id));
}

void gb_xreply_entry(gb_client *c, gb_stream_id id, uint32_t nfields, const gb_stream_iter *it)
{
    gb_reply_array(c, 2);
    gb_xreply_id(c, id);
    gb_reply_array(c, 2 * (int64_t)nfields);
    gb_snode_pairs pp;
    gb_stream_iter_pairs(it, &pp);
    gb_slice f, v;
    while (gb_snode_pairs_next(&pp, &f, &v)) {
        gb_reply_slice(c, f);
        gb_reply_slice(c, v);
    }
}

uint64_t gb_xreply_range(gb_client *c, const gb_stream *s, const gb_stream_id *start, const gb_stream_id *end,
                         uint64_t count, bool rev)
{
    size_t h = gb_reply_array_deferred(c);
    uint64_t n = 0;
    gb_stream_iter it;
    gb_stream_iter_start(&it, s, start, end, rev);
    gb_stream_id id;
    uint32_t nfields;
    while ((!count || n < count) && gb_stream_iter_next(&it, &id, &nfields)) {
        gb_xreply_entry(c, id, nfields, &it);
        n++;
    }
    gb_stream_iter_done(&it);
    gb_reply_set_deferred(c, h, (int64_t)n);
    return n;
}

static void visit_entry(void *ctx, gb_stream_id id, uint32_t nfields, const gb_stream_iter *it)
{
    gb_xreply_entry(ctx, id, nfields, it);
}

static void visit_gone(void *ctx, gb_stream_id id)
{
    gb_reply_array(ctx, 2);
    gb_xreply_id(ctx, id);
    gb_reply_nil_array(ctx);
}

gb_stream_visitor gb_xreply_visitor(gb_client *c)
{
    gb_stream_visitor v = {visit_entry, visit_gone, c};
    return v;
}

void gb_xreply_error_parts(gb_client *c, const gb_slice *parts, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += gb_xtext(parts[i]).len;
    char *buf = gb_malloc(len + 1);
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        gb_slice t = gb_xtext(parts[i]);
        memcpy(buf + at, t.ptr, t.len);
        at += t.len;
    }
    buf[at] = '\0';
    gb_reply_error(c, buf);
    gb_free(buf);
}

void gb_xreply_subcommand_syntax(gb_client *c, gb_slice sub, const char *container)
{
    gb_slice t = gb_xtext(sub);
    gb_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try %s HELP.",
                    (int)GB_MIN(t.len, 128), t.ptr, container);
}

static bool is_word(gb_slice arg, const char *w) { return gb_slice_eq(gb_xtext(arg), gb_slice_cstr(w)); }

/* ---- XADD, XTRIM --------------------------------------------------------------------------- */

/* Redis's streamParseAddOrTrimArgsOrReply: the trimming options of both,
 * and XADD's NOMKSTREAM and ID. Returns the ID's position (XADD; argc when
 * none came), or -1 after replying. *trim_arg is the threshold's position. */
static int parse_add_trim(gb_client *c, int argc, gb_slice *argv, bool xadd, gb_xadd_args *a, int *trim_arg)
{
    memset(a, 0, sizeof *a);
    bool limit_given = false;
    int64_t limit = 0;
    int i = 2;
    for (; i < argc; i++) {
        int more = argc - 1 - i;
        gb_slice opt = argv[i];
        bool maxlen = gb_slice_ieq(opt, "maxlen"), minid = gb_slice_ieq(opt, "minid");
        if (xadd && opt.len == 1 && opt.ptr[0] == '*')
            break;
        if ((maxlen || minid) && more) {
            if (a->trim.strategy != GB_TRIM_NONE) {
                gb_reply_error(c, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
                return -1;
            }
            a->trim.approx = false;
            if (more >= 2 && is_word(argv[i + 1], "~")) {
                a->trim.approx = true;
                i++;
            } else if (more >= 2 && is_word(argv[i + 1], "=")) {
                i++;
            }
            if (maxlen) {
                int64_t n;
                if (!gb_arg_ll(c, argv[i + 1], &n))
                    return -1;
                if (n < 0) {
                    gb_reply_error(c, "ERR The MAXLEN argument must be >= 0.");
                    return -1;
                }
                a->trim.maxlen = (uint64_t)n;
            } else if (!gb_xarg_id(c, argv[i + 1], 0, true, &a->trim.minid)) {
                return -1;
            }
            i++;
            a->trim.strategy = maxlen ? GB_TRIM_MAXLEN : GB_TRIM_MINID;
            *trim_arg = i;
        } else if (gb_slice_ieq(opt, "limit") && more) {
            if (!gb_arg_ll(c, argv[i + 1], &limit))
                return -1;
            if (limit < 0) {
                gb_reply_error(c, "ERR The LIMIT argument must be >= 0.");
                return -1;
            }
            limit_given = true;
            i++;
        } else if (xadd && gb_slice_ieq(opt, "nomkstream")) {
            a->nomkstream = true;
        } else if (xadd) {
            if (!gb_stream_id_parse(opt, 0, true, &a->id, &a->seq_given)) {
                gb_reply_error(c, GB_XERR_INVALID_ID);
                return -1;
            }
            a->id_given = true;
            break;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return -1;
        }
    }
    if (limit && a->trim.strategy == GB_TRIM_NONE) {
        gb_reply_error(c, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
        return -1;
    }
    if (!xadd && a->trim.strategy == GB_TRIM_NONE) {
        gb_reply_error(c, "ERR syntax error, XTRIM must be called with a trimming strategy");
        return -1;
    }
    if (c->flags & GB_CLIENT_OBEY) {
        /* Replaying the log: the threshold was rewritten to what the
         * trimming left ("="), so nothing limits it. */
        limit = 0;
    } else if (limit_given) {
        if (!a->trim.approx) {
            gb_reply_error(c, "ERR syntax error, LIMIT cannot be used without the special ~ option");
            return -1;
        }
    } else {
        limit = a->trim.approx ? gb_stream_default_trim_limit(c->eng) : 0;
    }
    a->trim.limit = limit;
    return i;
}

/* XADD/XTRIM as replayed: "~" becomes "=" and the threshold what the
 * trimming left; XADD's "*" or "<ms>-*" becomes the ID given. */
void gb_xadd_propagate_rewritten(gb_client *c, int argc, const gb_slice *argv, int idpos, gb_stream_id id,
                                 int trim_arg, const gb_xadd_args *a, const gb_xadd_rewrite *rw)
{
    if (!gb_propagating(&c->eng->prop))
        return;
    gb_slice small[32];
    gb_slice *v = argc <= (int)GB_ARRAY_LEN(small) ? small : gb_malloc((size_t)argc * sizeof *v);
    memcpy(v, argv, (size_t)argc * sizeof *v);
    char idtxt[GB_STREAM_ID_TEXT_MAX], trimtxt[GB_STREAM_ID_TEXT_MAX];
    if (rw->id)
        v[idpos] = gb_slice_make(idtxt, gb_stream_id_format(idtxt, id));
    if (rw->trim) {
        v[trim_arg - 1] = gb_slice_cstr("=");
        size_t n = a->trim.strategy == GB_TRIM_MAXLEN ? gb_ull2str(trimtxt, rw->trim_len)
                                                       : gb_stream_id_format(trimtxt, rw->trim_id);
        v[trim_arg] = gb_slice_make(trimtxt, n);
    }
    gb_propagate_command(c, argc, v);
    if (v != small)
        gb_free(v);
}

static void cmd_xadd(gb_client *c, int argc, gb_slice *argv)
{
    gb_xadd_args a;
    int trim_arg = 0;
    int idpos = parse_add_trim(c, argc, argv, true, &a, &trim_arg);
    if (idpos < 0)
        return;
    int fields = idpos + 1;
    if (argc - fields < 2 || (argc - fields) % 2 == 1) {
        gb_reply_wrong_arity(c, "xadd");
        return;
    }
    gb_stream_id id;
    gb_xadd_rewrite rw;
    if (gb_cmd_xadd(c, argv[1], &a, (size_t)(argc - fields) / 2, argv + fields, &id, &rw))
        gb_xadd_propagate_rewritten(c, argc, argv, idpos, id, trim_arg, &a, &rw);
}

static void cmd_xtrim(gb_client *c, int argc, gb_slice *argv)
{
    gb_xadd_args a;
    int trim_arg = 0;
    if (parse_add_trim(c, argc, argv, false, &a, &trim_arg) < 0)
        return;
    gb_stream *s;
    int found = gb_stream_lookup(c->db, argv[1], true, &s);
    if (found < 0) {
        gb_reply_error(c, GB_ERR_WRONGTYPE);
        return;
    }
    int64_t deleted = found ? gb_stream_trim_apply(s, &a.trim) : 0;
    if (deleted) {
        if (a.trim.approx) {
            gb_xadd_rewrite rw = {false, true, s->length, gb_stream_first_node_id(s)};
            gb_xadd_propagate_rewritten(c, argc, argv, 0, gb_stream_id_make(0, 0), trim_arg, &a, &rw);
        }
        gb_engine_key_modified(c->db, argv[1]);
        gb_notify_key(c, GB_NOTIFY_STREAM, "xtrim", argv[1]);
        c->eng->stats.dirty += (uint64_t)deleted - 1; /* Redis counts each entry */
    }
    gb_reply_int(c, deleted);
}

/* ---- reading -------------------------------------------------------------------------------- */

static void range_generic(gb_client *c, int argc, gb_slice *argv, bool rev)
{
    gb_stream_id start, end;
    if (!gb_xarg_range_start(c, rev ? argv[3] : argv[2], &start) || !gb_xarg_range_end(c, rev ? argv[2] : argv[3], &end))
        return;
    int64_t count = -1;
    for (int j = 4; j < argc; j++) {
        if (gb_slice_ieq(argv[j], "count") && argc - j - 1 >= 1) {
            if (!gb_arg_ll(c, argv[j + 1], &count))
                return;
            if (count < 0)
                count = 0;
            j++;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    gb_stream *s;
    int found = gb_stream_lookup(c->db, argv[1], false, &s);
    if (found < 0) {
        gb_reply_error(c, GB_ERR_WRONGTYPE);
        return;
    }
    if (!found) {
        gb_reply_array(c, 0);
        return;
    }
    if (count == 0) {
        gb_reply_nil_array(c);
        return;
    }
    gb_xreply_range(c, s, &start, &end, count < 0 ? 0 : (uint64_t)count, rev);
}

static void cmd_xrange(gb_client *c, int argc, gb_slice *argv) { range_generic(c, argc, argv, false); }
static void cmd_xrevrange(gb_client *c, int argc, gb_slice *argv) { range_generic(c, argc, argv, true); }

static void cmd_xlen(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_stream *s;
    int found = gb_stream_lookup(c->db, argv[1], false, &s);
    if (found < 0)
        gb_reply_error(c, GB_ERR_WRONGTYPE);
    else
        gb_reply_int(c, found ? (int64_t)s->length : 0);
}

/* ---- XDEL, XSETID ------------------------------------------------------------------------------ */

/* The IDs argv[from..argc) parsed strictly, in an array the caller frees
 * when it is not `small`; NULL after replying an error. */
static gb_stream_id *parse_ids(gb_client *c, int argc, gb_slice *argv, int from, gb_stream_id *small, size_t nsmall)
{
    size_t n = (size_t)(argc - from);
    gb_stream_id *ids = n <= nsmall ? small : gb_malloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++) {
        if (!gb_xarg_id(c, argv[from + (int)i], 0, true, &ids[i])) {
            if (ids != small)
                gb_free(ids);
            return NULL;
        }
    }
    return ids;
}

static void cmd_xdel(gb_client *c, int argc, gb_slice *argv)
{
    gb_stream *s;
    int found = gb_stream_lookup(c->db, argv[1], true, &s);
    if (found < 0) {
        gb_reply_error(c, GB_ERR_WRONGTYPE);
        return;
    }
    if (!found) {
        gb_reply_int(c, 0);
        return;
    }
    gb_stream_id small[8];
    gb_stream_id *ids = parse_ids(c, argc, argv, 2, small, GB_ARRAY_LEN(small));
    if (!ids)
        return;
    int64_t deleted = 0;
    bool first_gone = false;
    for (int i = 0; i < argc - 2; i++) {
        if (!gb_stream_delete(s, ids[i]))
            continue;
        first_gone |= gb_stream_id_cmp(ids[i], s->first_id) == 0;
        if (gb_stream_id_cmp(ids[i], s->max_deleted) > 0)
            s->max_deleted = ids[i];
        deleted++;
    }
    if (deleted) {
        if (s->length == 0)
            s->first_id = gb_stream_id_make(0, 0);
        else if (first_gone)
            gb_stream_edge_id(s, true, &s->first_id);
        gb_engine_key_modified(c->db, argv[1]);
        gb_notify_key(c, GB_NOTIFY_STREAM, "xdel", argv[1]);
        c->eng->stats.dirty += (uint64_t)deleted - 1;
    }
    gb_reply_int(c, deleted);
    if (ids != small)
        gb_free(ids);
}

static void cmd_xsetid(gb_client *c, int argc, gb_slice *argv)
{
    gb_stream_id id, max_deleted = {0, 0};
    int64_t added = -1;
    if (!gb_xarg_id(c, argv[2], 0, true, &id))
        return;
    for (int i = 3; i < argc; i += 2) {
        bool more = argc - 1 - i > 0;
        if (gb_slice_ieq(argv[i], "entriesadded") && more) {
            if (!gb_arg_ll(c, argv[i + 1], &added))
                return;
            if (added < 0) {
                gb_reply_error(c, "ERR entries_added must be positive");
                return;
            }
        } else if (gb_slice_ieq(argv[i], "maxdeletedid") && more) {
            if (!gb_xarg_id(c, argv[i + 1], 0, true, &max_deleted))
                return;
            if (gb_stream_id_cmp(id, max_deleted) < 0) {
                gb_reply_error(c, "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
                return;
            }
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    gb_stream *s;
    int found = gb_stream_lookup(c->db, argv[1], true, &s);
    if (found <= 0) {
        gb_reply_error(c, found < 0 ? GB_ERR_WRONGTYPE : GB_ERR_NO_KEY);
        return;
    }
    if (s->length > 0) {
        gb_stream_id top;
        gb_stream_edge_id(s, false, &top);
        if (gb_stream_id_cmp(id, top) < 0) {
            gb_reply_error(c, "ERR The ID specified in XSETID is smaller than the target stream top item");
            return;
        }
        if (added != -1 && s->length > (uint64_t)added) {
            gb_reply_error(c, "ERR The entries_added specified in XSETID is smaller than the target stream length");
            return;
        }
    }
    s->last_id = id;
    if (added != -1)
        s->entries_added = (uint64_t)added;
    if (!gb_stream_id_is_zero(max_deleted))
        s->max_deleted = max_deleted;
    c->eng->stats.dirty++; /* Redis 7.0's XSETID signals no modified key */
    gb_notify_key(c, GB_NOTIFY_STREAM, "xsetid", argv[1]);
    gb_reply_ok(c);
}

/* ---- XREAD, XREADGROUP ------------------------------------------------------------------------ */

/* Entries a waiter served after blocking gets without COUNT (Redis's
 * XREAD_BLOCKED_DEFAULT_COUNT). */
#define XREAD_BLOCKED_COUNT 1000

typedef struct xread_args {
    bool group;
    gb_slice groupname, consumer;
    bool noack;
    int64_t count;
    bool block;
    uint64_t deadline;
    int streams_arg, n;
} xread_args;

static bool parse_xread(gb_client *c, int argc, gb_slice *argv, bool xreadgroup, xread_args *r)
{
    memset(r, 0, sizeof *r);
    for (int i = 1; i < argc; i++) {
        int more = argc - i - 1;
        gb_slice o = argv[i];
        if (gb_slice_ieq(o, "block") && more) {
            if (c->flags & GB_CLIENT_SCRIPT) { /* Redis refuses BLOCK in scripts outright, not as nil */
                gb_reply_errorf(c, "ERR %.*s command is not allowed with BLOCK option from scripts", (int)argv[0].len,
                                argv[0].ptr);
                return false;
            }
            if (!gb_blocking_parse_timeout_ms(c, argv[++i], &r->deadline))
                return false;
            r->block = true;
        } else if (gb_slice_ieq(o, "count") && more) {
            if (!gb_arg_ll(c, argv[++i], &r->count))
                return false;
            if (r->count < 0)
                r->count = 0;
        } else if (gb_slice_ieq(o, "streams") && more) {
            r->streams_arg = i + 1;
            int n = argc - r->streams_arg;
            if (n % 2) {
                gb_reply_error(c, "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
                                  "specified.");
                return false;
            }
            r->n = n / 2;
            break;
        } else if (gb_slice_ieq(o, "group") && more >= 2) {
            if (!xreadgroup) {
                gb_reply_error(c, "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
                return false;
            }
            r->group = true;
            r->groupname = argv[i + 1];
            r->consumer = argv[i + 2];
            i += 2;
        } else if (gb_slice_ieq(o, "noack")) {
            if (!xreadgroup) {
                gb_reply_error(c, "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
                return false;
            }
            r->noack = true;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return false;
        }
    }
    if (!r->streams_arg) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return false;
    }
    if (xreadgroup && !r->group) {
        gb_reply_error(c, "ERR Missing GROUP option for XREADGROUP");
        return false;
    }
    return true;
}

/* A waiter's state: what it waits for on each key, and the strings of the
 * command that serves it (one allocation). */
typedef struct xread_wait {
    bool group, noack;
    int64_t count;
    gb_slice groupname, consumer;
    int n;
    gb_slice *keys;
    gb_stream_id *ids;
    char idtxt[GB_STREAM_ID_TEXT_MAX];
} xread_wait;

static char *copy_into(char *at, gb_slice src, gb_slice *dst)
{
    if (src.len) /* an empty slice may have no pointer */
        memcpy(at, src.ptr, src.len);
    *dst = gb_slice_make(at, src.len);
    return at + src.len;
}

static xread_wait *wait_new(const xread_args *r, const gb_slice *keys, const gb_stream_id *ids)
{
    size_t bytes = sizeof(xread_wait) + (size_t)r->n * (sizeof(gb_slice) + sizeof(gb_stream_id));
    bytes += r->groupname.len + r->consumer.len;
    for (int k = 0; k < r->n; k++)
        bytes += keys[k].len;
    xread_wait *w = gb_malloc(bytes);
    w->group = r->group;
    w->noack = r->noack;
    w->count = r->count ? r->count : XREAD_BLOCKED_COUNT;
    w->n = r->n;
    w->ids = (gb_stream_id *)(w + 1);
    w->keys = (gb_slice *)(w->ids + r->n);
    memcpy(w->ids, ids, (size_t)r->n * sizeof *ids);
    char *at = (char *)(w->keys + r->n);
    for (int k = 0; k < r->n; k++)
        at = copy_into(at, keys[k], &w->keys[k]);
    at = copy_into(at, r->groupname, &w->groupname);
    copy_into(at, r->consumer, &w->consumer);
    return w;
}

static void wait_free(void *ctx) { gb_free(ctx); }

/* The command that serves a waiter from one ready key (Redis 7.0 replies
 * a blocked XREAD with the one stream that woke it). */
static void serve_form(xread_wait *w, int k, gb_argv_builder *b)
{
    if (!w->group) {
        gb_argv_init(b, 6, 1);
        gb_argv_lit(b, "XREAD");
    } else {
        gb_argv_init(b, 10, 1);
        gb_argv_lit(b, "XREADGROUP");
        gb_argv_lit(b, "GROUP");
        gb_argv_add(b, w->groupname);
        gb_argv_add(b, w->consumer);
    }
    gb_argv_lit(b, "COUNT");
    gb_argv_ll(b, w->count);
    if (w->noack)
        gb_argv_lit(b, "NOACK");
    gb_argv_lit(b, "STREAMS");
    gb_argv_add(b, w->keys[k]);
    if (w->group)
        gb_argv_lit(b, ">");
    else
        gb_argv_add(b, gb_slice_make(w->idtxt, gb_stream_id_format(w->idtxt, w->ids[k])));
}

static enum gb_wake xread_ready(gb_client *c, void *ctx, gb_slice key, const gb_kv *kv, gb_argv_builder *serve,
                                const char **err)
{
    (void)c;
    xread_wait *w = ctx;
    int k = 0;
    while (k < w->n - 1 && !gb_slice_eq(w->keys[k], key))
        k++;
    const gb_stream *s = kv && kv->type == GB_TYPE_STREAM ? gb_kv_ptr(kv) : NULL;
    gb_stream_id after;
    if (w->group) {
        if (!s) {
            *err = "UNBLOCKED the stream key no longer exists";
            return GB_WAKE_FAIL;
        }
        const gb_stream_cg *cg = gb_stream_cg_lookup(s, w->groupname);
        if (!cg) {
            *err = "NOGROUP the consumer group this client was blocked on no longer exists";
            return GB_WAKE_FAIL;
        }
        after = cg->last_id;
    } else {
        if (!s)
            return GB_WAKE_SKIP;
        after = w->ids[k];
    }
    if (gb_stream_id_cmp(s->last_id, after) <= 0)
        return GB_WAKE_SKIP;
    serve_form(w, k, serve);
    return GB_WAKE_SERVE;
}

static const gb_wait_check xread_check = {xread_ready, wait_free};

/* Whether a read serves stream s, and after which ID (*after: the ID
 * given, or the group's last for ">"). A history read always serves. A
 * waiter re-executed after its key woke it is served when the stream's
 * last ID passed its floor, live entries beyond it or not (Redis 7.0's
 * blocked path); a plain read needs a live entry past it. */
static bool serves(const gb_stream *s, const gb_stream_cg *cg, bool woken, gb_stream_id *after, bool *history)
{
    *history = cg && !gb_stream_id_is_max(*after);
    if (*history)
        return true;
    gb_stream_id floor = cg ? cg->last_id : *after;
    gb_stream_id top = s->last_id;
    if (!woken && (!s->length || !gb_stream_edge_id(s, false, &top)))
        return false;
    *after = floor;
    return gb_stream_id_cmp(top, floor) > 0;
}

/* One stream's part of the reply: [key, entries] in RESP2, a key and its
 * entries in the map RESP3 replies. */
static void serve_stream(gb_client *c, const xread_args *r, gb_slice key, gb_stream *s, gb_stream_cg *cg,
                         gb_stream_id after, bool history)
{
    if (c->resp < 3)
        gb_reply_array(c, 2);
    gb_reply_slice(c, key);
    gb_stream_id start = after;
    gb_stream_id_incr(&start);
    if (!cg) {
        gb_xreply_range(c, s, &start, NULL, (uint64_t)r->count, false);
        return;
    }
    gb_deliver d = {c, key, r->groupname, r->consumer, s, cg, r->noack, (uint64_t)r->count};
    bool created;
    gb_stream_consumer *consumer = gb_stream_consumer_touch(&d, &created);
    gb_stream_visitor v = gb_xreply_visitor(c);
    size_t h = gb_reply_array_deferred(c);
    uint64_t n = history ? gb_stream_deliver_history(&d, consumer, start, &v)
                         : gb_stream_deliver_new(&d, consumer, start, &v);
    gb_reply_set_deferred(c, h, (int64_t)n);
    /* Redis 7.0 propagates nothing that creates this consumer when the
     * read delivered nothing (a history read): recorded here so the log
     * replays to the same consumers. */
    if (created && !r->noack && n == 0)
        gb_stream_propagate_consumer(c, key, r->groupname, r->consumer);
    c->eng->stats.dirty++;
}

static void xread_generic(gb_client *c, int argc, gb_slice *argv, bool xreadgroup)
{
    xread_args r;
    if (!parse_xread(c, argc, argv, xreadgroup, &r))
        return;
    enum { SMALL = 8 };
    gb_stream_id ids_small[SMALL];
    gb_stream *streams_small[SMALL];
    gb_stream_cg *groups_small[SMALL];
    bool big = r.n > SMALL;
    gb_stream_id *ids = big ? gb_malloc((size_t)r.n * sizeof *ids) : ids_small;
    gb_stream **streams = big ? gb_malloc((size_t)r.n * sizeof *streams) : streams_small;
    gb_stream_cg **groups = big ? gb_malloc((size_t)r.n * sizeof *groups) : groups_small;
    const gb_slice *keys = argv + r.streams_arg;

    for (int k = 0; k < r.n; k++) {
        gb_slice idarg = argv[r.streams_arg + r.n + k];
        streams[k] = NULL;
        groups[k] = NULL;
        /* XREADGROUP changes the group (its last ID, pending entries,
         * consumers): saved first for a snapshot in progress. */
        int found = r.group ? gb_stream_lookup_for_groups(c->db, keys[k], &streams[k])
                            : gb_stream_lookup(c->db, keys[k], false, &streams[k]);
        if (found < 0) {
            gb_reply_error(c, GB_ERR_WRONGTYPE);
            goto done;
        }
        if (r.group && (!found || !(groups[k] = gb_stream_cg_lookup(streams[k], r.groupname)))) {
            gb_slice parts[] = {gb_slice_cstr("NOGROUP No such key '"), keys[k], gb_slice_cstr("' or consumer group '"),
                                r.groupname, gb_slice_cstr("' in XREADGROUP with GROUP option")};
            gb_xreply_error_parts(c, parts, GB_ARRAY_LEN(parts));
            goto done;
        }
        if (is_word(idarg, "$")) {
            if (xreadgroup) {
                gb_reply_error(c, "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
                                  "history of this consumer by specifying a proper ID, or use the > ID to get new "
                                  "messages. The $ ID would just return an empty result set.");
                goto done;
            }
            ids[k] = found ? streams[k]->last_id : gb_stream_id_make(0, 0);
        } else if (is_word(idarg, ">")) {
            if (!xreadgroup) {
                gb_reply_error(c, "ERR The > ID can be specified only when calling XREADGROUP using the GROUP "
                                  "<group> <consumer> option.");
                goto done;
            }
            ids[k] = gb_stream_id_make(UINT64_MAX, UINT64_MAX);
        } else if (!gb_xarg_id(c, idarg, 0, true, &ids[k])) {
            goto done;
        }
    }

    bool woken = (c->flags & GB_CLIENT_REEXEC) != 0;
    size_t h = 0;
    int64_t nserved = 0;
    for (int k = 0; k < r.n; k++) {
        gb_stream_id after = ids[k];
        bool history;
        if (!streams[k] || !serves(streams[k], groups[k], woken, &after, &history))
            continue;
        if (nserved++ == 0)
            h = gb_reply_array_deferred(c);
        serve_stream(c, &r, keys[k], streams[k], groups[k], after, history);
    }
    if (nserved) {
        if (c->resp < 3)
            gb_reply_set_deferred(c, h, nserved);
        else
            gb_reply_set_deferred_map(c, h, nserved);
    } else if (r.block && gb_blocking_allowed(c)) {
        xread_wait *w = wait_new(&r, keys, ids);
        gb_blocking_block_checked(c, keys, r.n, r.deadline, argc, argv, &xread_check, w);
    } else {
        gb_reply_nil_array(c); /* as a timeout: nothing, or not allowed to wait (MULTI) */
    }
done:
    /* XREADGROUP's effects are the ones it recorded (XCLAIM, XGROUP). */
    gb_propagate_prevent(c);
    if (big) {
        gb_free(ids);
        gb_free(streams);
        gb_free(groups);
    }
}

static void cmd_xread(gb_client *c, int argc, gb_slice *argv) { xread_generic(c, argc, argv, false); }
static void cmd_xreadgroup(gb_client *c, int argc, gb_slice *argv) { xread_generic(c, argc, argv, true); }

GB_DEFINE_COMMANDS(stream,
    {"xadd", cmd_xadd},
    {"xrange", cmd_xrange},
    {"xrevrange", cmd_xrevrange},
    {"xlen", cmd_xlen},
    {"xread", cmd_xread},
    {"xreadgroup", cmd_xreadgroup},
    {"xdel", cmd_xdel},
    {"xtrim", cmd_xtrim},
    {"xsetid", cmd_xsetid},
    {"xgroup", gb_cmd_xgroup},
    {"xack", gb_cmd_xack},
    {"xpending", gb_cmd_xpending},
    {"xclaim", gb_cmd_xclaim},
    {"xautoclaim", gb_cmd_xautoclaim},
    {"xinfo", gb_cmd_xinfo});
