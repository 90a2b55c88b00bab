/*
 * The interpreter scripts run in (engine/script/script_vm.c), through
 * EVAL on a whole engine: the sandbox refuses every escape with Redis's
 * texts, math.random is Redis's rand48, the libraries answer, Lua's
 * memory is the engine's (counted, refused rather than fatal, and given
 * back once collected).
 */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/base/mem.h"
#include "engine/script/scripting.h"
#include "engine_harness.h"

static int setup(void **state)
{
    *state = harness_new(NULL);
    return 0;
}

static int teardown(void **state)
{
    harness_free(*state);
    return 0;
}

/* EVAL <script> 0 (the script may contain spaces: argv built by hand). */
static const char *eval(harness *h, const char *script)
{
    gb_slice argv[3] = {gb_slice_cstr("EVAL"), gb_slice_cstr(script), gb_slice_cstr("0")};
    h->out.len = 0;
    h->out.buf[0] = '\0';
    gb_gate_execute(h->c, 3, argv);
    return h->out.buf;
}

static void expect_error(harness *h, const char *script, const char *text)
{
    const char *r = eval(h, script);
    if (r[0] != '-' || !strstr(r, text))
        fail_msg("%s\n  replied %s\n  expected an error with: %s", script, r, text);
}

static void test_escapes_are_refused(void **state)
{
    harness *h = *state;
    static const char *const missing[] = {"os", "io", "require", "loadfile", "dofile", "debug", "getfenv", "setfenv",
                                          "package", "newproxy", "print", "module"};
    for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++) {
        char script[128], want[128];
        snprintf(script, sizeof script, "return %s", missing[i]);
        snprintf(want, sizeof want, "user_script:1: Script attempted to access nonexistent global variable '%s'",
                 missing[i]);
        expect_error(h, script, want);
    }
    static const char *const writes[] = {
        "x = 1", "_G.x = 1", "rawset(_G, 'x', 1)", "setmetatable(_G, {})", "string.x = 1", "math.random = nil",
        "redis.call = nil", "cjson.encode = nil", "getmetatable('').__index = {}", "getmetatable('').__index.x = 1",
        "table.insert(_G, 1)", "rawset(cjson, 'x', 1)",
        "setmetatable(string, {})", "getmetatable(_G).__index = 1",
    };
    for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++)
        expect_error(h, writes[i], "Attempt to modify a readonly table");
    /* Bytecode never loads, by either loader. */
    assert_non_null(strstr(eval(h, "local f, e = loadstring(string.dump(function() return 1 end)) return e"),
                           "binary chunks are not allowed"));
    assert_non_null(strstr(eval(h, "local s = string.dump(function() end) local once = false "
                                   "local f, e = load(function() if once then return nil end once = true return s end) return e"),
                           "binary chunks are not allowed"));
    /* Text chunks load, in the same sandbox. */
    assert_string_equal(eval(h, "return loadstring('return 1 + 1')()"), ":2");
    expect_error(h, "loadstring('y = 1')()", "Attempt to modify a readonly table");
    /* Nothing any of that tried is visible afterwards. */
    assert_string_equal(eval(h, "return {type(rawget(_G, 'x')), type(string.upper), type(redis.call), #_G}"),
                        "*? $nil $function $function :0");
}

static void test_globals_listed_and_keys_argv(void **state)
{
    harness *h = *state;
    /* pairs(_G) sees the globals Redis 7.0 has (KEYS/ARGV once set). */
    eval(h, "return 1");
    assert_string_equal(eval(h, "local t = {} for k in pairs(_G) do t[#t + 1] = k end table.sort(t) return table.concat(t, ',')"),
                        "$ARGV,KEYS,_G,_VERSION,__redis__err__handler,assert,bit,cjson,cmsgpack,collectgarbage,coroutine,"
                        "error,gcinfo,getmetatable,ipairs,load,loadstring,math,next,pairs,pcall,rawequal,rawget,rawset,"
                        "redis,select,setmetatable,string,struct,table,tonumber,tostring,type,unpack,xpcall");
}

