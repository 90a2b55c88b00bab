/*
 * Heap introspection the allocator accounting in engine/base/mem.c builds on.
 *
 * gb_plat_malloc_usable_size() returns how many bytes the system allocator
 * really reserved for `p` (malloc_usable_size on glibc, malloc_size on macOS).
 * Where the platform cannot tell (the generic POSIX variant) it returns 0 and
 * gb_plat_malloc_usable_supported() is false; engine/base/mem.c then prefixes each
 * block with its size instead.
 */
#ifndef GB_PLATFORM_MEM_H
#define GB_PLATFORM_MEM_H

#include <stdbool.h>
#include <stddef.h>

bool gb_plat_malloc_usable_supported(void);
size_t gb_plat_malloc_usable_size(void *p);

/* Resident set size of this process in bytes, or 0 if unknown. */
size_t gb_plat_rss_bytes(void);

#endif
