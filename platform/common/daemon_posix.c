/* daemon.h's POSIX part: fork + setsid, and the pid file. */
#define _POSIX_C_SOURCE 200809L
#define _DARWIN_C_SOURCE /* macOS: _SC_PHYS_PAGES beside the POSIX names */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "daemon.h"

int gb_plat_daemonize(char *err, size_t errlen)
{
    pid_t pid = fork();
    if (pid < 0)
        return gb__fail(gb__errno_code(errno), err, errlen, "fork: %s", strerror(errno));
    if (pid > 0)
        _exit(0); /* the parent: the service goes on in the child */
    setsid();
    int fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO)
            close(fd);
    }
    return 0;
}

size_t gb_plat_total_system_memory(void)
{
#ifdef _SC_PHYS_PAGES /* not POSIX: Linux, the BSDs and macOS have it */
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (size_t)pages * (size_t)size : 0;
#else
    return 0;
#endif
}

int gb_plat_write_pidfile(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return gb__fail(gb__errno_code(errno), err, errlen, "%s: %s", path, strerror(errno));
    fprintf(f, "%ld\n", (long)getpid());
    if (fclose(f) != 0)
        return gb__fail(gb__errno_code(errno), err, errlen, "%s: %s", path, strerror(errno));
    return 0;
}
