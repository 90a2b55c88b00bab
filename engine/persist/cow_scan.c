#define _POSIX_C_SOURCE 200809L
#include "engine/persist/cow_scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/mem.h"
#include "engine/core/memory/lazyfree.h"

/* A table a flush took out of its database while keys in it were still
 * pending (take_db). */
typedef struct taken_table {
    gb_db *db;
    gb_htable keys;
} taken_table;

struct gb_cow_scan {
    gb_engine *eng;
    gb_cow_emit emit;
    void *ctx;
    int db;          /* the database the scan is in */
    uint64_t cursor; /* its table cursor */
    uint64_t keys;
    bool done;
    /* Taken tables, scanned first in the order they came (the cursor is
     * the first's), each freed once scanned. At most one per database:
     * `fresh` marks a database whose table was made after the scan began
     * (nothing in it is pending; the scan skips it). */
    taken_table *taken;
    int ntaken;
    uint64_t taken_cursor;
    bool *fresh;
};

static void save(gb_cow_scan *s, gb_db *db, gb_kv *kv)
{
    s->emit(s->ctx, db, kv);
    kv->flags = (uint8_t)((kv->flags & ~GB_KV_COW_MARK) | s->eng->cow.mark);
    s->keys++;
}

/* The copy-on-write hook: kv is about to change or go. */
static void save_key(void *ctx, gb_db *db, gb_kv *kv) { save(ctx, db, kv); }

typedef struct scan_ctx {
    gb_cow_scan *s;
    gb_db *db;
} scan_ctx;

static void scan_one(gb_hnode *n, void *ctx)
{
    scan_ctx *sc = ctx;
    gb_kv *kv = (gb_kv *)n;
    if (gb_cow_pending(&sc->s->eng->cow, kv))
        save(sc->s, sc->db, kv);
}

/* Emits every key of db still pending (the whole table, now: SWAPDB is
 * about to exchange it with another). (A flush hands its table over
 * instead: take_db.) */
static void save_db(void *ctx, gb_db *db)
{
    scan_ctx sc = {ctx, db};
    uint64_t cur = 0;
    do
        cur = gb_htable_scan_many(&db->keys, cur, 1024, scan_one, &sc);
    while (cur);
}

/* The copy-on-write hook of a flush: db's table comes to the scan if keys
 * in it may still be pending (the scan has not passed it, and it is not a
 * table made since the scan began). */
static bool take_db(void *ctx, gb_db *db)
{
    gb_cow_scan *s = ctx;
    if (s->fresh[db->id] || db->id < s->db || gb_htable_size(&db->keys) == 0)
        return false;
    s->taken[s->ntaken++] = (taken_table){db, db->keys};
    gb_htable_init(&db->keys, db->keys.type);
    s->fresh[db->id] = true;
    return true;
}

static void free_taken(gb_cow_scan *s)
{
    for (int i = 0; i < s->ntaken; i++)
        gb_lazyfree_table(s->eng, &s->taken[i].keys, NULL);
    s->ntaken = 0;
}

gb_cow_scan *gb_cow_scan_begin(gb_engine *eng, gb_cow_emit emit, void *ctx)
{
    if (eng->cow.active)
        return NULL;
    /* gb_calloc: out of memory here is fatal, as it was */
    gb_cow_scan *s = gb_calloc(1, sizeof *s);
    s->taken = gb_calloc((size_t)eng->ndbs, sizeof *s->taken);
    s->fresh = gb_calloc((size_t)eng->ndbs, sizeof *s->fresh);
    s->eng = eng;
    s->emit = emit;
    s->ctx = ctx;
    /* The moment of the snapshot: every key present now becomes pending. */
    eng->cow.mark ^= GB_KV_COW_MARK;
    eng->cow.save_key = save_key;
    eng->cow.save_db = save_db;
    eng->cow.take_db = take_db;
    eng->cow.ctx = s;
    eng->cow.active = true;
    return s;
}

static void finish(gb_cow_scan *s)
{
    s->eng->cow.active = false;
    s->eng->cow.ctx = NULL;
    s->done = true;
}

bool gb_cow_scan_some(gb_cow_scan *s)
{
    gb_engine *eng = s->eng;
    if (s->done)
        return true;
    if (s->ntaken > 0) {
        taken_table *t = &s->taken[0];
        scan_ctx sc = {s, t->db};
        s->taken_cursor = gb_htable_scan_many(&t->keys, s->taken_cursor, 64, scan_one, &sc);
        if (s->taken_cursor == 0) {
            gb_lazyfree_table(eng, &t->keys, NULL);
            memmove(&s->taken[0], &s->taken[1], (size_t)(--s->ntaken) * sizeof *s->taken);
        }
        return false;
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
        finish(s);
    return s->done;
}

bool gb_cow_scan_done(const gb_cow_scan *s) { return s->done; }
uint64_t gb_cow_scan_keys(const gb_cow_scan *s) { return s->keys; }

/* Marks every key still pending as saved without emitting it: an abandoned
 * scan must leave all marks equal, or the next one would take the keys it
 * did not reach for already saved. */
static void mark_rest(gb_cow_scan *s)
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

void gb_cow_scan_free(gb_cow_scan *s)
{
    if (!s)
        return;
    if (!s->done) {
        mark_rest(s);
        free_taken(s);
        finish(s);
    }
    gb_free(s->taken);
    gb_free(s->fresh);
    gb_free(s);
}
