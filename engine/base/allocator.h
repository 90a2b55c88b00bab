/*
 * The process's allocator, chosen at build time (GOBLIN_ALLOCATOR,
 * docs/building.md; why jemalloc: docs/allocator.md): its name for INFO
 * memory, its own account of its memory, MEMORY PURGE and MEMORY
 * MALLOC-STATS.
 *
 * Exactly one of engine/base/allocator/jemalloc.c and libc.c is built.
 * jemalloc is linked as the system packages it (Debian's replaces malloc
 * and free for the whole process; macOS's registers itself as the default
 * malloc zone), so gb_malloc (engine/base/mem.h), libuv, Lua and zstd all
 * allocate from it: nothing calls it by a prefixed name except these
 * statistics.
 */
#ifndef GB_ENGINE_BASE_ALLOCATOR_H
#define GB_ENGINE_BASE_ALLOCATOR_H

#include <stdbool.h>
#include <stddef.h>

/* INFO's mem_allocator: "jemalloc-5.3.0" or "libc". */
const char *gb_allocator_name(void);

/* The allocator's own figures (Redis's allocator_allocated, _active,
 * _resident): bytes handed out, bytes in pages it uses for them, bytes of
 * those pages resident. False where the allocator cannot say (libc). */
typedef struct gb_allocator_stats {
    size_t allocated, active, resident;
} gb_allocator_stats;
bool gb_allocator_stats_get(gb_allocator_stats *st);

/* The usable size a block of n bytes will have, worked out from n alone
 * (jemalloc's nallocx: its size classes), or 0 where the allocator cannot
 * say (libc). gb_malloc counts a new block by it: asking for the usable
 * size of the block itself looks its address up in the allocator's page
 * map, a cache miss per block on a big heap (5% of loading 1M small keys). */
size_t gb_allocator_usable_for(size_t n);

/* The bytes of the slab a small block of exactly `size` bytes (one of the
 * allocator's size classes) is carved from, or 0 where the size is no
 * small class or the allocator cannot say (libc). */
size_t gb_allocator_slab_bytes(size_t size);

/* MEMORY PURGE: hand unused dirty pages back to the system. */
void gb_allocator_purge(void);

/* jemalloc-bg-thread: jemalloc's background threads purge unused pages
 * (Redis's set_jemalloc_bg_thread). False where the allocator has none. */
bool gb_allocator_set_background_thread(bool on);

/* MEMORY MALLOC-STATS: the allocator's own report as text (a gb_malloc'd,
 * NUL-terminated string, *len its length), or NULL where it has none. */
char *gb_allocator_report(size_t *len);

#endif
