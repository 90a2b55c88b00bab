#include "engine/script/script_vm.h"

#include <lauxlib.h>
#include <lualib.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/base/mem.h"
#include "engine/core/engine.h"
#include "engine/script/lib_pattern.h"
#include "engine/script/lib_string.h"
#include "engine/script/lib_table.h"

const char gb_lua_vm_key = 0;
static const char readonly_key = 0; /* registry: read-only proxy -> the table it shows */

/* The libraries scripts get besides Lua's own (engine/script/lib_*.c and
 * Debian's lua-cjson). */
int luaopen_cjson(lua_State *L);
int luaopen_bit(lua_State *L);
int luaopen_struct(lua_State *L);
int luaopen_cmsgpack(lua_State *L);

/* ---- memory --------------------------------------------------------------------------- */

/* Whether Lua may grow by `grow` bytes into a block of `size`: one block
 * never exceeds proto-max-bulk-len (nothing a script builds can be sent
 * anyway), and with maxmemory set Lua's own heap never exceeds it - or
 * GB_LUA_HEAP_FLOOR, so that a small maxmemory (or a server already over
 * it, where Redis still runs scripts) does not starve the interpreter. */
static bool growth_allowed(const gb_lua_vm *vm, size_t grow, size_t size)
{
    const gb_settings *cfg = &vm->eng->cfg;
    if (size > (size_t)cfg->proto_max_bulk_len)
        return false;
    if (cfg->maxmemory <= 0)
        return true;
    size_t limit = GB_MAX((size_t)cfg->maxmemory, (size_t)GB_LUA_HEAP_FLOOR);
    return vm->heap + grow <= limit;
}

/* Lua's allocator (lua_Alloc): the engine's, counted; fallible only where
 * Lua can turn a refusal into an error a script sees (protected_depth).
 * Lua 5.1 passes osize 0 with a NULL ptr and requires that shrinking never
 * fails. Blocks of up to GB_LUA_SMALL_MAX bytes come from the
 * interpreter's small-block heap (script_heap.h), larger ones from the
 * engine's allocator; the size Lua passes says which (a block that
 * crosses GB_LUA_SMALL_MAX moves). */
static void *vm_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    gb_lua_vm *vm = ud;
    bool was_small = ptr && osize <= GB_LUA_SMALL_MAX;
    if (nsize == 0) {
        if (was_small)
            gb_lua_heap_free(&vm->small, ptr);
        else
            gb_sized_free(ptr, osize);
        vm->heap -= osize;
        return NULL;
    }
    bool may_fail = !(vm->in_command || vm->protected_depth == 0 || vm->obey);
    if (may_fail && nsize > osize && !growth_allowed(vm, nsize - osize, nsize))
        return NULL;
    void *q;
    if (ptr && !was_small && nsize > GB_LUA_SMALL_MAX) { /* large to large: the allocator's realloc */
        q = may_fail ? gb_try_sized_realloc(ptr, osize, nsize) : gb_sized_realloc(ptr, osize, nsize);
        if (!q)
            return nsize <= osize ? ptr : NULL;
        vm->heap = vm->heap - osize + nsize;
        return q;
    }
    if (was_small && nsize <= GB_LUA_SMALL_MAX && gb_lua_heap_same_class(osize, nsize)) {
        q = ptr;
    } else if (nsize > GB_LUA_SMALL_MAX) { /* new, or small growing large */
        q = may_fail ? gb_try_sized_realloc(NULL, 0, nsize) : gb_sized_realloc(NULL, 0, nsize);
        if (!q)
            return NULL;
    } else { /* new, or moving to another small class */
        /* A small block that shrinks may stay where it is when no smaller
         * one can be had (its chunk knows its real size); one leaving the
         * large heap may not fail (Lua requires that shrinking never does). */
        bool small_shrink = was_small && nsize < osize;
        q = gb_lua_heap_alloc(&vm->small, nsize, small_shrink || (may_fail && nsize > osize));
        if (!q && small_shrink)
            q = ptr;
        if (!q)
            return NULL;
    }
    if (q != ptr && ptr) {
        memcpy(q, ptr, GB_MIN(osize, nsize));
        if (was_small)
            gb_lua_heap_free(&vm->small, ptr);
        else
            gb_sized_free(ptr, osize);
    }
    vm->heap = vm->heap - osize + nsize;
    return q;
}

