#include "engine/core/pubsub/tracking.h"

#include <stdio.h>
#include <stdlib.h>

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/core/engine.h"
#include "engine/core/pubsub/pubsub.h"
#include "engine/ds/htable.h"

/* A remembered key and the ids of the clients that read it. */
typedef struct trk_key {
    gb_hnode node;
    uint64_t *ids;
    uint32_t n, cap;
    uint32_t keylen;
    char key[];
} trk_key;

/* A key modified under a BCAST prefix since the last broadcast, and the
 * client that modified it last (NOLOOP). */
typedef struct bcast_key {
    gb_slice key; /* owned */
    const gb_client *by;
} bcast_key;

/* A BCAST prefix: its clients and the keys to broadcast. */
typedef struct trk_prefix {
    char *p;
    size_t len;
    gb_client **clients;
    size_t nclients, clientcap;
    bcast_key *keys;
    size_t nkeys, keycap;
} trk_prefix;

/* An invalidation for the client running the command, sent after its
 * reply: a key, or a flush (null). */
typedef struct pending {
    gb_slice key; /* owned; ptr NULL for a flush */
} pending;

typedef struct gb_tracking {
    gb_htable keys;
    size_t nclients;
    trk_prefix *prefixes;
    size_t nprefixes, prefixcap;
    bool bcast_due;
    size_t nitems;      /* client ids over all remembered keys (INFO's tracking_total_items) */
    unsigned limit_rounds; /* consecutive commands that found the table over tracking-table-max-keys */
    gb_client *current; /* the client whose command runs (NOLOOP, own invalidations) */
    bool in_command;
    pending *pend;
    size_t npend, pendcap;
} gb_tracking;

static uint64_t tk_hash(const gb_hnode *n)
{
    const trk_key *k = (const trk_key *)n;
    return gb_hash_bytes(k->key, k->keylen);
}

static bool tk_eq(const gb_hnode *n, const void *key)
{
    const trk_key *k = (const trk_key *)n;
    const gb_slice *s = key;
    return k->keylen == s->len && memcmp(k->key, s->ptr, s->len) == 0;
}

static const gb_htable_type tk_type = {tk_hash, tk_eq};

static gb_tracking *tracking_of(gb_engine *eng)
{
    if (!eng->tracking) {
        eng->tracking = gb_calloc(1, sizeof *eng->tracking);
        gb_htable_init(&eng->tracking->keys, &tk_type);
    }
    return eng->tracking;
}

static void free_key(gb_hnode *n, void *ctx)
{
    (void)ctx;
    trk_key *k = (trk_key *)n;
    gb_free(k->ids);
    gb_free(k);
}

void gb_tracking_engine_free(gb_engine *eng)
{
    gb_tracking *t = eng->tracking;
    if (!t)
        return;
    gb_htable_clear(&t->keys, free_key, NULL);
    for (size_t i = 0; i < t->nprefixes; i++) {
        for (size_t j = 0; j < t->prefixes[i].nkeys; j++)
            gb_free((void *)t->prefixes[i].keys[j].key.ptr);
        gb_free(t->prefixes[i].keys);
        gb_free(t->prefixes[i].clients);
        gb_free(t->prefixes[i].p);
    }
    gb_free(t->prefixes);
    for (size_t i = 0; i < t->npend; i++)
        gb_free((void *)t->pend[i].key.ptr);
    gb_free(t->pend);
    gb_free(t);
    eng->tracking = NULL;
}


static uint32_t tflags(const gb_client *c) { return c->tracking ? c->tracking->flags : 0; }

/* ---- the messages ------------------------------------------------------------------ */

/* Whether a RESP2 client receives pub/sub messages (Redis's CLIENT_PUBSUB:
 * subscribed to some channel, pattern or shard channel). A RESP2 redirect
 * target that subscribed to nothing gets nothing, as in Redis. */
static bool client_subscribed(const gb_client *c)
{
    return gb_pubsub_client_subscribed(c);
}

static void notify(gb_client *c)
{
    if (c->hooks && c->hooks->flush && (!c->eng->tracking || c != c->eng->tracking->current))
        c->hooks->flush(c);
}

/* Redis's sendTrackingMessage: keys is an array of n keys, or n < 0 for
 * null (a flush). Returns nothing; the message may go nowhere (a RESP2
 * client without a subscribed redirect target). */
