/* The parts of platform/wakefd.h that are the same everywhere: closing
 * (one descriptor on Linux, two elsewhere), and the descriptor flags the
 * darwin pipe and the POSIX socketpair both set. */
#include <fcntl.h>
#include <unistd.h>

#include "common/internal.h"
#include "wakefd.h"

int gb__fd_set_nonblock_cloexec(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    int fdfl = fcntl(fd, F_GETFD);
    if (fl < 0 || fdfl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, fdfl | FD_CLOEXEC) < 0)
        return -1;
    return 0;
}

void gb_wakefd_close(gb_wakefd *w)
{
    if (!w)
        return;
    if (w->read_fd >= 0)
        close(w->read_fd);
    if (w->write_fd >= 0 && w->write_fd != w->read_fd)
        close(w->write_fd);
    w->read_fd = w->write_fd = -1;
}