/* ---- rand48 (Redis's rand.c algorithm: drand48's, fixed for every platform) -------------- */

int32_t gb_rand48_next(uint64_t *state)
{
    *state = (*state * 0x5DEECE66Dull + 0xB) & ((1ull << 48) - 1);
    return (int32_t)(*state >> 17);
}

void gb_rand48_seed(uint64_t *state, int32_t seed) { *state = ((uint64_t)(uint32_t)seed << 16) | 0x330E; }

/* math.random as Lua 5.1's, on rand48. */
static int math_random(lua_State *L)
{
    gb_lua_vm *vm = gb_lua_vm_of(L);
    if (!vm->run)
        return luaL_error(L, "math.random can only be called inside a script invocation");
    lua_Number r = (lua_Number)(gb_rand48_next(vm->rand_state) % GB_RAND48_MAX) / (lua_Number)GB_RAND48_MAX;
    switch (lua_gettop(L)) {
    case 0:
        lua_pushnumber(L, r);
        break;
    case 1: {
        int u = luaL_checkint(L, 1);
        luaL_argcheck(L, 1 <= u, 1, "interval is empty");
        lua_pushnumber(L, floor(r * u) + 1);
        break;
    }
    case 2: {
        int l = luaL_checkint(L, 1), u = luaL_checkint(L, 2);
        luaL_argcheck(L, l <= u, 2, "interval is empty");
        lua_pushnumber(L, floor(r * (u - l + 1)) + l);
        break;
    }
    default:
        return luaL_error(L, "wrong number of arguments");
    }
    return 1;
}

static int math_randomseed(lua_State *L)
{
    gb_lua_vm *vm = gb_lua_vm_of(L);
    if (!vm->run)
        return luaL_error(L, "math.randomseed can only be called inside a script invocation");
    gb_rand48_seed(vm->rand_state, (int32_t)luaL_checkint(L, 1));
    return 0;
}

/* ---- errors ---------------------------------------------------------------------------- */

static bool is_crlf(char c) { return c == '\r' || c == '\n'; }

void gb_lua_push_error(lua_State *L, const char *err, size_t len)
{
    /* Redis reads the text as a C string (up to a NUL) and trims CR and LF
     * from both ends of the message (luaPushErrorBuff's sdstrim). */
    const char *nul = memchr(err, '\0', len);
    if (nul)
        len = (size_t)(nul - err);
    const char *code = "ERR", *msg = err;
    size_t codelen = 3, msglen = len;
    if (len && err[0] == '-') {
        const char *sp = memchr(err, ' ', len);
        if (!sp) {
            msg = err + 1;
            msglen = len - 1;
        } else {
            code = err + 1;
            codelen = (size_t)(sp - err - 1);
            msg = sp + 1;
            msglen = len - (size_t)(sp + 1 - err);
        }
    }
    while (msglen && is_crlf(msg[msglen - 1]))
        msglen--;
    while (msglen && is_crlf(msg[0])) {
        msg++;
        msglen--;
    }
    lua_createtable(L, 0, 1);
    lua_pushlstring(L, code, codelen);
    lua_pushliteral(L, " ");
    lua_pushlstring(L, msg, msglen);
    lua_concat(L, 3);
    lua_setfield(L, -2, "err");
}

