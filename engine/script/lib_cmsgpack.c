/*
 * The `cmsgpack` library scripts get (the API of Salvatore Sanfilippo's
 * lua-cmsgpack 0.4, which Redis bundles as lua_cmsgpack.c):
 * cmsgpack.pack(v1, ...), cmsgpack.unpack(s), cmsgpack.unpack_one(s [, offset]),
 * cmsgpack.unpack_limit(s, limit [, offset]). Written for Goblin Core from
 * the MessagePack specification and that library's documented choices:
 *
 *   - a table whose keys are exactly 1..n is an array, anything else a map;
 *   - a number equal to an int64 is an integer in the smallest encoding,
 *     otherwise a float32 when that is exact, else a float64;
 *   - strings are str8/16/32 (fixstr below 32 bytes); bin and ext are bad
 *     data when unpacking, as in Redis's copy;
 *   - tables nested deeper than 16 levels are packed as nil.
 *
 * Decoding trusts nothing: every length is checked against the bytes left,
 * a declared count never sizes an allocation beyond what the input could
 * hold, and nesting is bounded by Lua's stack (each level takes two slots
 * of its 8000, as in Redis: the same inputs fail with the same error).
 */
#include <lauxlib.h>
#include <lua.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>


#define MAX_NESTING 16
#define ERR_BADFMT "Bad data format in input."
#define ERR_EOF "Missing bytes in input."

/* ---- encoding --------------------------------------------------------------------------- */

/* The packed bytes, in Lua's own heap (its allocator, so the interpreter's
 * limits bound them: a table that holds itself n times packs n^16 values,
 * and must run out of room rather than of the machine's memory); a failed
 * growth is remembered, stops the walk, and is reported once the encoder
 * is out of Lua's way. */
typedef struct out_buf {
    char *p;
    size_t len, cap;
    int oom;
    lua_Alloc alloc;
    void *ud;
} out_buf;

static void put(out_buf *b, const void *data, size_t n)
{
    if (b->oom)
        return;
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap - b->len < n)
            cap *= 2;
        char *q = cap > b->cap ? b->alloc(b->ud, b->p, b->cap, cap) : NULL;
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void put_byte(out_buf *b, uint8_t c) { put(b, &c, 1); }

static void put_be(out_buf *b, uint8_t tag, uint64_t v, int bytes)
{
    uint8_t out[9];
    out[0] = tag;
    for (int i = 0; i < bytes; i++)
        out[1 + i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
    put(b, out, (size_t)bytes + 1);
}

static void encode_integer(out_buf *b, int64_t v)
{
    if (v >= 0) {
        if (v < 128)
            put_byte(b, (uint8_t)v);
        else if (v <= 0xff)
            put_be(b, 0xcc, (uint64_t)v, 1);
        else if (v <= 0xffff)
            put_be(b, 0xcd, (uint64_t)v, 2);
        else if (v <= 0xffffffffLL)
            put_be(b, 0xce, (uint64_t)v, 4);
        else
            put_be(b, 0xcf, (uint64_t)v, 8);
    } else if (v >= -32) {
        put_byte(b, (uint8_t)(int8_t)v);
    } else if (v >= -128) {
        put_be(b, 0xd0, (uint64_t)v & 0xff, 1);
    } else if (v >= -32768) {
        put_be(b, 0xd1, (uint64_t)v & 0xffff, 2);
    } else if (v >= -2147483648LL) {
        put_be(b, 0xd2, (uint64_t)v & 0xffffffffu, 4);
    } else {
        put_be(b, 0xd3, (uint64_t)v, 8);
    }
}

static void encode_number(out_buf *b, lua_Number n)
{
    if (n >= -9223372036854775808.0 && n < 9223372036854775808.0 && (lua_Number)(int64_t)n == n) {
        encode_integer(b, (int64_t)n);
        return;
    }
    /* A float when exact (infinities too); beyond FLT_MAX the conversion
     * would be undefined, and cannot be exact anyway. */
    float f = isinf(n) || fabs(n) <= FLT_MAX ? (float)n : 0.0f;
    if ((double)f == n) {
        uint32_t u;
        memcpy(&u, &f, 4);
        put_be(b, 0xca, u, 4);
    } else {
        uint64_t u;
        double d = n;
        memcpy(&u, &d, 8);
        put_be(b, 0xcb, u, 8);
    }
}

/* A length: its fix form up to fixmax, else the 8 (when the type has
 * one), 16 or 32-bit form. */
static void encode_length(out_buf *b, size_t n, uint8_t fix, size_t fixmax, uint8_t t8, uint8_t t16, uint8_t t32)
{
    if (n <= fixmax)
        put_byte(b, (uint8_t)(fix | n));
    else if (t8 && n <= 0xff)
        put_be(b, t8, n, 1);
    else if (n <= 0xffff)
        put_be(b, t16, n, 2);
    else
        put_be(b, t32, n, 4);
}

/* Whether the table at idx has exactly the keys 1..n (n in *len). */
static int is_array(lua_State *L, int idx, size_t *len)
{
    size_t count = 0;
    lua_Number max = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        lua_Number k;
        if (lua_type(L, -1) != LUA_TNUMBER || (k = lua_tonumber(L, -1)) <= 0 || k != floor(k)) {
            lua_pop(L, 1);
            return 0;
        }
        if (k > max)
            max = k;
        count++;
    }
    *len = count;
    return max == (lua_Number)count;
}

