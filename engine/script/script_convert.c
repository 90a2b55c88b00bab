#include "engine/script/script_convert.h"

#include <lauxlib.h>
#include <stdio.h>

#include "engine/base/mem.h"
#include "engine/base/score.h"
#include "engine/core/request/reply.h"
#include "engine/script/script_vm.h"

/* ---- reply -> Lua ---------------------------------------------------------------------- */

static void ensure_stack(gb_lua_sink *s) { luaL_checkstack(s->L, 4, "reply too deep"); }

/* The table on top holds a map's or set's n elements as an array: under
 * RESP3 it becomes {map={k=v, ...}} / {set={m=true, ...}} (Redis's
 * redisProtocolToLuaType_Map/_Set). A pair whose key is nil (a null) is
 * left out: Lua cannot hold it, and raising here would unwind the
 * engine's command. A nil value leaves its key out, as lua_settable does. */
static void finish_frame(gb_lua_sink *s, int kind, int n)
{
    if (kind == GB_LUA_SINK_ARRAY || s->resp != 3)
        return;
    lua_State *L = s->L;
    luaL_checkstack(L, 6, "reply too deep");
    lua_createtable(L, 0, 1);
    lua_createtable(L, 0, kind == GB_LUA_SINK_MAP ? n / 2 : n);
    for (int i = 1; i + (kind == GB_LUA_SINK_MAP) <= n; i += kind == GB_LUA_SINK_MAP ? 2 : 1) {
        lua_rawgeti(L, -3, i);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            continue;
        }
        if (kind == GB_LUA_SINK_MAP)
            lua_rawgeti(L, -4, i + 1);
        else
            lua_pushboolean(L, 1);
        lua_rawset(L, -3);
    }
    lua_setfield(L, -2, kind == GB_LUA_SINK_MAP ? "map" : "set");
    lua_remove(L, -2); /* the array of elements */
}

/* A value is complete on top of the stack: it becomes the next element of
 * the innermost open table, closing every table that this fills. */
static void value_done(gb_lua_sink *s)
{
    while (s->depth > 0) {
        gb_lua_sink_frame *f = &s->frames[s->depth - 1];
        lua_rawseti(s->L, -2, ++f->n);
        if (f->remaining > 0 && --f->remaining == 0) {
            s->depth--;
            finish_frame(s, f->kind, f->n);
            continue;
        }
        return;
    }
    s->values++;
}

static void k_status(void *ctx, const char *str, size_t len)
{
    gb_lua_sink *s = ctx;
    ensure_stack(s);
    lua_createtable(s->L, 0, 1);
    lua_pushlstring(s->L, str, len);
    lua_setfield(s->L, -2, "ok");
    value_done(s);
}

static void k_error(void *ctx, const char *str, size_t len)
{
    gb_lua_sink *s = ctx;
    ensure_stack(s);
    /* The engine's error texts carry their code ("ERR ...", "WRONGTYPE
     * ..."): Redis's redisProtocolToLuaType_Error sees "-CODE msg". */
    char *dashed = gb_malloc(len + 1);
    dashed[0] = '-';
    memcpy(dashed + 1, str, len);
    gb_lua_push_error(s->L, dashed, len + 1);
    gb_free(dashed);
    lua_pushboolean(s->L, 1);
    lua_setfield(s->L, -2, "ignore_error_stats_update");
    if (s->depth == 0)
        s->error = true;
    value_done(s);
}

static void k_integer(void *ctx, int64_t v)
{
    gb_lua_sink *s = ctx;
    ensure_stack(s);
    lua_pushnumber(s->L, (lua_Number)v);
    value_done(s);
}

static void k_bulk(void *ctx, const char *str, size_t len)
{
    gb_lua_sink *s = ctx;
    ensure_stack(s);
    lua_pushlstring(s->L, str, len);
    value_done(s);
}

/* The value on top becomes {field=value}, Redis's tables for the RESP3
 * types Lua has no type for; then it is done. */
