/* platform/syscalls.h and the small shared pieces: overriding and restoring
 * table entries, capabilities, the error texts. */
#include "tutil.h"

#include "numa.h"

static int fake_madvise(void *addr, size_t len, int advice)
{
    (void)addr, (void)len, (void)advice;
    errno = EIO;
    return -1;
}

static void test_table_names(void **state)
{
    (void)state;
    const char *want[] = {"set_mempolicy", "mbind", "get_mempolicy", "move_pages", "sched_setaffinity",
                          "sched_getaffinity", "memfd_create", "futex", "madvise", "mmap", "ftruncate",
                          "file_open", "file_close", "file_read", "file_pread", "file_write", "file_sync",
                          "file_fsync", "file_rename", "file_unlink"};
    size_t n = 0;
    while (gb_syscalls_name(n))
        n++;
    assert_int_equal(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(gb_syscalls_name(i), want[i]);
        assert_non_null(gb_syscalls_get(want[i])); /* every entry has a default */
    }
    assert_null(gb_syscalls_name(n));
    assert_null(gb_syscalls_get("nope"));
}

static void test_override_and_reset(void **state)
{
    (void)state;
    gb_syscall_ptr orig = gb_syscalls_get("madvise");
    assert_rc(GB_SYSCALL_OVERRIDE(madvise, fake_madvise), 0);
    assert_true(gb_syscalls_get("madvise") == (gb_syscall_ptr)fake_madvise);
    assert_true(gb_syscalls_get("mmap") != (gb_syscall_ptr)fake_madvise);
    assert_rc(gb_syscalls_override("madvise", NULL), 0); /* NULL: back to default */
    assert_true(gb_syscalls_get("madvise") == orig);
    assert_rc(gb_syscalls_override("madvise", (gb_syscall_ptr)fake_madvise), 0);
    gb_syscalls_reset();
    assert_true(gb_syscalls_get("madvise") == orig);
    assert_rc(gb_syscalls_override("no_such_call", (gb_syscall_ptr)fake_madvise), GB_ENOENT);
    assert_contains(gb_plat_last_error(), "no_such_call");
    assert_rc(gb_syscalls_override(NULL, NULL), GB_EINVAL);
}

/* Non-Linux variants: the Linux-only entries answer ENOSYS. */
static void test_stub_entries(void **state)
{
    (void)state;
    if (tu_has(GB_CAP_NUMA))
        skip_because("the %s platform layer has real NUMA entries, no ENOSYS stubs", gb_platform_name());
    gb_sys_get_mempolicy_fn f = (gb_sys_get_mempolicy_fn)gb_syscalls_get("get_mempolicy");
    int mode;
    errno = 0;
    assert_int_equal(f(&mode, NULL, 0, NULL, 0), -1);
    assert_int_equal(errno, ENOSYS);
}

static void test_caps_and_errors(void **state)
{
    (void)state;
    /* The layer is the one CMake built, and it has exactly the capabilities
     * docs/platform.md gives it (tutil.h's table), bit by bit and together. */
    assert_string_equal(gb_platform_name(), GB_TEST_PLATFORM);
    assert_true(gb_platform_has(0));
    for (unsigned bit = 1; bit <= GB_CAP_POPULATE; bit <<= 1)
        if (gb_platform_has(bit) != tu_expected_has(bit))
            fail_msg("%s layer: capability bit 0x%x is %s, docs/platform.md says %s", GB_TEST_PLATFORM, bit,
                     gb_platform_has(bit) ? "present" : "missing", tu_expected_has(bit) ? "present" : "missing");
    assert_true(gb_platform_has(tu_expected_caps()));
    assert_string_equal(gb_error_name(GB_ENONUMA), "GB_ENONUMA");
    assert_string_equal(gb_error_name(GB_EREMOTE), "GB_EREMOTE");
    assert_string_equal(gb_strerror(GB_ENOTSUP), "not supported on this platform");
    /* the last error is per thread and says what happened */
    assert_rc(gb_numa_verify(NULL, 0, -1, NULL), tu_has(GB_CAP_NUMA) ? GB_EINVAL : GB_ENOTSUP);
    assert_true(strlen(gb_plat_last_error()) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_names),
        cmocka_unit_test(test_override_and_reset),
        cmocka_unit_test(test_stub_entries),
        cmocka_unit_test(test_caps_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
