#define _POSIX_C_SOURCE 200809L
#include "engine/persist/persist.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/base/helper_thread.h"
#include "engine/base/mem.h"
#include "engine/core/pubsub/tracking.h"
#include "engine/core/replication/repl.h"
#include "engine/core/replication/replica.h"
#include "engine/core/request/multi.h"
#include "engine/persist/aof.h"
#include "engine/persist/fileio.h"
#include "engine/persist/rdb_load.h"
#include "engine/persist/repl_fsync.h"
#include "engine/persist/serialize.h"
#include "engine/persist/snapshot.h"
#include "platform/clock.h"

#define MISCONF_RDB                                                                                              \
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands " \
    "that may modify the data set are disabled, because this instance is configured to report errors during "   \
    "writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for "   \
    "details about the RDB error."

/* Redis's CONFIG_BGSAVE_RETRY_DELAY: after a failed background save the
 * policy waits this long before trying again. */
#define BGSAVE_RETRY_DELAY_MS 5000
/* A background slice between event batches: long enough to make progress,
 * short enough that other clients' commands wait little. While clients
 * keep the loop busy (commands ran since the last slice), a slice lasts no
 * longer than the loop took since the last one, and at least
 * SLICE_MIN_NS: the save then takes about half of a busy engine's time,
 * and a command arriving during a slice waits about as long as it would
 * behind the other clients' commands. */
#define SLICE_NS 100000u
#define SLICE_MIN_NS 10000u

/* What the one background snapshot at a time is for. */
enum bg_kind { BG_RDB, BG_AOF_REWRITE };

struct gb_persist {
    gb_engine *eng;
    gb_service service;
    gb_aof *aof;

    /* the background snapshot in progress, if any */
    gb_snapshot *bg;
    enum bg_kind bg_kind;
    int64_t bg_start_ms;
    uint64_t bg_dirty_at_start;
    bool bg_scheduled;       /* BGSAVE SCHEDULE: start when possible */
    bool rw_scheduled;       /* BGREWRITEAOF while a BGSAVE runs */
    uint64_t slice_end_ns;   /* when the last slice ended */
    uint64_t slice_cmds;     /* total_commands_processed then */

    /* replicas' full syncs: their scan takes the engine's copy-on-write
     * too, so a save waits for it (sync_holds_scan) and it for a save */
    gb_fullsync *fullsync;

    /* append-only log rewrites */
    int64_t last_rw_try_ms;
    bool last_rw_ok;
    int64_t last_rw_secs;    /* -1: none yet */
    uint64_t rewrites;
    /* Redis's aofRewriteLimited: after 3 failures in a row a rewrite is
     * tried again only after 1 minute, then 2, 4 ... up to 60 */
    uint64_t rw_failures;    /* in a row (INFO aof_rewrites_consecutive_failures) */
    int rw_delay_min;
    int64_t rw_next_ms;      /* 0: no wait running */

    /* results */
    uint64_t dirty_at_save;  /* stats.dirty when the last save began */
    int64_t lastsave_s;      /* last successful save, Unix seconds */
    int64_t last_try_ms;     /* last background save attempt */
    bool last_bg_ok;
    int64_t last_bg_secs;    /* -1: none yet */
    int64_t last_bg_end_ms;  /* when it ended: a full sync's scan that ended later is the "last bgsave" */
    uint64_t saves;          /* successful saves (rdb_saves) */

    /* The dataset came from a Redis dump.rdb under dbfilename: before the
     * first save replaces it with Goblin's format, the Redis file is kept
     * beside it (keep_redis_original). */
    bool redis_original;
};

static void snapshot_path(const gb_persist *p, char *out, size_t cap)
{
    gb_path_join(out, cap, p->eng->cfg.dir, p->eng->cfg.dbfilename);
}

/* The first save after loading a Redis dump.rdb: a hard link keeps Redis's
 * file as <dbfilename>.redis (the snapshot then replaces dbfilename by a
 * rename, as always), so going back to redis-server stays possible and no
 * moment exists with neither file in place. */
static int load_redis_file(gb_engine *eng, const char *path, gb_repl_saved_history *history, char *err,
                           size_t errlen);

static void keep_redis_original(gb_persist *p, const char *path)
{
    if (!p->redis_original)
        return;
    p->redis_original = false;
    char kept[4200];
    snprintf(kept, sizeof kept, "%s.redis", path);
    if (link(path, kept) == 0)
        gb_log(GB_LOG_NOTICE, "Kept the Redis RDB file as %s: snapshots are written in Goblin's format to %s", kept,
               path);
    else
        gb_log(GB_LOG_WARNING, "Could not keep the Redis RDB file as %s (%s): the save replaces %s with Goblin's "
               "format", kept, strerror(errno), path);
}

/* Whether a replica's full sync holds the engine's one copy-on-write scan
 * (a save asked now waits for it, as Redis's BGSAVE waits for a diskless
 * sync's child). */
