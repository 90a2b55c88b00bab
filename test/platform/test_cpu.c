/* platform/cpu.h: the CPU-set helpers, the allowed set, pinning to an
 * allowed CPU and refusing a disallowed one (real and injected), and the
 * calls a variant may not support. */
#include "tutil.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cpu.h"
#include "goblin/ring_layout.h"

static int reset_table(void **state)
{
    (void)state;
    gb_syscalls_reset();
    return 0;
}

static void test_cpuset_helpers(void **state)
{
    (void)state;
    gb_cpuset s;
    gb_cpuset_zero(&s);
    assert_int_equal(gb_cpuset_count(&s), 0);
    assert_int_equal(gb_cpuset_next(&s, 0), -1);
    gb_cpuset_set(&s, 0);
    gb_cpuset_set(&s, 63);
    gb_cpuset_set(&s, 64);
    gb_cpuset_set(&s, GB_CPUSET_MAX - 1);
    gb_cpuset_set(&s, GB_CPUSET_MAX); /* ignored */
    gb_cpuset_set(&s, -1);            /* ignored */
    assert_int_equal(gb_cpuset_count(&s), 4);
    assert_true(gb_cpuset_test(&s, 63) && gb_cpuset_test(&s, 64));
    assert_false(gb_cpuset_test(&s, 1));
    assert_false(gb_cpuset_test(&s, GB_CPUSET_MAX));
    assert_false(gb_cpuset_test(&s, -5));
    assert_int_equal(gb_cpuset_next(&s, 1), 63);
    assert_int_equal(gb_cpuset_next(&s, 65), GB_CPUSET_MAX - 1);
    gb_cpuset_clear(&s, 63);
    assert_int_equal(gb_cpuset_count(&s), 3);
    assert_int_equal(GB_CACHE_ISOLATION, 128);
    assert_int_equal(sizeof(gb_cpuset), GB_CPUSET_MAX / 8);
}

/* The 128-byte isolation covers the line this CPU reports (64 on x86 and on
 * arm64 servers; qemu-user's emulated arm64 CPU, which the arm64 check runs
 * on, reports 32): whole lines, never a line shared by the two sides of a
 * ring. */
static void test_isolation_covers_the_cache_line(void **state)
{
    (void)state;
    unsigned line = gb_cpu_cache_line();
    if (line == 0)
        skip_because("this architecture reports no cache line size to user code");
    print_message("CPU reports %u-byte cache lines; GB_CACHE_ISOLATION %d, ring lines %u\n", line,
                  GB_CACHE_ISOLATION, GB_RING_LINE);
    assert_true(line >= 16 && line <= GB_CACHE_ISOLATION);
    assert_int_equal(GB_CACHE_ISOLATION % line, 0);
    assert_int_equal(GB_RING_LINE % line, 0);
}

static void test_allowed_and_count(void **state)
{
    (void)state;
    int n = gb_cpu_count();
    assert_true(n >= 1);
    gb_cpuset allowed;
    assert_rc(gb_cpu_allowed(&allowed), 0);
    assert_true(gb_cpuset_count(&allowed) >= 1);
    if (!tu_has(GB_CAP_AFFINITY))
        assert_int_equal(gb_cpuset_count(&allowed), n); /* every online CPU */
    for (int i = 0; i < 1000; i++)
        gb_cpu_relax();
}

static void test_current_and_qos(void **state)
{
    (void)state;
    int c = gb_cpu_current();
    if (tu_has(GB_CAP_CPU_CURRENT))
        assert_true(c >= 0 && c < GB_CPUSET_MAX);
    else
        assert_rc(c, GB_ENOTSUP);
    int rc = gb_thread_set_latency_critical();
    assert_rc(rc, tu_has(GB_CAP_LATENCY_QOS) ? 0 : GB_ENOTSUP);
}

/* Background class on a thread of its own: that thread only changes. */
typedef struct {
    int rc;
    int policy;
} bg_job;

static void *bg_thread(void *arg)
{
    bg_job *j = arg;
    j->rc = gb_thread_set_background();
    struct sched_param p;
    if (pthread_getschedparam(pthread_self(), &j->policy, &p) != 0)
        j->policy = -1;
    return NULL;
}

