/*
 * The functions of Lua 5.1's table library that write, and table.concat,
 * written for Goblin Core: table.insert, table.remove, table.sort and
 * table.concat, with Lua 5.1's arguments, results and errors, and three
 * things Lua 5.1's lack: Redis's read-only tables and the script's hook
 * (below), and a concat built in one growing block (at block_builder).
 *
 * Read-only tables. Scripts see the globals and the libraries through
 * read-only proxies (script_vm.c); Redis 7.0 refuses a write to them
 * inside the VM, so a call that would write raises "Attempt to modify a
 * readonly table" at its first write, and one that writes nothing (a
 * remove from an empty table, a sort of fewer than two elements) raises
 * nothing. These functions do the same. Being called from the script
 * directly, their other errors name the script's line and the function,
 * as Redis's do ("user_script:1: bad argument #1 to 'insert' ...").
 *
 * The hook. table.sort is Lua 5.1's quicksort comparison for
 * comparison: the same elements are compared in the same order and moved
 * the same way, so whatever a comparison cannot decide comes out as in
 * Redis: the order of ties (0 and -0, equal keys under a comparison
 * function), of NaNs, which pair of mixed types raises "attempt to
 * compare", and when an inconsistent function raises "invalid order
 * function for sorting". Without a comparison function every comparison
 * happens in C (lua_lessthan), so a sort of millions of elements, or of an
 * input that drives the median-of-three pivot to its quadratic worst case,
 * runs for seconds to hours inside one call where the VM's count hook
 * never runs. Each comparison here is a step of script_steps.h, and every
 * GB_SCRIPT_C_STEPS of them the hook runs: busy-reply-threshold, SCRIPT
 * KILL and FUNCTION LOAD's timeout reach a sort as they reach a loop.
 * The moves of insert and remove (2^31 of them for table.insert(t, -2^31,
 * v), which Lua 5.1 allows) and the fields of concat count the same way.
 */
#include "engine/script/lib_table.h"

#include <lauxlib.h>
#include <stdbool.h>
#include <string.h>

#include "engine/script/script_steps.h"
#include "engine/script/script_vm.h"

/* Raises Redis's error if the table at index 1 is read-only; called just
 * before a function's first write. */
static void check_writable(lua_State *L)
{
    if (gb_lua_is_readonly(L, 1))
        gb_lua_raise_readonly(L);
}

/* The length of the table argument (Lua 5.1's aux_getn). */
static int table_length(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    return (int)lua_objlen(L, 1);
}

/* ---- table.insert, table.remove ------------------------------------------------------- */

static int table_insert(lua_State *L)
{
    int end = table_length(L) + 1; /* the first empty element */
    int pos;
    switch (lua_gettop(L)) {
    case 2:
        pos = end;
        check_writable(L);
        break;
    case 3: {
        pos = luaL_checkint(L, 2);
        if (pos > end)
            end = pos;
        check_writable(L);
        /* t[pos..] up by one; Lua 5.1 checks no position, so a pos of
         * -2^31 means 2^31 moves: counted, as a sort's comparisons. */
        gb_script_steps steps = GB_SCRIPT_STEPS_INIT;
        for (int i = end; i > pos; i--) {
            lua_rawgeti(L, 1, i - 1);
            lua_rawseti(L, 1, i);
            gb_script_steps_count(L, &steps, 1);
        }
        break;
    }
    default:
        return luaL_error(L, "wrong number of arguments to 'insert'");
    }
    lua_rawseti(L, 1, pos);
    return 0;
}

static int table_remove(lua_State *L)
{
    int end = table_length(L);
    int pos = luaL_optint(L, 2, end);
    if (pos < 1 || pos > end) /* also an empty table: nothing to remove */
        return 0;
    check_writable(L);
    lua_rawgeti(L, 1, pos); /* the result */
    gb_script_steps steps = GB_SCRIPT_STEPS_INIT;
    for (; pos < end; pos++) { /* t[pos+1..] down by one */
        lua_rawgeti(L, 1, pos + 1);
        lua_rawseti(L, 1, pos);
        gb_script_steps_count(L, &steps, 1);
    }
    lua_pushnil(L);
    lua_rawseti(L, 1, end);
    return 1;
}

