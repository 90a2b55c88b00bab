/* Syncing a directory and mapping a file are the same calls everywhere. */
#define _POSIX_C_SOURCE 200809L
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

int gb_plat_file_map_open(const char *path, gb_plat_file_map *m)
{
    m->ptr = NULL;
    m->len = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return gb__errno_code(errno);
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        rc = gb__errno_code(errno);
    } else if (st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            rc = gb__errno_code(errno);
        } else {
            m->ptr = p;
            m->len = (size_t)st.st_size;
        }
    }
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

void gb_plat_file_map_close(gb_plat_file_map *m)
{
    if (m->ptr)
        munmap((void *)m->ptr, m->len);
    m->ptr = NULL;
    m->len = 0;
}
