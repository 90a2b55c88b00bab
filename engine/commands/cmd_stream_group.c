/*
 * Consumer-group commands and stream introspection: XGROUP, XACK,
 * XPENDING, XCLAIM, XAUTOCLAIM, XINFO. Argument order, error texts, reply
 * shapes and propagated effects are Redis 7.0's t_stream.c.
 */
#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/commands/cmd_stream.h"
#include "engine/commands/cmd_util.h"
#include "engine/core/request/blocking.h"
#include "engine/core/engine.h"
#include "engine/core/request/propagate.h"

/* Milliseconds from then to now, wrapping as Redis's subtraction does:
 * commands keep delivery and seen times in [0, now], but a RESTOREd or
 * loaded stream may hold any 64-bit time. */
static inline int64_t ms_since(int64_t now, int64_t then) { return (int64_t)((uint64_t)now - (uint64_t)then); }

static void reply_nogroup(gb_client *c, gb_slice key, gb_slice group)
{
    gb_slice parts[] = {gb_slice_cstr("NOGROUP No such key '"), key, gb_slice_cstr("' or consumer group '"), group,
                        gb_slice_cstr("'")};
    gb_xreply_error_parts(c, parts, GB_ARRAY_LEN(parts));
}

static void reply_no_such_group(gb_client *c, gb_slice group, gb_slice key)
{
    gb_slice parts[] = {gb_slice_cstr("NOGROUP No such consumer group '"), group, gb_slice_cstr("' for key name '"),
                        key, gb_slice_cstr("'")};
    gb_xreply_error_parts(c, parts, GB_ARRAY_LEN(parts));
}

/* The stream and group a command names, or NULL after replying (WRONGTYPE,
 * or NOGROUP for a missing key or group). changes: the command may change
 * the group (XCLAIM, XAUTOCLAIM), not only read it (XPENDING). */
static gb_stream_cg *lookup_group(gb_client *c, gb_slice key, gb_slice group, bool changes, gb_stream **s)
{
    int found = changes ? gb_stream_lookup_for_groups(c->db, key, s) : gb_stream_lookup(c->db, key, false, s);
    if (found < 0) {
        gb_reply_error(c, GB_ERR_WRONGTYPE);
        return NULL;
    }
    gb_stream_cg *cg = found ? gb_stream_cg_lookup(*s, group) : NULL;
    if (!cg)
        reply_nogroup(c, key, group);
    return cg;
}

/* ---- XGROUP ---------------------------------------------------------------------------------- */

static const char *const xgroup_help[] = {
    "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
    "HELP",
    "    Prints this help.",
};

typedef struct xgroup_opts {
    bool mkstream;
    int64_t entries_read;
} xgroup_opts;

/* CREATE's and SETID's options after argv[4]; false after replying. */
static bool parse_xgroup_opts(gb_client *c, int argc, gb_slice *argv, bool create, bool setid, xgroup_opts *o)
{
    o->mkstream = false;
    o->entries_read = GB_STREAM_ENTRIES_READ_UNKNOWN;
    for (int i = 5; i < argc;) {
        if (create && gb_slice_ieq(argv[i], "mkstream")) {
            o->mkstream = true;
            i++;
        } else if ((create || setid) && gb_slice_ieq(argv[i], "entriesread") && i + 1 < argc) {
            if (!gb_arg_ll(c, argv[i + 1], &o->entries_read))
                return false;
            if (o->entries_read < 0 && o->entries_read != GB_STREAM_ENTRIES_READ_UNKNOWN) {
                gb_reply_error(c, "ERR value for ENTRIESREAD must be positive or -1");
                return false;
            }
            i += 2;
        } else {
            gb_xreply_subcommand_syntax(c, argv[1], "XGROUP");
            return false;
        }
    }
    return true;
}

static void xgroup_create(gb_client *c, int argc, gb_slice *argv, gb_stream *s, const xgroup_opts *o)
{
    (void)argc;
    gb_stream_id id;
    if (gb_slice_eq(gb_xtext(argv[4]), gb_slice_cstr("$")))
        id = s ? s->last_id : gb_stream_id_make(0, 0);
    else if (!gb_xarg_id(c, argv[4], 0, true, &id))
        return;
    if (!s) {
        s = gb_stream_add_key(c->db, argv[2]);
        gb_engine_key_modified(c->db, argv[2]);
    }
    if (!gb_stream_cg_create(s, argv[3], id, o->entries_read)) {
        gb_reply_error(c, "BUSYGROUP Consumer Group name already exists");
        return;
    }
    c->eng->stats.dirty++;
    gb_notify_key(c, GB_NOTIFY_STREAM, "xgroup-create", argv[2]);
    gb_reply_ok(c);
}

