/*
 * The conversion tables of engine/script/script_convert.c (Redis's rules),
 * both ways, on a bare interpreter: replies into Lua values through the
 * sink, Lua values into replies rendered as RESP2 bytes.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lualib.h>

#include "engine/core/engine.h"
#include "engine/script/script_convert.h"
#include "engine/script/script_vm.h"

/* ---- a RESP2 renderer for the reply side ---------------------------------------------- */

typedef struct resp_out {
    char buf[1 << 17];
    size_t len;
    size_t deferred_at[16]; /* where each open deferred header is */
    int ndeferred;
} resp_out;

__attribute__((format(printf, 2, 3))) static void put(resp_out *o, const char *fmt, ...)
{
    size_t room = sizeof o->buf - o->len;
    if (room < 2)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, room, fmt, ap);
    va_end(ap);
    o->len += (size_t)n < room ? (size_t)n : room - 1;
}

static void r_status(void *ctx, const char *s, size_t n) { put(ctx, "+%.*s\r\n", (int)n, s); }
static void r_error(void *ctx, const char *s, size_t n) { put(ctx, "-%.*s\r\n", (int)n, s); }
static void r_int(void *ctx, int64_t v) { put(ctx, ":%lld\r\n", (long long)v); }
static void r_dbl(void *ctx, double v) { put(ctx, ",%.17g\r\n", v); }
static void r_bulk(void *ctx, const char *s, size_t n) { put(ctx, "$%zu\r\n%.*s\r\n", n, (int)n, s); }
static void r_nil(void *ctx) { put(ctx, "$-1\r\n"); }
static void r_array(void *ctx, int64_t n) { put(ctx, "*%lld\r\n", (long long)n); }

/* A deferred header is written as "*?" and patched in place by its count
 * (the tests keep counts below 10, so the width does not change). */
static size_t r_deferred(void *ctx)
{
    resp_out *o = ctx;
    size_t at = o->len;
    put(o, "*?\r\n");
    return at;
}

static void r_set_deferred(void *ctx, size_t handle, int64_t n)
{
    resp_out *o = ctx;
    assert_true(n < 10);
    if (handle + 1 < o->len)
        o->buf[handle + 1] = (char)('0' + n);
}

/* A map's or set's deferred header, RESP3's '%' / '~'. */
static void r_set_deferred_map(void *ctx, size_t handle, int64_t n)
{
    resp_out *o = ctx;
    r_set_deferred(ctx, handle, n);
    o->buf[handle] = '%';
}

static void r_set_deferred_set(void *ctx, size_t handle, int64_t n)
{
    resp_out *o = ctx;
    r_set_deferred(ctx, handle, n);
    o->buf[handle] = '~';
}

static const gb_reply_ops resp_ops = {.status = r_status, .error = r_error, .integer = r_int, .dbl = r_dbl, .bulk = r_bulk,
                                      .nil = r_nil, .array = r_array, .array_deferred = r_deferred,
                                      .set_deferred = r_set_deferred};

static void r3_nil(void *ctx) { put(ctx, "_\r\n"); }
static void r3_map(void *ctx, int64_t npairs) { put(ctx, "%%%lld\r\n", (long long)npairs); }
static void r3_set(void *ctx, int64_t n) { put(ctx, "~%lld\r\n", (long long)n); }
static void r3_boolean(void *ctx, bool v) { put(ctx, "#%c\r\n", v ? 't' : 'f'); }
static void r3_big_number(void *ctx, const char *s, size_t n) { put(ctx, "(%.*s\r\n", (int)n, s); }
static void r3_verbatim(void *ctx, const char format[3], const char *s, size_t n)
{
    put(ctx, "=%zu\r\n%.3s:%.*s\r\n", n + 4, format, (int)n, s);
}

/* A RESP3 caller: maps, sets, null, booleans, big numbers and verbatim
 * strings keep their types. */
static const gb_reply_ops resp3_ops = {.status = r_status, .error = r_error, .integer = r_int, .dbl = r_dbl,
                                       .bulk = r_bulk, .nil = r3_nil, .array = r_array, .map = r3_map, .set = r3_set,
                                       .array_deferred = r_deferred, .set_deferred = r_set_deferred,
                                       .set_deferred_map = r_set_deferred_map,
                                       .set_deferred_set = r_set_deferred_set, .boolean = r3_boolean,
                                       .big_number = r3_big_number, .verbatim = r3_verbatim};

