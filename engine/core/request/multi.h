/*
 * Transactions: MULTI/EXEC/DISCARD queueing and WATCH's optimistic locking.
 *
 * Each database keeps a registry key -> clients watching it. Any change to a
 * key (gb_engine_key_modified) marks those clients DIRTY_CAS, and their EXEC
 * answers a null array instead of running the queue.
 */
#ifndef GB_ENGINE_MULTI_H
#define GB_ENGINE_MULTI_H

#include "engine/core/request/client.h"
#include "engine/core/keyspace/db.h"

void gb_multi_db_init(gb_db *db);
void gb_multi_db_destroy(gb_db *db);

void gb_multi_touch_key(gb_db *db, gb_slice key);
/* Marks WATCHers of keys of `emptied` that exist in it, or in
 * `replaced_with` (SWAPDB; NULL for FLUSHDB), before the change happens. */
void gb_multi_touch_swap(gb_db *emptied, gb_db *replaced_with);

struct gb_command;
/* WATCH of one key in the client's database (no-op if already watched). */
void gb_multi_watch_key(gb_client *c, gb_slice key);
/* Queues cmd, admitted with flags (its script's for a script runner),
 * and answers QUEUED; a doomed transaction keeps nothing (Redis's
 * queueMultiCommand). */
void gb_multi_queue(gb_client *c, struct gb_command *cmd, uint32_t flags, int argc, gb_slice *argv);
void gb_multi_discard(gb_client *c);
void gb_multi_unwatch_all(gb_client *c);
/* EXEC's handler (the engine recognises EXEC by it when rejecting). */
void gb_multi_exec_proc(gb_client *c, int argc, gb_slice *argv);

#endif
