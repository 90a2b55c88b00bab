#include "engine/base/helper_thread.h"


/* Runs on the new thread: name, move, then work. A name or placement the
 * OS refuses (macOS has no affinity, the generic POSIX layer neither)
 * leaves the thread as it started, which is only less convenient or
 * slower, never wrong. */
static void *helper_main(void *arg)
{
    gb_helper_thread *h = arg;
    (void)gb_thread_set_name(h->name);
    (void)gb_cpu_restrict_current_thread(&h->cpus);
    return h->fn(h->arg);
}

bool gb_helper_thread_start(gb_helper_thread *h, const char *name, const gb_cpuset *cpus, void *(*fn)(void *),
                            void *arg)
{
    h->name = name;
    h->fn = fn;
    h->arg = arg;
    if (cpus)
        h->cpus = *cpus;
    else
        gb_cpuset_zero(&h->cpus);
    return pthread_create(&h->thread, NULL, helper_main, h) == 0;
}

void gb_helper_thread_join(gb_helper_thread *h) { pthread_join(h->thread, NULL); }

bool gb_helper_has_own_cpu(const gb_cpuset *cpus)
{
    if (cpus && gb_cpuset_count(cpus) > 0)
        return true;
    gb_cpuset mine;
    if (gb_cpu_allowed(&mine) == 0)
        return gb_cpuset_count(&mine) > 1;
    return gb_cpu_count() > 1; /* no affinity masks here (macOS): any CPU */
}
