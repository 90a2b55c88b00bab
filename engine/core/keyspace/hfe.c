/*
 * Hash-field expiry in the keyspace: engine/core/keyspace/hfe.h.
 */
#include "engine/core/keyspace/hfe.h"

#include <math.h>

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/core/engine.h"
#include "engine/ds/zset.h"
#include "engine/core/request/multi.h"
#include "engine/core/request/propagate.h"
#include "engine/core/pubsub/pubsub.h"
#include "engine/core/pubsub/tracking.h"
#include "platform/clock.h"

/* Redis's bound on the fields one active cycle expires
 * (HFE_ACTIVE_EXPIRE_CYCLE_FIELDS), and how many hashes it looks at. */
#define HFE_CYCLE_FIELDS 1000
#define HFE_CYCLE_HASHES 200

static const gb_types_config index_cfg = {
    .zset_max_listpack_entries = 128,
    .zset_max_listpack_value = 64,
};

/* A hash as the keyspace holds it: the representation's pointer with the
 * encoding in its two low bits (engine/types/tobj.h, one layer up). */
static gb_hash hash_of(const gb_kv *kv)
{
    gb_hash h;
    memset(&h, 0, sizeof h);
    h.enc = (uint8_t)((uintptr_t)gb_kv_ptr(kv) & 3u);
    h.p = (void *)((uintptr_t)gb_kv_ptr(kv) & ~(uintptr_t)3u);
    return h;
}

/* ---- index ---------------------------------------------------------------------- */

static gb_zset *index_of(gb_db *db, bool create)
{
    if (!db->hfe && create)
        db->hfe = gb_zset_new(&index_cfg, 0, 0);
    return db->hfe;
}

void gb_hfe_index_note(gb_db *db, gb_slice key, int64_t when_ms)
{
    double score = (double)when_ms;
    gb_zadd_result res;
    gb_zset_add_many(index_of(db, true), &index_cfg, GB_ZADD_LT, 1, &score, &key, &res);
}

void gb_hfe_index_note_since(gb_db *db, gb_slice key, int64_t min_before, int64_t when_ms)
{
    if (min_before < 0 || min_before > when_ms)
        gb_hfe_index_note(db, key, when_ms);
}

static void index_set(gb_db *db, gb_slice key, int64_t when_ms)
{
    double score = (double)when_ms;
    gb_zadd_result res;
    gb_zset_add_many(index_of(db, true), &index_cfg, 0, 1, &score, &key, &res);
}

static void index_remove(gb_db *db, gb_slice key)
{
    if (db->hfe)
        gb_zset_remove(db->hfe, 1, &key);
}

void gb_hfe_track_kv(gb_db *db, const gb_kv *kv)
{
    if (kv->type != GB_TYPE_HASH || kv->enc != GB_ENC_OBJ || !gb_kv_ptr(kv))
        return;
    gb_hash h = hash_of(kv);
    int64_t min = gb_hash_ttl_min(&h);
    if (min >= 0)
        gb_hfe_index_note(db, gb_kv_key(kv), min);
}

void gb_hfe_index_drop(gb_db *db)
{
    if (db->hfe)
        gb_zset_free(db->hfe);
    db->hfe = NULL;
}

/* ---- deleting an expired field ------------------------------------------------ */

bool gb_hfe_may_delete(const gb_db *db) { return !db->eng->loading && db->eng->pause_type == 0; }

void gb_hfe_propagate_hdel(gb_db *db, gb_slice key, gb_slice field)
{
    if (!gb_propagating(&db->eng->prop))
        return;
    gb_slice argv[3] = {gb_slice_cstr("HDEL"), key, field};
    gb_propagate_record(db->eng, db->id, 3, argv);
    if (db->eng->prop.depth == 0) /* the cron: a unit of its own */
        gb_propagate_flush(db->eng);
}

void gb_hfe_notify_batch(gb_db *db, gb_slice key, size_t expired, bool key_gone)
{
    if (!expired)
        return;
    gb_notify_keyspace_event(db->eng, GB_NOTIFY_HASH, "hexpired", key, db->id);
    if (key_gone)
        gb_notify_keyspace_event(db->eng, GB_NOTIFY_GENERIC, "del", key, db->id);
}

