#include "engine/base/mem.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/allocator.h"
#include "engine/base/common.h"
#include "platform/mem.h"
#include "platform/shm_atomic.h"

/* Where the platform cannot report a block's size, a prefix of this many bytes
 * (keeps 16-byte alignment) records it. */
#define PREFIX 16

/* Process-wide, like Redis's zmalloc counter: the engine thread allocates
 * and frees through these functions with a plain counter (exact, and
 * nothing on its hot path), and the allocator it mirrors is the process's
 * too (tests that run several engines side by side see their sum). The one
 * other thread that frees engine memory (lazy freeing, engine/core/memory/lazyfree.c)
 * marks itself off-thread and counts into an atomic that gb_mem_used adds. */
static size_t used_bytes;
static uint64_t offthread_bytes; /* two's complement sum of signed deltas */
static _Thread_local bool offthread;

static inline void account(int64_t delta)
{
    if (__builtin_expect(offthread, 0))
        gb_shm_fetch_add_relaxed_u64(&offthread_bytes, (uint64_t)delta);
    else
        used_bytes += (size_t)delta;
}

void gb_mem_set_offthread(void) { offthread = true; }
static int usable_mode = -1; /* -1 unknown, 1 allocator tells sizes, 0 prefix */

static inline int have_usable(void)
{
    if (__builtin_expect(usable_mode < 0, 0))
        usable_mode = gb_plat_malloc_usable_supported() ? 1 : 0;
    return usable_mode;
}

static void oom(size_t n)
{
    fprintf(stderr, "goblin-core: out of memory allocating %zu bytes; aborting\n", n);
    fflush(stderr);
    abort();
}

/* The usable size of p, just allocated for n bytes: from n where the
 * allocator can tell it so (engine/base/allocator.h), else from p. */
static size_t usable_of_new(void *p, size_t n)
{
    size_t u = gb_allocator_usable_for(n);
    return u ? u : gb_plat_malloc_usable_size(p);
}

/* The allocations themselves: NULL on failure, nothing counted then. */
static void *raw_malloc(size_t n)
{
    if (have_usable()) {
        size_t ask = n ? n : 1;
        void *p = malloc(ask);
        if (p)
            account((int64_t)usable_of_new(p, ask));
        return p;
    }
    if (n > SIZE_MAX - PREFIX)
        return NULL;
    char *raw = malloc(n + PREFIX);
    if (!raw)
        return NULL;
    memcpy(raw, &n, sizeof n);
    account((int64_t)(n + PREFIX));
    return raw + PREFIX;
}

static void *raw_realloc(void *p, size_t n)
{
    if (!p)
        return raw_malloc(n);
    if (have_usable()) {
        size_t old = gb_plat_malloc_usable_size(p);
        void *q = realloc(p, n ? n : 1);
        if (q)
            account((int64_t)gb_plat_malloc_usable_size(q) - (int64_t)old);
        return q;
    }
    if (n > SIZE_MAX - PREFIX)
        return NULL;
    char *raw = (char *)p - PREFIX;
    size_t old;
    memcpy(&old, raw, sizeof old);
    char *q = realloc(raw, n + PREFIX);
    if (!q)
        return NULL;
    memcpy(q, &n, sizeof n);
    account((int64_t)n - (int64_t)old);
    return q + PREFIX;
}

void *gb_malloc(size_t n)
{
    void *p = raw_malloc(n);
    if (!p)
        oom(n);
    return p;
}

void *gb_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        oom(SIZE_MAX);
    void *p = gb_malloc(count * size);
    memset(p, 0, count * size);
    return p;
}

void *gb_realloc(void *p, size_t n)
{
    void *q = raw_realloc(p, n);
    if (!q)
        oom(n);
    return q;
}

/* ---- fault injection ---------------------------------------------------------------- */

/* Sites are told apart by (file, line): __FILE__ of one translation unit is
 * one string, so comparing the pointer first is enough almost always. */
#define MAX_SITES 256

typedef struct fault_site {
    const char *file;
    int line;
    uint64_t calls;
    uint64_t first_call;
} fault_site;

static struct {
    bool armed;
    bool and_after;
    uint64_t nth;
    const char *site_file; /* non-NULL: nth counts the calls at this site only */
    int site_line;
    uint64_t site_calls;
    gb_mem_fault_stats st;
    fault_site sites[MAX_SITES];
} fault;

void gb_mem_fault_arm(uint64_t nth, bool and_after)
{
    memset(&fault, 0, sizeof fault);
    fault.armed = true;
    fault.nth = nth;
    fault.and_after = and_after;
}

void gb_mem_fault_arm_site(uint64_t nth, const char *file, int line)
{
    gb_mem_fault_arm(nth, false);
    fault.site_file = file;
    fault.site_line = line;
}

void gb_mem_fault_disarm(void) { fault.armed = false; }

void gb_mem_fault_get(gb_mem_fault_stats *out) { *out = fault.st; }

bool gb_mem_fault_site(unsigned i, const char **file, int *line, uint64_t *calls, uint64_t *first_call)
{
    if (i >= fault.st.sites)
        return false;
    *file = fault.sites[i].file;
    *line = fault.sites[i].line;
    *calls = fault.sites[i].calls;
    *first_call = fault.sites[i].first_call;
    return true;
}