int gb_lua_error_handler(lua_State *L)
{
    lua_Debug ar;
    bool have = lua_getstack(L, 1, &ar) && lua_getinfo(L, "nSl", &ar);
    if (have && strcmp(ar.what, "C") == 0)
        have = lua_getstack(L, 2, &ar) && lua_getinfo(L, "nSl", &ar);
    if (!lua_istable(L, 1)) {
        lua_settop(L, 1);
        lua_createtable(L, 0, 3);
        lua_pushliteral(L, "ERR ");
        switch (lua_type(L, 1)) {
        case LUA_TSTRING:
        case LUA_TNUMBER:
            lua_pushvalue(L, 1);
            break;
        case LUA_TBOOLEAN:
            lua_pushstring(L, lua_toboolean(L, 1) ? "true" : "false");
            break;
        case LUA_TNIL:
            lua_pushliteral(L, "nil");
            break;
        default:
            lua_pushfstring(L, "%s: %p", luaL_typename(L, 1), lua_topointer(L, 1));
            break;
        }
        lua_concat(L, 2);
        lua_setfield(L, -2, "err");
    }
    if (have) {
        lua_pushstring(L, ar.source);
        lua_setfield(L, -2, "source");
        lua_pushinteger(L, ar.currentline);
        lua_setfield(L, -2, "line");
    }
    return 1;
}

/* Redis's pcall: an error table from redis.call is handed to the script as
 * its message string, as scripts written for Redis 6 expect. */
static int redis_pcall(lua_State *L)
{
    int argc = lua_gettop(L);
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    if (lua_pcall(L, argc - 1, LUA_MULTRET, 0)) {
        lua_remove(L, 1);
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "err");
            if (lua_isstring(L, -1))
                lua_replace(L, -2);
            else
                lua_pop(L, 1);
        }
        lua_pushboolean(L, 0);
        lua_insert(L, 1);
    }
    return lua_gettop(L);
}

/* ---- read-only proxies ---------------------------------------------------------------- */

