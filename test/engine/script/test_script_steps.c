/*
 * The library functions Goblin Core writes itself because Lua 5.1's loop
 * in C where the script's hook never runs: pattern matching
 * (engine/script/lib_pattern.c), table.sort and table.insert
 * (lib_table.c), on a bare interpreter. Each gives Lua 5.1's results and
 * errors (the integration tests compare many more with redis-server), the
 * matcher bounds its nesting so a long pattern stays off the end of the C
 * stack, and all of them call the hook while they work (script_steps.h),
 * through which a script is stopped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lualib.h>

#include "engine/script/lib_pattern.h"
#include "engine/script/lib_table.h"

/* base, table and string, with Goblin Core's table functions and patterns */
static lua_State *new_lua(void)
{
    lua_State *L = luaL_newstate();
    assert_non_null(L);
    lua_pushcfunction(L, luaopen_base);
    lua_call(L, 0, 0);
    lua_pushcfunction(L, luaopen_table);
    lua_call(L, 0, 1);
    gb_lua_install_table(L);
    lua_pop(L, 1);
    lua_pushcfunction(L, luaopen_string);
    lua_call(L, 0, 1);
    gb_lua_install_patterns(L);
    lua_pop(L, 1);
    return L;
}

/* Runs chunk; returns its one result, or its error, as a string. */
static const char *run(lua_State *L, const char *chunk)
{
    lua_settop(L, 0);
    if (luaL_loadstring(L, chunk) != 0 || lua_pcall(L, 0, 1, 0) != 0)
        return lua_tostring(L, -1);
    const char *r = lua_tostring(L, -1);
    return r ? r : "(not a string)";
}

static void expect_results(lua_State *L, const char *const (*cases)[2], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *got = run(L, cases[i][0]);
        if (strcmp(got, cases[i][1]) != 0)
            fail_msg("%s\n  gave %s\n  expected %s", cases[i][0], got, cases[i][1]);
    }
}

static int hook_calls;

static void stopping_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (++hook_calls == 3)
        luaL_error(L, "stopped by the hook");
}

/* Runs chunk under a count hook set far beyond the instructions the chunk
 * executes, so that every call comes from C: the third stops it. */
static void expect_stopped_by_the_hook(lua_State *L, const char *chunk)
{
    hook_calls = 0;
    lua_sethook(L, stopping_hook, LUA_MASKCOUNT, 1000000000);
    const char *got = run(L, chunk);
    lua_sethook(L, NULL, 0, 0);
    if (!strstr(got, "stopped by the hook"))
        fail_msg("%s\n  gave %s", chunk, got);
    assert_int_equal(hook_calls, 3);
}

static void test_results_of_lua_5_1(void **state)
{
    (void)state;
    lua_State *L = new_lua();
    static const char *const cases[][2] = {
        {"return table.concat({string.find('hello world', 'o w')}, ',')", "5,7"},
        {"return table.concat({string.match('key=value', '(%w+)=(%w+)')}, ',')", "key,value"},
        {"return table.concat({string.match('hello', '()ll()')}, ',')", "3,5"},
        {"return string.match('f(a(b)c)d', '%b()')", "(a(b)c)"},
        {"return string.match('THE (quick) fox', '%f[%a]%a+', 5)", "quick"},
        {"return (string.gsub('hello', '', '-'))", "-h-e-l-l-o-"},
        {"return (string.gsub('hello', 'l', '%%%0'))", "he%l%lo"},
        {"return #(string.gsub('hello', 'l', '%'))", "5"}, /* a trailing '%' adds a zero byte */
        {"local r = {} for k, v in string.gmatch('a=1, b=2', '(%w+)=(%w+)') do r[#r + 1] = k .. v end "
         "return table.concat(r, ',')",
         "a1,b2"},
        {"return tostring(string.find('^a', '^a'))", "nil"},
        {"local r = {} for w in string.gmatch('^a', '^a') do r[#r + 1] = w end return r[1]", "^a"},
        {"return tostring(string.gfind == string.gmatch)", "true"},
        {"return (string.gsub(string.rep('ab', 5000), 'b', 'cd')):sub(-4)", "dacd"},
        {"return select(2, pcall(string.find, 'abc', '[a'))", "malformed pattern (missing ']')"},
        {"return select(2, pcall(string.find, 'abc', '%'))", "malformed pattern (ends with '%')"},
        {"return select(2, pcall(string.gsub, 'abc', '(a)', '%2'))", "invalid capture index"},
        {"return select(2, pcall(string.find, 'abc', string.rep('()', 33)))", "too many captures"},
    };
    expect_results(L, cases, sizeof cases / sizeof cases[0]);
    lua_close(L);
}

/* Lua 5.1 recurses once per nested item without a limit; this one stops at
 * 200 levels ('a?' x 199 is 200 with the call that starts it). */
static void test_nesting_is_bounded(void **state)
{
    (void)state;
    lua_State *L = new_lua();
    assert_string_equal(run(L, "return tostring(string.find(string.rep('a', 199), string.rep('a?', 199)))"), "1");
    assert_string_equal(run(L, "return select(2, pcall(string.find, string.rep('a', 200), string.rep('a?', 200)))"),
                        "pattern too complex");
    assert_string_equal(
        run(L, "return select(2, pcall(string.gsub, string.rep('a', 200000), string.rep('a?', 200000), ''))"),
        "pattern too complex");
    assert_string_equal(run(L, "return select(2, pcall(string.match, string.rep('a', 300), string.rep('a*', 300)))"),
                        "pattern too complex");
    lua_close(L);
}

/* 2^40 steps of backtracking in one C call: the count hook the VM would
 * call every so many instructions is called by the matcher too, and its
 * error stops the match. */
static void test_a_backtracking_pattern_calls_the_hook(void **state)
{
    (void)state;
    lua_State *L = new_lua();
    static const char *const chunks[] = {
        "return select(2, pcall(string.find, string.rep('a', 40), string.rep('a?', 40) .. 'b'))",
        "return select(2, pcall(string.gsub, string.rep('a', 40), string.rep('a?', 40) .. 'b', 'x'))",
        ("local p = string.rep('a?', 40) .. 'b' "
         "return select(2, pcall(function() for w in string.gmatch(string.rep('a', 40), p) do end end))"),
    };
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++)
        expect_stopped_by_the_hook(L, chunks[i]);
    /* Without a hook nothing is called, and a bounded pattern just runs. */
    assert_string_equal(run(L, "return tostring(string.find(string.rep('a', 12), string.rep('a?', 12) .. 'b'))"),
                        "nil");
    lua_close(L);
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
    expect_results(L, cases, sizeof cases / sizeof cases[0]);
    lua_close(L);
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
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++)
        expect_stopped_by_the_hook(L, chunks[i]);
    lua_close(L);
}

/* Lua 5.1 checks no position in table.insert: one far below the table
 * moves every element between, 2^31 of them here, in C. */
static void test_a_far_insert_calls_the_hook(void **state)
{
    (void)state;
    lua_State *L = new_lua();
    expect_stopped_by_the_hook(L, "local t = {1, 2, 3} return select(2, pcall(table.insert, t, -2^31, 'x'))");
    lua_close(L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_results_of_lua_5_1),
        cmocka_unit_test(test_nesting_is_bounded),
        cmocka_unit_test(test_a_backtracking_pattern_calls_the_hook),
        cmocka_unit_test(test_sorts_and_raises_as_lua_5_1),
        cmocka_unit_test(test_a_long_sort_calls_the_hook),
        cmocka_unit_test(test_a_far_insert_calls_the_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
