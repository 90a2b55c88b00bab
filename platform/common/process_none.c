/* process.h for the platform layers without /proc/<pid>/numa_maps (darwin,
 * posix): every call is "not supported". Picked by platform/CMakeLists.txt
 * instead of <os>/process.c. */
#include "common/internal.h"
#include "process.h"

static int unsupported(void)
{
    return gb__fail(GB_ENOTSUP, NULL, 0, "no /proc/<pid>/numa_maps to read: %s", gb__no_numa_why);
}

int gb_proc_numa_maps_line(pid_t pid, const void *addr, char *out, size_t cap)
{
    (void)pid, (void)addr, (void)out, (void)cap;
    return unsupported();
}

int gb_proc_numa_maps_nodes(pid_t pid, const void *addr, char *out, size_t cap)
{
    (void)pid, (void)addr;
    if (out && cap)
        out[0] = '\0';
    return unsupported();
}

int gb_proc_numa_maps_pages(pid_t pid, const void *addr, size_t *pages, int nnodes)
{
    (void)pid, (void)addr, (void)pages, (void)nnodes;
    return unsupported();
}
