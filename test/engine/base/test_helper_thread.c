/* engine/base/helper_thread: a helper thread runs fn(arg), restricted to the
 * CPUs it was given (where the platform can restrict threads), or where its
 * creator may run when given none. */
#include "types_tutil.h"

#include "engine/base/helper_thread.h"

typedef struct seen {
    int rc;
    gb_cpuset allowed;
    int ran;
} seen;

static void *record(void *arg)
{
    seen *s = arg;
    s->rc = gb_cpu_allowed(&s->allowed);
    s->ran = 1;
    return NULL;
}

static bool same_set(const gb_cpuset *a, const gb_cpuset *b) { return memcmp(a, b, sizeof *a) == 0; }

static void test_restricted_to_the_given_cpus(void **state)
{
    (void)state;
    gb_cpuset mine;
    assert_int_equal(gb_cpu_allowed(&mine), 0);
    /* where the platform cannot restrict a thread (macOS, generic POSIX),
     * the helper runs, unrestricted */
    bool can_restrict = gb_cpu_restrict_current_thread(&mine) == 0;
    int last = -1;
    for (int c = gb_cpuset_next(&mine, 0); c >= 0; c = gb_cpuset_next(&mine, c + 1))
        last = c;
    gb_cpuset one;
    gb_cpuset_zero(&one);
    gb_cpuset_set(&one, last);

    seen s = {0};
    gb_helper_thread h;
    assert_true(gb_helper_thread_start(&h, "gb-test-helper", &one, record, &s));
    gb_helper_thread_join(&h);
    assert_int_equal(s.ran, 1);
    assert_int_equal(s.rc, 0);
    assert_true(same_set(&s.allowed, can_restrict ? &one : &mine));
}

static void test_unrestricted_without_cpus(void **state)
{
    (void)state;
    gb_cpuset mine, empty;
    assert_int_equal(gb_cpu_allowed(&mine), 0);
    gb_cpuset_zero(&empty);
    for (int i = 0; i < 2; i++) {
        seen s = {0};
        gb_helper_thread h;
        assert_true(gb_helper_thread_start(&h, "gb-test-helper", i ? &empty : NULL, record, &s));
        gb_helper_thread_join(&h);
        assert_int_equal(s.ran, 1);
        assert_true(same_set(&s.allowed, &mine));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_restricted_to_the_given_cpus),
        cmocka_unit_test(test_unrestricted_without_cpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
