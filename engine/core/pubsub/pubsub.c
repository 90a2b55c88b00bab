#include "engine/core/pubsub/pubsub.h"

#include <stdio.h>

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/cluster/keyslot.h"
#include "engine/core/acl/acl.h"
#include "engine/core/engine.h"

/* ---- the tables ------------------------------------------------------------------ */

/* A channel, pattern or shard channel somebody listens to. */
typedef struct ps_entry {
    gb_hnode node;
    gb_client **subs; /* in subscription order */
    uint32_t n, cap;
    uint32_t len;
    char name[];
} ps_entry;

/* One subscription of a client: the server's entry (which holds the name),
 * linked in the order the client subscribed. */
typedef struct ps_sub {
    gb_hnode node;
    ps_entry *e;
    struct ps_sub *prev, *next;
} ps_sub;

struct gb_pubsub {
    gb_htable tab[GB_PUBSUB_KINDS];
};

/* A client's subscriptions (gb_client.pubsub), allocated at its first one:
 * a table per kind to find one, and a list per kind in subscription order,
 * which PUNSUBSCRIBE with no argument confirms in (Redis 7.0 keeps a
 * client's patterns in a list). */
struct gb_pubsub_client {
    gb_htable tab[GB_PUBSUB_KINDS];
    ps_sub *first[GB_PUBSUB_KINDS], *last[GB_PUBSUB_KINDS];
};

static uint64_t entry_hash(const gb_hnode *n)
{
    const ps_entry *e = (const ps_entry *)n;
    return gb_hash_bytes(e->name, e->len);
}

static bool entry_eq(const gb_hnode *n, const void *key)
{
    const ps_entry *e = (const ps_entry *)n;
    const gb_slice *k = key;
    return e->len == k->len && memcmp(e->name, k->ptr, k->len) == 0;
}

static uint64_t sub_hash(const gb_hnode *n)
{
    const ps_entry *e = ((const ps_sub *)n)->e;
    return gb_hash_bytes(e->name, e->len);
}

static bool sub_eq(const gb_hnode *n, const void *key) { return entry_eq(&((const ps_sub *)n)->e->node, key); }

static const gb_htable_type entry_type = {entry_hash, entry_eq};
static const gb_htable_type sub_type = {sub_hash, sub_eq};

static inline gb_slice entry_name(const ps_entry *e) { return gb_slice_make(e->name, e->len); }

gb_pubsub *gb_pubsub_new(void)
{
    gb_pubsub *ps = gb_calloc(1, sizeof *ps);
    for (int k = 0; k < GB_PUBSUB_KINDS; k++)
        gb_htable_init(&ps->tab[k], &entry_type);
    return ps;
}

static void free_entry(gb_hnode *n, void *ctx)
{
    (void)ctx;
    gb_free(((ps_entry *)n)->subs);
    gb_free(n);
}

void gb_pubsub_free(gb_pubsub *ps)
{
    if (!ps)
        return;
    for (int k = 0; k < GB_PUBSUB_KINDS; k++)
        gb_htable_clear(&ps->tab[k], free_entry, NULL);
    gb_free(ps);
}

size_t gb_pubsub_client_count(const gb_client *c, enum gb_pubsub_kind kind)
{
    return c->pubsub ? gb_htable_size(&c->pubsub->tab[kind]) : 0;
}

size_t gb_pubsub_count(const gb_engine *eng, enum gb_pubsub_kind kind)
{
    return gb_htable_size(&eng->pubsub->tab[kind]);
}

/* ---- subscribing ----------------------------------------------------------------- */

/* The confirmation kinds (engine/core/request/reply.h): 1 + 2 * kind, +1 to unsubscribe. */
static unsigned sub_kind(enum gb_pubsub_kind kind) { return GB_REPLY_SUB_SUBSCRIBE + 2u * (unsigned)kind; }
static unsigned unsub_kind(enum gb_pubsub_kind kind) { return sub_kind(kind) + 1; }

/* The count a confirmation carries: channels and patterns together, shard
 * channels on their own (Redis 7.0). */
