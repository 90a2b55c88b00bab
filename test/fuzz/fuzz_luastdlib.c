/*
 * Fuzz harness: the Lua 5.1 library functions Goblin Core writes itself
 * (engine/script/lib_pattern.c, lib_table.c, lib_string.c) against Lua
 * 5.1's own, on the same fuzzed arguments (docs/fuzzing.md). Those
 * functions must behave as the originals that redis-server runs: the same
 * results, the same errors, the same comparisons in the same order; they
 * differ only where they were written to (a pattern nested past 200 levels
 * is "pattern too complex" where Lua's own matcher overflows the C stack on
 * long enough patterns, and they call the script's hook while they work).
 *
 * Two interpreters per input, each with base, string and table: the
 * reference keeps Lua's functions, the other gets Goblin Core's installed
 * as the script engine installs them. The same driver chunk runs in both
 * with the same arguments, and what it returns (values, tables read index
 * by index, a log of sort's comparisons) or the error it raises must be
 * byte for byte the same. Goblin Core's side runs first under a step
 * budget enforced by its hook; an input that exhausts it (backtracking
 * that would run for minutes) is not run on the reference, which has no
 * hook to stop it.
 *
 * Input: [op u8][a i8][b i8][subject length u8][subject][pattern length
 * u8][pattern][the rest: a replacement or separator string]. By op % 13:
 *   0 find(s, p, a)           1 find(s, p, a, true)    2 match(s, p, a)
 *   3 every gmatch(s, p) result (at most 1,000 matches)
 *   4 gsub(s, p, rest, b)     5 gsub with a table       6 with a function
 *   7 table.sort of a table made from s (a % 3: numbers, strings, mixed)
 *   8 table.sort with a comparison function that logs each pair (b odd: an
 *     inconsistent one)
 *   9 table.insert(t, a, v) (b < 0: table.insert(t, v))
 *  10 table.remove(t, a) (b < 0: table.remove(t))
 *  11 table.concat(t, rest, a, b)
 *  12 string.rep(s, a), upper, lower and reverse
 * (b < 0 passes nil for gsub's count and concat's end.)
 */
#include "fuzz_util.h"
#include "fuzz_lua_heap.h"

#include <lauxlib.h>
#include <lualib.h>

#include "engine/script/lib_pattern.h"
#include "engine/script/lib_string.h"
#include "engine/script/lib_table.h"

/* Hook calls Goblin Core's side may make: its functions call the hook
 * every GB_SCRIPT_C_STEPS (100,000) steps, the VM every HOOK_COUNT
 * instructions. */
#define HOOK_BUDGET 20
#define HOOK_COUNT 1000000
#define BUDGET_ERROR "fuzz: step budget spent"
#define TOO_COMPLEX "pattern too complex"

