/* Linux heap introspection: glibc's malloc_usable_size and /proc/self/statm;
 * huge-page advice. */
#define _GNU_SOURCE
#include "mem.h"

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/internal.h"

bool gb_plat_malloc_usable_supported(void) { return true; }

size_t gb_plat_malloc_usable_size(void *p) { return p ? malloc_usable_size(p) : 0; }

void gb_plat_heap_trim(void) { (void)malloc_trim(0); }

size_t gb_plat_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    unsigned long size = 0, resident = 0;
    int n = fscanf(f, "%lu %lu", &size, &resident);
    fclose(f);
    if (n != 2)
        return 0;
    return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

int gb_plat_advise_huge_pages(void *p, size_t n)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = ((uintptr_t)p + page - 1) & ~(page - 1), end = ((uintptr_t)p + n) & ~(page - 1);
    if (end <= start)
        return 0;
    if (gb__sys.madvise((void *)start, end - start, MADV_HUGEPAGE) != 0) {
        int e = errno;
        return gb__fail(gb__errno_code(e), NULL, 0, "madvise(MADV_HUGEPAGE): %s", strerror(e));
    }
    return 0;
}

#ifdef __GLIBC__
#define BULK_TOP_PAD (64u << 20)
#define GLIBC_DEFAULT_TOP_PAD (128u << 10) /* glibc's DEFAULT_TOP_PAD */

static uintptr_t heap_end(void)
{
    void *e = sbrk(0);
    return e == (void *)-1 ? 0 : (uintptr_t)e;
}

void gb_plat_heap_bulk_begin(gb_heap_bulk *b)
{
    b->on = mallopt(M_TOP_PAD, (int)BULK_TOP_PAD) == 1;
    b->advised_to = heap_end();
}

void gb_plat_heap_bulk_advise(gb_heap_bulk *b)
{
    uintptr_t end = heap_end();
    if (!b->on || end <= b->advised_to || !b->advised_to)
        return;
    /* a hint: "never" transparent huge pages, or a kernel without them, ignore it */
    (void)gb_plat_advise_huge_pages((void *)b->advised_to, end - b->advised_to);
    b->advised_to = end;
}

void gb_plat_heap_bulk_end(gb_heap_bulk *b)
{
    if (!b->on)
        return;
    gb_plat_heap_bulk_advise(b);
    (void)mallopt(M_TOP_PAD, (int)GLIBC_DEFAULT_TOP_PAD);
    b->on = false;
}
#else /* another C library (musl): its own heap, no such knob */
void gb_plat_heap_bulk_begin(gb_heap_bulk *b) { b->on = false; }
void gb_plat_heap_bulk_advise(gb_heap_bulk *b) { (void)b; }
void gb_plat_heap_bulk_end(gb_heap_bulk *b) { (void)b; }
#endif
