#include "engine/core/keyspace/db.h"
#include "engine/core/pubsub/pubsub.h"
#include "engine/cluster/keyslot.h"

#include "engine/core/request/blocking.h"
#include "engine/core/engine.h"
#include "engine/core/memory/evict.h"
#include "engine/core/memory/lazyfree.h"
#include "engine/core/memory/sliced_free.h"
#include "engine/core/request/multi.h"
#include "engine/core/request/propagate.h"
#include "engine/core/pubsub/tracking.h"
#include "engine/core/keyspace/hfe.h"
#include "engine/core/keyspace/slot_list.h"
#include "engine/core/replication/replica.h"
#include "engine/base/mem.h"
#include "engine/base/random.h"
#include "engine/base/util.h"
#include "platform/clock.h"

/* ---- key table type ------------------------------------------------------ */

static uint64_t kv_hash(const gb_hnode *n)
{
    const gb_kv *kv = (const gb_kv *)n;
    return gb_hash_bytes(gb_kv_key_ptr(kv), gb_kv_keylen(kv));
}

static bool kv_key_eq(const gb_hnode *n, const void *key)
{
    const gb_kv *kv = (const gb_kv *)n;
    const gb_slice *k = key;
    return gb_kv_keylen(kv) == k->len && memcmp(gb_kv_key_ptr(kv), k->ptr, k->len) == 0;
}

static const gb_htable_type kv_table_type = {kv_hash, kv_key_eq};

/* ---- type registry ------------------------------------------------------- */

static const gb_type_ops *type_ops[GB_TYPE_COUNT];

void gb_type_register(enum gb_type t, const gb_type_ops *ops) { type_ops[t] = ops; }

const gb_type_ops *gb_type_get(enum gb_type t) { return type_ops[t]; }

const char *gb_type_name(enum gb_type t)
{
    static const char *names[GB_TYPE_COUNT] = {"string", "list", "set", "zset", "hash", "stream"};
    return (unsigned)t < GB_TYPE_COUNT ? names[t] : "none";
}

/* ---- records ------------------------------------------------------------- */

gb_slice gb_kv_string(const gb_kv *kv, char *buf)
{
    switch (kv->enc) {
    case GB_ENC_INT:
        return gb_slice_make(buf, gb_ll2str(buf, gb_kv_int(kv)));
    case GB_ENC_EMBSTR:
        return gb_kv_embstr(kv);
    case GB_ENC_RAW: {
        const gb_str *s = gb_kv_ptr(kv);
        return gb_slice_make(s->data, s->len);
    }
    default:
        return gb_slice_make("", 0);
    }
}

static void free_value(gb_kv *kv)
{
    if (kv->enc == GB_ENC_RAW) {
        gb_free(gb_kv_ptr(kv));
    } else if (kv->enc == GB_ENC_OBJ) {
        void *obj = gb_kv_ptr(kv);
        if (obj)
            type_ops[kv->type]->free(obj);
    }
}

void gb_kv_free(gb_kv *kv)
{
    free_value(kv);
    gb_free(kv);
}

size_t gb_kv_free_effort(const gb_kv *kv)
{
    void *obj = kv->enc == GB_ENC_OBJ ? gb_kv_ptr(kv) : NULL;
    return obj ? type_ops[kv->type]->free_effort(obj) : 1;
}

size_t gb_kv_mem(const gb_kv *kv)
{
    size_t n = gb_mem_accounted((void *)kv);
    if (kv->enc == GB_ENC_RAW)
        n += gb_mem_accounted(gb_kv_ptr(kv));
    else if (kv->enc == GB_ENC_OBJ && gb_kv_ptr(kv) && type_ops[kv->type]->mem)
        n += type_ops[kv->type]->mem(gb_kv_ptr(kv));
    return n;
}

/* A background save's copy-on-write (gb_cow, db.h): saves a key present
 * when the snapshot began before it changes or goes. */
static inline void before_write(gb_db *db, gb_kv *kv)
{
    gb_cow *cow = &db->eng->cow;
    if (GB_UNLIKELY(gb_cow_pending(cow, kv)))
        cow->save_key(cow->ctx, db, kv);
}

static inline void before_db_change(gb_db *db)
{
    gb_cow *cow = &db->eng->cow;
    if (GB_UNLIKELY(cow->active))
        cow->save_db(cow->ctx, db);
}

/* A flush: a snapshot in progress takes the table if keys in it are still
 * to be saved, so the flush neither waits for them to be serialised nor
 * queues their blocks in memory; the flush then frees an empty table. */
static inline void before_db_flush(gb_db *db)
{
    gb_cow *cow = &db->eng->cow;
    if (GB_UNLIKELY(cow->active))
        (void)cow->take_db(cow->ctx, db);
}

