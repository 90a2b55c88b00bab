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

/* Asks for [p, p+n) to be backed by huge pages where the kernel can: a
 * large array read at random (a key table's buckets) then costs one TLB
 * entry per 2 MiB instead of one per 4 KiB page. Only a hint, and only for
 * memory not yet touched (pages already faulted in stay small): call it
 * between allocating and first writing. Linux: madvise(MADV_HUGEPAGE) over
 * the whole pages inside the range, which the kernel ignores when
 * transparent huge pages are "never"; 0 or the madvise error. darwin, posix:
 * GB_ENOTSUP (no such advice for heap memory). */
int gb_plat_advise_huge_pages(void *p, size_t n);

#endif