static void test_background_thread(void **state)
{
    (void)state;
    bg_job j = {0, -1};
    pthread_t t;
    int before, after;
    struct sched_param p;
    assert_int_equal(pthread_getschedparam(pthread_self(), &before, &p), 0);
    assert_int_equal(pthread_create(&t, NULL, bg_thread, &j), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    if (strcmp(gb_platform_name(), "posix") == 0) {
        assert_rc(j.rc, GB_ENOTSUP);
        return;
    }
    assert_rc(j.rc, 0);
#ifdef SCHED_IDLE /* Linux: the policy is visible; darwin's QoS class is not a policy */
    assert_int_equal(j.policy, SCHED_IDLE);
#endif
    assert_int_equal(pthread_getschedparam(pthread_self(), &after, &p), 0);
    assert_int_equal(after, before); /* the caller's thread is untouched */
}

/* The idle class with a way back: a thread lowers itself, another raises
 * it (what the snapshot writer and the engine do). */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stage; /* 1: lowered (policy_idle set), 2: raised by the main thread */
    int rc;
    int policy_idle, policy_raised;
} idle_job;

static int own_policy(void)
{
    struct sched_param p;
    int policy;
    return pthread_getschedparam(pthread_self(), &policy, &p) == 0 ? policy : -1;
}

static void *idle_thread(void *arg)
{
    idle_job *j = arg;
    (void)gb_thread_set_low_priority();
    int rc = gb_thread_lower_to_idle();
    pthread_mutex_lock(&j->mu);
    j->rc = rc;
    j->policy_idle = own_policy();
    j->stage = 1;
    pthread_cond_broadcast(&j->cv);
    while (j->stage != 2)
        pthread_cond_wait(&j->cv, &j->mu);
    j->policy_raised = own_policy();
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

static void test_idle_class_and_back(void **state)
{
    (void)state;
    idle_job j = {.stage = 0, .rc = 1, .policy_idle = -1, .policy_raised = -1};
    pthread_mutex_init(&j.mu, NULL);
    pthread_cond_init(&j.cv, NULL);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, idle_thread, &j), 0);
    pthread_mutex_lock(&j.mu);
    while (j.stage != 1)
        pthread_cond_wait(&j.cv, &j.mu);
    int raise_rc = j.rc == 0 ? gb_thread_raise_from_idle(t) : 0;
    j.stage = 2;
    pthread_cond_broadcast(&j.cv);
    pthread_mutex_unlock(&j.mu);
    assert_int_equal(pthread_join(t, NULL), 0);
    if (strcmp(gb_platform_name(), "linux") != 0) {
        assert_rc(j.rc, GB_ENOTSUP); /* darwin's QoS classes and posix have no idle class */
        assert_int_equal(raise_rc, 0); /* so no raise was tried */
        assert_rc(gb_thread_raise_from_idle(pthread_self()), GB_ENOTSUP);
        return;
    }
#ifdef SCHED_IDLE
    /* The kernel's rule for leaving SCHED_IDLE at nice 10: RLIMIT_NICE of
     * 10 or more, or CAP_SYS_NICE (bit 23 of CapEff; root in a container
     * may lack it). */
    struct rlimit nice_limit;
    assert_int_equal(getrlimit(RLIMIT_NICE, &nice_limit), 0);
    bool may_return = nice_limit.rlim_cur == RLIM_INFINITY || nice_limit.rlim_cur >= 10;
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long caps = 0;
    while (status && fgets(line, sizeof line, status))
        if (sscanf(line, "CapEff: %llx", &caps) == 1 && (caps >> 23 & 1u))
            may_return = true;
    if (status)
        fclose(status);
    if (!may_return) {
        assert_true(j.rc < 0);                        /* refused, and */
        assert_int_equal(j.policy_idle, SCHED_OTHER); /* left where it was */
        return;
    }
    assert_rc(j.rc, 0);
    assert_int_equal(j.policy_idle, SCHED_IDLE);
    assert_rc(raise_rc, 0);
    assert_int_equal(j.policy_raised, SCHED_OTHER);
#endif
}

/* Pinning changes the calling thread: do it on a thread of its own. */
typedef struct {
    int cpu;
    int rc;
    int after;
} pin_job;

static void *pin_thread(void *arg)
{
    pin_job *j = arg;
    j->rc = gb_cpu_pin_current_thread(j->cpu);
    j->after = -1;
    if (j->rc == 0 && tu_expected_has(GB_CAP_CPU_CURRENT))
        for (int i = 0; i < 100; i++) /* pinned: must already run there */
            j->after = gb_cpu_current();
    return NULL;
}