static bool sync_holds_scan(const gb_persist *p) { return !p->bg && p->eng->cow.active; }

static int level_of(const gb_engine *eng) { return eng->cfg.rdbcompression ? eng->cfg.rdb_compression_level : 0; }

/* ---- foreground save ------------------------------------------------------------------ */

static void bg_abandon(gb_persist *p, const char *why);

/* Says when the snapshot's writer thread had to leave the idle class: the
 * save then took CPU from requests (snapwrite.c explains). */
static void log_writer_class(const gb_snapshot *s)
{
    uint64_t first;
    unsigned n = gb_snapshot_writer_raises(s, &first);
    if (n)
        gb_log(GB_LOG_NOTICE, "The snapshot writer got no CPU for 50 ms at idle priority %u time(s), first %.1f s "
                              "into the save (the CPU was busy): it ran at nice 10 until it caught up",
               n, (double)first / 1e9);
}

/* Says where a background snapshot's compression runs when that is the
 * engine's thread: requests then wait for its pieces (snapwrite.c). */
static void log_compression_place(const gb_snapshot *s)
{
    if (gb_snapshot_engine_compresses(s))
        gb_log(GB_LOG_NOTICE, "No CPU for the snapshot writer besides the engine's: the engine thread compresses "
                              "the snapshot in small pieces between requests (give the server a second CPU to move "
                              "the compression off it)");
}

/* Saves the dataset now, whatever else runs but a BGSAVE (which writes
 * the same file): a log rewrite or a replica's sync in progress goes on
 * beside it (the foreground snapshot leaves their copy-on-write alone). */
static int save_now(gb_persist *p, char *err, size_t errlen)
{
    gb_engine *eng = p->eng;
    if (p->bg && p->bg_kind == BG_RDB) {
        snprintf(err, errlen, "Background save already in progress");
        return -1;
    }
    char path[4096];
    snapshot_path(p, path, sizeof path);
    keep_redis_original(p, path);
    uint64_t t0 = gb_clock_mono_ns();
    uint64_t dirty = eng->stats.dirty;
    gb_snapshot *s = gb_snapshot_begin(eng, path, level_of(eng), false, err, errlen);
    if (!s) {
        gb_log(GB_LOG_WARNING, "Failed saving the DB: %s", err);
        return -1;
    }
    int rc = gb_snapshot_run(s, err, errlen);
    uint64_t keys = gb_snapshot_keys(s), bytes = gb_snapshot_bytes(s);
    log_writer_class(s);
    gb_snapshot_free(s);
    if (rc != 1) {
        gb_log(GB_LOG_WARNING, "Failed saving the DB: %s", err);
        return -1;
    }
    p->dirty_at_save = dirty;
    p->lastsave_s = eng->now_ms / 1000;
    p->last_bg_ok = true; /* a good save lifts MISCONF, as Redis's rdbSave */
    double secs = (double)(gb_clock_mono_ns() - t0) / 1e9;
    gb_log(GB_LOG_NOTICE, "DB saved on disk: %llu keys, %.1f MB in %.3f s", (unsigned long long)keys,
           (double)bytes / 1e6, secs);
    return 0;
}

/* Redis's SAVE runs beside an AOF rewrite's child, not beside an RDB
 * child (a BGSAVE's, or a diskless sync's). */
static int save_unless_syncing(gb_persist *p, char *err, size_t errlen)
{
    if (sync_holds_scan(p)) {
        snprintf(err, errlen, "Background save already in progress");
        return -1;
    }
    return save_now(p, err, errlen);
}

int gb_persist_save(gb_persist *p, char *err, size_t errlen)
{
    if (p->bg && p->bg_kind == BG_RDB) {
        snprintf(err, errlen, "Background save already in progress");
        return -1;
    }
    p->saves++; /* INFO rdb_saves: SAVE and BGSAVE as they start, as Redis counts them */
    return save_unless_syncing(p, err, errlen);
}

/* ---- background save --------------------------------------------------------------------- */

static enum gb_bgsave_result bg_start(gb_persist *p, char *err, size_t errlen)
{
    gb_engine *eng = p->eng;
    char path[4096];
    snapshot_path(p, path, sizeof path);
    keep_redis_original(p, path);
    p->last_try_ms = eng->now_ms;
    p->bg = gb_snapshot_begin(eng, path, level_of(eng), true, err, errlen);
    if (!p->bg) {
        p->last_bg_ok = false;
        gb_log(GB_LOG_WARNING, "Can't save in background: %s", err);
        return GB_BGSAVE_ERROR;
    }
    p->bg_kind = BG_RDB;
    p->saves++;
    p->bg_start_ms = eng->now_ms;
    p->bg_dirty_at_start = eng->stats.dirty;
    p->bg_scheduled = false;
    gb_log(GB_LOG_NOTICE, "Background saving started");
    log_compression_place(p->bg);
    return GB_BGSAVE_STARTED;
}

