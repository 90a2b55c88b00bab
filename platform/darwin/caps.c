/* macOS: QoS classes, the current CPU and kernel-assisted parking; no
 * affinity masks, NUMA, memfd, huge pages or numa_maps. The affinity tag is
 * accepted only on Intel Macs (and is a grouping hint there, not a pin);
 * Apple Silicon answers KERN_NOT_SUPPORTED. */
#include "caps.h"

const char *gb_platform_name(void) { return "darwin"; }

bool gb_platform_has(unsigned caps)
{
    unsigned have = GB_CAP_CPU_CURRENT | GB_CAP_LATENCY_QOS | GB_CAP_PARK_KERNEL;
#if defined(__x86_64__)
    have |= GB_CAP_PIN;
#endif
    return (caps & have) == caps;
}