static int64_t confirm_count(const gb_client *c, enum gb_pubsub_kind kind)
{
    if (kind == GB_PUBSUB_SHARD)
        return (int64_t)gb_pubsub_client_count(c, GB_PUBSUB_SHARD);
    return (int64_t)(gb_pubsub_client_count(c, GB_PUBSUB_CHANNEL) + gb_pubsub_client_count(c, GB_PUBSUB_PATTERN));
}

static void confirm(gb_client *c, unsigned kind, const gb_slice *name, int64_t count)
{
    gb_reply_subscription(c, kind, name, count);
}

static bool client_idle(const struct gb_pubsub_client *pc)
{
    for (int k = 0; k < GB_PUBSUB_KINDS; k++)
        if (gb_htable_size(&pc->tab[k]))
            return false;
    return true;
}

/* Adds c to the subscribers of name; false if it was one already. */
static bool add(gb_client *c, enum gb_pubsub_kind kind, gb_slice name)
{
    if (!c->pubsub) {
        c->pubsub = gb_calloc(1, sizeof *c->pubsub);
        for (int k = 0; k < GB_PUBSUB_KINDS; k++)
            gb_htable_init(&c->pubsub->tab[k], &sub_type);
    }
    uint64_t h = gb_hash_slice(name);
    gb_htable *mine = &c->pubsub->tab[kind];
    if (gb_htable_find(mine, &name, h))
        return false;
    gb_htable *all = &c->eng->pubsub->tab[kind];
    ps_entry *e = (ps_entry *)gb_htable_find(all, &name, h);
    if (!e) {
        e = gb_calloc(1, sizeof *e + name.len);
        e->len = (uint32_t)name.len;
        memcpy(e->name, name.ptr, name.len);
        gb_htable_insert(all, &e->node, h);
    }
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 4;
        e->subs = gb_realloc(e->subs, e->cap * sizeof *e->subs);
    }
    e->subs[e->n++] = c;
    ps_sub *s = gb_malloc(sizeof *s);
    s->e = e;
    s->next = NULL;
    s->prev = c->pubsub->last[kind];
    if (s->prev)
        s->prev->next = s;
    else
        c->pubsub->first[kind] = s;
    c->pubsub->last[kind] = s;
    gb_htable_insert(mine, &s->node, h);
    return true;
}

/* Takes c off the subscribers of s's entry and frees s (already unlinked
 * from the client's table); the entry goes when nobody is left. */
static void drop(gb_client *c, enum gb_pubsub_kind kind, ps_sub *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        c->pubsub->first[kind] = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else
        c->pubsub->last[kind] = s->prev;
    ps_entry *e = s->e;
    for (uint32_t i = 0; i < e->n; i++)
        if (e->subs[i] == c) {
            memmove(e->subs + i, e->subs + i + 1, (e->n - i - 1) * sizeof *e->subs);
            e->n--;
            break;
        }
    if (e->n == 0) {
        gb_slice name = entry_name(e);
        gb_htable_remove(&c->eng->pubsub->tab[kind], &name, gb_hash_slice(name));
        free_entry(&e->node, NULL);
    }
    gb_free(s);
}

/* Frees the client's tables once it has no subscription left: that is what
 * ends the RESP2 subscribed mode. */
static void maybe_release(gb_client *c)
{
    if (c->pubsub && client_idle(c->pubsub)) {
        for (int k = 0; k < GB_PUBSUB_KINDS; k++)
            gb_htable_clear(&c->pubsub->tab[k], NULL, NULL);
        gb_free(c->pubsub);
        c->pubsub = NULL;
    }
}

void gb_pubsub_subscribe(gb_client *c, enum gb_pubsub_kind kind, int n, const gb_slice *names)
{
    for (int i = 0; i < n; i++) {
        add(c, kind, names[i]);
        confirm(c, sub_kind(kind), &names[i], confirm_count(c, kind));
    }
}

/* Removes one subscription; false if c did not have it. */
static bool remove_one(gb_client *c, enum gb_pubsub_kind kind, gb_slice name)
{
    if (!c->pubsub)
        return false;
    ps_sub *s = (ps_sub *)gb_htable_remove(&c->pubsub->tab[kind], &name, gb_hash_slice(name));
    if (!s)
        return false;
    drop(c, kind, s);
    return true;
}

