/*
 * CPUs: which ones this process may use, pinning the calling thread, and the
 * spin-wait hint.
 *
 *   linux  - sched_getaffinity / sched_setaffinity through the syscall table
 *            (platform/syscalls.h), sched_getcpu.
 *   darwin - no affinity API: "pinning" sets QoS USER_INTERACTIVE (keeps the
 *            thread on performance cores) and tries THREAD_AFFINITY_POLICY
 *            (KERN_NOT_SUPPORTED on Apple Silicon, a mere cache-sharing hint
 *            on Intel) -> GB_ENOTSUP.
 *   posix  - allowed = every online CPU; pinning/current CPU -> GB_ENOTSUP.
 *
 * All functions return 0 (or a count) on success and a negative GB_E* code on
 * failure; gb_plat_last_error() has the words for the user.
 */
#ifndef GB_PLATFORM_CPU_H
#define GB_PLATFORM_CPU_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* Bytes between two words written by different cores. 128, not 64: Intel's
 * adjacent-line prefetcher pulls lines in pairs, and Apple's M-series lines
 * are 128 bytes. Shared index words (ring head/tail) sit this far apart. */
#define GB_CACHE_ISOLATION 128

/* A CPU set big enough for Linux's default CONFIG_NR_CPUS (1024); the same
 * size and bit order as glibc's cpu_set_t, so it can be passed to the kernel. */
#define GB_CPUSET_MAX 1024
typedef struct {
    uint64_t bits[GB_CPUSET_MAX / 64];
} gb_cpuset;

static inline void gb_cpuset_zero(gb_cpuset *s)
{
    for (int i = 0; i < GB_CPUSET_MAX / 64; i++)
        s->bits[i] = 0;
}

