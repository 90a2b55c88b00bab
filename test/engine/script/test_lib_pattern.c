/*
 * Lua 5.1's pattern matching as Goblin Core writes it
 * (engine/script/lib_pattern.c), on a bare interpreter: the results of
 * Lua 5.1 (the integration tests compare many more with redis-server),
 * the nesting bound that keeps a long pattern off the end of the C stack,
 * and the hook that a backtracking pattern calls, through which a script
 * is stopped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lualib.h>

#include "engine/script/lib_pattern.h"

static lua_State *new_lua(void)
{
    lua_State *L = luaL_newstate();
    assert_non_null(L);
    lua_pushcfunction(L, luaopen_base);
    lua_call(L, 0, 0);
    lua_pushcfunction(L, luaopen_table);
    lua_call(L, 0, 0);
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
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = run(L, cases[i][0]);
        if (strcmp(got, cases[i][1]) != 0)
            fail_msg("%s\n  gave %s\n  expected %s", cases[i][0], got, cases[i][1]);
    }
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

static int hook_calls;

static void stopping_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    if (++hook_calls == 3)
        luaL_error(L, "stopped by the hook");
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
        "return select(2, pcall(function() for w in string.gmatch(string.rep('a', 40), string.rep('a?', 40) .. 'b') "
        "do end end))",
    };
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        hook_calls = 0;
        /* A count far beyond what the chunk itself executes: the calls come
         * from the matcher. */
        lua_sethook(L, stopping_hook, LUA_MASKCOUNT, 1000000000);
        const char *got = run(L, chunks[i]);
        lua_sethook(L, NULL, 0, 0);
        assert_non_null(strstr(got, "stopped by the hook"));
        assert_int_equal(hook_calls, 3);
    }
    /* Without a hook nothing is called, and a bounded pattern just runs. */
    assert_string_equal(run(L, "return tostring(string.find(string.rep('a', 12), string.rep('a?', 12) .. 'b'))"),
                        "nil");
    lua_close(L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_results_of_lua_5_1),
        cmocka_unit_test(test_nesting_is_bounded),
        cmocka_unit_test(test_a_backtracking_pattern_calls_the_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
