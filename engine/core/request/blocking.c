#include "engine/core/request/blocking.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "engine/core/cluster_mode.h"
#include "engine/core/engine.h"
#include "engine/core/request/gate.h"
#include "engine/core/replication/repl.h"
#include "engine/core/shutdown.h"
#include "engine/base/mem.h"
#include "engine/core/request/multi.h"
#include "engine/base/util.h"

/* A key's FIFO of waiting clients. */
typedef struct wait_queue {
    gb_hnode node;
    gb_client **q;
    uint32_t n, cap;
    uint32_t nchecked; /* waiters blocked with a check (they care about a key that is gone) */
    bool ready; /* already in the engine's ready list */
    uint32_t keylen;
    char key[];
} wait_queue;

/* Per blocked client. */
typedef struct gb_blocked {
    gb_argv_copy cmd;
    int dbid;
    int nkeys;
    gb_slice *keys;   /* point into the wait_queue records' bytes */
    uint64_t deadline; /* monotonic ms, 0 = forever */
    size_t heap_idx;   /* position in the deadline heap, SIZE_MAX if none */
    enum gb_type wait_type; /* the value type that can serve it */
    bool postponed;    /* CLIENT PAUSE: no keys, no deadline; in eng->postponed */
    const gb_wait_check *check; /* or NULL: any value of wait_type serves it */
    void *check_ctx;
} gb_blocked;

/* What a blocked client leaves behind once detached: its command and its
 * check's state, freed after the command is re-executed. */
typedef struct captured {
    gb_argv_copy cmd;
    const gb_wait_check *check;
    void *check_ctx;
} captured;

static void captured_free(captured *k)
{
    gb_argv_copy_free(&k->cmd);
    if (k->check)
        k->check->free(k->check_ctx);
}

typedef struct gb_ready_key {
    int dbid;
    gb_slice key; /* owned */
} gb_ready_key;

/* ---- wait queues ------------------------------------------------------------ */

static uint64_t wq_hash(const gb_hnode *n)
{
    const wait_queue *w = (const wait_queue *)n;
    return gb_hash_bytes(w->key, w->keylen);
}

static bool wq_eq(const gb_hnode *n, const void *key)
{
    const wait_queue *w = (const wait_queue *)n;
    const gb_slice *k = key;
    return w->keylen == k->len && memcmp(w->key, k->ptr, k->len) == 0;
}

static const gb_htable_type wq_type = {wq_hash, wq_eq};

void gb_blocking_db_init(gb_db *db) { gb_htable_init(&db->blocking, &wq_type); }

static void free_wq(gb_hnode *n, void *ctx)
{
    (void)ctx;
    wait_queue *w = (wait_queue *)n;
    gb_free(w->q);
    gb_free(w);
}

void gb_blocking_db_destroy(gb_db *db) { gb_htable_clear(&db->blocking, free_wq, NULL); }

void gb_blocking_engine_destroy(gb_engine *eng)
{
    for (size_t i = 0; i < eng->nready; i++)
        gb_free((void *)eng->ready_keys[i].key.ptr);
    gb_free(eng->ready_keys);
    eng->ready_keys = NULL;
    eng->nready = eng->readycap = 0;
    gb_free(eng->bheap);
    eng->bheap = NULL;
    eng->nbheap = eng->bheapcap = 0;
    gb_free(eng->postponed);
    eng->postponed = NULL;
    eng->npostponed = eng->postponedcap = 0;
}

size_t gb_blocking_waiters(gb_db *db, gb_slice key)
{
    wait_queue *w = (wait_queue *)gb_htable_find(&db->blocking, &key, gb_hash_slice(key));
    return w ? w->n : 0;
}

/* ---- deadline heap (min-heap on deadline, intrusive index in gb_blocked) ---- */

static void heap_set(gb_engine *eng, size_t i, gb_client *c)
{
    eng->bheap[i] = c;
    c->blocked->heap_idx = i;
}

static void heap_up(gb_engine *eng, size_t i)
{
    gb_client *c = eng->bheap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (eng->bheap[p]->blocked->deadline <= c->blocked->deadline)
            break;
        heap_set(eng, i, eng->bheap[p]);
        i = p;
    }
    heap_set(eng, i, c);
}