static void send_message(gb_client *c, const gb_slice *keys, int64_t n)
{
    gb_client_tracking *t = c->tracking;
    gb_client *to = c;
    bool redirected = false;
    if (t && t->redirect) {
        to = gb_client_by_id(c->eng, t->redirect);
        if (!to) {
            t->flags |= GB_TRACK_BROKEN_REDIR;
            if (c->resp > 2) {
                const gb_reply_ops *was = gb_client_push_begin(c);
                gb_reply_push(c, 2);
                gb_reply_bulk(c, "tracking-redir-broken", 21);
                gb_reply_int(c, (int64_t)t->redirect);
                gb_client_push_end(c, was);
                notify(c);
            }
            return;
        }
        redirected = true;
    }
    if (to->resp <= 2 && !(redirected && client_subscribed(to)))
        return;
    const gb_reply_ops *was = gb_client_push_begin(to);
    if (to->resp > 2) {
        gb_reply_push(to, 2);
        gb_reply_bulk(to, "invalidate", 10);
    } else {
        gb_reply_push(to, 3);
        gb_reply_bulk(to, "message", 7);
        gb_reply_bulk(to, "__redis__:invalidate", 20);
    }
    if (n < 0) {
        gb_reply_nil(to);
    } else {
        gb_reply_array(to, n);
        for (int64_t i = 0; i < n; i++)
            gb_reply_slice(to, keys[i]);
    }
    gb_client_push_end(to, was);
    notify(to);
}

static void add_pending(gb_tracking *t, gb_slice key, bool flush)
{
    if (t->npend == t->pendcap) {
        t->pendcap = t->pendcap ? t->pendcap * 2 : 8;
        t->pend = gb_realloc(t->pend, t->pendcap * sizeof *t->pend);
    }
    t->pend[t->npend++].key = flush ? (gb_slice){0} : gb_slice_make(gb_memdup(key.ptr, key.len), key.len);
}

/* ---- remembering ------------------------------------------------------------------- */

static void remember_key(gb_tracking *t, gb_slice key, uint64_t id)
{
    uint64_t h = gb_hash_slice(key);
    trk_key *k = (trk_key *)gb_htable_find(&t->keys, &key, h);
    if (!k) {
        k = gb_malloc(sizeof *k + key.len);
        memset(k, 0, sizeof *k);
        k->keylen = (uint32_t)key.len;
        memcpy(k->key, key.ptr, key.len);
        gb_htable_insert(&t->keys, &k->node, h);
    }
    for (uint32_t i = 0; i < k->n; i++)
        if (k->ids[i] == id)
            return;
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 2;
        k->ids = gb_realloc(k->ids, k->cap * sizeof *k->ids);
    }
    k->ids[k->n++] = id;
    t->nitems++;
}

void gb_tracking_remember(gb_client *c, const gb_command *cmd, int argc, const gb_slice *argv)
{
    uint32_t f = tflags(c);
    if (f & GB_TRACK_BCAST)
        return;
    bool caching = (f & GB_TRACK_CACHING) != 0;
    if (((f & GB_TRACK_OPTIN) && !caching) || ((f & GB_TRACK_OPTOUT) && caching))
        return;
    gb_keys_result r;
    int n = gb_command_keys(cmd->meta, argc, argv, &r);
    gb_tracking *t = tracking_of(c->eng);
    for (int i = 0; i < n; i++)
        remember_key(t, argv[r.keys[i].pos], c->id);
    gb_keys_result_free(&r);
}

/* ---- invalidating ------------------------------------------------------------------ */

static bool has_prefix(gb_slice key, const trk_prefix *p)
{
    return p->len <= key.len && (p->len == 0 || memcmp(key.ptr, p->p, p->len) == 0);
}

static void bcast_collect(gb_tracking *t, gb_slice key, gb_client *by)
{
    for (size_t i = 0; i < t->nprefixes; i++) {
        trk_prefix *p = &t->prefixes[i];
        if (!has_prefix(key, p))
            continue;
        t->bcast_due = true;
        bcast_key *found = NULL;
        for (size_t j = 0; j < p->nkeys; j++)
            if (gb_slice_eq(p->keys[j].key, key))
                found = &p->keys[j];
        if (!found) {
            if (p->nkeys == p->keycap) {
                p->keycap = p->keycap ? p->keycap * 2 : 8;
                p->keys = gb_realloc(p->keys, p->keycap * sizeof *p->keys);
            }
            found = &p->keys[p->nkeys++];
            found->key = gb_slice_make(gb_memdup(key.ptr, key.len), key.len);
        }
        found->by = by; /* the last modifier, as Redis's rax value */
    }
}

