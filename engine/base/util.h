/*
 * Number <-> text conversions with Redis's exact rules, index ranges, and
 * glob matching.
 */
#ifndef GB_ENGINE_UTIL_H
#define GB_ENGINE_UTIL_H

#include "engine/base/common.h"

/* Writes the decimal form of v into buf (>= 21 bytes, NUL-terminated) and
 * returns its length. */
size_t gb_ll2str(char *buf, int64_t v);
size_t gb_ull2str(char *buf, uint64_t v);

/* Parses a canonical signed 64-bit decimal: optional '-', no '+', no leading
 * zeros, no spaces, fits in int64 (Redis's string2ll). */
bool gb_str2ll(const char *s, size_t len, int64_t *out);
/* Same rules; named for the intent "is this the canonical form of an int". */
/* The value of one hexadecimal digit, or -1 (the \xHH escapes of inline
 * commands and of Redis's argument splitting). */
static inline int gb_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}
static inline bool gb_str2ll_canonical(const char *s, size_t len, int64_t *out) { return gb_str2ll(s, len, out); }
static inline bool gb_slice2ll(gb_slice s, int64_t *out) { return gb_str2ll(s.ptr, s.len, out); }

/* Redis's start/stop normalisation of an index range over len elements
 * (LRANGE, LTRIM, ZRANGE, ZREMRANGEBYRANK): negative indexes count from the
 * end, start is clamped to 0 and stop to len - 1. False when the range
 * selects nothing; else [*first, *last]. */
static inline bool gb_index_range(int64_t start, int64_t stop, size_t len, size_t *first, size_t *last)
{
    int64_t n = (int64_t)len;
    if (start < 0)
        start += n;
    if (stop < 0)
        stop += n;
    if (start < 0)
        start = 0;
    if (start > stop || start >= n)
        return false;
    if (stop >= n)
        stop = n - 1;
    *first = (size_t)start;
    *last = (size_t)stop;
    return true;
}

/* Glob-style match (KEYS, SCAN MATCH, CONFIG GET): * ? [abc] [^a-z] \x.
 * Recursion depth is bounded so hostile patterns cannot blow the stack. */
bool gb_glob_match(const char *pat, size_t patlen, const char *str, size_t len, bool nocase);

/* Lower-cases an ASCII string into dst (cap bytes incl. NUL); false if too long. */
bool gb_ascii_lower(char *dst, size_t cap, gb_slice s);

/* ASCII case-insensitive comparison of C strings (locale-independent). */
int gb_strcasecmp(const char *a, const char *b);

/* Redis's bytesToHuman: "512B", "1.50K", "2.00M" ... (INFO's *_human). */
void gb_human_bytes(char *buf, size_t cap, double n);

#endif
