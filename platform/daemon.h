/*
 * Running as a service: detaching from the terminal, the pid file, and the
 * per-process memory and OOM-killer settings Redis's redis.conf controls
 * (daemonize, pidfile, disable-thp, oom-score-adj).
 *
 *   daemonize, pid file - POSIX, every variant (common/daemon_posix.c)
 *   THP, OOM score      - Linux (prctl and /sys/kernel/mm, /proc/self/oom_score_adj);
 *                         elsewhere GB_ENOTSUP (common/process_none.c)
 */
#ifndef GB_PLATFORM_DAEMON_H
#define GB_PLATFORM_DAEMON_H

#include <stdbool.h>
#include <stddef.h>

/* Forks; the parent exits 0 at once, the child leads a new session with
 * standard input, output and error on /dev/null. Call before any thread
 * starts. Returns 0 in the child or a negative GB_E* code (no fork). */
int gb_plat_daemonize(char *err, size_t errlen);

/* Writes "<pid>\n" to path. Returns 0 or a negative GB_E* code. */
int gb_plat_write_pidfile(const char *path, char *err, size_t errlen);

/* Turns transparent huge pages off for this process. */
int gb_plat_disable_thp(void);
/* Whether the kernel gives every process transparent huge pages unasked
 * (Linux's "always" mode), the one mode disable-thp acts on (Redis's
 * checkTHPEnabled): under "madvise" a process gets huge pages only where it
 * asks for them (the engine's big bucket arrays), so there is nothing to
 * turn off. */
bool gb_plat_thp_always(void);

/* The OOM killer's score adjustment of this process (-1000..1000). */
int gb_plat_oom_score_adj_get(int *out);
int gb_plat_oom_score_adj_set(int value);

/* Physical memory of the machine, bytes (0 when unknown). */
size_t gb_plat_total_system_memory(void);

/* CPU time the calling thread used, seconds (Linux RUSAGE_THREAD);
 * elsewhere GB_ENOTSUP. */
int gb_plat_thread_cpu_seconds(double *user, double *sys);

#endif