/* ---- append-only log rewrites ------------------------------------------------------------- */

/* Whether a rewrite must wait (Redis's aofRewriteLimited): never before
 * 3 failures in a row; then a wait of 1 minute, doubling to at most 60,
 * each time one is due. */
static bool rewrite_limited(gb_persist *p)
{
    int64_t now = p->eng->now_ms;
    if (p->rw_failures < 3) {
        p->rw_delay_min = 0;
        p->rw_next_ms = 0;
        return false;
    }
    if (p->rw_next_ms != 0) {
        if (now < p->rw_next_ms)
            return true;
        p->rw_next_ms = 0;
        return false;
    }
    p->rw_delay_min = p->rw_delay_min ? GB_MIN(p->rw_delay_min * 2, 60) : 1;
    p->rw_next_ms = now + (int64_t)p->rw_delay_min * 60000;
    gb_log(GB_LOG_WARNING,
           "Background AOF rewrite has repeatedly failed and triggered the limit, will retry in %d minutes",
           p->rw_delay_min);
    return true;
}

static void rw_failed(gb_persist *p, const char *err)
{
    p->last_rw_ok = false;
    p->rw_failures++;
    gb_log(GB_LOG_WARNING, "Can't rewrite append only file in background: %s", err);
}

static int rw_start(gb_persist *p, char *err, size_t errlen)
{
    gb_engine *eng = p->eng;
    p->last_rw_try_ms = eng->now_ms;
    char base[4400];
    /* The new incremental file and the snapshot begin at the same moment:
     * no command runs between them. */
    if (gb_aof_rewrite_begin(p->aof, base, sizeof base, err, errlen) != 0) {
        rw_failed(p, err);
        return -1;
    }
    p->bg = gb_snapshot_begin(eng, base, level_of(eng), true, err, errlen);
    if (!p->bg) {
        gb_aof_rewrite_end(p->aof, false);
        rw_failed(p, err);
        return -1;
    }
    p->bg_kind = BG_AOF_REWRITE;
    p->bg_start_ms = eng->now_ms;
    p->rw_scheduled = false;
    gb_log(GB_LOG_NOTICE, "Background append only file rewriting started");
    log_compression_place(p->bg);
    return 0;
}

enum gb_bgrewrite_result gb_persist_bgrewriteaof(gb_persist *p, bool in_exec, char *err, size_t errlen)
{
    if (p->bg && p->bg_kind == BG_AOF_REWRITE) {
        snprintf(err, errlen, "Background append only file rewriting already in progress");
        return GB_BGREWRITE_BUSY;
    }
    p->rw_failures = 0; /* asked for: not held back by earlier failures (Redis) */
    if (p->bg || sync_holds_scan(p) || in_exec) {
        p->rw_scheduled = true;
        return GB_BGREWRITE_SCHEDULED;
    }
    return rw_start(p, err, errlen) == 0 ? GB_BGREWRITE_STARTED : GB_BGREWRITE_ERROR;
}

int gb_persist_restart_log_after_sync(gb_persist *p, char *err, size_t errlen)
{
    if (p->bg && p->bg_kind == BG_AOF_REWRITE)
        bg_abandon(p, "the sync with the MASTER replaced the data set; starting a rewrite of the new one");
    if (p->bg || sync_holds_scan(p)) {
        p->rw_scheduled = true;
        return 0;
    }
    return rw_start(p, err, errlen);
}

int gb_persist_appendonly_changed(gb_persist *p, char *err, size_t errlen)
{
    gb_engine *eng = p->eng;
    if (!eng->cfg.appendonly) {
        if (p->bg && p->bg_kind == BG_AOF_REWRITE)
            bg_abandon(p, "appendonly turned off");
        gb_aof_disable(p->aof);
        return 0;
    }
    if (gb_aof_on(p->aof))
        return 0;
    if (gb_aof_enable(p->aof, err, errlen) != 0)
        return -1;
    /* The log needs a base: the dataset as it is now. */
    if ((p->bg && p->bg_kind == BG_RDB) || sync_holds_scan(p)) {
        p->rw_scheduled = true;
        return 0;
    }
    if (p->bg)
        bg_abandon(p, "appendonly turned on: the log needs a new base");
    if (rw_start(p, err, errlen) != 0) {
        gb_aof_disable(p->aof);
        return -1;
    }
    return 0;
}

enum gb_bgsave_result gb_persist_bgsave(gb_persist *p, bool schedule, bool in_exec, char *err, size_t errlen)
{
    /* Redis 7.0's bgsaveCommand: a save running (a replication's too),
     * SCHEDULE or not, is an error; a rewrite running or a transaction
     * in progress schedule one, or refuse without SCHEDULE. */
    if ((p->bg && p->bg_kind == BG_RDB) || sync_holds_scan(p)) {
        snprintf(err, errlen, "Background save already in progress");
        return GB_BGSAVE_BUSY;
    }
    if (p->bg || in_exec) {
        if (schedule || in_exec) {
            p->bg_scheduled = true;
            return GB_BGSAVE_SCHEDULED;
        }
        snprintf(err, errlen, "Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE "
                              "in order to schedule a BGSAVE whenever possible.");
        return GB_BGSAVE_BUSY;
    }
    return bg_start(p, err, errlen);
}

