/* transport/resp/resp_parser.c: multibulk and inline requests fed whole,
 * byte by byte and in random splits; every protocol error with Redis's
 * text; limits for unauthenticated clients; hostile counts allocate nothing
 * up front. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/base/mem.h"
#include "engine/base/random.h"
#include "transport/resp/resp_parser.h"

#define MAX_BULK (512LL * 1024 * 1024)

typedef struct parsed {
    int ncmds;
    char cmds[64][8][64]; /* up to 64 commands of 8 args */
    int argc[64];
    int status;           /* last status */
    char err[256];
} parsed;

/* Feeds `input` to a parser in pieces of the given sizes (cycled), the way a
 * connection would: unconsumed bytes stay at the front of a buffer. */
static void feed_as(const char *input, size_t len, const size_t *pieces, size_t npieces, bool unauth,
                    int64_t max_bulk, parsed *out)
{
    memset(out, 0, sizeof *out);
    gb_resp_parser p;
    gb_resp_parser_init(&p, max_bulk);
    p.unauthenticated = unauth;
    char *buf = malloc(len + 1);
    size_t have = 0, fed = 0, pi = 0;
    while (fed < len || have > 0) {
        if (fed < len) {
            size_t n = pieces[pi++ % npieces];
            if (n > len - fed)
                n = len - fed;
            memcpy(buf + have, input + fed, n);
            have += n;
            fed += n;
        }
        size_t pos = 0;
        for (;;) {
            size_t consumed = 0;
            int rc = gb_resp_parse(&p, buf + pos, have - pos, &consumed, out->err, sizeof out->err);
            out->status = rc;
            if (rc == GB_RESP_ERROR) {
                free(buf);
                gb_resp_parser_free(&p);
                return;
            }
            if (rc == GB_RESP_NEED_MORE)
                break;
            gb_slice argv[8];
            assert_true(p.argc <= 8);
            gb_resp_args_to_slices(&p, buf + pos, argv);
            if (p.argc > 0) {
                int k = out->ncmds++;
                out->argc[k] = p.argc;
                for (int i = 0; i < p.argc; i++)
                    snprintf(out->cmds[k][i], 64, "%.*s", (int)argv[i].len, argv[i].ptr);
            }
            gb_resp_parser_reset(&p);
            pos += consumed;
        }
        memmove(buf, buf + pos, have - pos);
        have -= pos;
        if (fed >= len)
            break;
    }
    free(buf);
    gb_resp_parser_free(&p);
}

static void feed(const char *input, size_t len, const size_t *pieces, size_t npieces, parsed *out)
{
    feed_as(input, len, pieces, npieces, false, MAX_BULK, out);
}

static const char PIPELINE[] = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n"
                               "*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n"
                               "PING\r\n"
                               "set \"a b\" 'c d'\r\n"
                               "*0\r\n"
                               "\r\n"
                               "*1\r\n$0\r\n\r\n"
                               "echo \"\\x41\\n\"\n";

static void check_pipeline(const parsed *r)
{
    assert_int_equal(r->status, GB_RESP_NEED_MORE);
    assert_int_equal(r->ncmds, 6);
    assert_int_equal(r->argc[0], 3);
    assert_string_equal(r->cmds[0][0], "SET");
    assert_string_equal(r->cmds[0][2], "value");
    assert_string_equal(r->cmds[1][1], "key");
    assert_string_equal(r->cmds[2][0], "PING");
    assert_string_equal(r->cmds[3][1], "a b");
    assert_string_equal(r->cmds[3][2], "c d");
    assert_int_equal(r->argc[4], 1);
    assert_string_equal(r->cmds[4][0], "");
    assert_string_equal(r->cmds[5][1], "A\n");
}

static void test_whole(void **state)
{
    (void)state;
    parsed r;
    size_t all[] = {sizeof PIPELINE - 1};
    feed(PIPELINE, sizeof PIPELINE - 1, all, 1, &r);
    check_pipeline(&r);
}

static void test_byte_by_byte(void **state)
{
    (void)state;
    parsed r;
    size_t one[] = {1};
    feed(PIPELINE, sizeof PIPELINE - 1, one, 1, &r);
    check_pipeline(&r);
}

