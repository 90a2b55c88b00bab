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
#include "goblin/slice.h" /* gb_slice and its inline helpers */

#define GB_LIKELY(x) __builtin_expect(!!(x), 1)
#define GB_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define GB_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define GB_MIN(a, b) ((a) < (b) ? (a) : (b))
#define GB_MAX(a, b) ((a) > (b) ? (a) : (b))

/* ASCII case-insensitive equality with a C string (command names, options). */
bool gb_slice_ieq(gb_slice a, const char *lit);

#endif
