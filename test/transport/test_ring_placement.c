/* transport/ring/ring_server.c: placing the ring pool with --cpu. Real
 * strict binding and verification on this machine's node, an injected
 * wrong-node answer from move_pages (the server must refuse to start and say
 * which node, how many pages, what to do), a kernel without NUMA (placement
 * becomes a logged no-op), and the empty huge-page pool. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "engine/core/config/config.h"
#include "platform/caps.h"
#include "platform/cpu.h"
#include "platform/numa.h"
#include "platform/syscalls.h"
#include "platform/topology.h"
#include "transport/ring/ring_server.h"

static int first_allowed_cpu(void)
{
    gb_cpuset set;
    if (gb_cpu_allowed(&set) != 0)
        return 0;
    return gb_cpuset_next(&set, 0);
}

static void settings(gb_settings *s, int cpu, bool huge)
{
    gb_settings_defaults(s);
    s->cpu = cpu;
    s->rings = 2;
    s->ring_size = 64 * 1024;
    s->ring_hugepages = huge;
}

/* CMocka's skip() with the reason printed, so a skipped test says why. */
#define skip_because(why)                      \
    do {                                       \
        print_message("skipped: %s\n", (why)); \
        skip();                                \
    } while (0)

#define NO_NUMA_HERE "no NUMA memory policies here (not the linux platform layer, or a kernel/container without NUMA)"

static bool numa_here(void) { return gb_platform_has(GB_CAP_NUMA) && gb_numa_available() == 1; }

static void test_real_placement_is_verified(void **state)
{
    (void)state;
    if (!numa_here())
        skip_because(NO_NUMA_HERE);
    gb_settings s;
    settings(&s, first_allowed_cpu(), false);
    char err[512] = "", log[1024] = "";
    gb_ring_pool *p = gb_ring_pool_create(&s, err, sizeof err, log, sizeof log);
    assert_non_null(p);
    assert_non_null(strstr(log, "bound strictly to NUMA node"));
    assert_non_null(strstr(gb_ring_pool_describe(p), "placement verified"));
    gb_ring_pool_free(p);
    gb_numa_reset();
    gb_settings_free(&s);
}

/* move_pages says: page 1 sits on node 1, every other page on node 0. */
static long one_page_remote(int pid, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
    (void)pid;
    (void)pages;
    (void)nodes;
    (void)flags;
    for (unsigned long i = 0; i < count; i++)
        status[i] = i == 1 ? 1 : 0;
    return 0;
}

static void test_wrong_node_refuses_to_start(void **state)
{
    (void)state;
    if (!numa_here())
        skip_because(NO_NUMA_HERE);
    int cpu = first_allowed_cpu();
    int node = -1;
    char terr[256];
    assert_int_equal(gb_topo_node_of_cpu(NULL, cpu, &node, terr, sizeof terr), 0);
    GB_SYSCALL_OVERRIDE(move_pages, one_page_remote);
    gb_settings s;
    settings(&s, cpu, false);
    char err[512] = "", log[1024] = "";
    gb_ring_pool *p = gb_ring_pool_create(&s, err, sizeof err, log, sizeof log);
    gb_syscalls_reset();
    assert_null(p);
    char want[64];
    snprintf(want, sizeof want, "is not on NUMA node %d", node);
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, "1 page on node 1")); /* the counts */
    assert_non_null(strstr(err, "free memory")); /* what to do */
    gb_numa_reset();
    gb_settings_free(&s);
}

static long no_numa(int *mode, unsigned long *nodemask, unsigned long maxnode, void *addr, unsigned long flags)
{
    (void)mode;
    (void)nodemask;
    (void)maxnode;
    (void)addr;
    (void)flags;
    errno = ENOSYS;
    return -1;
}

static void test_without_numa_placement_is_a_logged_noop(void **state)
{
    (void)state;
    if (!gb_platform_has(GB_CAP_NUMA))
        skip_because("this platform layer has no NUMA calls to fail");
    GB_SYSCALL_OVERRIDE(get_mempolicy, no_numa);
    gb_settings s;
    settings(&s, first_allowed_cpu(), false);
    s.numa_arena = 1;
    char err[512] = "", log[1024] = "";
    gb_ring_pool *p = gb_ring_pool_create(&s, err, sizeof err, log, sizeof log);
    gb_syscalls_reset();
    assert_non_null(p);
    assert_non_null(strstr(log, "no NUMA placement"));
    assert_null(strstr(gb_ring_pool_describe(p), "verified"));
    gb_ring_pool_free(p);
    gb_settings_free(&s);
}

static void test_empty_huge_page_pool_refuses_to_start(void **state)
{
    (void)state;
    if (!gb_platform_has(GB_CAP_HUGEPAGES))
        skip_because("this platform layer has no huge pages (GB_SHM_HUGEPAGES is GB_ENOTSUP)");
    FILE *f = fopen("/proc/sys/vm/nr_hugepages", "r");
    long n = -1;
    if (f) {
        if (fscanf(f, "%ld", &n) != 1)
            n = -1;
        fclose(f);
    }
    if (n != 0)
        skip_because("the empty-pool path needs /proc/sys/vm/nr_hugepages = 0");
    gb_settings s;
    settings(&s, -1, true);
    char err[512] = "", log[1024] = "";
    gb_ring_pool *p = gb_ring_pool_create(&s, err, sizeof err, log, sizeof log);
    assert_null(p);
    assert_non_null(strstr(err, "--ring-hugepages no"));
    gb_settings_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_placement_is_verified),
        cmocka_unit_test(test_wrong_node_refuses_to_start),
        cmocka_unit_test(test_without_numa_placement_is_a_logged_noop),
        cmocka_unit_test(test_empty_huge_page_pool_refuses_to_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