static void heap_down(gb_engine *eng, size_t i)
{
    gb_client *c = eng->bheap[i];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        uint64_t md = c->blocked->deadline;
        if (l < eng->nbheap && eng->bheap[l]->blocked->deadline < md) {
            m = l;
            md = eng->bheap[l]->blocked->deadline;
        }
        if (r < eng->nbheap && eng->bheap[r]->blocked->deadline < md)
            m = r;
        if (m == i)
            break;
        heap_set(eng, i, eng->bheap[m]);
        i = m;
    }
    heap_set(eng, i, c);
}

static void heap_push(gb_engine *eng, gb_client *c)
{
    if (eng->nbheap == eng->bheapcap) {
        eng->bheapcap = eng->bheapcap ? eng->bheapcap * 2 : 16;
        eng->bheap = gb_realloc(eng->bheap, eng->bheapcap * sizeof *eng->bheap);
    }
    eng->bheap[eng->nbheap] = c;
    c->blocked->heap_idx = eng->nbheap;
    eng->nbheap++;
    heap_up(eng, eng->nbheap - 1);
}

static void heap_remove(gb_engine *eng, gb_client *c)
{
    size_t i = c->blocked->heap_idx;
    if (i == SIZE_MAX)
        return;
    c->blocked->heap_idx = SIZE_MAX;
    gb_client *last = eng->bheap[--eng->nbheap];
    if (i == eng->nbheap)
        return;
    heap_set(eng, i, last);
    heap_down(eng, i);
    heap_up(eng, last->blocked->heap_idx);
}

uint64_t gb_blocking_next_deadline(const gb_engine *eng)
{
    uint64_t due = eng->nbheap ? eng->bheap[0]->blocked->deadline : 0;
    /* The end of a pause that holds clients is a deadline too. */
    if (eng->npostponed && eng->pause_end_ms && (!due || eng->pause_end_ms < due))
        due = eng->pause_end_ms;
    return due;
}

/* ---- timeouts -------------------------------------------------------------------- */

bool gb_blocking_allowed(const gb_client *c)
{
    /* Nor the log's replay (an OBEY client, as Redis's AOF client is a fake
     * one that never blocks): a BLPOP found in a log answers at once. */
    return !(c->flags & (GB_CLIENT_IN_EXEC | GB_CLIENT_MULTI | GB_CLIENT_SCRIPT | GB_CLIENT_OBEY));
}

bool gb_blocking_parse_timeout(gb_client *c, gb_slice arg, uint64_t *deadline_ms)
{
    /* Redis 7.0 (timeout.c getTimeoutFromObjectOrReply, UNIT_SECONDS):
     *   string2ld: strtold on at most 5 KiB; leading whitespace, trailing
     *   garbage, NaN, EINVAL, and ERANGE overflow or underflow to zero are
     *   "not a float or out of range" (inf is accepted);
     *   tval = (long long)ceill(secs * 1000): sub-millisecond timeouts wait
     *   1 ms, and -0.0009 s rounds to 0 = forever;
     *   tval < 0 is "timeout is negative". A product outside long long
     *   (inf, 1e16 s) converts to LLONG_MIN on x86-64, so Redis calls it
     *   negative too: we do the same on every platform. Any other value is
     *   accepted (a deadline centuries away). */
    /* Fast path: up to 9 plain digits ("0", "1", "30": what queues send)
     * are exactly what strtold would make of them, and whole seconds are
     * whole milliseconds: no long double arithmetic. */
    uint64_t ims;
    uint32_t isecs = 0;
    size_t i = 0;
    while (i < arg.len && i < 9 && arg.ptr[i] >= '0' && arg.ptr[i] <= '9')
        isecs = isecs * 10 + (uint32_t)(arg.ptr[i++] - '0');
    if (i > 0 && i == arg.len) {
        ims = (uint64_t)isecs * 1000u;
    } else {
        char buf[5 * 1024]; /* Redis's MAX_LONG_DOUBLE_CHARS */
        if (arg.len == 0 || arg.len >= sizeof buf) {
            gb_reply_error(c, "ERR timeout is not a float or out of range");
            return false;
        }
        memcpy(buf, arg.ptr, arg.len);
        buf[arg.len] = '\0';
        char *end;
        errno = 0;
        long double secs = strtold(buf, &end);
        if (isspace((unsigned char)buf[0]) || *end != '\0' ||
            (errno == ERANGE && (secs == HUGE_VALL || secs == -HUGE_VALL || fpclassify(secs) == FP_ZERO)) ||
            errno == EINVAL || isnan(secs)) {
            gb_reply_error(c, "ERR timeout is not a float or out of range");
            return false;
        }
        long double ms = ceill(secs * 1000.0L);
        if (!(ms >= -9223372036854775808.0L && ms < 9223372036854775808.0L) || ms < 0) {
            gb_reply_error(c, "ERR timeout is negative");
            return false;
        }
        ims = (uint64_t)ms; /* < 2^63: now + ims cannot wrap */
    }
    if (c->flags & GB_CLIENT_REEXEC) {
        *deadline_ms = c->reexec_deadline;
        return true;
    }
    *deadline_ms = ims ? c->eng->now_mono_ms + ims : 0;
    return true;
}

