/* Linux: everything the contract offers. */
#include "caps.h"

const char *gb_platform_name(void) { return "linux"; }

bool gb_platform_has(unsigned caps)
{
    const unsigned have = GB_CAP_PIN | GB_CAP_AFFINITY | GB_CAP_CPU_CURRENT | GB_CAP_TOPOLOGY | GB_CAP_NUMA |
                          GB_CAP_HUGEPAGES | GB_CAP_MEMFD | GB_CAP_PARK_KERNEL | GB_CAP_PROC_NUMA_MAPS |
                          GB_CAP_POPULATE;
    return (caps & have) == caps;
}