/* Stores a key's length in a record whose flags are set. */
static void set_keylen(gb_kv *kv, size_t len)
{
    if (GB_LIKELY(len < GB_KV_KLEN_LONG)) {
        kv->klen = (unsigned)len;
        return;
    }
    kv->klen = GB_KV_KLEN_LONG;
    uint64_t n = len;
    memcpy((char *)kv + gb_kv_key_offset(kv) - sizeof n, &n, sizeof n);
}

/* Allocates a record for key with room for the value word or embstr_len
 * embedded bytes (gb_kv_record_size), the value itself left to the caller. */
static gb_kv *kv_alloc(gb_db *db, gb_slice key, bool volatile_, int64_t expire, size_t embstr_len)
{
    /* In cluster mode database 0's records carry their slot links. */
    bool linked = GB_UNLIKELY(db->slot_first != NULL);
    unsigned flags = (volatile_ ? GB_KV_VOLATILE : 0) | (linked ? GB_KV_SLOT_LINKED : 0);
    size_t hdr = gb_kv_fields_size(flags, key.len);
    gb_kv *kv = gb_malloc(gb_kv_record_size(hdr + key.len, embstr_len));
    memset(kv, 0, sizeof *kv);
    /* Born saved: a key created during a snapshot was not there when it began. */
    kv->flags = flags | db->eng->cow.mark;
    set_keylen(kv, key.len);
    gb_kv_clock_init(db->eng, kv);
    if (volatile_)
        *gb_kv_expiry_of(kv) = (gb_kv_expiry){.at_ms = expire};
    if (linked)
        memset(gb_kv_slot_link_of(kv), 0, sizeof(gb_kv_slot_link));
    if (key.len)
        memcpy((char *)kv + hdr, key.ptr, key.len);
    return kv;
}

/* A record holding an object pointer or a heap string. */
static gb_kv *kv_alloc_ptr(gb_db *db, gb_slice key, bool volatile_, int64_t expire, enum gb_type t, enum gb_enc enc,
                           const void *ptr)
{
    gb_kv *kv = kv_alloc(db, key, volatile_, expire, 0);
    kv->type = t;
    kv->enc = enc;
    gb_kv_set_ptr(kv, ptr);
    return kv;
}

/* How a new string value is encoded: by its content (an integer-looking
 * value becomes GB_ENC_INT), as text (embedded or heap by size: INCRBYFLOAT's
 * results), or kept in a heap buffer (COPY/RENAME/MOVE of a raw string keep
 * its encoding, as Redis's objects do). */
enum str_mode { STR_AUTO, STR_TEXT, STR_RAW };

/* Makes kv's value the integer v, marked as redis-server would hold it
 * now (keyrecord.h, GB_KV_INT_SHARED): shared while no LRU or LFU
 * maxmemory policy is in force (Redis's MAXMEMORY_FLAG_NO_SHARED_INTEGERS). */
static void set_int_value(gb_db *db, gb_kv *kv, int64_t v)
{
    const gb_settings *cfg = &db->eng->cfg;
    bool shares = cfg->maxmemory == 0 || !(cfg->maxmemory_policy & (GB_EVICT_FLAG_LRU | GB_EVICT_FLAG_LFU));
    kv->enc = GB_ENC_INT;
    kv->vlen = shares ? GB_KV_INT_SHARED : GB_KV_INT_PRIVATE;
    gb_kv_set_int(kv, v);
}

/* Fills a fresh record's string value from val. */
static gb_kv *kv_new_string(gb_db *db, gb_slice key, gb_slice val, bool volatile_, int64_t expire, enum str_mode mode)
{
    int64_t iv;
    if (mode == STR_AUTO && val.len <= 20 && gb_str2ll_canonical(val.ptr, val.len, &iv)) {
        gb_kv *kv = kv_alloc(db, key, volatile_, expire, 0);
        set_int_value(db, kv, iv);
        return kv;
    }
    if (mode != STR_RAW && val.len <= GB_INLINE_MAX) {
        gb_kv *kv = kv_alloc(db, key, volatile_, expire, val.len);
        kv->enc = GB_ENC_EMBSTR;
        gb_kv_set_embstr(kv, val);
        return kv;
    }
    gb_str *s = gb_malloc(sizeof(gb_str) + val.len);
    s->len = s->cap = val.len;
    if (val.len)
        memcpy(s->data, val.ptr, val.len);
    return kv_alloc_ptr(db, key, volatile_, expire, GB_TYPE_STRING, GB_ENC_RAW, s);
}

/* ---- volatile array ------------------------------------------------------ */

