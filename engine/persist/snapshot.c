#define _POSIX_C_SOURCE 200809L
#include "engine/persist/snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/helper_thread.h"
#include "engine/base/mem.h"
#include "engine/core/memory/lazyfree.h"
#include "engine/persist/cow_scan.h"
#include "engine/persist/serialize.h"
#include "engine/persist/snapfmt.h"
#include "platform/clock.h"

/* Blocks allowed to wait for the writer before the scan pauses: bounds the
 * snapshot's memory at this many MB (copy-on-write saves never pause). */
#define MAX_BACKLOG GB_SNAP_WRITER_MAX_BACKLOG

struct gb_snapshot {
    gb_engine *eng;
    gb_snap_writer *w;
    gb_cow_scan *scan; /* a background snapshot's; NULL once abandoned */
    /* A foreground snapshot (SAVE, shutdown) blocks the engine: nothing
     * changes while it runs, so it walks the tables with an iterator and
     * leaves the copy-on-write marks alone, free for a log rewrite or a
     * replica's sync in progress (Redis saves in the foreground beside an
     * AOF rewrite's child too). */
    bool walking;       /* the iterator below is live */
    int walk_db;        /* the database it is in */
    gb_htable_iter walk;
    int stream_db;     /* the database of the last KEY record */
    uint64_t keys;
    bool scanned;      /* every key serialised, the stream closed */
};

/* The scan's emitter: one KEY record (SELECTDB first where the database
 * changes). */
static void save(void *ctx, gb_db *db, gb_kv *kv)
{
    gb_snapshot *s = ctx;
    if (s->stream_db != db->id) {
        gb_snap_put_u8(s->w, GB_SNAP_OP_SELECTDB);
        gb_snap_put_varint(s->w, (uint64_t)db->id);
        s->stream_db = db->id;
    }
    gb_snap_write_key(s->w, kv);
    s->keys++;
}

/* ---- the snapshot ---------------------------------------------------------------------- */

gb_snapshot *gb_snapshot_begin(gb_engine *eng, const char *path, int level, bool background, char *err,
                               size_t errlen)
{
    if (background && eng->cow.active) {
        snprintf(err, errlen, "a snapshot is already in progress");
        return NULL;
    }
    /* A background save whose writer thread would share the engine's CPU
     * compresses on the engine thread, in pieces (snapwrite.c explains). */
    bool engine_compresses = background && !gb_helper_has_own_cpu(&eng->cfg.helper_cpus);
    gb_snap_writer *w =
        gb_snap_writer_open(path, level, eng->now_ms, &eng->cfg.helper_cpus, engine_compresses, err, errlen);
    if (!w)
        return NULL;
    gb_snapshot *s = gb_calloc(1, sizeof *s); /* out of memory here is fatal, as it was */
    s->eng = eng;
    s->w = w;
    s->stream_db = -1;
    gb_snap_write_header_records(w, eng);
    if (background) {
        /* The moment of the snapshot: every key present now becomes pending. */
        s->scan = gb_cow_scan_begin(eng, save, s);
    } else {
        s->walking = true;
        gb_htable_iter_init(&s->walk, &eng->dbs[0].keys);
    }
    return s;
}

static void end_walk(gb_snapshot *s)
{
    if (s->walking)
        gb_htable_iter_done(&s->walk);
    s->walking = false;
}

/* A write error: the scan stops (the keys not reached are marked), the
 * stream is closed so the writer reports the error. */
static void abandon_stream(gb_snapshot *s)
{
    gb_cow_scan_free(s->scan);
    s->scan = NULL;
    end_walk(s);
    gb_snap_put_u8(s->w, GB_SNAP_OP_EOF);
    gb_snap_writer_close(s->w, s->keys);
    s->scanned = true;
}

/* Nothing pending remains: the stream ends (copy-on-write has stopped). */
static void finish_stream(gb_snapshot *s)
{
    gb_snap_put_u8(s->w, GB_SNAP_OP_EOF);
    gb_snap_put_varint(s->w, s->keys);
    gb_snap_writer_close(s->w, s->keys);
    s->scanned = true;
}

/* The next 64 keys of a foreground walk: true once every database is done. */
static bool walk_some(gb_snapshot *s)
{
    gb_engine *eng = s->eng;
    for (int n = 0; n < 64;) {
        gb_hnode *node = gb_htable_iter_next(&s->walk);
        if (node) {
            save(s, &eng->dbs[s->walk_db], (gb_kv *)node);
            n++;
            continue;
        }
        gb_htable_iter_done(&s->walk);
        if (++s->walk_db >= eng->ndbs) {
            s->walking = false;
            return true;
        }
        gb_htable_iter_init(&s->walk, &eng->dbs[s->walk_db].keys);
    }
    return false;
}

