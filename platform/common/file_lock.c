/* flock, in a file of its own: file_common.c asks for strict POSIX, which
 * hides flock on macOS (and glibc); flock is on every system Goblin runs
 * on, with the same meaning. */
#define _DEFAULT_SOURCE
#include "file.h"

#include <errno.h>
#include <sys/file.h>

#include "common/internal.h"

int gb_plat_file_try_lock(int fd)
{
    int rc;
    do
        rc = flock(fd, LOCK_EX | LOCK_NB);
    while (rc != 0 && errno == EINTR);
    if (rc == 0)
        return 0;
    return errno == EWOULDBLOCK || errno == EAGAIN ? GB_EBUSY : gb__errno_code(errno);
}
