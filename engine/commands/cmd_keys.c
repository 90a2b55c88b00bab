/* Generic keyspace commands: DEL, EXISTS, TYPE, KEYS, SCAN, RENAME, COPY,
 * MOVE, the EXPIRE family, OBJECT, and the database-level SELECT, SWAPDB,
 * DBSIZE, FLUSHDB, FLUSHALL. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "engine/core/blocking.h"
#include "engine/commands/cmd_util.h"
#include "engine/commands/typed.h"
#include "engine/core/engine.h"
#include "engine/base/mem.h"
#include "engine/core/multi.h"
#include "engine/base/util.h"

/* DEL (lazy as lazyfree-lazy-user-del says) and UNLINK (always lazy). */
static void del_generic(gb_client *c, size_t nkeys, const gb_slice *keys, bool lazy)
{
    int64_t n = 0;
    for (size_t i = 0; i < nkeys; i++) {
        if (gb_db_lookup_write(c->db, keys[i]) && gb_db_delete_lazy(c->db, keys[i], lazy)) {
            gb_engine_key_modified(c->db, keys[i]);
            n++;
        }
    }
    gb_reply_int(c, n);
}

void gb_cmd_del(gb_client *c, size_t nkeys, const gb_slice *keys)
{
    del_generic(c, nkeys, keys, c->eng->cfg.lazyfree_lazy_user_del);
}

static void cmd_del(gb_client *c, int argc, gb_slice *argv) { gb_cmd_del(c, (size_t)argc - 1, argv + 1); }
static void cmd_unlink(gb_client *c, int argc, gb_slice *argv) { del_generic(c, (size_t)argc - 1, argv + 1, true); }

static void cmd_exists(gb_client *c, int argc, gb_slice *argv)
{
    int64_t n = 0;
    for (int i = 1; i < argc; i++)
        if (gb_db_lookup_read(c->db, argv[i]))
            n++;
    gb_reply_int(c, n);
}

static void cmd_touch(gb_client *c, int argc, gb_slice *argv)
{
    int64_t n = 0;
    for (int i = 1; i < argc; i++)
        if (gb_db_lookup_read(c->db, argv[i]))
            n++;
    gb_reply_int(c, n);
}

static void cmd_type(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_kv *kv = gb_db_lookup_quiet(c->db, argv[1]);
    gb_reply_status(c, kv ? gb_type_name((enum gb_type)kv->type) : "none");
}

/* ---- KEYS / SCAN ------------------------------------------------------------ */

static bool key_live(gb_client *c, gb_kv *kv)
{
    return !gb_kv_volatile(kv) || gb_kv_expire(kv) > c->eng->now_ms;
}

static void cmd_keys(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_slice pat = argv[1];
    bool all = pat.len == 1 && pat.ptr[0] == '*';
    size_t h = gb_reply_array_deferred(c);
    int64_t n = 0;
    gb_htable_iter it;
    gb_htable_iter_init(&it, &c->db->keys);
    for (gb_hnode *node; (node = gb_htable_iter_next(&it));) {
        gb_kv *kv = (gb_kv *)node;
        gb_slice k = gb_kv_key(kv);
        if (!key_live(c, kv))
            continue;
        if (all || gb_glob_match(pat.ptr, pat.len, k.ptr, k.len, false)) {
            gb_reply_slice(c, k);
            n++;
        }
    }
    gb_htable_iter_done(&it);
    gb_reply_set_deferred(c, h, n);
}

typedef struct scan_state {
    gb_client *c;
    gb_slice *keys;
    size_t n, cap;
} scan_state;

