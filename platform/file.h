/*
 * File durability, for the snapshot and the append-only log
 * (engine/persist): what "it is on disk" takes on each OS.
 */
#ifndef GB_PLATFORM_FILE_H
#define GB_PLATFORM_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The file calls persistence makes, through the syscall table
 * (platform/syscalls.h) so that a test can make any of them fail (ENOSPC
 * from a write, EIO from a sync, a rename refused). Each is its libc call:
 * -1 with errno on failure. mode is used when flags create the file. */
int gb_plat_open(const char *path, int flags, int mode);
int gb_plat_close(int fd);
ssize_t gb_plat_read(int fd, void *buf, size_t n);
ssize_t gb_plat_pread(int fd, void *buf, size_t n, int64_t offset);
ssize_t gb_plat_write(int fd, const void *buf, size_t n);
int gb_plat_ftruncate(int fd, int64_t len);
int gb_plat_rename(const char *from, const char *to);
int gb_plat_unlink(const char *path);

/* Takes an exclusive advisory lock on fd's file without waiting (flock
 * LOCK_EX | LOCK_NB on every POSIX system: it belongs to the open file,
 * held until its last descriptor closes, and a second process is refused
 * it whatever the first does with other descriptors of the same file).
 * 0, GB_EBUSY when another open file holds it, or another negative GB_E*
 * code (errno as the call left it). */
int gb_plat_file_try_lock(int fd);

/* Makes fd's data and size durable. Linux: fdatasync (the size is part of
 * the data it syncs). macOS: fcntl(F_FULLFSYNC), because fsync there only
 * hands the data to the drive, whose cache may lose it on power loss;
 * fsync where F_FULLFSYNC is refused (some file systems). Elsewhere:
 * fsync. Returns 0 or a negative GB_E* code (errno as the call left it). */
int gb_plat_file_sync(int fd);

/* Makes a directory's entries durable (a rename into it, a file created or
 * removed): fsync of the directory itself. Same return convention. */
int gb_plat_dir_sync(const char *path);

/* A whole file mapped read-only (loading a Redis dump.rdb: the parser walks
 * it in place instead of copying it into the heap). The same mmap on every
 * POSIX system. An empty file maps to ptr NULL, len 0. */
typedef struct gb_plat_file_map {
    const void *ptr;
    size_t len;
} gb_plat_file_map;

/* Returns 0, or a negative GB_E* code (GB_ENOENT when path does not
 * exist) with errno as the failing call left it. */
int gb_plat_file_map_open(const char *path, gb_plat_file_map *m);
void gb_plat_file_map_close(gb_plat_file_map *m);

#endif
