/* platform/numa.h: injected syscall results (no NUMA, wrong node, the
 * maxnode off-by-one) and real calls on this machine's node 0. */
#include "tutil.h"

#include <sys/mman.h>

#include "numa.h"
#include "process.h"
#include "shm.h"
#include "topology.h"

static int reset_table(void **state)
{
    (void)state;
    gb_syscalls_reset();
    return 0;
}

/* The numa.h calls of a variant without NUMA: "no NUMA" / "not supported". */
static bool numa_compiled_in(void)
{
    if (tu_has(GB_CAP_NUMA))
        return true;
    static char page[64] __attribute__((aligned(64)));
    gb_numa_report rep;
    assert_rc(gb_numa_available(), GB_ENONUMA);
    assert_rc(gb_numa_bind_region(page, sizeof page, 0), GB_ENOTSUP);
    assert_rc(gb_numa_set_strict(0), GB_ENOTSUP);
    assert_rc(gb_numa_set_preferred(0), GB_ENOTSUP);
    assert_rc(gb_numa_reset(), GB_ENOTSUP);
    assert_rc(gb_numa_verify(page, sizeof page, 0, &rep), GB_ENOTSUP);
    return false;
}

/* ---- fakes ------------------------------------------------------------- */

static int fake_errno;

static long fail_get_mempolicy(int *mode, unsigned long *nodemask, unsigned long maxnode, void *addr,
                               unsigned long flags)
{
    (void)mode, (void)nodemask, (void)maxnode, (void)addr, (void)flags;
    errno = fake_errno;
    return -1;
}

static long fail_set_mempolicy(int mode, const unsigned long *nodemask, unsigned long maxnode)
{
    (void)mode, (void)nodemask, (void)maxnode;
    errno = fake_errno;
    return -1;
}

static long fail_mbind(void *addr, unsigned long len, int mode, const unsigned long *nodemask,
                       unsigned long maxnode, unsigned flags)
{
    (void)addr, (void)len, (void)mode, (void)nodemask, (void)maxnode, (void)flags;
    errno = fake_errno;
    return -1;
}

static long fail_move_pages(int pid, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
    (void)pid, (void)count, (void)pages, (void)nodes, (void)status, (void)flags;
    errno = fake_errno;
    return -1;
}

/* What the last fake mbind/set_mempolicy was given. */
static struct {
    int mode;
    unsigned long maxnode;
    unsigned flags;
    unsigned long mask[GB_NUMA_MAX_NODES / (8 * sizeof(unsigned long))];
    bool mask_null;
    int calls;
} seen;

static void record_mask(const unsigned long *nodemask, unsigned long maxnode)
{
    seen.mask_null = nodemask == NULL;
    seen.maxnode = maxnode;
    memset(seen.mask, 0, sizeof seen.mask);
    if (nodemask) /* the kernel reads maxnode - 1 bits */
        memcpy(seen.mask, nodemask, (maxnode - 1) / 8);
}

static long spy_mbind(void *addr, unsigned long len, int mode, const unsigned long *nodemask, unsigned long maxnode,
                      unsigned flags)
{
    (void)addr, (void)len;
    seen.calls++;
    seen.mode = mode;
    seen.flags = flags;
    record_mask(nodemask, maxnode);
    return 0;
}

static long spy_set_mempolicy(int mode, const unsigned long *nodemask, unsigned long maxnode)
{
    seen.calls++;
    seen.mode = mode;
    record_mask(nodemask, maxnode);
    return 0;
}

static bool mask_has(int node)
{
    const size_t bits = 8 * sizeof(unsigned long);
    return (seen.mask[(size_t)node / bits] >> ((size_t)node % bits)) & 1u;
}

static int mask_count(void)
{
    int n = 0;
    for (int i = 0; i < GB_NUMA_MAX_NODES; i++)
        n += mask_has(i);
    return n;
}

/* move_pages reporting: page 1 on node 1, page 3 never touched, the rest on 0. */
static long wrong_node_move_pages(int pid, unsigned long count, void **pages, const int *nodes, int *status,
                                  int flags)
{
    assert_int_equal(pid, 0);
    assert_null(nodes); /* query only: nothing may be moved */
    assert_int_equal(flags, 0);
    for (unsigned long i = 0; i < count; i++) {
        assert_non_null(pages[i]);
        status[i] = i == 1 ? 1 : i == 3 ? -ENOENT : 0;
    }
    return 0;
}

static uintptr_t batch_next;
static int batch_calls;
static size_t batch_pages;