static void test_random_splits(void **state)
{
    (void)state;
    gb_random_seed(2024);
    for (int round = 0; round < 2000; round++) {
        size_t pieces[16];
        for (int i = 0; i < 16; i++)
            pieces[i] = 1 + gb_random_below(12);
        parsed r;
        feed(PIPELINE, sizeof PIPELINE - 1, pieces, 16, &r);
        check_pipeline(&r);
    }
}

static void expect_error(const char *input, size_t len, bool unauth, const char *text)
{
    gb_resp_parser p;
    gb_resp_parser_init(&p, MAX_BULK);
    p.unauthenticated = unauth;
    char err[256] = "";
    size_t consumed;
    char *copy = malloc(len); /* inline requests are decoded in place */
    memcpy(copy, input, len);
    int rc = gb_resp_parse(&p, copy, len, &consumed, err, sizeof err);
    assert_int_equal(rc, GB_RESP_ERROR);
    assert_string_equal(err, text);
    free(copy);
    gb_resp_parser_free(&p);
}

static void test_protocol_errors(void **state)
{
    (void)state;
    expect_error("*abc\r\n", strlen("*abc\r\n"), false, "ERR Protocol error: invalid multibulk length");
    expect_error("*2147483648\r\n", strlen("*2147483648\r\n"), false, "ERR Protocol error: invalid multibulk length");
    expect_error("*1\r\n$-1\r\n", strlen("*1\r\n$-1\r\n"), false, "ERR Protocol error: invalid bulk length");
    expect_error("*1\r\n$x\r\n", strlen("*1\r\n$x\r\n"), false, "ERR Protocol error: invalid bulk length");
    expect_error("*1\r\n$536870913\r\n", strlen("*1\r\n$536870913\r\n"), false, "ERR Protocol error: invalid bulk length");
    expect_error("*1\r\n$9223372036854775808\r\n", strlen("*1\r\n$9223372036854775808\r\n"), false, "ERR Protocol error: invalid bulk length");
    expect_error("*1\r\nfoo\r\n", strlen("*1\r\nfoo\r\n"), false, "ERR Protocol error: expected '$', got 'f'");
    expect_error("set \"a b\r\n", strlen("set \"a b\r\n"), false, "ERR Protocol error: unbalanced quotes in request");
    expect_error("set \"a\"b\r\n", strlen("set \"a\"b\r\n"), false, "ERR Protocol error: unbalanced quotes in request");
    expect_error("*11\r\n", strlen("*11\r\n"), true, "ERR Protocol error: unauthenticated multibulk length");
    expect_error("*1\r\n$16385\r\n", strlen("*1\r\n$16385\r\n"), true, "ERR Protocol error: unauthenticated bulk length");
    expect_error("a b c d e f g h i j k\r\n", strlen("a b c d e f g h i j k\r\n"), true, "ERR Protocol error: unauthenticated multibulk length");
    /* Headers the digit fast path leaves to the general conversion give
     * Redis's answers: a leading zero, a sign, trailing garbage, and lengths
     * of 18 and 19 digits (one past the fast path, one past int64). */
    expect_error("*1\r\n$05\r\n", strlen("*1\r\n$05\r\n"), false, "ERR Protocol error: invalid bulk length");
    expect_error("*01\r\n", strlen("*01\r\n"), false, "ERR Protocol error: invalid multibulk length");
    expect_error("*1\r\n$+5\r\n", strlen("*1\r\n$+5\r\n"), false, "ERR Protocol error: invalid bulk length");
    expect_error("*1\r\n$5x\r\n", strlen("*1\r\n$5x\r\n"), false, "ERR Protocol error: invalid bulk length");
    expect_error("*1\r\n$100000000000000000\r\n", strlen("*1\r\n$100000000000000000\r\n"), false,
                 "ERR Protocol error: invalid bulk length");
    expect_error("*1\r\n$99999999999999999999\r\n", strlen("*1\r\n$99999999999999999999\r\n"), false,
                 "ERR Protocol error: invalid bulk length");
}

/* "$0", "*1" and multi-digit lengths take the fast path; a header cut
 * before its "\n" waits for it. */
/* The argument array cannot grow (the fault injector fails its first
 * allocation): both request forms end in "out of memory", never in a
 * misleading protocol error. */
