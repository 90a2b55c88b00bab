/*
 * Fuzz harness: the libraries scripts get, called directly with fuzzed
 * arguments (docs/fuzzing.md): bit.* (engine/script/lib_bit.c),
 * struct.pack/unpack/size (lib_struct.c), cmsgpack.pack/unpack/unpack_one/
 * unpack_limit (lib_cmsgpack.c), and the system's lua-cjson 2.1.0 behind
 * engine/script/cjson_guard.c (encode, decode and every setting), on a
 * fresh Lua 5.1 state per input whose heap is capped at 64 MB.
 *
 * Input: up to 24 calls, each [function u8][argument count u8 % 6] and
 * the arguments, each [kind u8] and then, by kind % 12:
 *   0 nil  1 false/true [u8]  2 an int32 [4]  3 a double's bytes [8]
 *   4 an edge number [u8]: 0, +-1, +-2^31, 2^31-1, +-2^32, 2^52, 2^53,
 *     +-2^63, 2^64, 1e300, +-inf, NaN, -0.0, 0.5, -0.5, 1.5, 2.5
 *   5 a string [u8 length][bytes]  6 a long string [u16 length][bytes]
 *   7 a struct format [u8 length][bytes, each one of "<>!xbBhHlLTiIfdcs0-9 "]
 *   8 a table [u8: count % 8, bit 3 map] of values (keys: small integers,
 *     strings, edge numbers), at most 3 deep
 *   9 the first result of the previous call (a packed string, a decoded
 *     table...)  10 a table that holds itself  11 cjson.null
 * Function 31 and 32 are round trips: cmsgpack.unpack(cmsgpack.pack(v))
 * and cjson.decode(cjson.encode(v)).
 *
 * Checks: nothing crashes, no sanitizer report or leak; every error is a
 * Lua error with a string message; bit.* results are integers within
 * int32, tohex has at most 8 digits, and a few identities hold (bxor of a
 * value with itself, bnot twice, rol as two shifts); a packed value
 * unpacks, except a map key that packed as nil; JSON that the encoder
 * wrote decodes while the settings are the defaults.
 *
 * Known CVEs each has a regression input under regressions/lualib/ (named
 * after it) and, where the bug was a crash, a test in
 * test/integration/test_scripting_hardening.py.
 */
#include "fuzz_util.h"
#include "fuzz_lua_heap.h"

#include <lauxlib.h>
#include <lualib.h>
#include <math.h>

#include "engine/script/script_vm.h"

int luaopen_bit(lua_State *L);
int luaopen_struct(lua_State *L);
int luaopen_cmsgpack(lua_State *L);
int luaopen_cjson(lua_State *L);

#define MAX_CALLS 24
#define MAX_TABLE_DEPTH 3

static const char *const functions[] = {
    "bit.tobit",       "bit.tohex",        "bit.bnot",          "bit.band",
    "bit.bor",         "bit.bxor",         "bit.lshift",        "bit.rshift",
    "bit.arshift",     "bit.rol",          "bit.ror",           "bit.bswap",
    "struct.pack",     "struct.unpack",    "struct.size",       "cmsgpack.pack",
    "cmsgpack.unpack", "cmsgpack.unpack_one", "cmsgpack.unpack_limit", "cjson.encode",
    "cjson.decode",    "cjson.encode_max_depth", "cjson.decode_max_depth", "cjson.encode_sparse_array",
    "cjson.encode_number_precision", "cjson.encode_invalid_numbers", "cjson.decode_invalid_numbers",
    "cjson.encode_keep_buffer", "struct.pack",  "cmsgpack.pack",   "cjson.encode",
};
#define NFUNCTIONS (sizeof functions / sizeof functions[0])
#define ROUND_TRIP_MSGPACK NFUNCTIONS
#define ROUND_TRIP_JSON (NFUNCTIONS + 1)

static const double edges[] = {0.0, 1.0, -1.0, 2147483648.0, -2147483648.0, 2147483647.0, 4294967296.0,
                               -4294967296.0, 4503599627370496.0, 9007199254740992.0, 9223372036854775808.0,
                               -9223372036854775808.0, 18446744073709551616.0, 1e300, 0.5, -0.5, 1.5, 2.5, -0.0};