static void done_as_field(gb_lua_sink *s, const char *field)
{
    lua_createtable(s->L, 0, 1);
    lua_insert(s->L, -2);
    lua_setfield(s->L, -2, field);
    value_done(s);
}

static void k_dbl(void *ctx, double v)
{
    gb_lua_sink *s = ctx;
    if (s->resp == 3) {
        ensure_stack(s);
        lua_pushnumber(s->L, v);
        done_as_field(s, "double");
        return;
    }
    char buf[GB_SCORE_BUF];
    k_bulk(ctx, buf, gb_score_format(v, buf));
}

/* RESP3: {double=v}; RESP2: the caller's digits as a string. */
static void k_dbl_text(void *ctx, double v, const char *str, size_t len)
{
    gb_lua_sink *s = ctx;
    if (s->resp != 3) {
        k_bulk(ctx, str, len);
        return;
    }
    k_dbl(ctx, v);
}

static void k_nil(void *ctx)
{
    gb_lua_sink *s = ctx;
    ensure_stack(s);
    if (s->resp == 3)
        lua_pushnil(s->L);
    else
        lua_pushboolean(s->L, 0);
    value_done(s);
}

/* Opens a table for n elements (-1: deferred) that becomes kind. */
static void open_table(gb_lua_sink *s, int64_t n, int kind)
{
    ensure_stack(s);
    lua_createtable(s->L, n > 0 && n < (1 << 20) ? (int)n : 0, 0);
    if (n == 0 || s->depth == GB_LUA_SINK_DEPTH) {
        finish_frame(s, kind, 0);
        value_done(s);
        return;
    }
    s->frames[s->depth].remaining = n;
    s->frames[s->depth].n = 0;
    s->frames[s->depth].kind = kind;
    s->depth++;
}

static void k_array(void *ctx, int64_t n)
{
    if (n < 0) {
        k_nil(ctx);
        return;
    }
    open_table(ctx, n, GB_LUA_SINK_ARRAY);
}

static void k_map(void *ctx, int64_t npairs) { open_table(ctx, npairs > 0 ? 2 * npairs : 0, GB_LUA_SINK_MAP); }

static void k_set(void *ctx, int64_t n) { open_table(ctx, n > 0 ? n : 0, GB_LUA_SINK_SET); }

static size_t k_array_deferred(void *ctx)
{
    gb_lua_sink *s = ctx;
    open_table(s, -1, GB_LUA_SINK_ARRAY);
    return (size_t)s->depth;
}

/* Closes the deferred table of handle as kind. */
static void close_deferred(gb_lua_sink *s, size_t handle, int kind)
{
    if (handle == 0 || (int)handle != s->depth)
        return; /* not the innermost open table: nothing sane to close */
    s->depth--;
    finish_frame(s, kind, s->frames[s->depth].n);
    value_done(s);
}

static void k_set_deferred(void *ctx, size_t handle, int64_t n)
{
    (void)n; /* the table already holds the elements */
    close_deferred(ctx, handle, GB_LUA_SINK_ARRAY);
}

static void k_set_deferred_map(void *ctx, size_t handle, int64_t npairs)
{
    (void)npairs;
    close_deferred(ctx, handle, GB_LUA_SINK_MAP);
}

static void k_set_deferred_set(void *ctx, size_t handle, int64_t n)
{
    (void)n;
    close_deferred(ctx, handle, GB_LUA_SINK_SET);
}

/* RESP3: {verbatim_string={format=<fmt>, string=s}}; RESP2: the string. */
static void k_verbatim(void *ctx, const char format[3], const char *str, size_t len)
{
    gb_lua_sink *s = ctx;
    if (s->resp != 3) {
        k_bulk(ctx, str, len);
        return;
    }
    ensure_stack(s);
    lua_createtable(s->L, 0, 2);
    lua_pushlstring(s->L, format, 3);
    lua_setfield(s->L, -2, "format");
    lua_pushlstring(s->L, str, len);
    lua_setfield(s->L, -2, "string");
    done_as_field(s, "verbatim_string");
}

