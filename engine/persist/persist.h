/*
 * Persistence as the server runs it: snapshots (SAVE, BGSAVE, the `save`
 * policy, SHUTDOWN/SIGTERM), the append-only log (engine/persist/aof.h),
 * loading at start-up, INFO persistence and the MISCONF rule. It plugs into
 * the engine as its service (gb_service, engine/core/engine.h): the cron,
 * background slices between event batches, the durability point before
 * replies leave, and shutdown.
 */
#ifndef GB_ENGINE_PERSIST_PERSIST_H
#define GB_ENGINE_PERSIST_PERSIST_H

#include "engine/core/engine.h"

typedef struct gb_persist gb_persist;

/* Installs persistence as eng's service. */
gb_persist *gb_persist_new(gb_engine *eng);
void gb_persist_free(gb_persist *p);
gb_persist *gb_persist_of(gb_engine *eng);

/* Start-up: loads the append-only log (appendonly yes) or else the snapshot
 * file, logging progress. Returns 0 (also when there is nothing to load),
 * or a negative GB_E* code with a message naming the file, the offset and
 * the failed check in err: the server must not start. */
int gb_persist_load(gb_persist *p, char *err, size_t errlen);

/* Loads a Redis dump.rdb at path into the (empty) databases, logging
 * progress: --import-rdb. Same return convention. */
int gb_persist_load_redis_rdb(gb_engine *eng, const char *path, char *err, size_t errlen);

/* SAVE: a snapshot now, in the foreground. 0 or -1 with err. */
int gb_persist_save(gb_persist *p, char *err, size_t errlen);

enum gb_bgsave_result { GB_BGSAVE_STARTED, GB_BGSAVE_SCHEDULED, GB_BGSAVE_BUSY, GB_BGSAVE_ERROR };
/* BGSAVE [SCHEDULE]. in_exec: inside a transaction, which a snapshot must
 * not cut in two: the save is scheduled for after it (Redis's in_exec). */
enum gb_bgsave_result gb_persist_bgsave(gb_persist *p, bool schedule, bool in_exec, char *err, size_t errlen);

enum gb_bgrewrite_result { GB_BGREWRITE_STARTED, GB_BGREWRITE_SCHEDULED, GB_BGREWRITE_BUSY, GB_BGREWRITE_ERROR };
/* BGREWRITEAOF (also with appendonly no, as Redis: a new base only);
 * in_exec as for gb_persist_bgsave (the rest of the transaction would go
 * both into the new base and into the new log). */
enum gb_bgrewrite_result gb_persist_bgrewriteaof(gb_persist *p, bool in_exec, char *err, size_t errlen);

/* A replica's full sync replaced the data set: the log starts again from
 * the new one, a rewrite giving it its base (Redis's restartAOFAfterSYNC).
 * A rewrite already running is of the data set the sync replaced: it is
 * abandoned for a new one; while a BGSAVE runs the rewrite is scheduled.
 * 0 or -1 with err (logged). */
int gb_persist_restart_log_after_sync(gb_persist *p, char *err, size_t errlen);

/* CONFIG SET appendonly: starts the log (a rewrite makes its base) or
 * stops it. 0 or -1 with err. */
int gb_persist_appendonly_changed(gb_persist *p, char *err, size_t errlen);

/* DEBUG LOADAOF: empties the databases and loads the log back. */
int gb_persist_debug_loadaof(gb_persist *p, char *err, size_t errlen);

/* Whether a background snapshot (BGSAVE or a log rewrite) is running. */
bool gb_persist_bg_in_progress(const gb_persist *p);

/* LASTSAVE: Unix seconds of the last successful save. */
int64_t gb_persist_lastsave(const gb_persist *p);

/* DEBUG RELOAD: save (abandoning a background save), empty every
 * database, load the file back. 0, GB_EIO when the save failed, GB_EPARSE
 * when the load did (the databases are then empty). */
int gb_persist_debug_reload(gb_persist *p, char *err, size_t errlen);

/* The MISCONF reason writes are refused for, or NULL. */
const char *gb_persist_write_refusal(const gb_persist *p);

/* How long the next background-save slice may run (ns), given the time
 * since the last slice ended and whether commands ran meanwhile: a full
 * slice when the loop is idle or had time to spare, otherwise no longer
 * than the loop's own turn (persist.c, SLICE_NS, explains why). */
uint64_t gb_persist_slice_ns(uint64_t since_last_slice_ns, bool commands_ran);

#endif
