#include "engine/base/score.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/base/mem.h"
#include "engine/base/util.h"

/* Arguments arrive as slices; strtod wants a NUL-terminated string. Short
 * ones (all real scores) are copied to the stack, long ones to the heap. */
#define STACK_COPY 128

typedef struct cstr {
    char *p;
    char stack[STACK_COPY];
} cstr;

static char *cstr_from(cstr *c, gb_slice s)
{
    c->p = s.len < sizeof c->stack ? c->stack : gb_malloc(s.len + 1);
    if (s.len)
        memcpy(c->p, s.ptr, s.len);
    c->p[s.len] = '\0';
    return c->p;
}

static void cstr_done(cstr *c)
{
    if (c->p != c->stack)
        gb_free(c->p);
}

static bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

int gb_score_parse(gb_slice s, double *out)
{
    if (s.len == 0 || is_space(s.ptr[0]))
        return GB_EPARSE;
    cstr c;
    char *buf = cstr_from(&c, s), *end;
    errno = 0;
    double v = strtod(buf, &end);
    bool ok = (size_t)(end - buf) == s.len && !isnan(v) &&
              !(errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0.0));
    cstr_done(&c);
    if (!ok)
        return GB_EPARSE;
    *out = v;
    return 0;
}

/* One bound of zslParseRange: "(" makes it exclusive; strtod must stop at
 * the first NUL (so an embedded NUL ends the number, as in Redis). */
static int parse_bound(gb_slice s, double *v, bool *ex)
{
    *ex = false;
    if (s.len > 0 && s.ptr[0] == '(') {
        *ex = true;
        s.ptr++;
        s.len--;
    }
    cstr c;
    char *buf = cstr_from(&c, s), *end;
    *v = strtod(buf, &end);
    bool ok = *end == '\0' && !isnan(*v);
    cstr_done(&c);
    return ok ? 0 : GB_EPARSE;
}

int gb_score_parse_range(gb_slice min, gb_slice max, gb_score_range *r)
{
    if (parse_bound(min, &r->min, &r->minex) || parse_bound(max, &r->max, &r->maxex))
        return GB_EPARSE;
    return 0;
}

bool gb_score_range_empty(const gb_score_range *r)
{
    return r->min > r->max || (r->min == r->max && (r->minex || r->maxex));
}

static int parse_lex_bound(gb_slice s, gb_lex_bound *b)
{
    b->s = gb_slice_make(NULL, 0);
    b->inf = 0;
    b->ex = false;
    if (s.len == 0)
        return GB_EPARSE;
    /* Redis tests c[1] != '\0' on a NUL-terminated sds: "+" followed by a
     * NUL byte still counts as "+". */
    switch (s.ptr[0]) {
    case '+':
    case '-':
        if (s.len > 1 && s.ptr[1] != '\0')
            return GB_EPARSE;
        b->inf = s.ptr[0] == '+' ? 1 : -1;
        b->ex = true;
        return 0;
    case '(':
    case '[':
        b->ex = s.ptr[0] == '(';
        b->s = gb_slice_make(s.ptr + 1, s.len - 1);
        return 0;
    default:
        return GB_EPARSE;
    }
}

int gb_lex_parse_range(gb_slice min, gb_slice max, gb_lex_range *r)
{
    if (parse_lex_bound(min, &r->min) || parse_lex_bound(max, &r->max))
        return GB_EPARSE;
    return 0;
}

/* Redis's sdscmplex: "-" sorts below and "+" above every string. */
static int cmp_bounds(const gb_lex_bound *a, const gb_lex_bound *b)
{
    if (a->inf != 0 && a->inf == b->inf)
        return 0;
    if (a->inf < 0 || b->inf > 0)
        return -1;
    if (a->inf > 0 || b->inf < 0)
        return 1;
    return gb_slice_cmp(a->s, b->s);
}

bool gb_lex_range_empty(const gb_lex_range *r)
{
    int c = cmp_bounds(&r->min, &r->max);
    return c > 0 || (c == 0 && (r->min.ex || r->max.ex));
}

int gb_lex_cmp_bound(gb_slice m, const gb_lex_bound *b)
{
    if (b->inf)
        return -b->inf;
    return gb_slice_cmp(m, b->s);
}

