/*
 * What this build of the platform layer can do, so callers (and the tests)
 * know in advance which calls will answer GB_ENOTSUP. Capabilities describe
 * the variant; run-time availability is separate (gb_numa_available(): a
 * Linux kernel may still lack NUMA).
 */
#ifndef GB_PLATFORM_CAPS_H
#define GB_PLATFORM_CAPS_H

#include <stdbool.h>

enum gb_cap {
    GB_CAP_PIN = 1u << 0,            /* gb_cpu_pin_current_thread pins */
    GB_CAP_AFFINITY = 1u << 1,       /* gb_cpu_allowed is a real affinity mask */
    GB_CAP_CPU_CURRENT = 1u << 2,    /* gb_cpu_current works */
    GB_CAP_LATENCY_QOS = 1u << 3,    /* gb_thread_set_latency_critical works */
    GB_CAP_TOPOLOGY = 1u << 4,       /* gb_topo_node_of_cpu reads sysfs */
    GB_CAP_NUMA = 1u << 5,           /* the numa.h calls exist (may be GB_ENONUMA) */
    GB_CAP_HUGEPAGES = 1u << 6,      /* GB_SHM_HUGEPAGES can work */
    GB_CAP_MEMFD = 1u << 7,          /* gb_shm_create uses memfd */
    GB_CAP_PARK_KERNEL = 1u << 8,    /* gb_park_* sleep in the kernel (else polling) */
    GB_CAP_PROC_NUMA_MAPS = 1u << 9, /* process.h works */
    GB_CAP_POPULATE = 1u << 10,      /* gb_shm_prefault tries MADV_POPULATE_WRITE */
};

/* "linux", "darwin" or "posix". */
const char *gb_platform_name(void);

/* True if every capability bit in `caps` is present. */
bool gb_platform_has(unsigned caps);

#endif
