/* Generic POSIX CPUs: no affinity API, so "allowed" is every online CPU and
 * pinning is not supported. */
#define _POSIX_C_SOURCE 200809L
#define _DARWIN_C_SOURCE /* when built on macOS: keep _SC_NPROCESSORS_ONLN, SO_NOSIGPIPE visible */
#include <unistd.h>

#include "common/internal.h"
#include "cpu.h"

int gb_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    return n > GB_CPUSET_MAX ? GB_CPUSET_MAX : (int)n;
}

int gb_cpu_allowed(gb_cpuset *out)
{
    if (!out)
        return GB_EINVAL;
    gb_cpuset_zero(out);
    int n = gb_cpu_count();
    for (int c = 0; c < n; c++)
        gb_cpuset_set(out, c);
    return 0;
}

int gb_cpu_pin_current_thread(int cpu)
{
    /* A CPU that does not exist is the caller's mistake on every platform. */
    if (cpu < 0 || cpu >= gb_cpu_count())
        return gb__fail(GB_EINVAL, NULL, 0, "CPU %d does not exist (0..%d online)", cpu, gb_cpu_count() - 1);
    return gb__fail(GB_ENOTSUP, NULL, 0, "thread pinning is not supported by the generic POSIX platform layer");
}

int gb_cpu_restrict_current_thread(const gb_cpuset *set)
{
    if (gb_cpuset_count(set) == 0)
        return 0;
    return gb__fail(GB_ENOTSUP, NULL, 0, "thread affinity is not supported by the generic POSIX platform layer");
}

int gb_thread_set_name(const char *name)
{
    (void)name;
    return gb__fail(GB_ENOTSUP, NULL, 0, "thread names are not supported by the generic POSIX platform layer");
}

int gb_thread_set_latency_critical(void)
{
    return gb__fail(GB_ENOTSUP, NULL, 0, "no latency QoS class in the generic POSIX platform layer");
}

int gb_thread_set_background(void)
{
    return gb__fail(GB_ENOTSUP, NULL, 0, "no per-thread background class in the generic POSIX platform layer");
}

int gb_thread_set_low_priority(void)
{
    return gb__fail(GB_ENOTSUP, NULL, 0, "no per-thread priority in the generic POSIX platform layer");
}

int gb_thread_lower_to_idle(void)
{
    return gb__fail(GB_ENOTSUP, NULL, 0, "no per-thread scheduling class in the generic POSIX platform layer");
}

int gb_thread_raise_from_idle(pthread_t thread)
{
    (void)thread;
    return gb__fail(GB_ENOTSUP, NULL, 0, "no per-thread scheduling class in the generic POSIX platform layer");
}

int gb_cpu_current(void)
{
    return gb__fail(GB_ENOTSUP, NULL, 0, "the current CPU is not known to the generic POSIX platform layer");
}