static double edge_number(uint8_t k)
{
    size_t n = sizeof edges / sizeof edges[0];
    if (k % (n + 3) < n)
        return edges[k % (n + 3)];
    switch (k % (n + 3) - n) {
    case 0:
        return INFINITY;
    case 1:
        return -INFINITY;
    default:
        return NAN;
    }
}

typedef struct state {
    lua_State *L;
    fuzz_in in;
    int last_ref;    /* the previous call's first result */
    int identities_ref; /* check_bit_identities's function, once compiled */
    bool settings_changed; /* a cjson setting was called */
} state;

static void push_bytes(state *s, size_t n)
{
    n = GB_MIN(n, s->in.left);
    lua_pushlstring(s->L, (const char *)s->in.p, n);
    s->in.p += n;
    s->in.left -= n;
}

static void push_format(state *s)
{
    static const char alphabet[] = "<>!xbBhHlLTiIfdcs0123456789 ";
    size_t n = fuzz_u8(&s->in);
    n = GB_MIN(n, s->in.left);
    char buf[256];
    for (size_t i = 0; i < n; i++)
        buf[i] = alphabet[fuzz_u8(&s->in) % (sizeof alphabet - 1)];
    lua_pushlstring(s->L, buf, n);
}

static void push_value(state *s, int depth);

/* A key: small integers (arrays), strings, or an edge number (NaN is not
 * a key: Lua refuses it). */
static void push_key(state *s)
{
    uint8_t k = fuzz_u8(&s->in);
    if (k < 128) {
        lua_pushnumber(s->L, k % 16 + 1);
    } else if (k < 224) {
        char name[4] = {'k', (char)('a' + k % 26), 0, 0};
        lua_pushstring(s->L, name);
    } else {
        double d = edge_number(k);
        lua_pushnumber(s->L, isnan(d) ? 0 : d);
    }
}

static void push_table(state *s, int depth)
{
    uint8_t shape = fuzz_u8(&s->in);
    int count = shape % 8;
    lua_State *L = s->L;
    lua_createtable(L, 0, 0);
    for (int i = 1; i <= count && s->in.left; i++) {
        if (shape & 8)
            push_key(s);
        else
            lua_pushnumber(L, i);
        push_value(s, depth + 1);
        lua_settable(L, -3);
    }
}

static void push_value(state *s, int depth)
{
    lua_State *L = s->L;
    uint8_t kind = fuzz_u8(&s->in);
    switch (kind % 12) {
    case 0:
        lua_pushnil(L);
        break;
    case 1:
        lua_pushboolean(L, fuzz_u8(&s->in) & 1);
        break;
    case 2: {
        uint32_t v = fuzz_u16(&s->in);
        v |= (uint32_t)fuzz_u16(&s->in) << 16;
        lua_pushnumber(L, (int32_t)v);
        break;
    }
    case 3: {
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++)
            bits = bits << 8 | fuzz_u8(&s->in);
        double d;
        memcpy(&d, &bits, sizeof d);
        lua_pushnumber(L, d);
        break;
    }
    case 4:
        lua_pushnumber(L, edge_number(fuzz_u8(&s->in)));
        break;
    case 5:
        push_bytes(s, fuzz_u8(&s->in));
        break;
    case 6:
        push_bytes(s, fuzz_u16(&s->in));
        break;
    case 7:
        push_format(s);
        break;
    case 8:
        if (depth >= MAX_TABLE_DEPTH)
            lua_pushnumber(L, depth);
        else
            push_table(s, depth);
        break;
    case 9:
        lua_rawgeti(L, LUA_REGISTRYINDEX, s->last_ref);
        break;
    case 10: /* one reference to itself: cmsgpack.pack walks n^16 paths of a table holding itself n times */
        lua_createtable(L, 1, 0);
        lua_pushvalue(L, -1);
        lua_rawseti(L, -2, 1);
        break;
    default:
        lua_getglobal(L, "cjson");
        lua_getfield(L, -1, "null");
        lua_remove(L, -2);
        break;
    }
}

/* Pushes lib.fn. */
static void push_function(lua_State *L, const char *name)
{
    const char *dot = strchr(name, '.');
    lua_pushlstring(L, name, (size_t)(dot - name));
    lua_rawget(L, LUA_GLOBALSINDEX);
    lua_getfield(L, -1, dot + 1);
    lua_remove(L, -2);
}

/* Calls the function below nargs arguments; returns the number of results
 * (or -1 after an error, which must be a string). */