static void test_math_random_is_rand48(void **state)
{
    harness *h = *state;
    /* A fresh server's first draws, as redis-server 7.0 gives them. */
    assert_string_equal(eval(h, "return math.random(100)"), ":40");
    assert_string_equal(eval(h, "return math.random(100)"), ":85");
    /* rand48 is drand48's algorithm: the same sequence as the C library's. */
    uint64_t st;
    gb_rand48_seed(&st, 12345);
    srand48(12345);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(gb_rand48_next(&st), (int32_t)lrand48());
    assert_string_equal(eval(h, "math.randomseed(7) local a = math.random() math.randomseed(7) return a == math.random()"),
                        ":1");
    expect_error(h, "return math.random(0)", "interval is empty");
}

static void test_libraries(void **state)
{
    harness *h = *state;
    assert_string_equal(eval(h, "return cjson.encode({1, 2, {a = 'x'}})"), "$[1,2,{\"a\":\"x\"}]");
    assert_string_equal(eval(h, "return cjson.decode('[1, \"two\", null]')[2]"), "$two");
    assert_string_equal(eval(h, "return bit.tohex(bit.bxor(0xff, 0x0f))"), "$000000f0");
    assert_string_equal(eval(h, "return struct.unpack('>i2', struct.pack('>i2', -2))"), ":-2");
    assert_string_equal(eval(h, "return struct.size('!4 b i')"), ":8");
    expect_error(h, "return struct.pack('i40', 1)", "integral size 40 is larger than limit of 32");
    expect_error(h, "return struct.unpack('i4', 'ab')", "data string too short");
    /* i0 reads nothing and is 0, as Redis (fuzz_lua found its sign mask
     * shifted by -1) */
    assert_string_equal(eval(h, "return struct.unpack('<i0', 'a')"), ":0");
    assert_string_equal(eval(h, "return ({struct.unpack('>i0 <I2', 'abc')})[2]"), ":25185");
    /* cmsgpack: the encodings Redis's library picks, and back. */
    assert_string_equal(eval(h, "local s = cmsgpack.pack(1, -1, 200, -200, 70000, 1.5, 'ab', true, false, {1, 2}, {a = 1}) "
                                "return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end))"),
                        "$01ffccc8d1ff38ce00011170ca3fc00000a26162c3c292010281a16101");
    assert_string_equal(eval(h, "local t = cmsgpack.unpack(cmsgpack.pack({1, {x = 'y'}, 2^40, -2^40, 0.1})) "
                                "return {t[1], t[2].x, t[3] == 2^40 and 1 or 0, t[4] == -2^40 and 1 or 0, t[5] == 0.1 and 1 or 0}"),
                        "*? :1 $y :1 :1 :1");
    assert_string_equal(eval(h, "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2), 0)}"), "*? :1 :1");
    expect_error(h, "return cmsgpack.unpack('\\145')", "Missing bytes in input.");
    expect_error(h, "return cmsgpack.unpack('\\193')", "Bad data format in input.");
    /* Nesting is bounded by Lua's stack, as in Redis, with its text. */
    expect_error(h, "return cmsgpack.unpack(string.rep('\\145', 5000) .. '\\1')",
                 "stack overflow (in function mp_decode_to_lua_array)");
    expect_error(h, "return cmsgpack.unpack('\\221\\127\\255\\255\\255')", "Missing bytes in input.");
    /* Tables nested deeper than 16 levels pack as nil. */
    assert_string_equal(eval(h, "local t = {} local c = t for i = 1, 20 do c[1] = {} c = c[1] end "
                                "return #cmsgpack.pack(t)"), ":17");
}

/* The corners where the libraries used to differ from redis-server 7.0.15
 * (each expectation is what redis-server answers) or to crash. */