typedef struct fixture {
    gb_engine *eng;
    gb_client c;
    resp_out out;
    lua_State *L;
    gb_lua_sink sink;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    gb_settings s;
    gb_settings_defaults(&s);
    f->eng = gb_engine_create(&s);
    gb_settings_free(&s);
    f->c.eng = f->eng;
    f->c.rops = &resp_ops;
    f->c.rctx = &f->out;
    f->L = luaL_newstate();
    luaL_openlibs(f->L);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    lua_close(f->L);
    gb_engine_free(f->eng);
    free(f);
    return 0;
}

/* Renders the Lua value that `expr` evaluates to. */
static const char *render(fixture *f, const char *expr, int resp)
{
    char code[512];
    snprintf(code, sizeof code, "return %s", expr);
    assert_int_equal(luaL_loadstring(f->L, code), 0);
    assert_int_equal(lua_pcall(f->L, 0, 1, 0), 0);
    f->out.len = 0;
    f->out.buf[0] = '\0';
    gb_lua_reply(&f->c, f->L, resp);
    assert_int_equal(lua_gettop(f->L), 0);
    return f->out.buf;
}

static void test_lua_to_reply(void **state)
{
    fixture *f = *state;
    assert_string_equal(render(f, "'abc'", 2), "$3\r\nabc\r\n");
    assert_string_equal(render(f, "3.99", 2), ":3\r\n");
    assert_string_equal(render(f, "-3.99", 2), ":-3\r\n");
    assert_string_equal(render(f, "true", 2), ":1\r\n");
    assert_string_equal(render(f, "false", 2), "$-1\r\n");
    assert_string_equal(render(f, "nil", 2), "$-1\r\n");
    assert_string_equal(render(f, "true", 3), ":1\r\n");
    assert_string_equal(render(f, "false", 3), ":0\r\n");
    assert_string_equal(render(f, "{1, nil, 3}", 2), "*1\r\n:1\r\n");
    assert_string_equal(render(f, "{1, {2, 'x'}, {}}", 2), "*3\r\n:1\r\n*2\r\n:2\r\n$1\r\nx\r\n*0\r\n");
    assert_string_equal(render(f, "{err = 'MY text'}", 2), "-MY text\r\n");
    assert_string_equal(render(f, "{err = 'a\\r\\nb'}", 2), "-a  b\r\n");
    assert_string_equal(render(f, "{ok = 'fine\\nok'}", 2), "+fine ok\r\n");
    assert_string_equal(render(f, "{err = 5, ok = 'x'}", 2), "+x\r\n"); /* err must be a string */
    assert_string_equal(render(f, "{double = 1.5}", 2), ",1.5\r\n");
    assert_string_equal(render(f, "{big_number = '123'}", 2), "$3\r\n123\r\n");
    assert_string_equal(render(f, "{verbatim_string = {format = 'txt', string = 'v'}}", 2), "$1\r\nv\r\n");
    assert_string_equal(render(f, "{map = {a = 1}}", 2), "*2\r\n$1\r\na\r\n:1\r\n");
    assert_string_equal(render(f, "{set = {s = true}}", 2), "*1\r\n$1\r\ns\r\n");
    assert_string_equal(render(f, "{1, {err = 'E x'}, {ok = 'OK'}}", 2), "*3\r\n:1\r\n-E x\r\n+OK\r\n");
    assert_string_equal(render(f, "function() end", 2), "$-1\r\n");
    /* Numbers C leaves undefined to convert become INT64_MIN, as on x86. */
    assert_string_equal(render(f, "0/0", 2), ":-9223372036854775808\r\n");
    assert_string_equal(render(f, "1e300", 2), ":-9223372036854775808\r\n");
    assert_string_equal(render(f, "-2^63", 2), ":-9223372036854775808\r\n");
    assert_string_equal(render(f, "2^53", 2), ":9007199254740992\r\n");
}