/* ---- table.concat ---------------------------------------------------------------------- */

/* A result built in one block on the Lua stack, grown by doubling up to
 * the interpreter's block limit: every byte is copied once per doubling
 * at most, where Lua 5.1's luaL_Buffer copies the separator a byte at a
 * time and each byte again at every merge of its 8 KB pieces (a
 * concatenation reaching the 512 MB limit held the engine 38 s in C). A
 * block the limit refuses raises Lua's "not enough memory". */
#define BLOCK_HEADER_ROOM 256

typedef struct block_builder {
    lua_State *L;
    int slot; /* the block's stack index (nil while the block is `first`) */
    char *data;
    size_t len, cap, limit;
    char first[1024]; /* a short result is built here, on the C stack */
} block_builder;

static void builder_init(block_builder *b, lua_State *L)
{
    b->L = L;
    b->limit = gb_lua_block_limit(L);
    b->data = b->first;
    b->cap = sizeof b->first;
    b->len = 0;
    lua_pushnil(L); /* the slot a grown block takes */
    b->slot = lua_gettop(L);
}

static void builder_add(block_builder *b, const char *bytes, size_t n)
{
    if (n > b->cap - b->len) {
        size_t need = b->len + n; /* both within the limit: no overflow */
        /* Doubling stops short of the limit by more than a userdata's
         * header, so that any result that fits is built. */
        size_t ceiling = b->limit > BLOCK_HEADER_ROOM ? b->limit - BLOCK_HEADER_ROOM : b->limit;
        size_t cap = b->cap > ceiling / 2 ? ceiling : b->cap * 2;
        if (cap < need)
            cap = need; /* past the limit: refused */
        char *grown = lua_newuserdata(b->L, cap);
        memcpy(grown, b->data, b->len);
        lua_replace(b->L, b->slot);
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, bytes, n);
    b->len += n;
}

/* Appends t[i], which must be a string or a number (as its string). */
static void builder_add_field(block_builder *b, int i)
{
    lua_State *L = b->L;
    lua_rawgeti(L, 1, i);
    if (!lua_isstring(L, -1))
        luaL_error(L, "invalid value (%s) at index %d in table for 'concat'", luaL_typename(L, -1), i);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len); /* converts the copy, not t[i] */
    builder_add(b, s, len);
    lua_pop(L, 1);
}

static int table_concat(lua_State *L)
{
    size_t sep_len;
    const char *sep = luaL_optlstring(L, 2, "", &sep_len);
    luaL_checktype(L, 1, LUA_TTABLE);
    int i = luaL_optint(L, 3, 1);
    int last = lua_isnoneornil(L, 4) ? (int)lua_objlen(L, 1) : luaL_checkint(L, 4);
    block_builder b;
    builder_init(&b, L);
    gb_script_steps steps = GB_SCRIPT_STEPS_INIT;
    /* up to last - 1 first: i++ past last = INT_MAX would overflow */
    for (; i < last; i++) {
        builder_add_field(&b, i);
        builder_add(&b, sep, sep_len);
        gb_script_steps_count(L, &steps, 1);
    }
    if (i == last)
        builder_add_field(&b, i);
    lua_pushlstring(L, b.data, b.len);
    return 1;
}

/* ---- table.sort ------------------------------------------------------------------------ */

typedef struct sorter {
    lua_State *L;
    bool by_function; /* argument 2 is the comparison; otherwise '<' */
    bool writable;    /* the table was checked before a first write */
    gb_script_steps steps;
} sorter;

/* Whether the value at stack index a sorts before the one at b (both
 * negative, relative to the top). */
static bool sorts_before(sorter *s, int a, int b)
{
    lua_State *L = s->L;
    gb_script_steps_count(L, &s->steps, 1);
    if (!s->by_function)
        return lua_lessthan(L, a, b) != 0;
    lua_pushvalue(L, 2);
    lua_pushvalue(L, a - 1); /* the function moved both down by one */
    lua_pushvalue(L, b - 2); /* and a's copy by one more */
    lua_call(L, 2, 1);
    bool before = lua_toboolean(L, -1) != 0;
    lua_pop(L, 1);
    return before;
}