static void vol_add(gb_db *db, gb_kv *kv)
{
    if (db->nvol == db->volcap) {
        db->volcap = db->volcap ? db->volcap * 2 : 16;
        db->vol = gb_realloc(db->vol, db->volcap * sizeof *db->vol);
    }
    gb_kv_expiry_of(kv)->vindex = (uint32_t)db->nvol;
    db->vol[db->nvol++] = kv;
}

static void vol_remove(gb_db *db, gb_kv *kv)
{
    uint32_t i = gb_kv_expiry_of(kv)->vindex;
    gb_kv *last = db->vol[--db->nvol];
    db->vol[i] = last;
    gb_kv_expiry_of(last)->vindex = i;
    if (db->volcap > 64 && db->nvol * 4 < db->volcap) {
        db->volcap /= 2;
        db->vol = gb_realloc(db->vol, db->volcap * sizeof *db->vol);
    }
}

/* ---- database lifecycle ------------------------------------------------------ */

void gb_db_init(gb_db *db, struct gb_engine *eng, int id)
{
    memset(db, 0, sizeof *db);
    gb_htable_init(&db->keys, &kv_table_type);
    db->eng = eng;
    db->id = id;
}

static void free_kv_cb(gb_hnode *n, void *ctx)
{
    (void)ctx;
    gb_kv_free((gb_kv *)n);
}

void gb_db_flush(gb_db *db)
{
    before_db_flush(db);
    gb_htable_clear(&db->keys, free_kv_cb, NULL);
    if (db->slot_keys)
        gb_slot_list_clear(db);
    gb_hfe_index_drop(db);
    gb_free(db->vol);
    db->vol = NULL;
    db->nvol = db->volcap = 0;
}

/* The table goes to `take` whole (it frees the records); the database gets
 * a new, empty one at once. */
static void flush_handing_over(gb_db *db, void (*take)(struct gb_engine *eng, gb_htable *table, gb_kv **vol))
{
    before_db_flush(db);
    take(db->eng, &db->keys, db->vol);
    gb_htable_init(&db->keys, db->keys.type);
    if (db->slot_keys)
        gb_slot_list_clear(db);
    gb_hfe_index_drop(db);
    db->vol = NULL;
    db->nvol = db->volcap = 0;
}

void gb_db_flush_lazy(gb_db *db) { flush_handing_over(db, gb_lazyfree_table); }
void gb_db_flush_sliced(gb_db *db) { flush_handing_over(db, gb_sliced_free_table); }

void gb_db_destroy(gb_db *db)
{
    gb_db_flush(db);
    gb_slot_list_destroy(db);
}

void gb_db_swap_data(gb_db *a, gb_db *b)
{
    before_db_change(a);
    before_db_change(b);
    gb_htable tk = a->keys;
    a->keys = b->keys;
    b->keys = tk;
    uint32_t *ts = a->slot_keys;
    a->slot_keys = b->slot_keys;
    b->slot_keys = ts;
    gb_kv **tf = a->slot_first;
    a->slot_first = b->slot_first;
    b->slot_first = tf;
    gb_kv **tv = a->vol;
    a->vol = b->vol;
    b->vol = tv;
    size_t tn = a->nvol, tc = a->volcap;
    a->nvol = b->nvol;
    a->volcap = b->volcap;
    b->nvol = tn;
    b->volcap = tc;
    struct gb_zset *th = a->hfe;
    a->hfe = b->hfe;
    b->hfe = th;
}

/* ---- lookups --------------------------------------------------------------- */

/* Frees a record that left its table: by the lazy-free thread when lazy
 * says so and its value is big, else by this thread, in slices between
 * events when its value is big. */
static void release(gb_db *db, gb_kv *kv, bool lazy)
{
    if (lazy)
        gb_lazyfree_kv(db->eng, kv);
    else
        gb_sliced_free_kv(db->eng, kv);
}

/* Whether a change to a key of type t may serve or fail its waiters:
 * lists and sorted sets when they appear, streams also when they go
 * (XREADGROUP waiters fail then, as in Redis 7.0). */
static inline bool wakes_waiters(uint8_t t) { return t == GB_TYPE_LIST || t == GB_TYPE_ZSET || t == GB_TYPE_STREAM; }

/* Cluster mode's per-slot key counts and lists: one predictable test otherwise. */
static inline void slot_add(gb_db *db, gb_kv *kv)
{
    if (GB_UNLIKELY(db->slot_keys != NULL))
        gb_slot_list_add(db, kv);
}

static inline void slot_remove(gb_db *db, gb_kv *kv)
{
    if (GB_UNLIKELY(db->slot_keys != NULL))
        gb_slot_list_remove(db, kv);
}

