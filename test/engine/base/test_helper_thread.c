/* engine/base/helper_thread: a helper thread runs fn(arg), restricted to the
 * CPUs it was given (where the platform can restrict threads), or where its
 * creator may run when given none; and whether it would have a CPU the
 * engine's thread does not run on. */
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

/* gb_helper_has_own_cpu, asked from a thread restricted to one CPU and
 * from one that may run on all of the test's CPUs. */
typedef struct own_cpu_answers {
    int restricted; /* 0 the thread could not be restricted (macOS, POSIX) */
    bool alone_none, alone_empty, alone_other, free_none;
} own_cpu_answers;

static void *ask_own_cpu(void *arg)
{
    own_cpu_answers *a = arg;
    gb_cpuset mine, empty, other;
    assert_int_equal(gb_cpu_allowed(&mine), 0);
    gb_cpuset_zero(&empty);
    int first = gb_cpuset_next(&mine, 0), second = gb_cpuset_next(&mine, first + 1);
    a->free_none = gb_helper_has_own_cpu(NULL);
    gb_cpuset one;
    gb_cpuset_zero(&one);
    gb_cpuset_set(&one, first);
    a->restricted = gb_cpu_restrict_current_thread(&one) == 0;
    a->alone_none = gb_helper_has_own_cpu(NULL);
    a->alone_empty = gb_helper_has_own_cpu(&empty);
    /* the server's helper set never holds the engine's CPU: another one */
    gb_cpuset_zero(&other);
    gb_cpuset_set(&other, second >= 0 ? second : first);
    a->alone_other = gb_helper_has_own_cpu(&other);
    return NULL;
}

static void test_own_cpu(void **state)
{
    (void)state;
    gb_cpuset mine;
    assert_int_equal(gb_cpu_allowed(&mine), 0);
    bool several = gb_cpuset_count(&mine) > 1;
    own_cpu_answers a = {0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, ask_own_cpu, &a), 0);
    pthread_join(t, NULL);
    /* unrestricted, given no set: whether this process has a second CPU */
    assert_int_equal(a.free_none, several);
    /* a set of helper CPUs: always a CPU of its own */
    assert_true(a.alone_other);
    if (a.restricted) {
        /* pinned to one CPU, given none: the helper would share it */
        assert_false(a.alone_none);
        assert_false(a.alone_empty);
    } else {
        assert_int_equal(a.alone_none, several); /* it cannot be pinned: any CPU */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_restricted_to_the_given_cpus),
        cmocka_unit_test(test_unrestricted_without_cpus),
        cmocka_unit_test(test_own_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
