/* macOS wake descriptor: a non-blocking pipe (kqueue/libuv watch it like any
 * fd). F_SETNOSIGPIPE on the write end turns "reader gone" into EPIPE
 * instead of a SIGPIPE that would kill the signalling client. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "wakefd.h"

int gb_wakefd_open(gb_wakefd *w)
{
    if (!w)
        return GB_EINVAL;
    int p[2];
    w->read_fd = w->write_fd = -1;
    if (pipe(p) != 0)
        return gb__fail(gb__errno_code(errno), NULL, 0, "wakefd: pipe: %s", strerror(errno));
    if (gb__fd_set_nonblock_cloexec(p[0]) != 0 || gb__fd_set_nonblock_cloexec(p[1]) != 0) {
        int rc = gb__fail(gb__errno_code(errno), NULL, 0, "wakefd: fcntl: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        return rc;
    }
#ifdef F_SETNOSIGPIPE
    (void)fcntl(p[1], F_SETNOSIGPIPE, 1);
#endif
    w->read_fd = p[0];
    w->write_fd = p[1];
    return 0;
}

int gb_wakefd_signal(int write_fd)
{
    /* write(2) and errno only: async-signal-safe. */
    int saved = errno;
    char one = 1;
    ssize_t n;
    do {
        n = write(write_fd, &one, 1);
    } while (n < 0 && errno == EINTR);
    int rc = 0;
    if (n < 0) {
        if (errno == EPIPE)
            rc = GB_ECLOSED;
        else if (errno != EAGAIN) /* pipe full: a wake-up is already pending */
            rc = errno == EBADF ? GB_EINVAL : GB_ESYS;
    }
    errno = saved;
    return rc;
}

int gb_wakefd_drain(int read_fd)
{
    char buf[4096];
    int any = 0;
    /* At most 16 reads (64 KiB, a default pipe's whole buffer): the writer may be another process that keeps
     * writing, and a drain that waited for EAGAIN would then never end.
     * What is left keeps the descriptor readable: the caller's loop comes
     * back (level-triggered). */
    for (int reads = 0; reads < 16; reads++) {
        ssize_t n = read(read_fd, buf, sizeof buf);
        if (n > 0) {
            any = 1;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || (n < 0 && errno == EAGAIN))
            return any;
        return gb__fail(gb__errno_code(errno), NULL, 0, "wakefd drain: %s", strerror(errno));
    }
    return any;
}
