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
 * Two policies, chosen by what a failure could leave behind:
 *
 * - gb_malloc & co: out of memory is fatal, as in Redis's zmalloc (the
 *   process logs the size and aborts). The engine's data structures use
 *   these: a command that fails half way through a mutation (a hash table
 *   resized, half the members of an SUNIONSTORE moved) cannot be undone
 *   cheaply, and continuing with a half-applied write is worse than
 *   stopping. What keeps the engine below the machine's limit is
 *   --maxmemory (writes refused with OOM before they allocate), and
 *   client-driven sizes are bounded before they reach the allocator.
 *   Start-up allocations are fatal too: the message names the size and the
 *   exit status is non-zero (SIGABRT).
 *
 * - gb_try_malloc & co: fallible, NULL on failure with nothing changed.
 *   The transports use these for every buffer that exists per client or
 *   whose size a client drives (query and output buffers, ring input and
 *   pending replies, SBE reply and decode scratch, write requests,
 *   per-connection and per-claim structures): a failure there costs that
 *   one client (its connection closed, its ring slot released, the
 *   connection refused), never the server. The Lua interpreter's allocator
 *   (engine/script) uses them too: a script that runs out gets "not enough
 *   memory". Counted in gb_mem_used() like the rest and freed with
 *   gb_free().
 *
 * Threads: the engine thread uses these freely; a thread that frees engine
 * memory in the background (lazy freeing) calls gb_mem_set_offthread()
 * first, so its frees are counted without a race.
 */
#ifndef GB_ENGINE_MEM_H
#define GB_ENGINE_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void *gb_malloc(size_t n);
void *gb_calloc(size_t count, size_t size);
void *gb_realloc(void *p, size_t n);
void gb_free(void *p);
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

/* ---- fallible allocation ------------------------------------------------------------ */

/* Each call site is identified by its file and line, so that the fault
 * injector below can tell which sites a test reached. */
#define gb_try_malloc(n) gb_try_malloc_at((n), __FILE__, __LINE__)
#define gb_try_calloc(count, size) gb_try_calloc_at((count), (size), __FILE__, __LINE__)
/* realloc (or malloc, p NULL); on failure p is left as it was (still owned
 * by the caller). */
#define gb_try_realloc(p, n) gb_try_realloc_at((p), (n), __FILE__, __LINE__)

void *gb_try_malloc_at(size_t n, const char *file, int line);
void *gb_try_calloc_at(size_t count, size_t size, const char *file, int line);
void *gb_try_realloc_at(void *p, size_t n, const char *file, int line);
/* A copy of the string s, or NULL. */
#define gb_try_strdup(s) gb_try_strdup_at((s), __FILE__, __LINE__)
char *gb_try_strdup_at(const char *s, const char *file, int line);

/* ---- blocks whose owner knows their sizes ----------------------------------------------- */

/* For an owner that passes a block's size with every call (the Lua
 * interpreter's allocator does): the counter moves by the sizes asked for,
 * without asking the allocator for a block's usable size (two calls per
 * realloc on the hot path of every script). Such a block is only ever
 * resized or freed by these; never by gb_free. osize is ignored for p NULL. */
#define gb_try_sized_realloc(p, osize, nsize) gb_try_sized_realloc_at((p), (osize), (nsize), __FILE__, __LINE__)
void *gb_try_sized_realloc_at(void *p, size_t osize, size_t nsize, const char *file, int line);
/* Aborts on failure, like gb_realloc. */
void *gb_sized_realloc(void *p, size_t osize, size_t nsize);
void gb_sized_free(void *p, size_t size);
/* A block of `size` bytes at an address that is a multiple of `align` (a
 * power of two; size a multiple of it), counted as size and freed by
 * gb_sized_free with the same size. The Lua interpreter's small-block heap
 * finds a block's chunk by rounding its address down (script_heap.h). */
#define gb_try_sized_aligned_alloc(align, size) gb_try_sized_aligned_alloc_at((align), (size), __FILE__, __LINE__)
void *gb_try_sized_aligned_alloc_at(size_t align, size_t size, const char *file, int line);
/* Aborts on failure. */
void *gb_sized_aligned_alloc(size_t align, size_t size);

/*
 * Fault injection, for tests only: makes the nth fallible allocation from
 * now (1-based) fail, and with `and_after` every one after it too. nth == 0
 * fails nothing but still counts calls and sites. The server arms it from
 * the GOBLIN_FAULT_ALLOC environment variable at start-up (apps/server); no
 * client command can. It affects gb_try_* only: the fail-stop allocators
 * above never fail on purpose. Engine thread only, like the counter.
 */
void gb_mem_fault_arm(uint64_t nth, bool and_after);
/* The same, counting only the calls at one site: `file` is the end of the
 * source path ("transport/sbe/sbe_server.c"), `line` its line. A sweep uses
 * it for a site whose global call number shifts from run to run (a reply
 * that one run builds in one piece and the next in two). `file` must stay
 * valid while armed. */
void gb_mem_fault_arm_site(uint64_t nth, const char *file, int line);
void gb_mem_fault_disarm(void);

/* What the injector saw since it was armed. */
typedef struct gb_mem_fault_stats {
    uint64_t calls;      /* fallible allocations made */
    uint64_t failed;     /* of them, failed on purpose */
    unsigned sites;      /* distinct call sites reached */
    const char *first_failed_file; /* the first site failed on purpose (NULL: none) */
    int first_failed_line;
} gb_mem_fault_stats;
void gb_mem_fault_get(gb_mem_fault_stats *out);

/* The i-th site reached (0 <= i < stats.sites): file, line, calls there,
 * and the number of the first call that reached it (arming the injector
 * with that number makes this site fail, if the run repeats). Returns
 * false past the end. */
bool gb_mem_fault_site(unsigned i, const char **file, int *line, uint64_t *calls, uint64_t *first_call);

#endif