static void xgroup_setid(gb_client *c, gb_slice *argv, gb_stream *s, gb_stream_cg *cg, const xgroup_opts *o)
{
    gb_stream_id id;
    if (gb_slice_eq(gb_xtext(argv[4]), gb_slice_cstr("$")))
        id = s->last_id;
    else if (!gb_xarg_id(c, argv[4], 0, false, &id))
        return;
    cg->last_id = id;
    cg->entries_read = o->entries_read;
    c->eng->stats.dirty++;
    gb_notify_key(c, GB_NOTIFY_STREAM, "xgroup-setid", argv[2]);
    gb_reply_ok(c);
}

void gb_cmd_xgroup(gb_client *c, int argc, gb_slice *argv)
{
    /* The gate resolved the subcommand and checked its arity. */
    gb_slice sub = argv[1];
    bool create = gb_slice_ieq(sub, "create"), setid = gb_slice_ieq(sub, "setid");
    gb_stream *s = NULL;
    gb_stream_cg *cg = NULL;
    xgroup_opts o = {false, GB_STREAM_ENTRIES_READ_UNKNOWN};
    if (argc >= 4) {
        if (!parse_xgroup_opts(c, argc, argv, create, setid, &o))
            return;
        int found = gb_stream_lookup(c->db, argv[2], true, &s);
        if (found < 0) {
            gb_reply_error(c, GB_ERR_WRONGTYPE);
            return;
        }
        if (!found)
            s = NULL;
        if (!o.mkstream) {
            if (!s) {
                gb_reply_error(c, "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may "
                                  "want to use the MKSTREAM option to create an empty stream automatically.");
                return;
            }
            cg = gb_stream_cg_lookup(s, argv[3]);
            if (!cg && (setid || gb_slice_ieq(sub, "createconsumer") || gb_slice_ieq(sub, "delconsumer"))) {
                reply_no_such_group(c, argv[3], argv[2]);
                return;
            }
        }
    }
    if (argc == 2 && gb_slice_ieq(sub, "help")) {
        gb_reply_help(c, xgroup_help, GB_ARRAY_LEN(xgroup_help));
    } else if (create && argc >= 5 && argc <= 8) {
        xgroup_create(c, argc, argv, s, &o);
    } else if (setid && (argc == 5 || argc == 7)) {
        xgroup_setid(c, argv, s, cg, &o);
    } else if (gb_slice_ieq(sub, "destroy") && argc == 4) {
        bool destroyed = cg && gb_stream_cg_destroy(s, argv[3]);
        if (destroyed) {
            c->eng->stats.dirty++;
            gb_notify_key(c, GB_NOTIFY_STREAM, "xgroup-destroy", argv[2]);
            /* Its blocked readers fail with NOGROUP. */
            gb_blocking_signal_key(c->db, argv[2]);
        }
        gb_reply_int(c, destroyed);
    } else if (gb_slice_ieq(sub, "createconsumer") && argc == 5) {
        bool created = gb_stream_consumer_add(c, argv[2], cg, argv[4]) != NULL;
        if (created)
            c->eng->stats.dirty++;
        gb_reply_int(c, created);
    } else if (gb_slice_ieq(sub, "delconsumer") && argc == 5) {
        gb_stream_consumer *consumer = gb_stream_consumer_lookup(cg, argv[4]);
        uint64_t pending = 0;
        if (consumer) {
            pending = gb_stream_consumer_delete(cg, consumer);
            c->eng->stats.dirty++;
            gb_notify_key(c, GB_NOTIFY_STREAM, "xgroup-delconsumer", argv[2]);
        }
        gb_reply_int(c, (int64_t)pending);
    } else {
        gb_xreply_subcommand_syntax(c, sub, "XGROUP");
    }
}

/* ---- XACK, XPENDING -------------------------------------------------------------------------- */

void gb_cmd_xack(gb_client *c, int argc, gb_slice *argv)
{
    gb_stream *s;
    int found = gb_stream_lookup_for_groups(c->db, argv[1], &s);
    if (found < 0) {
        gb_reply_error(c, GB_ERR_WRONGTYPE);
        return;
    }
    gb_stream_cg *cg = found ? gb_stream_cg_lookup(s, argv[2]) : NULL;
    if (!cg) {
        gb_reply_int(c, 0);
        return;
    }
    /* All IDs parsed before any is acknowledged: all or nothing. */
    size_t n = (size_t)(argc - 3);
    gb_stream_id small[8];
    gb_stream_id *ids = n <= GB_ARRAY_LEN(small) ? small : gb_malloc(n * sizeof *ids);
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++)
        ok = gb_xarg_id(c, argv[3 + i], 0, true, &ids[i]);
    if (ok)
        gb_reply_int(c, gb_stream_op_ack(c->db, cg, ids, n));
    if (ids != small)
        gb_free(ids);
}