bool gb_lua_is_readonly(lua_State *L, int idx)
{
    if (!lua_istable(L, idx))
        return false;
    lua_pushlightuserdata(L, (void *)&readonly_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (!lua_istable(L, -1)) { /* an interpreter that is not a vm's */
        lua_pop(L, 1);
        return false;
    }
    lua_pushvalue(L, idx > 0 ? idx : idx - 1);
    lua_rawget(L, -2);
    bool ro = lua_toboolean(L, -1);
    lua_pop(L, 2);
    return ro;
}

static int readonly_newindex(lua_State *L) { return luaL_error(L, "Attempt to modify a readonly table"); }

int gb_lua_raise_readonly(lua_State *L)
{
    lua_pushliteral(L, "Attempt to modify a readonly table");
    return lua_error(L);
}

static int safe_rawset(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    luaL_checkany(L, 3);
    if (gb_lua_is_readonly(L, 1))
        return gb_lua_raise_readonly(L);
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 1;
}

/* Lua 5.1's setmetatable, written here rather than wrapped so that its
 * errors name the script's line and the function, as Redis's do. Redis
 * refuses a read-only table where it would set the metatable, after the
 * argument checks; Goblin's read-only proxies carry a protected metatable
 * of their own, so that refusal comes before the protection's. */
static int safe_setmetatable(lua_State *L)
{
    int mt = lua_type(L, 2);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_argcheck(L, mt == LUA_TNIL || mt == LUA_TTABLE, 2, "nil or table expected");
    if (gb_lua_is_readonly(L, 1))
        return gb_lua_raise_readonly(L);
    if (luaL_getmetafield(L, 1, "__metatable"))
        return luaL_error(L, "cannot change a protected metatable");
    lua_settop(L, 2);
    lua_setmetatable(L, 1);
    return 1;
}

/* Records the proxy at idx as read-only, showing the table at real. */
static void mark_readonly(lua_State *L, int idx, int real)
{
    idx = idx > 0 ? idx : lua_gettop(L) + idx + 1;
    real = real > 0 ? real : lua_gettop(L) + real + 1;
    lua_pushlightuserdata(L, (void *)&readonly_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, idx);
    lua_pushvalue(L, real);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

/* Replaces the table at idx by the one it shows when it is a proxy. */
static void unproxy(lua_State *L, int idx)
{
    lua_pushlightuserdata(L, (void *)&readonly_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, idx);
    lua_rawget(L, -2);
    if (lua_istable(L, -1))
        lua_replace(L, idx);
    else
        lua_pop(L, 1);
    lua_pop(L, 1);
}

/* next() and pairs() see through proxies: pairs(_G) lists the globals. */
static int safe_next(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2);
    unproxy(L, 1);
    if (lua_next(L, 1))
        return 2;
    lua_pushnil(L);
    return 1;
}

/* unpack(t [, i [, j]]) counting in unsigned arithmetic: Lua 5.1.5's
 * computes j - i + 1 in an int, which overflows for i = -2^31, j = 2^31-1
 * (CVE-2025-46817: the system's Lua crashed the server; Redis fixed its
 * copy). Same results and error text otherwise. */
static int safe_unpack(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    int i = luaL_optint(L, 2, 1);
    int e = luaL_opt(L, luaL_checkint, 3, luaL_getn(L, 1));
    if (i > e)
        return 0;
    unsigned n = (unsigned)e - (unsigned)i; /* the count minus 1, never overflowing */
    if (n >= (unsigned)INT_MAX || !lua_checkstack(L, (int)++n))
        return luaL_error(L, "too many results to unpack");
    for (; i < e; i++) /* up to e - 1 first: i++ past e = INT_MAX would overflow */
        lua_rawgeti(L, 1, i);
    lua_rawgeti(L, 1, e);
    return (int)n;
}

/* rawget sees through proxies too: rawget(_G, "redis") is the library, as
 * in Redis, whose _G is the globals table itself. */
static int safe_rawget(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    lua_settop(L, 2);
    unproxy(L, 1);
    lua_rawget(L, 1);
    return 1;
}

static int safe_pairs(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushcfunction(L, safe_next);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

/* The metatable every proxy's metatable answers getmetatable() with: an
 * empty read-only table (Redis returns the real one, itself read-only). */
static void push_sealed_view(lua_State *L)
{
    static const char sealed_key = 0;
    lua_pushlightuserdata(L, (void *)&sealed_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    if (!lua_isnil(L, -1))
        return;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_newtable(L);
    lua_pushcfunction(L, readonly_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    mark_readonly(L, -1, -1);
    lua_pushlightuserdata(L, (void *)&sealed_key);
    lua_pushvalue(L, -2);
    lua_rawset(L, LUA_REGISTRYINDEX);
}

void gb_lua_push_readonly(lua_State *L, int idx)
{
    idx = idx > 0 ? idx : lua_gettop(L) + idx + 1;
    lua_newtable(L);
    lua_createtable(L, 0, 3);
    lua_pushvalue(L, idx);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonly_newindex);
    lua_setfield(L, -2, "__newindex");
    push_sealed_view(L);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    mark_readonly(L, -1, idx);
}

/* The globals proxy's __index: names resolve in upvalue 1 (the real
 * globals, or FUNCTION LOAD's restricted API); a missing one is an error. */
static int globals_lookup(lua_State *L)
{
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    if (!lua_isnil(L, -1))
        return 1;
    if (!lua_isstring(L, 2))
        return luaL_error(L, "Second argument to luaProtectedTableError must be a string or number");
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", lua_tostring(L, 2));
}

/* Pushes a proxy whose reads resolve in the table at idx through
 * globals_lookup (missing names are errors); the closure is pushed too
 * when want_lookup (below the proxy). */
static void push_strict_proxy(lua_State *L, int idx, bool want_lookup);

void gb_lua_push_strict_readonly(lua_State *L, int idx) { push_strict_proxy(L, idx, false); }

static void push_strict_proxy(lua_State *L, int idx, bool want_lookup)
{
    idx = idx > 0 ? idx : lua_gettop(L) + idx + 1;
    lua_pushvalue(L, idx);
    lua_pushcclosure(L, globals_lookup, 1);
    lua_newtable(L);
    lua_createtable(L, 0, 3);
    lua_pushvalue(L, -3);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonly_newindex);
    lua_setfield(L, -2, "__newindex");
    push_sealed_view(L);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    mark_readonly(L, -1, idx);
    if (!want_lookup)
        lua_remove(L, -2);
}

/* ---- loading code ---------------------------------------------------------------------- */

/* luaL_loadbuffer with Lua's collector held off: Lua 5.1.5's parser does
 * not anchor the chunk's source name, so a collection during the parse can
 * free it (CVE-2025-49844, fixed in Redis's copy of Lua, not in the
 * system's). The parse allocates in proportion to the chunk; the
 * collector restarts as soon as it returns, whatever it returns. */
static int parse_chunk(lua_State *L, const char *s, size_t len, const char *chunkname)
{
    lua_gc(L, LUA_GCSTOP, 0);
    int rc = luaL_loadbuffer(L, s, len, chunkname);
    lua_gc(L, LUA_GCRESTART, 0);
    return rc;
}

/* Loads a text chunk; precompiled ones are refused. Pushes the function,
 * or nil and the message (loadstring's convention). */
static int load_text(lua_State *L, const char *s, size_t len, const char *chunkname)
{
    int rc = len && s[0] == LUA_SIGNATURE[0] ? (lua_pushliteral(L, "binary chunks are not allowed"), LUA_ERRSYNTAX)
                                             : parse_chunk(L, s, len, chunkname);
    if (rc == 0)
        return 1;
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
}

static int safe_loadstring(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    const char *chunkname = luaL_optstring(L, 2, s);
    return load_text(L, s, len, chunkname);
}

/* load(reader [, chunkname]): the reader's pieces are joined first, so the
 * whole chunk is checked before Lua sees it. */
static int safe_load(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    const char *chunkname = luaL_optstring(L, 2, "=(load)");
    lua_settop(L, 2);
    lua_pushliteral(L, ""); /* 3: the chunk so far */
    for (;;) {
        lua_pushvalue(L, 1);
        lua_call(L, 0, 1);
        if (lua_isnil(L, -1) || (lua_isstring(L, -1) && lua_objlen(L, -1) == 0)) {
            lua_pop(L, 1);
            break;
        }
        if (!lua_isstring(L, -1))
            return luaL_error(L, "reader function must return a string");
        lua_concat(L, 2);
    }
    size_t len;
    const char *s = lua_tolstring(L, 3, &len);
    return load_text(L, s, len, chunkname);
}

int gb_lua_vm_load(gb_lua_vm *vm, const char *code, size_t len, const char *chunkname)
{
    lua_State *L = vm->L;
    if (len && code[0] == LUA_SIGNATURE[0]) {
        lua_pushliteral(L, "binary chunks are not allowed");
        return LUA_ERRSYNTAX;
    }
    vm->protected_depth++; /* the parser runs protected: out of memory is LUA_ERRMEM */
    int rc = parse_chunk(L, code, len, chunkname);
    vm->protected_depth--;
    if (rc == 0) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, vm->proxy_ref);
        lua_setfenv(L, -2);
    }
    return rc;
}