static int call(lua_State *L, int nargs, const char *name)
{
    int base = lua_gettop(L) - nargs - 1;
    if (lua_pcall(L, nargs, LUA_MULTRET, 0) != 0) {
        FUZZ_CHECK(lua_type(L, -1) == LUA_TSTRING, "%s raised a %s", name, luaL_typename(L, -1));
        if (fuzz_verbose())
            fprintf(stderr, "  %s: error %.200s\n", name, lua_tostring(L, -1));
        lua_pop(L, 1);
        return -1;
    }
    if (fuzz_verbose()) { /* lua_tostring would turn a number result into a string: not called on those */
        int t = lua_gettop(L) > base ? lua_type(L, base + 1) : LUA_TNONE;
        fprintf(stderr, "  %s: %d results, the first %s %.60s %.17g\n", name, lua_gettop(L) - base,
                lua_typename(L, t), t == LUA_TSTRING ? lua_tostring(L, base + 1) : "",
                t == LUA_TNUMBER ? (double)lua_tonumber(L, base + 1) : 0.0);
    }
    return lua_gettop(L) - base;
}

static void check_int32(lua_State *L, int idx, const char *name)
{
    FUZZ_CHECK(lua_type(L, idx) == LUA_TNUMBER, "%s returned a %s", name, luaL_typename(L, idx));
    double d = lua_tonumber(L, idx);
    FUZZ_CHECK(d >= -2147483648.0 && d <= 2147483647.0 && d == floor(d), "%s returned %.17g", name, d);
}

/* The identities of bit on the number at idx (any number: tobit first);
 * the checking function is compiled once per input (registry ref *fn). */
static void check_bit_identities(lua_State *L, int idx, int *fn)
{
    lua_Number x = lua_tonumber(L, idx);
    static const char script[] =
        "local x, n = ... local b = bit.tobit(x) "
        "assert(bit.bxor(x, x) == 0, 'bxor') assert(bit.bnot(bit.bnot(x)) == b, 'bnot') "
        "assert(bit.band(x, -1) == b and bit.bor(x, 0) == b, 'band/bor') "
        "assert(bit.bswap(bit.bswap(x)) == b, 'bswap') "
        "if n > 0 then assert(bit.rol(x, n) == bit.bor(bit.lshift(x, n), bit.rshift(x, 32 - n)), 'rol') "
        "assert(bit.ror(x, n) == bit.rol(x, 32 - n), 'ror') end "
        "assert(bit.arshift(x, 31) == (b < 0 and -1 or 0), 'arshift') "
        "assert(tonumber(bit.tohex(x), 16) == (b < 0 and b + 2^32 or b), 'tohex')";
    if (*fn == LUA_NOREF) {
        int rc = luaL_loadstring(L, script);
        if (rc == LUA_ERRMEM) {
            lua_pop(L, 1);
            return;
        }
        FUZZ_CHECK(rc == 0, "the identity script does not compile");
        *fn = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, *fn);
    lua_pushnumber(L, x);
    lua_pushnumber(L, (lua_Number)((uint64_t)fabs(isfinite(x) ? fmod(x, 32) : 0) % 32));
    int rc = lua_pcall(L, 2, 0, 0);
    if (rc == LUA_ERRMEM) {
        lua_pop(L, 1);
        return;
    }
    FUZZ_CHECK(rc == 0, "bit identity broken for %.17g: %s", (double)x, lua_tostring(L, -1));
}

static void check_results(state *s, size_t fn, int nres, int first)
{
    lua_State *L = s->L;
    const char *name = functions[fn];
    if (nres <= 0)
        return;
    if (fn < 12) { /* bit.* */
        FUZZ_CHECK(nres == 1, "%s returned %d values", name, nres);
        if (fn == 1) {
            FUZZ_CHECK(lua_type(L, first) == LUA_TSTRING && lua_objlen(L, first) <= 8, "tohex gave %s",
                       lua_tostring(L, first));
        } else {
            check_int32(L, first, name);
            check_bit_identities(L, first, &s->identities_ref);
        }
    }
}

/* cmsgpack.unpack(cmsgpack.pack(v)): packing never fails on what Lua can
 * hold; unpacking what was packed fails only on a key packed as nil. */