static void pending_summary(gb_client *c, const gb_stream_cg *cg)
{
    gb_reply_array(c, 4);
    gb_reply_int(c, (int64_t)gb_rax_size(&cg->pel));
    if (gb_rax_size(&cg->pel) == 0) {
        gb_reply_nil(c);
        gb_reply_nil(c);
        gb_reply_nil_array(c);
        return;
    }
    gb_rax_iter it;
    gb_rax_iter_init(&it, &cg->pel);
    gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0);
    gb_xreply_id(c, gb_stream_id_decode(it.key));
    gb_rax_seek(&it, GB_RAX_LAST, NULL, 0);
    gb_xreply_id(c, gb_stream_id_decode(it.key));
    gb_rax_iter_done(&it);
    size_t h = gb_reply_array_deferred(c);
    int64_t n = 0;
    gb_rax_iter_init(&it, &cg->consumers);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it)) {
        const gb_stream_consumer *consumer = it.value;
        if (gb_rax_size(&consumer->pel) == 0)
            continue;
        gb_reply_array(c, 2);
        gb_reply_slice(c, gb_stream_consumer_name(consumer));
        gb_reply_bulk_ll(c, (int64_t)gb_rax_size(&consumer->pel));
        n++;
    }
    gb_rax_iter_done(&it);
    gb_reply_set_deferred(c, h, n);
}

typedef struct pending_query {
    gb_stream_id start, end;
    int64_t count, minidle;
} pending_query;

static void pending_range(gb_client *c, const gb_rax *pel, const pending_query *q)
{
    int64_t now = c->eng->now_ms, count = q->count, n = 0;
    uint8_t key[GB_STREAM_ID_KEY], end[GB_STREAM_ID_KEY];
    gb_stream_id_encode(key, q->start);
    gb_stream_id_encode(end, q->end);
    size_t h = gb_reply_array_deferred(c);
    gb_rax_iter it;
    gb_rax_iter_init(&it, pel);
    for (bool ok = count && gb_rax_seek(&it, GB_RAX_GE, key, sizeof key); ok && memcmp(it.key, end, sizeof end) <= 0;
         ok = count && gb_rax_next(&it)) {
        const gb_stream_nack *nack = it.value;
        int64_t idle = ms_since(now, nack->delivery_time);
        if (q->minidle && idle < q->minidle)
            continue;
        gb_reply_array(c, 4);
        gb_xreply_id(c, gb_stream_id_decode(it.key));
        gb_reply_slice(c, gb_stream_consumer_name(nack->consumer));
        gb_reply_int(c, idle < 0 ? 0 : idle);
        gb_reply_int(c, (int64_t)nack->delivery_count);
        n++;
        count--;
    }
    gb_rax_iter_done(&it);
    gb_reply_set_deferred(c, h, n);
}

void gb_cmd_xpending(gb_client *c, int argc, gb_slice *argv)
{
    if (argc != 3 && (argc < 6 || argc > 9)) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    pending_query q = {{0, 0}, {0, 0}, 0, 0};
    gb_slice consumer_name = {NULL, 0};
    bool by_consumer = false;
    if (argc >= 6) {
        int at = 3;
        if (gb_slice_ieq(argv[3], "idle")) {
            if (!gb_arg_ll(c, argv[4], &q.minidle))
                return;
            if (argc < 8) {
                gb_reply_error(c, GB_ERR_SYNTAX);
                return;
            }
            at += 2;
        }
        if (!gb_arg_ll(c, argv[at + 2], &q.count))
            return;
        if (q.count < 0)
            q.count = 0;
        if (!gb_xarg_range_start(c, argv[at], &q.start) || !gb_xarg_range_end(c, argv[at + 1], &q.end))
            return;
        if (at + 3 < argc) {
            consumer_name = argv[at + 3];
            by_consumer = true;
        }
    }
    gb_stream *s;
    gb_stream_cg *cg = lookup_group(c, argv[1], argv[2], false, &s);
    if (!cg)
        return;
    if (argc == 3) {
        pending_summary(c, cg);
        return;
    }
    const gb_rax *pel = &cg->pel;
    if (by_consumer) {
        const gb_stream_consumer *consumer = gb_stream_consumer_lookup(cg, consumer_name);
        if (!consumer) {
            gb_reply_array(c, 0);
            return;
        }
        pel = &consumer->pel;
    }
    pending_range(c, pel, &q);
}