/* Redis answers a RESP3 caller a script's {map=} and {set=} as a map and a
 * set (a RESP2 caller: flat arrays, above). */
static void test_lua_to_resp3_map_and_set(void **state)
{
    fixture *f = *state;
    f->c.rops = &resp3_ops;
    assert_string_equal(render(f, "{map = {a = 1}}", 3), "%1\r\n$1\r\na\r\n:1\r\n");
    assert_string_equal(render(f, "{set = {s = true}}", 3), "~1\r\n$1\r\ns\r\n");
    assert_string_equal(render(f, "{map = {}}", 3), "%0\r\n");
    assert_string_equal(render(f, "{1, {set = {}}}", 3), "*2\r\n:1\r\n~0\r\n");
    f->c.rops = &resp_ops;
}

/* The scalar types RESP3 adds, as redis-server 7.0 sends them to a RESP3
 * caller: booleans only from a script that chose RESP3 (a RESP2 script's
 * true is 1, its false nil), big numbers with CR/LF blanked, verbatim
 * strings with the format's first three characters, space-padded. */
static void test_lua_to_resp3_scalars(void **state)
{
    fixture *f = *state;
    f->c.rops = &resp3_ops;
    assert_string_equal(render(f, "true", 3), "#t\r\n");
    assert_string_equal(render(f, "false", 3), "#f\r\n");
    assert_string_equal(render(f, "true", 2), ":1\r\n");
    assert_string_equal(render(f, "false", 2), "_\r\n");
    assert_string_equal(render(f, "{big_number = '123456789012345678901234567890'}", 2),
                        "(123456789012345678901234567890\r\n");
    assert_string_equal(render(f, "{big_number = '12\\r\\n3'}", 3), "(12  3\r\n");
    assert_string_equal(render(f, "{big_number = 5}", 3), "*0\r\n"); /* must be a string */
    assert_string_equal(render(f, "{verbatim_string = {format = 'txt', string = 'hello'}}", 2), "=9\r\ntxt:hello\r\n");
    assert_string_equal(render(f, "{verbatim_string = {format = 'markdown', string = 'hi'}}", 3), "=6\r\nmar:hi\r\n");
    assert_string_equal(render(f, "{verbatim_string = {format = 'm', string = 'hi'}}", 3), "=6\r\nm  :hi\r\n");
    assert_string_equal(render(f, "{verbatim_string = {string = 'hi'}}", 3), "*0\r\n");
    assert_string_equal(render(f, "{verbatim_string = {format = 'txt'}}", 3), "*0\r\n");
    f->c.rops = &resp_ops;
    /* A RESP2 caller: the integer and bulk-string forms. */
    assert_string_equal(render(f, "false", 3), ":0\r\n");
    assert_string_equal(render(f, "{big_number = '12\\n3'}", 3), "$4\r\n12 3\r\n");
    assert_string_equal(render(f, "{verbatim_string = {format = 'mkd', string = 'a'}}", 3), "$1\r\na\r\n");
}

static void test_self_reference_ends_in_an_error(void **state)
{
    fixture *f = *state;
    assert_int_equal(luaL_dostring(f->L, "local t = {} t[1] = t return t"), 0);
    f->out.len = 0;
    gb_lua_reply(&f->c, f->L, 2);
    /* Nested arrays until Lua's stack limit, then Redis's error. */
    assert_non_null(strstr(f->out.buf, "-ERR reached lua stack limit\r\n"));
}

/* A reply too large to render: its shape in counts. Every element but the
 * top one sits in a container, so a well-formed reply has
 * leaves + containers == 1 + the containers' element counts. */
typedef struct tally {
    int64_t leaves, containers, counted; /* counted: the counts the headers carry */
    int64_t too_large, stack_limit;      /* the two errors */
    int64_t nils;                        /* what the reply announced past its error */
} tally;