/* RESP3: a Lua boolean; RESP2: the integer 1 or 0 a RESP2 caller reads. */
static void k_boolean(void *ctx, bool v)
{
    gb_lua_sink *s = ctx;
    if (s->resp != 3) {
        k_integer(ctx, v ? 1 : 0);
        return;
    }
    ensure_stack(s);
    lua_pushboolean(s->L, v);
    value_done(s);
}

/* RESP3: {big_number=digits}; RESP2: the digits as a string. */
static void k_big_number(void *ctx, const char *str, size_t len)
{
    gb_lua_sink *s = ctx;
    if (s->resp != 3) {
        k_bulk(ctx, str, len);
        return;
    }
    ensure_stack(s);
    lua_pushlstring(s->L, str, len);
    done_as_field(s, "big_number");
}

const gb_reply_ops gb_lua_sink_ops = {
    .status = k_status,
    .error = k_error,
    .integer = k_integer,
    .dbl = k_dbl,
    .bulk = k_bulk,
    .nil = k_nil,
    .array = k_array,
    .array_deferred = k_array_deferred,
    .set_deferred = k_set_deferred,
    .map = k_map,
    .set = k_set,
    .set_deferred_map = k_set_deferred_map,
    .set_deferred_set = k_set_deferred_set,
    .verbatim = k_verbatim,
    .boolean = k_boolean,
    .big_number = k_big_number,
    .dbl_text = k_dbl_text,
};

void gb_lua_sink_begin(gb_lua_sink *s, lua_State *L, int resp)
{
    s->L = L;
    s->resp = resp;
    s->depth = 0;
    s->values = 0;
    s->error = false;
}

/* ---- Lua -> reply ------------------------------------------------------------------------ */

/* Pushes t[field] (raw) and returns its type. */
static int raw_field(lua_State *L, const char *field)
{
    lua_pushstring(L, field);
    lua_rawget(L, -2);
    return lua_type(L, -1);
}

/* The string on top with CR and LF turned into spaces (Redis's
 * sdsmapchars), for a one-line reply; free with gb_free. */
static char *one_line_copy(lua_State *L, size_t *len)
{
    const char *s = lua_tolstring(L, -1, len);
    char *copy = gb_memdup(s, *len);
    for (size_t i = 0; i < *len; i++)
        if (copy[i] == '\r' || copy[i] == '\n')
            copy[i] = ' ';
    return copy;
}

static void reply_status_text(gb_client *c, lua_State *L)
{
    size_t len;
    char *copy = one_line_copy(L, &len);
    gb_reply_status(c, copy);
    gb_free(copy);
}

/* One Lua value's conversion into a reply.
 *
 * A table may appear in its own reply many times: {x, x} sends x twice,
 * and a table holding itself n times sends n^depth elements down to
 * Lua's stack limit (Redis 7.0 does the same and runs out of memory).
 * So a reply may hold at most max(GB_LUA_REPLY_FLOOR, the script's
 * Lua heap in bytes / 2) elements. A reply with no repeated table never
 * reaches that: each of its elements is a table slot of 16 bytes or more
 * in that heap.
 *
 * The budget is spent element by element, and where it runs out the next
 * element is the error below; from there on nothing more is walked. An
 * array near the top has a deferred length (the writer moves its
 * elements once to put the header in front, cheaper than counting them
 * first): it ends with what it sent. Deeper containers, and every map and
 * set, are counted first and take their budget at once, so that no
 * header moves a deep reply again and again (size x depth bytes): one
 * that finds the budget short sends what fits and then the error, and the
 * elements they had announced past the error go out as nulls. The reply
 * stays well formed, and at most budget + depth elements. */
#define GB_LUA_REPLY_FLOOR (1 << 20)
#define GB_LUA_REPLY_HEAP_SHARE 2
/* Arrays at depths 0 .. this - 1 (the top is 0) have deferred lengths:
 * each byte of a reply moves at most this many times. */
#define GB_LUA_REPLY_DEFERRED_DEPTH 8
#define GB_LUA_REPLY_TOO_LARGE                                                                        \
    "ERR script reply too large: it repeats its tables past half the script's memory in elements"