/* ---- XCLAIM, XAUTOCLAIM ---------------------------------------------------------------------- */

/* The consumer a claim gives entries to: looked up (seen now) or created
 * at the first entry actually claimed, as Redis 7.0 does. */
static gb_stream_consumer *claimant(gb_client *c, gb_slice key, gb_stream_cg *cg, gb_slice name)
{
    gb_stream_consumer *consumer = gb_stream_consumer_lookup(cg, name);
    if (consumer) {
        consumer->seen_time = c->eng->now_ms;
        return consumer;
    }
    return gb_stream_consumer_add(c, key, cg, name);
}

/* nack (pending for id) now belongs to consumer. */
static void hand_over(gb_stream_nack *nack, gb_stream_consumer *consumer, gb_stream_id id)
{
    if (nack->consumer == consumer)
        return;
    uint8_t key[GB_STREAM_ID_KEY];
    gb_stream_id_encode(key, id);
    if (nack->consumer)
        gb_rax_remove(&nack->consumer->pel, key, sizeof key, NULL);
    gb_rax_insert(&consumer->pel, key, sizeof key, nack, NULL);
    nack->consumer = consumer;
}

/* Replies the entry id (it exists). */
static void reply_entry_at(gb_client *c, const gb_stream *s, gb_stream_id id)
{
    gb_stream_iter it;
    gb_stream_iter_start(&it, s, &id, &id, false);
    gb_stream_id got;
    uint32_t nfields;
    if (gb_stream_iter_next(&it, &got, &nfields))
        gb_xreply_entry(c, got, nfields, &it);
    else
        gb_reply_nil(c);
    gb_stream_iter_done(&it);
}

typedef struct claim_opts {
    int64_t minidle;
    int64_t retrycount;  /* -1: not given */
    int64_t deliverytime; /* -1: not given */
    bool force, justid;
    gb_stream_id lastid;
    int nids;            /* IDs from argv[5] */
} claim_opts;

/* XCLAIM's IDs (as many as parse) and then its options. */
static bool parse_claim(gb_client *c, int argc, gb_slice *argv, gb_stream_id *ids, claim_opts *o)
{
    int64_t now = c->eng->now_ms;
    int j = 5;
    while (j < argc && gb_stream_id_parse(argv[j], 0, true, &ids[j - 5], NULL))
        j++;
    o->nids = j - 5;
    for (; j < argc; j++) {
        bool more = argc - 1 - j > 0;
        gb_slice opt = argv[j];
        if (gb_slice_ieq(opt, "force")) {
            o->force = true;
        } else if (gb_slice_ieq(opt, "justid")) {
            o->justid = true;
        } else if (gb_slice_ieq(opt, "idle") && more) {
            if (!gb_arg_ll_range(c, argv[++j], INT64_MIN, INT64_MAX, "ERR Invalid IDLE option argument for XCLAIM",
                                 &o->deliverytime))
                return false;
            o->deliverytime = ms_since(now, o->deliverytime);
        } else if (gb_slice_ieq(opt, "time") && more) {
            if (!gb_arg_ll_range(c, argv[++j], INT64_MIN, INT64_MAX, "ERR Invalid TIME option argument for XCLAIM",
                                 &o->deliverytime))
                return false;
        } else if (gb_slice_ieq(opt, "retrycount") && more) {
            if (!gb_arg_ll_range(c, argv[++j], INT64_MIN, INT64_MAX,
                                 "ERR Invalid RETRYCOUNT option argument for XCLAIM", &o->retrycount))
                return false;
        } else if (gb_slice_ieq(opt, "lastid") && more) {
            if (!gb_xarg_id(c, argv[++j], 0, true, &o->lastid))
                return false;
        } else {
            gb_slice parts[] = {gb_slice_cstr("ERR Unrecognized XCLAIM option '"), opt, gb_slice_cstr("'")};
            gb_xreply_error_parts(c, parts, GB_ARRAY_LEN(parts));
            return false;
        }
    }
    return true;
}