int gb_lua_vm_pcall(gb_lua_vm *vm, int nargs, int nresults, int errfunc)
{
    vm->protected_depth++;
    int rc = lua_pcall(vm->L, nargs, nresults, errfunc);
    vm->protected_depth--;
    return rc;
}

/* ---- set-up ---------------------------------------------------------------------------- */

static void open_lib(lua_State *L, const char *name, lua_CFunction open, bool set_global)
{
    lua_pushcfunction(L, open);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    if (set_global)
        lua_setglobal(L, name);
    else
        lua_pop(L, 1);
}

/* Replaces globals[name] with a read-only proxy of itself. */
static void seal_global(lua_State *L, int globals, const char *name)
{
    lua_getfield(L, globals, name);
    gb_lua_push_readonly(L, -1);
    lua_setfield(L, globals, name);
    lua_pop(L, 1);
}

static int vm_setup(lua_State *L)
{
    gb_lua_vm *vm = lua_touserdata(L, 1);
    void (*api)(lua_State *, gb_lua_vm *) = *(void (**)(lua_State *, gb_lua_vm *))lua_touserdata(L, 2);
    lua_settop(L, 0);
    lua_pushlightuserdata(L, (void *)&gb_lua_vm_key);
    lua_pushlightuserdata(L, vm);
    lua_rawset(L, LUA_REGISTRYINDEX);
    lua_pushlightuserdata(L, (void *)&readonly_key);
    lua_newtable(L);
    lua_rawset(L, LUA_REGISTRYINDEX);

    open_lib(L, "", luaopen_base, false);
    open_lib(L, LUA_TABLIBNAME, luaopen_table, false);
    open_lib(L, LUA_STRLIBNAME, luaopen_string, false);
    lua_getglobal(L, LUA_STRLIBNAME); /* also strings' __index: ("x"):rep(n) */
    gb_lua_install_strings(L);
    gb_lua_install_patterns(L);
    lua_pop(L, 1);
    open_lib(L, LUA_MATHLIBNAME, luaopen_math, false);
    open_lib(L, "cjson", luaopen_cjson, true);
    open_lib(L, "struct", luaopen_struct, true);
    open_lib(L, "cmsgpack", luaopen_cmsgpack, true);
    open_lib(L, "bit", luaopen_bit, true);
    lua_getglobal(L, "cjson");
    gb_lua_guard_cjson(L, -1);
    lua_pop(L, 1);

    lua_pushvalue(L, LUA_GLOBALSINDEX);
    int g = lua_gettop(L);
    /* What Redis 7.0 leaves out of the base library. */
    static const char *const removed[] = {"print", "dofile", "loadfile", "getfenv", "setfenv", "newproxy", "module",
                                          "require"};
    for (size_t i = 0; i < GB_ARRAY_LEN(removed); i++) {
        lua_pushnil(L);
        lua_setfield(L, g, removed[i]);
    }
    lua_pushcfunction(L, safe_loadstring);
    lua_setfield(L, g, "loadstring");
    lua_pushcfunction(L, safe_load);
    lua_setfield(L, g, "load");
    lua_pushcfunction(L, safe_rawset);
    lua_setfield(L, g, "rawset");
    lua_pushcfunction(L, safe_rawget);
    lua_setfield(L, g, "rawget");
    lua_pushcfunction(L, safe_unpack);
    lua_setfield(L, g, "unpack");
    lua_pushcfunction(L, safe_setmetatable);
    lua_setfield(L, g, "setmetatable");
    lua_pushcfunction(L, redis_pcall);
    lua_setfield(L, g, "pcall");
    lua_pushcfunction(L, safe_next);
    lua_setfield(L, g, "next");
    lua_pushcfunction(L, safe_pairs);
    lua_setfield(L, g, "pairs");
    /* Redis's error handler is a global; scripts see it there. */
    lua_pushcfunction(L, gb_lua_error_handler);
    lua_setfield(L, g, "__redis__err__handler");
    /* The table functions that write are Goblin Core's own (lib_table.c):
     * refused on read-only tables, a sort reachable by the hook; and
     * concat, built in one growing block. */
    lua_getfield(L, g, "table");
    gb_lua_install_table(L);
    lua_pop(L, 1);
    lua_getfield(L, g, "math");
    lua_pushcfunction(L, math_random);
    lua_setfield(L, -2, "random");
    lua_pushcfunction(L, math_randomseed);
    lua_setfield(L, -2, "randomseed");
    lua_pop(L, 1);

    lua_newtable(L);
    api(L, vm);
    lua_setfield(L, g, "redis");

    static const char *const libs[] = {"string", "math", "table", "coroutine", "cjson", "bit", "struct", "cmsgpack",
                                       "redis"};
    for (size_t i = 0; i < GB_ARRAY_LEN(libs); i++)
        seal_global(L, g, libs[i]);
    /* Strings index the sealed string table; their metatable is sealed too. */
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);
    lua_getfield(L, g, "string");
    lua_setfield(L, -2, "__index");
    gb_lua_push_readonly(L, -1);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 2);

    push_strict_proxy(L, g, true);
    lua_pushvalue(L, -1);
    lua_setfield(L, g, "_G");
    lua_pushvalue(L, -1);
    vm->proxy_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_replace(L, LUA_GLOBALSINDEX);
    vm->lookup_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushvalue(L, g);
    vm->globals_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