static void test_library_corners_as_redis(void **state)
{
    harness *h = *state;
    /* bit: CVE-2024-31449, tohex's count of -2^31 (LuaBitOp 1.0.2 wrote
     * past its 8-byte buffer); 2^31 wraps to it. */
    assert_string_equal(eval(h, "return bit.tohex(1, -2147483648)"), "$00000001");
    assert_string_equal(eval(h, "return bit.tohex(0xabc, 2^31)"), "$00000ABC");
    assert_string_equal(eval(h, "return bit.tohex(0xabc, -3)"), "$ABC");
    assert_string_equal(eval(h, "return {bit.tobit(2^32 + 5), bit.tobit(0/0), bit.tobit(1e300), bit.arshift(-256, 4), "
                                "bit.rol(5, 0), bit.ror(5, 32), bit.bswap(0x12345678)}"),
                        "*? :5 :0 :-2013235812 :-16 :5 :5 :2018915346");
    expect_error(h, "return bit.tobit('abc')", "bad argument #1 to 'tobit' (number expected, got string)");
    /* cmsgpack: unpack_limit(s, 0, 0) decodes everything, without an offset */
    assert_string_equal(eval(h, "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 0, 0)}"), "*? :1 :2 :3");
    assert_string_equal(eval(h, "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 0, 1)}"), "*? :1");
    expect_error(h, "return cmsgpack.unpack_limit('abc', -1)", "Invalid request to unpack with offset of 0 and limit of 3.");
    expect_error(h, "return cmsgpack.unpack_one('abc', 4)", "Start offset 4 greater than input length 3.");
    /* uint64 of 2^63 and more comes out negative */
    assert_string_equal(eval(h, "return tostring(cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\255'))"),
                        "$-1");
    /* bin is not a type Redis's decoder knows, whole or truncated */
    expect_error(h, "return cmsgpack.unpack('\\196\\5\\1')", "Bad data format in input.");
    expect_error(h, "return cmsgpack.unpack('\\196\\1A')", "Bad data format in input.");
    expect_error(h, "return cmsgpack.unpack('\\129\\192\\1')", "table index is nil");
    assert_string_equal(eval(h, "return {cmsgpack._NAME, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION}"),
                        "*? $cmsgpack $Copyright (C) 2012, Salvatore Sanfilippo $MessagePack C implementation for Lua");
    /* struct */
    expect_error(h, "return struct.size('s')", "(option 's' has no fixed size)");
    expect_error(h, "return struct.size('c0')", "(option 'c0' has no fixed size)");
    expect_error(h, "return struct.unpack('b', 'abc', -1)", "bad argument #2 to 'unpack' (data string too short)");
    assert_string_equal(eval(h, "return {struct.unpack('', 'abc', -5)}"), "*? :-5");
    expect_error(h, "return struct.unpack('c2147483647', 'abc', 2)", "data string too short");
    expect_error(h, "return struct.unpack('i2147483647', 'abc')", "integral size 2147483647 is larger than limit of 32");
    assert_string_equal(eval(h, "return struct.size('c2147483647c2147483647')"), ":4294967294");
    assert_string_equal(eval(h, "return {struct.unpack('dc0', struct.pack('d', 1e300) .. 'abc')}"), "*? $ :9");
    assert_string_equal(eval(h, "return table.concat({struct.pack('>I8', 2^64):byte(1, -1)}, ',')"), "$0,0,0,0,0,0,0,0");
    assert_string_equal(eval(h, "return table.concat({struct.pack('>i8', 0/0):byte(1, -1)}, ',')"), "$128,0,0,0,0,0,0,0");
    assert_string_equal(eval(h, "return tostring(struct.unpack('>i9', string.rep('\\0', 8) .. '\\128'))"), "$-128");
    /* the globals: rawget sees them, as in Redis (whose _G is the table) */
    assert_string_equal(eval(h, "return {type(rawget(_G, 'redis')), type(rawget(_G, 'KEYS')), type(rawget(bit, 'tohex'))}"),
                        "*? $table $table $function");
    /* errors: an argument error from redis.pcall has no stats field; CR,
     * LF at either end of a message go, and the text ends at a NUL */
    assert_string_equal(eval(h, "local t = redis.pcall('get', {}) return t.ignore_error_stats_update == nil"), ":1");
    assert_string_equal(eval(h, "return redis.error_reply('\\r\\nabc\\r\\n')"), "-ERR abc");
    assert_string_equal(eval(h, "return redis.error_reply('-CODE \\nx\\0y')"), "-CODE x");
}

