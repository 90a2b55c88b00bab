/* Linux NUMA placement through the raw syscalls in the syscall table.
 * Constants are spelled out: the kernel's are enums and macros in
 * <linux/mempolicy.h>, which glibc does not ship and #ifdef cannot see. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "common/internal.h"
#include "numa.h"
#include "shm.h"

enum { MPOL_DEFAULT_ = 0, MPOL_PREFERRED_ = 1, MPOL_BIND_ = 2 };
enum { MPOL_MF_STRICT_ = 1 };

#define MASK_WORDS (GB_NUMA_MAX_NODES / (8 * sizeof(unsigned long)))
/* The kernel decrements maxnode before reading the mask ("maxnode - 1
 * bits"): passing exactly the bit count silently drops the last node. */
#define MAXNODE_ARG ((unsigned long)GB_NUMA_MAX_NODES + 1)

/* Pages asked about per move_pages call: bounded stack use for any length. */
#define VERIFY_BATCH 512

static int is_no_numa(int e) { return e == ENOSYS || e == EPERM; }

static int no_numa(const char *call)
{
    return gb__fail(GB_ENONUMA, NULL, 0,
                    "%s: %s - NUMA is not available (kernel without CONFIG_NUMA, or a container that "
                    "filters memory-policy syscalls)",
                    call, strerror(errno));
}

static int node_mask(int node, unsigned long mask[MASK_WORDS])
{
    if (node < 0 || node >= GB_NUMA_MAX_NODES)
        return gb__fail(GB_EINVAL, NULL, 0, "NUMA node %d is out of range (0..%d)", node, GB_NUMA_MAX_NODES - 1);
    memset(mask, 0, MASK_WORDS * sizeof mask[0]);
    mask[(size_t)node / (8 * sizeof(unsigned long))] |= 1UL << ((size_t)node % (8 * sizeof(unsigned long)));
    return 0;
}

int gb_numa_available(void)
{
    int mode = 0;
    if (gb__sys.get_mempolicy(&mode, NULL, 0, NULL, 0) == 0)
        return 1;
    if (is_no_numa(errno))
        return no_numa("get_mempolicy");
    return gb__fail(GB_ESYS, NULL, 0, "get_mempolicy: %s", strerror(errno));
}

int gb_numa_bind_region(void *addr, size_t len, int node)
{
    unsigned long mask[MASK_WORDS];
    int rc = node_mask(node, mask);
    if (rc < 0)
        return rc;
    if (!addr || !len || ((uintptr_t)addr & (gb_page_size() - 1)))
        return gb__fail(GB_EINVAL, NULL, 0, "mbind: region %p+%zu must be non-empty and page aligned", addr, len);
    if (gb__sys.mbind(addr, len, MPOL_BIND_, mask, MAXNODE_ARG, MPOL_MF_STRICT_) == 0)
        return 0;
    int e = errno;
    if (is_no_numa(e))
        return no_numa("mbind");
    if (e == EIO)
        return gb__fail(GB_EREMOTE, NULL, 0,
                        "mbind: pages of %p+%zu are already on a node other than %d; bind before the first "
                        "touch",
                        addr, len, node);
    if (e == EINVAL)
        return gb__fail(GB_EINVAL, NULL, 0, "mbind: node %d does not exist or has no memory (%s)", node,
                        strerror(e));
    if (e == EFAULT)
        return gb__fail(GB_EINVAL, NULL, 0, "mbind: %p+%zu is not (entirely) mapped", addr, len);
    return gb__fail(gb__errno_code(e), NULL, 0, "mbind(node %d): %s", node, strerror(e));
}

static int set_policy(int mode, int node, const char *what)
{
    unsigned long mask[MASK_WORDS];
    const unsigned long *m = NULL;
    unsigned long maxnode = 0;
    if (mode != MPOL_DEFAULT_) {
        int rc = node_mask(node, mask);
        if (rc < 0)
            return rc;
        m = mask;
        maxnode = MAXNODE_ARG;
    }
    if (gb__sys.set_mempolicy(mode, m, maxnode) == 0)
        return 0;
    int e = errno;
    if (is_no_numa(e))
        return no_numa("set_mempolicy");
    if (e == EINVAL)
        return gb__fail(GB_EINVAL, NULL, 0, "set_mempolicy(%s): node %d does not exist or has no memory", what,
                        node);
    return gb__fail(gb__errno_code(e), NULL, 0, "set_mempolicy(%s): %s", what, strerror(e));
}

int gb_numa_set_strict(int node) { return set_policy(MPOL_BIND_, node, "MPOL_BIND"); }

int gb_numa_set_preferred(int node) { return set_policy(MPOL_PREFERRED_, node, "MPOL_PREFERRED"); }

int gb_numa_reset(void) { return set_policy(MPOL_DEFAULT_, 0, "MPOL_DEFAULT"); }

static void count_status(gb_numa_report *r, int st)
{
    if (st >= 0) {
        if (st == r->node)
            r->on_node++;
        else
            r->remote++;
        if (st < GB_NUMA_REPORT_NODES)
            r->per_node[st]++;
        else
            r->pages_beyond++;
    } else if (st == -ENOENT) {
        r->absent++;
    } else {
        r->failed++;
    }
}

int gb_numa_verify(const void *addr, size_t len, int node, gb_numa_report *rep)
{
    gb_numa_report local;
    gb_numa_report *r = rep ? rep : &local;
    memset(r, 0, sizeof *r);
    r->node = node;
    size_t ps = gb_page_size();
    r->page_size = ps;
    if (node < 0 || node >= GB_NUMA_MAX_NODES)
        return gb__fail(GB_EINVAL, NULL, 0, "NUMA node %d is out of range", node);
    if (!addr || !len)
        return gb__fail(GB_EINVAL, NULL, 0, "verify: empty region");
    uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(ps - 1);
    uintptr_t end = (uintptr_t)addr + len;
    r->pages = (size_t)((end - start + ps - 1) / ps);

    void *pages[VERIFY_BATCH];
    int status[VERIFY_BATCH];
    for (size_t done = 0; done < r->pages;) {
        size_t n = r->pages - done < VERIFY_BATCH ? r->pages - done : VERIFY_BATCH;
        for (size_t i = 0; i < n; i++) {
            pages[i] = (void *)(start + (done + i) * ps);
            status[i] = INT32_MIN; /* a value the kernel never writes */
        }
        /* nodes == NULL: only ask where each page is; move nothing. */
        if (gb__sys.move_pages(0, n, pages, NULL, status, 0) != 0) {
            int e = errno;
            if (is_no_numa(e))
                return no_numa("move_pages");
            return gb__fail(gb__errno_code(e), NULL, 0, "move_pages: %s", strerror(e));
        }
        for (size_t i = 0; i < n; i++)
            count_status(r, status[i] == INT32_MIN ? -EFAULT : status[i]);
        done += n;
    }
    if (r->remote || r->failed) {
        char text[256];
        gb_numa_report_format(r, text, sizeof text);
        if (r->remote)
            return gb__fail(GB_EREMOTE, NULL, 0, "%zu of %zu pages are not on node %d: %s", r->remote, r->pages,
                            node, text);
        return gb__fail(GB_ESYS, NULL, 0, "the kernel could not say where %zu of %zu pages are: %s", r->failed,
                        r->pages, text);
    }
    return 0;
}