void gb_db_count_slots(gb_db *db)
{
    gb_slot_list_create(db);
    /* keys present already (none at start-up, but be exact): counted, not
     * listed (their records have no links) */
    gb_htable_iter it;
    gb_htable_iter_init(&it, &db->keys);
    for (gb_hnode *n; (n = gb_htable_iter_next(&it)) != NULL;)
        gb_slot_list_add(db, (gb_kv *)n);
    gb_htable_iter_done(&it);
}

static void unlink_and_free(gb_db *db, gb_kv *kv)
{
    gb_slice key = gb_kv_key(kv);
    if (kv->type == GB_TYPE_STREAM)
        gb_blocking_signal_key(db, key);
    gb_htable_remove(&db->keys, &key, gb_hash_slice(key));
    slot_remove(db, kv);
    if (gb_kv_volatile(kv))
        vol_remove(db, kv);
    release(db, kv, db->eng->cfg.lazyfree_lazy_expire);
}

/* What every expiry tells the rest of the engine, once the key is out of
 * its table (its bytes still valid): the event, WATCH, tracking (a change
 * no client made), the DEL to the log and replicas, the count. It is not a
 * change a command made: dirty does not move (the gate would take the
 * command for a write). */
static void signal_expiry(gb_db *db, gb_slice key)
{
    gb_notify_keyspace_event(db->eng, GB_NOTIFY_EXPIRED, "expired", key, db->id);
    gb_multi_touch_key(db, key);
    if (GB_UNLIKELY(db->eng->tracking != NULL))
        gb_tracking_invalidate_expired(db->eng, key);
    gb_propagate_expired(db, key);
    db->eng->stats.expired_keys++;
}

/* Deletes kv if its time has come; returns true if it did (or, on a
 * replica, if it reads as gone). for_write: a write command's lookup, which
 * on a writable replica deletes the expired key before the write makes a
 * new one (Redis 7.0's LOOKUP_WRITE, EXPIRE_FORCE_DELETE_EXPIRED); else
 * the write would land in the expired record and stay invisible. */
static bool expire_if_needed(gb_db *db, gb_kv *kv, bool for_write)
{
    if (!gb_kv_expired_at(kv, db->eng->now_ms) || db->eng->loading)
        return false;
    /* A replica leaves the key to the primary's DEL: absent to its
     * clients, still there for the primary's own commands (Redis 7.0). */
    bool present;
    if (GB_UNLIKELY(gb_replica_keeps_expired(db->eng, &present)) && (present || !for_write))
        return !present;
    /* Under CLIENT PAUSE nothing is deleted (Redis 7.0's expireIfNeeded):
     * the key reads as gone, its deletion waits for the pause to end. */
    if (GB_UNLIKELY(db->eng->pause_type != 0))
        return true;
    before_write(db, kv);
    gb_slice key = gb_kv_key(kv);
    /* Copy the key: the record is freed below. */
    char stackbuf[128];
    char *kcopy = key.len <= sizeof stackbuf ? stackbuf : gb_malloc(key.len);
    memcpy(kcopy, key.ptr, key.len);
    unlink_and_free(db, kv);
    signal_expiry(db, gb_slice_make(kcopy, key.len));
    if (kcopy != stackbuf)
        gb_free(kcopy);
    return true;
}

static gb_kv *lookup(gb_db *db, gb_slice key, bool touch, bool for_write)
{
    gb_kv *kv = (gb_kv *)gb_htable_find(&db->keys, &key, gb_hash_slice(key));
    if (!kv)
        return NULL;
    if (expire_if_needed(db, kv, for_write))
        return NULL;
    if (touch)
        gb_kv_clock_touch(db->eng, kv);
    return kv;
}

static gb_kv *lookup_read(gb_db *db, gb_slice key, bool touch)
{
    gb_kv *kv = lookup(db, key, touch, false);
    if (kv) {
        db->eng->stats.keyspace_hits++;
    } else {
        db->eng->stats.keyspace_misses++;
        gb_notify_keyspace_event(db->eng, GB_NOTIFY_KEY_MISS, "keymiss", key, db->id);
    }
    return kv;
}

gb_kv *gb_db_lookup_read(gb_db *db, gb_slice key) { return lookup_read(db, key, true); }

gb_kv *gb_db_lookup_read_notouch(gb_db *db, gb_slice key) { return lookup_read(db, key, false); }

gb_kv *gb_db_lookup_write(gb_db *db, gb_slice key)
{
    gb_kv *kv = lookup(db, key, true, true);
    if (kv)
        before_write(db, kv); /* the caller may change it */
    return kv;
}

gb_kv *gb_db_lookup_read_changing(gb_db *db, gb_slice key)
{
    gb_kv *kv = lookup_read(db, key, true);
    if (kv)
        before_write(db, kv);
    return kv;
}

