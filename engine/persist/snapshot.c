#define _POSIX_C_SOURCE 200809L
#include "engine/persist/snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/helper_thread.h"
#include "engine/base/mem.h"
#include "engine/core/memory/lazyfree.h"
#include "engine/persist/serialize.h"
#include "engine/persist/snapfmt.h"
#include "platform/clock.h"

/* Blocks allowed to wait for the writer before the scan pauses: bounds the
 * snapshot's memory at this many MB (copy-on-write saves never pause). */
#define MAX_BACKLOG GB_SNAP_WRITER_MAX_BACKLOG

/* A table a flush took out of its database while keys in it were still
 * pending (take_db). */
typedef struct taken_table {
    gb_db *db;
    gb_htable keys;
} taken_table;

struct gb_snapshot {
    gb_engine *eng;
    gb_snap_writer *w;
    int db;           /* the database the scan is in */
    uint64_t cursor;  /* its table cursor */
    int stream_db;    /* the database of the last KEY record */
    uint64_t keys;
    bool scanned;     /* every key serialised, the stream closed */
    /* Taken tables, scanned first in the order they came (the cursor is
     * the first's), each freed once scanned. At most one per database:
     * `fresh` marks a database whose table was made after the snapshot
     * began (nothing in it is pending; the scan skips it). */
    taken_table *taken;
    int ntaken;
    uint64_t taken_cursor;
    bool *fresh;
};

/* ---- serialising one key -------------------------------------------------------------- */

static void save(gb_snapshot *s, gb_db *db, gb_kv *kv)
{
    if (s->stream_db != db->id) {
        gb_snap_put_u8(s->w, GB_SNAP_OP_SELECTDB);
        gb_snap_put_varint(s->w, (uint64_t)db->id);
        s->stream_db = db->id;
    }
    gb_snap_write_key(s->w, kv);
    kv->flags = (uint8_t)((kv->flags & ~GB_KV_COW_MARK) | s->eng->cow.mark);
    s->keys++;
}

/* The copy-on-write hook: kv is about to change or go. */
static void save_key(void *ctx, gb_db *db, gb_kv *kv) { save(ctx, db, kv); }

typedef struct scan_ctx {
    gb_snapshot *s;
    gb_db *db;
} scan_ctx;

static void scan_one(gb_hnode *n, void *ctx)
{
    scan_ctx *sc = ctx;
    gb_kv *kv = (gb_kv *)n;
    if (gb_cow_pending(&sc->s->eng->cow, kv))
        save(sc->s, sc->db, kv);
}

/* Serialises every key of db still pending (the whole table, now: SWAPDB
 * is about to exchange it with another). The blocks queue for the writer
 * beyond MAX_BACKLOG rather than hold the SWAPDB up while they are
 * written. (A flush hands its table over instead: take_db.) */
static void save_db(void *ctx, gb_db *db)
{
    scan_ctx sc = {ctx, db};
    uint64_t cur = 0;
    do
        cur = gb_htable_scan_many(&db->keys, cur, 1024, scan_one, &sc);
    while (cur);
}

/* The copy-on-write hook of a flush: db's table comes to the snapshot if
 * keys in it may still be pending (its scan has not passed it, and it is
 * not a table made since the snapshot began). */
static bool take_db(void *ctx, gb_db *db)
{
    gb_snapshot *s = ctx;
    if (s->fresh[db->id] || db->id < s->db || gb_htable_size(&db->keys) == 0)
        return false;
    s->taken[s->ntaken++] = (taken_table){db, db->keys};
    gb_htable_init(&db->keys, db->keys.type);
    s->fresh[db->id] = true;
    return true;
}

/* Frees the taken tables not scanned yet (an abandoned snapshot). */
static void free_taken(gb_snapshot *s)
{
    for (int i = 0; i < s->ntaken; i++)
        gb_lazyfree_table(s->eng, &s->taken[i].keys, NULL);
    s->ntaken = 0;
}

/* ---- the snapshot ---------------------------------------------------------------------- */

