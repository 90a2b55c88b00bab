/*
 * A guard in front of the system's lua-cjson 2.1.0 (Debian's lua-cjson,
 * which Redis bundles patched and distributions ship unpatched).
 *
 * Its string buffer (strbuf.c) keeps sizes in an int and grows by
 * doubling: a buffer asked to pass 2^30 bytes overflows (CVE-2022-24834:
 * cjson.encode of a ~358 MB string reserves len * 6 + 2 bytes in an int,
 * wraps, and writes past its heap buffer; past 2^30 the doubling itself
 * overflows, and a wrapped size makes it exit(-1)). Redis fixed its copy;
 * Goblin Core does not depend on the copy a machine has being fixed:
 *
 *   cjson.encode(v)  first walks v as the encoder will (depth first, raw
 *                    access, arrays by index with their holes, up to the
 *                    encoder's current encode_max_depth) adding up what the
 *                    encoder reserves for each value; past GUARD_LIMIT it
 *                    raises an error instead. The walk stops where the
 *                    encoder would raise its own error first (too deep, a
 *                    key or value it cannot serialise), so a cyclic table
 *                    costs no more than the encoder spends on it.
 *   cjson.decode(s)  refuses s longer than GUARD_LIMIT (its work buffer is
 *                    sized from the input's length).
 *
 * Departure: Redis encodes such values (given the memory); Goblin Core
 * answers an error, where the library would have corrupted memory.
 */
#include "engine/script/script_vm.h"

#include <lauxlib.h>
#include <math.h>
#include <stdint.h>

/* The most the library's buffer may be asked for: its growth doubles the
 * current size (kept from earlier calls) until it covers the request, so
 * every size it passes through is below twice the request: under 2^31. */
#define GUARD_LIMIT (((size_t)1 << 30) - ((size_t)1 << 20))
/* The most the library reserves for a number (FPCONV_G_FMT_BUFSIZE), and
 * a bound on the punctuation around any one value. */
#define NUMBER_RESERVE 32
#define PUNCTUATION 8

typedef struct walk {
    size_t total;   /* bytes the encoder reserves, up to here */
    int max_depth;  /* the encoder's encode_max_depth */
    bool sparse_convert; /* encode_sparse_array's settings */
    int sparse_ratio, sparse_safe;
    bool stopped;   /* the encoder raises its own error here: stop counting */
    bool too_large; /* total passed GUARD_LIMIT */
} walk;

static void add(walk *w, size_t n)
{
    if (n > GUARD_LIMIT || w->total > GUARD_LIMIT - n) {
        w->too_large = true;
        w->stopped = true;
        return;
    }
    w->total += n;
}

/* What json_append_string reserves for a string: 6 bytes a byte, plus 2. */
static void add_string(walk *w, size_t len)
{
    if (len > (GUARD_LIMIT - 2) / 6) {
        w->too_large = true;
        w->stopped = true;
        return;
    }
    add(w, len * 6 + 2);
}

/* The library's int conversions as its x86-64 build computes them. */
static int32_t int_of(double k) { return k < 2147483648.0 ? (int32_t)k : INT32_MIN; }
static int32_t int_product(int32_t a, int32_t b) { return (int32_t)(uint32_t)((uint64_t)(int64_t)a * (uint64_t)(int64_t)b); }

/* lua_array_length: the array's length when every key is an integer >= 1
 * and the array is not too sparse, else -1 (an object); sets stopped
 * where the library raises "excessively sparse array". */
static int32_t array_length(lua_State *L, walk *w, int t)
{
    int32_t max = 0, items = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        double k;
        if (lua_type(L, -1) != LUA_TNUMBER || !((k = lua_tonumber(L, -1)) != 0 && floor(k) == k && k >= 1)) {
            lua_pop(L, 1);
            return -1;
        }
        if (k > max)
            max = int_of(k);
        items++;
    }
    if (w->sparse_ratio > 0 && max > int_product(items, w->sparse_ratio) && max > w->sparse_safe) {
        if (!w->sparse_convert)
            w->stopped = true;
        return -1;
    }
    return max;
}

static void walk_value(lua_State *L, walk *w, int depth);

/* The table on top, entered at depth (the root is 1), in the encoder's
 * order: arrays by index up to their length (holes are "null"), objects
 * in lua_next's order with string or number keys. */
