/*
 * Keys to snapshot records and back (the record layouts are in
 * engine/persist/snapfmt.h).
 */
#ifndef GB_ENGINE_PERSIST_SERIALIZE_H
#define GB_ENGINE_PERSIST_SERIALIZE_H

#include "engine/core/engine.h"
#include "engine/core/replication/repl.h"
#include "engine/persist/snapread.h"
#include "engine/persist/snapwrite.h"

/* One KEY record: kv's type, expiry, key and value as it is now. */
void gb_snap_write_key(gb_snap_writer *w, const gb_kv *kv);

/* The records every snapshot starts with: AUX (version, creation time,
 * the replication history) and each database's key count (the loader
 * sizes its table once). */
void gb_snap_write_header_records(gb_snap_writer *w, gb_engine *eng);

/* What a load read. */
typedef struct gb_snap_load_stats {
    uint64_t keys;         /* loaded */
    uint64_t expired;      /* records skipped: already expired */
    gb_repl_saved_history history; /* the repl-* aux fields, if the file has them */
} gb_snap_load_stats;

/* Loads every record of r into eng's databases, which must not hold the
 * keys it names (a key twice is a failed check). Keys already expired
 * at eng->now_ms are skipped unless eng->loading (the log replays what
 * happened to them). progress, when not NULL, is called every few MB.
 * Returns true, or false with the reason in gb_snap_reader_error(r); the
 * caller decides what a half-loaded dataset means (start-up: stop). */
bool gb_snap_load(gb_engine *eng, gb_snap_reader *r, gb_snap_load_stats *st,
                  void (*progress)(void *ctx, const gb_snap_reader *r, const gb_snap_load_stats *st), void *pctx);

#endif