gb_lua_vm *gb_lua_vm_new(gb_engine *eng, uint64_t *rand_state, void (*api)(lua_State *L, gb_lua_vm *vm))
{
    gb_lua_vm *vm = gb_calloc(1, sizeof *vm);
    vm->eng = eng;
    vm->rand_state = rand_state;
    gb_lua_heap_init(&vm->small);
    vm->L = lua_newstate(vm_alloc, vm);
    if (!vm->L) {
        gb_log(GB_LOG_WARNING, "Lua: cannot create an interpreter (out of memory)");
        abort();
    }
    lua_pushcfunction(vm->L, vm_setup);
    lua_pushlightuserdata(vm->L, vm);
    lua_pushlightuserdata(vm->L, (void *)&api);
    if (lua_pcall(vm->L, 2, 0, 0) != 0) {
        gb_log(GB_LOG_WARNING, "Lua: setting up the interpreter failed: %s", lua_tostring(vm->L, -1));
        abort();
    }
    lua_gc(vm->L, LUA_GCCOLLECT, 0);
    return vm;
}

void gb_lua_vm_free(gb_lua_vm *vm)
{
    if (!vm)
        return;
    /* A full cycle first, so that lua_close never frees what a collection
     * left half-done still reaches (CVE-2024-46981: Redis's fix, the same
     * call before lua_close on SCRIPT FLUSH). */
    lua_gc(vm->L, LUA_GCCOLLECT, 0);
    lua_close(vm->L);
    gb_lua_heap_release(&vm->small);
    gb_free(vm);
}