/* Sends the key's readers their invalidation and forgets the key. */
static void invalidate_readers(gb_engine *eng, gb_tracking *t, gb_slice key)
{
    uint64_t h = gb_hash_slice(key);
    trk_key *k = (trk_key *)gb_htable_remove(&t->keys, &key, h);
    if (!k)
        return;
    t->nitems -= k->n;
    for (uint32_t i = 0; i < k->n; i++) {
        gb_client *target = gb_client_by_id(eng, k->ids[i]);
        uint32_t f = target ? tflags(target) : 0;
        if (!target || !(target->flags & GB_CLIENT_TRACKING) || (f & GB_TRACK_BCAST))
            continue;
        if ((f & GB_TRACK_NOLOOP) && target == t->current)
            continue;
        if (target == t->current && t->in_command)
            add_pending(t, key, false);
        else
            send_message(target, &key, 1);
    }
    free_key(&k->node, NULL);
}

static void invalidate_key_by(gb_engine *eng, gb_slice key, gb_client *by)
{
    gb_tracking *t = eng->tracking;
    if (!t)
        return;
    if (t->nprefixes)
        bcast_collect(t, key, by);
    invalidate_readers(eng, t, key);
}

void gb_tracking_invalidate_key(gb_engine *eng, gb_slice key)
{
    invalidate_key_by(eng, key, eng->tracking ? eng->tracking->current : NULL);
}

void gb_tracking_invalidate_expired(gb_engine *eng, gb_slice key) { invalidate_key_by(eng, key, NULL); }

void gb_tracking_invalidate_flush(gb_engine *eng)
{
    gb_tracking *t = eng->tracking;
    if (!t)
        return;
    for (gb_client *c = eng->clients; c; c = c->next) {
        if (!(c->flags & GB_CLIENT_TRACKING))
            continue;
        if (c == t->current && t->in_command)
            add_pending(t, (gb_slice){0}, true);
        else
            send_message(c, NULL, -1);
    }
    gb_htable_clear(&t->keys, free_key, NULL);
    t->nitems = 0;
}

/* Redis's trackingLimitUsedSlots: while more keys are remembered than
 * tracking-table-max-keys (0: no limit), random ones are invalidated, as if
 * modified (their readers get the message now, BCAST clients nothing), with an effort that grows
 * (100 keys per consecutive command that found the table over the limit)
 * so that a lowered limit is reached over a few commands, not in one pause. */
static void limit_keys(gb_engine *eng, gb_tracking *t)
{
    size_t max = (size_t)eng->cfg.tracking_table_max_keys;
    if (max == 0 || gb_htable_size(&t->keys) <= max) {
        t->limit_rounds = 0;
        return;
    }
    for (unsigned effort = 100 * (t->limit_rounds + 1); effort > 0; effort--) {
        trk_key *k = (trk_key *)gb_htable_random(&t->keys);
        if (!k)
            break;
        /* The modified-key path without BCAST (Redis's bcast=0); k's own
         * bytes serve as the key: they are freed only after the last use. */
        invalidate_readers(eng, t, gb_slice_make(k->key, k->keylen));
        if (gb_htable_size(&t->keys) <= max) {
            t->limit_rounds = 0;
            return;
        }
    }
    t->limit_rounds++;
}

static int slice_cmp(gb_slice a, gb_slice b)
{
    size_t n = GB_MIN(a.len, b.len);
    int r = n ? memcmp(a.ptr, b.ptr, n) : 0;
    return r ? r : (a.len > b.len) - (a.len < b.len);
}

static int cmp_bkey(const void *a, const void *b)
{
    return slice_cmp(((const bcast_key *)a)->key, ((const bcast_key *)b)->key);
}

/* Redis's trackingBroadcastInvalidationMessages: per prefix, the keys in
 * byte order; a NOLOOP client does not get the keys it modified itself. */