typedef struct reply_walk {
    gb_client *c;
    lua_State *L;
    int resp;
    int64_t left; /* elements the reply may still hold */
    int depth;    /* containers open around the value being sent */
    bool stopped; /* the error is sent: announced elements go out as nulls */
} reply_walk;

static void reply_value(reply_walk *w);

/* One element from the budget, for an array that sends its length last;
 * false when none is left. */
static bool element_fits(reply_walk *w)
{
    if (w->left == 0)
        return false;
    w->left--;
    return true;
}

/* How many of a counted container's n elements (2 per pair in a map) go
 * out before the error; n when all fit. */
static int64_t take_budget(reply_walk *w, int64_t n)
{
    int64_t fit = n <= w->left ? n : w->left;
    w->left -= fit;
    return fit;
}

/* The element that found the budget spent: the error, or a null where an
 * element before it already sent the error. */
static void reply_stop(reply_walk *w)
{
    if (w->stopped) {
        gb_reply_nil(w->c);
        return;
    }
    w->stopped = true;
    gb_reply_error(w->c, GB_LUA_REPLY_TOO_LARGE);
}

/* The table on top's entries: pairs (with_values) or keys. */
static int64_t count_entries(lua_State *L)
{
    int64_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        n++;
    }
    return n;
}

/* map -> key, value pairs; set -> its keys: a RESP3 map or set for a
 * RESP3 caller, flat arrays for a RESP2 one (the writer's fallbacks).
 * Counted first: the same bytes as Redis's addReplyDeferredLen +
 * setDeferredMapLen / setDeferredSetLen. */
static void reply_pairs(reply_walk *w, bool with_values)
{
    lua_State *L = w->L;
    int64_t n = count_entries(L);
    int64_t per = with_values ? 2 : 1;
    int64_t fit = take_budget(w, n * per) / per;
    bool short_of = fit < n;
    if (with_values)
        gb_reply_map(w->c, fit + short_of);
    else
        gb_reply_set(w->c, fit + short_of);
    w->depth++;
    lua_pushnil(L);
    for (int64_t i = 0; i < fit && lua_next(L, -2); i++) {
        if (!with_values)
            lua_pop(L, 1);
        lua_pushvalue(L, with_values ? -2 : -1);
        reply_value(w);
        if (with_values)
            reply_value(w);
    }
    lua_pop(L, 1); /* the last key lua_next gave, or the nil before the first */
    w->depth--;
    if (short_of) {
        reply_stop(w); /* a map's error is a key, with a null value */
        if (with_values)
            gb_reply_nil(w->c);
    }
}

/* The length of the array part of the table on top: up to its first nil. */
static int64_t array_length(lua_State *L)
{
    int64_t n = 0;
    for (;; n++) {
        lua_rawgeti(L, -1, (int)(n + 1));
        bool end = lua_isnil(L, -1);
        lua_pop(L, 1);
        if (end)
            return n;
    }
}

/* An array deep in the reply: counted, then sent. */
static void reply_array_counted(reply_walk *w)
{
    int64_t n = array_length(w->L);
    int64_t fit = take_budget(w, n);
    gb_reply_array(w->c, fit + (fit < n));
    w->depth++;
    for (int64_t i = 1; i <= fit; i++) {
        lua_rawgeti(w->L, -1, (int)i);
        reply_value(w);
    }
    w->depth--;
    if (fit < n)
        reply_stop(w);
}

/* The array part of the table on top, up to its first nil. */
static void reply_array(reply_walk *w)
{
    if (w->depth >= GB_LUA_REPLY_DEFERRED_DEPTH) {
        reply_array_counted(w);
        return;
    }
    lua_State *L = w->L;
    size_t handle = gb_reply_array_deferred(w->c);
    int64_t sent = 0;
    w->depth++;
    for (int i = 1; !w->stopped; i++) {
        lua_rawgeti(L, -1, i);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
        }
        if (!element_fits(w)) {
            lua_pop(L, 1);
            reply_stop(w);
            sent++;
            break;
        }
        reply_value(w);
        sent++;
    }
    w->depth--;
    gb_reply_set_deferred(w->c, handle, sent);
}

