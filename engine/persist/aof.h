/*
 * The append-only log, in Redis 7's multi-part layout: a directory
 * (appenddirname inside dir) holding a base file (a snapshot,
 * engine/persist/snapfmt.h), incremental files (every write since, as RESP
 * commands, SELECT where the database changes), and a manifest that names
 * them in order:
 *
 *   file appendonly.aof.2.base.gdb seq 2 type b
 *   file appendonly.aof.3.incr.aof seq 3 type i
 *
 * The manifest is replaced atomically (temporary file, sync, rename, sync
 * the directory), so at every moment the one on disk names a complete
 * chain: base + incrementals = the dataset.
 *
 * Writes reach the log through the command gate's propagation
 * (engine/core/request/propagate.h): RESP, SBE and later scripts alike, in order,
 * transactions wrapped. When they are durable depends on appendfsync:
 *   always    the log is written and synced before any reply that
 *             acknowledges a write leaves (one sync per batch of events
 *             covers every client in it: group commit);
 *   everysec  written after every batch, synced by a background thread
 *             once a second: a crash loses about the last second or two;
 *   no        written after every batch, synced when the OS decides.
 *
 * A rewrite (BGREWRITEAOF, or automatic growth) opens a new incremental
 * file and adds it to the manifest at once, then takes a snapshot of that
 * same moment as the next base (engine/persist/snapshot.h, no fork); once
 * it is complete, the manifest names just the new base and the new
 * incremental file and the old files are removed.
 */
#ifndef GB_ENGINE_PERSIST_AOF_H
#define GB_ENGINE_PERSIST_AOF_H

#include "engine/core/engine.h"

typedef struct gb_aof gb_aof;

gb_aof *gb_aof_new(gb_engine *eng);
void gb_aof_free(gb_aof *a);

/* Start-up: loads the log named by the manifest (base, then incrementals;
 * a torn last command is dropped with a warning when aof-load-truncated).
 * GB_ENOENT when there is no manifest; otherwise 0, or a negative code
 * with the file, offset and reason in err. On success the log stays open
 * for appending. */
int gb_aof_load(gb_aof *a, char *err, size_t errlen);

/* Whether writes are being logged (appendonly on, or being turned on). */
bool gb_aof_on(const gb_aof *a);
/* Whether the log waits for its first base (appendonly just turned on):
 * what it logged since is named by no manifest until that rewrite ends. */
bool gb_aof_waits_for_base(const gb_aof *a);

/* Turns logging on for a running server: writes go to a new incremental
 * file from now; the caller then takes the base snapshot as a rewrite
 * (gb_aof_rewrite_begin). 0 or -1 with err. */
int gb_aof_enable(gb_aof *a, char *err, size_t errlen);
/* Turns logging off (CONFIG SET appendonly no): flushes, syncs, closes. */
void gb_aof_disable(gb_aof *a);

/* A rewrite's first step, at the moment its snapshot begins: a new
 * incremental file takes every write from now, and (when a manifest
 * exists) joins it. Writes the new base's path into base_path. 0 or -1. */
int gb_aof_rewrite_begin(gb_aof *a, char *base_path, size_t cap, char *err, size_t errlen);
/* The rewrite's snapshot finished: on success the manifest becomes the new
 * base plus the incremental file since, and older files are removed. */
void gb_aof_rewrite_end(gb_aof *a, bool ok);

/* Writes what is buffered; with sync (appendfsync always) also syncs
 * before returning. The durability point before replies leave. */
void gb_aof_flush(gb_aof *a, bool sync);
/* Whether writes made since the last flush are not yet durable enough to
 * acknowledge (appendfsync always only). */
bool gb_aof_unsynced(const gb_aof *a);
/* Once per cron tick: everysec syncs, retries after a write error. */
void gb_aof_cron(gb_aof *a);

/* CONFIG RESETSTAT: aof_delayed_fsync from zero. */
void gb_aof_reset_stats(gb_aof *a);

/* Sizes: the log as a whole, and what it was after the last rewrite
 * (auto-aof-rewrite-percentage compares them). */
uint64_t gb_aof_size(const gb_aof *a);
uint64_t gb_aof_base_size(const gb_aof *a);

/* The MISCONF text while the last write failed, or NULL. */
const char *gb_aof_write_refusal(const gb_aof *a);

/* INFO persistence's aof_* fields that depend on the log's state. */
/* Bytes held by commands not yet written (maxmemory leaves them out, as
 * Redis leaves out its aof_buf). */
size_t gb_aof_buffer_bytes(const gb_aof *a);
void gb_aof_info(const gb_aof *a, bool rewrite_pending, void (*line)(void *lctx, const char *text), void *lctx);

#endif