static void test_memory_is_the_engines(void **state)
{
    harness *h = *state;
    gb_scripting *sys = gb_scripting_of(h->eng);
    assert_non_null(sys);
    size_t before = gb_mem_used();
    assert_string_equal(eval(h, "local t = {} for i = 1, 100 do t[i] = string.rep('x', 100000) .. i end return #t"),
                        ":100");
    /* A library keeps 10 MB alive: the engine's counter sees it. */
    gb_slice load[3] = {gb_slice_cstr("FUNCTION"), gb_slice_cstr("LOAD"),
                        gb_slice_cstr("#!lua name=m\nlocal keep = {}\nredis.register_function('grow', function() "
                                      "for i = 1, 10 do keep[i] = string.rep('y', 1000000) .. i end return #keep end)")};
    h->out.len = 0;
    gb_gate_execute(h->c, 3, load);
    assert_string_equal(h->out.buf, "$m");
    gb_slice fcall[3] = {gb_slice_cstr("FCALL"), gb_slice_cstr("grow"), gb_slice_cstr("0")};
    h->out.len = 0;
    gb_gate_execute(h->c, 3, fcall);
    assert_string_equal(h->out.buf, ":10");
    assert_true(gb_mem_used() > before + 10000000);
}

/* Lua's small objects live in the interpreter's own chunks
 * (engine/script/script_heap.c): once collected, their chunks go back to
 * the engine, so a script that made 16 MB of small tables leaves nothing. */
static void test_small_blocks_go_back(void **state)
{
    harness *h = *state;
    assert_string_equal(eval(h, "collectgarbage('collect') return 1"), ":1");
    size_t before = gb_mem_used();
    assert_string_equal(eval(h, "local t = {} for i = 1, 200000 do t[i] = {i} end return #t"), ":200000");
    assert_true(gb_mem_used() > before + 16 * 1024 * 1024); /* still uncollected */
    assert_string_equal(eval(h, "collectgarbage('collect') return 1"), ":1");
    size_t after = gb_mem_used();
    if (after > before + 1024 * 1024)
        fail_msg("after collecting, %zu bytes more than before (%zu)", after - before, before);
}

static void small_limits(gb_settings *s)
{
    s->proto_max_bulk_len = 1024 * 1024;
    s->maxmemory = 1; /* far over it: Lua keeps its 32 MB floor */
}

static void test_allocations_refused_not_fatal(void **state)
{
    (void)state;
    harness *h = harness_new(small_limits);
    /* One block over proto-max-bulk-len. */
    expect_error(h, "return string.rep('x', 2 * 1024 * 1024)", "not enough memory");
    /* Lua's heap past max(maxmemory, 32 MB). */
    expect_error(h, "local t = {} for i = 1, 64 do t[i] = string.rep('y', 1000000) .. i end return #t",
                 "not enough memory");
    /* Under the floor, scripts still run although used memory is over maxmemory. */
    assert_string_equal(eval(h, "local t = {} for i = 1, 8 do t[i] = string.rep('z', 1000000) .. i end return #t"), ":8");
    assert_string_equal(eval(h, "return 'alive'"), "$alive");
    harness_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_escapes_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_globals_listed_and_keys_argv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_math_random_is_rand48, setup, teardown),
        cmocka_unit_test_setup_teardown(test_libraries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_library_corners_as_redis, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_is_the_engines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_blocks_go_back, setup, teardown),
        cmocka_unit_test(test_allocations_refused_not_fatal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
