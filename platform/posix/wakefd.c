/* Generic POSIX wake descriptor: a non-blocking AF_UNIX socketpair. Not a
 * pipe: writing to a pipe whose reader has exited raises SIGPIPE in the
 * signaller (a client application); send() with MSG_NOSIGNAL (POSIX.1-2008)
 * returns EPIPE instead. */
#define _POSIX_C_SOURCE 200809L
#define _DARWIN_C_SOURCE /* when built on macOS: keep _SC_NPROCESSORS_ONLN, SO_NOSIGPIPE visible */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/internal.h"
#include "wakefd.h"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

int gb_wakefd_open(gb_wakefd *w)
{
    if (!w)
        return GB_EINVAL;
    int sv[2];
    w->read_fd = w->write_fd = -1;
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return gb__fail(gb__errno_code(errno), NULL, 0, "wakefd: socketpair: %s", strerror(errno));
    if (gb__fd_set_nonblock_cloexec(sv[0]) != 0 || gb__fd_set_nonblock_cloexec(sv[1]) != 0) {
        int rc = gb__fail(gb__errno_code(errno), NULL, 0, "wakefd: fcntl: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return rc;
    }
    shutdown(sv[0], SHUT_WR); /* one direction only: reader never writes */
#ifdef SO_NOSIGPIPE
    /* BSD/macOS: MSG_NOSIGNAL may be missing or ignored there */
    int one = 1;
    (void)setsockopt(sv[1], SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
    w->read_fd = sv[0];
    w->write_fd = sv[1];
    return 0;
}

int gb_wakefd_signal(int write_fd)
{
    /* send(2) and errno only: async-signal-safe. */
    int saved = errno;
    char one = 1;
    ssize_t n;
    do {
        n = send(write_fd, &one, 1, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    int rc = 0;
    if (n < 0) {
        if (errno == EPIPE || errno == ECONNRESET)
            rc = GB_ECLOSED;
        else if (errno != EAGAIN && errno != EWOULDBLOCK) /* full: a wake-up is pending */
            rc = errno == EBADF || errno == ENOTSOCK ? GB_EINVAL : GB_ESYS;
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
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return any;
        if (n == 0)
            return any; /* every writer closed: nothing more will come */
        return gb__fail(gb__errno_code(errno), NULL, 0, "wakefd drain: %s", strerror(errno));
    }
    return any;
}
