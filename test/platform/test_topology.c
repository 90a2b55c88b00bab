/* platform/topology.h: the cpulist parser (everywhere) and node-of-CPU from
 * fake sysfs trees built in a temporary directory (Linux variant; the others
 * must answer GB_ENOTSUP). */
#include "tutil.h"

#include "topology.h"

/* ---- parser ------------------------------------------------------------ */

/* Parses `text`, expects `count` CPUs in all, `n` of them listed in cpus. */
static void expect_cpus_n(const char *text, const int *cpus, int n, int count)
{
    gb_cpuset s;
    int rc = gb_topo_parse_cpulist(text, &s);
    if (rc != 0)
        fail_msg("parse \"%s\": %s (%s)", text, gb_error_name(rc), gb_plat_last_error());
    assert_int_equal(gb_cpuset_count(&s), count);
    for (int i = 0; i < n; i++)
        assert_true(gb_cpuset_test(&s, cpus[i]));
}

static void expect_cpus(const char *text, const int *cpus, int n) { expect_cpus_n(text, cpus, n, n); }

static void expect_bad(const char *text)
{
    gb_cpuset s;
    gb_cpuset_zero(&s);
    gb_cpuset_set(&s, 3); /* must be cleared on error */
    int rc = gb_topo_parse_cpulist(text, &s);
    if (rc != GB_EPARSE)
        fail_msg("parse \"%s\" gave %s, expected GB_EPARSE", text, gb_error_name(rc));
    assert_int_equal(gb_cpuset_count(&s), 0);
    assert_contains(gb_plat_last_error(), "malformed CPU list");
}

static void test_parse_ranges(void **state)
{
    (void)state;
    gb_cpuset s;
    assert_rc(gb_topo_parse_cpulist("0-7,64-71", &s), 0);
    assert_int_equal(gb_cpuset_count(&s), 16);
    for (int c = 0; c < 8; c++)
        assert_true(gb_cpuset_test(&s, c) && gb_cpuset_test(&s, 64 + c));
    assert_false(gb_cpuset_test(&s, 8));
    assert_false(gb_cpuset_test(&s, 63));
    assert_false(gb_cpuset_test(&s, 72));

    expect_cpus("1,5,9,13", (const int[]){1, 5, 9, 13}, 4);
    expect_cpus("0\n", (const int[]){0}, 1);
    expect_cpus("  2-3 , 7\n", (const int[]){2, 3, 7}, 3);
    expect_cpus("4-4", (const int[]){4}, 1);
    expect_cpus("0 - 1", (const int[]){0, 1}, 2);
    expect_cpus("1023", (const int[]){1023}, 1);
    expect_cpus_n("0-1023", (const int[]){0, 511, 1023}, 3, 1024);
    expect_cpus("007", (const int[]){7}, 1);
    expect_cpus("3,1,2,1", (const int[]){1, 2, 3}, 3); /* order and repeats are harmless */
}

static void test_parse_empty(void **state)
{
    (void)state;
    /* memory-only nodes (CXL, HBM) have an empty cpulist */
    expect_cpus("", NULL, 0);
    expect_cpus("\n", NULL, 0);
    expect_cpus(" \t\n", NULL, 0);
}

static void test_parse_garbage(void **state)
{
    (void)state;
    expect_bad("7-0");                  /* reversed */
    expect_bad("1024");                 /* beyond GB_CPUSET_MAX */
    expect_bad("0-1024");
    expect_bad("99999999999999999999"); /* would overflow any integer */
    expect_bad("1,,2");
    expect_bad("1,");
    expect_bad(",1");
    expect_bad("-1");
    expect_bad("1-");
    expect_bad("1-2-3");
    expect_bad("a");
    expect_bad("0x1");
    expect_bad("1 2");
    expect_bad("1\n2");
    expect_bad("0-3:2"); /* stride syntax: not produced by sysfs, rejected */
    expect_bad("+1");
    gb_cpuset s;
    assert_rc(gb_topo_parse_cpulist(NULL, &s), GB_EINVAL);
}

/* ---- fake sysfs trees ---------------------------------------------------- */

typedef struct {
    char root[64];
} tree;

static int tree_setup(void **state)
{
    tree *t = calloc(1, sizeof *t);
    snprintf(t->root, sizeof t->root, "/tmp/gb-topo-XXXXXX");
    if (!mkdtemp(t->root))
        return -1;
    /* what real sysfs has beside the node<N> directories: must be ignored */
    tu_write_file(t->root, "devices/system/node/possible", "0-3\n");
    tu_write_file(t->root, "devices/system/node/online", "0-3\n");
    tu_write_file(t->root, "devices/system/node/has_cpu", "0-3\n");
    tu_write_file(t->root, "devices/system/node/power", NULL);
    *state = t;
    return 0;
}