bool gb_blocking_parse_timeout_ms(gb_client *c, gb_slice arg, uint64_t *deadline_ms)
{
    /* Redis 7.0 (getTimeoutFromObjectOrReply, UNIT_MILLISECONDS): a long
     * long, else "timeout is not an integer or out of range"; negative is
     * "timeout is negative". Redis adds it to the clock unchecked (a value
     * near LLONG_MAX crashes 7.0.15): here the sum saturates, a wait with
     * no end. */
    int64_t ms;
    if (!gb_slice2ll(arg, &ms)) {
        gb_reply_error(c, "ERR timeout is not an integer or out of range");
        return false;
    }
    if (ms < 0) {
        gb_reply_error(c, "ERR timeout is negative");
        return false;
    }
    if (c->flags & GB_CLIENT_REEXEC) {
        *deadline_ms = c->reexec_deadline;
        return true;
    }
    uint64_t now = c->eng->now_mono_ms;
    *deadline_ms = ms == 0 ? 0 : ((uint64_t)ms > UINT64_MAX - now ? UINT64_MAX : now + (uint64_t)ms);
    return true;
}

void gb_blocking_ready_keys(const gb_client *c, const gb_slice **keys, int *nkeys)
{
    if (!(c->flags & GB_CLIENT_REEXEC))
        return;
    for (int i = 0; i < *nkeys; i++) {
        if (gb_slice_eq((*keys)[i], c->reexec_key)) {
            *keys += i;
            *nkeys = 1;
            return;
        }
    }
}

/* ---- block / unblock --------------------------------------------------------------- */

static void block_generic(gb_client *c, const gb_slice *keys, int nkeys, uint64_t deadline_ms, enum gb_type wait_type,
                          int argc, const gb_slice *argv, const gb_wait_check *check, void *check_ctx)
{
    gb_engine *eng = c->eng;
    gb_blocked *b = gb_malloc(sizeof *b);
    b->cmd = gb_argv_copy_make(c->last_cmd, argc, argv);
    b->dbid = c->db->id;
    b->nkeys = 0;
    b->keys = gb_malloc((size_t)nkeys * sizeof *b->keys);
    b->deadline = deadline_ms;
    b->heap_idx = SIZE_MAX;
    b->wait_type = wait_type;
    b->postponed = false;
    b->check = check;
    b->check_ctx = check_ctx;
    c->blocked = b;
    c->flags |= GB_CLIENT_BLOCKED;

    for (int i = 0; i < nkeys; i++) {
        gb_slice key = keys[i];
        uint64_t h = gb_hash_slice(key);
        wait_queue *w = (wait_queue *)gb_htable_find(&c->db->blocking, &key, h);
        /* A key named twice: c was not blocked before this loop, so if it
         * waits on this key already it is the queue's last, put there by
         * this loop (a constant-time check: comparing with every key so far
         * made BLPOP of 100,000 keys hold the server for 12 s). */
        if (w && w->n > 0 && w->q[w->n - 1] == c)
            continue;
        if (!w) {
            w = gb_malloc(sizeof *w + key.len);
            memset(w, 0, sizeof *w);
            w->keylen = (uint32_t)key.len;
            memcpy(w->key, key.ptr, key.len);
            gb_htable_insert(&c->db->blocking, &w->node, h);
        }
        if (w->n == w->cap) {
            w->cap = w->cap ? w->cap * 2 : 4;
            w->q = gb_realloc(w->q, w->cap * sizeof *w->q);
        }
        w->q[w->n++] = c;
        w->nchecked += check != NULL;
        b->keys[b->nkeys++] = gb_slice_make(w->key, w->keylen);
    }
    if (deadline_ms)
        heap_push(eng, c);
    eng->blocked_clients++;
}

