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

size_t gb_score_format(double d, char *buf)
{
    if (isnan(d)) {
        memcpy(buf, "nan", 4);
        return 3;
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

    /* 17 significant digits always read back; find the shortest of 15, 16
     * or 17 that does. At 15 digits or fewer the decimal spacing is wider
     * than the double's rounding interval, so at most one candidate exists
     * and rounding the 17 digits finds it. */
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