/* The next 64 buckets of the scan (64 keys of a walk); the stream closed
 * after the last. */
static void scan_some(gb_snapshot *s)
{
    if (s->scan ? gb_cow_scan_some(s->scan) : walk_some(s))
        finish_stream(s);
}

/* The engine compresses (gb_snap_writer_engine_compresses): it serialises
 * while no block is queued and otherwise works on the queued ones, so
 * the backlog stays at a block or two (more after a SWAPDB's
 * copy-on-write). Done once the stream is closed and every block written;
 * the thread then finishes the file. */
static bool step_compressing(gb_snapshot *s, uint64_t deadline_ns)
{
    for (;;) {
        uint64_t now = gb_clock_mono_ns();
        if (!gb_snap_writer_pump(s->w, deadline_ns > now ? deadline_ns - now : 0)) {
            if (s->scanned)
                return true;
            if (gb_snap_writer_failed(s->w))
                return false; /* gb_snapshot_poll abandons the stream */
            scan_some(s);
        }
        if (gb_clock_mono_ns() >= deadline_ns)
            return false; /* at least one piece per step: a late deadline still moves the save on */
    }
}

bool gb_snapshot_step(gb_snapshot *s, uint64_t deadline_ns)
{
    if (gb_snap_writer_engine_compresses(s->w))
        return step_compressing(s, deadline_ns);
    if (s->scanned)
        return true;
    if (gb_snap_writer_failed(s->w))
        return false;
    if (gb_snap_writer_backlog(s->w) >= MAX_BACKLOG)
        return false; /* the writer catches up first */
    /* The clock and the backlog are read every 64 buckets: a SAVE's step
     * has no deadline, and without the backlog check here it queued the
     * whole dataset's blocks for the writer (memory: the serialised
     * dataset, not 16 MB). */
    while (!s->scanned) {
        scan_some(s);
        if (!s->scanned && (gb_clock_mono_ns() >= deadline_ns || gb_snap_writer_backlog(s->w) >= MAX_BACKLOG))
            return false;
    }
    return true;
}

int gb_snapshot_poll(gb_snapshot *s, char *err, size_t errlen)
{
    if (!s->scanned) {
        if (!gb_snap_writer_failed(s->w))
            return 0;
        abandon_stream(s);
    }
    return gb_snap_writer_poll(s->w, err, errlen);
}

/* Sleeps until the writer thread has written half the backlog (one
 * wake-up per eight blocks rather than per block): what an engine thread
 * that must finish now (SAVE) does instead of queueing without bound.
 * False once the writer has failed (nothing it is given is written any
 * more). */
static bool wait_for_writer(gb_snapshot *s) { return gb_snap_writer_wait_backlog(s->w, MAX_BACKLOG / 2); }

int gb_snapshot_run(gb_snapshot *s, char *err, size_t errlen)
{
    /* Waiting for the writer is all a foreground save can do. */
    while (!gb_snapshot_step(s, UINT64_MAX) && wait_for_writer(s))
        ;
    if (!s->scanned)
        abandon_stream(s);
    return gb_snap_writer_wait(s->w, err, errlen);
}

bool gb_snapshot_waiting(gb_snapshot *s)
{
    /* where the engine compresses, there is no one else to wait for */
    return !s->scanned && !gb_snap_writer_engine_compresses(s->w) && gb_snap_writer_backlog(s->w) >= MAX_BACKLOG;
}

bool gb_snapshot_engine_compresses(const gb_snapshot *s) { return gb_snap_writer_engine_compresses(s->w); }
uint64_t gb_snapshot_keys(const gb_snapshot *s) { return s->keys; }
uint64_t gb_snapshot_bytes(const gb_snapshot *s) { return gb_snap_writer_bytes(s->w); }
size_t gb_snapshot_peak_backlog(const gb_snapshot *s) { return gb_snap_writer_peak_backlog(s->w); }
unsigned gb_snapshot_writer_raises(const gb_snapshot *s, uint64_t *first_after_ns)
{
    return gb_snap_writer_raises(s->w, first_after_ns);
}

void gb_snapshot_free(gb_snapshot *s)
{
    if (!s)
        return;
    gb_cow_scan_free(s->scan);
    end_walk(s);
    gb_snap_writer_free(s->w);
    gb_free(s);
}
