/* macOS CPUs. There is no affinity API: the scheduler places threads, and
 * the only levers are the QoS class (USER_INTERACTIVE keeps a thread on the
 * performance cores and out of App Nap throttling) and the affinity tag
 * (THREAD_AFFINITY_POLICY), a grouping hint that Intel Macs accept and Apple
 * Silicon rejects with KERN_NOT_SUPPORTED. Pinning is GB_ENOTSUP either way,
 * after both levers were pulled. */
#include <errno.h>
#include <mach/mach.h>
#include <mach/mach_error.h>
#include <mach/thread_policy.h>
#include <pthread.h>
#include <pthread/qos.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysctl.h>
#include <unistd.h>

#include "common/internal.h"
#include "cpu.h"

int gb_cpu_count(void)
{
    int n = 0;
    size_t len = sizeof n;
    if (sysctlbyname("hw.logicalcpu", &n, &len, NULL, 0) != 0 || n < 1) {
        long v = sysconf(_SC_NPROCESSORS_ONLN);
        n = v > 0 ? (int)v : 1;
    }
    return n > GB_CPUSET_MAX ? GB_CPUSET_MAX : n;
}

int gb_cpu_allowed(gb_cpuset *out)
{
    if (!out)
        return GB_EINVAL;
    /* No per-process CPU restriction exists on macOS: every CPU is usable. */
    gb_cpuset_zero(out);
    int n = gb_cpu_count();
    for (int c = 0; c < n; c++)
        gb_cpuset_set(out, c);
    return 0;
}

int gb_cpu_restrict_current_thread(const gb_cpuset *set)
{
    if (gb_cpuset_count(set) == 0)
        return 0;
    /* macOS schedules by QoS, not by CPU: a helper thread keeps the default
     * class, below the engine's USER_INTERACTIVE. */
    return gb__fail(GB_ENOTSUP, NULL, 0, "macOS has no per-CPU thread affinity");
}

int gb_thread_set_name(const char *name)
{
    char short_name[16];
    snprintf(short_name, sizeof short_name, "%s", name);
    int e = pthread_setname_np(short_name); /* darwin: names only the calling thread */
    return e == 0 ? 0 : gb__fail(gb__errno_code(e), NULL, 0, "pthread_setname_np(%s): %s", short_name, strerror(e));
}

int gb_thread_set_latency_critical(void)
{
    int e = pthread_set_qos_class_self_np(QOS_CLASS_USER_INTERACTIVE, 0);
    if (e != 0)
        return gb__fail(gb__errno_code(e), NULL, 0, "pthread_set_qos_class_self_np(USER_INTERACTIVE): %s",
                        strerror(e));
    return 0;
}

int gb_thread_set_background(void)
{
    int e = pthread_set_qos_class_self_np(QOS_CLASS_BACKGROUND, 0);
    if (e != 0)
        return gb__fail(gb__errno_code(e), NULL, 0, "pthread_set_qos_class_self_np(BACKGROUND): %s", strerror(e));
    return 0;
}

int gb_thread_set_low_priority(void)
{
    /* UTILITY rather than BACKGROUND: BACKGROUND also throttles the
     * thread's disk I/O, and this thread's job is writing a file. */
    int e = pthread_set_qos_class_self_np(QOS_CLASS_UTILITY, 0);
    if (e != 0)
        return gb__fail(gb__errno_code(e), NULL, 0, "pthread_set_qos_class_self_np(UTILITY): %s", strerror(e));
    return 0;
}

int gb_thread_lower_to_idle(void)
{
    return gb__fail(GB_ENOTSUP, NULL, 0, "darwin has no idle scheduling class for a thread (QoS UTILITY stays)");
}

int gb_thread_raise_from_idle(pthread_t thread)
{
    (void)thread;
    return gb__fail(GB_ENOTSUP, NULL, 0, "darwin has no idle scheduling class for a thread (QoS UTILITY stays)");
}

int gb_cpu_pin_current_thread(int cpu)
{
    if (cpu < 0 || cpu >= gb_cpu_count())
        return gb__fail(GB_EINVAL, NULL, 0, "CPU %d does not exist (0..%d)", cpu, gb_cpu_count() - 1);
    /* Whatever happens to the affinity attempt, the thread should at least
     * run on a performance core. */
    int rc = gb_thread_set_latency_critical();
    if (rc < 0)
        return rc;
    /* Tag 0 is THREAD_AFFINITY_TAG_NULL ("no affinity"): use cpu + 1. */
    thread_affinity_policy_data_t policy = {.affinity_tag = cpu + 1};
    /* pthread_mach_thread_np: no port reference to release, unlike
     * mach_thread_self(). */
    kern_return_t kr = thread_policy_set(pthread_mach_thread_np(pthread_self()), THREAD_AFFINITY_POLICY,
                                         (thread_policy_t)&policy, THREAD_AFFINITY_POLICY_COUNT);
    if (kr == KERN_NOT_SUPPORTED)
        return gb__fail(GB_ENOTSUP, NULL, 0,
                        "macOS on Apple Silicon cannot pin a thread to CPU %d (THREAD_AFFINITY_POLICY: "
                        "KERN_NOT_SUPPORTED); the thread now runs at QoS USER_INTERACTIVE (performance cores)",
                        cpu);
    if (kr != KERN_SUCCESS)
        return gb__fail(GB_ESYS, NULL, 0, "thread_policy_set(THREAD_AFFINITY_POLICY): %s", mach_error_string(kr));
    /* Intel Mac: the tag was accepted, but it only keeps threads with
     * different tags on different L2 caches - it does not bind this thread
     * to `cpu`. Saying "pinned" would be the silent success we never give. */
    return gb__fail(GB_ENOTSUP, NULL, 0,
                    "macOS cannot pin a thread to CPU %d; applied QoS USER_INTERACTIVE and affinity tag %d "
                    "(a cache-sharing hint)",
                    cpu, cpu + 1);
}

int gb_cpu_current(void)
{
    if (__builtin_available(macOS 11.0, *)) {
        size_t cpu = 0;
        if (pthread_cpu_number_np(&cpu) == 0)
            return (int)cpu;
    }
    return gb__fail(GB_ENOTSUP, NULL, 0, "pthread_cpu_number_np is not available");
}
