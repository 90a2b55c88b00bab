/* platform/entropy.h: bytes from the OS generator are filled in, differ
 * between calls and between a parent and its forked child (no state copied
 * by fork, unlike a user-space generator), look uniform, and bad arguments
 * are refused. */
#include "tutil.h"

#include <sys/wait.h>

#include "entropy.h"

static void test_fills_and_differs(void **state)
{
    (void)state;
    unsigned char a[32], b[32], zero[32] = {0};
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    assert_rc(gb_entropy_fill(a, sizeof a), 0);
    assert_rc(gb_entropy_fill(b, sizeof b), 0);
    /* 2^-256 chance of a false failure for each comparison */
    assert_memory_not_equal(a, b, sizeof a);
    assert_memory_not_equal(a, zero, sizeof a);
    assert_rc(gb_entropy_fill(a, 0), 0);
    assert_rc(gb_entropy_fill(NULL, 0), 0);
    assert_rc(gb_entropy_fill(NULL, 8), GB_EINVAL);
}

/* A megabyte (more than one getrandom call returns at once): every byte
 * value appears, and the share of one bits is 1/2 within 8 standard
 * deviations (sd = 1/sqrt(8 Mi bits)). */
static void test_large_and_uniform(void **state)
{
    (void)state;
    size_t n = 1u << 20;
    unsigned char *buf = calloc(1, n);
    assert_non_null(buf);
    assert_rc(gb_entropy_fill(buf, n), 0);
    size_t hist[256] = {0};
    uint64_t ones = 0;
    for (size_t i = 0; i < n; i++) {
        hist[buf[i]]++;
        ones += (uint64_t)__builtin_popcount(buf[i]);
    }
    for (int v = 0; v < 256; v++)
        assert_true(hist[v] > 0);
    double share = (double)ones / (double)(n * 8);
    assert_true(share > 0.5 - 8.0 / 2896.3 && share < 0.5 + 8.0 / 2896.3); /* sqrt(8 Mi) = 2896.3 */
    free(buf);
}

static void test_fork_child_differs(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        uint64_t v = 0;
        int ok = gb_entropy_fill(&v, sizeof v) == 0 && write(p[1], &v, sizeof v) == (ssize_t)sizeof v;
        _exit(ok ? 0 : 1);
    }
    uint64_t mine = 0, child = 0;
    assert_rc(gb_entropy_fill(&mine, sizeof mine), 0);
    assert_int_equal(read(p[0], &child, sizeof child), (ssize_t)sizeof child);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_true(mine != child);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fills_and_differs),
        cmocka_unit_test(test_large_and_uniform),
        cmocka_unit_test(test_fork_child_differs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
