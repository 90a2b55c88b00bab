/* Linux CPUs: the affinity mask through the syscall table, sched_getcpu. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/internal.h"
#include "cpu.h"

int gb_cpu_allowed(gb_cpuset *out)
{
    if (!out)
        return gb__fail(GB_EINVAL, NULL, 0, "gb_cpu_allowed: NULL set");
    gb_cpuset_zero(out);
    if (gb__sys.sched_getaffinity(0, sizeof out->bits, out->bits) != 0)
        return gb__fail(gb__errno_code(errno), NULL, 0, "sched_getaffinity: %s", strerror(errno));
    if (gb_cpuset_count(out) == 0)
        return gb__fail(GB_ESYS, NULL, 0, "sched_getaffinity returned an empty CPU set");
    return 0;
}

/* "0-1,4" style text of a set, for messages. */
static void format_set(const gb_cpuset *s, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int c = gb_cpuset_next(s, 0); c >= 0 && len + 1 < cap;) {
        int end = c;
        while (gb_cpuset_test(s, end + 1))
            end++;
        int n = end > c ? snprintf(buf + len, cap - len, "%s%d-%d", len ? "," : "", c, end)
                        : snprintf(buf + len, cap - len, "%s%d", len ? "," : "", c);
        if (n < 0)
            break;
        len += (size_t)n;
        c = gb_cpuset_next(s, end + 1);
    }
}

int gb_cpu_pin_current_thread(int cpu)
{
    if (cpu < 0 || cpu >= GB_CPUSET_MAX)
        return gb__fail(GB_EINVAL, NULL, 0, "CPU %d is out of range (0..%d)", cpu, GB_CPUSET_MAX - 1);
    gb_cpuset allowed;
    int rc = gb_cpu_allowed(&allowed);
    if (rc < 0)
        return rc;
    if (!gb_cpuset_test(&allowed, cpu)) {
        /* sched_setaffinity would intersect with the cpuset and, for a CPU
         * outside it, fail with a bare EINVAL - say what is allowed. */
        char list[256];
        format_set(&allowed, list, sizeof list);
        return gb__fail(GB_EINVAL, NULL, 0,
                        "CPU %d is not in this process's allowed CPUs (%s): check taskset/cgroup cpuset "
                        "or pick one of those",
                        cpu, list);
    }
    gb_cpuset one;
    gb_cpuset_zero(&one);
    gb_cpuset_set(&one, cpu);
    /* pid 0 = the calling thread (sched_setaffinity is per thread). */
    if (gb__sys.sched_setaffinity(0, sizeof one.bits, one.bits) != 0)
        return gb__fail(gb__errno_code(errno), NULL, 0, "sched_setaffinity(CPU %d): %s", cpu, strerror(errno));
    return 0;
}

int gb_cpu_restrict_current_thread(const gb_cpuset *set)
{
    if (gb_cpuset_count(set) == 0)
        return 0;
    if (gb__sys.sched_setaffinity(0, sizeof set->bits, set->bits) != 0) {
        char list[256];
        format_set(set, list, sizeof list);
        return gb__fail(gb__errno_code(errno), NULL, 0, "sched_setaffinity(CPUs %s): %s", list, strerror(errno));
    }
    return 0;
}

int gb_thread_set_name(const char *name)
{
    char short_name[16];
    snprintf(short_name, sizeof short_name, "%s", name);
    int e = pthread_setname_np(pthread_self(), short_name);
    return e == 0 ? 0 : gb__fail(gb__errno_code(e), NULL, 0, "pthread_setname_np(%s): %s", short_name, strerror(e));
}

int gb_thread_set_latency_critical(void)
{
    return gb__fail(GB_ENOTSUP, NULL, 0, "Linux has no latency QoS class for threads; pin with --cpu instead");
}

int gb_thread_set_background(void)
{
    /* Linux applies scheduling policy per thread; lowering needs no
     * privilege. SCHED_IDLE rather than nice 19: a normal thread waking up
     * always preempts it (the ring isolation test measured claim churn
     * delaying a neighbour by up to 1.9x at nice 19, 1.3x at SCHED_IDLE).
     * It still gets a minimal share of a CPU that others keep busy, so its
     * work is delayed under full load, not starved. */
    struct sched_param p = {.sched_priority = 0};
    int e = pthread_setschedparam(pthread_self(), SCHED_IDLE, &p);
    if (e != 0)
        return gb__fail(gb__errno_code(e), NULL, 0, "pthread_setschedparam(SCHED_IDLE): %s", strerror(e));
    return 0;
}