gb_kv *gb_db_lookup_quiet(gb_db *db, gb_slice key) { return lookup(db, key, false, false); }

/* ---- insertion and replacement ----------------------------------------------- */

/* Puts kv in the table, replacing (and freeing) any record with the same key. */
static void install(gb_db *db, gb_kv *kv)
{
    gb_slice key = gb_kv_key(kv);
    uint64_t h = gb_hash_slice(key);
    gb_hnode **link = gb_htable_find_link(&db->keys, &key, h);
    if (link) {
        gb_kv *old = (gb_kv *)gb_hlink_record(link);
        before_write(db, old);
        gb_htable_replace_at(link, &kv->node);
        if (GB_UNLIKELY(db->slot_keys != NULL))
            gb_slot_list_replace(db, old, kv);
        if (gb_kv_volatile(old))
            vol_remove(db, old);
        if (old->type == GB_TYPE_STREAM)
            gb_blocking_signal_key(db, key);
        release(db, old, db->eng->cfg.lazyfree_lazy_server_del);
    } else {
        gb_htable_insert(&db->keys, &kv->node, h);
        slot_add(db, kv);
        gb_notify_keyspace_event(db->eng, GB_NOTIFY_NEW, "new", key, db->id);
    }
    if (gb_kv_volatile(kv))
        vol_add(db, kv);
    gb_hfe_track_kv(db, kv); /* RENAME, COPY, MOVE, RESTORE of a hash with field deadlines */
    if (wakes_waiters(kv->type))
        gb_blocking_signal_key(db, key);
}

gb_kv *gb_db_add_object(gb_db *db, gb_slice key, enum gb_type t, void *obj)
{
    gb_kv *kv = kv_alloc_ptr(db, key, false, 0, t, GB_ENC_OBJ, obj);
    gb_htable_insert(&db->keys, &kv->node, gb_hash_slice(key));
    slot_add(db, kv);
    gb_notify_keyspace_event(db->eng, GB_NOTIFY_NEW, "new", key, db->id);
    if (wakes_waiters((uint8_t)t))
        gb_blocking_signal_key(db, key);
    return kv;
}

/* ---- loading ----------------------------------------------------------------- */

uint64_t gb_db_prefetch_key(gb_db *db, gb_slice key)
{
    uint64_t h = gb_hash_slice(key);
    gb_htable_prefetch(&db->keys, h);
    return h;
}

gb_kv *gb_db_loaded_string(gb_db *db, gb_slice key, gb_slice val, int64_t expire)
{
    return kv_new_string(db, key, val, expire >= 0, expire, STR_AUTO);
}

gb_kv *gb_db_loaded_object(gb_db *db, gb_slice key, enum gb_type t, void *obj, int64_t expire)
{
    return kv_alloc_ptr(db, key, expire >= 0, expire, t, GB_ENC_OBJ, obj);
}

void gb_db_prefetch_chain(gb_db *db, uint64_t hash) { gb_htable_prefetch_chain(&db->keys, hash); }
void gb_db_prefetch_chain_next(gb_db *db, uint64_t hash) { gb_htable_prefetch_chain_next(&db->keys, hash); }

/* What a loaded key's insertion does besides linking its record. */
static void note_loaded(gb_db *db, gb_kv *kv)
{
    slot_add(db, kv);
    if (gb_kv_volatile(kv))
        vol_add(db, kv);
    gb_hfe_track_kv(db, kv);
}

/* One hash, one chain walk: the check for a key twice and the insertion. */
bool gb_db_insert_loaded(gb_db *db, gb_kv *kv, uint64_t hash)
{
    gb_slice key = gb_kv_key(kv);
    if (gb_htable_find(&db->keys, &key, hash))
        return false;
    gb_htable_insert(&db->keys, &kv->node, hash);
    note_loaded(db, kv);
    return true;
}

/* Overwrites a string record's value where it stands when the new value fits
 * the allocation it already has: a SET of a same-sized value (the common
 * case: counters, caches, benchmarks) then costs no malloc and no free. */
static bool overwrite_in_place(gb_db *db, gb_kv *kv, gb_slice val, enum str_mode mode)
{
    if (kv->type != GB_TYPE_STRING)
        return false;
    int64_t iv;
    bool as_int = mode == STR_AUTO && val.len <= 20 && gb_str2ll_canonical(val.ptr, val.len, &iv);
    if (kv->enc == GB_ENC_RAW) {
        gb_str *s = gb_kv_ptr(kv);
        if (as_int || val.len <= GB_EMBSTR_MAX || s->cap < val.len)
            return false;
        memcpy(s->data, val.ptr, val.len);
        s->len = val.len;
        return true;
    }
    if (as_int) {
        set_int_value(db, kv, iv);
        return true;
    }
    if (val.len > GB_INLINE_MAX || gb_kv_key_end(kv) + val.len > gb_mem_usable(kv))
        return false;
    kv->enc = GB_ENC_EMBSTR;
    gb_kv_set_embstr(kv, val);
    return true;
}