static void walk_table(lua_State *L, walk *w, int depth)
{
    if (depth > w->max_depth) {
        w->stopped = true;
        return;
    }
    /* The encoder's own check (json_check_encode_depth): the walk holds
     * the same stack slots a level as the encoder, from the same base, so
     * it runs out exactly where the encoder raises "excessive nesting". */
    if (!lua_checkstack(L, 3)) {
        w->stopped = true;
        return;
    }
    int t = lua_gettop(L);
    add(w, 2);
    int32_t n = array_length(L, w, t);
    if (w->stopped)
        return;
    if (n > 0) {
        for (int32_t i = 1; i <= n && !w->stopped; i++) {
            lua_rawgeti(L, t, i);
            walk_value(L, w, depth);
            lua_pop(L, 1);
        }
        return;
    }
    lua_pushnil(L);
    while (!w->stopped && lua_next(L, t)) {
        int kt = lua_type(L, -2);
        if (kt == LUA_TSTRING)
            add_string(w, lua_objlen(L, -2));
        else if (kt == LUA_TNUMBER)
            add(w, NUMBER_RESERVE + 2);
        else
            w->stopped = true; /* "table key must be a number or string" */
        if (!w->stopped)
            walk_value(L, w, depth);
        lua_pop(L, 1);
    }
    lua_settop(L, t);
}

/* The value on top (left there), inside a table at depth. Every value the
 * encoder writes is counted; where it raises, the walk stops. */
static void walk_value(lua_State *L, walk *w, int depth)
{
    add(w, PUNCTUATION);
    switch (lua_type(L, -1)) {
    case LUA_TSTRING:
        add_string(w, lua_objlen(L, -1));
        break;
    case LUA_TNUMBER:
        add(w, NUMBER_RESERVE);
        break;
    case LUA_TTABLE:
        walk_table(L, w, depth + 1);
        break;
    case LUA_TNIL:
    case LUA_TBOOLEAN:
    case LUA_TLIGHTUSERDATA: /* cjson.null */
        break;
    default:
        w->stopped = true; /* "type not supported" */
        break;
    }
}

/* Calls the library's setting getter in upvalue up (no arguments: the
 * current values), leaving nresults on the stack. */
static void get_setting(lua_State *L, int up, int nresults)
{
    lua_pushvalue(L, lua_upvalueindex(up));
    lua_call(L, 0, nresults);
}

/* Calls the library's function (upvalue 1) on the arguments, answering
 * what it answers. Its errors get the position the script's call has
 * ("user_script:1: ..."), as they do when a script calls it directly:
 * luaL_error names the caller of the C function raising, which is this
 * guard now. */
static int call_library(lua_State *L)
{
    int nargs = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    int rc = lua_pcall(L, nargs, LUA_MULTRET, 0);
    if (rc == 0)
        return lua_gettop(L);
    if (rc == LUA_ERRRUN && lua_type(L, -1) == LUA_TSTRING) {
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
    }
    return lua_error(L);
}

/* upvalues: the library's encode, encode_max_depth, encode_sparse_array. */
static int guarded_encode(lua_State *L)
{
    luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
    walk w = {0};
    get_setting(L, 2, 1);
    w.max_depth = (int)lua_tointeger(L, -1);
    get_setting(L, 3, 3);
    w.sparse_convert = lua_toboolean(L, -3);
    w.sparse_ratio = (int)lua_tointeger(L, -2);
    w.sparse_safe = (int)lua_tointeger(L, -1);
    lua_settop(L, 1);
    walk_value(L, &w, 0); /* on the argument itself, where the encoder starts */
    lua_settop(L, 1);
    if (w.too_large)
        return luaL_error(L, "Cannot serialise: the JSON text could pass 1 GiB, which the JSON library cannot buffer "
                             "safely");
    return call_library(L);
}

/* upvalue 1: the library's decode (its argument checks first, here, so
 * that their texts name 'decode'). */
static int guarded_decode(lua_State *L)
{
    luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
    size_t len;
    luaL_checklstring(L, 1, &len);
    if (len > GUARD_LIMIT)
        return luaL_error(L, "Cannot decode: the JSON text is longer than 1 GiB, which the JSON library cannot "
                             "buffer safely");
    return call_library(L);
}

void gb_lua_guard_cjson(lua_State *L, int cjson)
{
    cjson = cjson > 0 ? cjson : lua_gettop(L) + cjson + 1;
    lua_getfield(L, cjson, "encode");
    lua_getfield(L, cjson, "encode_max_depth");
    lua_getfield(L, cjson, "encode_sparse_array");
    lua_pushcclosure(L, guarded_encode, 3);
    lua_setfield(L, cjson, "encode");
    lua_getfield(L, cjson, "decode");
    lua_pushcclosure(L, guarded_decode, 1);
    lua_setfield(L, cjson, "decode");
}
