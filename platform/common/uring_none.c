/* uring.h where this build has no io_uring (darwin, posix, or Linux built
 * without liburing: GOBLIN_IO_URING off). gb_uring_open says why; callers
 * keep their portable path, so the rest is never reached. Picked by
 * platform/CMakeLists.txt instead of <os>/uring.c. */
#include <errno.h>
#include <stdio.h>

#include "uring.h"

gb_uring *gb_uring_open(unsigned depth, unsigned nbufs, unsigned bufsize, char *why, size_t whylen)
{
    (void)depth, (void)nbufs, (void)bufsize;
    snprintf(why, whylen, "io_uring is not part of this build (Linux with liburing only)");
    return NULL;
}

void gb_uring_close(gb_uring *u) { (void)u; }

int gb_uring_fd(const gb_uring *u)
{
    (void)u;
    return -1;
}

int gb_uring_recv(gb_uring *u, int fd, uint64_t tag)
{
    (void)u, (void)fd, (void)tag;
    return -ENOSYS;
}

int gb_uring_send(gb_uring *u, int fd, const void *data, size_t len, uint64_t tag)
{
    (void)u, (void)fd, (void)data, (void)len, (void)tag;
    return -ENOSYS;
}

int gb_uring_cancel_fd(gb_uring *u, int fd)
{
    (void)u, (void)fd;
    return -ENOSYS;
}

int gb_uring_submit(gb_uring *u)
{
    (void)u;
    return -ENOSYS;
}

unsigned gb_uring_queued(const gb_uring *u)
{
    (void)u;
    return 0;
}

int gb_uring_wait(gb_uring *u, unsigned ms)
{
    (void)u, (void)ms;
    return -ENOSYS;
}

size_t gb_uring_reap(gb_uring *u, gb_uring_handler handler, void *ctx)
{
    (void)u, (void)handler, (void)ctx;
    return 0;
}
