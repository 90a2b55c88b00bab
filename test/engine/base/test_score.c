/* engine/score: Redis's score, range and long-double parsing rules and the
 * reply formatting, as tables, plus a round-trip property test. */
#include "types_tutil.h"

#include <float.h>
#include <math.h>

#include "engine/base/score.h"

static gb_slice S(const char *s) { return gb_slice_cstr(s); }

static void expect_score(const char *text, double want)
{
    double got = 12345;
    int rc = gb_score_parse(S(text), &got);
    if (rc != 0)
        fail_msg("gb_score_parse(\"%s\") failed, expected %.17g", text, want);
    if (memcmp(&got, &want, sizeof got) != 0 && !(isnan(got) && isnan(want)))
        fail_msg("gb_score_parse(\"%s\") = %.17g, expected %.17g", text, got, want);
}

static void expect_score_bad(const char *text)
{
    double got;
    if (gb_score_parse(S(text), &got) != GB_EPARSE)
        fail_msg("gb_score_parse(\"%s\") accepted %.17g, expected an error", text, got);
}

static void test_score_parse(void **state)
{
    (void)state;
    expect_score("1", 1);
    expect_score("-1", -1);
    expect_score("+1", 1);
    expect_score("1.5", 1.5);
    expect_score(".5", 0.5);
    expect_score("5.", 5);
    expect_score("-0", -0.0);
    expect_score("1e3", 1000);
    expect_score("1E-3", 0.001);
    expect_score("0x10", 16); /* glibc strtod reads hex; so does Redis */
    expect_score("inf", INFINITY);
    expect_score("+inf", INFINITY);
    expect_score("-inf", -INFINITY);
    expect_score("INF", INFINITY);
    expect_score("-Infinity", -INFINITY);
    expect_score("4e-320", 4e-320); /* subnormal: accepted */
    expect_score("1.7976931348623157e308", DBL_MAX);
    expect_score_bad("");
    expect_score_bad(" 1");
    expect_score_bad("1 ");
    expect_score_bad("\t1");
    expect_score_bad("1e");
    expect_score_bad("e1");
    expect_score_bad("abc");
    expect_score_bad("nan");
    expect_score_bad("-nan");
    expect_score_bad("NaN");
    expect_score_bad("1e400"); /* overflow */
    expect_score_bad("-1e400");
    expect_score_bad("1e-400"); /* underflow to zero */
    expect_score_bad("1.5.");
    expect_score_bad("--1");
    /* an embedded NUL ends strtod early: the rest is trailing garbage */
    double d;
    assert_int_equal(gb_score_parse(gb_slice_make("1\0"
                                                  "2",
                                                  3),
                                    &d),
                     GB_EPARSE);
    /* long inputs go through the heap copy */
    char big[300]; /* 0.000...05 = 5e-298: long but in range */
    memset(big, '0', sizeof big);
    big[0] = '0';
    big[1] = '.';
    big[sizeof big - 1] = '5';
    assert_int_equal(gb_score_parse(gb_slice_make(big, sizeof big), &d), 0);
    assert_true(d > 4e-298 && d < 6e-298);
}

static void expect_range(const char *min, const char *max, double a, bool aex, double b, bool bex)
{
    gb_score_range r;
    if (gb_score_parse_range(S(min), S(max), &r) != 0)
        fail_msg("range \"%s\" \"%s\" rejected", min, max);
    if (!(r.min == a && r.minex == aex && r.max == b && r.maxex == bex))
        fail_msg("range \"%s\" \"%s\" = %s%g %s%g", min, max, r.minex ? "(" : "", r.min, r.maxex ? "(" : "",
                 r.max);
}

static void expect_range_bad(const char *min, const char *max)
{
    gb_score_range r;
    if (gb_score_parse_range(S(min), S(max), &r) != GB_EPARSE)
        fail_msg("range \"%s\" \"%s\" accepted", min, max);
}