void gb_blocking_block(gb_client *c, const gb_slice *keys, int nkeys, uint64_t deadline_ms, enum gb_type wait_type,
                       int argc, const gb_slice *argv)
{
    block_generic(c, keys, nkeys, deadline_ms, wait_type, argc, argv, NULL, NULL);
}

void gb_blocking_block_checked(gb_client *c, const gb_slice *keys, int nkeys, uint64_t deadline_ms, int argc,
                               const gb_slice *argv, const gb_wait_check *check, void *ctx)
{
    block_generic(c, keys, nkeys, deadline_ms, GB_TYPE_COUNT, argc, argv, check, ctx);
}

/* Removes c from every wait queue and the heap; frees its blocked state but
 * returns what it captured (the caller frees it with captured_free). */
static captured detach(gb_client *c)
{
    gb_engine *eng = c->eng;
    gb_blocked *b = c->blocked;
    gb_db *db = &eng->dbs[b->dbid];
    for (int i = 0; i < b->nkeys; i++) {
        gb_slice key = b->keys[i];
        uint64_t h = gb_hash_slice(key);
        wait_queue *w = (wait_queue *)gb_htable_find(&db->blocking, &key, h);
        if (!w)
            continue;
        for (uint32_t j = 0; j < w->n; j++)
            if (w->q[j] == c) {
                memmove(&w->q[j], &w->q[j + 1], (w->n - j - 1) * sizeof *w->q);
                w->n--;
                w->nchecked -= b->check != NULL;
                break;
            }
        if (w->n == 0) {
            gb_htable_remove(&db->blocking, &key, h);
            free_wq(&w->node, NULL);
        }
    }
    heap_remove(eng, c);
    if (b->postponed) {
        for (size_t i = 0; i < eng->npostponed; i++)
            if (eng->postponed[i] == c) {
                memmove(&eng->postponed[i], &eng->postponed[i + 1], (eng->npostponed - i - 1) * sizeof *eng->postponed);
                eng->npostponed--;
                break;
            }
    }
    captured k = {b->cmd, b->check, b->check_ctx};
    gb_free(b->keys);
    gb_free(b);
    c->blocked = NULL;
    c->flags &= ~GB_CLIENT_BLOCKED;
    eng->blocked_clients--;
    return k;
}