static void encode_value(lua_State *L, out_buf *b, int level);

static void encode_table(lua_State *L, out_buf *b, int level)
{
    int t = lua_gettop(L);
    size_t n;
    if (is_array(L, t, &n)) {
        encode_length(b, n, 0x90, 15, 0, 0xdc, 0xdd);
        for (size_t i = 1; i <= n; i++) {
            lua_rawgeti(L, t, (int)i);
            encode_value(L, b, level + 1);
        }
        return;
    }
    size_t pairs = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        pairs++;
    }
    encode_length(b, pairs, 0x80, 15, 0, 0xde, 0xdf);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pushvalue(L, -2);
        encode_value(L, b, level + 1); /* the key */
        encode_value(L, b, level + 1); /* the value */
    }
}

/* Encodes the value on top and pops it. The caller reserved the stack
 * for MAX_NESTING levels: nothing here allocates Lua memory. */
static void encode_value(lua_State *L, out_buf *b, int level)
{
    if (b->oom) { /* out of room: nothing more is written, so nothing more is walked */
        lua_pop(L, 1);
        return;
    }
    int t = lua_type(L, -1);
    if (t == LUA_TTABLE && level >= MAX_NESTING)
        t = LUA_TNIL;
    switch (t) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        encode_length(b, len, 0xa0, 31, 0xd9, 0xda, 0xdb);
        put(b, s, len);
        break;
    }
    case LUA_TBOOLEAN:
        put_byte(b, lua_toboolean(L, -1) ? 0xc3 : 0xc2);
        break;
    case LUA_TNUMBER:
        encode_number(b, lua_tonumber(L, -1));
        break;
    case LUA_TTABLE:
        encode_table(L, b, level);
        break;
    default:
        put_byte(b, 0xc0);
        break;
    }
    lua_pop(L, 1);
}

/* The output buffer lives in a userdata whose __gc frees its bytes, so a
 * Lua error (out of memory) between here and the result leaks nothing. */
static const char buf_meta_key = 0;

static void buf_gc_now(out_buf *b)
{
    if (b->p)
        b->alloc(b->ud, b->p, b->cap, 0);
    b->p = NULL;
}

static int buf_gc(lua_State *L)
{
    buf_gc_now(lua_touserdata(L, 1));
    return 0;
}