/* A value replacing another keeps its LFU history (Redis's dbOverwrite):
 * overwriting a hot key does not make it look new. */
static inline void keep_clock(gb_kv *kv, const gb_kv *old) { kv->lru = old->lru; }

gb_kv *gb_db_set_object(gb_db *db, gb_slice key, enum gb_type t, void *obj)
{
    gb_kv *old = lookup(db, key, false, true); /* an expired key goes first, as in Redis's lookupKeyWrite */
    gb_kv *kv = kv_alloc_ptr(db, key, false, 0, t, GB_ENC_OBJ, obj);
    if (old && gb_policy_is_lfu(db->eng))
        keep_clock(kv, old); /* Redis's dbOverwrite */
    install(db, kv);
    return kv;
}

/* Sets key (whose record is old, or NULL when it has none) to a string. */
static gb_kv *set_string_over(gb_db *db, gb_kv *old, gb_slice key, gb_slice val, bool keep_ttl, enum str_mode mode)
{
    int64_t expire = -1;
    if (old) {
        before_write(db, old);
        if ((keep_ttl || !gb_kv_volatile(old)) && overwrite_in_place(db, old, val, mode)) {
            if (!gb_policy_is_lfu(db->eng))
                old->lru = gb_lru_clock(db->eng);
            return old;
        }
        if (keep_ttl && gb_kv_volatile(old))
            expire = gb_kv_expire(old);
    }
    /* A replacement copies the key out of old before install frees it. */
    gb_kv *kv = kv_new_string(db, key, val, expire >= 0, expire, mode);
    if (old && gb_policy_is_lfu(db->eng))
        keep_clock(kv, old);
    install(db, kv);
    return kv;
}

static gb_kv *set_string(gb_db *db, gb_slice key, gb_slice val, bool keep_ttl, enum str_mode mode)
{
    gb_hnode **link = gb_htable_find_link(&db->keys, &key, gb_hash_slice(key));
    return set_string_over(db, link ? (gb_kv *)gb_hlink_record(link) : NULL, key, val, keep_ttl, mode);
}

gb_kv *gb_db_set_string_found(gb_db *db, gb_kv *kv, gb_slice val, bool keep_ttl)
{
    return set_string_over(db, kv, gb_kv_key(kv), val, keep_ttl, STR_AUTO);
}

gb_kv *gb_db_add_string(gb_db *db, gb_slice key, gb_slice val)
{
    gb_kv *kv = kv_new_string(db, key, val, false, -1, STR_AUTO);
    gb_htable_insert(&db->keys, &kv->node, gb_hash_slice(key));
    slot_add(db, kv);
    gb_notify_keyspace_event(db->eng, GB_NOTIFY_NEW, "new", key, db->id);
    return kv;
}

gb_kv *gb_db_set_string(gb_db *db, gb_slice key, gb_slice val, bool keep_ttl)
{
    return set_string(db, key, val, keep_ttl, STR_AUTO);
}

gb_kv *gb_db_set_string_text(gb_db *db, gb_slice key, gb_slice val, bool keep_ttl)
{
    return set_string(db, key, val, keep_ttl, STR_TEXT);
}

gb_kv *gb_db_set_int_found(gb_db *db, gb_kv *kv, int64_t v)
{
    before_write(db, kv);
    /* An integer fits any string record's value word (gb_kv_record_size):
     * no reallocation. Inline bytes of an embedded string stay allocated
     * (they go with the key). */
    if (kv->enc == GB_ENC_RAW)
        gb_free(gb_kv_ptr(kv));
    set_int_value(db, kv, v);
    return kv;
}

gb_kv *gb_db_set_int(gb_db *db, gb_slice key, int64_t v)
{
    gb_kv *old = (gb_kv *)gb_htable_find(&db->keys, &key, gb_hash_slice(key));
    if (old && old->type == GB_TYPE_STRING)
        return gb_db_set_int_found(db, old, v);
    if (old)
        before_write(db, old);
    gb_kv *kv = kv_alloc(db, key, false, 0, 0);
    set_int_value(db, kv, v);
    install(db, kv);
    return kv;
}

