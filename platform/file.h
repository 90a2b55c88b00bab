/*
 * File durability, for the snapshot and the append-only log
 * (engine/persist): what "it is on disk" takes on each OS.
 */
#ifndef GB_PLATFORM_FILE_H
#define GB_PLATFORM_FILE_H

#include <stddef.h>

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
