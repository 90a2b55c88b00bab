/*
 * The append-only log's manifest (engine/persist/aof.h): which files make
 * the dataset, in order. One line per file, Redis 7's syntax:
 *
 *   file <name> seq <n> type <b|i>
 *
 * b is the base (a snapshot file), i an incremental file of RESP commands;
 * a base, if any, comes first. Names are plain file names inside the log's
 * directory (no '/', no leading '.'); anything else in a manifest is
 * refused with the line number and the reason.
 */
#ifndef GB_ENGINE_PERSIST_MANIFEST_H
#define GB_ENGINE_PERSIST_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GB_MANIFEST_NAME_MAX 255
#define GB_MANIFEST_FILES_MAX 4096

typedef struct gb_manifest_file {
    char name[GB_MANIFEST_NAME_MAX + 1];
    int64_t seq;
    char type; /* 'b' or 'i' */
} gb_manifest_file;

typedef struct gb_manifest {
    gb_manifest_file *files; /* base first */
    size_t n, cap;
} gb_manifest;

void gb_manifest_init(gb_manifest *m);
void gb_manifest_free(gb_manifest *m);
void gb_manifest_add(gb_manifest *m, const char *name, int64_t seq, char type);
/* The highest sequence number named (0 when empty). */
int64_t gb_manifest_max_seq(const gb_manifest *m);

/* Reads path. GB_ENOENT when it does not exist; 0; or GB_EPARSE with
 * "'<path>' line <n>: <reason>" in err. */
int gb_manifest_read(gb_manifest *m, const char *path, char *err, size_t errlen);
/* Replaces path atomically and durably. 0 or -1 with err. */
int gb_manifest_write(const gb_manifest *m, const char *path, char *err, size_t errlen);

#endif
