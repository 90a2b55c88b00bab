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
#include <stdint.h>

bool gb_plat_malloc_usable_supported(void);
size_t gb_plat_malloc_usable_size(void *p);

/* Resident set size of this process in bytes, or 0 if unknown. */
size_t gb_plat_rss_bytes(void);

/* Gives the allocator's free pages back to the system where it can
 * (MEMORY PURGE): glibc's malloc_trim, macOS's pressure relief; a no-op
 * elsewhere. */
void gb_plat_heap_trim(void);

/* Asks for [p, p+n) to be backed by huge pages where the kernel can: a
 * large array read at random (a key table's buckets) then costs one TLB
 * entry per 2 MiB instead of one per 4 KiB page. Only a hint, and only for
 * memory not yet touched (pages already faulted in stay small): call it
 * between allocating and first writing. Linux: madvise(MADV_HUGEPAGE) over
 * the whole pages inside the range, which the kernel ignores when
 * transparent huge pages are "never"; 0 or the madvise error. darwin, posix:
 * GB_ENOTSUP (no such advice for heap memory). */
int gb_plat_advise_huge_pages(void *p, size_t n);

/* A bulk load (a snapshot read at start-up) allocates its keys and values
 * from fresh heap, and each 4 KiB page of that is a page fault: ~20% of a
 * one-CPU load of a 2 GB dataset (perf, on a VM where faults are dear).
 * Between gb_plat_heap_bulk_begin and gb_plat_heap_bulk_end the heap
 * grows in 64 MiB steps, and gb_plat_heap_bulk_advise (call it every
 * megabyte or so of allocation) asks for huge pages over what it grew by
 * since the last call, before the allocator has touched most of it (the
 * same load: 11.1 -> 8.8 s, 10.6 -> 8.2 s). Only the load's heap: what
 * the server allocates later stays in small pages, where a fault never
 * waits for the kernel to assemble 2 MiB (compaction can take
 * milliseconds). Linux with glibc: M_TOP_PAD, restored to glibc's default
 * at the end; setting it also stops glibc adapting its mmap threshold
 * (it stays at its 128 KiB start) for the life of the process. Elsewhere
 * the three do nothing. */
typedef struct gb_heap_bulk {
    bool on;
    uintptr_t advised_to; /* the heap's end when last advised */
} gb_heap_bulk;
void gb_plat_heap_bulk_begin(gb_heap_bulk *b);
void gb_plat_heap_bulk_advise(gb_heap_bulk *b);
void gb_plat_heap_bulk_end(gb_heap_bulk *b);

#endif
