/*
 * Small shared vocabulary for everything in engine/ and above: byte slices,
 * branch hints, array sizes. Kept tiny on purpose.
 */
#ifndef GB_ENGINE_COMMON_H
#define GB_ENGINE_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "goblin/error.h"

#define GB_LIKELY(x) __builtin_expect(!!(x), 1)
#define GB_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define GB_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define GB_MIN(a, b) ((a) < (b) ? (a) : (b))
#define GB_MAX(a, b) ((a) > (b) ? (a) : (b))

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

/* ASCII case-insensitive equality with a C string (command names, options). */
bool gb_slice_ieq(gb_slice a, const char *lit);

#endif
