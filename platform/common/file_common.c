/* Syncing a directory is the same call everywhere: open it, fsync it. */
#define _POSIX_C_SOURCE 200809L
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/internal.h"

int gb_plat_dir_sync(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return gb__errno_code(errno);
    int rc = fsync(fd) == 0 ? 0 : gb__errno_code(errno);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}
