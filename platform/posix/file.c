/* Generic POSIX: fsync, the one call the standard promises. */
#define _POSIX_C_SOURCE 200809L
#include "file.h"

#include <errno.h>
#include <unistd.h>

#include "common/internal.h"

int gb__sys_file_sync(int fd) { return fsync(fd); }