/* Out-of-range CPUs are ignored by set/clear and never "in" the set. */
static inline void gb_cpuset_set(gb_cpuset *s, int cpu)
{
    if (cpu >= 0 && cpu < GB_CPUSET_MAX)
        s->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

static inline void gb_cpuset_clear(gb_cpuset *s, int cpu)
{
    if (cpu >= 0 && cpu < GB_CPUSET_MAX)
        s->bits[cpu / 64] &= ~(UINT64_C(1) << (cpu % 64));
}

static inline bool gb_cpuset_test(const gb_cpuset *s, int cpu)
{
    return cpu >= 0 && cpu < GB_CPUSET_MAX && ((s->bits[cpu / 64] >> (cpu % 64)) & 1u);
}

static inline int gb_cpuset_count(const gb_cpuset *s)
{
    int n = 0;
    for (int i = 0; i < GB_CPUSET_MAX / 64; i++)
        n += __builtin_popcountll(s->bits[i]);
    return n;
}

/* The lowest CPU in the set at or above `from`, or -1. Iterate with
 * for (c = gb_cpuset_next(s, 0); c >= 0; c = gb_cpuset_next(s, c + 1)). */
static inline int gb_cpuset_next(const gb_cpuset *s, int from)
{
    for (int c = from < 0 ? 0 : from; c < GB_CPUSET_MAX; c++)
        if (gb_cpuset_test(s, c))
            return c;
    return -1;
}

/* The CPUs this process may run on (its affinity mask, which already
 * reflects cgroup cpusets and taskset). Never empty on success. */
int gb_cpu_allowed(gb_cpuset *out);

/* Pins the calling thread to `cpu`. Linux checks `cpu` against
 * gb_cpu_allowed() first, because sched_setaffinity silently intersects with
 * the cpuset: a disallowed CPU is GB_EINVAL with the allowed list in the
 * message, never a pin that quietly went elsewhere. darwin/posix: GB_ENOTSUP
 * (darwin still applies QoS USER_INTERACTIVE first). */
int gb_cpu_pin_current_thread(int cpu);

/* Restricts the calling thread to the CPUs of set (helper threads kept off
 * the engine's pinned CPU). An empty set changes nothing. Linux:
 * sched_setaffinity, which intersects with the cgroup cpuset; darwin/posix:
 * GB_ENOTSUP (no per-CPU affinity there). */
int gb_cpu_restrict_current_thread(const gb_cpuset *set);

/* Names the calling thread for top -H, ps -L and debuggers (at most 15
 * bytes are kept). Linux/darwin: pthread_setname_np; posix: GB_ENOTSUP. */
int gb_thread_set_name(const char *name);

/* Marks the calling thread as latency critical where the OS has a notion of
 * it (darwin: QoS USER_INTERACTIVE, i.e. performance cores, no App Nap
 * throttling). linux/posix: GB_ENOTSUP - there, pin instead. */
int gb_thread_set_latency_critical(void);

/* Marks the calling thread as background work that should run only when
 * nothing else wants the CPU (the ring pool's refill thread: a client that
 * claims and dies in a loop must not take CPU time from the engine or from
 * other clients). linux: SCHED_IDLE; darwin: QoS BACKGROUND; posix:
 * GB_ENOTSUP (POSIX priorities are per process). */
int gb_thread_set_background(void);

/* Lowers the calling thread below the engine's thread without starving it:
 * work that must finish, but not at the expense of requests, when it shares
 * a CPU with the engine (a background save's writer). Under full
 * contention it keeps about a tenth of the CPU, so a save still ends; but
 * a waking engine thread may wait for it a while (Linux's EEVDF: tens of
 * microseconds, up to its slice), which gb_thread_lower_to_idle avoids
 * where it can. linux: nice 10 for this thread; darwin: QoS UTILITY;
 * posix: GB_ENOTSUP (POSIX priorities are per process). */
int gb_thread_set_low_priority(void);

/* Moves the calling low-priority thread (gb_thread_set_low_priority) into
 * the idle class, where every wake-up of a normal thread preempts it at
 * once, but only when gb_thread_raise_from_idle can later bring it back:
 * in the idle class a thread gets next to nothing of a CPU that other
 * threads or processes keep busy, so work that must end needs the way
 * back. Returns 0 with the thread idle; otherwise an error, the thread
 * left where it was. linux: SCHED_IDLE, when the process may return to
 * nice 10 (CAP_SYS_NICE, or RLIMIT_NICE of 10 or more: `ulimit -e`,
 * systemd's LimitNICE=+10), which it checks by doing so once;
 * darwin, posix: GB_ENOTSUP. */
int gb_thread_lower_to_idle(void);

/* Brings a thread that gb_thread_lower_to_idle moved into the idle class
 * back to the low-priority class. Any thread of the process may call it. */
int gb_thread_raise_from_idle(pthread_t thread);

/* Number of online CPUs (>= 1). */
int gb_cpu_count(void);

/* The CPU the calling thread runs on right now (a hint: it can migrate the
 * next instant unless pinned), or GB_ENOTSUP. */
int gb_cpu_current(void);

/* The data-cache line size the CPU reports to user code, in bytes, or 0
 * where the architecture has no such answer. x86: CPUID.01H:EBX[15:8] x 8
 * (the CLFLUSH line, 64); arm64: CTR_EL0.DminLine, the smallest data-cache
 * line (64 on Neoverse/Graviton/Ampere, 256 on A64FX; Apple reports 64 while
 * its lines are 128, which is why GB_CACHE_ISOLATION is not derived from
 * this). test_cpu checks GB_CACHE_ISOLATION is a multiple of it. */
static inline unsigned gb_cpu_cache_line(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a = 1, b, c = 0, d;
    __asm__ __volatile__("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    return ((b >> 8) & 0xffu) * 8u;
#elif defined(__aarch64__)
    uint64_t ctr;
    __asm__ __volatile__("mrs %0, ctr_el0" : "=r"(ctr));
    return 4u << ((ctr >> 16) & 0xfu); /* DminLine: log2 of the line in 4-byte words */
#else
    return 0;
#endif
}

/* Spin-wait hint for busy-poll loops. x86 `pause` (de-pipelines the loop
 * and yields the core to its SMT sibling); arm64 `isb` (a real ~10-40 ns
 * delay; arm64 `yield` is a no-op that only gets the thread deprioritised
 * by the hypervisor, which is why Rust, Go and OpenJDK moved to isb). */
static inline void gb_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
    __asm__ __volatile__("isb" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

#endif
