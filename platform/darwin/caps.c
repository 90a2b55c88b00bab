/* macOS: QoS classes, the current CPU and kernel-assisted parking; no
 * pinning (the affinity tag is a hint on Intel Macs and KERN_NOT_SUPPORTED on
 * Apple Silicon), affinity masks, NUMA, memfd, huge pages or numa_maps. */
#include "caps.h"
#include "common/internal.h"

const char *gb_platform_name(void) { return "darwin"; }

bool gb_platform_has(unsigned caps)
{
    const unsigned have = GB_CAP_CPU_CURRENT | GB_CAP_LATENCY_QOS | GB_CAP_PARK_KERNEL;
    return (caps & have) == caps;
}

const char gb__no_numa_why[] = "macOS has one memory domain (Apple Silicon's unified memory) and no sysfs";
