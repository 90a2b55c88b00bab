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
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;
    if (c)
        return c;
    return a.len < b.len ? -1 : (a.len > b.len ? 1 : 0);
}

#endif
