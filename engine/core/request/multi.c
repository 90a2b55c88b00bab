#include "engine/core/request/multi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/engine.h"
#include "engine/core/request/gate.h"
#include "engine/base/mem.h"

/* ---- the watched-keys registry ------------------------------------------------ */

/* One client watching the key. expired: the key was already expired (in
 * the table, past its time) when it was watched; its deletion then is no
 * change (Redis 7.0's watchedKey.expired). */
typedef struct watcher {
    gb_client *c;
    bool expired;
} watcher;

typedef struct watch_rec {
    gb_hnode node;
    watcher *clients;
    uint32_t n, cap;
    uint32_t keylen;
    char key[];
} watch_rec;

static uint64_t wr_hash(const gb_hnode *n)
{
    const watch_rec *r = (const watch_rec *)n;
    return gb_hash_bytes(r->key, r->keylen);
}

static bool wr_eq(const gb_hnode *n, const void *key)
{
    const watch_rec *r = (const watch_rec *)n;
    const gb_slice *k = key;
    return r->keylen == k->len && memcmp(r->key, k->ptr, k->len) == 0;
}

static const gb_htable_type watch_type = {wr_hash, wr_eq};

void gb_multi_db_init(gb_db *db) { gb_htable_init(&db->watched, &watch_type); }

static void free_wr(gb_hnode *n, void *ctx)
{
    (void)ctx;
    watch_rec *r = (watch_rec *)n;
    gb_free(r->clients);
    gb_free(r);
}

void gb_multi_db_destroy(gb_db *db) { gb_htable_clear(&db->watched, free_wr, NULL); }

/* Whether key is in db's table but past its expiry (Redis's keyIsExpired:
 * nothing is deleted). */
static bool key_is_expired(gb_db *db, gb_slice key, uint64_t h)
{
    const gb_kv *kv = (const gb_kv *)gb_htable_find(&db->keys, &key, h);
    return kv && gb_kv_expired_at(kv, db->eng->now_ms);
}

void gb_multi_touch_key(gb_db *db, gb_slice key)
{
    if (gb_htable_size(&db->watched) == 0)
        return;
    uint64_t h = gb_hash_slice(key);
    watch_rec *r = (watch_rec *)gb_htable_find(&db->watched, &key, h);
    if (!r)
        return;
    bool present = gb_htable_find(&db->keys, &key, h) != NULL;
    for (uint32_t i = 0; i < r->n; i++) {
        watcher *w = &r->clients[i];
        if (w->expired && !present) {
            /* Watched already expired, now gone: logically no change. */
            w->expired = false;
            continue;
        }
        w->c->flags |= GB_CLIENT_DIRTY_CAS;
    }
}

void gb_multi_touch_swap(gb_db *emptied, gb_db *replaced_with)
{
    if (gb_htable_size(&emptied->watched) == 0)
        return;
    gb_htable_iter it;
    gb_htable_iter_init(&it, &emptied->watched);
    for (gb_hnode *n; (n = gb_htable_iter_next(&it));) {
        watch_rec *r = (watch_rec *)n;
        gb_slice key = gb_slice_make(r->key, r->keylen);
        uint64_t h = gb_hash_slice(key);
        /* Only keys that existed (or will exist after a swap) changed, and
         * an expired key is no key (Redis 7.0's touchAllWatchedKeysInDb). */
        bool in_emptied = gb_htable_find(&emptied->keys, &key, h) != NULL;
        bool in_replacement = replaced_with && gb_htable_find(&replaced_with->keys, &key, h);
        if (!in_emptied && !in_replacement)
            continue;
        for (uint32_t i = 0; i < r->n; i++) {
            watcher *w = &r->clients[i];
            if (w->expired) {
                if (!in_replacement) {
                    w->expired = false; /* expired, now gone: no change */
                    continue;
                }
                if (key_is_expired(replaced_with, key, h))
                    continue; /* expired, still expired */
            } else if (!in_emptied && key_is_expired(replaced_with, key, h)) {
                w->expired = true; /* a missing key replaced by an expired one */
                continue;
            }
            w->c->flags |= GB_CLIENT_DIRTY_CAS;
        }
    }
    gb_htable_iter_done(&it);
}

void gb_multi_watch_key(gb_client *c, gb_slice key)
{
    for (int i = 0; i < c->nwatched; i++)
        if (c->watched[i].dbid == c->db->id && gb_slice_eq(c->watched[i].key, key))
            return;
    gb_db *db = c->db;
    uint64_t h = gb_hash_slice(key);
    watch_rec *r = (watch_rec *)gb_htable_find(&db->watched, &key, h);
    if (!r) {
        r = gb_malloc(sizeof *r + key.len);
        memset(r, 0, sizeof *r);
        r->keylen = (uint32_t)key.len;
        memcpy(r->key, key.ptr, key.len);
        gb_htable_insert(&db->watched, &r->node, h);
    }
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 4;
        r->clients = gb_realloc(r->clients, r->cap * sizeof *r->clients);
    }
    r->clients[r->n].c = c;
    r->clients[r->n++].expired = key_is_expired(db, key, gb_hash_slice(key));
    if (c->nwatched == c->watchcap) {
        c->watchcap = c->watchcap ? c->watchcap * 2 : 4;
        c->watched = gb_realloc(c->watched, (size_t)c->watchcap * sizeof *c->watched);
    }
    /* The client's copy of the key points at the registry record's bytes,
     * which live exactly as long as the client watches the key. */
    c->watched[c->nwatched].dbid = db->id;
    c->watched[c->nwatched].key = gb_slice_make(r->key, r->keylen);
    c->nwatched++;
}