static int mp_pack(lua_State *L)
{
    int nargs = lua_gettop(L);
    if (nargs == 0)
        return luaL_argerror(L, 0, "MessagePack pack needs input.");
    luaL_checkstack(L, 3 * MAX_NESTING + 8, "cmsgpack: no room on the stack");
    out_buf *b = lua_newuserdata(L, sizeof *b);
    memset(b, 0, sizeof *b);
    b->alloc = lua_getallocf(L, &b->ud);
    lua_pushlightuserdata(L, (void *)&buf_meta_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_setmetatable(L, -2);
    for (int i = 1; i <= nargs; i++) {
        lua_pushvalue(L, i);
        encode_value(L, b, 0);
    }
    if (b->oom) {
        buf_gc_now(b); /* now, not at the next collection: it may be hundreds of MB */
        return luaL_error(L, "not enough memory");
    }
    lua_pushlstring(L, b->p ? b->p : "", b->len);
    buf_gc_now(b);
    return 1;
}

/* ---- decoding ------------------------------------------------------------------------------ */

enum { DEC_OK = 0, DEC_EOF = 1, DEC_BADFMT = 2 };

typedef struct cursor {
    const uint8_t *p;
    size_t left;
    int err; /* DEC_* */
} cursor;

static int need(cursor *c, size_t n)
{
    if (c->left < n) {
        c->err = DEC_EOF;
        return 0;
    }
    return 1;
}

static uint64_t take_be(cursor *c, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = (v << 8) | c->p[i];
    c->p += bytes;
    c->left -= (size_t)bytes;
    return v;
}

static void decode_value(lua_State *L, cursor *c);

static void decode_string(lua_State *L, cursor *c, size_t len)
{
    if (!need(c, len))
        return;
    lua_pushlstring(L, (const char *)c->p, len);
    c->p += len;
    c->left -= len;
}

/* Arrays and maps are filled with lua_settable, keys pushed as Redis's
 * decoder pushes them, so that the Lua stack runs out at the nesting
 * Redis's does (nothing else bounds the depth there) and a nil or NaN map
 * key raises Lua's own error ("table index is nil"). */
static void decode_array(lua_State *L, cursor *c, size_t n)
{
    /* Each element takes at least a byte: the input bounds the table. */
    lua_createtable(L, (int)(n < c->left ? n : c->left), 0);
    luaL_checkstack(L, 1, "in function mp_decode_to_lua_array");
    for (size_t i = 1; i <= n; i++) {
        lua_pushnumber(L, (lua_Number)i);
        decode_value(L, c);
        if (c->err)
            return;
        lua_settable(L, -3);
    }
}

static void decode_map(lua_State *L, cursor *c, size_t n)
{
    lua_createtable(L, 0, (int)(n < c->left / 2 ? n : c->left / 2));
    for (size_t i = 0; i < n; i++) {
        decode_value(L, c);
        if (c->err)
            return;
        decode_value(L, c);
        if (c->err)
            return;
        lua_settable(L, -3);
    }
}

/* An int64 read as unsigned: uint64 values of 2^63 and above come out
 * negative, as Redis's decoder pushes them (through lua_Integer). */
static lua_Number as_int64(uint64_t v)
{
    return v <= INT64_MAX ? (lua_Number)(int64_t)v : -(lua_Number)(~v) - 1;
}

/* Decodes one object onto the stack; on bad input sets c->err (the stack
 * may then hold a partial value, which the caller discards). Types Redis's
 * decoder does not know (bin, ext, 0xc1) are bad data, whole or not. */
static void decode_value(lua_State *L, cursor *c)
{
    if (!need(c, 1))
        return;
    luaL_checkstack(L, 1, "too many return values at once; use unpack_one or unpack_limit instead.");
    uint8_t t = *c->p++;
    c->left--;
    if (t <= 0x7f) {
        lua_pushnumber(L, t);
    } else if (t >= 0xe0) {
        lua_pushnumber(L, (int8_t)t);
    } else if ((t & 0xe0) == 0xa0) {
        decode_string(L, c, t & 0x1f);
    } else if ((t & 0xf0) == 0x90) {
        decode_array(L, c, t & 0x0f);
    } else if ((t & 0xf0) == 0x80) {
        decode_map(L, c, t & 0x0f);
    } else {
        switch (t) {
        case 0xc0:
            lua_pushnil(L);
            break;
        case 0xc2:
            lua_pushboolean(L, 0);
            break;
        case 0xc3:
            lua_pushboolean(L, 1);
            break;
        case 0xcc:
        case 0xcd:
        case 0xce:
        case 0xcf: {
            int bytes = 1 << (t - 0xcc);
            if (need(c, (size_t)bytes))
                lua_pushnumber(L, as_int64(take_be(c, bytes)));
            break;
        }
        case 0xd0:
        case 0xd1:
        case 0xd2:
        case 0xd3: {
            int bytes = 1 << (t - 0xd0);
            if (!need(c, (size_t)bytes))
                break;
            uint64_t v = take_be(c, bytes);
            uint64_t sign = (uint64_t)1 << (8 * bytes - 1);
            lua_pushnumber(L, as_int64((v ^ sign) - sign)); /* sign-extended */
            break;
        }
        case 0xca: {
            if (!need(c, 4))
                break;
            uint32_t u = (uint32_t)take_be(c, 4);
            float f;
            memcpy(&f, &u, 4);
            lua_pushnumber(L, f);
            break;
        }
        case 0xcb: {
            if (!need(c, 8))
                break;
            uint64_t u = take_be(c, 8);
            double d;
            memcpy(&d, &u, 8);
            lua_pushnumber(L, d);
            break;
        }
        case 0xd9:
            if (need(c, 1))
                decode_string(L, c, (size_t)take_be(c, 1));
            break;
        case 0xda:
            if (need(c, 2))
                decode_string(L, c, (size_t)take_be(c, 2));
            break;
        case 0xdb:
            if (need(c, 4))
                decode_string(L, c, (size_t)take_be(c, 4));
            break;
        case 0xdc:
            if (need(c, 2))
                decode_array(L, c, (size_t)take_be(c, 2));
            break;
        case 0xdd:
            if (need(c, 4))
                decode_array(L, c, (size_t)take_be(c, 4));
            break;
        case 0xde:
            if (need(c, 2))
                decode_map(L, c, (size_t)take_be(c, 2));
            break;
        case 0xdf:
            if (need(c, 4))
                decode_map(L, c, (size_t)take_be(c, 4));
            break;
        default:
            c->err = DEC_BADFMT;
            break;
        }
    }
}

/* Lua's %d takes an int: a lua_Integer shown as Redis's (int) cast shows it. */
static int as_c_int(lua_Integer v) { return (int)(int32_t)(uint32_t)(uint64_t)v; }

/* Redis's mp_unpack_full: the string is argument 1 (anything above it is
 * left alone). limit 0 with offset 0 decodes everything and returns the
 * objects alone; otherwise at most limit objects from offset, preceded by
 * the offset of what follows (-1 at the end). */
static int unpack_full(lua_State *L, lua_Integer limit, lua_Integer offset)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    bool decode_all = limit == 0 && offset == 0;
    if (offset < 0 || limit < 0)
        return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", as_c_int(offset),
                          as_c_int((lua_Integer)len)); /* sic: Redis shows the length as the limit */
    if ((uint64_t)offset > len)
        return luaL_error(L, "Start offset %d greater than input length %d.", as_c_int(offset),
                          as_c_int((lua_Integer)len));
    if (decode_all)
        limit = INT_MAX;
    cursor c = {(const uint8_t *)s + offset, len - (size_t)offset, DEC_OK};
    int n = 0;
    for (; c.left > 0 && n < limit; n++) {
        decode_value(L, &c);
        if (c.err)
            return luaL_error(L, c.err == DEC_EOF ? ERR_EOF : ERR_BADFMT);
    }
    if (decode_all)
        return n;
    luaL_checkstack(L, 1, "in function mp_unpack_full");
    lua_pushinteger(L, c.left == 0 ? -1 : (lua_Integer)(len - c.left));
    lua_insert(L, 2);
    return n + 1;
}

