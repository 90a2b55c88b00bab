/*
 * The file operations persistence is built from, each with its error in
 * errno: write everything or fail, sync, and replace a file atomically and
 * durably (rename, then sync the directory so the rename survives a crash).
 */
#ifndef GB_ENGINE_PERSIST_FILEIO_H
#define GB_ENGINE_PERSIST_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* write(2) until all n bytes are written (EINTR retried). 0 or -1. */
int gb_write_all(int fd, const void *p, size_t n);
/* read(2) until n bytes or end of file. Bytes read, or -1. */
ssize_t gb_read_full(int fd, void *p, size_t n);
/* The platform's data sync (platform/file.h). 0 or -1. */
int gb_file_sync_fd(int fd);
/* rename(tmp, path), then sync path's directory. 0 or -1. */
int gb_rename_durably(const char *tmp, const char *path);
/* Syncs the directory holding path (after creating or removing it). */
int gb_sync_parent_dir(const char *path);
/* Removes the files of dir whose names start with prefix, except those
 * keep() says to keep (keep may be NULL). Returns how many it removed;
 * what it removes is logged by the caller's choice of prefix. */
int gb_remove_prefixed(const char *dir, const char *prefix, bool (*keep)(void *ctx, const char *name), void *ctx);

/* dir + "/" + name into out (cap bytes); false if it does not fit. */
int gb_path_join(char *out, size_t cap, const char *dir, const char *name);

#endif