/* Every subscription of a kind; confirms each when reply. Returns how many. */
static size_t remove_all(gb_client *c, enum gb_pubsub_kind kind, bool reply)
{
    size_t count = 0;
    if (!c->pubsub)
        return 0;
    gb_htable *mine = &c->pubsub->tab[kind];
    /* In subscription order; the confirmation is written before drop()
     * may free the entry that holds the name. */
    for (ps_sub *s; (s = c->pubsub->first[kind]);) {
        gb_slice name = entry_name(s->e);
        gb_htable_remove(mine, &name, gb_hash_slice(name));
        if (reply)
            confirm(c, unsub_kind(kind), &name, confirm_count(c, kind));
        drop(c, kind, s);
        count++;
    }
    return count;
}

void gb_pubsub_unsubscribe(gb_client *c, enum gb_pubsub_kind kind, int n, const gb_slice *names)
{
    if (n == 0) {
        if (remove_all(c, kind, true) == 0)
            confirm(c, unsub_kind(kind), NULL, confirm_count(c, kind));
    } else {
        for (int i = 0; i < n; i++) {
            remove_one(c, kind, names[i]);
            confirm(c, unsub_kind(kind), &names[i], confirm_count(c, kind));
        }
    }
    maybe_release(c);
}

void gb_pubsub_drop_shard_slots(gb_engine *eng, const uint8_t *slots)
{
    gb_htable *all = &eng->pubsub->tab[GB_PUBSUB_SHARD];
    if (gb_htable_size(all) == 0)
        return;
    /* The names first: unsubscribing the last client frees an entry, and
     * the table changes under an iterator. */
    size_t n = 0, cap = 0;
    char **names = NULL;
    gb_htable_iter it;
    gb_htable_iter_init(&it, all);
    for (gb_hnode *node; (node = gb_htable_iter_next(&it));) {
        const ps_entry *e = (const ps_entry *)node;
        unsigned slot = gb_keyslot(e->name, e->len);
        if (!(slots[slot >> 3] & (1u << (slot & 7))))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            names = gb_realloc(names, cap * sizeof *names);
        }
        names[n] = gb_malloc(sizeof(uint32_t) + e->len);
        memcpy(names[n], &e->len, sizeof(uint32_t));
        memcpy(names[n] + sizeof(uint32_t), e->name, e->len);
        n++;
    }
    gb_htable_iter_done(&it);
    for (size_t i = 0; i < n; i++) {
        uint32_t len;
        memcpy(&len, names[i], sizeof len);
        gb_slice name = gb_slice_make(names[i] + sizeof len, len);
        ps_entry *e;
        /* each subscriber in subscription order, as Redis walks its list */
        while ((e = (ps_entry *)gb_htable_find(all, &name, gb_hash_slice(name))) != NULL) {
            gb_client *c = e->subs[0];
            remove_one(c, GB_PUBSUB_SHARD, name);
            if (!(c->flags & GB_CLIENT_CLOSE_ASAP)) {
                confirm(c, unsub_kind(GB_PUBSUB_SHARD), &name, confirm_count(c, GB_PUBSUB_SHARD));
                if (c->hooks && c->hooks->flush)
                    c->hooks->flush(c);
            }
            maybe_release(c);
        }
        gb_free(names[i]);
    }
    gb_free(names);
}

void gb_pubsub_client_free(gb_client *c)
{
    if (!c->pubsub)
        return;
    for (int k = 0; k < GB_PUBSUB_KINDS; k++)
        remove_all(c, (enum gb_pubsub_kind)k, false);
    maybe_release(c);
}

/* ---- publishing ------------------------------------------------------------------ */

_Static_assert((int)GB_REPLY_MSG_MESSAGE + (int)GB_PUBSUB_PATTERN == (int)GB_REPLY_MSG_PMESSAGE &&
                   (int)GB_REPLY_MSG_MESSAGE + (int)GB_PUBSUB_SHARD == (int)GB_REPLY_MSG_SMESSAGE,
               "MessageKind is 1 + the subscription kind");
