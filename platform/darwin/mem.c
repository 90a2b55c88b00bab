/* macOS heap introspection: malloc_size and the task's resident size. */
#include "mem.h"

#include <mach/mach.h>
#include <malloc/malloc.h>

#include "common/internal.h"

bool gb_plat_malloc_usable_supported(void) { return true; }

size_t gb_plat_malloc_usable_size(void *p) { return p ? malloc_size(p) : 0; }

void gb_plat_heap_trim(void) { (void)malloc_zone_pressure_relief(NULL, 0); }

size_t gb_plat_rss_bytes(void)
{
    mach_task_basic_info_data_t info;
    mach_msg_type_number_t count = MACH_TASK_BASIC_INFO_COUNT;
    if (task_info(mach_task_self(), MACH_TASK_BASIC_INFO, (task_info_t)&info, &count) != KERN_SUCCESS)
        return 0;
    return (size_t)info.resident_size;
}

int gb_plat_advise_huge_pages(void *p, size_t n)
{
    (void)p;
    (void)n;
    return gb__fail(GB_ENOTSUP, NULL, 0, "huge-page advice for heap memory is not supported on macOS");
}

/* No heap huge-page advice here (gb_plat_advise_huge_pages): a bulk load
 * runs as any other allocation. */
void gb_plat_heap_bulk_begin(gb_heap_bulk *b) { b->on = false; }
void gb_plat_heap_bulk_advise(gb_heap_bulk *b) { (void)b; }
void gb_plat_heap_bulk_end(gb_heap_bulk *b) { (void)b; }