int gb_thread_set_low_priority(void)
{
    /* Linux keeps a nice value per thread (setpriority on the thread id);
     * raising it needs no privilege. Nice 10 has a ninth of a nice-0
     * thread's weight: enough for the engine to take the CPU back on every
     * wake-up (measured: write p99 during a background save 0.21 -> 4.3 ms
     * at nice 0, 0.31 -> 0.34 ms at nice 10, on a CPU the two share), while
     * the save still progresses when the engine is saturated (SCHED_IDLE
     * and nice 19 let it crawl). */
    pid_t tid = (pid_t)syscall(SYS_gettid);
    if (setpriority(PRIO_PROCESS, (id_t)tid, 10) != 0)
        return gb__fail(gb__errno_code(errno), NULL, 0, "setpriority(thread %d, 10): %s", (int)tid, strerror(errno));
    return 0;
}

/* SCHED_OTHER at nice 10, the class gb_thread_set_low_priority gives. The
 * legacy setscheduler call keeps the thread's nice value; leaving
 * SCHED_IDLE is allowed without privilege only where RLIMIT_NICE permits
 * that nice value. */
static int low_priority_class(pthread_t thread)
{
    struct sched_param p = {.sched_priority = 0};
    return pthread_setschedparam(thread, SCHED_OTHER, &p);
}

/* Whether the process has CAP_SYS_NICE in its effective set (bit 23 of
 * CapEff in /proc/self/status; no libcap needed). */
static bool has_cap_sys_nice(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return false;
    char line[256];
    unsigned long long caps = 0;
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        found = sscanf(line, "CapEff: %llx", &caps) == 1;
    fclose(f);
    return found && (caps >> 23 & 1u);
}

/* The kernel's rule for leaving SCHED_IDLE (can_nice): the thread's nice
 * value must be one RLIMIT_NICE allows (20 - nice <= the limit), or the
 * process has CAP_SYS_NICE. Checked before going idle: a thread that went
 * idle without it could not come back. */
static bool may_leave_idle(void)
{
    errno = 0;
    int nice_now = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    struct rlimit lim;
    if (errno == 0 && getrlimit(RLIMIT_NICE, &lim) == 0 &&
        (lim.rlim_cur == RLIM_INFINITY || (rlim_t)(20 - nice_now) <= lim.rlim_cur))
        return true;
    return has_cap_sys_nice();
}

int gb_thread_lower_to_idle(void)
{
    if (!may_leave_idle())
        return gb__fail(GB_EPERM, NULL, 0,
                        "the idle class only with a way back to nice 10: needs RLIMIT_NICE of 10 or more "
                        "(ulimit -e 10, systemd LimitNICE=+10) or CAP_SYS_NICE");
    /* Take the way back once before relying on it. */
    struct sched_param p = {.sched_priority = 0};
    int e = pthread_setschedparam(pthread_self(), SCHED_IDLE, &p);
    if (e == 0 && (e = low_priority_class(pthread_self())) == 0)
        e = pthread_setschedparam(pthread_self(), SCHED_IDLE, &p);
    if (e != 0) {
        (void)low_priority_class(pthread_self()); /* where it was, if it can */
        return gb__fail(gb__errno_code(e), NULL, 0, "pthread_setschedparam (idle class and back): %s", strerror(e));
    }
    return 0;
}

int gb_thread_raise_from_idle(pthread_t thread)
{
    int e = low_priority_class(thread);
    if (e != 0)
        return gb__fail(gb__errno_code(e), NULL, 0, "pthread_setschedparam(SCHED_OTHER): %s", strerror(e));
    return 0;
}

int gb_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int gb_cpu_current(void)
{
    int c = sched_getcpu();
    if (c < 0)
        return gb__fail(GB_ENOTSUP, NULL, 0, "sched_getcpu: %s", strerror(errno));
    return c;
}