gb_snapshot *gb_snapshot_begin(gb_engine *eng, const char *path, int level, bool background, char *err,
                               size_t errlen)
{
    if (eng->cow.active) {
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
    /* gb_calloc: out of memory here is fatal, as it was */
    gb_snapshot *s = gb_calloc(1, sizeof *s);
    s->taken = gb_calloc((size_t)eng->ndbs, sizeof *s->taken);
    s->fresh = gb_calloc((size_t)eng->ndbs, sizeof *s->fresh);
    s->eng = eng;
    s->w = w;
    s->stream_db = -1;
    gb_snap_write_header_records(w, eng);
    /* The moment of the snapshot: every key present now becomes pending. */
    eng->cow.mark ^= GB_KV_COW_MARK;
    eng->cow.save_key = save_key;
    eng->cow.save_db = save_db;
    eng->cow.take_db = take_db;
    eng->cow.ctx = s;
    eng->cow.active = true;
    return s;
}

/* Marks every key still pending as saved without saving it: an abandoned
 * snapshot must leave all marks equal, or the next one would take the keys
 * it did not reach for already saved. */
static void mark_rest(gb_snapshot *s)
{
    gb_engine *eng = s->eng;
    uint8_t mark = eng->cow.mark;
    for (int d = 0; d < eng->ndbs; d++) {
        gb_htable_iter it;
        gb_htable_iter_init(&it, &eng->dbs[d].keys);
        for (gb_hnode *n; (n = gb_htable_iter_next(&it));) {
            gb_kv *kv = (gb_kv *)n;
            kv->flags = (uint8_t)((kv->flags & ~GB_KV_COW_MARK) | mark);
        }
        gb_htable_iter_done(&it);
    }
}

/* A write error: the keys not reached are marked, the stream closed so the
 * writer reports the error. */
static void abandon_stream(gb_snapshot *s)
{
    mark_rest(s);
    free_taken(s);
    gb_snap_put_u8(s->w, GB_SNAP_OP_EOF);
    gb_snap_writer_close(s->w, s->keys);
    s->eng->cow.active = false;
    s->scanned = true;
}

/* Nothing pending remains: the stream ends, copy-on-write stops. */
static void finish_stream(gb_snapshot *s)
{
    gb_snap_put_u8(s->w, GB_SNAP_OP_EOF);
    gb_snap_put_varint(s->w, s->keys);
    gb_snap_writer_close(s->w, s->keys);
    s->eng->cow.active = false;
    s->scanned = true;
}

/* The next 64 buckets of the scan (a bucket holds a key or two): of a
 * taken table first, then of the databases; the stream closed after the
 * last. */
static void scan_some(gb_snapshot *s)
{
    gb_engine *eng = s->eng;
    if (s->ntaken > 0) {
        taken_table *t = &s->taken[0];
        scan_ctx sc = {s, t->db};
        s->taken_cursor = gb_htable_scan_many(&t->keys, s->taken_cursor, 64, scan_one, &sc);
        if (s->taken_cursor == 0) {
            gb_lazyfree_table(eng, &t->keys, NULL);
            memmove(&s->taken[0], &s->taken[1], (size_t)(--s->ntaken) * sizeof *s->taken);
        }
        return;
    }
    while (s->db < eng->ndbs && s->fresh[s->db]) {
        s->db++;
        s->cursor = 0;
    }
    if (s->db < eng->ndbs) {
        gb_db *db = &eng->dbs[s->db];
        scan_ctx sc = {s, db};
        s->cursor = gb_htable_scan_many(&db->keys, s->cursor, 64, scan_one, &sc);
        if (s->cursor == 0)
            s->db++;
    }
    if (s->db >= eng->ndbs)
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
    if (!s->scanned) {
        mark_rest(s);
        free_taken(s);
        s->eng->cow.active = false;
    }
    s->eng->cow.ctx = NULL;
    gb_snap_writer_free(s->w);
    gb_free(s->taken);
    gb_free(s->fresh);
    gb_free(s);
}