static void broadcast(gb_tracking *t)
{
    t->bcast_due = false;
    for (size_t i = 0; i < t->nprefixes; i++) {
        trk_prefix *p = &t->prefixes[i];
        if (!p->nkeys)
            continue;
        qsort(p->keys, p->nkeys, sizeof *p->keys, cmp_bkey);
        gb_slice *all = gb_malloc(p->nkeys * sizeof *all);
        for (size_t c = 0; c < p->nclients; c++) {
            gb_client *cl = p->clients[c];
            size_t n = 0;
            bool noloop = (tflags(cl) & GB_TRACK_NOLOOP) != 0;
            for (size_t j = 0; j < p->nkeys; j++)
                if (!noloop || p->keys[j].by != cl)
                    all[n++] = p->keys[j].key;
            if (n)
                send_message(cl, all, (int64_t)n);
        }
        gb_free(all);
        for (size_t j = 0; j < p->nkeys; j++)
            gb_free((void *)p->keys[j].key.ptr);
        p->nkeys = 0;
    }
}

void gb_tracking_flush_broadcast(gb_engine *eng)
{
    gb_tracking *t = eng->tracking;
    if (t && t->bcast_due && !t->in_command)
        broadcast(t);
}

void gb_tracking_set_current(gb_engine *eng, gb_client *c)
{
    gb_tracking *t = eng->tracking;
    if (t) {
        /* Before the command, as Redis's processCommand does, with no
         * current client: the invalidations go out at once, to everyone. */
        if (t->nclients && !t->in_command)
            limit_keys(eng, t);
        t->current = c;
        t->in_command = true;
    }
}

void gb_tracking_after_command(gb_engine *eng)
{
    gb_tracking *t = eng->tracking;
    if (!t)
        return;
    t->in_command = false;
    gb_client *c = t->current;
    for (size_t i = 0; i < t->npend; i++) {
        if (c && (c->flags & GB_CLIENT_TRACKING)) {
            if (t->pend[i].key.ptr)
                send_message(c, &t->pend[i].key, 1);
            else
                send_message(c, NULL, -1);
        }
        gb_free((void *)t->pend[i].key.ptr);
    }
    t->npend = 0;
    if (t->bcast_due)
        broadcast(t);
    t->current = NULL;
}

/* ---- enabling and disabling -------------------------------------------------------------- */

static trk_prefix *find_prefix(gb_tracking *t, gb_slice p)
{
    for (size_t i = 0; i < t->nprefixes; i++)
        if (t->prefixes[i].len == p.len && memcmp(t->prefixes[i].p, p.ptr, p.len) == 0)
            return &t->prefixes[i];
    return NULL;
}

static void bcast_add(gb_client *c, gb_slice prefix)
{
    gb_tracking *t = tracking_of(c->eng);
    gb_client_tracking *ct = c->tracking;
    for (int i = 0; i < ct->nprefixes; i++)
        if (gb_slice_eq(ct->prefixes[i], prefix))
            return;
    trk_prefix *p = find_prefix(t, prefix);
    if (!p) {
        if (t->nprefixes == t->prefixcap) {
            t->prefixcap = t->prefixcap ? t->prefixcap * 2 : 4;
            t->prefixes = gb_realloc(t->prefixes, t->prefixcap * sizeof *t->prefixes);
        }
        /* In byte order: the broadcast goes prefix by prefix in that order,
         * as Redis walks its radix tree. */
        size_t at = 0;
        while (at < t->nprefixes &&
               slice_cmp(gb_slice_make(t->prefixes[at].p, t->prefixes[at].len), prefix) < 0)
            at++;
        memmove(&t->prefixes[at + 1], &t->prefixes[at], (t->nprefixes - at) * sizeof *t->prefixes);
        t->nprefixes++;
        p = &t->prefixes[at];
        memset(p, 0, sizeof *p);
        p->p = gb_memdup(prefix.ptr, prefix.len ? prefix.len : 1);
        p->len = prefix.len;
    }
    if (p->nclients == p->clientcap) {
        p->clientcap = p->clientcap ? p->clientcap * 2 : 4;
        p->clients = gb_realloc(p->clients, p->clientcap * sizeof *p->clients);
    }
    p->clients[p->nclients++] = c;
    ct->prefixes = gb_realloc(ct->prefixes, (size_t)(ct->nprefixes + 1) * sizeof *ct->prefixes);
    /* Kept in byte order: CLIENT TRACKINGINFO lists them as Redis's radix tree does. */
    int at = ct->nprefixes++;
    gb_slice mine = gb_slice_make(gb_memdup(prefix.ptr, prefix.len ? prefix.len : 1), prefix.len);
    while (at > 0 && slice_cmp(ct->prefixes[at - 1], mine) > 0) {
        ct->prefixes[at] = ct->prefixes[at - 1];
        at--;
    }
    ct->prefixes[at] = mine;
}