static void test_range_parse(void **state)
{
    (void)state;
    expect_range("1", "2", 1, false, 2, false);
    expect_range("(1", "(2.5", 1, true, 2.5, true);
    expect_range("-inf", "+inf", -INFINITY, false, INFINITY, false);
    expect_range("(-inf", "(inf", -INFINITY, true, INFINITY, true);
    /* zslParseRange is looser than ZADD: */
    expect_range("", "(", 0, false, 0, true);    /* empty = 0 */
    expect_range(" 1", "2", 1, false, 2, false); /* leading space */
    expect_range("1e400", "-1e400", INFINITY, false, -INFINITY, false);
    expect_range_bad("1 ", "2");
    expect_range_bad("a", "2");
    expect_range_bad("1", "nan");
    expect_range_bad("(nan", "1");
    expect_range_bad("[1", "2");

    gb_score_range r = {1, 1, false, false};
    assert_false(gb_score_range_empty(&r));
    r.minex = true;
    assert_true(gb_score_range_empty(&r));
    r = (gb_score_range){2, 1, false, false};
    assert_true(gb_score_range_empty(&r));
    r = (gb_score_range){1, 2, true, true};
    assert_true(gb_score_in_range(1.5, &r));
    assert_false(gb_score_in_range(1, &r));
    assert_false(gb_score_in_range(2, &r));
}

static void test_lex_parse(void **state)
{
    (void)state;
    gb_lex_range r;
    assert_int_equal(gb_lex_parse_range(S("-"), S("+"), &r), 0);
    assert_true(r.min.inf == -1 && r.max.inf == 1);
    assert_false(gb_lex_range_empty(&r));
    assert_int_equal(gb_lex_parse_range(S("[a"), S("(b"), &r), 0);
    assert_true(!r.min.ex && r.max.ex && r.min.s.len == 1 && r.max.s.ptr[0] == 'b');
    assert_true(gb_lex_gte_min(S("a"), &r) && gb_lex_lte_max(S("az"), &r) && !gb_lex_lte_max(S("b"), &r));
    assert_int_equal(gb_lex_parse_range(S("["), S("[a"), &r), 0); /* empty-string bound */
    assert_true(r.min.s.len == 0 && gb_lex_gte_min(S(""), &r));
    assert_int_equal(gb_lex_parse_range(gb_slice_make("+\0", 2), S("+"), &r), 0); /* c[1] == '\0' */
    assert_int_equal(gb_lex_parse_range(S("a"), S("+"), &r), GB_EPARSE);
    assert_int_equal(gb_lex_parse_range(S(""), S("+"), &r), GB_EPARSE);
    assert_int_equal(gb_lex_parse_range(S("-"), S("+x"), &r), GB_EPARSE);
    assert_int_equal(gb_lex_parse_range(S("-x"), S("+"), &r), GB_EPARSE);

    struct {
        const char *min, *max;
        bool empty;
    } cases[] = {
        {"-", "+", false},  {"+", "-", true},   {"-", "-", true},   {"+", "+", true},
        {"[b", "[a", true}, {"[a", "(a", true}, {"(a", "[a", true}, {"[a", "[a", false},
        {"[a", "+", false}, {"-", "[a", false}, {"+", "[a", true},  {"[a", "-", true},
    };
    for (size_t i = 0; i < GB_ARRAY_LEN(cases); i++) {
        assert_int_equal(gb_lex_parse_range(S(cases[i].min), S(cases[i].max), &r), 0);
        if (gb_lex_range_empty(&r) != cases[i].empty)
            fail_msg("lex range %s %s: empty should be %d", cases[i].min, cases[i].max, cases[i].empty);
    }
}

static void expect_fmt(double d, const char *want)
{
    char buf[GB_SCORE_BUF];
    size_t n = gb_score_format(d, buf);
    if (n != strlen(want) || strcmp(buf, want) != 0)
        fail_msg("gb_score_format(%.17g) = \"%s\", expected \"%s\"", d, buf, want);
}

static void test_score_format(void **state)
{
    (void)state;
    expect_fmt(1.1, "1.1");
    expect_fmt(0.1 + 0.2, "0.30000000000000004");
    expect_fmt(3, "3");
    expect_fmt(-3, "-3");
    expect_fmt(0, "0");
    expect_fmt(-0.0, "-0");
    expect_fmt(INFINITY, "inf");
    expect_fmt(-INFINITY, "-inf");
    expect_fmt(1.5, "1.5");
    expect_fmt(-2.25, "-2.25");
    expect_fmt(100.5, "100.5");
    expect_fmt(0.0001, "0.0001");
    expect_fmt(1e-5, "1e-05");
    expect_fmt(123456.789, "123456.789");
    expect_fmt(9007199254740992.0, "9007199254740992");
    expect_fmt(9007199254740994.0, "9007199254740994");
    expect_fmt(1e16, "10000000000000000");
    expect_fmt(1e17, "1e+17");
    expect_fmt(1e20, "1e+20");
    expect_fmt(1.5e300, "1.5e+300");
    expect_fmt(DBL_MAX, "1.7976931348623157e+308");
    expect_fmt(5e-324, "5e-324");
    expect_fmt(2.2250738585072014e-308, "2.2250738585072014e-308");
    expect_fmt(1.0 / 3, "0.3333333333333333");
    expect_fmt(2.0 / 3, "0.6666666666666666");
}

