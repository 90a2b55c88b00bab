/* platform/mem.h: the allocator's usable size and this process's resident
 * set, in bytes. The RSS check is the one that catches a unit mistake
 * (getrusage's ru_maxrss is KiB on Linux but bytes on macOS): touching
 * 64 MiB must show at least that much, and a test process stays far below
 * 2 GiB, which a 1024x error would not. */
#include "tutil.h"

#include "mem.h"

#define TOUCH_BYTES (64u << 20)

static void test_usable_size(void **state)
{
    (void)state;
    void *p = malloc(100);
    assert_non_null(p);
    size_t n = gb_plat_malloc_usable_size(p);
    if (gb_plat_malloc_usable_supported())
        assert_true(n >= 100 && n < 4096);
    else
        assert_int_equal(n, 0);
    assert_int_equal(gb_plat_malloc_usable_size(NULL), 0);
    free(p);
}

static void test_rss_is_bytes(void **state)
{
    (void)state;
    size_t before = gb_plat_rss_bytes();
    assert_true(before > 0);
    unsigned char *block = malloc(TOUCH_BYTES);
    assert_non_null(block);
    memset(block, 0x5a, TOUCH_BYTES); /* every page resident */
    size_t after = gb_plat_rss_bytes();
    print_message("rss %zu KiB before, %zu KiB after touching %u KiB\n", before >> 10, after >> 10,
                  TOUCH_BYTES >> 10);
    assert_true(after >= TOUCH_BYTES);
    assert_true(after < ((size_t)2 << 30));
    assert_int_equal(block[TOUCH_BYTES - 1], 0x5a);
    free(block);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usable_size),
        cmocka_unit_test(test_rss_is_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
