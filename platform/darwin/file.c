/* macOS: fsync reaches the drive but not past its cache; F_FULLFSYNC asks
 * the drive to flush. File systems that refuse it (network, some external
 * disks) get fsync. */
#define _DARWIN_C_SOURCE
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/internal.h"

int gb__sys_file_sync(int fd)
{
    if (fcntl(fd, F_FULLFSYNC) == 0)
        return 0;
    return fsync(fd);
}
