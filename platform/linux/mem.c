/* Linux heap introspection: glibc's malloc_usable_size and /proc/self/statm. */
#define _GNU_SOURCE
#include "mem.h"

#include <malloc.h>
#include <stdio.h>
#include <unistd.h>

bool gb_plat_malloc_usable_supported(void) { return true; }

size_t gb_plat_malloc_usable_size(void *p) { return p ? malloc_usable_size(p) : 0; }

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
