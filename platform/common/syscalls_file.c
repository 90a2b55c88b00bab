/* The defaults of the syscall table's file entries: libc's calls, the same
 * on every POSIX system (file_sync, which is not, lives in <os>/file.c). */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "common/internal.h"

int gb__sys_file_open(const char *path, int flags, mode_t mode) { return open(path, flags, mode); }

int gb__sys_file_close(int fd) { return close(fd); }

ssize_t gb__sys_file_read(int fd, void *buf, size_t n) { return read(fd, buf, n); }

ssize_t gb__sys_file_pread(int fd, void *buf, size_t n, off_t offset) { return pread(fd, buf, n, offset); }

ssize_t gb__sys_file_write(int fd, const void *buf, size_t n) { return write(fd, buf, n); }

int gb__sys_file_fsync(int fd) { return fsync(fd); }

int gb__sys_file_rename(const char *from, const char *to) { return rename(from, to); }

int gb__sys_file_unlink(const char *path) { return unlink(path); }
