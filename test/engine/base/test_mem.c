/* engine/base/mem.c: the fallible allocators (gb_try_*), their accounting,
 * and the fault injector that tests use to make the Nth one fail. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/base/mem.h"

static int teardown(void **state)
{
    (void)state;
    gb_mem_fault_disarm();
    return 0;
}

static void test_try_alloc_is_accounted(void **state)
{
    (void)state;
    size_t before = gb_mem_used();
    char *p = gb_try_malloc(1000);
    assert_non_null(p);
    assert_true(gb_mem_used() >= before + 1000);
    p = gb_try_realloc(p, 100000);
    assert_non_null(p);
    assert_true(gb_mem_used() >= before + 100000);
    int *z = gb_try_calloc(64, sizeof *z);
    assert_non_null(z);
    for (int i = 0; i < 64; i++)
        assert_int_equal(z[i], 0);
    gb_free(z);
    gb_free(p);
    assert_int_equal(gb_mem_used(), before);
}

static void test_try_calloc_overflow_is_null(void **state)
{
    (void)state;
    size_t before = gb_mem_used();
    assert_null(gb_try_calloc(SIZE_MAX / 2, 4));
    assert_int_equal(gb_mem_used(), before);
}

static void test_fail_nth(void **state)
{
    (void)state;
    size_t before = gb_mem_used();
    gb_mem_fault_arm(3, false);
    void *a = gb_try_malloc(10); /* call 1 */
    void *b = gb_try_malloc(10); /* call 2 */
    void *c = gb_try_malloc(10); /* call 3: fails */
    void *d = gb_try_malloc(10); /* call 4: succeeds again */
    assert_non_null(a);
    assert_non_null(b);
    assert_null(c);
    assert_non_null(d);
    gb_mem_fault_stats st;
    gb_mem_fault_get(&st);
    assert_int_equal(st.calls, 4);
    assert_int_equal(st.failed, 1);
    assert_int_equal(st.sites, 4); /* four lines, four sites */
    assert_non_null(st.first_failed_file);
    assert_non_null(strstr(st.first_failed_file, "test_mem.c"));
    gb_free(a);
    gb_free(b);
    gb_free(d);
    assert_int_equal(gb_mem_used(), before);
}

static void test_fail_nth_and_after(void **state)
{
    (void)state;
    gb_mem_fault_arm(2, true);
    void *p[5];
    for (int i = 0; i < 5; i++)
        p[i] = gb_try_malloc(16); /* one site, five calls */
    assert_non_null(p[0]);
    for (int i = 1; i < 5; i++)
        assert_null(p[i]);
    gb_mem_fault_stats st;
    gb_mem_fault_get(&st);
    assert_int_equal(st.calls, 5);
    assert_int_equal(st.failed, 4);
    assert_int_equal(st.sites, 1);
    const char *file;
    int line;
    uint64_t calls, first;
    assert_true(gb_mem_fault_site(0, &file, &line, &calls, &first));
    assert_int_equal(calls, 5);
    assert_int_equal(first, 1);
    assert_true(line > 0);
    assert_false(gb_mem_fault_site(1, &file, &line, &calls, &first));
    gb_free(p[0]);
}

/* By site: only the calls at that file (its path's end) and line count. */
static void test_fail_nth_at_site(void **state)
{
    (void)state;
    void *p[6];
    int target = 0;
    for (int i = 0; i < 3; i++) {
        p[2 * i] = gb_try_malloc(8); /* another site: never fails */
        if (i == 0) {
            target = __LINE__ + 3; /* the site below */
            gb_mem_fault_arm_site(2, "engine/base/test_mem.c", target);
        }
        p[2 * i + 1] = gb_try_malloc(8);
    }
    /* Armed after p[0]: the target's 2nd call from then on is p[3], and
     * only that one fails. */
    assert_non_null(p[0]);
    assert_non_null(p[1]);
    assert_non_null(p[2]);
    assert_null(p[3]);
    assert_non_null(p[4]);
    assert_non_null(p[5]);
    gb_mem_fault_stats st;
    gb_mem_fault_get(&st);
    assert_int_equal(st.calls, 5);
    assert_int_equal(st.failed, 1);
    assert_int_equal(st.first_failed_line, target);
    for (int i = 0; i < 6; i++)
        gb_free(p[i]);
    /* A path that only ends like the file's name does not match. */
    gb_mem_fault_arm_site(1, "mem.c", __LINE__ + 1);
    void *q = gb_try_malloc(8);
    assert_non_null(q);
    gb_free(q);
}

/* A failed realloc leaves the block as it was, still the caller's. */
static void test_failed_realloc_keeps_block(void **state)
{
    (void)state;
    char *p = gb_try_malloc(8);
    assert_non_null(p);
    memcpy(p, "goblin!", 8);
    size_t before = gb_mem_used();
    gb_mem_fault_arm(1, false);
    assert_null(gb_try_realloc(p, 1 << 20));
    assert_int_equal(gb_mem_used(), before);
    assert_string_equal(p, "goblin!");
    gb_free(p);
}

/* Count-only mode fails nothing; the fail-stop allocators are never
 * counted or failed. */
static void test_count_only_and_fail_stop_untouched(void **state)
{
    (void)state;
    gb_mem_fault_arm(0, true);
    void *a = gb_try_malloc(1);
    void *b = gb_malloc(1);
    assert_non_null(a);
    assert_non_null(b);
    gb_mem_fault_stats st;
    gb_mem_fault_get(&st);
    assert_int_equal(st.calls, 1);
    assert_int_equal(st.failed, 0);
    assert_null(st.first_failed_file);
    gb_free(a);
    gb_free(b);
}

/* The fail-stop allocators: out of memory prints the size and aborts (the
 * policy for the engine and for start-up). In a child process. */
static void test_fail_stop_prints_and_aborts(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip(); /* ASan reports the impossible size itself before malloc can fail */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    skip();
#endif
#endif
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        volatile size_t huge = SIZE_MAX - 4096;
        void *p = gb_malloc(huge);
        _exit(p ? 3 : 4); /* never reached */
    }
    close(fds[1]);
    char buf[512] = "";
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGABRT);
    assert_true(n > 0);
    assert_non_null(strstr(buf, "goblin-core: out of memory allocating"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_try_alloc_is_accounted, teardown),
        cmocka_unit_test_teardown(test_try_calloc_overflow_is_null, teardown),
        cmocka_unit_test_teardown(test_fail_nth, teardown),
        cmocka_unit_test_teardown(test_fail_nth_and_after, teardown),
        cmocka_unit_test_teardown(test_fail_nth_at_site, teardown),
        cmocka_unit_test_teardown(test_failed_realloc_keeps_block, teardown),
        cmocka_unit_test_teardown(test_count_only_and_fail_stop_untouched, teardown),
        cmocka_unit_test(test_fail_stop_prints_and_aborts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
