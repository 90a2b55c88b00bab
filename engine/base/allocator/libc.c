/* engine/base/allocator.h on the C library's malloc (GOBLIN_ALLOCATOR=libc:
 * sanitizer and fuzzing builds, whose runtimes bring their own malloc). */
#include "engine/base/allocator.h"

#include "platform/mem.h"

const char *gb_allocator_name(void) { return "libc"; }

bool gb_allocator_stats_get(gb_allocator_stats *st)
{
    (void)st;
    return false;
}

bool gb_allocator_set_background_thread(bool on)
{
    (void)on;
    return false;
}

size_t gb_allocator_usable_for(size_t n)
{
    (void)n;
    return 0;
}

size_t gb_allocator_slab_bytes(size_t size)
{
    (void)size;
    return 0;
}

void gb_allocator_purge(void) { gb_plat_heap_trim(); }

char *gb_allocator_report(size_t *len)
{
    *len = 0;
    return NULL;
}
