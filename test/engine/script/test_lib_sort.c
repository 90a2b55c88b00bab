/*
 * table.sort as Goblin Core writes it (engine/script/lib_sort.c), on a bare
 * interpreter: it sorts, raises Lua 5.1's errors, and calls the script's
 * hook while it compares, so a long sort without a comparison function
 * can be stopped. (test_scripting_hardening.py compares its results with
 * redis-server's on random tables.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lualib.h>

#include "engine/script/lib_sort.h"

static lua_State *new_lua(void)
{
    lua_State *L = luaL_newstate();
    assert_non_null(L);
    lua_pushcfunction(L, luaopen_base);
    lua_call(L, 0, 0);
    lua_pushcfunction(L, luaopen_table);
    lua_call(L, 0, 1);
    lua_pushcfunction(L, gb_lua_table_sort);
    lua_setfield(L, -2, "sort");
    lua_pop(L, 1);
    return L;
}

static const char *run(lua_State *L, const char *chunk)
{
    lua_settop(L, 0);
    if (luaL_loadstring(L, chunk) != 0 || lua_pcall(L, 0, 1, 0) != 0)
        return lua_tostring(L, -1);
    const char *r = lua_tostring(L, -1);
    return r ? r : "(not a string)";
}

static void test_sorts_and_raises_as_lua_5_1(void **state)
{
    (void)state;
    lua_State *L = new_lua();
    static const char *const cases[][2] = {
        {"local t = {5, 3, 9, 1, 7} table.sort(t) return table.concat(t, ',')", "1,3,5,7,9"},
        {"local t = {'b', 'c', 'a'} table.sort(t, function(a, b) return a > b end) return table.concat(t, ',')",
         "c,b,a"},
        {"local t = {} for i = 1, 5000 do t[i] = (i * 7919) % 5000 end table.sort(t) "
         "for i = 2, 5000 do if t[i - 1] > t[i] then return 'unsorted' end end return 'sorted'",
         "sorted"},
        {"local t = {} table.sort(t) return 'empty'", "empty"},
        {"return select(2, pcall(table.sort, {1, 'x', 3}))", "attempt to compare string with number"},
        {"return select(2, pcall(table.sort, {3, 2, 1}, 5))", "bad argument #2 to '?' (function expected, got number)"},
        {"local t = {} for i = 1, 20 do t[i] = i % 7 end "
         "return select(2, pcall(table.sort, t, function() return true end))",
         "invalid order function for sorting"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = run(L, cases[i][0]);
        if (strcmp(got, cases[i][1]) != 0)
            fail_msg("%s\n  gave %s\n  expected %s", cases[i][0], got, cases[i][1]);
    }
    lua_close(L);
}

static int hook_calls;

static void stopping_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (++hook_calls == 3)
        luaL_error(L, "stopped by the hook");
}

/* 200,000 numbers take about 3.5 million comparisons in C, none of them a
 * Lua instruction: the hook is called by the sort (every 100,000), and its
 * error stops it. With a comparison function the count goes on too. */
static void test_a_long_sort_calls_the_hook(void **state)
{
    (void)state;
    lua_State *L = new_lua();
    assert_string_equal(run(L, "t = {} for i = 1, 200000 do t[i] = (i * 7919) % 200000 end return 'filled'"),
                        "filled");
    static const char *const chunks[] = {
        "return select(2, pcall(table.sort, t))",
        "return select(2, pcall(table.sort, t, function(a, b) return a > b end))",
    };
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        hook_calls = 0;
        /* far more instructions than the chunks run: the calls come from the sort */
        lua_sethook(L, stopping_hook, LUA_MASKCOUNT, 1000000000);
        const char *got = run(L, chunks[i]);
        lua_sethook(L, NULL, 0, 0);
        assert_non_null(strstr(got, "stopped by the hook"));
        assert_int_equal(hook_calls, 3);
    }
    lua_close(L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sorts_and_raises_as_lua_5_1),
        cmocka_unit_test(test_a_long_sort_calls_the_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