static void t_leaf(void *ctx) { ((tally *)ctx)->leaves++; }
static void t_nil(void *ctx)
{
    t_leaf(ctx);
    ((tally *)ctx)->nils++;
}
static void t_error(void *ctx, const char *s, size_t n)
{
    tally *t = ctx;
    t->leaves++;
    if (n >= 26 && memcmp(s, "ERR script reply too large", 26) == 0)
        t->too_large++;
    if (n == 27 && memcmp(s, "ERR reached lua stack limit", 27) == 0)
        t->stack_limit++;
}
static void t_text(void *ctx, const char *s, size_t n) { (void)s, (void)n, t_leaf(ctx); }
static void t_int(void *ctx, int64_t v) { (void)v, t_leaf(ctx); }
static void t_dbl(void *ctx, double v) { (void)v, t_leaf(ctx); }
static void t_bool(void *ctx, bool v) { (void)v, t_leaf(ctx); }
static size_t t_deferred(void *ctx)
{
    ((tally *)ctx)->containers++;
    return 0;
}
static void t_set_deferred(void *ctx, size_t handle, int64_t n) { (void)handle, ((tally *)ctx)->counted += n; }
static void t_set_deferred_map(void *ctx, size_t handle, int64_t npairs) { t_set_deferred(ctx, handle, 2 * npairs); }
static void t_array(void *ctx, int64_t n)
{
    t_deferred(ctx);
    ((tally *)ctx)->counted += n;
}
static void t_map(void *ctx, int64_t npairs) { t_array(ctx, 2 * npairs); }

static const gb_reply_ops tally_ops = {.status = t_text, .error = t_error, .integer = t_int, .dbl = t_dbl,
                                       .bulk = t_text, .nil = t_nil, .array = t_array, .map = t_map,
                                       .set = t_array, .array_deferred = t_deferred,
                                       .set_deferred = t_set_deferred, .set_deferred_map = t_set_deferred_map,
                                       .set_deferred_set = t_set_deferred, .boolean = t_bool};

/* Tallies the reply to the script's value, as a RESP3 caller's. */
static tally tally_reply(fixture *f, const char *script)
{
    tally t = {0};
    assert_int_equal(luaL_dostring(f->L, script), 0);
    f->c.rops = &tally_ops;
    f->c.rctx = &t;
    gb_lua_reply(&f->c, f->L, 3);
    f->c.rops = &resp_ops;
    f->c.rctx = &f->out;
    assert_int_equal(lua_gettop(f->L), 0);
    assert_int_equal(t.leaves + t.containers, 1 + t.counted);
    return t;
}

static void test_a_repeated_table_is_sent_each_time(void **state)
{
    fixture *f = *state;
    /* 500 times a table of 1000: 500,000 elements, under the floor. */
    tally t = tally_reply(f, "local x = {} for i = 1, 1000 do x[i] = i end "
                             "local r = {} for i = 1, 500 do r[i] = x end return r");
    assert_int_equal(t.too_large, 0);
    assert_int_equal(t.containers, 501);
    assert_int_equal(t.leaves, 500 * 1000);
}

static void test_a_reply_past_its_budget_stops_well_formed(void **state)
{
    fixture *f = *state;
    /* A table holding itself 20,000 times: 20,000^depth elements down to
     * the stack limit (the fuzzer's find). The reply stops after a
     * million elements (the floor) with one error, each container sending
     * what it announced (nulls past the error). */
    tally t = tally_reply(f, "local t = {} for i = 0, 20000 do t[i] = t end return t");
    assert_int_equal(t.too_large, 1);
    assert_int_equal(t.stack_limit, 0); /* the budget ends it 52 levels down */
    assert_true(t.nils > 0);
    /* The top, the budget, and one error slot in each container that found
     * it short: here the one at level 53 and its first element's. */
    assert_int_equal(t.leaves + t.containers, 1 + (1 << 20) + 2);

    /* The same through a map: the error takes a key's place, with a null. */
    t = tally_reply(f, "local t = {} local m = {} t.map = m for i = 1, 20000 do m[i] = t end return t");
    assert_int_equal(t.too_large, 1);

    /* And through a set of distinct tables that each hold the set. */
    t = tally_reply(f, "local t = {} local s = {} t.set = s "
                       "for i = 1, 20000 do s[{t, t}] = true end return t");
    assert_int_equal(t.too_large, 1);

    /* A bigger heap buys a bigger budget: half its bytes, in elements. */
    t = tally_reply(f, "local big = {} for i = 1, 400000 do big[i] = 'element ' .. i end "
                       "local t = {big} for i = 2, 200 do t[i] = t end return t");
    assert_int_equal(t.too_large, 1);
    assert_true(t.leaves + t.containers > (1 << 20) + 2);
}