/* Checks the pages are asked for in order, one page apart, in bounded batches. */
static long batch_move_pages(int pid, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
    (void)pid, (void)nodes, (void)flags;
    assert_true(count >= 1 && count <= 4096);
    for (unsigned long i = 0; i < count; i++) {
        if (batch_next)
            assert_true((uintptr_t)pages[i] == batch_next);
        batch_next = (uintptr_t)pages[i] + gb_page_size();
        status[i] = 0;
    }
    batch_calls++;
    batch_pages += count;
    return 0;
}

/* ---- injected: no NUMA -------------------------------------------------- */

static void test_enosys_eperm_mean_no_numa(void **state)
{
    (void)state;
    if (!numa_compiled_in())
        return;
    static char page[64] __attribute__((aligned(64)));
    void *aligned = (void *)((uintptr_t)page & ~(uintptr_t)(gb_page_size() - 1));
    const int errs[] = {ENOSYS, EPERM};
    for (int i = 0; i < 2; i++) {
        fake_errno = errs[i];
        GB_SYSCALL_OVERRIDE(get_mempolicy, fail_get_mempolicy);
        GB_SYSCALL_OVERRIDE(set_mempolicy, fail_set_mempolicy);
        GB_SYSCALL_OVERRIDE(mbind, fail_mbind);
        GB_SYSCALL_OVERRIDE(move_pages, fail_move_pages);
        assert_rc(gb_numa_available(), GB_ENONUMA);
        assert_contains(gb_plat_last_error(), "get_mempolicy");
        assert_rc(gb_numa_set_strict(0), GB_ENONUMA);
        assert_rc(gb_numa_set_preferred(0), GB_ENONUMA);
        assert_rc(gb_numa_reset(), GB_ENONUMA);
        assert_rc(gb_numa_bind_region(aligned, gb_page_size(), 0), GB_ENONUMA);
        gb_numa_report rep;
        assert_rc(gb_numa_verify(page, sizeof page, 0, &rep), GB_ENONUMA);
        gb_syscalls_reset();
    }
    /* any other failure is a failure, not "no NUMA" */
    fake_errno = EFAULT;
    GB_SYSCALL_OVERRIDE(get_mempolicy, fail_get_mempolicy);
    assert_rc(gb_numa_available(), GB_ESYS);
}

static void test_mbind_errors(void **state)
{
    (void)state;
    if (!numa_compiled_in())
        return;
    size_t ps = gb_page_size();
    void *region = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(region != MAP_FAILED);
    GB_SYSCALL_OVERRIDE(mbind, fail_mbind);
    fake_errno = EIO; /* MPOL_MF_STRICT: pages already elsewhere */
    assert_rc(gb_numa_bind_region(region, ps, 0), GB_EREMOTE);
    assert_contains(gb_plat_last_error(), "before the first touch");
    fake_errno = EINVAL;
    assert_rc(gb_numa_bind_region(region, ps, 3), GB_EINVAL);
    assert_contains(gb_plat_last_error(), "node 3");
    fake_errno = ENOMEM;
    assert_rc(gb_numa_bind_region(region, ps, 0), GB_ENOMEM);
    gb_syscalls_reset();
    /* checked before any syscall */
    assert_rc(gb_numa_bind_region((char *)region + 1, ps - 1, 0), GB_EINVAL);
    assert_rc(gb_numa_bind_region(region, 0, 0), GB_EINVAL);
    assert_rc(gb_numa_bind_region(region, ps, -1), GB_EINVAL);
    assert_rc(gb_numa_bind_region(region, ps, GB_NUMA_MAX_NODES), GB_EINVAL);
    munmap(region, ps);
}

/* The kernel decrements maxnode before reading the mask: passing the bit
 * count itself would silently drop the highest node. */
