/* platform/process.h: finding a mapping's line in /proc/self/numa_maps. */
#include "tutil.h"

#include "process.h"
#include "shm.h"

static void test_numa_maps(void **state)
{
    (void)state;
    gb_shm shm;
    assert_rc(gb_shm_create(8 * gb_page_size(), 0, &shm, NULL, 0), 0);
    assert_rc(gb_shm_prefault(shm.addr, shm.size), 0);
    char line[1024], nodes[128];
    size_t pages[8];
    if (!tu_has(GB_CAP_PROC_NUMA_MAPS)) {
        assert_rc(gb_proc_numa_maps_line(0, shm.addr, line, sizeof line), GB_ENOTSUP);
        assert_rc(gb_proc_numa_maps_nodes(0, shm.addr, nodes, sizeof nodes), GB_ENOTSUP);
        assert_rc(gb_proc_numa_maps_pages(0, shm.addr, pages, 8), GB_ENOTSUP);
        gb_shm_close(&shm);
        return;
    }
    if (tu_emulator()) {
        gb_shm_close(&shm);
        skip_because("under %s, /proc/self/numa_maps lists the emulator's host mappings, not this program's",
                     tu_emulator());
    }
    int rc = gb_proc_numa_maps_line(0, shm.addr, line, sizeof line);
    if (rc == GB_ENONUMA) {
        gb_shm_close(&shm);
        skip_because("%s", gb_plat_last_error());
    }
    assert_rc(rc, 0);
    char start[32];
    snprintf(start, sizeof start, "%lx ", (unsigned long)(uintptr_t)shm.addr);
    assert_true(strncmp(line, start, strlen(start)) == 0);
    assert_null(strchr(line, '\n'));

    assert_rc(gb_proc_numa_maps_nodes(0, shm.addr, nodes, sizeof nodes), 0);
    assert_true(nodes[0] == 'N');
    assert_rc(gb_proc_numa_maps_pages(0, shm.addr, pages, 8), 0);
    size_t sum = 0;
    for (int i = 0; i < 8; i++)
        sum += pages[i];
    assert_int_equal(sum, 8); /* every page resident, on some node */

    /* the same through an explicit pid */
    assert_rc(gb_proc_numa_maps_nodes(getpid(), shm.addr, nodes, sizeof nodes), 0);

    /* errors: no mapping starts there; buffers too small */
    assert_rc(gb_proc_numa_maps_line(0, (char *)shm.addr + gb_page_size(), line, sizeof line), GB_ENOENT);
    assert_rc(gb_proc_numa_maps_line(0, shm.addr, line, 8), GB_ERANGE);
    assert_rc(gb_proc_numa_maps_nodes(0, shm.addr, nodes, 2), GB_ERANGE);
    gb_shm_close(&shm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numa_maps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