static void bcast_remove_all(gb_client *c)
{
    gb_tracking *t = c->eng->tracking;
    gb_client_tracking *ct = c->tracking;
    for (int i = 0; i < ct->nprefixes; i++) {
        trk_prefix *p = t ? find_prefix(t, ct->prefixes[i]) : NULL;
        if (p) {
            for (size_t j = 0; j < p->nclients; j++)
                if (p->clients[j] == c) {
                    p->clients[j] = p->clients[--p->nclients];
                    break;
                }
            if (p->nclients == 0) { /* Redis drops a prefix nobody follows */
                for (size_t j = 0; j < p->nkeys; j++)
                    gb_free((void *)p->keys[j].key.ptr);
                gb_free(p->keys);
                gb_free(p->clients);
                gb_free(p->p);
                size_t at = (size_t)(p - t->prefixes);
                memmove(p, p + 1, (t->nprefixes - at - 1) * sizeof *p);
                t->nprefixes--;
            }
        }
        gb_free((void *)ct->prefixes[i].ptr);
    }
    gb_free(ct->prefixes);
    ct->prefixes = NULL;
    ct->nprefixes = 0;
}

void gb_tracking_disable(gb_client *c)
{
    if (!(c->flags & GB_CLIENT_TRACKING))
        return;
    if (c->tracking->flags & GB_TRACK_BCAST)
        bcast_remove_all(c);
    c->tracking->flags = 0;
    c->tracking->redirect = 0;
    c->flags &= ~GB_CLIENT_TRACKING;
    c->eng->tracking->nclients--;
}

void gb_tracking_client_gone(gb_client *c)
{
    gb_tracking_disable(c);
    gb_tracking *t = c->eng->tracking;
    if (t && t->current == c)
        t->current = NULL;
    if (t) /* a key it modified last is still broadcast; it is no longer anyone's */
        for (size_t i = 0; i < t->nprefixes; i++)
            for (size_t j = 0; j < t->prefixes[i].nkeys; j++)
                if (t->prefixes[i].keys[j].by == c)
                    t->prefixes[i].keys[j].by = NULL;
    gb_free(c->tracking);
    c->tracking = NULL;
}

static bool prefixes_overlap(gb_slice a, gb_slice b)
{
    size_t n = GB_MIN(a.len, b.len);
    return n == 0 || memcmp(a.ptr, b.ptr, n) == 0;
}

/* Redis's checkPrefixCollisionsOrReply. (Redis 7.0 goes on after the
 * second text for a collision past the first prefix and also replies OK;
 * here the error is the only reply.) */
static bool prefixes_ok(gb_client *c, const gb_slice *pre, int n)
{
    const gb_client_tracking *ct = c->tracking;
    for (int i = 0; i < n; i++) {
        for (int j = 0; ct && j < ct->nprefixes; j++)
            if (prefixes_overlap(ct->prefixes[j], pre[i])) {
                gb_reply_errorf(c,
                                "ERR Prefix '%.*s' overlaps with an existing prefix '%.*s'. Prefixes for a single "
                                "client must not overlap.",
                                (int)GB_MIN(pre[i].len, 256), pre[i].ptr, (int)GB_MIN(ct->prefixes[j].len, 256),
                                ct->prefixes[j].ptr);
                return false;
            }
        for (int j = i + 1; j < n; j++)
            if (prefixes_overlap(pre[i], pre[j])) {
                gb_reply_errorf(c,
                                "ERR Prefix '%.*s' overlaps with another provided prefix '%.*s'. Prefixes for a "
                                "single client must not overlap.",
                                (int)GB_MIN(pre[i].len, 256), pre[i].ptr, (int)GB_MIN(pre[j].len, 256), pre[j].ptr);
                return false;
            }
    }
    return true;
}

