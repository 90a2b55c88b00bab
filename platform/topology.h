/*
 * NUMA topology: which node a CPU belongs to, read from sysfs.
 *
 * The sysfs root is a parameter (hwloc's HWLOC_FSROOT pattern) so tests replay
 * fake trees: <root>/devices/system/node/node<N>/cpulist. NULL or "" means
 * "/sys".
 *
 *   linux        - reads the tree.
 *   darwin/posix - GB_ENOTSUP (no NUMA topology to read; Apple Silicon is one
 *                  memory domain).
 * The range-list parser is OS-independent and works everywhere.
 */
#ifndef GB_PLATFORM_TOPOLOGY_H
#define GB_PLATFORM_TOPOLOGY_H

#include <stddef.h>

#include "cpu.h"

/* Parses a kernel range list ("0-7,64-71", "1,5,9,13", "" and "\n" = empty
 * set) into `out`. Whitespace around items and a trailing newline are
 * accepted. GB_EPARSE for anything else: empty items ("1,,2", "1,"), reversed
 * ranges ("7-0"), CPUs >= GB_CPUSET_MAX, non-digits. On error `out` is
 * left empty. */
int gb_topo_parse_cpulist(const char *text, gb_cpuset *out);

/* The node whose cpulist contains `cpu`, in *node_out.
 *   GB_ENOENT  the CPU is in no node (offline CPU, wrong number)
 *   GB_EPARSE  a node's cpulist is malformed or a CPU is claimed by two
 *              nodes; the message names the file
 *   GB_ENONUMA the node directory is absent (kernel without CONFIG_NUMA)
 *   GB_EINVAL  cpu out of range
 * Every node file is read and checked, so the result never depends on the
 * order readdir() returns. `err` (may be NULL) receives the message. */
int gb_topo_node_of_cpu(const char *sysfs_root, int cpu, int *node_out, char *err, size_t errlen);

/* The CPUs of node `node`. GB_ENOENT if there is no such node. */
int gb_topo_node_cpus(const char *sysfs_root, int node, gb_cpuset *out, char *err, size_t errlen);

/* Number of node<N> directories (>= 1), or GB_ENONUMA / GB_ENOTSUP. */
int gb_topo_node_count(const char *sysfs_root);

#endif