static void bg_done(gb_persist *p, bool ok, const char *err)
{
    gb_engine *eng = p->eng;
    uint64_t keys = gb_snapshot_keys(p->bg), bytes = gb_snapshot_bytes(p->bg);
    log_writer_class(p->bg);
    gb_snapshot_free(p->bg);
    p->bg = NULL;
    if (p->bg_kind == BG_AOF_REWRITE) {
        gb_aof_rewrite_end(p->aof, ok);
        p->last_rw_ok = ok;
        p->last_rw_secs = (eng->now_ms - p->bg_start_ms) / 1000;
        if (ok) {
            p->rewrites++;
            p->rw_failures = 0;
            gb_log(GB_LOG_NOTICE, "Background AOF rewrite finished successfully: a %.1f MB base of %llu keys",
                   (double)bytes / 1e6, (unsigned long long)keys);
        } else {
            p->rw_failures++;
            gb_log(GB_LOG_WARNING, "Background AOF rewrite failed: %s", err);
            /* A log still waiting for its first base is no log: try again
             * (Redis reschedules in AOF_WAIT_REWRITE), within the limit. */
            if (gb_aof_waits_for_base(p->aof))
                p->rw_scheduled = true;
        }
        return;
    }
    p->last_bg_ok = ok;
    p->last_bg_secs = (eng->now_ms - p->bg_start_ms) / 1000;
    p->last_bg_end_ms = eng->now_ms;
    if (ok) {
        /* changes since the start are still unsaved; LASTSAVE is the end */
        p->dirty_at_save = p->bg_dirty_at_start;
        p->lastsave_s = eng->now_ms / 1000;
        gb_log(GB_LOG_NOTICE, "Background saving terminated with success: %llu keys, %.1f MB",
               (unsigned long long)keys, (double)bytes / 1e6);
    } else {
        gb_log(GB_LOG_WARNING, "Background saving error: %s", err);
    }
}

static void bg_abandon(gb_persist *p, const char *why)
{
    gb_log(GB_LOG_WARNING, "Background %s abandoned: %s",
           p->bg_kind == BG_RDB ? "saving" : "append only file rewriting", why);
    gb_snapshot_free(p->bg);
    p->bg = NULL;
    if (p->bg_kind == BG_AOF_REWRITE)
        gb_aof_rewrite_end(p->aof, false);
}

static void bg_check_done(gb_persist *p)
{
    if (!p->bg)
        return;
    char err[640];
    int rc = gb_snapshot_poll(p->bg, err, sizeof err);
    if (rc != 0)
        bg_done(p, rc == 1, err);
}

int64_t gb_persist_lastsave(const gb_persist *p) { return p->lastsave_s; }

bool gb_persist_bg_in_progress(const gb_persist *p) { return p->bg != NULL; }

/* ---- the save policy ------------------------------------------------------------------------ */

static void policy_check(gb_persist *p)
{
    gb_engine *eng = p->eng;
    if (p->bg || sync_holds_scan(p))
        return;
    char err[640];
    if (p->rw_scheduled) {
        if (!rewrite_limited(p))
            rw_start(p, err, sizeof err);
        return;
    }
    if (p->bg_scheduled) {
        bg_start(p, err, sizeof err);
        return;
    }
    /* The log rewrites itself once it grew by the configured percentage
     * since the last rewrite (and is past the minimum size). */
    const gb_settings *cfg = &eng->cfg;
    uint64_t size = gb_aof_size(p->aof), base = gb_aof_base_size(p->aof);
    if (gb_aof_on(p->aof) && cfg->auto_aof_rewrite_percentage > 0 && size > (uint64_t)cfg->auto_aof_rewrite_min_size &&
        (p->last_rw_ok || eng->now_ms - p->last_rw_try_ms > BGSAVE_RETRY_DELAY_MS)) {
        uint64_t grown = base ? (size - (size > base ? base : size)) * 100 / base : UINT64_MAX;
        if (size > base && grown >= (uint64_t)cfg->auto_aof_rewrite_percentage && !rewrite_limited(p)) {
            gb_log(GB_LOG_NOTICE, "Starting automatic rewriting of AOF on %llu%% growth", (unsigned long long)grown);
            rw_start(p, err, sizeof err);
            return;
        }
    }
    uint64_t changes = eng->stats.dirty - p->dirty_at_save;
    int64_t now = eng->now_ms;
    for (int i = 0; i < eng->cfg.save_n; i++) {
        if (changes < (uint64_t)eng->cfg.save_changes[i] || now - p->lastsave_s * 1000 < eng->cfg.save_seconds[i] * 1000)
            continue;
        /* After a failure, wait before trying again (Redis's rule). */
        if (!p->last_bg_ok && now - p->last_try_ms < BGSAVE_RETRY_DELAY_MS)
            continue;
        gb_log(GB_LOG_NOTICE, "%lld changes in %lld seconds. Saving...", eng->cfg.save_changes[i],
               eng->cfg.save_seconds[i]);
        bg_start(p, err, sizeof err);
        return;
    }
}