gb_str *gb_db_string_writable(gb_db *db, gb_kv *kv, size_t cap)
{
    before_write(db, kv);
    if (kv->enc == GB_ENC_RAW) {
        gb_str *s = gb_kv_ptr(kv);
        if (s->cap < cap) {
            /* Grow geometrically so repeated APPENDs are amortized O(1). */
            size_t ncap = cap < 1024 * 1024 ? cap * 2 : cap + 1024 * 1024;
            s = gb_realloc(s, sizeof(gb_str) + ncap);
            s->cap = ncap;
            gb_kv_set_ptr(kv, s);
        }
        return s;
    }
    char buf[GB_INT_BUF];
    gb_slice cur = gb_kv_string(kv, buf);
    size_t ncap = GB_MAX(cap, cur.len);
    gb_str *s = gb_malloc(sizeof(gb_str) + ncap);
    s->len = cur.len;
    s->cap = ncap;
    if (cur.len)
        memcpy(s->data, cur.ptr, cur.len);
    /* The inline bytes (if any) stay allocated but unused; they go with the
     * key. The pointer fits any string record's value field. */
    kv->enc = GB_ENC_RAW;
    gb_kv_set_ptr(kv, s);
    return s;
}

gb_str *gb_db_string_sized(gb_db *db, gb_kv *kv, size_t cap)
{
    gb_str *s = gb_db_string_writable(db, kv, cap);
    if (s->cap != cap && s->len <= cap) {
        s = gb_realloc(s, sizeof(gb_str) + cap);
        s->cap = cap;
        gb_kv_set_ptr(kv, s);
    }
    return s;
}

gb_kv *gb_db_set_string_owned(gb_db *db, gb_slice key, gb_str *s)
{
    gb_kv *kv = kv_alloc_ptr(db, key, false, -1, GB_TYPE_STRING, GB_ENC_RAW, s);
    install(db, kv);
    return kv;
}

gb_kv *gb_db_insert_value(gb_db *db, gb_slice key, const gb_kv *src, bool copy_value, int64_t expire)
{
    gb_kv *kv;
    if (src->type == GB_TYPE_STRING && src->enc != GB_ENC_OBJ) {
        char buf[GB_INT_BUF];
        enum str_mode mode = src->enc == GB_ENC_INT ? STR_AUTO : src->enc == GB_ENC_RAW ? STR_RAW : STR_TEXT;
        kv = kv_new_string(db, key, gb_kv_string(src, buf), expire >= 0, expire, mode);
        /* Redis's COPY duplicates an integer into an object of its own;
         * RENAME and MOVE keep the object, shared or not. */
        if (src->enc == GB_ENC_INT)
            kv->vlen = copy_value ? GB_KV_INT_PRIVATE : src->vlen;
    } else {
        void *obj = gb_kv_ptr(src);
        kv = kv_alloc_ptr(db, key, expire >= 0, expire, src->type, src->enc,
                          copy_value ? type_ops[src->type]->dup(obj) : obj);
    }
    /* A moved value (RENAME, MOVE) is the same object in Redis: its access
     * clock goes with it; a copy is a new object. */
    if (!copy_value)
        keep_clock(kv, src);
    install(db, kv);
    return kv;
}

void gb_db_steal_value(gb_kv *kv)
{
    if (kv->enc == GB_ENC_OBJ)
        gb_kv_set_ptr(kv, NULL);
}

bool gb_db_delete(gb_db *db, gb_slice key) { return gb_db_delete_lazy(db, key, db->eng->cfg.lazyfree_lazy_server_del); }

/* Removes key; with expiring, one found past its deadline goes as an
 * expiry (signalled here, false returned). */
static bool delete_stored(gb_db *db, gb_slice key, bool lazy, bool expiring)
{
    gb_kv *kv = (gb_kv *)gb_htable_remove(&db->keys, &key, gb_hash_slice(key));
    if (!kv)
        return false;
    slot_remove(db, kv);
    before_write(db, kv);
    /* A replica's deletions are its primary's: an expiry is counted and
     * propagated there. */
    bool expired = expiring && gb_kv_expired_at(kv, db->eng->now_ms) && !db->eng->loading &&
                   !gb_engine_is_replica(db->eng);
    if (gb_kv_volatile(kv))
        vol_remove(db, kv);
    if (kv->type == GB_TYPE_STREAM)
        gb_blocking_signal_key(db, key);
    if (expired) /* found expired by the deletion itself: the caller sees no deletion and signals nothing */
        signal_expiry(db, key); /* the key's bytes are valid until the free below */
    release(db, kv, lazy);
    gb_htable_maybe_shrink(&db->keys);
    return !expired;
}

bool gb_db_delete_lazy(gb_db *db, gb_slice key, bool lazy) { return delete_stored(db, key, lazy, true); }

bool gb_db_delete_evicted(gb_db *db, gb_slice key, bool lazy) { return delete_stored(db, key, lazy, false); }

/* ---- expiry -------------------------------------------------------------------- */

