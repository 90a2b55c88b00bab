/* platform/mem.h: the allocator's usable size and this process's resident
 * set, in bytes. The RSS check is the one that catches a unit mistake
 * (getrusage's ru_maxrss is KiB on Linux but bytes on macOS): touching
 * 64 MiB must show at least that much, and a test process stays far below
 * 2 GiB, which a 1024x error would not. Huge-page advice: on Linux the
 * kernel records it on the mapping (VmFlags "hg" in /proc/self/smaps),
 * whether or not huge pages are then available (not under qemu-user, which
 * answers madvise itself); elsewhere GB_ENOTSUP. A bulk load's heap gets
 * the same advice (gb_plat_heap_bulk_*), and only for the load. */
#include "tutil.h"

#include "caps.h"
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

/* The VmFlags of the mapping that holds addr, from /proc/self/smaps. */
static bool vm_flags_of(const void *addr, char *flags, size_t len)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return false;
    char line[512];
    bool inside = false, found = false;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            inside = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
        else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            snprintf(flags, len, "%.*s", (int)(len - 1), line + 8);
            found = true;
        }
    }
    fclose(f);
    return found;
}

static void test_advise_huge_pages(void **state)
{
    (void)state;
    size_t n = (size_t)16 << 20;
    unsigned char *block = malloc(n);
    assert_non_null(block);
    int rc = gb_plat_advise_huge_pages(block, n);
    memset(block, 1, n); /* usable either way */
    assert_int_equal(block[n - 1], 1);
    if (strcmp(gb_platform_name(), "linux") != 0) {
        assert_int_equal(rc, GB_ENOTSUP);
    } else {
        assert_int_equal(rc, 0);
        char flags[256];
        assert_true(vm_flags_of(block + n / 2, flags, sizeof flags));
        print_message("VmFlags:%s", flags);
        if (tu_emulator()) /* qemu-user answers madvise itself: the host mapping never sees it */
            print_message("not checked under %s: the advice on the mapping\n", tu_emulator());
        else
            assert_non_null(strstr(flags, " hg"));
    }
    /* no whole page inside: nothing to advise (Linux), or the same answer */
    assert_int_equal(gb_plat_advise_huge_pages(block + 1, 100), rc);
    free(block);
}

/* count blocks of `size` bytes, each written; the last returned */
static void *alloc_many(void **blocks, size_t count, size_t size, gb_heap_bulk *advise_every_mb)
{
    for (size_t i = 0; i < count; i++) {
        blocks[i] = malloc(size);
        assert_non_null(blocks[i]);
        memset(blocks[i], 1, size);
        if (advise_every_mb && i % ((1u << 20) / size) == 0)
            gb_plat_heap_bulk_advise(advise_every_mb);
    }
    return blocks[count - 1];
}

/* A bulk load's heap: what it grew by carries the huge-page advice (the
 * mapping's "hg"), and the heap's growth after the end does not. Linux
 * with glibc's malloc; an ASan build's allocator has its own heap and
 * refuses M_TOP_PAD (nothing to check then), elsewhere nothing happens. */
static void test_heap_bulk(void **state)
{
    (void)state;
    enum { SIZE = 1000, DURING = 16 << 10, AFTER = 80 << 10 }; /* 16 MB, then 80: past the 64 MB step */
    void **during = calloc(DURING, sizeof *during), **after = calloc(AFTER, sizeof *after);
    assert_true(during && after);
    gb_heap_bulk b;
    gb_plat_heap_bulk_begin(&b);
    bool on = b.on;
    unsigned char *last_during = alloc_many(during, DURING, SIZE, &b);
    gb_plat_heap_bulk_end(&b);
    assert_false(b.on);
    unsigned char *last_after = alloc_many(after, AFTER, SIZE, NULL);
    if (strcmp(gb_platform_name(), "linux") != 0) {
        assert_false(on);
    } else if (!on) {
        print_message("not checked: this malloc refuses M_TOP_PAD (a sanitizer's, or not glibc's)\n");
    } else if (tu_emulator()) {
        print_message("not checked under %s: the advice on the mapping\n", tu_emulator());
    } else {
        char flags[256];
        assert_true(vm_flags_of(last_during, flags, sizeof flags));
        assert_non_null(strstr(flags, " hg"));
        assert_true(vm_flags_of(last_after, flags, sizeof flags));
        assert_null(strstr(flags, " hg"));
    }
    for (size_t i = 0; i < DURING; i++)
        free(during[i]);
    for (size_t i = 0; i < AFTER; i++)
        free(after[i]);
    free(during);
    free(after);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usable_size),
        cmocka_unit_test(test_rss_is_bytes),
        cmocka_unit_test(test_advise_huge_pages),
        cmocka_unit_test(test_heap_bulk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