/* The table on top: an error, status, double, ... or an array. */
static void reply_table(reply_walk *w)
{
    gb_client *c = w->c;
    lua_State *L = w->L;
    if (raw_field(L, "err") == LUA_TSTRING) {
        size_t len;
        const char *e = lua_tolstring(L, -1, &len);
        /* Redis's addReplyErrorFormatEx trims CR and LF from the end (the
         * writer turns those inside into spaces). */
        while (len && (e[len - 1] == '\r' || e[len - 1] == '\n'))
            len--;
        char *msg = gb_memdup(e, len);
        lua_pop(L, 1);
        /* a redis.pcall result passed on was counted when it arose */
        bool counted = raw_field(L, "ignore_error_stats_update") != LUA_TNIL && lua_toboolean(L, -1);
        lua_pop(L, 1);
        if (counted)
            gb_reply_error_counted_already(c, msg);
        else
            gb_reply_error(c, msg);
        gb_free(msg);
        return;
    }
    lua_pop(L, 1);
    if (raw_field(L, "ok") == LUA_TSTRING) {
        reply_status_text(c, L);
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    if (raw_field(L, "double") == LUA_TNUMBER) {
        gb_reply_double(c, lua_tonumber(L, -1));
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    if (raw_field(L, "big_number") == LUA_TSTRING) {
        size_t len;
        char *digits = one_line_copy(L, &len);
        gb_reply_big_number(c, digits, len);
        gb_free(digits);
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    if (raw_field(L, "verbatim_string") == LUA_TTABLE) {
        int format_type = raw_field(L, "format");
        lua_pushstring(L, "string");
        lua_rawget(L, -3); /* the verbatim_string table, under its format */
        if (format_type == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING) {
            size_t len;
            const char *str = lua_tolstring(L, -1, &len);
            gb_reply_verbatim_format(c, lua_tostring(L, -2), str, len);
            lua_pop(L, 3);
            return;
        }
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
    if (raw_field(L, "map") == LUA_TTABLE) {
        reply_pairs(w, true);
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    if (raw_field(L, "set") == LUA_TTABLE) {
        reply_pairs(w, false);
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    reply_array(w);
}

/* Redis's (long long) cast, defined where C leaves it undefined: NaN and
 * out-of-range values give INT64_MIN, as the x86 conversion does. */
static int64_t number_to_integer(double d)
{
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
        return INT64_MIN;
    return (int64_t)d;
}

/* Replies with the value on top and pops it. */
static void reply_value(reply_walk *w)
{
    gb_client *c = w->c;
    lua_State *L = w->L;
    if (w->stopped) { /* announced before the budget ran out */
        gb_reply_nil(c);
        lua_pop(L, 1);
        return;
    }
    if (!lua_checkstack(L, 4)) {
        gb_reply_error(c, "ERR reached lua stack limit");
        lua_pop(L, 1);
        return;
    }
    switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        gb_reply_bulk(c, s, len);
        break;
    }
    case LUA_TBOOLEAN:
        if (w->resp == 2) {
            if (lua_toboolean(L, -1))
                gb_reply_int(c, 1);
            else
                gb_reply_nil(c);
        } else {
            gb_reply_bool(c, lua_toboolean(L, -1));
        }
        break;
    case LUA_TNUMBER:
        gb_reply_int(c, number_to_integer(lua_tonumber(L, -1)));
        break;
    case LUA_TTABLE:
        reply_table(w);
        break;
    default:
        gb_reply_nil(c);
        break;
    }
    lua_pop(L, 1);
}

void gb_lua_reply(gb_client *c, lua_State *L, int script_resp)
{
    int64_t heap = (int64_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024 + lua_gc(L, LUA_GCCOUNTB, 0);
    reply_walk w = {.c = c,
                    .L = L,
                    .resp = script_resp,
                    .left = GB_MAX(GB_LUA_REPLY_FLOOR, heap / GB_LUA_REPLY_HEAP_SHARE)};
    reply_value(&w);
}