const char *gb_persist_write_refusal(const gb_persist *p)
{
    const gb_settings *cfg = &p->eng->cfg;
    if (cfg->stop_writes_on_bgsave_error && cfg->save_n > 0 && !p->last_bg_ok)
        return MISCONF_RDB;
    return gb_aof_write_refusal(p->aof);
}

/* ---- loading ------------------------------------------------------------------------------- */

typedef struct load_progress {
    uint64_t t0;
} load_progress;

static void log_progress(void *ctx, const gb_snap_reader *r, const gb_snap_load_stats *st)
{
    load_progress *lp = ctx;
    double secs = (double)(gb_clock_mono_ns() - lp->t0) / 1e9;
    double mb = (double)gb_snap_reader_offset(r) / 1e6, total = (double)gb_snap_reader_size(r) / 1e6;
    gb_log(GB_LOG_NOTICE, "Loading: %llu keys, %.0f of %.0f MB (%.0f%%), %.0f MB/s", (unsigned long long)st->keys, mb,
           total, total > 0 ? 100 * mb / total : 100.0, secs > 0 ? mb / secs : 0.0);
}

/* Loads a snapshot file into the (empty) databases; history, when not
 * NULL, gets the replication history it recorded. 0, GB_ENOENT when the
 * file does not exist, or GB_EPARSE with the reason in err. */
static int load_snapshot_file(gb_engine *eng, const char *path, gb_repl_saved_history *history, char *err,
                              size_t errlen)
{
    gb_snap_reader *r = gb_snap_reader_open(path, err, errlen);
    if (!r)
        return errno == ENOENT ? GB_ENOENT : GB_EIO;
    /* Decoding runs ahead on a helper CPU while this thread builds keys.
     * On one CPU the two would only take turns (a switch per block handed
     * over, and blocks decoded ahead leave the cache before they are
     * parsed), so there the engine thread decodes each block itself. */
    if (gb_helper_has_own_cpu(&eng->cfg.helper_cpus))
        (void)gb_snap_reader_read_ahead(r, &eng->cfg.helper_cpus);
    load_progress lp = {gb_clock_mono_ns()};
    gb_snap_load_stats st;
    bool ok = gb_snap_load(eng, r, &st, log_progress, &lp);
    if (!ok) {
        snprintf(err, errlen, "%s", gb_snap_reader_error(r));
        gb_snap_reader_free(r);
        return GB_EPARSE;
    }
    double secs = (double)(gb_clock_mono_ns() - lp.t0) / 1e9;
    double mb = (double)gb_snap_reader_size(r) / 1e6;
    gb_log(GB_LOG_NOTICE, "DB loaded from disk: %llu keys (%llu expired, not loaded), %.1f MB in %.3f s (%.0f MB/s)",
           (unsigned long long)st.keys, (unsigned long long)st.expired, mb, secs, secs > 0 ? mb / secs : 0.0);
    gb_snap_reader_free(r);
    if (history)
        *history = st.history;
    return 0;
}

static void log_rdb_progress(void *ctx, uint64_t done, uint64_t total, const gb_rdb_load_stats *st)
{
    const load_progress *lp = ctx;
    double secs = (double)(gb_clock_mono_ns() - lp->t0) / 1e9, mb = (double)done / 1e6;
    gb_log(GB_LOG_NOTICE, "Loading Redis RDB: %llu keys, %.0f of %.0f MB (%.0f%%), %.0f MB/s",
           (unsigned long long)st->keys, mb, (double)total / 1e6, total ? 100.0 * (double)done / (double)total : 100.0,
           secs > 0 ? mb / secs : 0.0);
}

int gb_persist_load_redis_rdb(gb_engine *eng, const char *path, char *err, size_t errlen)
{
    return load_redis_file(eng, path, NULL, err, errlen);
}

/* Loads a Redis dump.rdb (engine/persist/rdb_load.h) into the databases. */
static int load_redis_file(gb_engine *eng, const char *path, gb_repl_saved_history *history, char *err,
                           size_t errlen)
{
    load_progress lp = {gb_clock_mono_ns()};
    gb_rdb_load_stats st;
    int rc = gb_rdb_load_file(eng, path, &st, log_rdb_progress, &lp, err, errlen);
    if (rc != 0)
        return rc;
    if (history)
        *history = st.history;
    double secs = (double)(gb_clock_mono_ns() - lp.t0) / 1e9, mb = (double)st.bytes / 1e6;
    gb_log(GB_LOG_NOTICE, "DB loaded from a Redis RDB file (version %u): %llu keys (%llu expired, not loaded), "
           "%llu function libraries, %.1f MB in %.3f s (%.0f MB/s)", st.version, (unsigned long long)st.keys,
           (unsigned long long)st.expired, (unsigned long long)st.functions, mb, secs, secs > 0 ? mb / secs : 0.0);
    return 0;
}