static void round_trip_msgpack(state *s)
{
    lua_State *L = s->L;
    push_function(L, "cmsgpack.unpack");
    push_function(L, "cmsgpack.pack");
    push_value(s, 0);
    int rc = lua_pcall(L, 1, 1, 0);
    if (rc == LUA_ERRMEM || (rc && strstr(lua_tostring(L, -1), "not enough memory"))) {
        lua_pop(L, 2);
        return;
    }
    FUZZ_CHECK(rc == 0, "cmsgpack.pack failed: %s", lua_tostring(L, -1));
    rc = lua_pcall(L, 1, LUA_MULTRET, 0);
    if (rc) {
        const char *e = lua_tostring(L, -1);
        FUZZ_CHECK(e && (strstr(e, "table index is nil") || strstr(e, "not enough memory") ||
                         strstr(e, "stack overflow")),
                   "cmsgpack.unpack of packed data failed: %s", e ? e : "?");
    }
}

/* cjson.decode(cjson.encode(v)), while the settings are the defaults. */
static void round_trip_json(state *s)
{
    lua_State *L = s->L;
    push_function(L, "cjson.decode");
    push_function(L, "cjson.encode");
    push_value(s, 0);
    if (lua_pcall(L, 1, 1, 0) != 0) {
        lua_pop(L, 2);
        return; /* not serialisable (NaN, a function, a cycle, sparse ...) */
    }
    size_t len;
    const char *json = lua_tolstring(L, -1, &len);
    FUZZ_CHECK(json != NULL, "cjson.encode returned a %s", luaL_typename(L, -1));
    int rc = lua_pcall(L, 1, 1, 0);
    if (rc && !s->settings_changed) {
        const char *e = lua_tostring(L, -1);
        FUZZ_CHECK(strstr(e, "not enough memory"), "cjson.decode of cjson.encode's output failed: %s", e);
    }
}

static lua_State *new_state(fuzz_lua_heap *heap)
{
    lua_State *L = lua_newstate(fuzz_lua_heap_alloc, heap);
    FUZZ_CHECK(L != NULL, "no Lua state");
    static const struct {
        const char *name;
        lua_CFunction open;
    } libs[] = {{"", luaopen_base},          {LUA_STRLIBNAME, luaopen_string}, {LUA_TABLIBNAME, luaopen_table},
                {LUA_MATHLIBNAME, luaopen_math}, {"bit", luaopen_bit},      {"struct", luaopen_struct},
                {"cmsgpack", luaopen_cmsgpack}, {"cjson", luaopen_cjson}};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        lua_pushcfunction(L, libs[i].open);
        lua_pushstring(L, libs[i].name);
        FUZZ_CHECK(lua_pcall(L, 1, 1, 0) == 0, "opening %s failed", libs[i].name);
        if (libs[i].name[0])
            lua_setglobal(L, libs[i].name);
        else
            lua_pop(L, 1);
    }
    lua_getglobal(L, "cjson");
    gb_lua_guard_cjson(L, -1);
    lua_pop(L, 1);
    return L;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_lua_heap heap = {0};
    state s = {.L = new_state(&heap), .in = {data, size}, .identities_ref = LUA_NOREF};
    lua_State *L = s.L;
    lua_pushnil(L);
    s.last_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    for (int c = 0; c < MAX_CALLS && s.in.left; c++) {
        size_t fn = fuzz_u8(&s.in) % (NFUNCTIONS + 2);
        lua_settop(L, 0);
        if (fn == ROUND_TRIP_MSGPACK) {
            round_trip_msgpack(&s);
            continue;
        }
        if (fn == ROUND_TRIP_JSON) {
            round_trip_json(&s);
            continue;
        }
        if (strstr(functions[fn], "cjson.") && !strstr(functions[fn], "code"))
            s.settings_changed = true;
        int nargs = fuzz_u8(&s.in) % 6;
        push_function(L, functions[fn]);
        for (int i = 0; i < nargs; i++)
            push_value(&s, 0);
        int nres = call(L, nargs, functions[fn]);
        check_results(&s, fn, nres, 1);
        if (nres > 0) {
            lua_pushvalue(L, 1);
            lua_rawseti(L, LUA_REGISTRYINDEX, s.last_ref);
        }
    }
    lua_close(L);
    FUZZ_CHECK(heap.used == 0, "Lua's heap kept %zu bytes after lua_close", heap.used);
    return 0;
}