static int tree_teardown(void **state)
{
    tree *t = *state;
    tu_rm_rf(t->root);
    free(t);
    return 0;
}

static void node(tree *t, int n, const char *cpulist)
{
    char rel[128];
    snprintf(rel, sizeof rel, "devices/system/node/node%d/cpulist", n);
    tu_write_file(t->root, rel, cpulist);
}

static int node_of(tree *t, int cpu, char *err, size_t errlen)
{
    int n = -1;
    int rc = gb_topo_node_of_cpu(t->root, cpu, &n, err, errlen);
    return rc < 0 ? rc : n;
}

static bool topology_supported(tree *t)
{
    if (tu_has(GB_CAP_TOPOLOGY))
        return true;
    int n;
    char err[256];
    node(t, 0, "0-3\n");
    assert_rc(gb_topo_node_of_cpu(t->root, 0, &n, err, sizeof err), GB_ENOTSUP);
    assert_rc(gb_topo_node_count(t->root), GB_ENOTSUP);
    gb_cpuset s;
    assert_rc(gb_topo_node_cpus(t->root, 0, &s, err, sizeof err), GB_ENOTSUP);
    return false;
}

static void test_one_node(void **state)
{
    tree *t = *state;
    if (!topology_supported(t))
        return;
    node(t, 0, "0-3\n");
    assert_int_equal(node_of(t, 0, NULL, 0), 0);
    assert_int_equal(node_of(t, 3, NULL, 0), 0);
    assert_int_equal(gb_topo_node_count(t->root), 1);
}

static void test_two_nodes_split_ranges(void **state)
{
    tree *t = *state;
    if (!topology_supported(t))
        return;
    /* the usual two-socket layout with SMT siblings numbered from 64 */
    node(t, 0, "0-7,64-71\n");
    node(t, 1, "8-15,72-79\n");
    assert_int_equal(node_of(t, 0, NULL, 0), 0);
    assert_int_equal(node_of(t, 64, NULL, 0), 0);
    assert_int_equal(node_of(t, 71, NULL, 0), 0);
    assert_int_equal(node_of(t, 8, NULL, 0), 1);
    assert_int_equal(node_of(t, 72, NULL, 0), 1);
    assert_int_equal(node_of(t, 79, NULL, 0), 1);
    assert_int_equal(gb_topo_node_count(t->root), 2);
    gb_cpuset s;
    assert_rc(gb_topo_node_cpus(t->root, 1, &s, NULL, 0), 0);
    assert_int_equal(gb_cpuset_count(&s), 16);
}

static void test_four_nodes_interleaved(void **state)
{
    tree *t = *state;
    if (!topology_supported(t))
        return;
    /* node k owns CPUs k, k+4, k+8, ... (the 4-socket box of the NUMA note) */
    for (int k = 0; k < 4; k++) {
        char list[512] = "";
        size_t len = 0;
        for (int c = k; c < 96; c += 4)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", c == k ? "" : ",", c);
        snprintf(list + len, sizeof list - len, "\n");
        node(t, k, list);
    }
    assert_int_equal(node_of(t, 5, NULL, 0), 1); /* --cpu 5 resolves to node 1 */
    assert_int_equal(node_of(t, 1, NULL, 0), 1);
    assert_int_equal(node_of(t, 13, NULL, 0), 1);
    assert_int_equal(node_of(t, 0, NULL, 0), 0);
    assert_int_equal(node_of(t, 6, NULL, 0), 2);
    assert_int_equal(node_of(t, 95, NULL, 0), 3);
    assert_int_equal(gb_topo_node_count(t->root), 4);
}

static void test_cpu_in_no_node(void **state)
{
    tree *t = *state;
    if (!topology_supported(t))
        return;
    node(t, 0, "0-3\n");
    node(t, 1, "4-7\n");
    char err[256] = "";
    assert_rc(node_of(t, 12, err, sizeof err), GB_ENOENT);
    assert_contains(err, "CPU 12");
    assert_contains(err, "no NUMA node");
    assert_rc(node_of(t, -1, err, sizeof err), GB_EINVAL);
    assert_rc(node_of(t, GB_CPUSET_MAX, err, sizeof err), GB_EINVAL);
    gb_cpuset s;
    assert_rc(gb_topo_node_cpus(t->root, 7, &s, err, sizeof err), GB_ENOENT);
}

