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

/* ---- the model: gb_score_format as it was written first (snprintf "%.16e",
 * rounding of the digit text, strtod to test each candidate). The engine now
 * computes the same answer in integer arithmetic; every byte must agree. */

static size_t model_layout(char *buf, bool neg, const char *dig, int nd, int e)
{
    size_t n = 0;
    if (neg)
        buf[n++] = '-';
    if (e < -4 || e >= 17) {
        buf[n++] = dig[0];
        if (nd > 1) {
            buf[n++] = '.';
            memcpy(buf + n, dig + 1, (size_t)nd - 1);
            n += (size_t)nd - 1;
        }
        n += (size_t)sprintf(buf + n, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
        return n;
    }
    if (e < 0) {
        buf[n++] = '0';
        buf[n++] = '.';
        for (int i = 0; i < -e - 1; i++)
            buf[n++] = '0';
        memcpy(buf + n, dig, (size_t)nd);
        n += (size_t)nd;
    } else {
        for (int i = 0; i <= e; i++)
            buf[n++] = i < nd ? dig[i] : '0';
        if (nd > e + 1) {
            buf[n++] = '.';
            memcpy(buf + n, dig + e + 1, (size_t)(nd - e - 1));
            n += (size_t)(nd - e - 1);
        }
    }
    buf[n] = '\0';
    return n;
}

static size_t model_format(double d, char *buf)
{
    if (isinf(d))
        return (size_t)sprintf(buf, "%s", d > 0 ? "inf" : "-inf");
    if (d == 0.0)
        return (size_t)sprintf(buf, "%s", signbit(d) ? "-0" : "0");
    if (fabs(d) < 9007199254740992.0 && d == (double)(int64_t)d)
        return (size_t)sprintf(buf, "%lld", (long long)d);
    char e17[40];
    snprintf(e17, sizeof e17, "%.16e", d);
    bool neg = e17[0] == '-';
    const char *p = e17 + neg;
    char d17[18];
    d17[0] = p[0];
    memcpy(d17 + 1, p + 2, 16);
    int e = atoi(p + 19);
    double a = fabs(d);
    for (int k = a < DBL_MIN ? 1 : 15; k <= 16; k++) {
        char dig[18];
        memcpy(dig, d17, (size_t)k);
        int adj = 0, nd = k;
        if (d17[k] >= '5') {
            int i = k - 1;
            while (i >= 0 && dig[i] == '9')
                dig[i--] = '0';
            if (i < 0) {
                dig[0] = '1';
                adj = 1;
            } else {
                dig[i]++;
            }
        }
        while (nd > 1 && dig[nd - 1] == '0')
            nd--;
        char tmp[48];
        snprintf(tmp, sizeof tmp, "%c.%.*se%d", dig[0], nd - 1, dig + 1, e + adj);
        if (strtod(tmp, NULL) == a)
            return model_layout(buf, neg, dig, nd, e + adj);
    }
    int nd = 17;
    while (nd > 1 && d17[nd - 1] == '0')
        nd--;
    return model_layout(buf, neg, d17, nd, e);
}

/* One double of a family chosen by i: the shapes scores take (short
 * decimals, sums like i * 1.1 + 0.5, halves and quarters of big integers,
 * integers past 2^53) and the edges (powers of ten and two and their
 * neighbours, subnormals, the largest doubles, random bit patterns). */
static double model_input(int i)
{
    uint64_t r = gb_random_u64();
    double d;
    switch (i % 10) {
    case 0: /* any bit pattern */
        memcpy(&d, &r, sizeof d);
        return d;
    case 1: { /* any mantissa, exponent where scores live (2^-60 .. 2^70) */
        uint64_t bits = (r & ((1ull << 52) - 1)) | ((uint64_t)(1023 - 60 + tu_rand(131)) << 52);
        memcpy(&d, &bits, sizeof d);
        return (r >> 63) ? -d : d;
    }
    case 2: /* short decimals: n / 10^k */
        return (double)(int64_t)tu_rand(1ull << (1 + tu_rand(53))) / pow(10, (double)tu_rand(24));
    case 3: /* arithmetic on decimals, as clients compute scores */
        return (double)tu_rand(100000) * (0.1 * (double)(1 + tu_rand(20))) + 0.5 * (double)tu_rand(3);
    case 4: /* halves, quarters, ... of integers up to 2^52 (17-digit ties) */
        return (double)tu_rand(1ull << (1 + tu_rand(52))) + (double)(1 + tu_rand(15)) / (double)(1u << tu_rand(5));
    case 5: /* integers past 2^53 (candidates on a rounding edge) */
        return (double)(9007199254740992ull + tu_rand(200000000000000000ull));
    case 6: { /* a few ulps around a power of ten */
        double p = pow(10, (double)((int)tu_rand(60) - 25));
        for (int k = (int)tu_rand(6); k > 0; k--)
            p = nextafter(p, (r & 1) ? INFINITY : 0);
        return p;
    }
    case 7: { /* a power of two or a neighbour */
        double p = ldexp(1, (int)tu_rand(2100) - 1075);
        int k = (int)tu_rand(3);
        return k == 0 ? p : nextafter(p, k == 1 ? INFINITY : 0);
    }
    case 8: { /* subnormals and the smallest normals */
        uint64_t bits = r & ((1ull << 53) - 1);
        memcpy(&d, &bits, sizeof d);
        return d;
    }
    default: { /* the largest doubles, and 1/n */
        if (r & 1)
            return nextafter(DBL_MAX, 0) * (1.0 - ldexp((double)tu_rand(1000), -52));
        return 1.0 / (double)(1 + tu_rand(1ull << 40));
    }
    }
}

static void expect_like_model(double d)
{
    char got[GB_SCORE_BUF], want[64], g17[40];
    size_t n = gb_score_format(d, got);
    size_t wn = model_format(d, want);
    if (n != wn || strlen(got) != n || memcmp(got, want, n) != 0) {
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        fail_msg("gb_score_format(%.17g, bits %016llx) = \"%s\", model \"%s\"", d, (unsigned long long)bits, got,
                 want);
    }
    /* and, as for redis-server 7.0's "%.17g", the text reads back as d */
    snprintf(g17, sizeof g17, "%.17g", d);
    double back = strtod(got, NULL), back17 = strtod(g17, NULL);
    if (memcmp(&back, &d, sizeof d) != 0 || memcmp(&back17, &d, sizeof d) != 0 || n > strlen(g17))
        fail_msg("%s (%%.17g %s) does not read back as %.17g", got, g17, d);
}

/* Model-based: over about a million doubles of every family, the reply
 * bytes equal the model's. */
static void test_format_model(void **state)
{
    (void)state;
    tu_reseed("format-model");
    static const double fixed[] = {
        0.0, -0.0, INFINITY, -INFINITY, DBL_MIN, -DBL_MIN, DBL_MAX, -DBL_MAX, 5e-324, 1e-11, 1e17, 1e16,
        9007199254740992.0, 9007199254740993.0, 18014398509481990.0, 1000000000000000.25, 99999999999999999.0,
        0.1, 0.2, 0.30000000000000004, 1.1, 3.8000000000000003, 8.0000152587890625, 1e-5, 1e-4, 123e-7,
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        expect_like_model(fixed[i]);
        expect_like_model(nextafter(fixed[i], INFINITY));
        expect_like_model(nextafter(fixed[i], -INFINITY));
    }
    for (int i = 0; i < 1000000; i++) {
        double d = model_input(i);
        if (!isnan(d))
            expect_like_model(d);
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
        cmocka_unit_test(test_format_roundtrip), cmocka_unit_test(test_format_model),
        cmocka_unit_test(test_long_double),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
