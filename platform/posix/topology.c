/* Generic POSIX: no NUMA topology to read. The cpulist parser is in
 * common/topology_parse.c and works here too. */
#include "common/internal.h"
#include "topology.h"

int gb_topo_node_of_cpu(const char *sysfs_root, int cpu, int *node_out, char *err, size_t errlen)
{
    (void)sysfs_root, (void)cpu, (void)node_out;
    return gb__fail(GB_ENOTSUP, err, errlen, "NUMA topology is not available on the generic POSIX platform layer");
}

int gb_topo_node_cpus(const char *sysfs_root, int node, gb_cpuset *out, char *err, size_t errlen)
{
    (void)sysfs_root, (void)node, (void)out;
    return gb__fail(GB_ENOTSUP, err, errlen, "NUMA topology is not available on the generic POSIX platform layer");
}

int gb_topo_node_count(const char *sysfs_root)
{
    (void)sysfs_root;
    return gb__fail(GB_ENOTSUP, NULL, 0, "NUMA topology is not available on the generic POSIX platform layer");
}
