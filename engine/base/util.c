/* Small helpers shared across the engine. */
#include "engine/base/common.h"

#include <stdio.h>

#include "engine/base/util.h"

bool gb_slice_ieq(gb_slice a, const char *lit)
{
    size_t i = 0;
    for (; i < a.len; i++) {
        unsigned char x = (unsigned char)a.ptr[i], y = (unsigned char)lit[i];
        if (y == 0)
            return false;
        if (x >= 'A' && x <= 'Z')
            x = (unsigned char)(x + 32);
        if (y >= 'A' && y <= 'Z')
            y = (unsigned char)(y + 32);
        if (x != y)
            return false;
    }
    return lit[i] == 0;
}

#include "engine/base/util.h"

size_t gb_ull2str(char *buf, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = '\0';
    return n;
}

size_t gb_ll2str(char *buf, int64_t v)
{
    if (v < 0) {
        buf[0] = '-';
        return 1 + gb_ull2str(buf + 1, (uint64_t)0 - (uint64_t)v);
    }
    return gb_ull2str(buf, (uint64_t)v);
}

bool gb_str2ll(const char *s, size_t len, int64_t *out)
{
    if (len == 0 || len > 20)
        return false;
    if (len == 1 && s[0] == '0') {
        *out = 0;
        return true;
    }
    size_t i = 0;
    bool neg = false;
    if (s[0] == '-') {
        neg = true;
        i = 1;
        if (len == 1)
            return false;
    }
    if (s[i] < '1' || s[i] > '9')
        return false;
    uint64_t v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1)
            return false;
        *out = (int64_t)(0 - v);
    } else {
        if (v > (uint64_t)INT64_MAX)
            return false;
        *out = (int64_t)v;
    }
    return true;
}

static inline char fold(char c, bool nocase) { return (nocase && c >= 'A' && c <= 'Z') ? (char)(c + 32) : c; }

/* Matches one pattern token (a literal, '?', '\x' or a [class]) at p against
 * the character c. Returns the token's length in the pattern, and sets *ok. */
static size_t match_token(const char *p, size_t pl, char c, bool nocase, bool *ok)
{
    if (*p == '?') {
        *ok = true;
        return 1;
    }
    if (*p == '\\' && pl >= 2) {
        *ok = fold(p[1], nocase) == fold(c, nocase);
        return 2;
    }
    if (*p != '[') {
        *ok = fold(*p, nocase) == fold(c, nocase);
        return 1;
    }
    size_t i = 1;
    bool neg = i < pl && p[i] == '^';
    if (neg)
        i++;
    bool match = false;
    char fc = fold(c, nocase);
    while (i < pl && p[i] != ']') {
        if (p[i] == '\\' && i + 1 < pl) {
            if (p[i + 1] == c)
                match = true;
            i += 2;
        } else if (i + 2 < pl && p[i + 1] == '-') {
            /* As Redis's stringmatchlen: any "x-y" is a range, "]" included
             * ("[a-]" is the range from ']' to 'a'), ordered before it is
             * folded to lower case. */
            char a = p[i], b = p[i + 2];
            if (a > b) {
                char t = a;
                a = b;
                b = t;
            }
            a = fold(a, nocase);
            b = fold(b, nocase);
            if (fc >= a && fc <= b)
                match = true;
            i += 3;
        } else {
            if (fold(p[i], nocase) == fc)
                match = true;
            i++;
        }
    }
    if (i < pl)
        i++; /* the closing ']'; an unterminated class ends with the pattern */
    *ok = neg ? !match : match;
    return i;
}

/* Iterative glob matching with a single backtrack point (the last '*'): a
 * later star subsumes an earlier one, so this is exact and runs in
 * O(len * patlen) even for hostile patterns like "*a*a*a*a*b". */
bool gb_glob_match(const char *pat, size_t patlen, const char *str, size_t len, bool nocase)
{
    /* Redis matches nothing against an empty string but the empty pattern
     * ("**" does not match ""; KEYS and SCAN answer a lone "*" without
     * matching, which is how "*" still lists an empty key). */
    if (len == 0)
        return patlen == 0;
    size_t pi = 0, si = 0;
    size_t star_p = SIZE_MAX, star_s = 0;
    while (si < len) {
        if (pi < patlen && pat[pi] == '*') {
            while (pi < patlen && pat[pi] == '*')
                pi++;
            if (pi == patlen)
                return true;
            star_p = pi;
            star_s = si;
            continue;
        }
        if (pi < patlen) {
            bool ok;
            size_t tl = match_token(pat + pi, patlen - pi, str[si], nocase, &ok);
            if (ok) {
                pi += tl;
                si++;
                continue;
            }
        }
        if (star_p == SIZE_MAX)
            return false;
        pi = star_p;
        si = ++star_s;
    }
    while (pi < patlen && pat[pi] == '*')
        pi++;
    return pi == patlen;
}

bool gb_ascii_lower(char *dst, size_t cap, gb_slice s)
{
    if (s.len + 1 > cap)
        return false;
    for (size_t i = 0; i < s.len; i++) {
        char c = s.ptr[i];
        dst[i] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
    }
    dst[s.len] = '\0';
    return true;
}

int gb_strcasecmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        int x = (unsigned char)*a, y = (unsigned char)*b;
        if (x >= 'A' && x <= 'Z')
            x += 32;
        if (y >= 'A' && y <= 'Z')
            y += 32;
        if (x != y || x == 0)
            return x - y;
    }
}

void gb_human_bytes(char *buf, size_t cap, double n)
{
    const char *units = "BKMGTP";
    int u = 0;
    while (n >= 1024 && u < 5) {
        n /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%.0fB", n);
    else
        snprintf(buf, cap, "%.2f%c", n, units[u]);
}