static void test_argument_array_out_of_memory(void **state)
{
    (void)state;
    const char *reqs[] = {"*2\r\n$3\r\nGET\r\n$1\r\na\r\n", "GET \"a\"\r\n"};
    for (size_t i = 0; i < 2; i++) {
        gb_resp_parser p;
        gb_resp_parser_init(&p, 512LL * 1024 * 1024);
        char copy[64], err[256];
        size_t consumed = 0, len = strlen(reqs[i]);
        memcpy(copy, reqs[i], len);
        gb_mem_fault_arm(1, false);
        int rc = gb_resp_parse(&p, copy, len, &consumed, err, sizeof err);
        gb_mem_fault_disarm();
        assert_int_equal(rc, GB_RESP_ERROR);
        assert_true(p.oom);
        assert_string_equal(err, "ERR Protocol error: out of memory");
        gb_resp_parser_free(&p);
    }
}

static void test_header_fast_path(void **state)
{
    (void)state;
    static const char in[] = "*3\r\n$0\r\n\r\n$10\r\n0123456789\r\n$1\r\nx\r\n";
    parsed r;
    for (size_t piece = 1; piece <= sizeof in - 1; piece++) {
        size_t pieces[] = {piece};
        feed(in, sizeof in - 1, pieces, 1, &r);
        assert_int_equal(r.ncmds, 1);
        assert_int_equal(r.argc[0], 3);
        assert_string_equal(r.cmds[0][0], "");
        assert_string_equal(r.cmds[0][1], "0123456789");
        assert_string_equal(r.cmds[0][2], "x");
    }
}

/* Appends one random argument header and (usually) its data: mostly what
 * clients send, sometimes each kind of header the whole-argument fast path
 * leaves to the general path (a leading zero, a sign, garbage, 9 and 10
 * digits, a wrong prefix, a length over the limits), and any byte after
 * each '\r'. */
static size_t random_arg(char *out)
{
    size_t n = 0, len = gb_random_below(20);
    char after = gb_random_below(4) ? '\n' : (char)('A' + gb_random_below(26));
    switch (gb_random_below(12)) {
    case 0: n = (size_t)sprintf(out, "$0%zu\r%c", len, after); break;
    case 1: n = (size_t)sprintf(out, "$+%zu\r%c", len, after); break;
    case 2: n = (size_t)sprintf(out, "$%zux\r%c", len, after); break;
    case 3: n = (size_t)sprintf(out, "$%s\r%c", gb_random_below(2) ? "999999999" : "1000000000", after); break;
    case 4: n = (size_t)sprintf(out, ":%zu\r%c", len, after); break;
    case 5: n = (size_t)sprintf(out, "$%s\r%c", gb_random_below(2) ? "16385" : "-1", after); break;
    case 6: n = (size_t)sprintf(out, "$%zu", len); return n; /* cut short */
    default: n = (size_t)sprintf(out, "$%zu\r%c", len, after); break;
    }
    for (size_t i = 0; i < len; i++)
        out[n++] = (char)('a' + gb_random_below(26));
    out[n++] = '\r';
    out[n++] = after;
    return n;
}

/* A request fed whole goes through the whole-argument fast path; fed byte
 * by byte (or in small pieces) it goes through the general path. Both must
 * give the same commands, the same final status and the same error text,
 * for authenticated and unauthenticated clients and a small max bulk. */
static void test_fast_and_general_paths_agree(void **state)
{
    (void)state;
    gb_random_seed(77);
    char *in = malloc(1 << 16);
    for (int round = 0; round < 20000; round++) {
        size_t len = 0;
        int ncmds = 1 + (int)gb_random_below(4);
        for (int c = 0; c < ncmds; c++) {
            int argc = 1 + (int)gb_random_below(6);
            len += (size_t)sprintf(in + len, "*%d\r\n", argc);
            for (int a = 0; a < argc; a++)
                len += random_arg(in + len);
        }
        bool unauth = gb_random_below(2);
        int64_t max_bulk = gb_random_below(3) ? MAX_BULK : 10;
        static parsed whole, split;
        size_t all[] = {len}, one[] = {1}, small[] = {3, 1, 7, 2};
        feed_as(in, len, all, 1, unauth, max_bulk, &whole);
        bool bytewise = gb_random_below(2);
        feed_as(in, len, bytewise ? one : small, bytewise ? 1 : 4, unauth, max_bulk, &split);
        assert_int_equal(whole.status, split.status);
        assert_string_equal(whole.err, split.err);
        assert_int_equal(whole.ncmds, split.ncmds);
        for (int c = 0; c < whole.ncmds; c++) {
            assert_int_equal(whole.argc[c], split.argc[c]);
            for (int a = 0; a < whole.argc[c]; a++)
                assert_string_equal(whole.cmds[c][a], split.cmds[c][a]);
        }
    }
    free(in);
}