static const char DRIVER[] =
    "local op, s, p, a, b, rest = ...\n"
    "if b < 0 then b = nil end\n"
    "if op == 0 then return string.find(s, p, a)\n"
    "elseif op == 1 then return string.find(s, p, a, true)\n"
    "elseif op == 2 then return string.match(s, p, a)\n"
    "elseif op == 3 then\n"
    "  local out, n = {}, 0\n"
    "  for x, y, z in string.gmatch(s, p) do\n"
    "    out[n + 1], out[n + 2], out[n + 3] = x, y or false, z or false\n"
    "    n = n + 3\n"
    "    if n >= 3000 then break end\n"
    "  end\n"
    "  return out\n"
    "elseif op == 4 then return string.gsub(s, p, rest, b)\n"
    "elseif op == 5 then\n"
    "  local map = {x = false, y = 1.5, z = {}}\n"
    "  for i = 1, #rest - 1, 2 do map[string.sub(rest, i, i)] = string.sub(rest, i + 1, i + 1) end\n"
    "  return string.gsub(s, p, map, b)\n"
    "elseif op == 6 then\n"
    "  return string.gsub(s, p, function(c, d)\n"
    "    if c == 'a' then return nil elseif c == 'b' then return false\n"
    "    elseif c == 'c' then return {} elseif c == 'd' then return 7 end\n"
    "    return rest .. tostring(c) .. tostring(d)\n"
    "  end, b)\n"
    "elseif op == 12 then\n"
    "  return string.rep(s, a), string.upper(s), string.lower(s), string.reverse(s)\n"
    "end\n"
    "local t = {}\n"
    "for i = 1, #s do\n"
    "  local c = string.byte(s, i)\n"
    "  local kind = a % 3\n"
    "  if kind == 0 or (kind == 2 and c % 4 == 0) then t[i] = c % 17 - 8 else t[i] = string.char(97 + c % 7) end\n"
    "end\n"
    "if op == 7 then table.sort(t) return t\n"
    "elseif op == 8 then\n"
    "  local log = {}\n"
    "  local odd = b and b % 2 == 1\n"
    "  table.sort(t, function(x, y)\n"
    "    log[#log + 1] = tostring(x) .. ',' .. tostring(y)\n"
    "    if #log > 20000 then error('too many comparisons') end\n"
    "    if odd then return (#log + string.byte(tostring(x))) % 3 == 0 end\n"
    "    return tostring(x) < tostring(y)\n"
    "  end)\n"
    "  return t, log\n"
    "elseif op == 9 then\n"
    "  if b then table.insert(t, a, 'v') else table.insert(t, 'v') end\n"
    "  return t, #t\n"
    "elseif op == 10 then\n"
    "  local r\n"
    "  if b then r = table.remove(t, a) else r = table.remove(t) end\n"
    "  return r, t, #t\n"
    "elseif op == 11 then\n"
    "  if a % 5 == 0 then t[2] = {} end\n"
    "  return table.concat(t, rest, a, b)\n"
    "end\n";

static int hook_calls;

static void budget_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (++hook_calls > HOOK_BUDGET)
        luaL_error(L, BUDGET_ERROR);
}

/* Opens lib (luaopen_*), leaving its table on the stack for install. */
static void open_lib(lua_State *L, lua_CFunction lib, void (*install)(lua_State *))
{
    lua_pushcfunction(L, lib);
    lua_call(L, 0, 1);
    if (install)
        install(L);
    lua_pop(L, 1);
}

static void install_strings(lua_State *L)
{
    gb_lua_install_strings(L);
    gb_lua_install_patterns(L);
}

static lua_State *new_state(fuzz_lua_heap *heap, bool goblin)
{
    lua_State *L = lua_newstate(fuzz_lua_heap_alloc, heap);
    FUZZ_CHECK(L != NULL, "no Lua state");
    open_lib(L, luaopen_base, NULL);
    open_lib(L, luaopen_table, goblin ? gb_lua_install_table : NULL);
    open_lib(L, luaopen_string, goblin ? install_strings : NULL);
    return L;
}

typedef struct text {
    char *buf;
    size_t len, cap;
} text;

static void put(text *t, const void *p, size_t n)
{
    if (t->len + n > t->cap) {
        t->cap = (t->len + n) * 2 + 64;
        t->buf = realloc(t->buf, t->cap);
        FUZZ_CHECK(t->buf != NULL, "out of memory");
    }
    memcpy(t->buf + t->len, p, n);
    t->len += n;
}

static void put_str(text *t, const char *s) { put(t, s, strlen(s)); }

/* Writes the value at idx: its type, then its bytes. A table is read at
 * the indexes -2..#t+2 and 1..300 without lua_next, whose order depends on
 * the table's layout rather than its contents. */