static void enable(gb_client *c, uint64_t redirect, uint32_t options, const gb_slice *pre, int npre)
{
    gb_tracking *t = tracking_of(c->eng);
    if (!c->tracking)
        c->tracking = gb_calloc(1, sizeof *c->tracking);
    if (!(c->flags & GB_CLIENT_TRACKING))
        t->nclients++;
    c->flags |= GB_CLIENT_TRACKING;
    gb_client_tracking *ct = c->tracking;
    ct->flags &= ~(GB_TRACK_BROKEN_REDIR | GB_TRACK_BCAST | GB_TRACK_OPTIN | GB_TRACK_OPTOUT | GB_TRACK_NOLOOP);
    ct->redirect = redirect;
    if (options & GB_TRACK_BCAST) {
        ct->flags |= GB_TRACK_BCAST;
        if (npre == 0)
            bcast_add(c, gb_slice_make("", 0));
        for (int i = 0; i < npre; i++)
            bcast_add(c, pre[i]);
    }
    ct->flags |= options & (GB_TRACK_OPTIN | GB_TRACK_OPTOUT | GB_TRACK_NOLOOP);
}

void gb_tracking_cmd_tracking(gb_client *c, int argc, gb_slice *argv)
{
    int64_t redir = 0;
    uint32_t options = 0;
    int npre = 0;
    gb_slice *pre = gb_malloc((size_t)argc * sizeof *pre); /* at most argc prefixes */
    for (int j = 3; j < argc; j++) {
        bool more = j + 1 < argc;
        if (gb_slice_ieq(argv[j], "redirect") && more) {
            j++;
            if (redir != 0) {
                gb_reply_error(c, "ERR A client can only redirect to a single other client");
                goto out;
            }
            if (!gb_slice2ll(argv[j], &redir)) {
                gb_reply_error(c, GB_ERR_NOT_INT);
                goto out;
            }
            if (redir <= 0 || !gb_client_by_id(c->eng, (uint64_t)redir)) {
                gb_reply_error(c, "ERR The client ID you want redirect to does not exist");
                goto out;
            }
        } else if (gb_slice_ieq(argv[j], "bcast")) {
            options |= GB_TRACK_BCAST;
        } else if (gb_slice_ieq(argv[j], "optin")) {
            options |= GB_TRACK_OPTIN;
        } else if (gb_slice_ieq(argv[j], "optout")) {
            options |= GB_TRACK_OPTOUT;
        } else if (gb_slice_ieq(argv[j], "noloop")) {
            options |= GB_TRACK_NOLOOP;
        } else if (gb_slice_ieq(argv[j], "prefix") && more) {
            pre[npre++] = argv[++j];
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            goto out;
        }
    }
    if (gb_slice_ieq(argv[2], "on")) {
        uint32_t cur = tflags(c);
        bool tracking = (c->flags & GB_CLIENT_TRACKING) != 0;
        if (!(options & GB_TRACK_BCAST) && npre) {
            gb_reply_error(c, "ERR PREFIX option requires BCAST mode to be enabled");
            goto out;
        }
        if (tracking && !!(cur & GB_TRACK_BCAST) != !!(options & GB_TRACK_BCAST)) {
            gb_reply_error(c, "ERR You can't switch BCAST mode on/off before disabling tracking for this client, "
                              "and then re-enabling it with a different mode.");
            goto out;
        }
        if ((options & GB_TRACK_BCAST) && (options & (GB_TRACK_OPTIN | GB_TRACK_OPTOUT))) {
            gb_reply_error(c, "ERR OPTIN and OPTOUT are not compatible with BCAST");
            goto out;
        }
        if ((options & GB_TRACK_OPTIN) && (options & GB_TRACK_OPTOUT)) {
            gb_reply_error(c, "ERR You can't specify both OPTIN mode and OPTOUT mode");
            goto out;
        }
        if (((options & GB_TRACK_OPTIN) && (cur & GB_TRACK_OPTOUT)) ||
            ((options & GB_TRACK_OPTOUT) && (cur & GB_TRACK_OPTIN))) {
            gb_reply_error(c, "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, "
                              "and then re-enabling it with a different mode.");
            goto out;
        }
        if ((options & GB_TRACK_BCAST) && !prefixes_ok(c, pre, npre))
            goto out;
        enable(c, (uint64_t)redir, options, pre, npre);
    } else if (gb_slice_ieq(argv[2], "off")) {
        gb_tracking_disable(c);
    } else {
        gb_reply_error(c, GB_ERR_SYNTAX);
        goto out;
    }
    gb_reply_ok(c);
out:
    gb_free(pre);
}