/* Everything a snapshot or log replaces: the databases and the function
 * libraries (Redis's emptyData without EMPTYDB_NOFUNCTIONS), with WATCH
 * and tracking told as after a FLUSHALL (DEBUG RELOAD and LOADAOF: what
 * loads back may differ, keys expired meanwhile are not loaded). */
static void flush_all(gb_engine *eng)
{
    for (int i = 0; i < eng->ndbs; i++) {
        gb_multi_touch_swap(&eng->dbs[i], NULL);
        gb_db_flush(&eng->dbs[i]);
    }
    gb_tracking_invalidate_flush(eng);
    if (eng->scripting)
        eng->scripting->flush_libraries(eng->scripting->ctx);
}

int gb_persist_load(gb_persist *p, char *err, size_t errlen)
{
    gb_engine *eng = p->eng;
    /* Saves a crash cut short leave their temporary files: the previous
     * file is the one that counts. */
    char tmp_prefix[300];
    snprintf(tmp_prefix, sizeof tmp_prefix, "%s.tmp-", eng->cfg.dbfilename);
    int removed = gb_remove_prefixed(eng->cfg.dir, tmp_prefix, NULL, NULL);
    if (removed)
        gb_log(GB_LOG_NOTICE, "Removed %d temporary snapshot file(s) left by an interrupted save", removed);
    if (eng->cfg.appendonly) {
        int rc = gb_aof_load(p->aof, err, errlen);
        if (rc != GB_ENOENT)
            return rc;
    }
    char path[4096];
    snapshot_path(p, path, sizeof path);
    int rc;
    gb_repl_saved_history history = {.have = 0};
    if (gb_rdb_file_is_redis(path)) {
        rc = load_redis_file(eng, path, &history, err, errlen);
        p->redis_original = rc == 0;
    } else {
        rc = load_snapshot_file(eng, path, &history, err, errlen);
    }
    if (rc == 0)
        p->lastsave_s = eng->now_ms / 1000;
    else if (rc != GB_ENOENT)
        return rc;
    /* The history the file recorded, continued (Redis's loadDataFromDisk;
     * not from the log, whose base records none, as in Redis). */
    if (rc == 0 && history.have == GB_REPL_SAVED_ALL)
        gb_repl_restore_history(eng, history.replid, history.offset, history.stream_db,
                                gb_replica_configured(eng));
    /* appendonly yes without a log yet: start one, its base the dataset
     * just loaded (or nothing). */
    if (eng->cfg.appendonly && gb_persist_appendonly_changed(p, err, errlen) != 0)
        return GB_EIO;
    return 0;
}

int gb_persist_debug_loadaof(gb_persist *p, char *err, size_t errlen)
{
    gb_engine *eng = p->eng;
    if (!gb_aof_on(p->aof)) {
        snprintf(err, errlen, "the append-only log is off");
        return GB_EINVAL;
    }
    if (p->bg)
        bg_abandon(p, "DEBUG LOADAOF reloads the log");
    gb_aof_disable(p->aof);
    flush_all(eng);
    int rc = gb_aof_load(p->aof, err, errlen);
    if (rc != 0) {
        gb_log(GB_LOG_WARNING, "DEBUG LOADAOF could not load the log: %s", err);
        flush_all(eng);
    }
    return rc;
}


int gb_persist_debug_reload(gb_persist *p, char *err, size_t errlen)
{
    if (p->bg)
        bg_abandon(p, "DEBUG RELOAD saves now");
    if (save_unless_syncing(p, err, errlen) != 0)
        return GB_EIO;
    gb_engine *eng = p->eng;
    flush_all(eng);
    char path[4096];
    snapshot_path(p, path, sizeof path);
    int rc;
    if (gb_rdb_file_is_redis(path)) {
        rc = load_redis_file(eng, path, NULL, err, errlen);
        p->redis_original = rc == 0;
    } else {
        rc = load_snapshot_file(eng, path, NULL, err, errlen);
    }
    if (rc != 0) {
        /* Never a half-loaded dataset: empty is what the log says. */
        gb_log(GB_LOG_WARNING, "DEBUG RELOAD could not load what it saved: %s", err);
        flush_all(eng);
        return GB_EPARSE;
    }
    return 0;
}

/* ---- the service ----------------------------------------------------------------------------- */

static void svc_cron(void *ctx)
{
    gb_persist *p = ctx;
    gb_aof_cron(p->aof);
    bg_check_done(p);
    policy_check(p);
    gb_fullsync_cron(p->fullsync);
}

