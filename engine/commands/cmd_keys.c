/* Generic keyspace commands: DEL, EXISTS, TYPE, KEYS, SCAN, RENAME, COPY,
 * MOVE, the EXPIRE family, OBJECT, and the database-level SELECT, SWAPDB,
 * DBSIZE, FLUSHDB, FLUSHALL: the arguments, the replies and the propagated
 * effects around engine/types/t_keys.h (the work on the keys). */
#include <limits.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "engine/commands/cmd_util.h"
#include "engine/commands/typed.h"
#include "engine/core/memory/evict.h"
#include "engine/core/engine.h"
#include "engine/core/pubsub/tracking.h"
#include "engine/base/mem.h"
#include "engine/types/t_keys.h"
#include "engine/base/util.h"

static void cmd_del(gb_client *c, int argc, gb_slice *argv) { gb_cmd_del(c, (size_t)argc - 1, argv + 1); }
static void cmd_unlink(gb_client *c, int argc, gb_slice *argv) { gb_cmd_unlink(c, (size_t)argc - 1, argv + 1); }

static void cmd_exists(gb_client *c, int argc, gb_slice *argv)
{
    int64_t n;
    gb_result r = gb_keys_exists(c->db, (size_t)(argc - 1), argv + 1, &n);
    gb_reply_int_result(c, r, n);
}

static void cmd_touch(gb_client *c, int argc, gb_slice *argv)
{
    int64_t n;
    gb_result r = gb_keys_touch(c->db, (size_t)(argc - 1), argv + 1, &n);
    gb_reply_int_result(c, r, n);
}

static void cmd_type(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    const char *name;
    gb_keys_type(c->db, argv[1], &name); /* "none" when missing */
    gb_reply_status(c, name);
}

/* ---- KEYS / SCAN ------------------------------------------------------------ */

/* A key stream whose length is known once it is replied (KEYS, SCAN). */
typedef struct keys_ctx {
    gb_client *c;
    const uint64_t *cursor; /* SCAN: replied first, as [cursor, [keys]] */
    size_t handle;
} keys_ctx;

static void keys_open(void *ctx, size_t n)
{
    (void)n;
    keys_ctx *k = ctx;
    if (k->cursor) {
        char cbuf[24];
        gb_reply_array(k->c, 2);
        gb_reply_bulk(k->c, cbuf, gb_ull2str(cbuf, *k->cursor));
    }
    k->handle = gb_reply_array_deferred(k->c);
}

static void keys_key(void *ctx, gb_slice key) { gb_reply_slice(((keys_ctx *)ctx)->c, key); }

static void cmd_keys(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    keys_ctx k = {c, NULL, 0};
    gb_sink s = {.len = keys_open, .value = keys_key, .ctx = &k};
    size_t n;
    gb_keys_keys(c->db, argv[1], &s, &n);
    gb_reply_set_deferred(c, k.handle, (int64_t)n);
}

/* Parses a SCAN cursor with Redis 7.0's rules (parseScanCursorOrReply):
 * strtoul() over the whole argument, refused only when it starts with white
 * space, has trailing garbage or overflows. So "" is cursor 0 and "-1" is
 * 2^64-1, as strtoul makes them. */
bool gb_parse_scan_cursor(gb_client *c, gb_slice arg, uint64_t *out)
{
    char stackbuf[64];
    char *buf = arg.len < sizeof stackbuf ? stackbuf : gb_malloc(arg.len + 1);
    memcpy(buf, arg.ptr, arg.len);
    buf[arg.len] = '\0';
    char *end;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    bool ok = !isspace((unsigned char)buf[0]) && *end == '\0' && errno != ERANGE;
    if (buf != stackbuf)
        gb_free(buf);
    if (!ok) {
        gb_reply_error(c, "ERR invalid cursor");
        return false;
    }
    *out = v;
    return true;
}

