/* macOS: no NUMA topology (Apple Silicon is one memory domain; there is no
 * sysfs). The cpulist parser is in common/topology_parse.c. */
#include "common/internal.h"
#include "topology.h"

#define NO_TOPOLOGY "macOS has no NUMA topology to read (one memory domain, no sysfs)"

int gb_topo_node_of_cpu(const char *sysfs_root, int cpu, int *node_out, char *err, size_t errlen)
{
    (void)sysfs_root, (void)cpu, (void)node_out;
    return gb__fail(GB_ENOTSUP, err, errlen, NO_TOPOLOGY);
}

int gb_topo_node_cpus(const char *sysfs_root, int node, gb_cpuset *out, char *err, size_t errlen)
{
    (void)sysfs_root, (void)node, (void)out;
    return gb__fail(GB_ENOTSUP, err, errlen, NO_TOPOLOGY);
}

int gb_topo_node_count(const char *sysfs_root)
{
    (void)sysfs_root;
    return gb__fail(GB_ENOTSUP, NULL, 0, NO_TOPOLOGY);
}