uint64_t gb_persist_slice_ns(uint64_t since_last_slice_ns, bool commands_ran)
{
    if (!commands_ran || since_last_slice_ns >= SLICE_NS)
        return SLICE_NS; /* an idle loop, or one with time to spare */
    return since_last_slice_ns > SLICE_MIN_NS ? since_last_slice_ns : SLICE_MIN_NS;
}

static uint64_t slice_length(const gb_persist *p, uint64_t now)
{
    return gb_persist_slice_ns(now - p->slice_end_ns, p->eng->stats.total_commands_processed != p->slice_cmds);
}

static gb_bg_state snapshot_step(gb_persist *p, uint64_t deadline_ns)
{
    if (!p->bg)
        return GB_BG_IDLE;
    uint64_t now = gb_clock_mono_ns(), slice = slice_length(p, now);
    uint64_t until = now + slice < deadline_ns ? now + slice : deadline_ns;
    bool scanned = gb_snapshot_step(p->bg, until);
    p->slice_end_ns = gb_clock_mono_ns();
    p->slice_cmds = p->eng->stats.total_commands_processed;
    if (scanned) {
        bg_check_done(p); /* the writer may already be done */
        return GB_BG_IDLE; /* the cron notices the writer finishing */
    }
    char err[640];
    if (gb_snapshot_poll(p->bg, err, sizeof err) < 0) {
        bg_done(p, false, err);
        return GB_BG_IDLE;
    }
    return gb_snapshot_waiting(p->bg) ? GB_BG_WAITING : GB_BG_MORE;
}

/* The more urgent of two background states: work now, then waiting on a
 * helper, then nothing. */
static gb_bg_state busier(gb_bg_state a, gb_bg_state b)
{
    if (a == GB_BG_MORE || b == GB_BG_MORE)
        return GB_BG_MORE;
    return a == GB_BG_WAITING || b == GB_BG_WAITING ? GB_BG_WAITING : GB_BG_IDLE;
}

static gb_bg_state svc_step(void *ctx, uint64_t deadline_ns)
{
    gb_persist *p = ctx;
    gb_bg_state st = snapshot_step(p, deadline_ns);
    return busier(st, gb_fullsync_step(p->fullsync));
}

static void svc_before_replies(void *ctx)
{
    gb_persist *p = ctx;
    gb_aof_flush(p->aof, p->eng->cfg.appendfsync == GB_FSYNC_ALWAYS);
}

static bool svc_replies_held(void *ctx)
{
    gb_persist *p = ctx;
    return gb_aof_unsynced(p->aof);
}

static int svc_shutdown(void *ctx, bool save, bool nosave)
{
    gb_persist *p = ctx;
    if (p->bg && p->bg_kind == BG_AOF_REWRITE && gb_aof_waits_for_base(p->aof)) {
        /* The log's first base: every write since appendonly went on is in
         * a file no manifest names until it is written, so abandoning it
         * would lose them (Redis refuses to exit here, "Writing initial
         * AOF, can't exit."); finishing it keeps them. */
        gb_log(GB_LOG_NOTICE, "Writing the initial AOF base before exiting.");
        char err[640];
        int rc = gb_snapshot_run(p->bg, err, sizeof err);
        bg_done(p, rc == 1, err);
    }
    if (p->bg)
        bg_abandon(p, "shutting down");
    if (gb_aof_on(p->aof)) {
        gb_log(GB_LOG_NOTICE, "Calling fsync() on the AOF file.");
        gb_aof_flush(p->aof, true);
    }
    if (nosave || (!save && p->eng->cfg.save_n == 0))
        return 0;
    gb_log(GB_LOG_NOTICE, "Saving the final snapshot before exiting.");
    char err[640];
    /* a replica's full sync in progress does not stop it (Redis kills its child) */
    if (save_now(p, err, sizeof err) != 0)
        return GB_EIO; /* the shutdown says whether it exits anyway (engine/core/shutdown.c) */
    return 0;
}

static const char *svc_write_refusal(void *ctx) { return gb_persist_write_refusal(ctx); }

/* A background snapshot in progress would otherwise write out every key
 * it has not reached before the flush drops them: all at once, and with
 * the blocks past the writer's bound in memory. Redis kills its child
 * here; the save ends without an error (writes are not refused for it).
 * A log rewrite goes on (as in Redis): its base must be the dataset of
 * the moment it began, since the FLUSHALL is in the log after it. */
static void svc_before_flushall(void *ctx)
{
    gb_persist *p = ctx;
    if (p->bg && p->bg_kind == BG_RDB)
        bg_abandon(p, "FLUSHALL");
}

/* With save points, the emptied dataset is saved at once (Redis's
 * flushAllDataAndResetRDB), a log rewrite or a replica's sync in progress
 * notwithstanding: a restart must not bring the flushed keys back from
 * the last dump. */
static void svc_after_flushall(void *ctx)
{
    gb_persist *p = ctx;
    if (p->eng->cfg.save_n == 0)
        return;
    char err[640];
    save_now(p, err, sizeof err);
}