bool gb_db_already_expired(const gb_db *db, int64_t when_ms)
{
    return when_ms <= db->eng->now_ms && !db->eng->loading && !gb_engine_is_replica(db->eng);
}

/* Rebuilds kv with or without the expiry field, keeping its table slot. */
static gb_kv *rebuild(gb_db *db, gb_kv *kv, bool volatile_, int64_t expire)
{
    bool linked = (kv->flags & GB_KV_SLOT_LINKED) != 0;
    unsigned new_flags = volatile_ ? (kv->flags | GB_KV_VOLATILE) : (kv->flags & ~GB_KV_VOLATILE);
    /* The long-length field (if any), the key and the value move as one
     * block: the fields before it are multiples of 8, so the value word
     * stays aligned. */
    size_t old_fields = gb_kv_fields_size(kv->flags, 0), new_fields = gb_kv_fields_size(new_flags, 0);
    size_t tail = gb_kv_record_size(gb_kv_key_end(kv), kv->enc == GB_ENC_EMBSTR ? kv->vlen : 0) - old_fields;
    gb_slice key = gb_kv_key(kv);
    gb_hnode **link = gb_htable_find_link(&db->keys, &key, gb_hash_slice(key));
    bool was_volatile = gb_kv_volatile(kv);
    if (was_volatile)
        vol_remove(db, kv);
    gb_kv *nkv = gb_malloc(new_fields + tail);
    memcpy(nkv, kv, sizeof(gb_kv));
    memcpy((char *)nkv + new_fields, (char *)kv + old_fields, tail);
    nkv->flags = new_flags;
    if (volatile_)
        *gb_kv_expiry_of(nkv) = (gb_kv_expiry){.at_ms = expire};
    if (linked) {
        *gb_kv_slot_link_of(nkv) = *gb_kv_slot_link_of(kv);
        gb_slot_list_moved(db, nkv);
    }
    gb_htable_replace_at(link, &nkv->node);
    gb_free(kv); /* the value now belongs to nkv */
    if (volatile_)
        vol_add(db, nkv);
    return nkv;
}

gb_kv *gb_db_set_expire(gb_db *db, gb_kv *kv, int64_t when_ms)
{
    before_write(db, kv);
    if (gb_kv_volatile(kv)) {
        gb_kv_expiry_of(kv)->at_ms = when_ms;
        return kv;
    }
    return rebuild(db, kv, true, when_ms);
}

gb_kv *gb_db_persist(gb_db *db, gb_kv *kv)
{
    before_write(db, kv);
    if (!gb_kv_volatile(kv))
        return kv;
    return rebuild(db, kv, false, 0);
}

/* Redis's active-expire cycle: sample ACTIVE_EXPIRE_KEYS random volatile
 * keys; if more than a quarter were expired, the db probably holds many more,
 * so go again (within the time budget). */
#define ACTIVE_EXPIRE_KEYS 20
#define ACTIVE_EXPIRE_REPEAT_PCT 25

size_t gb_db_active_expire(gb_db *db, uint64_t deadline_ns)
{
    size_t deleted = 0;
    for (int iter = 0;; iter++) {
        if (db->nvol == 0)
            break;
        size_t sampled = 0, expired = 0;
        for (int i = 0; i < ACTIVE_EXPIRE_KEYS && db->nvol > 0; i++) {
            gb_kv *kv = db->vol[gb_random_below(db->nvol)];
            sampled++;
            if (expire_if_needed(db, kv, false))
                expired++;
        }
        deleted += expired;
        if (expired * 100 <= sampled * ACTIVE_EXPIRE_REPEAT_PCT)
            break;
        if ((iter & 15) == 15 && gb_clock_mono_ns() >= deadline_ns)
            break;
    }
    if (deleted)
        gb_htable_maybe_shrink(&db->keys);
    return deleted;
}

gb_kv *gb_db_random(gb_db *db)
{
    /* An expired key drawn is deleted and another drawn, however many it
     * takes, as Redis's dbRandomKey: a live key is found while there is
     * one (giving up after 100 answered nil beside a live key). Where
     * expired keys stay (a replica, a pause), 100 draws that found only
     * them end it: with the last one drawn when every key has a deadline,
     * as Redis's replica answers, else nil. */
    bool all_volatile = db->nvol == gb_db_size(db);
    int kept = 0;
    while (gb_db_size(db) > 0) {
        gb_kv *kv = (gb_kv *)gb_htable_random(&db->keys);
        if (!kv)
            return NULL;
        size_t before = gb_db_size(db);
        if (!expire_if_needed(db, kv, false))
            return kv;
        if (gb_db_size(db) < before)
            continue;
        if (++kept == 100)
            return all_volatile ? kv : NULL;
    }
    return NULL;
}