/* ---- formatting ---- */

/* Lays out `nd` significant digits with decimal exponent `e` (value =
 * 0.d1d2... * 10^(e+1), i.e. d1 is the 10^e digit) the way "%.17g" does:
 * scientific when e < -4 or e >= 17, else positional. */
static size_t layout(char *buf, bool neg, const char *dig, int nd, int e)
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
        buf[n++] = 'e';
        buf[n++] = e < 0 ? '-' : '+';
        int ae = e < 0 ? -e : e;
        if (ae >= 100)
            buf[n++] = (char)('0' + ae / 100);
        buf[n++] = (char)('0' + (ae / 10) % 10);
        buf[n++] = (char)('0' + ae % 10);
    } else if (e < 0) {
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

/* Rounds the 17 digits in d17 to k digits (half up) into out; returns the
 * exponent adjustment (1 when 9...9 rounded up to 10...0). Trailing zeros
 * are dropped: *nd receives the significant digit count. */
static int round_digits(const char *d17, int k, char *out, int *nd)
{
    memcpy(out, d17, (size_t)k);
    int adj = 0;
    if (d17[k] >= '5') {
        int i = k - 1;
        while (i >= 0 && out[i] == '9')
            out[i--] = '0';
        if (i < 0) {
            out[0] = '1';
            adj = 1;
        } else {
            out[i]++;
        }
    }
    while (k > 1 && out[k - 1] == '0')
        k--;
    *nd = k;
    return adj;
}

static bool reads_back(const char *dig, int nd, int e, double want)
{
    char tmp[GB_SCORE_BUF];
    size_t n = 0;
    tmp[n++] = dig[0];
    tmp[n++] = '.';
    memcpy(tmp + n, dig + 1, (size_t)nd - 1);
    n += (size_t)nd - 1;
    n += (size_t)snprintf(tmp + n, sizeof tmp - n, "e%d", e);
    return strtod(tmp, NULL) == want;
}

/* The reference: 17 digits from "%.16e", then the shortest of 15, 16 or 17
 * digits that strtod reads back. 17 significant digits always read back; at
 * 15 digits or fewer the decimal spacing is wider than the double's
 * rounding interval, so at most one candidate exists and rounding the 17
 * digits finds it. Its snprintf and strtod calls (glibc's multi-precision
 * paths) were most of the server's time in ZRANGE WITHSCORES, so it only
 * serves what format_exact below does not cover. */
static size_t format_ref(double d, char *buf)
{
    char e17[40];
    snprintf(e17, sizeof e17, "%.16e", d);
    const char *p = e17;
    bool neg = false;
    if (*p == '-') {
        neg = true;
        p++;
    }
    char d17[18];
    d17[0] = p[0];
    memcpy(d17 + 1, p + 2, 16);
    d17[17] = '\0';
    int e = atoi(p + 19);
    double a = fabs(d);

    char dig[17];
    int nd;
    /* Subnormals carry fewer than 53 significant bits, so fewer digits may
     * suffice than the argument above promises: try every length. */
    int kmin = a < 2.2250738585072014e-308 ? 1 : 15;
    for (int k = kmin; k <= 16; k++) {
        int adj = round_digits(d17, k, dig, &nd);
        if (reads_back(dig, nd, e + adj, a))
            return layout(buf, neg, dig, nd, e + adj);
    }
    nd = 17;
    while (nd > 1 && d17[nd - 1] == '0')
        nd--;
    return layout(buf, neg, d17, nd, e);
}

/* ---- formatting: the same digits in exact integer arithmetic ----
 *
 * format_ref's answer is a function of the exact value a = m * 2^e2, and for
 * 1e-11 <= a < 1e17 that value scaled to 17 integer digits, x = a * 10^s
 * (s = 16 - e in 0..27), is w * 2^t with w = m * 5^s below 2^116: a 128-bit
 * integer. So each step of format_ref can be done exactly, with no text:
 *
 *   "%.16e"      x rounded to an integer, ties to even (glibc's rounding);
 *   round_digits that integer rounded half up at the 10^(17-k) digit;
 *   strtod == a  the candidate lies inside a's rounding interval (the
 *                midpoints to its neighbours), or on an edge with m even
 *                (strtod, like the FPU, rounds ties to even).
 *
 * Scores outside that range (and subnormals) take format_ref. test_score.c
 * compares gb_score_format with a copy of format_ref's first version, byte
 * for byte, over a million doubles of every shape. */

__extension__ typedef unsigned __int128 u128;

/* 5^0 .. 5^27, the powers below 2^63. */
static const uint64_t POW5[28] = {
    1ull, 5ull, 25ull, 125ull, 625ull, 3125ull, 15625ull, 78125ull, 390625ull, 1953125ull,
    9765625ull, 48828125ull, 244140625ull, 1220703125ull, 6103515625ull, 30517578125ull,
    152587890625ull, 762939453125ull, 3814697265625ull, 19073486328125ull, 95367431640625ull,
    476837158203125ull, 2384185791015625ull, 11920928955078125ull, 59604644775390625ull,
    298023223876953125ull, 1490116119384765625ull, 7450580596923828125ull,
};

#define X_MIN 10000000000000000ull  /* 10^16: x has 17 integer digits */
#define X_END 100000000000000000ull /* 10^17 */

/* a = m * 2^e2 (m with its implicit bit) scaled by 10^s: x = a * 10^s =
 * w * 2^t with w = m * 5^s and t = e2 + s. */
typedef struct scaled {
    u128 w, f5; /* m * 5^s, 5^s */
    int t;
    bool even;  /* m is even: a decimal exactly halfway to a neighbour reads back as a */
    bool pow2;  /* m = 2^52 above the smallest binade: the lower neighbour is half as far */
} scaled;

/* Whether c * 10^-s reads back as a: compares c with the midpoints between
 * a and its neighbours, (4m +- 2) * 5^s * 2^(t-2) (4m - 1 below a power of
 * two), all multiplied by 2^g so that they are integers. */
static bool exact_reads_back(const scaled *v, uint64_t c)
{
    int g = v->t < 2 ? 2 - v->t : 0, sh = v->t - 2 + g;
    u128 cc = (u128)c << g, w4 = v->w << 2;
    u128 hi = (w4 + (v->f5 << 1)) << sh;
    u128 lo = (w4 - (v->pow2 ? v->f5 : v->f5 << 1)) << sh;
    return (cc < hi || (cc == hi && v->even)) && (cc > lo || (cc == lo && v->even));
}

static const char DIGIT_PAIRS[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                  "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                  "8081828384858687888990919293949596979899";

/* Writes the 8 digits of n < 10^8 to out. */
static void put8(char *out, uint32_t n)
{
    for (int i = 6; i >= 0; i -= 2) {
        memcpy(out + i, DIGIT_PAIRS + 2 * (n % 100), 2);
        n /= 100;
    }
}

/* Writes c (10^16 <= c <= 10^17) as significant digits, trailing zeros
 * dropped; returns their count. *e is the exponent of c's first digit when
 * 10^16 is that of 1e16, bumped when c = 10^17. */
static int exact_digits(uint64_t c, char *dig, int *e)
{
    if (c == X_END) {
        dig[0] = '1';
        (*e)++;
        return 1;
    }
    uint64_t top = c / 100000000u; /* 9 digits, the first nonzero */
    dig[0] = (char)('0' + top / 100000000u);
    put8(dig + 1, (uint32_t)(top % 100000000u));
    put8(dig + 9, (uint32_t)(c % 100000000u));
    int nd = 17;
    while (nd > 1 && dig[nd - 1] == '0')
        nd--;
    return nd;
}

/* Rounds d17 half up at the 10^p digit (round_digits on the text). */
static inline uint64_t round_half_up(uint64_t d17, uint64_t p) { return (d17 + p / 2) / p * p; }

/* format_ref's digits for a finite a > 0; returns 0 (and writes nothing)
 * outside 1e-11 <= a < 1e17 or for a subnormal. */
static size_t format_exact(double a, bool neg, char *buf)
{
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    int be = (int)(bits >> 52) & 0x7ff;
    if (be == 0)
        return 0;
    uint64_t m = (bits & ((1ull << 52) - 1)) | (1ull << 52);
    int e2 = be - 1075;
    scaled v = {.even = (m & 1) == 0, .pow2 = m == (1ull << 52) && be > 1};
    /* 2^(e2+52) <= a, so 10^e <= a for this e (or one less, the double
     * log being approximate); the loop settles it exactly. */
    int e = (int)floor((e2 + 52) * 0.30102999566398120);
    u128 x = 0, rem = 0, half = 0;
    for (int tries = 0;; tries++) {
        int s = 16 - e;
        if (s < 0 || s > 27 || tries == 3)
            return 0;
        v.f5 = POW5[s];
        v.w = (u128)m * POW5[s];
        v.t = e2 + s;
        if (v.t >= 0) {
            x = v.w << v.t; /* t >= 0 only where x < 2^61: no overflow */
            rem = half = 0;
        } else {
            x = v.w >> -v.t;
            rem = v.w & (((u128)1 << -v.t) - 1);
            half = (u128)1 << (-v.t - 1);
        }
        if (x >= X_END)
            e++;
        else if (x < X_MIN)
            e--;
        else
            break;
    }
    uint64_t d17 = (uint64_t)x;
    if (rem > half || (rem == half && half != 0 && (d17 & 1)))
        d17++; /* may reach 10^17: exact_digits turns it into "1" */
    /* The candidates of 15 and 16 digits, then all 17. */
    uint64_t c = round_half_up(d17, 100);
    if (!exact_reads_back(&v, c)) {
        c = round_half_up(d17, 10);
        if (!exact_reads_back(&v, c))
            c = d17;
    }
    char dig[17];
    int nd = exact_digits(c, dig, &e);
    return layout(buf, neg, dig, nd, e);
}

size_t gb_score_format(double d, char *buf)
{
    if (isnan(d)) { /* printf's "%.17g", which Redis uses: the sign shows ("-nan" for 0/0 on x86) */
        bool neg = signbit(d) != 0;
        memcpy(buf, neg ? "-nan" : "nan", neg ? 5 : 4);
        return neg ? 4 : 3;
    }
    if (isinf(d)) {
        memcpy(buf, d > 0 ? "inf" : "-inf", d > 0 ? 4 : 5);
        return d > 0 ? 3 : 4;
    }
    if (d == 0.0) {
        bool neg = signbit(d) != 0;
        memcpy(buf, neg ? "-0" : "0", neg ? 3 : 2);
        return neg ? 2 : 1;
    }
    /* Integers below 2^53 (exactly representable): plain digits. */
    if (fabs(d) < 9007199254740992.0 && d == (double)(int64_t)d)
        return gb_ll2str(buf, (int64_t)d);
    size_t n = format_exact(fabs(d), signbit(d) != 0, buf);
    return n ? n : format_ref(d, buf);
}

int gb_parse_long_double(gb_slice s, long double *out)
{
    if (s.len == 0 || s.len >= GB_LONG_DOUBLE_BUF || is_space(s.ptr[0]))
        return GB_EPARSE;
    cstr c;
    char *buf = cstr_from(&c, s), *end;
    errno = 0;
    long double v = strtold(buf, &end);
    bool ok = (size_t)(end - buf) == s.len && !isnan(v) && errno != EINVAL &&
              !(errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0.0L));
    cstr_done(&c);
    if (!ok)
        return GB_EPARSE;
    *out = v;
    return 0;
}

size_t gb_format_long_double(long double v, char *buf, size_t cap)
{
    if (isinf(v)) {
        const char *t = v > 0 ? "inf" : "-inf";
        size_t n = strlen(t);
        if (cap < n + 1)
            return 0;
        memcpy(buf, t, n + 1);
        return n;
    }
    int r = snprintf(buf, cap, "%.17Lf", v);
    if (r < 0 || (size_t)r + 1 > cap)
        return 0;
    size_t n = (size_t)r;
    if (memchr(buf, '.', n)) {
        while (buf[n - 1] == '0')
            n--;
        if (buf[n - 1] == '.')
            n--;
    }
    if (n == 2 && buf[0] == '-' && buf[1] == '0') {
        buf[0] = '0';
        n = 1;
    }
    buf[n] = '\0';
    return n;
}