static void svc_reset_stats(void *ctx)
{
    gb_persist *p = ctx;
    p->saves = 0;
    p->rewrites = 0;
    gb_aof_reset_stats(p->aof);
}

static void svc_destroy(void *ctx) { gb_persist_free(ctx); }

static void line(void (*out)(void *, const char *), void *octx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void line(void (*out)(void *, const char *), void *octx, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    out(octx, buf);
}

static void svc_info(void *ctx, void (*out)(void *lctx, const char *text), void *octx)
{
    gb_persist *p = ctx;
    gb_engine *eng = p->eng;
    line(out, octx, "async_loading:0");
    line(out, octx, "rdb_changes_since_last_save:%llu", (unsigned long long)(eng->stats.dirty - p->dirty_at_save));
    /* A full sync's scan counts as a background save, as Redis's
     * replication child does (one scan at a time: never both). */
    bool saving = p->bg && p->bg_kind == BG_RDB;
    gb_fullsync_stats fs = gb_fullsync_stats_of(p->fullsync);
    line(out, octx, "rdb_bgsave_in_progress:%d", saving || fs.current_secs >= 0 ? 1 : 0);
    line(out, octx, "rdb_last_save_time:%lld", (long long)p->lastsave_s);
    line(out, octx, "rdb_last_bgsave_status:%s", p->last_bg_ok ? "ok" : "err");
    line(out, octx, "rdb_last_bgsave_time_sec:%lld",
         (long long)(fs.last_end_ms > p->last_bg_end_ms ? fs.last_secs : p->last_bg_secs));
    line(out, octx, "rdb_current_bgsave_time_sec:%lld",
         saving ? (long long)((eng->now_ms - p->bg_start_ms) / 1000) : (long long)fs.current_secs);
    line(out, octx, "rdb_saves:%llu", (unsigned long long)p->saves); /* a sync's RDB is not a save (Redis) */
    line(out, octx, "rdb_last_cow_size:0");
    bool rw = p->bg && p->bg_kind == BG_AOF_REWRITE;
    line(out, octx, "aof_enabled:%d", gb_aof_on(p->aof) ? 1 : 0);
    line(out, octx, "aof_rewrite_in_progress:%d", rw ? 1 : 0);
    line(out, octx, "aof_rewrite_scheduled:%d", p->rw_scheduled ? 1 : 0);
    line(out, octx, "aof_last_rewrite_time_sec:%lld", (long long)p->last_rw_secs);
    line(out, octx, "aof_current_rewrite_time_sec:%lld", rw ? (long long)((eng->now_ms - p->bg_start_ms) / 1000) : -1LL);
    line(out, octx, "aof_last_bgrewrite_status:%s", p->last_rw_ok ? "ok" : "err");
    line(out, octx, "aof_rewrites:%llu", (unsigned long long)p->rewrites);
    line(out, octx, "aof_rewrites_consecutive_failures:%llu", (unsigned long long)p->rw_failures);
    gb_aof_info(p->aof, p->rw_scheduled, out, octx);
    line(out, octx, "module_fork_in_progress:0");
    line(out, octx, "module_fork_last_cow_size:0");
}

static size_t svc_uncounted_memory(void *ctx) { return gb_aof_buffer_bytes(((gb_persist *)ctx)->aof); }

gb_persist *gb_persist_new(gb_engine *eng)
{
    gb_persist *p = gb_calloc(1, sizeof *p);
    p->eng = eng;
    p->last_bg_ok = true;
    p->last_bg_secs = -1;
    p->lastsave_s = eng->now_ms / 1000;
    p->dirty_at_save = eng->stats.dirty;
    p->last_rw_ok = true;
    p->last_rw_secs = -1;
    p->aof = gb_aof_new(eng);
    p->fullsync = gb_fullsync_new(eng);
    p->service = (gb_service){.cron = svc_cron,
                              .step = svc_step,
                              .before_replies = svc_before_replies,
                              .replies_held = svc_replies_held,
                              .shutdown = svc_shutdown,
                              .write_refusal = svc_write_refusal,
                              .before_flushall = svc_before_flushall,
                              .after_flushall = svc_after_flushall,
                              .info = svc_info,
                              .reset_stats = svc_reset_stats,
                              .uncounted_memory = svc_uncounted_memory,
                              .destroy = svc_destroy,
                              .ctx = p};
    eng->service = &p->service;
    return p;
}

gb_persist *gb_persist_of(gb_engine *eng) { return eng->service ? eng->service->ctx : NULL; }

void gb_persist_free(gb_persist *p)
{
    if (!p)
        return;
    if (p->bg)
        bg_abandon(p, "the server is stopping");
    gb_fullsync_free(p->fullsync);
    gb_aof_free(p->aof);
    if (p->eng->service == &p->service)
        p->eng->service = NULL;
    gb_free(p);
}
