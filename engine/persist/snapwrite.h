/*
 * Writing a snapshot file (engine/persist/snapfmt.h): the engine thread
 * appends records to the current block; full blocks go to a writer thread
 * that compresses (zstd), checksums and writes them, so serialising and
 * compressing overlap. A background save with no CPU for that thread
 * compresses and writes on the engine thread instead, a piece at a time
 * (gb_snap_writer_pump), and the thread only finishes the file. The file
 * is written under a temporary name, synced, renamed over the target and
 * the directory synced: a crash at any point leaves the previous file
 * intact.
 *
 * Block buffers are allocated with the system allocator, not gb_malloc:
 * the writer thread may free them (where it writes them), and the
 * engine's byte counter is not atomic. They are bounded by the backlog the caller keeps
 * (gb_snap_writer_backlog).
 */
#ifndef GB_ENGINE_PERSIST_SNAPWRITE_H
#define GB_ENGINE_PERSIST_SNAPWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/cpu.h"

typedef struct gb_snap_writer gb_snap_writer;

/* Starts writing path (through path + ".tmp-<pid>"). level: the zstd level,
 * or 0 to store blocks uncompressed. engine_compresses: the calling
 * (engine) thread compresses and writes the blocks itself, a piece per
 * gb_snap_writer_pump, and the thread only finishes the file; for a
 * background save whose thread would share the engine's CPU
 * (snapwrite.c explains). Returns NULL with a message in err (the
 * directory or file cannot be created). */
gb_snap_writer *gb_snap_writer_open(const char *path, int level, int64_t created_ms, const gb_cpuset *cpus,
                                    bool engine_compresses, char *err, size_t errlen);
bool gb_snap_writer_engine_compresses(const gb_snap_writer *w);
/* Where the engine compresses: one piece of work on the queued blocks
 * (compress a piece of one, or write a piece of it; after a write error,
 * drop a block), sized to take about budget_ns (4 KB of input at least).
 * False when no block is queued. */
bool gb_snap_writer_pump(gb_snap_writer *w, uint64_t budget_ns);

/* Record bytes, appended to the stream. */
void gb_snap_put(gb_snap_writer *w, const void *p, size_t n);
void gb_snap_put_u8(gb_snap_writer *w, uint8_t v);
void gb_snap_put_varint(gb_snap_writer *w, uint64_t v);
void gb_snap_put_svarint(gb_snap_writer *w, int64_t v);
void gb_snap_put_str(gb_snap_writer *w, const void *p, size_t n);
void gb_snap_put_u64(gb_snap_writer *w, uint64_t v);
void gb_snap_put_f64(gb_snap_writer *w, double v);

/* Bytes of the stream so far (INFO, progress). */
uint64_t gb_snap_writer_bytes(const gb_snap_writer *w);
/* Full blocks waiting for the writer thread (or the engine's pump). */
size_t gb_snap_writer_backlog(gb_snap_writer *w);
/* Blocks the calling thread until the backlog is below `below` (or the
 * writer has failed: false). What a foreground save does when it is ahead:
 * sleeping on the writer's progress, not polling it, so a writer that
 * shares the CPU is not interrupted by wake-ups (but for one every 10 ms,
 * to raise a starved writer: snapwrite.c, WRITER_STARVED_NS). */
bool gb_snap_writer_wait_backlog(gb_snap_writer *w, size_t below);
/* Whether the writer thread went into the idle class (the OS allowed it,
 * with a way back: gb_thread_lower_to_idle). */
bool gb_snap_writer_went_idle(gb_snap_writer *w);
/* How many times the writer thread, after going without the CPU in the
 * idle class, was raised to the low-priority one until it caught up
 * (snapwrite.c, WRITER_STARVED_NS); first_after_ns (may be NULL): when
 * the first raise came, nanoseconds after the open. */
unsigned gb_snap_writer_raises(gb_snap_writer *w, uint64_t *first_after_ns);
/* The largest backlog there has been. */
size_t gb_snap_writer_peak_backlog(gb_snap_writer *w);
/* The backlog a caller lets build up before it waits for the writer (the
 * snapshot's memory bound, in blocks of GB_SNAP_BLOCK_MAX bytes). */
#define GB_SNAP_WRITER_MAX_BACKLOG 16u

/* Ends the stream (the caller wrote its EOF record): the last block, the
 * trailer; the thread syncs, renames and syncs the directory. Does not
 * wait: poll gb_snap_writer_poll. keys goes into the trailer. */
void gb_snap_writer_close(gb_snap_writer *w, uint64_t keys);

/* 1 when the file is complete and in place, -1 when writing failed (the
 * reason in err; the temporary file removed, the previous file intact), 0
 * while the thread works. Frees nothing. */
int gb_snap_writer_poll(gb_snap_writer *w, char *err, size_t errlen);
/* Waits for the outcome gb_snap_writer_poll would give. */
int gb_snap_writer_wait(gb_snap_writer *w, char *err, size_t errlen);

/* Whether writing already failed (a disk error): the caller may stop
 * serialising. */
bool gb_snap_writer_failed(gb_snap_writer *w);

/* Stops and removes the temporary file (an abandoned save), then frees
 * the writer; or frees a writer whose outcome was polled. */
void gb_snap_writer_free(gb_snap_writer *w);

#endif
