/* service.h for every POSIX variant: the crash report and the service
 * managers' readiness protocols. */
#define _GNU_SOURCE /* SA_ONSTACK, sigaltstack, si_addr with glibc's feature macros */
#define _DARWIN_C_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<execinfo.h>)
#include <execinfo.h>
#define GB_HAVE_BACKTRACE 1
#endif
#endif

#include "common/internal.h"
#include "service.h"

/* ---- the crash report -------------------------------------------------------------- */

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NSIGNALS (sizeof crash_signals / sizeof crash_signals[0])

static volatile int report_fd = -1;
static const char *volatile report_title = "";
static struct sigaction previous[NSIGNALS];
static bool installed;
static char *alt_stack;
static volatile bool memtest_on;

/* write(2) of a whole string; a signal handler can do nothing safer. */
static void put(const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(report_fd, s, n);
        if (w <= 0) {
            if (w < 0 && errno == EINTR)
                continue;
            return;
        }
        s += w;
        n -= (size_t)w;
    }
}

/* Unsigned numbers without stdio (not async-signal-safe). */
static void put_number(unsigned long long v, unsigned base)
{
    char buf[32];
    int i = (int)sizeof buf - 1;
    buf[i] = '\0';
    do {
        buf[--i] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v && i > 0);
    if (base == 16)
        put("0x");
    put(buf + i);
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    default: return "?";
    }
}

static void on_crash(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    int saved_errno = errno;
    put("\n\n=== GOBLIN CORE BUG REPORT START: Cut & paste starting from here ===\n");
    put(report_title);
    put(" crashed by signal: ");
    put_number((unsigned)sig, 10);
    put(" (");
    put(signal_name(sig));
    put("), si_code: ");
    put_number((unsigned)(info ? info->si_code : 0), 10);
    put(", pid ");
    put_number((unsigned long long)getpid(), 10);
    put("\n");
    if (info && info->si_code > 0 && sig != SIGABRT) { /* raised by the fault itself */
        put("Accessing address: ");
        put_number((unsigned long long)(uintptr_t)info->si_addr, 16);
        put("\n");
    } else if (info && info->si_code == SI_USER) { /* kill(2) from another process */
        put("Killed by PID: ");
        put_number((unsigned long long)info->si_pid, 10);
        put(", UID: ");
        put_number((unsigned long long)info->si_uid, 10);
        put("\n");
    }
    put("\n------ STACK TRACE ------\n");
#ifdef GB_HAVE_BACKTRACE
    void *frames[64];
    int n = backtrace(frames, 64);
    backtrace_symbols_fd(frames, n, report_fd);
#else
    put("(no stack trace: this C library has no <execinfo.h>)\n");
#endif
    if (memtest_on) {
        put("\n------ FAST MEMORY TEST ------\n");
        int errors = gb__memtest_process(report_fd);
        if (errors > 0)
            put("!!! MEMORY ERROR DETECTED! Check your memory ASAP !!!\n");
        else if (errors == 0)
            put("Fast memory test PASSED, however your memory can still be broken. Please run a memory test for "
                "several hours if possible.\n");
    }
    put("\n=== GOBLIN CORE BUG REPORT END. Make sure to include from START to END. ===\n\n"
        "       Please report the crash by opening an issue with the report above, the\n"
        "       configuration and, if you can, the steps that lead to it.\n\n");
    /* The previous handler takes the signal: restored, then the signal
     * again (a fault re-faults when this returns; a sent one is re-sent). */
    for (size_t i = 0; i < NSIGNALS; i++)
        if (crash_signals[i] == sig)
            sigaction(sig, &previous[i], NULL);
    if (!info || info->si_code <= 0 || sig == SIGABRT)
        raise(sig);
    errno = saved_errno;
}

int gb_plat_crash_report_install(int fd, const char *title)
{
    report_fd = fd;
    report_title = title;
    if (installed)
        return 0;
#ifdef GB_HAVE_BACKTRACE
    /* The first backtrace() may load the unwinder (malloc, dlopen): done
     * now, so the handler's is only a walk. */
    void *warm[4];
    (void)backtrace(warm, 4);
#endif
    if (!alt_stack) {
        size_t size = 64 * 1024;
        alt_stack = malloc(size);
        if (!alt_stack)
            return gb__fail(GB_ENOMEM, NULL, 0, "no memory for the crash handler's stack");
        stack_t ss = {.ss_sp = alt_stack, .ss_size = size, .ss_flags = 0};
        if (sigaltstack(&ss, NULL) != 0)
            return gb__fail(gb__errno_code(errno), NULL, 0, "sigaltstack: %s", strerror(errno));
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sa.sa_sigaction = on_crash;
    for (size_t i = 0; i < NSIGNALS; i++)
        if (sigaction(crash_signals[i], &sa, &previous[i]) != 0)
            return gb__fail(gb__errno_code(errno), NULL, 0, "sigaction: %s", strerror(errno));
    installed = true;
    return 0;
}

int gb_plat_crash_memtest_enable(bool on)
{
    if (on) {
        int rc = gb__memtest_prepare();
        if (rc != 0)
            return rc;
    }
    memtest_on = on;
    return 0;
}

void gb_plat_crash_report_remove(void)
{
    if (!installed)
        return;
    for (size_t i = 0; i < NSIGNALS; i++)
        sigaction(crash_signals[i], &previous[i], NULL);
    installed = false;
}

/* ---- the system logger -------------------------------------------------------------- */

void gb_plat_syslog_open(const char *ident, int facility) { openlog(ident, LOG_PID | LOG_NDELAY | LOG_NOWAIT, facility); }

void gb_plat_syslog_line(int level, const char *line)
{
    static const int priorities[] = {LOG_DEBUG, LOG_INFO, LOG_NOTICE, LOG_WARNING};
    syslog(priorities[level < 0 ? 0 : level > 3 ? 3 : level], "%s", line);
}

/* ---- service managers -------------------------------------------------------------- */

bool gb_plat_systemd_present(void)
{
    const char *s = getenv("NOTIFY_SOCKET");
    return s && s[0];
}

bool gb_plat_upstart_present(void)
{
    const char *s = getenv("UPSTART_JOB");
    return s && s[0];
}

int gb_plat_notify_systemd(const char *message)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !path[0])
        return gb__fail(GB_ENOENT, NULL, 0, "NOTIFY_SOCKET is not set");
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    size_t len = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || len >= sizeof sa.sun_path)
        return gb__fail(GB_EINVAL, NULL, 0, "NOTIFY_SOCKET '%s' is neither a path nor an abstract name", path);
    memcpy(sa.sun_path, path, len);
    if (path[0] == '@')
        sa.sun_path[0] = '\0'; /* Linux's abstract namespace */
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    if (fd < 0)
        return gb__fail(gb__errno_code(errno), NULL, 0, "socket: %s", strerror(errno));
    socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
    ssize_t n = sendto(fd, message, strlen(message), 0, (struct sockaddr *)&sa, salen);
    int e = errno;
    close(fd);
    if (n < 0)
        return gb__fail(gb__errno_code(e), NULL, 0, "sendto %s: %s", path, strerror(e));
    return 0;
}

void gb_plat_notify_upstart(void)
{
    raise(SIGSTOP);
    unsetenv("UPSTART_JOB");
}