void gb_multi_unwatch_all(gb_client *c)
{
    for (int i = 0; i < c->nwatched; i++) {
        gb_db *db = &c->eng->dbs[c->watched[i].dbid];
        gb_slice key = c->watched[i].key;
        uint64_t h = gb_hash_slice(key);
        watch_rec *r = (watch_rec *)gb_htable_find(&db->watched, &key, h);
        if (!r)
            continue;
        for (uint32_t j = 0; j < r->n; j++)
            if (r->clients[j].c == c) {
                r->clients[j] = r->clients[--r->n];
                break;
            }
        if (r->n == 0) {
            gb_htable_remove(&db->watched, &key, h);
            free_wr(&r->node, NULL);
        }
    }
    c->nwatched = 0;
    c->flags &= ~GB_CLIENT_DIRTY_CAS;
}

/* Whether one of c's watched keys has expired since it was watched:
 * still in its table, past its time, and not already so when WATCH ran
 * (Redis 7.0's isWatchedKeyExpired). EXEC then fails as after a change,
 * whether or not expiry has deleted the key yet. */
static bool watched_key_expired(gb_client *c)
{
    for (int i = 0; i < c->nwatched; i++) {
        gb_db *db = &c->eng->dbs[c->watched[i].dbid];
        gb_slice key = c->watched[i].key;
        uint64_t h = gb_hash_slice(key);
        if (!key_is_expired(db, key, h))
            continue;
        const watch_rec *r = (const watch_rec *)gb_htable_find(&db->watched, &key, h);
        for (uint32_t j = 0; r && j < r->n; j++)
            if (r->clients[j].c == c && !r->clients[j].expired)
                return true;
    }
    return false;
}

/* ---- the queue ------------------------------------------------------------------ */

void gb_multi_queue(gb_client *c, gb_command *cmd, uint32_t flags, int argc, gb_slice *argv)
{
    if (c->flags & (GB_CLIENT_DIRTY_EXEC | GB_CLIENT_DIRTY_CAS)) { /* EXEC will run none of it */
        gb_reply_status(c, "QUEUED");
        return;
    }
    if (c->mcount == c->mcap) {
        c->mcap = c->mcap ? c->mcap * 2 : 8;
        c->mqueue = gb_realloc(c->mqueue, (size_t)c->mcap * sizeof *c->mqueue);
    }
    c->mqueue[c->mcount] = gb_argv_copy_make(cmd, argc, argv);
    c->mbytes += gb_argv_copy_bytes(&c->mqueue[c->mcount++]);
    c->mcmd_flags |= flags;
    gb_reply_status(c, "QUEUED");
}

void gb_multi_discard(gb_client *c)
{
    for (int i = 0; i < c->mcount; i++)
        gb_argv_copy_free(&c->mqueue[i]);
    gb_free(c->mqueue);
    c->mqueue = NULL;
    c->mcount = c->mcap = 0;
    c->mbytes = 0;
    c->mcmd_flags = 0;
    c->flags &= ~(GB_CLIENT_MULTI | GB_CLIENT_DIRTY_EXEC | GB_CLIENT_DIRTY_CAS);
}

/* ---- EXEC --------------------------------------------------------------------- */

void gb_multi_exec_proc(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    if (!(c->flags & GB_CLIENT_MULTI)) {
        gb_reply_error(c, "ERR EXEC without MULTI");
        return;
    }
    if (c->flags & GB_CLIENT_DIRTY_EXEC) {
        gb_reply_error(c, "EXECABORT Transaction discarded because of previous errors.");
        gb_multi_discard(c);
        gb_multi_unwatch_all(c);
        return;
    }
    if (c->nwatched && watched_key_expired(c))
        c->flags |= GB_CLIENT_DIRTY_CAS;
    if (c->flags & GB_CLIENT_DIRTY_CAS) {
        gb_reply_nil_array(c);
        gb_multi_discard(c);
        gb_multi_unwatch_all(c);
        return;
    }
    /* Unwatch first: the transaction's own writes must not mark it dirty. */
    gb_multi_unwatch_all(c);
    gb_argv_copy *queue = c->mqueue;
    int n = c->mcount;
    c->mqueue = NULL;
    c->mcount = c->mcap = 0;
    c->mbytes = 0;
    c->mcmd_flags = 0;
    c->flags &= ~GB_CLIENT_MULTI;
    c->flags |= GB_CLIENT_IN_EXEC;
    gb_reply_array(c, n);
    /* Each queued command is a nested call of the gate: its statistics and
     * effects; the effects of the whole EXEC are one unit (MULTI ... EXEC to
     * the sinks), and ready keys are served once it is all done. The memory
     * check was made for the whole transaction when EXEC was admitted, as
     * Redis 7.0 does. */
    for (int i = 0; i < n; i++) {
        gb_gate_call_queued(c, (gb_command *)queue[i].cmd, queue[i].argc, queue[i].argv);
        gb_argv_copy_free(&queue[i]);
    }
    gb_free(queue);
    c->flags &= ~GB_CLIENT_IN_EXEC;
    if (GB_UNLIKELY(c->deferred_pushes != NULL))
        gb_reply_flush_deferred_pushes(c, true);
}