void gb_cmd_xclaim(gb_client *c, int argc, gb_slice *argv)
{
    gb_stream *s;
    gb_stream_cg *cg = lookup_group(c, argv[1], argv[2], true, &s);
    if (!cg)
        return;
    claim_opts o = {0, -1, -1, false, false, {0, 0}, 0};
    if (!gb_arg_ll_range(c, argv[4], INT64_MIN, INT64_MAX, "ERR Invalid min-idle-time argument for XCLAIM",
                         &o.minidle))
        return;
    if (o.minidle < 0)
        o.minidle = 0;
    size_t maxids = (size_t)(argc - 5);
    gb_stream_id small[8];
    gb_stream_id *ids = maxids <= GB_ARRAY_LEN(small) ? small : gb_malloc(maxids * sizeof *ids);
    if (!parse_claim(c, argc, argv, ids, &o))
        goto done;

    int64_t now = c->eng->now_ms;
    bool propagate_last_id = false;
    if (gb_stream_id_cmp(o.lastid, cg->last_id) > 0) {
        cg->last_id = o.lastid;
        propagate_last_id = true;
    }
    int64_t when = o.deliverytime;
    if (when == -1 || when < 0 || when > now)
        when = now; /* a client's clock a little ahead is no reason to fail */

    gb_stream_consumer *consumer = NULL;
    size_t h = gb_reply_array_deferred(c);
    int64_t n = 0;
    for (int k = 0; k < o.nids; k++) {
        gb_stream_id id = ids[k];
        uint8_t key[GB_STREAM_ID_KEY];
        gb_stream_id_encode(key, id);
        void *v = NULL;
        gb_rax_find(&cg->pel, key, sizeof key, &v);
        gb_stream_nack *nack = v;
        if (!gb_stream_entry_exists(s, id)) {
            /* Deleted from the stream: its pending entry goes too. */
            if (nack) {
                gb_stream_propagate_claim(c, argv[1], argv[2], cg, id, nack);
                propagate_last_id = false;
                c->eng->stats.dirty++;
                gb_stream_nack_remove(cg, id);
            }
            continue;
        }
        if (o.force && !nack) {
            nack = gb_stream_nack_new(NULL, now);
            gb_rax_insert(&cg->pel, key, sizeof key, nack, NULL);
        }
        if (!nack)
            continue;
        if (nack->consumer && o.minidle && ms_since(now, nack->delivery_time) < o.minidle)
            continue;
        if (!consumer)
            consumer = claimant(c, argv[1], cg, argv[3]);
        hand_over(nack, consumer, id);
        nack->delivery_time = when;
        if (o.retrycount >= 0)
            nack->delivery_count = (uint64_t)o.retrycount;
        else if (!o.justid)
            nack->delivery_count++;
        if (o.justid)
            gb_xreply_id(c, id);
        else
            reply_entry_at(c, s, id);
        n++;
        gb_stream_propagate_claim(c, argv[1], argv[2], cg, id, nack);
        propagate_last_id = false;
        c->eng->stats.dirty++;
    }
    if (propagate_last_id) {
        gb_stream_propagate_group_id(c, argv[1], argv[2], cg);
        c->eng->stats.dirty++;
    }
    gb_reply_set_deferred(c, h, n);
    gb_propagate_prevent(c);
done:
    if (ids != small)
        gb_free(ids);
}

/* A growable list of IDs (XAUTOCLAIM's claimed and deleted ones: bounded
 * by the pending list, never by a client's COUNT). */
typedef struct id_list {
    gb_stream_id *v;
    size_t n, cap;
} id_list;

static void id_list_add(id_list *l, gb_stream_id id)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->v = gb_realloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = id;
}

/* Redis's raxIterator walk over a pending list: seek, then each next()
 * yields the sought element first. */
typedef struct pel_walk {
    gb_rax_iter it;
    bool fresh;
} pel_walk;

static void walk_seek(pel_walk *w, const uint8_t key[GB_STREAM_ID_KEY])
{
    gb_rax_seek(&w->it, GB_RAX_GE, key, GB_STREAM_ID_KEY);
    w->fresh = true;
}

static bool walk_next(pel_walk *w)
{
    if (w->fresh) {
        w->fresh = false;
        return !w->it.eof;
    }
    return gb_rax_next(&w->it);
}

/* Entries an XAUTOCLAIM call may claim at most: Redis's LONG_MAX / 16. */
#define AUTOCLAIM_MAX_COUNT (INT64_MAX / 16)
/* Redis allocates COUNT x 16 bytes up front and answers "Insufficient
 * memory" when that fails; nothing is allocated by COUNT here, and the
 * error is kept for counts no 64-bit address space could have held. */
#define AUTOCLAIM_ALLOC_LIMIT ((int64_t)1 << 43)

typedef struct autoclaim {
    gb_client *c;
    gb_slice *argv;
    gb_stream *s;
    gb_stream_cg *cg;
    int64_t minidle, count;
    bool justid;
    id_list claimed, deleted;
    gb_stream_id cursor;
} autoclaim;

/* The scan: claims idle entries, drops deleted ones, then notes where the
 * next call should start (0-0: the end was reached). */
