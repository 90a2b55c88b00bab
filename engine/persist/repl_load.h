/*
 * A replica loading a full sync's payload: where the payload goes while it
 * arrives and what happens to the data set it replaces, as Redis 7.0's
 * repl-diskless-load says (src/replication.c, readSyncBulkPayload):
 *
 *   disabled     the payload goes to a temporary file in `dir`; the old data
 *                set is flushed, then the file loaded;
 *   on-empty-db  the payload stays in memory (no disk) when every database
 *                is empty as the sync begins, else as disabled;
 *   swapdb       the payload stays in memory; the old data set (keys and
 *                function libraries) is set aside while it loads, restored
 *                if the load fails and freed in the background once the new
 *                one is in.
 *
 * Redis parses a diskless payload from the socket as it arrives; Goblin
 * holds it (the RDB: compressed values, no per-key overhead) until it is
 * whole, serving the old data meanwhile, then loads it in one go
 * (docs/replication.md, "Loading a full sync").
 */
#ifndef GB_ENGINE_PERSIST_REPL_LOAD_H
#define GB_ENGINE_PERSIST_REPL_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gb_engine;

/* repl-diskless-load's values (the config table's order). */
enum { GB_DISKLESS_LOAD_DISABLED = 0, GB_DISKLESS_LOAD_ON_EMPTY_DB = 1, GB_DISKLESS_LOAD_SWAPDB = 2 };

/* Whether the sync about to begin keeps its payload in memory (Redis's
 * useDisklessLoad), decided once per sync as the payload's header comes. */
bool gb_sync_load_in_memory(const struct gb_engine *eng);

/* The payload, whole: in a file (path) or in memory (buf, len). */
typedef struct gb_sync_payload {
    const char *path;
    const uint8_t *buf;
    size_t len;
} gb_sync_payload;

/* Replaces the data set with the payload, logging each step with Redis's
 * lines. Returns the keys loaded, or -1 (logged) when it does not load:
 * then the data set is empty, or with swapdb the old one again.
 * *stream_db: the database the stream after the payload starts in (its
 * repl-stream-db aux field), -1 when it does not say. */
int64_t gb_sync_load(struct gb_engine *eng, const gb_sync_payload *p, int *stream_db);

#endif