static void test_too_big_lines(void **state)
{
    (void)state;
    size_t n = GB_RESP_INLINE_MAX + 10;
    char *big = malloc(n);
    memset(big, 'A', n);
    expect_error(big, n, false, "ERR Protocol error: too big inline request");
    big[0] = '*';
    expect_error(big, n, false, "ERR Protocol error: too big mbulk count string");
    memcpy(big, "*1\r\n$", 5);
    expect_error(big, n, false, "ERR Protocol error: too big bulk count string");
    free(big);
}

static void test_hostile_counts_allocate_nothing(void **state)
{
    (void)state;
    gb_resp_parser p;
    gb_resp_parser_init(&p, MAX_BULK);
    char err[128];
    size_t consumed;
    char req[] = "*2147483647\r\n$3\r\nGET\r\n";
    int rc = gb_resp_parse(&p, req, strlen(req), &consumed, err, sizeof err);
    assert_int_equal(rc, GB_RESP_NEED_MORE);
    assert_true(p.cap <= 8); /* one argument arrived: the array did not follow the count */
    /* A claimed 512 MB bulk: the parser waits, asking for that many bytes. */
    gb_resp_parser_reset(&p);
    char big[] = "*1\r\n$536870912\r\n";
    rc = gb_resp_parse(&p, big, strlen(big), &consumed, err, sizeof err);
    assert_int_equal(rc, GB_RESP_NEED_MORE);
    assert_int_equal(gb_resp_bytes_wanted(&p), strlen(big) + 536870912u + 2);
    gb_resp_parser_free(&p);
}

static void test_large_bulk_is_linear(void **state)
{
    (void)state;
    /* A 4 MiB value fed in 1 KiB pieces: resuming where the parser stopped
     * keeps this cheap (a quadratic parser would rescan ~8 GB here). */
    size_t vlen = 4u << 20;
    char hdr[64];
    int hl = snprintf(hdr, sizeof hdr, "*2\r\n$3\r\nSET\r\n$%zu\r\n", vlen);
    size_t total = (size_t)hl + vlen + 2;
    char *req = malloc(total);
    memcpy(req, hdr, (size_t)hl);
    memset(req + hl, 'v', vlen);
    memcpy(req + hl + vlen, "\r\n", 2);
    gb_resp_parser p;
    gb_resp_parser_init(&p, MAX_BULK);
    char err[128];
    size_t consumed = 0, have = 0;
    int rc = GB_RESP_NEED_MORE;
    while (rc == GB_RESP_NEED_MORE && have < total) {
        have += 1024;
        if (have > total)
            have = total;
        rc = gb_resp_parse(&p, req, have, &consumed, err, sizeof err);
    }
    assert_int_equal(rc, GB_RESP_COMMAND);
    assert_int_equal(consumed, total);
    assert_int_equal(p.argc, 2);
    assert_int_equal(p.args[1].len, vlen);
    gb_resp_parser_free(&p);
    free(req);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole),
        cmocka_unit_test(test_byte_by_byte),
        cmocka_unit_test(test_random_splits),
        cmocka_unit_test(test_protocol_errors),
        cmocka_unit_test(test_argument_array_out_of_memory),
        cmocka_unit_test(test_header_fast_path),
        cmocka_unit_test(test_fast_and_general_paths_agree),
        cmocka_unit_test(test_too_big_lines),
        cmocka_unit_test(test_hostile_counts_allocate_nothing),
        cmocka_unit_test(test_large_bulk_is_linear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
