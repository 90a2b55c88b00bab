/* Linux: fdatasync writes the data and the metadata needed to read it back
 * (the size), without the timestamps fsync also writes. */
#define _POSIX_C_SOURCE 200809L
#include "file.h"

#include <errno.h>
#include <unistd.h>

#include "common/internal.h"

int gb__sys_file_sync(int fd) { return fdatasync(fd); }