size_t gb_lua_block_limit(lua_State *L)
{
    gb_lua_vm *vm = gb_lua_vm_of(L);
    return vm ? (size_t)vm->eng->cfg.proto_max_bulk_len : SIZE_MAX;
}

gb_lua_vm *gb_lua_vm_of(lua_State *L)
{
    lua_pushlightuserdata(L, (void *)&gb_lua_vm_key);
    lua_rawget(L, LUA_REGISTRYINDEX);
    gb_lua_vm *vm = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return vm;
}

void gb_lua_vm_lookup_in(gb_lua_vm *vm)
{
    lua_State *L = vm->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, vm->lookup_ref);
    lua_insert(L, -2);
    lua_setupvalue(L, -2, 1);
    lua_pop(L, 1);
}

void gb_lua_vm_lookup_globals(gb_lua_vm *vm)
{
    lua_rawgeti(vm->L, LUA_REGISTRYINDEX, vm->globals_ref);
    gb_lua_vm_lookup_in(vm);
}

void gb_lua_vm_set_global(gb_lua_vm *vm, const char *name)
{
    lua_State *L = vm->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, vm->globals_ref);
    lua_insert(L, -2);
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
}

void gb_lua_vm_reset_env(gb_lua_vm *vm)
{
    lua_rawgeti(vm->L, LUA_REGISTRYINDEX, vm->proxy_ref);
    lua_replace(vm->L, LUA_GLOBALSINDEX);
}