void gb_tracking_cmd_caching(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    if (!(c->flags & GB_CLIENT_TRACKING)) {
        gb_reply_error(c, "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
                          "OPTOUT mode enabled");
        return;
    }
    gb_client_tracking *ct = c->tracking;
    if (gb_slice_ieq(argv[2], "yes")) {
        if (!(ct->flags & GB_TRACK_OPTIN)) {
            gb_reply_error(c, "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
            return;
        }
    } else if (gb_slice_ieq(argv[2], "no")) {
        if (!(ct->flags & GB_TRACK_OPTOUT)) {
            gb_reply_error(c, "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
            return;
        }
    } else {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    ct->flags |= GB_TRACK_CACHING;
    gb_reply_ok(c);
}

void gb_tracking_command_done(gb_client *c, const gb_command *cmd)
{
    if (c->tracking && !(c->flags & GB_CLIENT_MULTI) && (!cmd || strcmp(cmd->def->name, "client") != 0))
        c->tracking->flags &= ~GB_TRACK_CACHING;
}

void gb_tracking_cmd_getredir(gb_client *c)
{
    if (c->flags & GB_CLIENT_TRACKING)
        gb_reply_int(c, (int64_t)c->tracking->redirect);
    else
        gb_reply_int(c, -1);
}

/* Redis 7.0's CLIENT TRACKINGINFO: flags (a set), redirect, prefixes. */
void gb_tracking_cmd_trackinginfo(gb_client *c)
{
    uint32_t f = tflags(c);
    bool on = (c->flags & GB_CLIENT_TRACKING) != 0;
    gb_reply_map(c, 3);
    gb_reply_cstr(c, "flags");
    const char *names[8];
    int n = 0;
    if (!on) {
        names[n++] = "off";
    } else {
        names[n++] = "on";
        if (f & GB_TRACK_BCAST)
            names[n++] = "bcast";
        if (f & GB_TRACK_OPTIN) {
            names[n++] = "optin";
            if (f & GB_TRACK_CACHING)
                names[n++] = "caching-yes";
        }
        if (f & GB_TRACK_OPTOUT) {
            names[n++] = "optout";
            if (f & GB_TRACK_CACHING)
                names[n++] = "caching-no";
        }
        if (f & GB_TRACK_NOLOOP)
            names[n++] = "noloop";
        if (f & GB_TRACK_BROKEN_REDIR)
            names[n++] = "broken_redirect";
    }
    gb_reply_set(c, n);
    for (int i = 0; i < n; i++)
        gb_reply_cstr(c, names[i]);
    gb_reply_cstr(c, "redirect");
    if (on) {
        gb_reply_int(c, c->tracking->redirect ? (int64_t)c->tracking->redirect : 0);
    } else {
        gb_reply_int(c, -1);
    }
    gb_reply_cstr(c, "prefixes");
    int np = on ? c->tracking->nprefixes : 0;
    gb_reply_array(c, np);
    for (int i = 0; i < np; i++)
        gb_reply_slice(c, c->tracking->prefixes[i]);
}

long long gb_tracking_redirect_id(const gb_client *c)
{
    return (c->flags & GB_CLIENT_TRACKING) ? (long long)c->tracking->redirect : -1;
}

bool gb_tracking_broken_redirect(const gb_client *c) { return (tflags(c) & GB_TRACK_BROKEN_REDIR) != 0; }

bool gb_tracking_bcast(const gb_client *c) { return (tflags(c) & GB_TRACK_BCAST) != 0; }

size_t gb_tracking_clients(const gb_engine *eng) { return eng->tracking ? eng->tracking->nclients : 0; }

size_t gb_tracking_total_keys(const gb_engine *eng) { return eng->tracking ? gb_htable_size(&eng->tracking->keys) : 0; }

size_t gb_tracking_total_items(const gb_engine *eng) { return eng->tracking ? eng->tracking->nitems : 0; }

size_t gb_tracking_total_prefixes(const gb_engine *eng) { return eng->tracking ? eng->tracking->nprefixes : 0; }
