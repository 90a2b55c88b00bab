/* Generic POSIX: the allocator cannot be asked for a block's size, and there is
 * no portable resident-set figure beyond getrusage's peak. */
#define _POSIX_C_SOURCE 200809L
#define _DARWIN_C_SOURCE /* when built on macOS: keep _SC_NPROCESSORS_ONLN, SO_NOSIGPIPE visible */
#include "mem.h"

#include <sys/resource.h>

#include "common/internal.h"

bool gb_plat_malloc_usable_supported(void) { return false; }

size_t gb_plat_malloc_usable_size(void *p)
{
    (void)p;
    return 0;
}

/* The unit of ru_maxrss, which POSIX leaves open: KiB on Linux and the BSDs,
 * bytes on macOS (getrusage(2) of each). */
#if defined(__APPLE__)
#define MAXRSS_UNIT 1u
#else
#define MAXRSS_UNIT 1024u
#endif

void gb_plat_heap_trim(void) {}

size_t gb_plat_rss_bytes(void)
{
    /* POSIX only offers the peak. */
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (size_t)ru.ru_maxrss * MAXRSS_UNIT;
}

int gb_plat_advise_huge_pages(void *p, size_t n)
{
    (void)p;
    (void)n;
    return gb__fail(GB_ENOTSUP, NULL, 0,
                    "huge-page advice for heap memory is not supported by the generic POSIX platform layer");
}

/* No heap huge-page advice here (gb_plat_advise_huge_pages): a bulk load
 * runs as any other allocation. */
void gb_plat_heap_bulk_begin(gb_heap_bulk *b) { b->on = false; }
void gb_plat_heap_bulk_advise(gb_heap_bulk *b) { (void)b; }
void gb_plat_heap_bulk_end(gb_heap_bulk *b) { (void)b; }
