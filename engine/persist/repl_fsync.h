/*
 * A replica's full sync made in the background (issue 29): the RDB of the
 * moment the sync starts, produced by the fork-less snapshot's
 * copy-on-write scan (engine/persist/cow_scan.h) a slice at a time between
 * event batches, and sent to the replicas' sockets as it is made, while
 * the engine keeps serving; the stream of the writes meanwhile is held for
 * each replica and follows the RDB (engine/core/replication/repl.c).
 *
 * As Redis 7.0 does it:
 *   - repl-diskless-sync yes (the default), every waiting replica able to
 *     take it (REPLCONF capa eof): `$EOF:<40 random characters>\r\n`, the
 *     RDB, the same 40 characters. The scan starts once the first replica
 *     has waited repl-diskless-sync-delay seconds, or at once when
 *     repl-diskless-sync-max-replicas (non-zero) are waiting; every
 *     replica waiting then shares it, one arriving later waits for the next.
 *   - otherwise (repl-diskless-sync no, or a replica without capa eof:
 *     SYNC, an old one): the RDB goes to a temporary file in `dir` first,
 *     then `$<length>\r\n` and the file, at once, without the delay.
 *   - a BGSAVE or log rewrite that holds the scan is waited for; SAVE and
 *     BGSAVE asked meanwhile are refused as Redis refuses them while its
 *     replication child saves, the save policy and BGREWRITEAOF wait
 *     (engine/persist/persist.c).
 *
 * Memory: no copy of the dataset, only the bytes not yet taken by the
 * slowest replica's socket, kept below a window (FLOW_WINDOW) by pausing
 * the scan, plus the one key being written (copy-on-write may add a key
 * a command is about to change). A transfer whose replicas are all gone
 * is abandoned at once.
 */
#ifndef GB_ENGINE_PERSIST_REPL_FSYNC_H
#define GB_ENGINE_PERSIST_REPL_FSYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/core/engine.h"

typedef struct gb_fullsync gb_fullsync;

gb_fullsync *gb_fullsync_new(gb_engine *eng);
void gb_fullsync_free(gb_fullsync *f);

/* Whether a transfer is in progress (its scan may hold the engine's
 * copy-on-write). */
bool gb_fullsync_active(const gb_fullsync *f);

/* What INFO persistence shows of the transfers, where Redis counts a
 * sync's RDB child as a background save (rdb_bgsave_in_progress,
 * rdb_last_bgsave_time_sec, rdb_current_bgsave_time_sec; not rdb_saves). */
typedef struct gb_fullsync_stats {
    int64_t current_secs; /* how long the scan making an RDB has run; -1: none now */
    int64_t last_secs;    /* how long the last scan took; -1: none yet */
    int64_t last_end_ms;  /* when it ended (the engine's clock); 0: none yet */
} gb_fullsync_stats;
gb_fullsync_stats gb_fullsync_stats_of(const gb_fullsync *f);

/* The cron tick: starts a transfer when one is due. */
void gb_fullsync_cron(gb_fullsync *f);
/* Between event batches: a slice of the transfer (starting it when due). */
gb_bg_state gb_fullsync_step(gb_fullsync *f);

#endif
