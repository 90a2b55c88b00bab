/*
 * PUC Lua 5.1 or LuaJIT for scripts (docs/scripting.md, "Which Lua")?
 * Runs what an EVALSHA of a small script costs the interpreter, with the
 * same source compiled against either library (bench/lua_flavours.sh):
 *
 *   - a state created with a custom allocator (the engine's accounting
 *     needs one; LuaJIT refuses it on x86-64 unless built with GC64);
 *   - per call: KEYS and ARGV tables built from C strings, then a cached
 *     function run under lua_pcall with an error handler, making three
 *     calls into C (as redis.call would) that each push a string reply.
 *
 * Prints calls per second (median of 5 runs of 1,000,000 calls), then
 * whether a count hook (what busy-reply-threshold and SCRIPT KILL rely
 * on) fires inside a tight loop. With LuaJIT, JIT_OFF=1 runs its
 * interpreter only.
 */
#define _POSIX_C_SOURCE 200809L
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#ifdef WITH_LUAJIT
#include <luajit.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t heap;

static void *counted_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    if (nsize == 0) {
        free(ptr);
        heap -= osize;
        return NULL;
    }
    void *q = realloc(ptr, nsize);
    if (q)
        heap = heap - osize + nsize;
    return q;
}

/* Stands in for redis.call: reads its arguments, pushes a reply. */
static int fake_call(lua_State *L)
{
    size_t total = 0;
    for (int i = 1; i <= lua_gettop(L); i++) {
        size_t len;
        lua_tolstring(L, i, &len);
        total += len;
    }
    lua_pushlstring(L, "OK", total ? 2 : 0);
    return 1;
}

static int handler(lua_State *L) { return 1; }

static unsigned long hook_calls;
static void count_hook(lua_State *L, lua_Debug *ar)
{
    (void)L;
    (void)ar;
    hook_calls++;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    lua_State *L = lua_newstate(counted_alloc, NULL);
    if (!L) {
        printf("custom allocator: refused (lua_newstate returned NULL)\n");
        L = luaL_newstate();
    } else {
        printf("custom allocator: accepted\n");
    }
    luaL_openlibs(L);
#ifdef WITH_LUAJIT
    if (getenv("JIT_OFF")) {
        luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
        printf("LuaJIT: JIT compiler off\n");
    }
#endif
    lua_newtable(L);
    lua_pushcfunction(L, fake_call);
    lua_setfield(L, -2, "call");
    lua_setglobal(L, "redis");
    const char *script = "redis.call('SET', KEYS[1], ARGV[1])\n"
                         "redis.call('INCR', KEYS[2])\n"
                         "return redis.call('GET', KEYS[1])\n";
    if (luaL_loadbuffer(L, script, strlen(script), "@user_script") != 0)
        return 1;
    int fn = luaL_ref(L, LUA_REGISTRYINDEX);
    const int calls = 1000000;
    double rates[5];
    for (int run = 0; run < 5; run++) {
        double t0 = now_s();
        for (int i = 0; i < calls; i++) {
            lua_pushcfunction(L, handler);
            lua_createtable(L, 2, 0);
            lua_pushlstring(L, "key:1", 5);
            lua_rawseti(L, -2, 1);
            lua_pushlstring(L, "counter", 7);
            lua_rawseti(L, -2, 2);
            lua_setglobal(L, "KEYS");
            lua_createtable(L, 1, 0);
            lua_pushlstring(L, "value", 5);
            lua_rawseti(L, -2, 1);
            lua_setglobal(L, "ARGV");
            lua_rawgeti(L, LUA_REGISTRYINDEX, fn);
            if (lua_pcall(L, 0, 1, -2) != 0)
                return 1;
            lua_pop(L, 2);
        }
        rates[run] = calls / (now_s() - t0);
    }
    qsort(rates, 5, sizeof rates[0], cmp);
    printf("%s: %.0f calls/s (median of 5), heap counted: %zu bytes\n", LUA_RELEASE, rates[2], heap);
    lua_sethook(L, count_hook, LUA_MASKCOUNT, 100000);
    const char *loop = "local i = 0 while i < 100000000 do i = i + 1 end";
    double t0 = now_s();
    if (luaL_dostring(L, loop) != 0)
        return 1;
    printf("count hook in a tight loop: %lu calls in %.2f s\n", hook_calls, now_s() - t0);
    lua_close(L);
    return 0;
}