static void put_value(text *t, lua_State *L, int idx, int depth)
{
    char num[64];
    switch (lua_type(L, idx)) {
    case LUA_TNIL:
        put_str(t, "nil");
        break;
    case LUA_TBOOLEAN:
        put_str(t, lua_toboolean(L, idx) ? "true" : "false");
        break;
    case LUA_TNUMBER:
        snprintf(num, sizeof num, "n:%.17g", lua_tonumber(L, idx));
        put_str(t, num);
        break;
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        snprintf(num, sizeof num, "s%zu:", n);
        put_str(t, num);
        put(t, s, n);
        break;
    }
    case LUA_TTABLE: {
        if (depth > 0) {
            put_str(t, "table");
            break;
        }
        int border = (int)lua_objlen(L, idx);
        snprintf(num, sizeof num, "{#%d", border);
        put_str(t, num);
        int last = border + 2 > 300 ? border + 2 : 300;
        for (int i = -2; i <= last; i++) {
            lua_rawgeti(L, idx, i);
            if (!lua_isnil(L, -1)) {
                snprintf(num, sizeof num, " [%d]=", i);
                put_str(t, num);
                put_value(t, L, lua_gettop(L), depth + 1);
            }
            lua_pop(L, 1);
        }
        put_str(t, "}");
        break;
    }
    default:
        put_str(t, lua_typename(L, lua_type(L, idx)));
        break;
    }
    put_str(t, "\n");
}

typedef struct call_args {
    int op, a, b;
    const char *subject, *pattern, *rest;
    size_t subject_len, pattern_len, rest_len;
} call_args;

/* Runs the driver on L; returns what it returned or raised, as text. */
static text run(lua_State *L, const call_args *in, bool *failed)
{
    text out = {0};
    FUZZ_CHECK(luaL_loadbuffer(L, DRIVER, sizeof DRIVER - 1, "=driver") == 0, "driver: %s", lua_tostring(L, -1));
    lua_pushinteger(L, in->op);
    lua_pushlstring(L, in->subject, in->subject_len);
    lua_pushlstring(L, in->pattern, in->pattern_len);
    lua_pushinteger(L, in->a);
    lua_pushinteger(L, in->b);
    lua_pushlstring(L, in->rest, in->rest_len);
    *failed = lua_pcall(L, 6, LUA_MULTRET, 0) != 0;
    if (*failed)
        put_str(&out, "error: ");
    for (int i = 1; i <= lua_gettop(L); i++)
        put_value(&out, L, i, 0);
    lua_settop(L, 0);
    return out;
}

/* The next length-prefixed piece of the input. */
static const char *piece(const uint8_t **p, const uint8_t *end, size_t *len)
{
    size_t want = *p < end ? *(*p)++ : 0;
    *len = want < (size_t)(end - *p) ? want : (size_t)(end - *p);
    const char *s = (const char *)*p;
    *p += *len;
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    call_args in = {.op = data[0] % 13, .a = (int8_t)data[1], .b = (int8_t)data[2]};
    const uint8_t *p = data + 3, *end = data + size;
    in.subject = piece(&p, end, &in.subject_len);
    in.pattern = piece(&p, end, &in.pattern_len);
    in.rest = (const char *)p;
    in.rest_len = (size_t)(end - p);

    fuzz_lua_heap goblin_heap = {0}, lua_heap = {0};
    lua_State *G = new_state(&goblin_heap, true);
    hook_calls = 0;
    lua_sethook(G, budget_hook, LUA_MASKCOUNT, HOOK_COUNT);
    bool goblin_failed, lua_failed;
    text got = run(G, &in, &goblin_failed);
    lua_close(G);
    /* (a failed run's text starts "error: ", so got.buf is set) */
    bool skip = goblin_failed && (memmem(got.buf, got.len, BUDGET_ERROR, strlen(BUDGET_ERROR)) ||
                                  memmem(got.buf, got.len, TOO_COMPLEX, strlen(TOO_COMPLEX)));
    if (!skip) {
        lua_State *R = new_state(&lua_heap, false);
        text want = run(R, &in, &lua_failed);
        lua_close(R);
        FUZZ_CHECK(got.len == want.len && memcmp(got.buf, want.buf, got.len) == 0,
                   "op %d a %d b %d: Goblin Core's\n%.*s\nLua 5.1's\n%.*s", in.op, in.a, in.b, (int)got.len, got.buf,
                   (int)want.len, want.buf);
        free(want.buf);
    }
    if (fuzz_verbose())
        fprintf(stderr, "op %d: %s\n", in.op, skip ? "over the budget or too complex" : "same as Lua 5.1");
    free(got.buf);
    return 0;
}