static pin_job pin_on_thread(int cpu)
{
    pin_job j = {.cpu = cpu};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, pin_thread, &j), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    return j;
}

static void test_pin_allowed_and_disallowed(void **state)
{
    (void)state;
    gb_cpuset allowed;
    assert_rc(gb_cpu_allowed(&allowed), 0);
    int last = -1;
    for (int c = gb_cpuset_next(&allowed, 0); c >= 0; c = gb_cpuset_next(&allowed, c + 1))
        last = c;
    pin_job j = pin_on_thread(last);
    if (!tu_has(GB_CAP_PIN)) {
        assert_rc(j.rc, GB_ENOTSUP);
    } else {
        assert_rc(j.rc, 0);
        if (tu_has(GB_CAP_CPU_CURRENT))
            assert_int_equal(j.after, last);
    }
    /* out of range everywhere */
    assert_rc(pin_on_thread(-1).rc, GB_EINVAL);
    assert_rc(pin_on_thread(GB_CPUSET_MAX).rc, GB_EINVAL);

    if (tu_has(GB_CAP_AFFINITY)) {
        /* a real CPU number outside our affinity mask: refused with the
         * allowed list, not silently intersected away */
        int outside = 0;
        while (outside < GB_CPUSET_MAX && gb_cpuset_test(&allowed, outside))
            outside++;
        if (outside < GB_CPUSET_MAX) {
            j = pin_on_thread(outside);
            assert_rc(j.rc, GB_EINVAL);
        }
    }
}

/* ---- injected affinity ---------------------------------------------------- */

static int fake_get_only_cpu0(pid_t pid, size_t setsize, void *mask)
{
    (void)pid;
    memset(mask, 0, setsize);
    ((unsigned char *)mask)[0] = 1; /* a cgroup cpuset of {0} */
    return 0;
}

static unsigned char set_mask_seen[GB_CPUSET_MAX / 8];
static int set_calls;

static int spy_set(pid_t pid, size_t setsize, const void *mask)
{
    assert_int_equal(pid, 0); /* the calling thread */
    assert_true(setsize <= sizeof set_mask_seen);
    memcpy(set_mask_seen, mask, setsize);
    set_calls++;
    return 0;
}

static int fail_set_eperm(pid_t pid, size_t setsize, const void *mask)
{
    (void)pid, (void)setsize, (void)mask;
    errno = EPERM;
    return -1;
}

static int fail_get_einval(pid_t pid, size_t setsize, void *mask)
{
    (void)pid, (void)setsize, (void)mask;
    errno = EINVAL;
    return -1;
}

static void test_pin_injected(void **state)
{
    (void)state;
    if (!tu_has(GB_CAP_AFFINITY))
        skip_because("the %s platform layer has no affinity syscalls to inject into", gb_platform_name());
    GB_SYSCALL_OVERRIDE(sched_getaffinity, fake_get_only_cpu0);
    GB_SYSCALL_OVERRIDE(sched_setaffinity, spy_set);
    set_calls = 0;
    assert_rc(gb_cpu_pin_current_thread(1), GB_EINVAL);
    assert_contains(gb_plat_last_error(), "CPU 1 is not in this process's allowed CPUs (0)");
    assert_int_equal(set_calls, 0); /* refused before the syscall */

    assert_rc(gb_cpu_pin_current_thread(0), 0);
    assert_int_equal(set_calls, 1);
    assert_int_equal(set_mask_seen[0], 1);
    for (size_t i = 1; i < sizeof set_mask_seen; i++)
        assert_int_equal(set_mask_seen[i], 0);

    GB_SYSCALL_OVERRIDE(sched_setaffinity, fail_set_eperm);
    assert_rc(gb_cpu_pin_current_thread(0), GB_EPERM);
    GB_SYSCALL_OVERRIDE(sched_getaffinity, fail_get_einval);
    gb_cpuset s;
    assert_rc(gb_cpu_allowed(&s), GB_EINVAL);
    assert_rc(gb_cpu_pin_current_thread(0), GB_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpuset_helpers),
        cmocka_unit_test(test_isolation_covers_the_cache_line),
        cmocka_unit_test(test_allowed_and_count),
        cmocka_unit_test(test_current_and_qos),
        cmocka_unit_test(test_background_thread),
        cmocka_unit_test(test_idle_class_and_back),
        cmocka_unit_test(test_pin_allowed_and_disallowed),
        cmocka_unit_test_teardown(test_pin_injected, reset_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