_Static_assert((int)GB_REPLY_SUB_SUBSCRIBE + 2 * (int)GB_PUBSUB_PATTERN == (int)GB_REPLY_SUB_PSUBSCRIBE &&
                   (int)GB_REPLY_SUB_SUBSCRIBE + 2 * (int)GB_PUBSUB_SHARD == (int)GB_REPLY_SUB_SSUBSCRIBE,
               "SubscriptionKind is 1 + 2 * the subscription kind");

/* One message into a subscriber's output, then its transport is told (it
 * sends, or closes a subscriber over its output-buffer limit). A client
 * already being closed gets nothing more but still counts, as in Redis. */
static void deliver(gb_client *sub, enum gb_pubsub_kind kind, const ps_entry *pattern, gb_slice channel,
                    gb_slice msg)
{
    if (sub->flags & GB_CLIENT_CLOSE_ASAP)
        return;
    /* MessageKind is 1 + the subscription's kind (reply.h). */
    gb_slice pname = pattern ? entry_name(pattern) : gb_slice_make(NULL, 0);
    gb_reply_message(sub, GB_REPLY_MSG_MESSAGE + (unsigned)kind, pattern ? &pname : NULL, channel, msg);
    if (sub->hooks && sub->hooks->flush)
        sub->hooks->flush(sub);
}

size_t gb_pubsub_publish(gb_engine *eng, enum gb_pubsub_kind kind, gb_slice channel, gb_slice msg)
{
    gb_pubsub *ps = eng->pubsub;
    size_t receivers = 0;
    ps_entry *e = (ps_entry *)gb_htable_find(&ps->tab[kind], &channel, gb_hash_slice(channel));
    if (e) {
        for (uint32_t i = 0; i < e->n; i++)
            deliver(e->subs[i], kind, NULL, channel, msg);
        receivers += e->n;
    }
    if (kind != GB_PUBSUB_CHANNEL || gb_htable_size(&ps->tab[GB_PUBSUB_PATTERN]) == 0)
        return receivers;
    gb_htable_iter it;
    gb_htable_iter_init(&it, &ps->tab[GB_PUBSUB_PATTERN]);
    for (gb_hnode *n; (n = gb_htable_iter_next(&it));) {
        ps_entry *p = (ps_entry *)n;
        if (!gb_glob_match(p->name, p->len, channel.ptr, channel.len, false))
            continue;
        for (uint32_t i = 0; i < p->n; i++)
            deliver(p->subs[i], GB_PUBSUB_PATTERN, p, channel, msg);
        receivers += p->n;
    }
    gb_htable_iter_done(&it);
    return receivers;
}

void gb_pubsub_channels(gb_engine *eng, enum gb_pubsub_kind kind, const gb_slice *pattern,
                        void (*fn)(void *ctx, gb_slice name), void *ctx)
{
    gb_htable_iter it;
    gb_htable_iter_init(&it, &eng->pubsub->tab[kind]);
    for (gb_hnode *n; (n = gb_htable_iter_next(&it));) {
        ps_entry *e = (ps_entry *)n;
        if (!pattern || gb_glob_match(pattern->ptr, pattern->len, e->name, e->len, false))
            fn(ctx, entry_name(e));
    }
    gb_htable_iter_done(&it);
}

size_t gb_pubsub_numsub(gb_engine *eng, enum gb_pubsub_kind kind, gb_slice channel)
{
    ps_entry *e = (ps_entry *)gb_htable_find(&eng->pubsub->tab[kind], &channel, gb_hash_slice(channel));
    return e ? e->n : 0;
}

/* ---- ACL changes ----------------------------------------------------------------- */

static bool may_keep_all(const gb_client *c)
{
    for (int k = 0; k < GB_PUBSUB_KINDS; k++) {
        bool ok = true;
        gb_htable_iter it;
        gb_htable_iter_init(&it, (gb_htable *)&c->pubsub->tab[k]);
        for (gb_hnode *n; ok && (n = gb_htable_iter_next(&it));)
            ok = gb_acl_check_channel(c, entry_name(((ps_sub *)n)->e), k == GB_PUBSUB_PATTERN);
        gb_htable_iter_done(&it);
        if (!ok)
            return false;
    }
    return true;
}