static void scan_collect(gb_hnode *node, void *ctx)
{
    scan_state *st = ctx;
    gb_kv *kv = (gb_kv *)node;
    if (st->n == st->cap) {
        st->cap = st->cap ? st->cap * 2 : 16;
        st->keys = gb_realloc(st->keys, st->cap * sizeof *st->keys);
    }
    /* Collected by reference: nothing modifies the table until the reply is
     * written (expired keys are filtered, not deleted, during the scan). */
    st->keys[st->n++] = gb_kv_key(kv);
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
    int64_t count = 10;
    gb_slice pat = {0};
    bool use_pat = false;
    const char *type = NULL;
    for (int i = 2; i < argc; i++) {
        bool more = i + 1 < argc;
        if (gb_slice_ieq(argv[i], "count") && more) {
            if (!gb_arg_ll(c, argv[i + 1], &count))
                return;
            if (count < 1) {
                gb_reply_error(c, GB_ERR_SYNTAX);
                return;
            }
            i++;
        } else if (gb_slice_ieq(argv[i], "match") && more) {
            pat = argv[++i];
            use_pat = !(pat.len == 1 && pat.ptr[0] == '*');
        } else if (gb_slice_ieq(argv[i], "type") && more) {
            static const char *names[] = {"string", "list", "set", "zset", "hash", "stream"};
            gb_slice t = argv[++i];
            type = "?";
            for (size_t k = 0; k < GB_ARRAY_LEN(names); k++)
                if (gb_slice_ieq(t, names[k]))
                    type = names[k];
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    scan_state st = {c, NULL, 0, 0};
    /* Visit buckets until `count` keys or 10x as many empty steps (Redis). */
    int64_t budget = count * 10;
    do {
        cursor = gb_htable_scan(&c->db->keys, cursor, scan_collect, &st);
    } while (cursor && budget-- > 0 && (int64_t)st.n < count);

    char cbuf[24];
    gb_reply_array(c, 2);
    gb_reply_bulk(c, cbuf, gb_ull2str(cbuf, cursor));
    size_t h = gb_reply_array_deferred(c);
    int64_t n = 0;
    for (size_t i = 0; i < st.n; i++) {
        gb_slice k = st.keys[i];
        gb_kv *kv = (gb_kv *)gb_htable_find(&c->db->keys, &k, gb_hash_slice(k));
        if (!kv || !key_live(c, kv))
            continue;
        if (use_pat && !gb_glob_match(pat.ptr, pat.len, k.ptr, k.len, false))
            continue;
        if (type && strcmp(type, gb_type_name((enum gb_type)kv->type)) != 0)
            continue;
        gb_reply_slice(c, k);
        n++;
    }
    gb_reply_set_deferred(c, h, n);
    gb_free(st.keys);
}

static void cmd_randomkey(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    gb_kv *kv = gb_db_random(c->db);
    if (kv)
        gb_reply_slice(c, gb_kv_key(kv));
    else
        gb_reply_nil(c);
}

/* ---- RENAME / MOVE / COPY ---------------------------------------------------------- */

static void rename_generic(gb_client *c, gb_slice *argv, bool nx)
{
    gb_kv *src = gb_db_lookup_write(c->db, argv[1]);
    if (!src) {
        gb_reply_error(c, GB_ERR_NO_KEY);
        return;
    }
    if (gb_slice_eq(argv[1], argv[2])) {
        if (nx)
            gb_reply_int(c, 0);
        else
            gb_reply_ok(c);
        return;
    }
    if (gb_db_lookup_write(c->db, argv[2]) && nx) {
        gb_reply_int(c, 0);
        return;
    }
    int64_t expire = gb_db_expire_of(src);
    gb_db_insert_value(c->db, argv[2], src, false, expire);
    /* The value moved to the new record: detach it so deleting the old
     * record frees only the key. Re-find it: insertion may have rehashed. */
    src = gb_db_lookup_quiet(c->db, argv[1]);
    gb_db_steal_value(src);
    gb_db_delete(c->db, argv[1]);
    gb_engine_key_modified(c->db, argv[1]);
    gb_engine_key_modified(c->db, argv[2]);
    if (nx)
        gb_reply_int(c, 1);
    else
        gb_reply_ok(c);
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

/* Parses a database index the way SELECT/MOVE do. */
static bool parse_dbid(gb_client *c, gb_slice arg, const char *not_int_err, int *out)
{
    int64_t v;
    if (!gb_slice2ll(arg, &v) || v < INT32_MIN || v > INT32_MAX) {
        gb_reply_error(c, not_int_err ? not_int_err : GB_ERR_NOT_INT);
        return false;
    }
    if (v < 0 || v >= c->eng->ndbs) {
        gb_reply_error(c, GB_ERR_DB_RANGE);
        return false;
    }
    *out = (int)v;
    return true;
}

static void cmd_move(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int dbid;
    if (!parse_dbid(c, argv[2], NULL, &dbid))
        return;
    gb_db *dst = &c->eng->dbs[dbid];
    if (dst == c->db) {
        gb_reply_error(c, "ERR source and destination objects are the same");
        return;
    }
    gb_kv *src = gb_db_lookup_write(c->db, argv[1]);
    if (!src || gb_db_lookup_write(dst, argv[1])) {
        gb_reply_int(c, 0);
        return;
    }
    int64_t expire = gb_db_expire_of(src);
    gb_db_insert_value(dst, argv[1], src, false, expire);
    gb_db_steal_value(src);
    gb_db_delete(c->db, argv[1]);
    gb_engine_key_modified(c->db, argv[1]);
    gb_engine_key_modified(dst, argv[1]);
    gb_reply_int(c, 1);
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
            if (!gb_arg_ll(c, argv[j + 1], &v))
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
    if (dst == c->db && gb_slice_eq(argv[1], argv[2])) {
        gb_reply_error(c, "ERR source and destination objects are the same");
        return;
    }
    gb_kv *src = gb_db_lookup_read(c->db, argv[1]);
    if (!src) {
        gb_reply_int(c, 0);
        return;
    }
    if (gb_db_lookup_write(dst, argv[2])) {
        if (!replace) {
            gb_reply_int(c, 0);
            return;
        }
        gb_db_delete(dst, argv[2]);
    }
    int64_t expire = gb_db_expire_of(src);
    gb_db_insert_value(dst, argv[2], src, true, expire);
    gb_engine_key_modified(dst, argv[2]);
    gb_reply_int(c, 1);
}

/* ---- expiry ------------------------------------------------------------------------ */

enum { EX_NX = 1, EX_XX = 2, EX_GT = 4, EX_LT = 8 };

static void expire_generic(gb_client *c, int argc, gb_slice *argv, int64_t base, bool seconds, const char *name)
{
    int flags = 0;
    for (int j = 3; j < argc; j++) {
        if (gb_slice_ieq(argv[j], "nx"))
            flags |= EX_NX;
        else if (gb_slice_ieq(argv[j], "xx"))
            flags |= EX_XX;
        else if (gb_slice_ieq(argv[j], "gt"))
            flags |= EX_GT;
        else if (gb_slice_ieq(argv[j], "lt"))
            flags |= EX_LT;
        else {
            gb_reply_errorf(c, "ERR Unsupported option %.*s", (int)GB_MIN(argv[j].len, 128), argv[j].ptr);
            return;
        }
    }
    if ((flags & EX_NX) && (flags & (EX_XX | EX_GT | EX_LT))) {
        gb_reply_error(c, "ERR NX and XX, GT or LT options at the same time are not compatible");
        return;
    }
    if ((flags & EX_GT) && (flags & EX_LT)) {
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
    gb_kv *kv = gb_db_lookup_write(c->db, argv[1]);
    if (!kv) {
        gb_reply_int(c, 0);
        return;
    }
    int64_t cur = gb_db_expire_of(kv);
    if (((flags & EX_NX) && cur != -1) || ((flags & EX_XX) && cur == -1) ||
        ((flags & EX_GT) && (when <= cur || cur == -1)) || ((flags & EX_LT) && cur != -1 && when >= cur)) {
        gb_reply_int(c, 0);
        return;
    }
    /* Propagated absolute (Redis 7.0): a replay later must expire the key
     * at the same moment, and a time already past is the deletion. */
    if (when <= c->eng->now_ms) {
        gb_db_delete(c->db, argv[1]);
        gb_propagate_del(c, argv[1]);
    } else {
        gb_db_set_expire(c->db, kv, when);
        gb_propagate_pexpireat(c, argv[1], when);
    }
    gb_engine_key_modified(c->db, argv[1]);
    gb_reply_int(c, 1);
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
    gb_kv *kv = gb_db_lookup_read(c->db, key);
    if (!kv) {
        gb_reply_int(c, -2);
        return;
    }
    int64_t e = gb_db_expire_of(kv);
    if (e < 0) {
        gb_reply_int(c, -1);
        return;
    }
    int64_t ttl = e - c->eng->now_ms;
    if (ttl < 0)
        ttl = 0;
    switch (kind) {
    case TTL_S:
        gb_reply_int(c, (ttl + 500) / 1000);
        break;
    case TTL_MS:
        gb_reply_int(c, ttl);
        break;
    case AT_S:
        gb_reply_int(c, e / 1000);
        break;
    case AT_MS:
        gb_reply_int(c, e);
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
    gb_kv *kv = gb_db_lookup_write(c->db, argv[1]);
    if (!kv || !gb_kv_volatile(kv)) {
        gb_reply_int(c, 0);
        return;
    }
    gb_db_persist(c->db, kv);
    gb_engine_key_modified(c->db, argv[1]);
    gb_reply_int(c, 1);
}

/* ---- OBJECT ---------------------------------------------------------------------------- */

static const char *encoding_name(const gb_kv *kv)
{
    switch (kv->enc) {
    case GB_ENC_INT:
        return "int";
    case GB_ENC_EMBSTR:
        return "embstr";
    case GB_ENC_RAW:
        return "raw";
    default: {
        const gb_type_ops *ops = gb_type_get((enum gb_type)kv->type);
        return ops && ops->encoding ? ops->encoding(kv->v.ptr) : "unknown";
    }
    }
}

static void cmd_object(gb_client *c, int argc, gb_slice *argv)
{
    if (!gb_subcommand_check(c, "object", argc, argv))
        return;
    gb_slice sub = argv[1];
    if (gb_slice_ieq(sub, "help") && argc == 2) {
        static const char *lines[] = {
            "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "ENCODING <key>",
            "    Return the kind of internal representation used in order to store the value",
            "    associated with a <key>.",
            "FREQ <key>",
            "    Return the logarithmic access frequency counter of a <key>.",
            "IDLETIME <key>",
            "    Return the idle time of a <key>, that is the approximated number of",
            "    seconds elapsed since the last access to the key.",
            "REFCOUNT <key>",
            "    Return the number of references of the value associated with the specified",
            "    <key>.",
            "HELP",
            "    Print this help.",
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
    gb_kv *kv = gb_db_lookup_quiet(c->db, argv[2]);
    if (!kv) {
        gb_reply_nil(c);
        return;
    }
    if (gb_slice_ieq(sub, "encoding"))
        gb_reply_cstr(c, encoding_name(kv));
    else if (gb_slice_ieq(sub, "refcount"))
        gb_reply_int(c, 1);
    else if (gb_slice_ieq(sub, "idletime"))
        gb_reply_int(c, (int64_t)(gb_engine_uptime_ms(c->eng) / 1000u) - (int64_t)kv->atime);
    else
        gb_reply_int(c, kv->lfu);
}

/* ---- databases --------------------------------------------------------------------------- */

static void cmd_select(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int id;
    if (!parse_dbid(c, argv[1], NULL, &id))
        return;
    c->db = &c->eng->dbs[id];
    gb_reply_ok(c);
}

static void cmd_swapdb(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
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
    gb_db *da = &c->eng->dbs[a], *db = &c->eng->dbs[b];
    if (da != db) {
        gb_multi_touch_swap(da, db);
        gb_multi_touch_swap(db, da);
        gb_db_swap_data(da, db);
        c->eng->stats.dirty++;
        /* Waiters on either database may now find their key. */
        gb_blocking_signal_db(da);
        gb_blocking_signal_db(db);
    }
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

void gb_flush_db(gb_engine *eng, gb_db *db, bool lazy)
{
    gb_multi_touch_swap(db, NULL);
    if (lazy)
        gb_db_flush_lazy(db);
    else
        gb_db_flush(db);
    eng->stats.dirty++;
    /* XREADGROUP waiters on streams that are gone fail (Redis 7.0). */
    gb_blocking_signal_db(db);
}

/* ASYNC, SYNC, or neither: then lazyfree-lazy-user-flush decides. */
static bool flush_is_lazy(gb_client *c, int argc, gb_slice *argv)
{
    return argc == 2 ? gb_slice_ieq(argv[1], "async") : c->eng->cfg.lazyfree_lazy_user_flush;
}

static void cmd_flushdb(gb_client *c, int argc, gb_slice *argv)
{
    if (!parse_flush_mode(c, argc, argv))
        return;
    gb_flush_db(c->eng, c->db, flush_is_lazy(c, argc, argv));
    gb_reply_ok(c);
}

static void cmd_flushall(gb_client *c, int argc, gb_slice *argv)
{
    if (!parse_flush_mode(c, argc, argv))
        return;
    bool lazy = flush_is_lazy(c, argc, argv);
    for (int i = 0; i < c->eng->ndbs; i++)
        gb_flush_db(c->eng, &c->eng->dbs[i], lazy);
    gb_reply_ok(c);
}

#define RF (GB_CMD_READONLY | GB_CMD_FAST)
#define R GB_CMD_READONLY
#define WF (GB_CMD_WRITE | GB_CMD_FAST)

GB_DEFINE_COMMANDS(keys,
    {"del", -2, GB_CMD_WRITE, 1, -1, 1, cmd_del, "generic", "Deletes one or more keys.", "1.0.0"},
    {"unlink", -2, WF, 1, -1, 1, cmd_unlink, "generic", "Asynchronously deletes one or more keys.", "4.0.0"},
    {"exists", -2, RF, 1, -1, 1, cmd_exists, "generic", "Determines whether one or more keys exist.", "1.0.0"},
    {"touch", -2, RF, 1, -1, 1, cmd_touch, "generic",
     "Returns the number of existing keys out of those specified after updating the time they were last accessed.",
     "3.2.1"},
    {"type", 2, RF, 1, 1, 1, cmd_type, "generic", "Determines the type of value stored at a key.", "1.0.0"},
    {"keys", 2, R, 0, 0, 0, cmd_keys, "generic", "Returns all key names that match a pattern.", "1.0.0"},
    {"scan", -2, R, 0, 0, 0, cmd_scan, "generic", "Iterates over the key names in the database.", "2.8.0"},
    {"randomkey", 1, R, 0, 0, 0, cmd_randomkey, "generic", "Returns a random key name from the database.", "1.0.0"},
    {"rename", 3, GB_CMD_WRITE, 1, 2, 1, cmd_rename, "generic", "Renames a key and overwrites the destination.",
     "1.0.0"},
    {"renamenx", 3, WF, 1, 2, 1, cmd_renamenx, "generic", "Renames a key only when the target key name doesn't exist.",
     "1.0.0"},
    {"move", 3, WF, 1, 1, 1, cmd_move, "generic", "Moves a key to another database.", "1.0.0"},
    {"copy", -3, GB_CMD_WRITE | GB_CMD_DENYOOM, 1, 2, 1, cmd_copy, "generic", "Copies the value of a key to a new key.",
     "6.2.0"},
    {"expire", -3, WF, 1, 1, 1, cmd_expire, "generic", "Sets the expiration time of a key in seconds.", "1.0.0"},
    {"pexpire", -3, WF, 1, 1, 1, cmd_pexpire, "generic", "Sets the expiration time of a key in milliseconds.",
     "2.6.0"},
    {"expireat", -3, WF, 1, 1, 1, cmd_expireat, "generic", "Sets the expiration time of a key to a Unix timestamp.",
     "1.2.0"},
    {"pexpireat", -3, WF, 1, 1, 1, cmd_pexpireat, "generic",
     "Sets the expiration time of a key to a Unix milliseconds timestamp.", "2.6.0"},
    {"ttl", 2, RF, 1, 1, 1, cmd_ttl, "generic", "Returns the expiration time in seconds of a key.", "1.0.0"},
    {"pttl", 2, RF, 1, 1, 1, cmd_pttl, "generic", "Returns the expiration time in milliseconds of a key.", "2.6.0"},
    {"expiretime", 2, RF, 1, 1, 1, cmd_expiretime, "generic", "Returns the expiration time of a key as a Unix timestamp.",
     "7.0.0"},
    {"pexpiretime", 2, RF, 1, 1, 1, cmd_pexpiretime, "generic",
     "Returns the expiration time of a key as a Unix milliseconds timestamp.", "7.0.0"},
    {"persist", 2, WF, 1, 1, 1, cmd_persist, "generic", "Removes the expiration time of a key.", "2.2.0"},
    {"object", -2, R, 2, 2, 1, cmd_object, "generic", "A container for object introspection commands.", "2.2.3"},
    {"select", 2, GB_CMD_LOADING | GB_CMD_STALE | GB_CMD_FAST, 0, 0, 0, cmd_select, "connection",
     "Changes the selected database.", "1.0.0"},
    {"swapdb", 3, WF, 0, 0, 0, cmd_swapdb, "server", "Swaps two Redis databases.", "4.0.0"},
    {"dbsize", 1, RF, 0, 0, 0, cmd_dbsize, "server", "Returns the number of keys in the database.", "1.0.0"},
    {"flushdb", -1, GB_CMD_WRITE, 0, 0, 0, cmd_flushdb, "server", "Removes all keys from the current database.",
     "1.0.0"},
    {"flushall", -1, GB_CMD_WRITE, 0, 0, 0, cmd_flushall, "server", "Removes all keys from all databases.", "1.0.0"});