static void test_memory_only_node(void **state)
{
    tree *t = *state;
    if (!topology_supported(t))
        return;
    node(t, 0, "0-3\n");
    node(t, 1, "\n"); /* CXL memory expander: memory, no CPUs */
    assert_int_equal(node_of(t, 2, NULL, 0), 0);
    assert_int_equal(gb_topo_node_count(t->root), 2);
}

static void test_malformed_file_is_named(void **state)
{
    tree *t = *state;
    if (!topology_supported(t))
        return;
    node(t, 0, "0-3\n");
    node(t, 1, "4-7,x\n");
    char err[512] = "";
    /* CPU 2 is in node0, but the tree is corrupt: refuse rather than guess */
    assert_rc(node_of(t, 2, err, sizeof err), GB_EPARSE);
    assert_contains(err, "node1/cpulist");
    assert_contains(err, t->root);
    assert_contains(gb_plat_last_error(), "node1/cpulist");

    node(t, 1, "7-4\n"); /* reversed range */
    assert_rc(node_of(t, 2, err, sizeof err), GB_EPARSE);
    assert_contains(err, "node1/cpulist");

    node(t, 1, "4-2000\n"); /* beyond any CPU number */
    assert_rc(node_of(t, 2, err, sizeof err), GB_EPARSE);
    assert_contains(err, "node1/cpulist");
}

static void test_missing_cpulist_is_named(void **state)
{
    tree *t = *state;
    if (!topology_supported(t))
        return;
    node(t, 0, "0-3\n");
    tu_write_file(t->root, "devices/system/node/node2", NULL); /* directory without cpulist */
    char err[512] = "";
    assert_rc(node_of(t, 1, err, sizeof err), GB_EPARSE);
    assert_contains(err, "node2/cpulist");
}

static void test_cpu_claimed_twice(void **state)
{
    tree *t = *state;
    if (!topology_supported(t))
        return;
    node(t, 0, "0-3\n");
    node(t, 1, "3-7\n");
    char err[512] = "";
    assert_rc(node_of(t, 3, err, sizeof err), GB_EPARSE);
    assert_contains(err, "CPU 3");
    assert_int_equal(node_of(t, 5, NULL, 0), 1); /* unambiguous CPUs still resolve */
}

static void test_no_numa_tree(void **state)
{
    tree *t = *state;
    if (!topology_supported(t))
        return;
    char other[128], err[512] = "";
    snprintf(other, sizeof other, "%s/empty", t->root);
    mkdir(other, 0755);
    int n;
    /* a kernel without CONFIG_NUMA has no devices/system/node */
    assert_rc(gb_topo_node_of_cpu(other, 0, &n, err, sizeof err), GB_ENONUMA);
    assert_contains(err, "devices/system/node");
    assert_rc(gb_topo_node_count(other), GB_ENONUMA);
    /* the directory with no node<N> inside (only possible/online/...) */
    assert_rc(gb_topo_node_of_cpu(t->root, 0, &n, err, sizeof err), GB_ENONUMA);
}

static void test_real_sysfs(void **state)
{
    (void)state;
    if (!tu_has(GB_CAP_TOPOLOGY))
        skip_because("the %s platform layer reads no sysfs (GB_ENOTSUP asserted above)", gb_platform_name());
    gb_cpuset allowed;
    assert_rc(gb_cpu_allowed(&allowed), 0);
    int cpu = gb_cpuset_next(&allowed, 0);
    int n = -1;
    char err[512];
    int rc = gb_topo_node_of_cpu(NULL, cpu, &n, err, sizeof err);
    if (rc == GB_ENONUMA)
        skip_because("%s", err);
    assert_rc(rc, 0);
    assert_true(n >= 0);
    int count = gb_topo_node_count("");
    assert_true(count >= 1 && n < 1024);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_ranges),
        cmocka_unit_test(test_parse_empty),
        cmocka_unit_test(test_parse_garbage),
        cmocka_unit_test_setup_teardown(test_one_node, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_two_nodes_split_ranges, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_four_nodes_interleaved, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_cpu_in_no_node, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_memory_only_node, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_malformed_file_is_named, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_missing_cpulist_is_named, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_cpu_claimed_twice, tree_setup, tree_teardown),
        cmocka_unit_test_setup_teardown(test_no_numa_tree, tree_setup, tree_teardown),
        cmocka_unit_test(test_real_sysfs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
