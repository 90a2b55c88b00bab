/*
 * A snapshot of the whole dataset at one moment, taken without fork.
 *
 * The engine is single-threaded, so a snapshot is serialised in slices
 * between commands, scanning each database's table with a cursor. It is of
 * the moment it began because of copy-on-write by key (gb_cow,
 * engine/core/keyspace/db.h): before a command changes or deletes a key the scan has
 * not reached, the key's value as it still is gets serialised first; keys
 * created after the beginning are born marked as saved. So each key present
 * at the beginning is written exactly once, with its value of that moment,
 * and no key created later is written. A write to a large unsaved key pays
 * for serialising it first (once); FLUSHDB/FLUSHALL/SWAPDB during a
 * snapshot serialise what is left of the databases they touch first.
 *
 * Memory: no copy of the dataset, only the blocks on their way to the
 * writer thread (engine/persist/snapwrite.h).
 */
#ifndef GB_ENGINE_PERSIST_SNAPSHOT_H
#define GB_ENGINE_PERSIST_SNAPSHOT_H

#include "engine/core/engine.h"

typedef struct gb_snapshot gb_snapshot;

/* Begins a snapshot into path (level: zstd level, 0 = none). background:
 * stepped between event batches (BGSAVE, a log rewrite), not run to its
 * end (SAVE); where its writer thread would share the engine's CPU, the
 * steps then also compress and write (snapwrite.c explains). NULL with
 * err set when the file cannot be started. One background snapshot at a
 * time per engine (it holds the copy-on-write); a foreground one, which
 * walks the tables while the engine waits, may run beside it, into
 * another path. */
gb_snapshot *gb_snapshot_begin(gb_engine *eng, const char *path, int level, bool background, char *err,
                               size_t errlen);

/* Serialises (and where the engine compresses, compresses and writes)
 * until deadline_ns (monotonic) or the end. Returns true once the engine's
 * part is done (the file is then being finished by the writer: poll it);
 * false while work remains or after a write error (poll says). */
bool gb_snapshot_step(gb_snapshot *s, uint64_t deadline_ns);

/* 1 done (file in place), -1 failed (err), 0 still working. */
int gb_snapshot_poll(gb_snapshot *s, char *err, size_t errlen);

/* Runs a whole snapshot to its end (SAVE, shutdown): 1 or -1 as poll. */
int gb_snapshot_run(gb_snapshot *s, char *err, size_t errlen);

/* Whether the scan is paused until the writer thread has caught up (its
 * backlog is full): stepping again before that does nothing. */
bool gb_snapshot_waiting(gb_snapshot *s);

/* Whether the engine's steps compress and write the blocks (a background
 * save with no CPU for its writer thread). */
bool gb_snapshot_engine_compresses(const gb_snapshot *s);

/* Keys serialised so far, stream bytes so far. */
uint64_t gb_snapshot_keys(const gb_snapshot *s);
uint64_t gb_snapshot_bytes(const gb_snapshot *s);
/* The most blocks that waited for the writer at once (bounded by
 * GB_SNAP_WRITER_MAX_BACKLOG, plus the one that reached it). */
size_t gb_snapshot_peak_backlog(const gb_snapshot *s);
/* How many times its writer thread had to leave the idle class, and when
 * it first did (gb_snap_writer_raises). */
unsigned gb_snapshot_writer_raises(const gb_snapshot *s, uint64_t *first_after_ns);

/* Ends the snapshot's hold on the engine and frees it; an unfinished one is
 * abandoned (its temporary file removed, the previous file intact). */
void gb_snapshot_free(gb_snapshot *s);

#endif