void gb_pubsub_kill_denied(gb_engine *eng, const struct gb_acl_user *u, gb_client *current)
{
    for (gb_client *c = eng->clients; c; c = c->next) {
        if (c->user != u || !c->pubsub || (c->flags & GB_CLIENT_CLOSE_ASAP) || may_keep_all(c))
            continue;
        if (c == current) {
            c->flags |= GB_CLIENT_CLOSE_AFTER_REPLY;
            continue;
        }
        gb_client_kill(c);
    }
}

/* ---- keyspace notifications ------------------------------------------------------ */

static const struct {
    char ch;
    int flag;
} classes[] = {{'g', GB_NOTIFY_GENERIC}, {'$', GB_NOTIFY_STRING},  {'l', GB_NOTIFY_LIST},    {'s', GB_NOTIFY_SET},
               {'h', GB_NOTIFY_HASH},    {'z', GB_NOTIFY_ZSET},    {'x', GB_NOTIFY_EXPIRED}, {'e', GB_NOTIFY_EVICTED},
               {'t', GB_NOTIFY_STREAM},  {'d', GB_NOTIFY_MODULE},  {'n', GB_NOTIFY_NEW},     {'K', GB_NOTIFY_KEYSPACE},
               {'E', GB_NOTIFY_KEYEVENT}, {'m', GB_NOTIFY_KEY_MISS}};

int gb_notify_parse(const char *s)
{
    int flags = 0;
    for (; *s; s++) {
        if (*s == 'A') {
            flags |= GB_NOTIFY_ALL;
            continue;
        }
        size_t i = 0;
        while (i < GB_ARRAY_LEN(classes) && classes[i].ch != *s)
            i++;
        if (i == GB_ARRAY_LEN(classes))
            return -1;
        flags |= classes[i].flag;
    }
    return flags;
}

void gb_notify_format(int flags, char *buf)
{
    /* Redis writes A for the whole set, else the type letters then 'n';
     * K, E and m always follow (so "n" is not shown beside A). */
    size_t n = 0;
    bool all = (flags & GB_NOTIFY_ALL) == GB_NOTIFY_ALL;
    if (all)
        buf[n++] = 'A';
    for (size_t i = 0; i < GB_ARRAY_LEN(classes); i++) {
        bool tail = classes[i].ch == 'K' || classes[i].ch == 'E' || classes[i].ch == 'm';
        if ((flags & classes[i].flag) && (tail || !all))
            buf[n++] = classes[i].ch;
    }
    buf[n] = '\0';
}

/* "__keyspace@<db>__:<key>" or "__keyevent@<db>__:<event>" into buf when it
 * fits, else into an allocation (*heap). */
static gb_slice notify_channel(char *buf, size_t cap, char **heap, const char *prefix, int dbid, gb_slice tail)
{
    char head[48];
    int h = snprintf(head, sizeof head, "__%s@%d__:", prefix, dbid);
    size_t len = (size_t)h + tail.len;
    char *p = len <= cap ? buf : (*heap = gb_malloc(len));
    memcpy(p, head, (size_t)h);
    memcpy(p + h, tail.ptr, tail.len);
    return gb_slice_make(p, len);
}

void gb_notify_publish(gb_engine *eng, int type, const char *event, gb_slice key, int dbid)
{
    int flags = eng->cfg.notify_keyspace_events;
    gb_slice ev = gb_slice_cstr(event);
    char buf[256];
    char *heap = NULL;
    if (flags & GB_NOTIFY_KEYSPACE) {
        gb_slice ch = notify_channel(buf, sizeof buf, &heap, "keyspace", dbid, key);
        gb_pubsub_publish(eng, GB_PUBSUB_CHANNEL, ch, ev);
        gb_free(heap);
        heap = NULL;
    }
    if (flags & GB_NOTIFY_KEYEVENT) {
        gb_slice ch = notify_channel(buf, sizeof buf, &heap, "keyevent", dbid, ev);
        gb_pubsub_publish(eng, GB_PUBSUB_CHANNEL, ch, key);
        gb_free(heap);
    }
    (void)type;
}
