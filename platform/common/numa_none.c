/* numa.h for the platform layers without memory policies (darwin: one
 * memory domain; posix: no such API). gb_numa_available says "no NUMA", so
 * --cpu/--numa-arena placement becomes a logged no-op; the rest say "not
 * supported". Picked by platform/CMakeLists.txt instead of <os>/numa.c. */
#include <string.h>

#include "common/internal.h"
#include "numa.h"

int gb_numa_available(void) { return gb__fail(GB_ENONUMA, NULL, 0, "no NUMA memory policies: %s", gb__no_numa_why); }

static int unsupported(void) { return gb__fail(GB_ENOTSUP, NULL, 0, "NUMA placement is not supported: %s", gb__no_numa_why); }

int gb_numa_bind_region(void *addr, size_t len, int node)
{
    (void)addr, (void)len, (void)node;
    return unsupported();
}

int gb_numa_set_strict(int node)
{
    (void)node;
    return unsupported();
}

int gb_numa_set_preferred(int node)
{
    (void)node;
    return unsupported();
}

int gb_numa_reset(void) { return unsupported(); }

int gb_numa_verify(const void *addr, size_t len, int node, gb_numa_report *rep)
{
    (void)addr, (void)len;
    if (rep) {
        memset(rep, 0, sizeof *rep);
        rep->node = node;
    }
    return unsupported();
}