static void cmd_scan(gb_client *c, int argc, gb_slice *argv)
{
    uint64_t cursor;
    if (!gb_parse_scan_cursor(c, argv[1], &cursor))
        return;
    gb_keys_scan_opts o = {{0}, false, 10, -1};
    for (int i = 2; i < argc; i++) {
        bool more = i + 1 < argc;
        if (gb_slice_ieq(argv[i], "count") && more) {
            if (!gb_arg_ll(c, argv[i + 1], &o.count))
                return;
            if (o.count < 1) {
                gb_reply_error(c, GB_ERR_SYNTAX);
                return;
            }
            i++;
        } else if (gb_slice_ieq(argv[i], "match") && more) {
            o.pattern = argv[++i];
            o.use_pattern = !(o.pattern.len == 1 && o.pattern.ptr[0] == '*');
        } else if (gb_slice_ieq(argv[i], "type") && more) {
            static const char *names[] = {"string", "list", "set", "zset", "hash", "stream"}; /* GB_TYPE_* order */
            gb_slice t = argv[++i];
            o.type = GB_TYPE_COUNT;
            for (size_t k = 0; k < GB_ARRAY_LEN(names); k++)
                if (gb_slice_ieq(t, names[k]))
                    o.type = (int)k;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    uint64_t next;
    keys_ctx k = {c, &next, 0};
    gb_sink s = {.len = keys_open, .value = keys_key, .ctx = &k};
    size_t n;
    gb_keys_scan(c->db, cursor, &o, &s, &next, &n);
    gb_reply_set_deferred(c, k.handle, (int64_t)n);
}

static void cmd_randomkey(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    gb_slice key;
    if (gb_keys_randomkey(c->db, &key) == GB_R_OK)
        gb_reply_slice(c, key);
    else
        gb_reply_nil(c);
}

/* ---- RENAME / MOVE / COPY ---------------------------------------------------------- */

static void rename_generic(gb_client *c, gb_slice *argv, bool nx)
{
    int64_t renamed;
    gb_result r = gb_keys_rename(c->db, argv[1], argv[2], nx, &renamed);
    if (r != GB_R_OK) {
        gb_reply_result(c, r); /* "no such key" */
        return;
    }
    if (nx)
        gb_reply_int(c, renamed);
    else
        gb_reply_ok(c);
    if ((!nx || renamed) && !gb_slice_eq(argv[1], argv[2])) {
        gb_notify_key(c, GB_NOTIFY_GENERIC, "rename_from", argv[1]);
        gb_notify_key(c, GB_NOTIFY_GENERIC, "rename_to", argv[2]);
    }
}

static void cmd_rename(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    rename_generic(c, argv, false);
}

static void cmd_renamenx(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    rename_generic(c, argv, true);
}

/* Parses a database index the way SELECT/MOVE do: Redis's
 * getIntFromObjectOrReply, so an index outside int32 gets the "value is out
 * of range, value must between ..." text. */
static bool parse_dbid(gb_client *c, gb_slice arg, int *out)
{
    int64_t v;
    if (!gb_arg_ll_within(c, arg, INT32_MIN, INT32_MAX, &v))
        return false;
    if (v < 0 || v >= c->eng->ndbs) {
        gb_reply_error(c, GB_ERR_DB_RANGE);
        return false;
    }
    *out = (int)v;
    return true;
}

/* Cluster mode has database 0 only (Redis's texts). */
#define ERR_CLUSTER_DB(what) "ERR " what " is not allowed in cluster mode"

static void cmd_move(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    if (GB_UNLIKELY(c->eng->cluster != NULL)) {
        gb_reply_error(c, ERR_CLUSTER_DB("MOVE"));
        return;
    }
    int dbid;
    if (!parse_dbid(c, argv[2], &dbid))
        return;
    gb_db *dst = &c->eng->dbs[dbid];
    if (dst == c->db) {
        gb_reply_error(c, "ERR source and destination objects are the same");
        return;
    }
    int64_t moved;
    gb_result r = gb_keys_move(c->db, argv[1], dst, &moved);
    gb_reply_int_result(c, r, moved);
    if (r == GB_R_OK && moved) {
        gb_notify_key(c, GB_NOTIFY_GENERIC, "move_from", argv[1]);
        gb_notify_keyspace_event(c->eng, GB_NOTIFY_GENERIC, "move_to", argv[1], dst->id);
    }
}

static void cmd_copy(gb_client *c, int argc, gb_slice *argv)
{
    gb_db *dst = c->db;
    bool replace = false;
    for (int j = 3; j < argc; j++) {
        if (gb_slice_ieq(argv[j], "replace")) {
            replace = true;
        } else if (gb_slice_ieq(argv[j], "db") && j + 1 < argc) {
            int64_t v;
            if (!gb_arg_ll_within(c, argv[j + 1], INT32_MIN, INT32_MAX, &v))
                return;
            if (v < 0 || v >= c->eng->ndbs) {
                gb_reply_error(c, GB_ERR_DB_RANGE);
                return;
            }
            dst = &c->eng->dbs[v];
            j++;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    if (GB_UNLIKELY(c->eng->cluster != NULL) && (c->db->id != 0 || dst->id != 0)) {
        gb_reply_error(c, "ERR Copying to another database is not allowed in cluster mode");
        return;
    }
    if (dst == c->db && gb_slice_eq(argv[1], argv[2])) {
        gb_reply_error(c, "ERR source and destination objects are the same");
        return;
    }
    int64_t copied;
    gb_result r = gb_keys_copy(c->db, argv[1], dst, argv[2], replace, &copied);
    gb_reply_int_result(c, r, copied);
    if (r == GB_R_OK && copied)
        gb_notify_keyspace_event(c->eng, GB_NOTIFY_GENERIC, "copy_to", argv[2], dst->id);
}

/* ---- expiry ------------------------------------------------------------------------ */

static void expire_generic(gb_client *c, int argc, gb_slice *argv, int64_t base, bool seconds, const char *name)
{
    unsigned flags = 0;
    for (int j = 3; j < argc; j++) {
        if (gb_slice_ieq(argv[j], "nx"))
            flags |= GB_EXPIRE_NX;
        else if (gb_slice_ieq(argv[j], "xx"))
            flags |= GB_EXPIRE_XX;
        else if (gb_slice_ieq(argv[j], "gt"))
            flags |= GB_EXPIRE_GT;
        else if (gb_slice_ieq(argv[j], "lt"))
            flags |= GB_EXPIRE_LT;
        else {
            /* Whole, as Redis's "%s" (which stops at a NUL, as %.*s does). */
            gb_reply_errorf(c, "ERR Unsupported option %.*s", (int)GB_MIN(argv[j].len, INT_MAX), argv[j].ptr);
            return;
        }
    }
    if ((flags & GB_EXPIRE_NX) && (flags & (GB_EXPIRE_XX | GB_EXPIRE_GT | GB_EXPIRE_LT))) {
        gb_reply_error(c, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return;
    }
    if ((flags & GB_EXPIRE_GT) && (flags & GB_EXPIRE_LT)) {
        gb_reply_error(c, "ERR GT and LT options at the same time are not compatible");
        return;
    }
    int64_t when;
    if (!gb_arg_ll(c, argv[2], &when))
        return;
    if (seconds) {
        if (when > INT64_MAX / 1000 || when < INT64_MIN / 1000) {
            gb_reply_errorf(c, "ERR invalid expire time in '%s' command", name);
            return;
        }
        when *= 1000;
    }
    if (when > INT64_MAX - base) {
        gb_reply_errorf(c, "ERR invalid expire time in '%s' command", name);
        return;
    }
    when += base;
    gb_expiry_change change;
    gb_result r = gb_keys_expire(c->db, argv[1], when, flags, &change);
    if (r != GB_R_OK) {
        gb_reply_result(c, r);
        return;
    }
    /* Propagated absolute (Redis 7.0): a replay later must expire the key
     * at the same moment, and a time already past is the deletion. */
    if (change == GB_EXPIRY_DELETED) {
        gb_propagate_del(c, argv[1]);
        gb_notify_key(c, GB_NOTIFY_GENERIC, "del", argv[1]);
    } else if (change == GB_EXPIRY_SET) {
        gb_propagate_pexpireat(c, argv[1], when);
        gb_notify_key(c, GB_NOTIFY_GENERIC, "expire", argv[1]);
    }
    gb_reply_int(c, change != GB_EXPIRY_NONE);
}

static void cmd_expire(gb_client *c, int argc, gb_slice *argv)
{
    expire_generic(c, argc, argv, c->eng->now_ms, true, "expire");
}
static void cmd_pexpire(gb_client *c, int argc, gb_slice *argv)
{
    expire_generic(c, argc, argv, c->eng->now_ms, false, "pexpire");
}
static void cmd_expireat(gb_client *c, int argc, gb_slice *argv) { expire_generic(c, argc, argv, 0, true, "expireat"); }
static void cmd_pexpireat(gb_client *c, int argc, gb_slice *argv)
{
    expire_generic(c, argc, argv, 0, false, "pexpireat");
}

enum ttl_kind { TTL_S, TTL_MS, AT_S, AT_MS };

static void ttl_generic(gb_client *c, gb_slice key, enum ttl_kind kind)
{
    int64_t at, left;
    if (gb_keys_ttl(c->db, key, &at, &left) != GB_R_OK) {
        gb_reply_int(c, -2);
        return;
    }
    if (at < 0) {
        gb_reply_int(c, -1);
        return;
    }
    switch (kind) {
    case TTL_S:
        gb_reply_int(c, (left + 500) / 1000);
        break;
    case TTL_MS:
        gb_reply_int(c, left);
        break;
    case AT_S: /* rounded, as Redis's ttlGenericCommand; unsigned, as its optimised sum gives for a deadline
                * near INT64_MAX (9223372036854776) without overflowing */
        gb_reply_int(c, (int64_t)(((uint64_t)at + 500) / 1000));
        break;
    case AT_MS:
        gb_reply_int(c, at);
        break;
    }
}

static void cmd_ttl(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    ttl_generic(c, argv[1], TTL_S);
}
static void cmd_pttl(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    ttl_generic(c, argv[1], TTL_MS);
}
static void cmd_expiretime(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    ttl_generic(c, argv[1], AT_S);
}
static void cmd_pexpiretime(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    ttl_generic(c, argv[1], AT_MS);
}

static void cmd_persist(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t persisted;
    gb_result r = gb_keys_persist(c->db, argv[1], &persisted);
    gb_reply_int_result(c, r, persisted);
    if (r == GB_R_OK && persisted)
        gb_notify_key(c, GB_NOTIFY_GENERIC, "persist", argv[1]);
}

/* ---- OBJECT ---------------------------------------------------------------------------- */

static void cmd_object(gb_client *c, int argc, gb_slice *argv)
{
    gb_slice sub = argv[1];
    if (gb_slice_ieq(sub, "help") && argc == 2) {
        static const char *lines[] = {
            "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "ENCODING <key>",
            "    Return the kind of internal representation used in order to store the value",
            "    associated with a <key>.",
            "FREQ <key>",
            "    Return the access frequency index of the <key>. The returned integer is",
            "    proportional to the logarithm of the recent access frequency of the key.",
            "IDLETIME <key>",
            "    Return the idle time of the <key>, that is the approximated number of",
            "    seconds elapsed since the last access to the key.",
            "REFCOUNT <key>",
            "    Return the number of references of the value associated with the specified",
            "    <key>.",
            "HELP",
            "    Prints this help.",
        };
        gb_reply_help(c, lines, GB_ARRAY_LEN(lines));
        return;
    }
    bool known = gb_slice_ieq(sub, "encoding") || gb_slice_ieq(sub, "refcount") || gb_slice_ieq(sub, "idletime") ||
                 gb_slice_ieq(sub, "freq");
    if (!known) {
        gb_reply_unknown_subcommand(c, sub, "object");
        return;
    }
    if (argc != 3) {
        char name[32];
        snprintf(name, sizeof name, "object|%.*s", (int)GB_MIN(sub.len, 16), sub.ptr);
        gb_ascii_lower(name, sizeof name, gb_slice_cstr(name));
        gb_reply_wrong_arity(c, name);
        return;
    }
    gb_object_info info;
    if (gb_keys_object(c->db, argv[2], &info) != GB_R_OK) {
        gb_reply_nil(c);
        return;
    }
    if (gb_slice_ieq(sub, "encoding"))
        gb_reply_cstr(c, info.encoding);
    else if (gb_slice_ieq(sub, "refcount"))
        gb_reply_int(c, info.refcount);
    else if (gb_slice_ieq(sub, "idletime") && gb_policy_is_lfu(c->eng))
        gb_reply_error(c, "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
                          "switching between policies at runtime LRU and LFU data will take some time to adjust.");
    else if (gb_slice_ieq(sub, "idletime"))
        gb_reply_int(c, info.idle_s);
    else if (!gb_policy_is_lfu(c->eng))
        gb_reply_error(c, "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
                          "that when switching between policies at runtime LRU and LFU data will take some time "
                          "to adjust.");
    else
        gb_reply_int(c, info.freq);
}

/* ---- databases --------------------------------------------------------------------------- */

static void cmd_select(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int id;
    int64_t v;
    if (GB_UNLIKELY(c->eng->cluster != NULL) && gb_slice2ll(argv[1], &v) && v >= INT32_MIN && v <= INT32_MAX &&
        v != 0) {
        gb_reply_error(c, ERR_CLUSTER_DB("SELECT"));
        return;
    }
    if (!parse_dbid(c, argv[1], &id))
        return;
    c->db = &c->eng->dbs[id];
    gb_reply_ok(c);
}

static void cmd_swapdb(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    if (GB_UNLIKELY(c->eng->cluster != NULL)) {
        gb_reply_error(c, ERR_CLUSTER_DB("SWAPDB"));
        return;
    }
    int64_t a, b;
    if (!gb_slice2ll(argv[1], &a) || a < INT32_MIN || a > INT32_MAX) {
        gb_reply_error(c, "ERR invalid first DB index");
        return;
    }
    if (!gb_slice2ll(argv[2], &b) || b < INT32_MIN || b > INT32_MAX) {
        gb_reply_error(c, "ERR invalid second DB index");
        return;
    }
    if (a < 0 || a >= c->eng->ndbs || b < 0 || b >= c->eng->ndbs) {
        gb_reply_error(c, GB_ERR_DB_RANGE);
        return;
    }
    gb_keys_swapdb(&c->eng->dbs[a], &c->eng->dbs[b]);
    gb_reply_ok(c);
}

static void cmd_dbsize(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    gb_reply_int(c, (int64_t)gb_db_size(c->db));
}

static bool parse_flush_mode(gb_client *c, int argc, gb_slice *argv)
{
    if (argc == 1)
        return true;
    if (argc == 2 && (gb_slice_ieq(argv[1], "sync") || gb_slice_ieq(argv[1], "async")))
        return true;
    gb_reply_error(c, GB_ERR_SYNTAX);
    return false;
}

/* ASYNC, SYNC, or neither: then lazyfree-lazy-user-flush decides. */
static bool flush_is_lazy(gb_client *c, int argc, gb_slice *argv)
{
    return argc == 2 ? gb_slice_ieq(argv[1], "async") : c->eng->cfg.lazyfree_lazy_user_flush;
}

/* FLUSHDB and FLUSHALL reach the log and replicas even when there was
 * nothing to remove, which changes no counter (Redis's
 * forceCommandPropagation). */
static void propagate_flush(gb_client *c, int argc, gb_slice *argv)
{
    if (gb_propagating(&c->eng->prop))
        gb_propagate_command(c, argc, argv);
}

static void cmd_flushdb(gb_client *c, int argc, gb_slice *argv)
{
    if (!parse_flush_mode(c, argc, argv))
        return;
    gb_keys_flushdb(c->db, flush_is_lazy(c, argc, argv));
    propagate_flush(c, argc, argv);
    gb_tracking_invalidate_flush(c->eng);
    gb_reply_ok(c);
}

static void cmd_flushall(gb_client *c, int argc, gb_slice *argv)
{
    if (!parse_flush_mode(c, argc, argv))
        return;
    bool lazy = flush_is_lazy(c, argc, argv);
    const gb_service *sv = c->eng->service;
    if (sv)
        sv->before_flushall(sv->ctx);
    for (int i = 0; i < c->eng->ndbs; i++)
        gb_keys_flushdb(&c->eng->dbs[i], lazy);
    if (sv)
        sv->after_flushall(sv->ctx);
    propagate_flush(c, argc, argv);
    gb_tracking_invalidate_flush(c->eng);
    gb_reply_ok(c);
}

GB_DEFINE_COMMANDS(keys,
    {"del", cmd_del},
    {"unlink", cmd_unlink},
    {"exists", cmd_exists},
    {"touch", cmd_touch},
    {"type", cmd_type},
    {"keys", cmd_keys},
    {"scan", cmd_scan},
    {"randomkey", cmd_randomkey},
    {"rename", cmd_rename},
    {"renamenx", cmd_renamenx},
    {"move", cmd_move},
    {"copy", cmd_copy},
    {"expire", cmd_expire},
    {"pexpire", cmd_pexpire},
    {"expireat", cmd_expireat},
    {"pexpireat", cmd_pexpireat},
    {"ttl", cmd_ttl},
    {"pttl", cmd_pttl},
    {"expiretime", cmd_expiretime},
    {"pexpiretime", cmd_pexpiretime},
    {"persist", cmd_persist},
    {"object", cmd_object, 0, "encoding freq help idletime refcount"},
    {"select", cmd_select},
    {"swapdb", cmd_swapdb},
    {"dbsize", cmd_dbsize},
    {"flushdb", cmd_flushdb},
    {"flushall", cmd_flushall});