static void autoclaim_scan(autoclaim *a, gb_stream_id start)
{
    gb_client *c = a->c;
    int64_t now = c->eng->now_ms, count = a->count, attempts = a->count * 10;
    gb_stream_consumer *consumer = NULL;
    pel_walk w;
    gb_rax_iter_init(&w.it, &a->cg->pel);
    uint8_t key[GB_STREAM_ID_KEY];
    gb_stream_id_encode(key, start);
    walk_seek(&w, key);
    while (attempts-- && count && walk_next(&w)) {
        gb_stream_nack *nack = w.it.value;
        gb_stream_id id = gb_stream_id_decode(w.it.key);
        if (!gb_stream_entry_exists(a->s, id)) {
            gb_stream_propagate_claim(c, a->argv[1], a->argv[2], a->cg, id, nack);
            c->eng->stats.dirty++;
            memcpy(key, w.it.key, sizeof key);
            gb_stream_nack_remove(a->cg, id);
            id_list_add(&a->deleted, id);
            walk_seek(&w, key);
            count--;
            continue;
        }
        if (a->minidle && ms_since(now, nack->delivery_time) < a->minidle)
            continue;
        if (!consumer)
            consumer = claimant(c, a->argv[1], a->cg, a->argv[3]);
        hand_over(nack, consumer, id);
        nack->delivery_time = now;
        if (!a->justid)
            nack->delivery_count++;
        id_list_add(&a->claimed, id);
        count--;
        gb_stream_propagate_claim(c, a->argv[1], a->argv[2], a->cg, id, nack);
        c->eng->stats.dirty++;
    }
    a->cursor = walk_next(&w) ? gb_stream_id_decode(w.it.key) : gb_stream_id_make(0, 0);
    gb_rax_iter_done(&w.it);
}

void gb_cmd_xautoclaim(gb_client *c, int argc, gb_slice *argv)
{
    autoclaim a = {c, argv, NULL, NULL, 0, 100, false, {0}, {0}, {0, 0}};
    gb_stream_id start;
    if (!gb_arg_ll_range(c, argv[4], INT64_MIN, INT64_MAX, "ERR Invalid min-idle-time argument for XAUTOCLAIM",
                         &a.minidle))
        return;
    if (a.minidle < 0)
        a.minidle = 0;
    if (!gb_xarg_range_start(c, argv[5], &start))
        return;
    for (int j = 6; j < argc; j++) {
        bool more = argc - 1 - j > 0;
        if (gb_slice_ieq(argv[j], "count") && more) {
            if (!gb_arg_ll_range(c, argv[++j], 1, AUTOCLAIM_MAX_COUNT, "ERR COUNT must be > 0", &a.count))
                return;
        } else if (gb_slice_ieq(argv[j], "justid")) {
            a.justid = true;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    if (!(a.cg = lookup_group(c, argv[1], argv[2], true, &a.s)))
        return;
    if (a.count > AUTOCLAIM_ALLOC_LIMIT / GB_STREAM_ID_KEY) {
        gb_reply_error(c, "ERR Insufficient memory, failed allocating transient memory, COUNT too high.");
        return;
    }
    autoclaim_scan(&a, start);
    gb_reply_array(c, 3);
    gb_xreply_id(c, a.cursor);
    gb_reply_array(c, (int64_t)a.claimed.n);
    for (size_t i = 0; i < a.claimed.n; i++) {
        if (a.justid)
            gb_xreply_id(c, a.claimed.v[i]);
        else
            reply_entry_at(c, a.s, a.claimed.v[i]);
    }
    gb_reply_array(c, (int64_t)a.deleted.n);
    for (size_t i = 0; i < a.deleted.n; i++)
        gb_xreply_id(c, a.deleted.v[i]);
    gb_free(a.claimed.v);
    gb_free(a.deleted.v);
    gb_propagate_prevent(c);
}

/* ---- XINFO ----------------------------------------------------------------------------------------- */

static const char *const xinfo_help[] = {
    "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
    "HELP",
    "    Prints this help.",
};

/* A group's lag (entries not yet delivered), or nil when deletions make it
 * unknowable (Redis 7.0's streamReplyWithCGLag). */
static void reply_lag(gb_client *c, const gb_stream *s, const gb_stream_cg *cg)
{
    int64_t read;
    if (!s->entries_added)
        read = 0;
    else if (cg->entries_read != GB_STREAM_ENTRIES_READ_UNKNOWN &&
             !gb_stream_range_has_tombstones(s, &cg->last_id, NULL))
        read = cg->entries_read;
    else
        read = gb_stream_estimate_distance(s, cg->last_id);
    if (read == GB_STREAM_ENTRIES_READ_UNKNOWN)
        gb_reply_nil(c);
    else
        gb_reply_int(c, (int64_t)(s->entries_added - (uint64_t)read)); /* wrapping, as Redis's */
}

static void reply_entries_read(gb_client *c, const gb_stream_cg *cg)
{
    if (cg->entries_read == GB_STREAM_ENTRIES_READ_UNKNOWN)
        gb_reply_nil(c);
    else
        gb_reply_int(c, cg->entries_read);
}

static void reply_field(gb_client *c, const char *name) { gb_reply_cstr(c, name); }

static void xinfo_consumers(gb_client *c, gb_slice key, const gb_stream *s, gb_slice group)
{
    const gb_stream_cg *cg = gb_stream_cg_lookup(s, group);
    if (!cg) {
        reply_no_such_group(c, group, key);
        return;
    }
    int64_t now = c->eng->now_ms;
    gb_reply_array(c, (int64_t)gb_rax_size(&cg->consumers));
    gb_rax_iter it;
    gb_rax_iter_init(&it, &cg->consumers);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it)) {
        const gb_stream_consumer *consumer = it.value;
        int64_t idle = ms_since(now, consumer->seen_time);
        gb_reply_map(c, 3);
        reply_field(c, "name");
        gb_reply_slice(c, gb_stream_consumer_name(consumer));
        reply_field(c, "pending");
        gb_reply_int(c, (int64_t)gb_rax_size(&consumer->pel));
        reply_field(c, "idle");
        gb_reply_int(c, idle < 0 ? 0 : idle);
    }
    gb_rax_iter_done(&it);
}

