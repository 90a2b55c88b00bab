/* String commands: the arguments, the replies and the propagated effects
 * around engine/types/t_string.h (the work on the keys). */
#include "engine/commands/cmd_util.h"
#include "engine/commands/typed.h"
#include "engine/core/request/propagate.h"
#include "engine/core/engine.h"
#include "engine/base/mem.h"
#include "engine/base/score.h"
#include "engine/types/t_string.h"
#include "engine/base/util.h"

/* The longest string APPEND and SETRANGE may make (Redis's checkStringLength). */
static size_t max_len(gb_client *c)
{
    return gb_client_must_obey(c) ? SIZE_MAX : (size_t)c->eng->cfg.proto_max_bulk_len;
}

static void cmd_get(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_cmd_get(c, argv[1]);
}

/* SET/GETEX option bits, short names for this file. */
enum {
    O_NX = GB_SETOPT_NX,
    O_XX = GB_SETOPT_XX,
    O_GET = GB_SETOPT_GET,
    O_KEEPTTL = GB_SETOPT_KEEPTTL,
    O_PERSIST = GB_SETOPT_PERSIST,
    O_EX = GB_SETOPT_EX,
    O_PX = GB_SETOPT_PX,
    O_EXAT = GB_SETOPT_EXAT,
    O_PXAT = GB_SETOPT_PXAT,
};
#define O_ANY_EXPIRE GB_SETOPT_ANY_EXPIRE

/* Redis's parseExtendedStringArgumentsOrReply, option by option, including
 * its tolerance of a repeated EX/PX (the last wins). */