static int mp_unpack(lua_State *L) { return unpack_full(L, 0, 0); }

static int mp_unpack_one(lua_State *L)
{
    lua_Integer offset = luaL_optinteger(L, 2, 0);
    lua_settop(L, 1);
    return unpack_full(L, 1, offset);
}

static int mp_unpack_limit(lua_State *L)
{
    lua_Integer limit = luaL_checkinteger(L, 2);
    lua_Integer offset = luaL_optinteger(L, 3, 0);
    lua_settop(L, 1);
    return unpack_full(L, limit, offset);
}

int luaopen_cmsgpack(lua_State *L);
int luaopen_cmsgpack(lua_State *L)
{
    static const luaL_Reg fns[] = {{"pack", mp_pack},
                                   {"unpack", mp_unpack},
                                   {"unpack_one", mp_unpack_one},
                                   {"unpack_limit", mp_unpack_limit},
                                   {NULL, NULL}};
    lua_pushlightuserdata(L, (void *)&buf_meta_key);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, buf_gc);
    lua_setfield(L, -2, "__gc");
    lua_rawset(L, LUA_REGISTRYINDEX);
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    lua_pushliteral(L, "cmsgpack");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, "lua-cmsgpack 0.4.0");
    lua_setfield(L, -2, "_VERSION");
    lua_pushliteral(L, "Copyright (C) 2012, Salvatore Sanfilippo");
    lua_setfield(L, -2, "_COPYRIGHT");
    lua_pushliteral(L, "MessagePack C implementation for Lua");
    lua_setfield(L, -2, "_DESCRIPTION");
    return 1;
}
