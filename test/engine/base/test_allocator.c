/* engine/base/allocator.h: the build's allocator names itself, and where it
 * keeps its own account (jemalloc) that account follows what the engine
 * allocates; MEMORY PURGE and MALLOC-STATS work on either allocator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/base/allocator.h"
#include "engine/base/mem.h"
#include "platform/mem.h"

static bool is_jemalloc(void) { return strncmp(gb_allocator_name(), "jemalloc-", 9) == 0; }

static void test_name_is_one_of_the_two(void **state)
{
    (void)state;
    const char *name = gb_allocator_name();
    assert_true(strcmp(name, "libc") == 0 || (is_jemalloc() && strlen(name) > 9));
}

/* jemalloc's statistics see a block gb_malloc takes (gb_malloc is the
 * process's malloc: jemalloc replaces it), and see it go. */
static void test_stats_follow_allocations(void **state)
{
    (void)state;
    gb_allocator_stats before, during, after;
    if (!gb_allocator_stats_get(&before)) {
        assert_string_equal(gb_allocator_name(), "libc");
        return;
    }
    enum { BIG = 8 << 20 };
    char *p = gb_malloc(BIG);
    memset(p, 1, BIG);
    assert_true(gb_allocator_stats_get(&during));
    assert_true(during.allocated >= before.allocated + BIG);
    assert_true(during.active >= during.allocated);
    assert_true(during.resident >= BIG);
    gb_free(p);
    assert_true(gb_allocator_stats_get(&after));
    assert_true(after.allocated + BIG <= during.allocated);
}

static void test_purge_and_report(void **state)
{
    (void)state;
    gb_allocator_purge();
    size_t len = 0;
    char *report = gb_allocator_report(&len);
    if (!is_jemalloc()) {
        assert_null(report);
        return;
    }
    assert_non_null(report);
    assert_int_equal(strlen(report), len);
    assert_non_null(strstr(report, "Begin jemalloc statistics"));
    gb_free(report);
}

/* gb_malloc counts a new block by the usable size its request implies
 * (gb_allocator_usable_for) and gb_free by the block's own: the two must
 * agree on every size, small classes, large ones and huge, or used_memory
 * drifts with every allocation. */
static void test_usable_for_matches_the_block(void **state)
{
    (void)state;
    for (size_t n = 1; n < ((size_t)64 << 20); n += n < 4096 ? 1 : n / 7 + 1) {
        size_t before = gb_mem_used();
        void *p = gb_malloc(n);
        size_t usable = gb_mem_usable(p), predicted = gb_allocator_usable_for(n);
        /* Without malloc_usable_size (the generic POSIX layer) mem.c keeps
         * each block's size in a prefix and never asks for a prediction. */
        if (predicted && gb_plat_malloc_usable_supported())
            assert_int_equal(predicted, usable);
        assert_int_equal(gb_mem_used() - before, gb_mem_accounted(p));
        gb_free(p);
        assert_int_equal(gb_mem_used(), before);
    }
}

/* What jemalloc makes of a request for slabs of `pages` pages for the class
 * of `size` bytes: at least one page, at most page/8 blocks. */
static size_t slab_granted(size_t page, size_t size, size_t pages)
{
    size_t most = page / 8 * size, want = pages * page;
    return want <= most ? want : most > page ? most : page;
}

/* The power-of-two classes come from 8-page slabs (malloc_conf in
 * allocator/jemalloc.c; 16 and 32 bytes from as many as jemalloc allows),
 * and the classes in between keep jemalloc's own. jemalloc's page is the
 * 8-byte class's slab (one page, left as jemalloc sizes it): 4 KiB on
 * x86-64, 16 or 64 KiB on some arm64 builds. */
static void test_slab_sizes(void **state)
{
    (void)state;
    if (!is_jemalloc()) {
        assert_int_equal(gb_allocator_slab_bytes(128), 0);
        return;
    }
    size_t page = gb_allocator_slab_bytes(8);
    assert_true(page >= 4096 && (page & (page - 1)) == 0);
    assert_int_equal(gb_allocator_slab_bytes(16), slab_granted(page, 16, 2));
    assert_int_equal(gb_allocator_slab_bytes(32), slab_granted(page, 32, 4));
    for (size_t size = 64; size <= 4096; size *= 2)
        assert_int_equal(gb_allocator_slab_bytes(size), slab_granted(page, size, 8));
    if (page == 4096)
        assert_int_equal(gb_allocator_slab_bytes(128), 8 * 4096);
    assert_int_equal(gb_allocator_slab_bytes(48), 3 * page);
    assert_int_equal(gb_allocator_slab_bytes(160), 5 * page);
    assert_int_equal(gb_allocator_slab_bytes(100), 0); /* no class of 100 bytes */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name_is_one_of_the_two),
        cmocka_unit_test(test_stats_follow_allocations),
        cmocka_unit_test(test_purge_and_report),
        cmocka_unit_test(test_usable_for_matches_the_block),
        cmocka_unit_test(test_slab_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
