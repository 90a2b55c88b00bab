/* Linux wake descriptor: one eventfd. Its 64-bit counter coalesces any
 * number of signals into one readable event; read_fd == write_fd. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/internal.h"
#include "wakefd.h"

int gb_wakefd_open(gb_wakefd *w)
{
    if (!w)
        return GB_EINVAL;
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) {
        w->read_fd = w->write_fd = -1;
        return gb__fail(gb__errno_code(errno), NULL, 0, "eventfd: %s", strerror(errno));
    }
    w->read_fd = w->write_fd = fd;
    return 0;
}

int gb_wakefd_signal(int write_fd)
{
    /* Only write(2) and errno here: async-signal-safe. No gb__fail (it
     * formats into thread-local storage). */
    int saved = errno;
    uint64_t one = 1;
    ssize_t n;
    do {
        n = write(write_fd, &one, sizeof one);
    } while (n < 0 && errno == EINTR);
    int rc = 0;
    if (n < 0 && errno != EAGAIN) /* EAGAIN: counter saturated, already signalled */
        rc = errno == EBADF ? GB_EINVAL : GB_ESYS;
    errno = saved;
    return rc;
}

int gb_wakefd_drain(int read_fd)
{
    uint64_t v;
    ssize_t n;
    do {
        n = read(read_fd, &v, sizeof v);
    } while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof v)
        return 1;
    if (n < 0 && errno == EAGAIN)
        return 0;
    return gb__fail(n < 0 ? gb__errno_code(errno) : GB_EIO, NULL, 0, "wakefd drain: %s",
                    n < 0 ? strerror(errno) : "short read");
}
