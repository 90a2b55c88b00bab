/*
 * gb_slice: a borrowed run of bytes, the vocabulary the engine and the ring
 * client library share (keys, values and arguments in the engine; request
 * fields in the SBE codec the client links). It lives here, beside the other
 * headers both sides use, so that the client library builds from include/
 * and transport/ alone, without reaching into engine/ (engine/base/common.h
 * includes it for everything above).
 */
#ifndef GOBLIN_SLICE_H
#define GOBLIN_SLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A borrowed run of bytes: not NUL-terminated, not owned. Keys, values,
 * members and command arguments travel through the engine as slices. */
typedef struct gb_slice {
    const char *ptr;
    size_t len;
} gb_slice;

static inline gb_slice gb_slice_make(const char *ptr, size_t len)
{
    gb_slice s = {ptr, len};
    return s;
}

static inline gb_slice gb_slice_cstr(const char *s)
{
    gb_slice r = {s, strlen(s)};
    return r;
}

static inline bool gb_slice_eq(gb_slice a, gb_slice b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* Byte-wise comparison with memcmp semantics, shorter-is-smaller on a tie
 * (Redis's ordering for lexicographic ranges). */
static inline int gb_slice_cmp(gb_slice a, gb_slice b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    /* Short slices (sorted-set members, keys) word by word, without a call
     * to memcmp: a sorted set's searches compare members whenever scores
     * tie. Longer ones go to memcmp, which compares 32 bytes at a time. */
    if (n > 32) {
        int c = memcmp(a.ptr, b.ptr, n);
        if (c)
            return c;
    } else {
        const unsigned char *p = (const unsigned char *)a.ptr, *q = (const unsigned char *)b.ptr;
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            uint64_t x, y;
            memcpy(&x, p + i, 8);
            memcpy(&y, q + i, 8);
            if (x != y) {
                /* The first differing byte decides: in memory order, so
                 * the words are compared as big-endian numbers. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                x = __builtin_bswap64(x);
                y = __builtin_bswap64(y);
#endif
                return x < y ? -1 : 1;
            }
        }
        for (; i < n; i++)
            if (p[i] != q[i])
                return p[i] < q[i] ? -1 : 1;
    }
    return a.len < b.len ? -1 : (a.len > b.len ? 1 : 0);
}

#endif