static void xinfo_groups(gb_client *c, const gb_stream *s)
{
    gb_reply_array(c, (int64_t)gb_stream_groups_count(s));
    if (!s->groups)
        return;
    gb_rax_iter it;
    gb_rax_iter_init(&it, s->groups);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it)) {
        const gb_stream_cg *cg = it.value;
        gb_reply_map(c, 6);
        reply_field(c, "name");
        gb_reply_bulk(c, (const char *)it.key, it.key_len);
        reply_field(c, "consumers");
        gb_reply_int(c, (int64_t)gb_rax_size(&cg->consumers));
        reply_field(c, "pending");
        gb_reply_int(c, (int64_t)gb_rax_size(&cg->pel));
        reply_field(c, "last-delivered-id");
        gb_xreply_id(c, cg->last_id);
        reply_field(c, "entries-read");
        reply_entries_read(c, cg);
        reply_field(c, "lag");
        reply_lag(c, s, cg);
    }
    gb_rax_iter_done(&it);
}

/* The fields XINFO STREAM starts with, in both forms. */
static void stream_header(gb_client *c, const gb_stream *s)
{
    reply_field(c, "length");
    gb_reply_int(c, (int64_t)s->length);
    reply_field(c, "radix-tree-keys");
    gb_reply_int(c, (int64_t)gb_rax_size(&s->nodes));
    reply_field(c, "radix-tree-nodes");
    gb_reply_int(c, (int64_t)s->nodes.numnodes);
    reply_field(c, "last-generated-id");
    gb_xreply_id(c, s->last_id);
    reply_field(c, "max-deleted-entry-id");
    gb_xreply_id(c, s->max_deleted);
    reply_field(c, "entries-added");
    gb_reply_int(c, (int64_t)s->entries_added);
    reply_field(c, "recorded-first-entry-id");
    gb_xreply_id(c, s->first_id);
}

/* first-entry / last-entry: the entry, or a nil. */
static void edge_entry(gb_client *c, const gb_stream *s, bool last)
{
    gb_stream_iter it;
    gb_stream_iter_start(&it, s, NULL, NULL, last);
    gb_stream_id id;
    uint32_t nfields;
    if (gb_stream_iter_next(&it, &id, &nfields))
        gb_xreply_entry(c, id, nfields, &it);
    else
        gb_reply_nil(c);
    gb_stream_iter_done(&it);
}

/* Up to count (0: all) of a pending list: [id, consumer, time, count]
 * (with_owner) or [id, time, count]. */
