/*
 * Reading a snapshot file (engine/persist/snapfmt.h) as a stream of record
 * bytes, checking everything on the way: the header, each block's checksum
 * and sizes before anything is decoded or allocated by them, the chain of
 * blocks and the trailer. A file is hostile input: a failed check stops the
 * read with a message naming the file, the byte offset and the check; no
 * claimed size is trusted for an allocation (a string grows as its bytes
 * actually arrive).
 */
#ifndef GB_ENGINE_PERSIST_SNAPREAD_H
#define GB_ENGINE_PERSIST_SNAPREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/cpu.h"

typedef struct gb_snap_reader gb_snap_reader;

/* Opens path and checks its header. NULL with err set (errno kept for a
 * missing file: ENOENT). */
gb_snap_reader *gb_snap_reader_open(const char *path, char *err, size_t errlen);
void gb_snap_reader_free(gb_snap_reader *r);

/* Decodes blocks ahead of the parser on a helper thread (restricted to
 * cpus: NULL or empty, anywhere), so reading, checksumming and
 * decompressing overlap with building the dataset: what start-up loading
 * does. Checks and messages are the same as without it. false (and the
 * reader keeps working without it) when the thread or its buffers cannot
 * be had. */
bool gb_snap_reader_read_ahead(gb_snap_reader *r, const gb_cpuset *cpus);

/* Stream reads; each returns false after recording why (gb_snap_reader_error). */
bool gb_snap_get(gb_snap_reader *r, void *dst, size_t n);
bool gb_snap_get_u8(gb_snap_reader *r, uint8_t *v);
bool gb_snap_get_varint(gb_snap_reader *r, uint64_t *v);
bool gb_snap_get_svarint(gb_snap_reader *r, int64_t *v);
bool gb_snap_get_u64(gb_snap_reader *r, uint64_t *v);
bool gb_snap_get_f64(gb_snap_reader *r, double *v);

/* A string of the stream into *buf (grown as bytes arrive with gb_realloc,
 * on the engine thread; the caller frees it with gb_free; *cap its
 * capacity), its length in *len. max: a length beyond it is refused as a
 * check failure. */
bool gb_snap_get_str(gb_snap_reader *r, char **buf, size_t *cap, size_t *len, uint64_t max);

/* After the EOF record: the stream must end exactly there, the trailer
 * must follow and agree (blocks, bytes, keys, chain checksum), and nothing
 * may follow it. */
bool gb_snap_reader_finish(gb_snap_reader *r, uint64_t keys);

/* Records a failed check at the current position (the loader's own checks:
 * an unknown record, a duplicate key). Returns false. */
bool gb_snap_reader_fail(gb_snap_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Checks every block and the trailer without decoding the records (the
 * repair tool: checksums cover every byte). true, or false with the
 * reason in gb_snap_reader_error(r). */
bool gb_snap_reader_verify(gb_snap_reader *r);

/* "'<path>' at offset <n>: <check>" for the first failure. */
const char *gb_snap_reader_error(const gb_snap_reader *r);

/* Progress: file bytes read so far, and the file's size. */
uint64_t gb_snap_reader_offset(const gb_snap_reader *r);
uint64_t gb_snap_reader_size(const gb_snap_reader *r);
/* The header's creation time (Unix ms). */
int64_t gb_snap_reader_created(const gb_snap_reader *r);

#endif