/* Every finite double formats to text that reads back as itself, never
 * longer than "%.17g". */
static void test_format_roundtrip(void **state)
{
    (void)state;
    tu_reseed("roundtrip");
    char buf[GB_SCORE_BUF], ref[64];
    for (int i = 0; i < 200000; i++) {
        uint64_t bits = gb_random_u64();
        double d;
        if (i % 3 == 0)
            d = (double)(int64_t)(bits >> (bits & 63)) / (double)(1 + (bits % 1000));
        else
            memcpy(&d, &bits, sizeof d);
        if (!isfinite(d))
            continue;
        size_t n = gb_score_format(d, buf);
        TU_CHECK(n == strlen(buf), "length of %s", buf);
        double back = strtod(buf, NULL);
        TU_CHECK(memcmp(&back, &d, sizeof d) == 0, "%.17g formatted as %s reads back as %.17g", d, buf, back);
        int rn = snprintf(ref, sizeof ref, "%.17g", d);
        TU_CHECK(n <= (size_t)rn, "%s longer than %s", buf, ref);
    }
}

static void expect_ld(long double v, const char *want)
{
    char buf[GB_LONG_DOUBLE_BUF];
    size_t n = gb_format_long_double(v, buf, sizeof buf);
    if (n != strlen(want) || strcmp(buf, want) != 0)
        fail_msg("gb_format_long_double(%.21Lg) = \"%s\", expected \"%s\"", v, buf, want);
}

/* INCRBYFLOAT's documented examples: parse both sides, add, format. */
static void expect_incr(const char *cur, const char *incr, const char *want)
{
    long double a, b;
    assert_int_equal(gb_parse_long_double(S(cur), &a), 0);
    assert_int_equal(gb_parse_long_double(S(incr), &b), 0);
    expect_ld(a + b, want);
}

static void test_long_double(void **state)
{
    (void)state;
    expect_ld(3.0L, "3");
    expect_ld(10.5L, "10.5");
    expect_ld(-0.0L, "0");
    expect_ld(-2.5L, "-2.5");
    expect_ld(1e20L, "100000000000000000000");
    expect_ld(INFINITY, "inf");
    expect_ld(-INFINITY, "-inf");
    expect_incr("10.50", "0.1", "10.6");
    expect_incr("10.6", "-5", "5.6");
    expect_incr("5.0e3", "2.0e2", "5200");
    expect_incr("3", "0", "3");

    long double v;
    assert_int_equal(gb_parse_long_double(S("1.5"), &v), 0);
    assert_true(v == 1.5L);
    assert_int_equal(gb_parse_long_double(S("inf"), &v), 0);
    assert_true(isinf(v));
    assert_int_equal(gb_parse_long_double(S("0x1p3"), &v), 0);
    assert_true(v == 8.0L);
    assert_int_equal(gb_parse_long_double(S(""), &v), GB_EPARSE);
    assert_int_equal(gb_parse_long_double(S(" 1"), &v), GB_EPARSE);
    assert_int_equal(gb_parse_long_double(S("1 "), &v), GB_EPARSE);
    assert_int_equal(gb_parse_long_double(S("nan"), &v), GB_EPARSE);
    assert_int_equal(gb_parse_long_double(S("abc"), &v), GB_EPARSE);
    assert_int_equal(gb_parse_long_double(S("1e99999"), &v), GB_EPARSE);
    char *big = malloc(GB_LONG_DOUBLE_BUF + 10);
    memset(big, '1', GB_LONG_DOUBLE_BUF + 10);
    assert_int_equal(gb_parse_long_double(gb_slice_make(big, GB_LONG_DOUBLE_BUF), &v), GB_EPARSE);
    assert_int_equal(gb_parse_long_double(gb_slice_make(big, 300), &v), 0);
    free(big);

    /* The largest finite long double still fits the buffer. */
    char buf[GB_LONG_DOUBLE_BUF];
    assert_true(gb_format_long_double(LDBL_MAX, buf, sizeof buf) > 4000);
    assert_int_equal(gb_format_long_double(12345.5L, buf, 4), 0);
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_score_parse),      cmocka_unit_test(test_range_parse),
        cmocka_unit_test(test_lex_parse),        cmocka_unit_test(test_score_format),
        cmocka_unit_test(test_format_roundtrip), cmocka_unit_test(test_long_double),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