static void test_maxnode_off_by_one(void **state)
{
    (void)state;
    if (!numa_compiled_in())
        return;
    size_t ps = gb_page_size();
    void *region = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(region != MAP_FAILED);
    GB_SYSCALL_OVERRIDE(mbind, spy_mbind);
    GB_SYSCALL_OVERRIDE(set_mempolicy, spy_set_mempolicy);

    memset(&seen, 0, sizeof seen);
    assert_rc(gb_numa_bind_region(region, ps, 3), 0);
    assert_int_equal(seen.calls, 1);
    assert_int_equal(seen.mode, 2);  /* MPOL_BIND */
    assert_int_equal(seen.flags, 1); /* MPOL_MF_STRICT, no MPOL_MF_MOVE */
    assert_int_equal(seen.maxnode, GB_NUMA_MAX_NODES + 1);
    assert_true(mask_has(3));
    assert_int_equal(mask_count(), 1);

    /* the highest node is the one an off-by-one loses */
    assert_rc(gb_numa_bind_region(region, ps, GB_NUMA_MAX_NODES - 1), 0);
    assert_true(mask_has(GB_NUMA_MAX_NODES - 1));

    assert_rc(gb_numa_set_strict(1), 0);
    assert_int_equal(seen.mode, 2);
    assert_true(mask_has(1) && mask_count() == 1);
    assert_int_equal(seen.maxnode, GB_NUMA_MAX_NODES + 1);
    assert_rc(gb_numa_set_preferred(2), 0);
    assert_int_equal(seen.mode, 1); /* MPOL_PREFERRED */
    assert_true(mask_has(2) && mask_count() == 1);
    assert_rc(gb_numa_reset(), 0);
    assert_int_equal(seen.mode, 0); /* MPOL_DEFAULT takes no mask */
    assert_true(seen.mask_null);
    munmap(region, ps);
}

/* ---- injected: wrong node ----------------------------------------------- */

