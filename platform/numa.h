/*
 * NUMA placement, Linux raw syscalls (set_mempolicy, mbind, get_mempolicy,
 * move_pages) through the syscall table - no libnuma.
 *
 * Two policies, deliberately asymmetric (docs/numa.md):
 *   - the ring: gb_numa_bind_region() (MPOL_BIND|MPOL_MF_STRICT) before the
 *     first touch, then gb_shm_prefault(), then gb_numa_verify(); a remote
 *     page is fatal (GB_EREMOTE).
 *   - the arenas: gb_numa_set_preferred() (MPOL_PREFERRED), best effort.
 *
 * Policies apply at first touch: binding memory that is already faulted
 * does not move it (MPOL_MF_STRICT then reports it as GB_EREMOTE).
 *
 * "No NUMA" (kernel without CONFIG_NUMA: ENOSYS; container seccomp: EPERM)
 * is GB_ENONUMA, so callers turn --cpu/--numa-arena placement into logged
 * no-ops. darwin/posix: gb_numa_available() is GB_ENONUMA, the others
 * GB_ENOTSUP.
 */
#ifndef GB_PLATFORM_NUMA_H
#define GB_PLATFORM_NUMA_H

#include <stddef.h>

/* Highest node number + 1 we build masks for (Linux MAX_NUMNODES with
 * NODES_SHIFT=10). The kernel reads maxnode-1 bits: we pass this + 1. */
#define GB_NUMA_MAX_NODES 1024

/* Per-node counts kept in a report; pages on higher nodes are summed into
 * `pages_beyond`. */
#define GB_NUMA_REPORT_NODES 64

typedef struct {
    int node;                                   /* the node asked for */
    size_t page_size;                           /* bytes per page checked */
    size_t pages;                               /* pages in the range */
    size_t on_node;                             /* resident on `node` */
    size_t remote;                              /* resident on any other node */
    size_t absent;                              /* never faulted (-ENOENT) */
    size_t failed;                              /* other per-page errors */
    size_t per_node[GB_NUMA_REPORT_NODES];      /* resident pages per node */
    size_t pages_beyond;                        /* resident on nodes >= 64 */
} gb_numa_report;

/* 1 if the NUMA memory-policy syscalls work here, else GB_ENONUMA (ENOSYS,
 * EPERM, or a platform without them). Uncached: one cheap syscall. */
int gb_numa_available(void);

/* Strictly binds [addr, addr+len) to `node` (MPOL_BIND, MPOL_MF_STRICT).
 * `addr` must be page aligned; call before the first touch.
 *   GB_EINVAL  node out of range, does not exist or has no memory; range
 *              not mapped or unaligned
 *   GB_EREMOTE pages already faulted elsewhere (bound too late)
 *   GB_ENONUMA no NUMA; GB_ENOMEM kernel out of memory */
int gb_numa_bind_region(void *addr, size_t len, int node);

/* The calling thread's policy for future allocations (threads it creates
 * inherit it): strict MPOL_BIND to `node`, soft MPOL_PREFERRED, or back to
 * MPOL_DEFAULT (local first touch). */
int gb_numa_set_strict(int node);
int gb_numa_set_preferred(int node);
int gb_numa_reset(void);

/* Asks the kernel where each page of [addr, addr+len) lives (move_pages
 * with nodes=NULL) and fills `rep` (may be NULL). 0 if every resident page
 * is on `node` (pages never touched are counted in rep->absent, not a
 * failure); GB_EREMOTE if any page is on another node; GB_ESYS if the kernel
 * reported per-page errors; GB_ENONUMA without NUMA. */
int gb_numa_verify(const void *addr, size_t len, int node, gb_numa_report *rep);

/* "5 pages on node 1, 2 pages on node 0, 1 page not faulted (wanted node 0)"
 * - node counts in ascending node order. Returns the length it wanted to
 * write, like snprintf. OS-independent. */
int gb_numa_report_format(const gb_numa_report *rep, char *buf, size_t cap);

#endif
