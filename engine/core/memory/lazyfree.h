/*
 * Lazy freeing: big values leave the keyspace at once and are freed by a
 * background thread, so deleting a million-member set does not stall every
 * other client (UNLINK, FLUSHDB/FLUSHALL ASYNC, and the lazyfree-lazy-*
 * settings that make DEL, expiry, implicit deletions and flushes lazy).
 *
 * Only the freeing moves: the key is gone for every command the moment it
 * is unlinked. Small values are freed at once (handing them over would cost
 * more than freeing them), as Redis decides with its free-effort threshold.
 * The thread frees through gb_free, its bytes counted off-thread
 * (engine/base/mem.h), so INFO used_memory drops as it works.
 */
#ifndef GB_ENGINE_CORE_LAZYFREE_H
#define GB_ENGINE_CORE_LAZYFREE_H

#include "engine/ds/htable.h"
#include "engine/core/keyspace/keyrecord.h"
#include "platform/cpu.h"

struct gb_engine;
typedef struct gb_lazyfree gb_lazyfree;

/* Redis's LAZYFREE_THRESHOLD: values whose freeing touches more allocations
 * than this go to the thread. */
#define GB_LAZYFREE_THRESHOLD 64

/* Starts the freeing thread on cpus (engine/base/helper_thread.h). */
gb_lazyfree *gb_lazyfree_new(const gb_cpuset *cpus);
/* Frees whatever is still queued, then stops the thread. */
void gb_lazyfree_free(gb_lazyfree *lf);

/* Frees kv (already out of its table) now or in the background, by the
 * effort freeing its value takes. */
void gb_lazyfree_kv(struct gb_engine *eng, gb_kv *kv);
/* Frees every record of a table taken whole out of a database (FLUSHDB
 * ASYNC): the table and its volatile array are the thread's now. */
void gb_lazyfree_table(struct gb_engine *eng, gb_htable *table, gb_kv **vol);

/* Objects queued and not yet freed (INFO lazyfree_pending_objects), and
 * freed in the background since start (INFO lazyfreed_objects). */
size_t gb_lazyfree_pending(const gb_lazyfree *lf);
uint64_t gb_lazyfree_done(const gb_lazyfree *lf);
/* CONFIG RESETSTAT: lazyfreed_objects starts again from 0 (Redis's
 * lazyfreeResetStats). */
void gb_lazyfree_reset_stats(gb_lazyfree *lf);

#endif