static void note_site(const char *file, int line, uint64_t call)
{
    for (unsigned i = 0; i < fault.st.sites; i++) {
        fault_site *s = &fault.sites[i];
        if (s->line == line && (s->file == file || strcmp(s->file, file) == 0)) {
            s->calls++;
            return;
        }
    }
    if (fault.st.sites < MAX_SITES)
        fault.sites[fault.st.sites++] = (fault_site){file, line, 1, call};
}

/* Whether `file` (a __FILE__, perhaps absolute) names the targeted source:
 * equal to it, or ending in "/" and it. */
static bool is_target_site(const char *file, int line)
{
    if (line != fault.site_line)
        return false;
    size_t fl = strlen(file), tl = strlen(fault.site_file);
    return fl >= tl && strcmp(file + fl - tl, fault.site_file) == 0 && (fl == tl || file[fl - tl - 1] == '/');
}

/* Whether this fallible allocation is to fail on purpose. */
static bool fault_hit(const char *file, int line)
{
    uint64_t n = ++fault.st.calls;
    note_site(file, line, n);
    if (fault.site_file) {
        if (!is_target_site(file, line))
            return false;
        n = ++fault.site_calls;
    }
    if (fault.nth == 0 || n < fault.nth || (n > fault.nth && !fault.and_after))
        return false;
    if (fault.st.failed++ == 0) {
        fault.st.first_failed_file = file;
        fault.st.first_failed_line = line;
    }
    return true;
}

/* ---- fallible allocation -------------------------------------------------------------- */

void *gb_try_malloc_at(size_t n, const char *file, int line)
{
    if (GB_UNLIKELY(fault.armed) && fault_hit(file, line))
        return NULL;
    return raw_malloc(n);
}

void *gb_try_calloc_at(size_t count, size_t size, const char *file, int line)
{
    if (GB_UNLIKELY(fault.armed) && fault_hit(file, line))
        return NULL;
    if (size && count > SIZE_MAX / size)
        return NULL;
    void *p = raw_malloc(count * size);
    if (p)
        memset(p, 0, count * size);
    return p;
}

void *gb_try_realloc_at(void *p, size_t n, const char *file, int line)
{
    if (GB_UNLIKELY(fault.armed) && fault_hit(file, line))
        return NULL;
    return raw_realloc(p, n);
}

void gb_free(void *p)
{
    if (!p)
        return;
    if (have_usable()) {
        account(-(int64_t)gb_plat_malloc_usable_size(p));
        free(p);
        return;
    }
    char *raw = (char *)p - PREFIX;
    size_t n;
    memcpy(&n, raw, sizeof n);
    account(-(int64_t)(n + PREFIX));
    free(raw);
}

/* ---- blocks whose owner knows their sizes ------------------------------------------------ */

static void *sized_realloc(void *p, size_t osize, size_t nsize)
{
    void *q = realloc(p, nsize ? nsize : 1);
    if (q)
        account((int64_t)nsize - (int64_t)(p ? osize : 0));
    return q;
}

void *gb_try_sized_realloc_at(void *p, size_t osize, size_t nsize, const char *file, int line)
{
    if (GB_UNLIKELY(fault.armed) && fault_hit(file, line))
        return NULL;
    return sized_realloc(p, osize, nsize);
}

void *gb_sized_realloc(void *p, size_t osize, size_t nsize)
{
    void *q = sized_realloc(p, osize, nsize);
    if (!q)
        oom(nsize);
    return q;
}

static void *sized_aligned_alloc(size_t align, size_t size)
{
    void *p = aligned_alloc(align, size);
    if (p)
        account((int64_t)size);
    return p;
}

void *gb_try_sized_aligned_alloc_at(size_t align, size_t size, const char *file, int line)
{
    if (GB_UNLIKELY(fault.armed) && fault_hit(file, line))
        return NULL;
    return sized_aligned_alloc(align, size);
}

void *gb_sized_aligned_alloc(size_t align, size_t size)
{
    void *p = sized_aligned_alloc(align, size);
    if (!p)
        oom(size);
    return p;
}

void gb_sized_free(void *p, size_t size)
{
    if (!p)
        return;
    account(-(int64_t)size);
    free(p);
}

char *gb_memdup(const void *p, size_t n)
{
    char *q = gb_malloc(n + 1);
    if (n)
        memcpy(q, p, n);
    q[n] = '\0';
    return q;
}

char *gb_strdup(const char *s) { return gb_memdup(s, strlen(s)); }

char *gb_try_strdup_at(const char *s, const char *file, int line)
{
    size_t n = strlen(s) + 1;
    char *q = gb_try_malloc_at(n, file, line);
    if (q)
        memcpy(q, s, n);
    return q;
}

size_t gb_mem_usable(void *p)
{
    if (!p)
        return 0;
    if (have_usable())
        return gb_plat_malloc_usable_size(p);
    size_t n;
    memcpy(&n, (char *)p - PREFIX, sizeof n);
    return n;
}

size_t gb_mem_used(void)
{
    return used_bytes + (size_t)gb_shm_load_relaxed_u64(&offthread_bytes);
}

size_t gb_mem_accounted(void *p)
{
    if (!p)
        return 0;
    return gb_mem_usable(p) + (have_usable() ? 0 : PREFIX);
}
