/*
 * The copy-on-write scan behind every fork-less snapshot (engine/core/keyspace/db.h,
 * gb_cow): it visits each key present when it began exactly once, with the
 * value of that moment, handing it to an emitter. The snapshot file
 * (engine/persist/snapshot.c) and a replica's full sync
 * (engine/persist/repl_fsync.c) are two emitters of the same scan.
 *
 * The scan runs in slices (gb_cow_scan_some) between commands; a command
 * about to change or delete a key not reached yet has it emitted first
 * (copy-on-write), FLUSHDB/FLUSHALL hand their table to the scan, SWAPDB
 * has what is left of both databases emitted first. One scan at a time per
 * engine (eng->cow).
 */
#ifndef GB_ENGINE_PERSIST_COW_SCAN_H
#define GB_ENGINE_PERSIST_COW_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/core/keyspace/db.h"
#include "engine/core/engine.h"

typedef struct gb_cow_scan gb_cow_scan;

/* Called once per key of the moment the scan began (db: its database). */
typedef void (*gb_cow_emit)(void *ctx, gb_db *db, gb_kv *kv);

/* Begins the scan: from here every key present is pending. NULL when
 * another scan holds the engine (eng->cow.active). */
gb_cow_scan *gb_cow_scan_begin(gb_engine *eng, gb_cow_emit emit, void *ctx);

/* The next 64 buckets (a bucket holds a key or two). True once nothing is
 * pending any more: copy-on-write has stopped, the scan is done. */
bool gb_cow_scan_some(gb_cow_scan *s);

bool gb_cow_scan_done(const gb_cow_scan *s);
/* Keys emitted so far. */
uint64_t gb_cow_scan_keys(const gb_cow_scan *s);

/* Stops an unfinished scan (every key left is marked as saved, so the next
 * scan starts clean; the tables flushes handed over are freed) and frees
 * it; or frees a finished one. */
void gb_cow_scan_free(gb_cow_scan *s);

#endif