/* Pops two values: the top into t[i], the one under it into t[j]. */
static void store_two(sorter *s, int i, int j)
{
    if (!s->writable) {
        check_writable(s->L);
        s->writable = true;
    }
    lua_rawseti(s->L, 1, i);
    lua_rawseti(s->L, 1, j);
}

static int invalid_order(lua_State *L)
{
    return luaL_error(L, "invalid order function for sorting");
}

/* Sorts t[lo..hi]: the median of t[lo], t[mid], t[hi] as the pivot, parked
 * at hi - 1 during the partition; the smaller side by recursion (so the
 * depth stays under log2 n), the larger by the loop. */
static void sort_range(sorter *s, int lo, int hi)
{
    lua_State *L = s->L;
    while (lo < hi) {
        lua_rawgeti(L, 1, lo);
        lua_rawgeti(L, 1, hi);
        if (sorts_before(s, -1, -2)) /* t[hi] before t[lo]: swap them */
            store_two(s, lo, hi);
        else
            lua_pop(L, 2);
        if (hi - lo == 1)
            return;
        int mid = (lo + hi) / 2;
        lua_rawgeti(L, 1, mid);
        lua_rawgeti(L, 1, lo);
        if (sorts_before(s, -2, -1)) { /* t[mid] before t[lo] */
            store_two(s, mid, lo);
        } else {
            lua_pop(L, 1);
            lua_rawgeti(L, 1, hi);
            if (sorts_before(s, -1, -2)) /* t[hi] before t[mid] */
                store_two(s, mid, hi);
            else
                lua_pop(L, 2);
        }
        if (hi - lo == 2)
            return;
        /* t[lo] <= pivot <= t[hi]: park the pivot at hi - 1 and keep a copy
         * on the stack; only lo + 1 .. hi - 2 are left to partition. */
        lua_rawgeti(L, 1, mid);
        lua_pushvalue(L, -1);
        lua_rawgeti(L, 1, hi - 1);
        store_two(s, mid, hi - 1);
        int i = lo, j = hi - 1;
        for (;;) {
            /* t[lo..i] <= pivot <= t[j..hi] */
            while (lua_rawgeti(L, 1, ++i), sorts_before(s, -1, -2)) {
                if (i > hi)
                    invalid_order(L);
                lua_pop(L, 1);
            }
            while (lua_rawgeti(L, 1, --j), sorts_before(s, -3, -1)) {
                if (j < lo)
                    invalid_order(L);
                lua_pop(L, 1);
            }
            if (j < i) {
                lua_pop(L, 3); /* the pivot, t[i], t[j] */
                break;
            }
            store_two(s, i, j);
        }
        lua_rawgeti(L, 1, hi - 1);
        lua_rawgeti(L, 1, i);
        store_two(s, hi - 1, i); /* the pivot to its place, i */
        if (i - lo < hi - i) {
            sort_range(s, lo, i - 1);
            lo = i + 1;
        } else {
            sort_range(s, i + 1, hi);
            hi = i - 1;
        }
    }
}

static int table_sort(lua_State *L)
{
    int n = table_length(L);
    luaL_checkstack(L, 40, ""); /* as Lua 5.1: the partition's values */
    if (!lua_isnoneornil(L, 2))
        luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_settop(L, 2);
    sorter s = {.L = L, .by_function = !lua_isnil(L, 2), .writable = false, .steps = GB_SCRIPT_STEPS_INIT};
    sort_range(&s, 1, n);
    return 0;
}

void gb_lua_install_table(lua_State *L)
{
    lua_pushcfunction(L, table_insert);
    lua_setfield(L, -2, "insert");
    lua_pushcfunction(L, table_remove);
    lua_setfield(L, -2, "remove");
    lua_pushcfunction(L, table_sort);
    lua_setfield(L, -2, "sort");
    lua_pushcfunction(L, table_concat);
    lua_setfield(L, -2, "concat");
}