bool gb_hfe_settle(gb_db *db, gb_slice key, gb_kv *kv, const gb_hash *h)
{
    gb_kv_set_ptr(kv, (void *)((uintptr_t)h->p | h->enc));
    /* WATCH and client tracking see the change; dirty does not move: an
     * expiry is not a change a command made (as for keys, engine/core/keyspace/db.c). */
    gb_multi_touch_key(db, key);
    if (GB_UNLIKELY(db->eng->tracking != NULL))
        gb_tracking_invalidate_key(db->eng, key);
    if (gb_hash_len(h) != 0)
        return false;
    gb_db_delete(db, key);
    return true;
}

/* ---- the active cycle ----------------------------------------------------------- */

typedef struct cycle_ctx {
    gb_db *db;
    gb_slice key;
} cycle_ctx;

static void propagate_gone(void *ctx, gb_slice field)
{
    cycle_ctx *cc = ctx;
    gb_hfe_propagate_hdel(cc->db, cc->key, field);
}

typedef struct first_entry {
    char *key;
    size_t len;
    int64_t when;
    bool found;
} first_entry;

static void take_first(void *ctx, gb_slice member, double score)
{
    first_entry *e = ctx;
    e->key = gb_malloc(member.len ? member.len : 1);
    if (member.len)
        memcpy(e->key, member.ptr, member.len);
    e->len = member.len;
    e->when = (int64_t)score;
    e->found = true;
}

/* Expires up to budget fields of the hash under key (the index's entry);
 * returns how many went and corrects the entry. */
static size_t expire_one_hash(gb_db *db, gb_slice key, size_t budget)
{
    gb_kv *kv = gb_db_lookup_write(db, key);
    gb_hash h;
    if (!kv || kv->type != GB_TYPE_HASH || (h = hash_of(kv), !gb_hash_has_ttl_enc(&h))) {
        index_remove(db, key);
        return 0;
    }
    cycle_ctx cc = {db, key};
    size_t n = gb_hash_ttl_expire(&h, db->eng->now_ms, budget, propagate_gone, &cc);
    bool gone = false;
    if (n) {
        gone = gb_hfe_settle(db, key, kv, &h);
        gb_hfe_notify_batch(db, key, n, gone);
    }
    int64_t min = gone ? -1 : gb_hash_ttl_min(&h);
    if (min < 0)
        index_remove(db, key);
    else
        index_set(db, key, min);
    return n;
}

/* One round: the due hashes earliest first, at most HFE_CYCLE_FIELDS fields
 * and HFE_CYCLE_HASHES hashes. Adds the fields deleted to *total; returns
 * the index entries it handled (0: nothing was due). */
static int expire_round(gb_db *db, uint64_t deadline_ns, size_t *total)
{
    size_t fields = 0;
    int hashes = 0;
    for (; db->hfe && hashes < HFE_CYCLE_HASHES && fields < HFE_CYCLE_FIELDS; hashes++) {
        first_entry e = {0};
        gb_zset_range_rank(db->hfe, 0, 0, false, take_first, &e);
        if (!e.found)
            break;
        if (e.when >= db->eng->now_ms) { /* due after its millisecond, as gb_hash_field_expired */
            gb_free(e.key);
            break;
        }
        fields += expire_one_hash(db, gb_slice_make(e.key, e.len), HFE_CYCLE_FIELDS - fields);
        gb_free(e.key);
        if ((hashes & 15) == 15 && gb_clock_mono_ns() >= deadline_ns) {
            hashes++;
            break;
        }
    }
    *total += fields;
    return hashes;
}

size_t gb_hfe_active_expire(gb_db *db, uint64_t deadline_ns)
{
    size_t total = 0;
    if (!gb_hfe_may_delete(db))
        return 0;
    /* Rounds until nothing is due or the slice's time is spent: a wave of
     * fields with one deadline goes at the pace of key expiry (1 ms slices
     * within a quarter of each cron period, engine.c), where Redis 7.4 takes
     * 10,000 fields a second per database (HFE_DB_BASE_ACTIVE_EXPIRE_FIELDS_
     * PER_SEC) -- 100 s for a million. */
    while (expire_round(db, deadline_ns, &total) > 0 && gb_clock_mono_ns() < deadline_ns)
        ;
    if (db->hfe && gb_zset_card(db->hfe) == 0)
        gb_hfe_index_drop(db);
    return total;
}