void gb_blocking_unblock(gb_client *c, enum gb_unblock_reason why)
{
    if (!(c->flags & GB_CLIENT_BLOCKED))
        return;
    captured k = detach(c);
    bool wait = gb_repl_is_wait(&k.cmd);
    if (gb_shutdown_is_waiter(&k.cmd))
        gb_shutdown_waiter_gone(c);
    captured_free(&k);
    /* WAIT leaves the replicas' wait list; on timeout it answers how many
     * did acknowledge. */
    if (wait)
        gb_repl_wait_end(c, why == GB_UNBLOCK_TIMEOUT);
    switch (why) {
    case GB_UNBLOCK_TIMEOUT:
        if (!wait)
            gb_reply_nil_array(c);
        break;
    case GB_UNBLOCK_ERROR:
        gb_reply_error(c, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
        break;
    case GB_UNBLOCK_SERVED:
    case GB_UNBLOCK_DISCONNECT:
        return;
    }
    gb_client_command_done(c);
    if (c->hooks && c->hooks->flush)
        c->hooks->flush(c);
}

size_t gb_blocking_expire(gb_engine *eng)
{
    /* A pause whose end came: its clients run now (the server's timer
     * fires at gb_blocking_next_deadline, outside any command). */
    if (eng->npostponed && gb_pause_check(eng) == GB_PAUSE_NONE)
        gb_pause_resume(eng);
    size_t n = 0;
    uint64_t now = gb_clock_mono_ms();
    while (eng->nbheap && eng->bheap[0]->blocked->deadline <= now) {
        gb_blocking_unblock(eng->bheap[0], GB_UNBLOCK_TIMEOUT);
        n++;
    }
    return n;
}

/* In cluster mode, from the cron as Redis's clients cron does: a client
 * waiting for keys whose slot went to another node, or whose cluster is
 * down, gets the error its command would get now (-MOVED, -CLUSTERDOWN)
 * rather than wait here for a push that will never come; cluster clients
 * follow the MOVED and block again on the new owner. */
static void redirect_blocked(gb_engine *eng)
{
    for (gb_client *c = eng->clients; c; c = c->next) {
        gb_blocked *b = c->blocked;
        if (!(c->flags & GB_CLIENT_BLOCKED) || !b || b->postponed || b->nkeys == 0)
            continue;
        char buf[320];
        bool writes = b->cmd.cmd && (b->cmd.cmd->flags & GB_CMD_WRITE);
        const char *err = gb_cluster_blocked_redirection(c, b->keys[0], writes, buf, sizeof buf);
        if (!err)
            continue;
        captured k = detach(c);
        captured_free(&k);
        gb_reply_error(c, err);
        gb_client_command_done(c);
        if (c->hooks && c->hooks->flush)
            c->hooks->flush(c);
    }
}

void gb_blocking_cron(gb_engine *eng)
{
    gb_blocking_expire(eng);
    if (GB_UNLIKELY(eng->cluster != NULL))
        redirect_blocked(eng);
    gb_pause_check(eng);
    gb_pause_resume(eng);
}

/* ---- readiness ------------------------------------------------------------------------ */

void gb_blocking_signal_key(gb_db *db, gb_slice key)
{
    if (gb_htable_size(&db->blocking) == 0)
        return;
    wait_queue *w = (wait_queue *)gb_htable_find(&db->blocking, &key, gb_hash_slice(key));
    if (!w || w->ready)
        return;
    w->ready = true;
    gb_engine *eng = db->eng;
    if (eng->nready == eng->readycap) {
        eng->readycap = eng->readycap ? eng->readycap * 2 : 8;
        eng->ready_keys = gb_realloc(eng->ready_keys, eng->readycap * sizeof *eng->ready_keys);
    }
    eng->ready_keys[eng->nready].dbid = db->id;
    eng->ready_keys[eng->nready].key = gb_slice_make(gb_memdup(key.ptr, key.len), key.len);
    eng->nready++;
}

void gb_blocking_signal_db(gb_db *db)
{
    if (gb_htable_size(&db->blocking) == 0)
        return;
    /* Signalling does not modify db->blocking: iterating while it does is
     * safe. A key gone matters to checked waiters (XREADGROUP fails). */
    gb_htable_iter it;
    gb_htable_iter_init(&it, &db->blocking);
    for (gb_hnode *n; (n = gb_htable_iter_next(&it));) {
        wait_queue *w = (wait_queue *)n;
        gb_slice key = gb_slice_make(w->key, w->keylen);
        if (!w->ready && (w->nchecked || gb_htable_find(&db->keys, &key, gb_hash_slice(key))))
            gb_blocking_signal_key(db, key);
    }
    gb_htable_iter_done(&it);
}

/* Re-executes c's blocked command (the form `serve` built, when it did),
 * with its original deadline. */
static void reexecute(gb_client *c, captured *k, struct gb_argv_builder *serve, uint64_t deadline, gb_slice key)
{
    c->flags |= GB_CLIENT_REEXEC;
    c->reexec_deadline = deadline;
    c->reexec_key = key;
    if (serve->v)
        gb_gate_call(c, (gb_command *)k->cmd.cmd, serve->n, serve->v);
    else
        gb_gate_call(c, (gb_command *)k->cmd.cmd, k->cmd.argc, k->cmd.argv);
    c->flags &= ~GB_CLIENT_REEXEC;
    c->reexec_key = (gb_slice){0};
}

/* What the ready key means for waiter c (kv NULL: the key is gone). */
static enum gb_wake wake_for(gb_client *c, gb_slice key, const gb_kv *kv, struct gb_argv_builder *serve,
                             const char **err)
{
    const gb_blocked *b = c->blocked;
    /* A client being closed (CLIENT KILL, an output limit) in this pass of
     * the loop is gone for Redis, which frees it at once: served, it would
     * take the element with it and its reply would be dropped. */
    if (c->flags & GB_CLIENT_CLOSE_ASAP)
        return GB_WAKE_SKIP;
    if (b->check)
        return b->check->ready(c, b->check_ctx, key, kv, serve, err);
    return kv && kv->type == b->wait_type ? GB_WAKE_SERVE : GB_WAKE_SKIP;
}

/* Wakes the waiters of one ready key in FIFO order while it has data. */
static void serve_key(gb_engine *eng, gb_db *db, gb_slice key)
{
    uint64_t h = gb_hash_slice(key);
    wait_queue *w = (wait_queue *)gb_htable_find(&db->blocking, &key, h);
    if (!w)
        return;
    w->ready = false;
    uint32_t remaining = w->n; /* only clients waiting now; re-blockers go to the tail */
    uint32_t idx = 0;
    while (remaining-- > 0) {
        w = (wait_queue *)gb_htable_find(&db->blocking, &key, h);
        if (!w || idx >= w->n)
            return;
        gb_kv *kv = gb_db_lookup_quiet(db, key);
        if (!kv && !w->nchecked)
            return; /* emptied: nobody left to serve */
        gb_client *c = w->q[idx];
        gb_argv_builder serve = {0};
        const char *err = NULL;
        enum gb_wake wake = wake_for(c, key, kv, &serve, &err);
        if (wake == GB_WAKE_SKIP) {
            idx++;
            continue;
        }
        uint64_t deadline = c->blocked->deadline;
        captured k = detach(c);
        if (wake == GB_WAKE_FAIL)
            gb_reply_error(c, err);
        else
            reexecute(c, &k, &serve, deadline, key);
        if (serve.v)
            gb_argv_free(&serve);
        captured_free(&k);
        if (!(c->flags & GB_CLIENT_BLOCKED))
            gb_client_command_done(c); /* the command that blocked is done only now */
        if (c->hooks && c->hooks->flush)
            c->hooks->flush(c);
    }
}

void gb_blocking_serve_ready(gb_engine *eng)
{
    if (eng->serving_ready)
        return;
    eng->serving_ready = true;
    while (eng->nready) {
        gb_ready_key *list = eng->ready_keys;
        size_t n = eng->nready;
        eng->ready_keys = NULL;
        eng->nready = eng->readycap = 0;
        for (size_t i = 0; i < n; i++) {
            serve_key(eng, &eng->dbs[list[i].dbid], list[i].key);
            gb_free((void *)list[i].key.ptr);
        }
        gb_free(list);
    }
    eng->serving_ready = false;
}

/* ---- CLIENT PAUSE ------------------------------------------------------------------------ */

void gb_pause_start(gb_engine *eng, int type, uint64_t end_ms)
{
    if (eng->paused_for) { /* the client's pause, kept beside the server's own */
        if (type > eng->client_pause_type)
            eng->client_pause_type = type;
        if (end_ms > eng->client_pause_end_ms)
            eng->client_pause_end_ms = end_ms;
    }
    if (type > eng->pause_type)
        eng->pause_type = type;
    if (end_ms > eng->pause_end_ms)
        eng->pause_end_ms = end_ms;
    eng->pause_lifted = false;
}

void gb_pause_lift(gb_engine *eng)
{
    if (eng->paused_for) {
        /* CLIENT UNPAUSE or the client's deadline: a failover or a shutdown
         * still holds writes (Redis unpauses only the command's own purpose). */
        eng->client_pause_type = GB_PAUSE_NONE;
        eng->client_pause_end_ms = 0;
        if (eng->pause_type == GB_PAUSE_ALL) {
            eng->pause_type = GB_PAUSE_WRITE;
            eng->pause_lifted = eng->npostponed != 0; /* the reads it held run now */
        }
        return;
    }
    eng->pause_type = GB_PAUSE_NONE;
    eng->pause_end_ms = 0;
    eng->pause_lifted = eng->npostponed != 0;
}

int gb_pause_check(gb_engine *eng)
{
    /* No pause, nothing to lift: the common case reads no clock (every
     * write over maxmemory asks, through the eviction's safety check). A
     * pause for a purpose (paused_for) is always a write pause. */
    if (eng->pause_type == GB_PAUSE_NONE)
        return GB_PAUSE_NONE;
    uint64_t now = gb_clock_mono_ms();
    if (eng->paused_for) {
        if (eng->client_pause_type != GB_PAUSE_NONE && now >= eng->client_pause_end_ms)
            gb_pause_lift(eng);
    } else if (eng->pause_type != GB_PAUSE_NONE && now >= eng->pause_end_ms) {
        gb_pause_lift(eng);
    }
    return eng->pause_type;
}

void gb_pause_for(gb_engine *eng, unsigned purpose, bool on)
{
    unsigned before = eng->paused_for, after = on ? before | purpose : before & ~purpose;
    if (!before && after) { /* the first purpose: a client's pause is kept aside */
        eng->client_pause_type = eng->pause_type;
        eng->client_pause_end_ms = eng->pause_end_ms;
        gb_pause_start(eng, GB_PAUSE_WRITE, UINT64_MAX); /* before paused_for is set: not taken as a client's */
        eng->paused_for = after;
        return;
    }
    eng->paused_for = after;
    if (!before || after)
        return; /* still held for another purpose, or never was */
    int type = eng->client_pause_type;
    uint64_t end = eng->client_pause_end_ms;
    gb_pause_lift(eng);
    if (type != GB_PAUSE_NONE && end > gb_clock_mono_ms())
        gb_pause_start(eng, type, end); /* the client's pause goes on alone */
}

bool gb_pause_postpones(gb_client *c, const gb_command *cmd, uint32_t flags)
{
    /* A replica's ACKs go on during a pause (Redis never postpones a
     * replica's commands). */
    if (gb_pause_check(c->eng) == GB_PAUSE_NONE || (c->flags & (GB_CLIENT_OBEY | GB_CLIENT_REPLICA)))
        return false;
    if (c->eng->pause_type == GB_PAUSE_ALL)
        return true;
    /* Redis's is_may_replicate_command: a write, PUBLISH-like commands,
     * and an EXEC whose queue holds one of those. */
    uint32_t f = flags;
    if (cmd->def->proc == gb_multi_exec_proc)
        f |= c->mcmd_flags;
    return (f & (GB_CMD_WRITE | GB_CMD_MAY_REPLICATE)) != 0;
}

void gb_pause_postpone(gb_client *c, int argc, const gb_slice *argv)
{
    gb_engine *eng = c->eng;
    gb_blocking_block(c, NULL, 0, 0, GB_TYPE_COUNT, argc, argv); /* no type serves it */
    c->blocked->postponed = true;
    if (eng->npostponed == eng->postponedcap) {
        eng->postponedcap = eng->postponedcap ? eng->postponedcap * 2 : 8;
        eng->postponed = gb_realloc(eng->postponed, eng->postponedcap * sizeof *eng->postponed);
    }
    eng->postponed[eng->npostponed++] = c;
}

bool gb_pause_is_postponed(const gb_client *c) { return c->blocked && c->blocked->postponed; }

void gb_pause_resume(gb_engine *eng)
{
    if (!eng->pause_lifted || eng->prop.depth != 0)
        return;
    eng->pause_lifted = false;
    /* Only the clients postponed now: a command run here may start a new
     * pause and postpone others (or itself) again. */
    size_t n = eng->npostponed;
    while (n-- > 0 && eng->npostponed && eng->pause_type == GB_PAUSE_NONE) {
        gb_client *c = eng->postponed[0];
        captured k = detach(c);
        if (!(c->flags & GB_CLIENT_CLOSE_ASAP)) /* killed meanwhile: its command never runs, as in Redis */
            gb_gate_execute(c, k.cmd.argc, k.cmd.argv);
        captured_free(&k);
        if (c->hooks && c->hooks->flush)
            c->hooks->flush(c);
    }
}
