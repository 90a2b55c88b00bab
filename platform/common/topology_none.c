/* topology.h for the platform layers with no NUMA topology to read (darwin,
 * posix: no sysfs). The cpulist parser is in common/topology_parse.c and
 * works everywhere. Picked by platform/CMakeLists.txt instead of
 * <os>/topology.c. */
#include "common/internal.h"
#include "topology.h"

int gb_topo_node_of_cpu(const char *sysfs_root, int cpu, int *node_out, char *err, size_t errlen)
{
    (void)sysfs_root, (void)cpu, (void)node_out;
    return gb__fail(GB_ENOTSUP, err, errlen, "no NUMA topology to read: %s", gb__no_numa_why);
}

int gb_topo_node_cpus(const char *sysfs_root, int node, gb_cpuset *out, char *err, size_t errlen)
{
    (void)sysfs_root, (void)node, (void)out;
    return gb__fail(GB_ENOTSUP, err, errlen, "no NUMA topology to read: %s", gb__no_numa_why);
}

int gb_topo_node_count(const char *sysfs_root)
{
    (void)sysfs_root;
    return gb__fail(GB_ENOTSUP, NULL, 0, "no NUMA topology to read: %s", gb__no_numa_why);
}