static void test_verify_reports_wrong_node(void **state)
{
    (void)state;
    if (!numa_compiled_in())
        return;
    size_t ps = gb_page_size();
    void *region = mmap(NULL, 4 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(region != MAP_FAILED);
    GB_SYSCALL_OVERRIDE(move_pages, wrong_node_move_pages);
    gb_numa_report rep;
    assert_rc(gb_numa_verify(region, 4 * ps, 0, &rep), GB_EREMOTE);
    assert_int_equal(rep.pages, 4);
    assert_int_equal(rep.on_node, 2);
    assert_int_equal(rep.remote, 1);
    assert_int_equal(rep.absent, 1);
    assert_int_equal(rep.failed, 0);
    assert_int_equal(rep.per_node[0], 2);
    assert_int_equal(rep.per_node[1], 1);
    char text[256];
    gb_numa_report_format(&rep, text, sizeof text);
    assert_string_equal(text, "2 pages on node 0, 1 page on node 1, 1 page not faulted (wanted node 0)");
    assert_contains(gb_plat_last_error(), "1 of 4 pages are not on node 0");
    assert_contains(gb_plat_last_error(), "1 page on node 1");

    /* the same pages verified against node 1: now node 0 is the remote one */
    assert_rc(gb_numa_verify(region, 4 * ps, 1, &rep), GB_EREMOTE);
    assert_int_equal(rep.remote, 2);
    assert_int_equal(rep.on_node, 1);

    /* a region that does not start on a page boundary covers both pages */
    assert_rc(gb_numa_verify((char *)region + ps - 1, 2, 0, &rep), GB_EREMOTE);
    assert_int_equal(rep.pages, 2);
    munmap(region, 4 * ps);
}

static void test_verify_batches(void **state)
{
    (void)state;
    if (!numa_compiled_in())
        return;
    size_t ps = gb_page_size(), n = 1300;
    void *region = mmap(NULL, n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(region != MAP_FAILED);
    batch_next = 0;
    batch_calls = 0;
    batch_pages = 0;
    GB_SYSCALL_OVERRIDE(move_pages, batch_move_pages);
    gb_numa_report rep;
    assert_rc(gb_numa_verify(region, n * ps, 0, &rep), 0);
    assert_int_equal(batch_pages, n);
    assert_true(batch_calls >= 2);
    assert_int_equal(rep.on_node, n);
    munmap(region, n * ps);
}

static void test_report_format(void **state)
{
    (void)state;
    gb_numa_report rep;
    memset(&rep, 0, sizeof rep);
    rep.node = 2;
    char text[128];
    gb_numa_report_format(&rep, text, sizeof text);
    assert_string_equal(text, "no pages (wanted node 2)");
    rep.per_node[1] = 5;
    rep.per_node[3] = 1;
    rep.pages_beyond = 2;
    rep.failed = 1;
    int want = gb_numa_report_format(&rep, text, sizeof text);
    assert_string_equal(text,
                        "5 pages on node 1, 1 page on node 3, 2 pages on nodes >= 64, 1 page unreadable (wanted node 2)");
    char small[10];
    assert_int_equal(gb_numa_report_format(&rep, small, sizeof small), want); /* snprintf-style */
    assert_int_equal(strlen(small), sizeof small - 1);
}

/* ---- real calls on this machine ---------------------------------------- */

static bool have_numa(void)
{
    if (!tu_has(GB_CAP_NUMA))
        return false;
    int rc = gb_numa_available();
    if (rc == GB_ENONUMA) {
        print_message("no NUMA here: %s\n", gb_plat_last_error());
        return false;
    }
    assert_rc(rc, 1);
    return true;
}

static void test_real_strict_bind_memfd(void **state)
{
    (void)state;
    if (!have_numa())
        skip_because("no NUMA memory policies on this %s build/kernel", gb_platform_name());
    const size_t pages = 64;
    gb_shm shm;
    char err[256];
    assert_rc(gb_shm_create(pages * gb_page_size(), 0, &shm, err, sizeof err), 0);
    /* the ring's order: bind, then first touch, then verify */
    assert_rc(gb_numa_bind_region(shm.addr, shm.size, 0), 0);
    gb_numa_report rep;
    assert_rc(gb_numa_verify(shm.addr, shm.size, 0, &rep), 0);
    assert_int_equal(rep.absent, pages); /* nothing faulted yet: -ENOENT per page */
    assert_rc(gb_shm_prefault(shm.addr, shm.size), 0);
    assert_rc(gb_numa_verify(shm.addr, shm.size, 0, &rep), 0);
    assert_int_equal(rep.pages, pages);
    assert_int_equal(rep.on_node, pages);
    assert_int_equal(rep.remote, 0);
    assert_int_equal(rep.absent, 0);

    /* and the kernel's own account in /proc/self/numa_maps agrees */
    char line[1024], nodes[256];
    int rc = gb_proc_numa_maps_line(0, shm.addr, line, sizeof line);
    if (rc == GB_ENONUMA) {
        gb_shm_close(&shm);
        skip_because("%s", gb_plat_last_error());
    }
    assert_rc(rc, 0);
    print_message("numa_maps: %s\n", line);
    assert_contains(line, "bind:0");
    assert_contains(line, "memfd:goblin-shm");
    assert_rc(gb_proc_numa_maps_nodes(0, shm.addr, nodes, sizeof nodes), 0);
    char want[32];
    snprintf(want, sizeof want, "N0=%zu", pages);
    assert_contains(nodes, want);
    size_t per[4];
    assert_rc(gb_proc_numa_maps_pages(0, shm.addr, per, 4), 0);
    assert_int_equal(per[0], pages);
    gb_shm_close(&shm);
}

static void test_real_bind_missing_node(void **state)
{
    (void)state;
    if (!have_numa())
        skip_because("no NUMA memory policies on this %s build/kernel", gb_platform_name());
    int count = gb_topo_node_count(NULL);
    if (count < 1 || count >= GB_NUMA_MAX_NODES - 1)
        skip_because("cannot count the NUMA nodes: %s", gb_plat_last_error());
    /* node numbers can be sparse: take one past the highest that exists */
    int missing = count;
    gb_cpuset s;
    while (gb_topo_node_cpus(NULL, missing, &s, NULL, 0) != GB_ENOENT)
        missing++;
    size_t ps = gb_page_size();
    void *region = mmap(NULL, ps, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(region != MAP_FAILED);
    assert_rc(gb_numa_bind_region(region, ps, missing), GB_EINVAL);
    assert_contains(gb_plat_last_error(), "does not exist or has no memory");
    assert_rc(gb_numa_set_strict(missing), GB_EINVAL);
    munmap(region, ps);
}

static void test_real_thread_policies(void **state)
{
    (void)state;
    if (!have_numa())
        skip_because("no NUMA memory policies on this %s build/kernel", gb_platform_name());
    assert_rc(gb_numa_set_preferred(0), 0);
    assert_rc(gb_numa_set_strict(0), 0);
    /* memory faulted now follows the strict policy */
    size_t ps = gb_page_size();
    char *p = mmap(NULL, 8 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    for (size_t i = 0; i < 8; i++)
        p[i * ps] = 1;
    gb_numa_report rep;
    assert_rc(gb_numa_verify(p, 8 * ps, 0, &rep), 0);
    assert_int_equal(rep.on_node, 8);
    assert_rc(gb_numa_reset(), 0);
    munmap(p, 8 * ps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_enosys_eperm_mean_no_numa, reset_table),
        cmocka_unit_test_teardown(test_mbind_errors, reset_table),
        cmocka_unit_test_teardown(test_maxnode_off_by_one, reset_table),
        cmocka_unit_test_teardown(test_verify_reports_wrong_node, reset_table),
        cmocka_unit_test_teardown(test_verify_batches, reset_table),
        cmocka_unit_test(test_report_format),
        cmocka_unit_test(test_real_strict_bind_memfd),
        cmocka_unit_test(test_real_bind_missing_node),
        cmocka_unit_test(test_real_thread_policies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
