/* Syncing a directory, mapping a file and the table's file calls are the
 * same everywhere (the OS's own data sync is <os>/file.c's
 * gb__sys_file_sync, reached through the table). */
#define _POSIX_C_SOURCE 200809L
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/internal.h"

int gb_plat_open(const char *path, int flags, int mode) { return gb__sys.file_open(path, flags, (mode_t)mode); }

int gb_plat_close(int fd) { return gb__sys.file_close(fd); }

ssize_t gb_plat_read(int fd, void *buf, size_t n) { return gb__sys.file_read(fd, buf, n); }

ssize_t gb_plat_pread(int fd, void *buf, size_t n, int64_t offset)
{
    return gb__sys.file_pread(fd, buf, n, (off_t)offset);
}

ssize_t gb_plat_write(int fd, const void *buf, size_t n) { return gb__sys.file_write(fd, buf, n); }

int gb_plat_ftruncate(int fd, int64_t len) { return gb__sys.ftruncate(fd, (off_t)len); }

int gb_plat_rename(const char *from, const char *to) { return gb__sys.file_rename(from, to); }

int gb_plat_unlink(const char *path) { return gb__sys.file_unlink(path); }

int gb_plat_file_sync(int fd) { return gb__sys.file_sync(fd) == 0 ? 0 : gb__errno_code(errno); }

int gb_plat_dir_sync(const char *path)
{
    int fd = gb__sys.file_open(path, O_RDONLY, 0);
    if (fd < 0)
        return gb__errno_code(errno);
    int rc = gb__sys.file_fsync(fd) == 0 ? 0 : gb__errno_code(errno);
    int e = errno;
    gb__sys.file_close(fd);
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
