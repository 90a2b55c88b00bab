/*
 * Helper threads: the engine's background work (lazy freeing, writing a
 * snapshot, fsyncing the append-only log) runs on threads started here, on
 * the CPUs the server set aside for them (gb_settings.helper_cpus: the CPUs
 * it was allowed at start minus --cpu), so a save compressing on one core
 * does not take turns with the pinned engine thread on its core. With no
 * set (tests, an unpinned server) a helper runs wherever its creator may.
 *
 * No allocation: the caller embeds the gb_helper_thread in its own state.
 */
#ifndef GB_ENGINE_BASE_HELPER_THREAD_H
#define GB_ENGINE_BASE_HELPER_THREAD_H

#include <pthread.h>
#include <stdbool.h>

#include "platform/cpu.h"

typedef struct gb_helper_thread {
    pthread_t thread;
    void *(*fn)(void *);
    void *arg;
    const char *name;
    gb_cpuset cpus;
} gb_helper_thread;

/* Starts fn(arg) on a thread named name (top -H, ps -L: "gb-lazyfree")
 * restricted to cpus (NULL or empty: no restriction). False when the thread
 * could not be created. */
bool gb_helper_thread_start(gb_helper_thread *h, const char *name, const gb_cpuset *cpus, void *(*fn)(void *),
                            void *arg);
void gb_helper_thread_join(gb_helper_thread *h);

/* Whether a helper thread given cpus gets a CPU the calling (engine)
 * thread does not run on: cpus holds one (the server took the engine's
 * --cpu out of it), or, given none, the caller may run on more than one.
 * Work that only pays when it overlaps with the engine's (a load's
 * read-ahead) is not worth a thread that would take turns with the engine
 * on its one CPU. */
bool gb_helper_has_own_cpu(const gb_cpuset *cpus);

#endif
