/*
 * What a server owes the system that runs it beyond daemon.h: a report
 * when it crashes, and telling a service manager it is ready (Redis's
 * crash-log-enabled and supervised).
 *
 *   crash report      - POSIX signals; the stack trace where the C library
 *                       has <execinfo.h> (glibc, macOS), else none
 *   system logger     - syslog(3)
 *   supervisor notify - systemd's sd_notify protocol (a datagram to the
 *                       AF_UNIX socket in $NOTIFY_SOCKET), without libsystemd;
 *                       upstart's SIGSTOP. Every POSIX variant (common/service_posix.c).
 */
#ifndef GB_PLATFORM_SERVICE_H
#define GB_PLATFORM_SERVICE_H

#include <stdbool.h>

/* Installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT (on an
 * alternate stack, so a stack overflow is reported too) that write a report
 * to fd: `title` and the signal, the faulting address, the stack trace.
 * Then the handler that was there before (the default: die, dump core; a
 * sanitizer's) takes the signal. Writes only with write(2), fd stays the
 * caller's. Calling again replaces fd and title; title must outlive the
 * handlers. Returns 0 or a negative GB_E* code. */
int gb_plat_crash_report_install(int fd, const char *title);
/* Restores the handlers that were there before (crash-log-enabled no). */
void gb_plat_crash_report_remove(void);
/* Redis's crash-memcheck-enabled: after the stack trace, the report runs
 * a fast test of the process's memory (Linux: every anonymous writable
 * mapping, in place; the other threads frozen first) and says whether it
 * found errors. Returns 0, or GB_ENOTSUP where the mappings cannot be
 * listed (the report then has no test, as Redis's has none there). */
int gb_plat_crash_memtest_enable(bool on);

/* The system logger (syslog(3)): opened once with ident (kept by pointer:
 * it must outlive the process's logging) and facility (LOG_USER,
 * LOG_LOCAL0..7 values); then each line at the priority of its log level
 * (0 debug, 1 verbose, 2 notice, 3 warning: LOG_DEBUG, LOG_INFO,
 * LOG_NOTICE, LOG_WARNING, as Redis maps them). */
void gb_plat_syslog_open(const char *ident, int facility);
void gb_plat_syslog_line(int level, const char *line);

/* Sends one sd_notify message ("READY=1\n", "STATUS=...\n",
 * "STOPPING=1\n") to the socket $NOTIFY_SOCKET names (a path, or an
 * abstract name after '@'). Returns 0, GB_ENOENT when the variable is not
 * set, or another negative GB_E* code. */
int gb_plat_notify_systemd(const char *message);

/* Whether $NOTIFY_SOCKET / $UPSTART_JOB is set (supervised auto). */
bool gb_plat_systemd_present(void);
bool gb_plat_upstart_present(void);

/* Upstart's readiness protocol: stop with SIGSTOP until upstart continues
 * the process, then forget $UPSTART_JOB (children are not upstart's). */
void gb_plat_notify_upstart(void);

#endif