static void pending_list(gb_client *c, const gb_rax *pel, int64_t count, bool with_owner)
{
    size_t h = gb_reply_array_deferred(c);
    int64_t n = 0;
    gb_rax_iter it;
    gb_rax_iter_init(&it, pel);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok && (!count || n < count); ok = gb_rax_next(&it)) {
        const gb_stream_nack *nack = it.value;
        gb_reply_array(c, with_owner ? 4 : 3);
        gb_xreply_id(c, gb_stream_id_decode(it.key));
        if (with_owner)
            gb_reply_slice(c, gb_stream_consumer_name(nack->consumer));
        gb_reply_int(c, nack->delivery_time);
        gb_reply_int(c, (int64_t)nack->delivery_count);
        n++;
    }
    gb_rax_iter_done(&it);
    gb_reply_set_deferred(c, h, n);
}

static void full_consumers(gb_client *c, const gb_stream_cg *cg, int64_t count)
{
    gb_reply_array(c, (int64_t)gb_rax_size(&cg->consumers));
    gb_rax_iter it;
    gb_rax_iter_init(&it, &cg->consumers);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it)) {
        const gb_stream_consumer *consumer = it.value;
        gb_reply_map(c, 4);
        reply_field(c, "name");
        gb_reply_slice(c, gb_stream_consumer_name(consumer));
        reply_field(c, "seen-time");
        gb_reply_int(c, consumer->seen_time);
        reply_field(c, "pel-count");
        gb_reply_int(c, (int64_t)gb_rax_size(&consumer->pel));
        reply_field(c, "pending");
        pending_list(c, &consumer->pel, count, false);
    }
    gb_rax_iter_done(&it);
}

static void full_groups(gb_client *c, const gb_stream *s, int64_t count)
{
    gb_reply_array(c, (int64_t)gb_stream_groups_count(s));
    if (!s->groups)
        return;
    gb_rax_iter it;
    gb_rax_iter_init(&it, s->groups);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it)) {
        const gb_stream_cg *cg = it.value;
        gb_reply_map(c, 7);
        reply_field(c, "name");
        gb_reply_bulk(c, (const char *)it.key, it.key_len);
        reply_field(c, "last-delivered-id");
        gb_xreply_id(c, cg->last_id);
        reply_field(c, "entries-read");
        reply_entries_read(c, cg);
        reply_field(c, "lag");
        reply_lag(c, s, cg);
        reply_field(c, "pel-count");
        gb_reply_int(c, (int64_t)gb_rax_size(&cg->pel));
        reply_field(c, "pending");
        pending_list(c, &cg->pel, count, true);
        reply_field(c, "consumers");
        full_consumers(c, cg, count);
    }
    gb_rax_iter_done(&it);
}

static void xinfo_stream(gb_client *c, int argc, gb_slice *argv, const gb_stream *s)
{
    int optc = argc - 3;
    int64_t count = 10; /* FULL's default: a bounded answer */
    if (optc != 0) {
        if ((optc != 1 && optc != 3) || !gb_slice_ieq(argv[3], "full") ||
            (optc == 3 && !gb_slice_ieq(argv[4], "count"))) {
            gb_xreply_subcommand_syntax(c, argv[1], "XINFO");
            return;
        }
        if (optc == 3) {
            if (!gb_arg_ll(c, argv[5], &count))
                return;
            if (count < 0)
                count = 10;
        }
    }
    gb_reply_map(c, optc ? 9 : 10);
    stream_header(c, s);
    if (!optc) {
        reply_field(c, "groups");
        gb_reply_int(c, (int64_t)gb_stream_groups_count(s));
        reply_field(c, "first-entry");
        edge_entry(c, s, false);
        reply_field(c, "last-entry");
        edge_entry(c, s, true);
        return;
    }
    reply_field(c, "entries");
    gb_xreply_range(c, s, NULL, NULL, (uint64_t)count, false);
    reply_field(c, "groups");
    full_groups(c, s, count);
}

void gb_cmd_xinfo(gb_client *c, int argc, gb_slice *argv)
{
    /* The gate resolved the subcommand and checked its arity. */
    gb_slice sub = argv[1];
    if (gb_slice_ieq(sub, "help")) {
        gb_reply_help(c, xinfo_help, GB_ARRAY_LEN(xinfo_help));
        return;
    }
    gb_stream *s;
    int found = gb_stream_lookup(c->db, argv[2], false, &s);
    if (found <= 0) {
        gb_reply_error(c, found < 0 ? GB_ERR_WRONGTYPE : GB_ERR_NO_KEY);
        return;
    }
    if (gb_slice_ieq(sub, "consumers") && argc == 4)
        xinfo_consumers(c, argv[2], s, argv[3]);
    else if (gb_slice_ieq(sub, "groups") && argc == 3)
        xinfo_groups(c, s);
    else if (gb_slice_ieq(sub, "stream"))
        xinfo_stream(c, argc, argv, s);
    else
        gb_xreply_subcommand_syntax(c, sub, "XINFO");
}