/* ---- reply -> Lua ----------------------------------------------------------------------- */

static void begin(fixture *f, int resp)
{
    lua_settop(f->L, 0);
    gb_lua_sink_begin(&f->sink, f->L, resp);
}

/* Checks the top value with a Lua predicate over `v`. */
static void check(fixture *f, const char *predicate)
{
    char code[512];
    snprintf(code, sizeof code, "local v = ... return %s", predicate);
    assert_int_equal(luaL_loadstring(f->L, code), 0);
    lua_pushvalue(f->L, -2);
    if (lua_pcall(f->L, 1, 1, 0) != 0)
        fail_msg("predicate %s raised %s", predicate, lua_tostring(f->L, -1));
    if (!lua_toboolean(f->L, -1))
        fail_msg("predicate failed: %s", predicate);
    lua_pop(f->L, 1);
}

static void test_reply_to_lua(void **state)
{
    fixture *f = *state;
    const gb_reply_ops *k = &gb_lua_sink_ops;
    begin(f, 2);
    k->integer(&f->sink, -42);
    check(f, "v == -42");
    begin(f, 2);
    k->bulk(&f->sink, "a\0b", 3);
    check(f, "v == 'a\\0b'");
    begin(f, 2);
    k->nil(&f->sink);
    check(f, "v == false");
    begin(f, 3);
    k->nil(&f->sink);
    check(f, "v == nil");
    begin(f, 2);
    k->array(&f->sink, -1);
    check(f, "v == false");
    begin(f, 2);
    k->status(&f->sink, "OK", 2);
    check(f, "type(v) == 'table' and v.ok == 'OK'");
    begin(f, 2);
    k->error(&f->sink, "WRONGTYPE Operation against a key", 33);
    check(f, "v.err == 'WRONGTYPE Operation against a key' and v.ignore_error_stats_update == true");
    assert_true(f->sink.error);
    begin(f, 2);
    k->dbl(&f->sink, 1.5);
    check(f, "v == '1.5'");
    begin(f, 3);
    k->dbl(&f->sink, 1.5);
    check(f, "v.double == 1.5");
    assert_int_equal(f->sink.values, 1);
}

static void test_nested_and_deferred_arrays(void **state)
{
    fixture *f = *state;
    const gb_reply_ops *k = &gb_lua_sink_ops;
    begin(f, 2);
    /* [1, [a, b], [], [deferred: x, [y]], nil] */
    k->array(&f->sink, 5);
    k->integer(&f->sink, 1);
    k->array(&f->sink, 2);
    k->bulk(&f->sink, "a", 1);
    k->bulk(&f->sink, "b", 1);
    k->array(&f->sink, 0);
    size_t h = k->array_deferred(&f->sink);
    k->bulk(&f->sink, "x", 1);
    k->array(&f->sink, 1);
    k->bulk(&f->sink, "y", 1);
    k->set_deferred(&f->sink, h, 2);
    k->nil(&f->sink);
    assert_int_equal(f->sink.values, 1);
    assert_int_equal(f->sink.depth, 0);
    assert_int_equal(lua_gettop(f->L), 1);
    check(f, "#v == 5 and v[1] == 1 and v[2][1] == 'a' and v[2][2] == 'b' and #v[3] == 0 and v[4][1] == 'x' "
             "and v[4][2][1] == 'y' and v[5] == false");
    /* An error inside an array does not make the reply an error. */
    begin(f, 2);
    k->array(&f->sink, 2);
    k->error(&f->sink, "ERR x", 5);
    k->integer(&f->sink, 2);
    assert_false(f->sink.error);
    check(f, "v[1].err == 'ERR x' and v[2] == 2");
}

/* One complete value on the stack, every table closed. */
static void one_value(fixture *f)
{
    assert_int_equal(f->sink.values, 1);
    assert_int_equal(f->sink.depth, 0);
    assert_int_equal(lua_gettop(f->L), 1);
}

