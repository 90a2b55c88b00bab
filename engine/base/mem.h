/*
 * The engine's allocator: malloc/realloc/free with byte accounting, so INFO
 * memory and --maxmemory see what the data set really costs.
 *
 * Accounting counts what the system allocator actually reserved for each block
 * (malloc_usable_size/malloc_size via platform/mem.h). Where the platform cannot
 * tell, every block carries a 16-byte size prefix instead. The counter is not
 * atomic: only the engine thread allocates through these functions (client
 * libraries and benchmark threads use plain malloc).
 *
 * Out of memory is fatal, as in Redis: the process logs the size and aborts.
 * Client-driven sizes are bounded *before* they reach the allocator.
 *
 * Threads: the engine thread uses these freely; a thread that frees engine
 * memory in the background (lazy freeing) calls gb_mem_set_offthread()
 * first, so its frees are counted without a race.
 */
#ifndef GB_ENGINE_MEM_H
#define GB_ENGINE_MEM_H

#include <stddef.h>

void *gb_malloc(size_t n);
void *gb_calloc(size_t count, size_t size);
void *gb_realloc(void *p, size_t n);
void gb_free(void *p);
/* realloc (or malloc, p NULL) that returns NULL instead of aborting, p
 * left as it was: for the one caller that can take a refusal, the Lua
 * interpreter (engine/script), whose scripts then get "not enough memory". */
void *gb_try_realloc(void *p, size_t n);
char *gb_memdup(const void *p, size_t n); /* copies n bytes and adds a NUL */
char *gb_strdup(const char *s);

/* Bytes of p the caller may use (at least what was asked for; malloc's
 * usable size where the platform tells it). For capacity decisions. */
size_t gb_mem_usable(void *p);

/* Bytes p costs in gb_mem_used() (the usable size plus, on platforms
 * without malloc_usable_size, the size prefix). For memory reports, so
 * that the parts of a structure add up to what INFO memory counts. */
size_t gb_mem_accounted(void *p);

/* Marks the calling thread as one that is not the engine's (its
 * allocations and frees counted atomically). */
void gb_mem_set_offthread(void);

/* Bytes currently allocated through gb_malloc & co. */
size_t gb_mem_used(void);

#endif