static bool parse_set_options(gb_client *c, int argc, gb_slice *argv, int first, bool is_set, unsigned *flags,
                              gb_slice *expire)
{
    for (int j = first; j < argc; j++) {
        gb_slice o = argv[j];
        bool has_next = j + 1 < argc;
        if (gb_slice_ieq(o, "nx") && !(*flags & O_XX) && is_set) {
            *flags |= O_NX;
        } else if (gb_slice_ieq(o, "xx") && !(*flags & O_NX) && is_set) {
            *flags |= O_XX;
        } else if (gb_slice_ieq(o, "get") && is_set) {
            *flags |= O_GET;
        } else if (gb_slice_ieq(o, "keepttl") && !(*flags & (O_PERSIST | O_ANY_EXPIRE)) && is_set) {
            *flags |= O_KEEPTTL;
        } else if (gb_slice_ieq(o, "persist") && !is_set && !(*flags & (O_ANY_EXPIRE | O_KEEPTTL))) {
            *flags |= O_PERSIST;
        } else if (gb_slice_ieq(o, "ex") && !(*flags & (O_KEEPTTL | O_PERSIST | O_EXAT | O_PX | O_PXAT)) && has_next) {
            *flags |= O_EX;
            *expire = argv[++j];
        } else if (gb_slice_ieq(o, "px") && !(*flags & (O_KEEPTTL | O_PERSIST | O_EX | O_EXAT | O_PXAT)) && has_next) {
            *flags |= O_PX;
            *expire = argv[++j];
        } else if (gb_slice_ieq(o, "exat") && !(*flags & (O_KEEPTTL | O_PERSIST | O_EX | O_PX | O_PXAT)) && has_next) {
            *flags |= O_EXAT;
            *expire = argv[++j];
        } else if (gb_slice_ieq(o, "pxat") && !(*flags & (O_KEEPTTL | O_PERSIST | O_EX | O_EXAT | O_PX)) && has_next) {
            *flags |= O_PXAT;
            *expire = argv[++j];
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

/* SET-family handlers: the expiry argument (if any) parsed, then gb_cmd_set. */
static void do_set(gb_client *c, gb_slice key, gb_slice val, unsigned oflags, gb_slice expire, const char *cmdname,
                   bool reply_int)
{
    int64_t v = 0;
    if ((oflags & O_ANY_EXPIRE) && !gb_slice2ll(expire, &v)) {
        gb_reply_error(c, GB_ERR_NOT_INT);
        return;
    }
    gb_cmd_set(c, key, val, oflags, v, cmdname, reply_int);
}

static void cmd_set(gb_client *c, int argc, gb_slice *argv)
{
    unsigned flags = 0;
    gb_slice expire = {0};
    if (!parse_set_options(c, argc, argv, 3, true, &flags, &expire))
        return;
    do_set(c, argv[1], argv[2], flags, expire, "set", false);
}

static void cmd_setnx(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    do_set(c, argv[1], argv[2], O_NX, (gb_slice){0}, "setnx", true);
}

static void cmd_setex(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    do_set(c, argv[1], argv[3], O_EX, argv[2], "setex", false);
}

static void cmd_psetex(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    do_set(c, argv[1], argv[3], O_PX, argv[2], "psetex", false);
}

static void cmd_getset(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    do_set(c, argv[1], argv[2], O_GET, (gb_slice){0}, "getset", false);
}

static void emit_bulk(void *ctx, gb_slice v) { gb_reply_slice(ctx, v); }
static void reply_len(void *ctx, size_t n) { gb_reply_array(ctx, (int64_t)n); }
static void reply_nil(void *ctx) { gb_reply_nil(ctx); }

static void cmd_getdel(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_sink s = {.value = emit_bulk, .ctx = c};
    gb_result r = gb_string_getdel(c->db, argv[1], &s);
    if (r == GB_R_NOTFOUND)
        gb_reply_nil(c);
    else if (r != GB_R_OK)
        gb_reply_result(c, r);
    else {
        gb_propagate_del(c, argv[1]); /* Redis propagates GETDEL as DEL */
        gb_notify_key(c, GB_NOTIFY_GENERIC, "del", argv[1]);
    }
}

static void cmd_getex(gb_client *c, int argc, gb_slice *argv)
{
    unsigned flags = 0;
    gb_slice expire = {0};
    if (!parse_set_options(c, argc, argv, 2, false, &flags, &expire))
        return;
    /* As in Redis: a missing key answers nil and a wrong type WRONGTYPE
     * before the expire value is validated ("GETEX nokey EX 0" is nil). */
    int64_t when = -1, v;
    const char *err = NULL;
    if (flags & O_ANY_EXPIRE) {
        if (!gb_slice2ll(expire, &v))
            err = GB_ERR_NOT_INT;
        else if (!gb_string_expire_at(v, flags & (O_EX | O_EXAT), flags & (O_EX | O_PX), c->eng->now_ms, &when))
            err = "ERR invalid expire time in 'getex' command";
    }
    gb_sink s = {.value = emit_bulk, .ctx = c};
    gb_expiry_change change;
    gb_result r = gb_string_getex(c->db, argv[1], err ? NULL : &when, flags & O_PERSIST, &s, &change);
    if (r == GB_R_NOTFOUND) {
        gb_reply_nil(c);
    } else if (r == GB_R_BADARG) {
        gb_reply_error(c, err);
    } else if (r != GB_R_OK) {
        gb_reply_result(c, r);
    } else if (change == GB_EXPIRY_SET) {
        gb_propagate_pexpireat(c, argv[1], when);
        gb_notify_key(c, GB_NOTIFY_GENERIC, "expire", argv[1]);
    } else if (change == GB_EXPIRY_DELETED) {
        gb_propagate_del(c, argv[1]);
        gb_notify_key(c, GB_NOTIFY_GENERIC, "del", argv[1]);
    } else if (change == GB_EXPIRY_PERSISTED) {
        gb_slice eff[2] = {gb_slice_cstr("PERSIST"), argv[1]};
        gb_propagate_command(c, 2, eff);
        gb_notify_key(c, GB_NOTIFY_GENERIC, "persist", argv[1]);
    }
}

static void cmd_mget(gb_client *c, int argc, gb_slice *argv)
{
    gb_sink s = {.len = reply_len, .value = emit_bulk, .missing = reply_nil, .ctx = c};
    gb_result r = gb_string_mget(c->db, (size_t)(argc - 1), argv + 1, &s);
    if (r != GB_R_OK)
        gb_reply_result(c, r);
}

static void mset_generic(gb_client *c, int argc, gb_slice *argv, bool nx, const char *name)
{
    if (argc % 2 == 0) {
        gb_reply_wrong_arity(c, name);
        return;
    }
    bool set;
    gb_result r = gb_string_mset(c->db, (size_t)(argc - 1) / 2, argv + 1, nx, &set);
    if (r != GB_R_OK)
        gb_reply_result(c, r);
    else if (nx)
        gb_reply_int(c, set);
    else
        gb_reply_ok(c);
}

static void cmd_mset(gb_client *c, int argc, gb_slice *argv) { mset_generic(c, argc, argv, false, "mset"); }

static void cmd_msetnx(gb_client *c, int argc, gb_slice *argv) { mset_generic(c, argc, argv, true, "msetnx"); }

static void incr_generic(gb_client *c, gb_slice key, int64_t by) { gb_cmd_incrby(c, key, by); }

static void cmd_incr(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    incr_generic(c, argv[1], 1);
}

static void cmd_decr(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    incr_generic(c, argv[1], -1);
}

static void cmd_incrby(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t by;
    if (!gb_slice2ll(argv[2], &by)) {
        gb_reply_error(c, GB_ERR_NOT_INT);
        return;
    }
    incr_generic(c, argv[1], by);
}

static void cmd_decrby(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t by;
    if (!gb_slice2ll(argv[2], &by)) {
        gb_reply_error(c, GB_ERR_NOT_INT);
        return;
    }
    if (by == INT64_MIN) {
        gb_reply_error(c, "ERR decrement would overflow");
        return;
    }
    incr_generic(c, argv[1], -by);
}

static void cmd_incrbyfloat(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    char buf[GB_LONG_DOUBLE_BUF];
    size_t n;
    gb_result r = gb_string_incrbyfloat(c->db, argv[1], argv[2], buf, &n);
    if (r != GB_R_OK) {
        gb_reply_result(c, r);
        return;
    }
    gb_reply_bulk(c, buf, n);
    /* The result, not the increment: float arithmetic need not replay
     * bit for bit elsewhere (Redis: SET key value KEEPTTL). */
    gb_slice eff[4] = {gb_slice_cstr("SET"), argv[1], gb_slice_make(buf, n), gb_slice_cstr("KEEPTTL")};
    gb_propagate_command(c, 4, eff);
    gb_notify_key(c, GB_NOTIFY_STRING, "incrbyfloat", argv[1]);
}

static void cmd_append(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    size_t n;
    gb_result r = gb_string_append(c->db, argv[1], argv[2], max_len(c), &n);
    gb_reply_int_result(c, r, (int64_t)n);
    if (r == GB_R_OK)
        gb_notify_key(c, GB_NOTIFY_STRING, "append", argv[1]);
}

static void cmd_strlen(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    size_t n;
    gb_result r = gb_string_strlen(c->db, argv[1], &n);
    gb_reply_int_result(c, r, (int64_t)n);
}

static void cmd_setrange(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t off;
    if (!gb_slice2ll(argv[2], &off)) {
        gb_reply_error(c, GB_ERR_NOT_INT);
        return;
    }
    size_t n;
    gb_result r = gb_string_setrange(c->db, argv[1], off, argv[3], max_len(c), &n);
    if (r == GB_R_OK) {
        gb_reply_int(c, (int64_t)n);
        if (argv[3].len > 0) /* an empty value changes nothing (Redis: no event) */
            gb_notify_key(c, GB_NOTIFY_STRING, "setrange", argv[1]);
    } else if (r == GB_R_RANGE)
        gb_reply_error(c, "ERR offset is out of range");
    else
        gb_reply_result(c, r);
}

static void cmd_getrange(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    int64_t start, end;
    if (!gb_slice2ll(argv[2], &start) || !gb_slice2ll(argv[3], &end)) {
        gb_reply_error(c, GB_ERR_NOT_INT);
        return;
    }
    gb_slice v;
    char buf[GB_INT_BUF];
    gb_result r = gb_string_getrange(c->db, argv[1], start, end, &v, buf);
    if (r == GB_R_OK || r == GB_R_NOTFOUND)
        gb_reply_bulk(c, v.ptr, v.len);
    else
        gb_reply_result(c, r);
}

GB_DEFINE_COMMANDS(string,
    {"get", cmd_get},
    {"set", cmd_set},
    {"setnx", cmd_setnx},
    {"setex", cmd_setex},
    {"psetex", cmd_psetex},
    {"getset", cmd_getset},
    {"getdel", cmd_getdel},
    {"getex", cmd_getex},
    {"mget", cmd_mget},
    {"mset", cmd_mset},
    {"msetnx", cmd_msetnx},
    {"incr", cmd_incr},
    {"decr", cmd_decr},
    {"incrby", cmd_incrby},
    {"decrby", cmd_decrby},
    {"incrbyfloat", cmd_incrbyfloat},
    {"append", cmd_append},
    {"strlen", cmd_strlen},
    {"setrange", cmd_setrange},
    {"getrange", cmd_getrange},
    {"substr", cmd_getrange});