/* RESP3 maps, sets and verbatim strings become Redis's {map=}, {set=} and
 * {verbatim_string=} tables; under RESP2 flat arrays and a string. */
static void test_resp3_aggregates_to_lua(void **state)
{
    fixture *f = *state;
    const gb_reply_ops *k = &gb_lua_sink_ops;
    begin(f, 3);
    k->map(&f->sink, 2);
    k->bulk(&f->sink, "a", 1);
    k->integer(&f->sink, 1);
    k->bulk(&f->sink, "b", 1);
    k->array(&f->sink, 1);
    k->bulk(&f->sink, "x", 1);
    one_value(f);
    check(f, "v[1] == nil and v.map.a == 1 and v.map.b[1] == 'x'");
    begin(f, 2);
    k->map(&f->sink, 1);
    k->bulk(&f->sink, "a", 1);
    k->integer(&f->sink, 1);
    one_value(f);
    check(f, "#v == 2 and v[1] == 'a' and v[2] == 1 and v.map == nil");
    begin(f, 3);
    k->set(&f->sink, 2);
    k->bulk(&f->sink, "m", 1);
    k->integer(&f->sink, 5);
    one_value(f);
    check(f, "v.set.m == true and v.set[5] == true");
    /* deferred, and nested in an array */
    begin(f, 3);
    k->array(&f->sink, 2);
    size_t h = k->array_deferred(&f->sink);
    k->bulk(&f->sink, "x", 1);
    k->bulk(&f->sink, "y", 1);
    k->set_deferred_map(&f->sink, h, 1);
    h = k->array_deferred(&f->sink);
    k->bulk(&f->sink, "m", 1);
    k->set_deferred_set(&f->sink, h, 1);
    one_value(f);
    check(f, "v[1].map.x == 'y' and v[2].set.m == true");
    /* a null key cannot be a Lua key: the pair is left out; a null value
     * leaves its key out */
    begin(f, 3);
    k->map(&f->sink, 3);
    k->nil(&f->sink);
    k->bulk(&f->sink, "v", 1);
    k->bulk(&f->sink, "k", 1);
    k->nil(&f->sink);
    k->bulk(&f->sink, "z", 1);
    k->integer(&f->sink, 0);
    one_value(f);
    check(f, "v.map.k == nil and v.map.z == 0 and next(v.map, 'z') == nil");
    begin(f, 3);
    k->verbatim(&f->sink, "mkd", "hi", 2);
    one_value(f);
    check(f, "v.verbatim_string.format == 'mkd' and v.verbatim_string.string == 'hi'");
    begin(f, 2);
    k->verbatim(&f->sink, "txt", "hi", 2);
    one_value(f);
    check(f, "v == 'hi'");
    begin(f, 3);
    k->boolean(&f->sink, true);
    one_value(f);
    check(f, "v == true");
    begin(f, 3);
    k->boolean(&f->sink, false);
    one_value(f);
    check(f, "v == false");
    begin(f, 2);
    k->boolean(&f->sink, true);
    one_value(f);
    check(f, "v == 1");
    begin(f, 3);
    k->big_number(&f->sink, "1234567890123456789012", 22);
    one_value(f);
    check(f, "v.big_number == '1234567890123456789012'");
    begin(f, 2);
    k->big_number(&f->sink, "12", 2);
    one_value(f);
    check(f, "v == '12'");
}

static void test_error_codes(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"-CODE the message", "CODE the message"}, {"-NOSPACE", "ERR NOSPACE"}, {"plain text", "ERR plain text"},
        {"-ERR trailing\r\n", "ERR trailing"},    {"", "ERR "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lua_settop(f->L, 0);
        gb_lua_push_error(f->L, cases[i].in, strlen(cases[i].in));
        lua_getfield(f->L, -1, "err");
        assert_string_equal(lua_tostring(f->L, -1), cases[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lua_to_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lua_to_resp3_scalars, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lua_to_resp3_map_and_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_self_reference_ends_in_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_repeated_table_is_sent_each_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_reply_past_its_budget_stops_well_formed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reply_to_lua, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nested_and_deferred_arrays, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resp3_aggregates_to_lua, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_codes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
