/*
 * Process introspection: where a mapping's pages are, as the kernel reports
 * it in /proc/<pid>/numa_maps (each line: start address, policy, ...,
 * N<node>=<pages>). Used by the tests and by the server's INFO.
 *
 *   linux        - reads /proc
 *   darwin/posix - GB_ENOTSUP
 */
#ifndef GB_PLATFORM_PROCESS_H
#define GB_PLATFORM_PROCESS_H

#include <stddef.h>
#include <sys/types.h>

/* The numa_maps line of the mapping that starts at `addr` in process `pid`
 * (0 = this process), without its newline.
 *   GB_ENOENT  no mapping starts at addr
 *   GB_ENONUMA the file does not exist (kernel without NUMA)
 *   GB_ERANGE  `cap` too small */
int gb_proc_numa_maps_line(pid_t pid, const void *addr, char *out, size_t cap);

/* Only the N<node>=<pages> fields of that line, space separated
 * ("N0=512 N1=3"); "" when no page is resident. Same errors. */
int gb_proc_numa_maps_nodes(pid_t pid, const void *addr, char *out, size_t cap);

/* The same as numbers: pages[n] for nodes 0..nnodes-1 (zeroed first). */
int gb_proc_numa_maps_pages(pid_t pid, const void *addr, size_t *pages, int nnodes);

#endif
