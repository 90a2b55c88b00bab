#define _POSIX_C_SOURCE 200809L
#include "engine/core/memory/evict.h"
#include "engine/core/introspect/latency.h"
#include "engine/core/replication/replica.h"

#include <math.h>
#include <time.h>

#include "engine/base/mem.h"
#include "engine/base/random.h"
#include "engine/core/request/blocking.h"
#include "engine/core/memory/lazyfree.h"
#include "engine/core/memory/sliced_free.h"
#include "engine/core/request/multi.h"
#include "engine/core/request/propagate.h"
#include "engine/core/pubsub/pubsub.h"
#include "engine/core/pubsub/tracking.h"
#include "engine/core/replication/repl.h"
#include "platform/clock.h"

/* ---- the LFU counter ------------------------------------------------------------ */

static unsigned long lfu_minutes_since(const gb_engine *eng, uint32_t ldt)
{
    unsigned long now = gb_lfu_minutes(eng);
    return now >= ldt ? now - ldt : 65535 - ldt + now;
}

unsigned gb_lfu_decayed(const gb_engine *eng, const gb_kv *kv)
{
    unsigned long counter = gb_kv_lfu_counter(kv);
    int decay = eng->cfg.lfu_decay_time;
    unsigned long periods = decay > 0 ? lfu_minutes_since(eng, gb_kv_lfu_minute(kv)) / (unsigned long)decay : 0;
    return (unsigned)(periods > counter ? 0 : counter - periods);
}

/* Redis's LFULogIncr: the counter grows with probability 1 / (excess *
 * lfu-log-factor + 1), excess being how far it is above the initial value,
 * so it needs about a million hits to saturate at the default factor. */
static unsigned lfu_log_incr(const gb_engine *eng, unsigned counter)
{
    if (counter == 255)
        return 255;
    double base = counter > GB_LFU_INIT_VAL ? (double)(counter - GB_LFU_INIT_VAL) : 0.0;
    double p = 1.0 / (base * eng->cfg.lfu_log_factor + 1.0);
    return gb_random_double() < p ? counter + 1 : counter;
}

void gb_lfu_access(const gb_engine *eng, gb_kv *kv)
{
    gb_kv_lfu_set(eng, kv, lfu_log_incr(eng, gb_lfu_decayed(eng, kv)));
}

/* ---- memory as maxmemory counts it ------------------------------------------------ */

size_t gb_evict_counted_memory(const gb_engine *eng)
{
    size_t used = gb_mem_used();
    const gb_service *sv = eng->service;
    size_t uncounted = sv && sv->uncounted_memory ? sv->uncounted_memory(sv->ctx) : 0;
    uncounted += gb_repl_output_bytes(eng); /* replicas' pending stream, as Redis leaves it out */
    return used > uncounted ? used - uncounted : 0;
}

/* ---- the candidate pool ----------------------------------------------------------- */

/* Redis's EVPOOL_SIZE and EVPOOL_CACHED_SDS_SIZE: the best candidates
 * sampled so far, kept across cycles, in ascending score (the best last);
 * each holds a copy of its key, in a buffer of its own when short. */
#define POOL_SIZE 16
#define POOL_CACHED_KEY 255

typedef struct pool_entry {
    uint64_t score; /* higher: evict sooner */
    char *key;      /* NULL: empty; `cached` or a heap copy */
    size_t keylen;
    char *cached;
    int dbid;
} pool_entry;

/* The next samples of one database's key table, chosen ahead: a write at
 * the limit waited on its five sampled records for a quarter of its time
 * (perf, allkeys-lru). Each sample's start is drawn two samples early:
 * its bucket slots are prefetched then, its records one sample early (the
 * slots being in the cache by then), so the records are in the cache by
 * the time it is taken. The draws are the same random starts, made
 * earlier. */
typedef struct sample_ahead {
    gb_db *db;          /* whose table (NULL: none drawn yet) */
    uint64_t ready;     /* the next sample's start: slots and records on their way */
    uint64_t after;     /* the one after: slots on their way */
} sample_ahead;

struct gb_evict_pool {
    pool_entry e[POOL_SIZE];
    pool_entry victim;      /* the key being evicted: a copy that outlives its record */
    unsigned next_db;       /* the random policies visit databases in turn */
    sample_ahead ahead;
};

static struct gb_evict_pool *pool_of(gb_engine *eng)
{
    if (!eng->evict_pool) {
        struct gb_evict_pool *p = gb_calloc(1, sizeof *p);
        for (int i = 0; i < POOL_SIZE; i++)
            p->e[i].cached = gb_malloc(POOL_CACHED_KEY);
        p->victim.cached = gb_malloc(POOL_CACHED_KEY);
        eng->evict_pool = p;
    }
    return eng->evict_pool;
}

static void entry_clear(pool_entry *e)
{
    if (e->key && e->key != e->cached)
        gb_free(e->key);
    e->key = NULL;
    e->score = 0;
}

static void entry_set_key(pool_entry *e, gb_slice key, int dbid, uint64_t score)
{
    if (key.len > POOL_CACHED_KEY) {
        e->key = gb_malloc(key.len);
    } else {
        e->key = e->cached;
    }
    memcpy(e->key, key.ptr, key.len);
    e->keylen = key.len;
    e->dbid = dbid;
    e->score = score;
}

void gb_evict_free(gb_engine *eng)
{
    struct gb_evict_pool *p = eng->evict_pool;
    if (!p)
        return;
    for (int i = 0; i < POOL_SIZE; i++) {
        entry_clear(&p->e[i]);
        gb_free(p->e[i].cached);
    }
    entry_clear(&p->victim);
    gb_free(p->victim.cached);
    gb_free(p);
    eng->evict_pool = NULL;
}

/* The policy's score of a key: the higher, the better a candidate. */
static uint64_t score_of(const gb_engine *eng, const gb_kv *kv)
{
    int policy = eng->cfg.maxmemory_policy;
    if (policy & GB_EVICT_FLAG_LRU)
        return (uint32_t)(gb_lru_clock(eng) - kv->lru);
    if (policy & GB_EVICT_FLAG_LFU)
        return 255u - gb_lfu_decayed(eng, kv);
    /* volatile-ttl: the sooner the expiry, the better. */
    return UINT64_MAX - (uint64_t)gb_kv_expire(kv);
}

/* Redis's evictionPoolPopulate insertion: into the first slot whose score
 * is not smaller, dropping the worst entry when the pool is full; a score
 * below every entry of a full pool is not kept. */
static void pool_insert(pool_entry *pool, gb_slice key, int dbid, uint64_t score)
{
    int k = 0;
    while (k < POOL_SIZE && pool[k].key && pool[k].score < score)
        k++;
    if (k == 0 && pool[POOL_SIZE - 1].key != NULL)
        return;
    if (k < POOL_SIZE && pool[k].key == NULL) {
        /* an empty slot: nothing to move */
    } else if (pool[POOL_SIZE - 1].key == NULL) {
        /* room on the right: shift k.. right by one */
        char *cached = pool[POOL_SIZE - 1].cached;
        memmove(pool + k + 1, pool + k, sizeof(pool[0]) * (size_t)(POOL_SIZE - k - 1));
        pool[k].cached = cached;
    } else {
        /* full: drop the worst (slot 0), shift 1..k-1 left, insert at k-1 */
        k--;
        char *cached = pool[0].cached;
        if (pool[0].key != pool[0].cached)
            gb_free(pool[0].key);
        memmove(pool, pool + 1, sizeof(pool[0]) * (size_t)k);
        pool[k].cached = cached;
    }
    entry_set_key(&pool[k], key, dbid, score);
}

/* The start of db's next sample, and the fetches for the two after it. */
static uint64_t next_sample_start(sample_ahead *a, gb_db *db, size_t n)
{
    bool drawn = a->db == db;
    uint64_t start = drawn ? a->ready : gb_random_u64();
    a->db = db;
    a->ready = drawn ? a->after : gb_random_u64();
    gb_htable_sample_prefetch_records(&db->keys, a->ready, n);
    a->after = gb_random_u64();
    gb_htable_sample_prefetch_slots(&db->keys, a->after);
    return start;
}

/* Samples maxmemory-samples keys of db (all keys, or those with a TTL)
 * into the pool. */
static void pool_populate(gb_engine *eng, struct gb_evict_pool *p, gb_db *db, bool allkeys)
{
    pool_entry *pool = p->e;
    size_t have = allkeys ? gb_db_size(db) : db->nvol;
    size_t n = GB_MIN((size_t)eng->cfg.maxmemory_samples, have);
    if (!allkeys) {
        for (size_t i = 0; i < n; i++) {
            gb_kv *kv = db->vol[gb_random_below(db->nvol)];
            pool_insert(pool, gb_kv_key(kv), db->id, score_of(eng, kv));
        }
        return;
    }
    /* A stretch of consecutive buckets, a batch at a time (the setting
     * may ask for any number of samples). */
    gb_hnode *batch[16];
    uint64_t start = next_sample_start(&p->ahead, db, GB_MIN(n, GB_ARRAY_LEN(batch)));
    while (n > 0) {
        size_t got = gb_htable_sample_at(&db->keys, start, batch, GB_MIN(n, GB_ARRAY_LEN(batch)));
        start = gb_random_u64(); /* the next batch's, with samples of more than 16 keys */
        if (got == 0)
            break;
        for (size_t i = 0; i < got; i++) {
            const gb_kv *kv = (const gb_kv *)batch[i];
            pool_insert(pool, gb_kv_key(kv), db->id, score_of(eng, kv));
        }
        n -= got;
    }
}

/* Whether key still is a candidate of the policy in its database (it may
 * have been deleted, or lost its TTL, since it was sampled: a ghost). */
static bool still_candidate(gb_engine *eng, const pool_entry *e, bool allkeys)
{
    gb_slice key = gb_slice_make(e->key, e->keylen);
    gb_db *db = &eng->dbs[e->dbid];
    const gb_kv *kv = (const gb_kv *)gb_htable_find(&db->keys, &key, gb_hash_slice(key));
    return kv && (allkeys || gb_kv_volatile(kv));
}

/* The pool's best live candidate, taken out of the pool into `out`; false
 * when no database has a key the policy may evict. */
static bool pick_from_pool(gb_engine *eng, struct gb_evict_pool *p, bool allkeys, pool_entry *out)
{
    for (;;) {
        size_t total = 0;
        for (int i = 0; i < eng->ndbs; i++) {
            gb_db *db = &eng->dbs[i];
            size_t keys = allkeys ? gb_db_size(db) : db->nvol;
            if (keys) {
                pool_populate(eng, p, db, allkeys);
                total += keys;
            }
        }
        if (!total)
            return false;
        for (int k = POOL_SIZE - 1; k >= 0; k--) {
            pool_entry *e = &p->e[k];
            if (!e->key)
                continue;
            bool live = still_candidate(eng, e, allkeys);
            if (live) {
                entry_clear(out);
                entry_set_key(out, gb_slice_make(e->key, e->keylen), e->dbid, e->score);
            }
            entry_clear(e);
            if (live)
                return true;
        }
    }
}

/* allkeys-random, volatile-random: a random key of the next database that
 * has one. */
static bool pick_random(gb_engine *eng, struct gb_evict_pool *p, bool allkeys, pool_entry *out)
{
    for (int i = 0; i < eng->ndbs; i++) {
        int j = (int)(++p->next_db % (unsigned)eng->ndbs);
        gb_db *db = &eng->dbs[j];
        gb_kv *kv = NULL;
        if (allkeys && gb_db_size(db))
            kv = (gb_kv *)gb_htable_random_cheap(&db->keys); /* Redis's dictGetRandomKey, not the fair draw */
        else if (!allkeys && db->nvol)
            kv = db->vol[gb_random_below(db->nvol)];
        if (kv) {
            entry_clear(out);
            entry_set_key(out, gb_kv_key(kv), j, 0);
            return true;
        }
    }
    return false;
}

/* ---- evicting one key ---------------------------------------------------------------- */

/* DEL (UNLINK when freed lazily) to the log and replicas, each its own
 * unit, never wrapped in MULTI (Redis's propagate_no_multi). */
static void propagate_eviction(gb_db *db, gb_slice key, bool lazy)
{
    gb_engine *eng = db->eng;
    if (!gb_propagating(&eng->prop))
        return;
    gb_slice argv[2] = {gb_slice_cstr(lazy ? "UNLINK" : "DEL"), key};
    gb_propagate_record(eng, db->id, 2, argv);
    if (eng->prop.depth == 0)
        gb_propagate_flush(eng);
}

/* Deletes key through the normal path; returns the bytes that freed now.
 * A key already past its deadline goes as an eviction too (its event, its
 * count), as in Redis 7.0's performEvictions. */
static size_t evict_key(gb_engine *eng, gb_db *db, gb_slice key)
{
    bool lazy = eng->cfg.lazyfree_lazy_eviction != 0;
    size_t before = gb_mem_used();
    bool deleted = gb_db_delete_evicted(db, key, lazy);
    /* Eviction frees to get under the limit now: a big value it deleted
     * without lazy freeing is freed before the next victim is picked, as
     * Redis frees it, not left to the loop's slices. */
    if (!lazy && gb_sliced_free_pending(eng->sliced_free))
        gb_sliced_free_drain(eng);
    size_t after = gb_mem_used();
    if (deleted) {
        eng->stats.evicted_keys++;
        gb_multi_touch_key(db, key);
        if (GB_UNLIKELY(eng->tracking != NULL))
            gb_tracking_invalidate_expired(eng, key);
        gb_notify_keyspace_event(eng, GB_NOTIFY_EVICTED, "evicted", key, db->id);
        propagate_eviction(db, key, lazy);
    }
    return before > after ? before - after : 0;
}

/* ---- the cycle ------------------------------------------------------------------------- */

/* Redis's isSafeToPerformEvictions: not while loading, while a script
 * holds the engine past its threshold, or while clients are paused (the
 * dataset must stand still). */
static bool safe_to_evict(gb_engine *eng)
{
    return !eng->loading && !eng->script.timed_out && gb_pause_check(eng) == GB_PAUSE_NONE;
}

/* Redis's evictionTimeLimitUs: 0..500 us linearly up to tenacity 10, then
 * +15% a step; none at 100. */
static uint64_t time_limit_us(int tenacity)
{
    if (tenacity <= 10)
        return 50u * (uint64_t)tenacity;
    if (tenacity < 100)
        return (uint64_t)(500.0 * pow(1.15, tenacity - 10.0));
    return UINT64_MAX;
}

/* The cycle's budget is timed with the cycle counter, as Redis times it
 * with its TSC-based monotonic clock: the clock is read once per write
 * that must evict, and the counter costs a fraction of clock_gettime. */
static uint64_t elapsed_us(const gb_engine *eng, uint64_t t0_cycles)
{
    return (uint64_t)((double)(gb_cycles_now() - t0_cycles) * eng->ns_per_cycle / 1000.0);
}

/* Redis's latencyStartMonitor: the clock is read only while the latency
 * monitor is on. Returns the start (monotonic ns), or 0 with the monitor off. */
static uint64_t monitor_start(const gb_engine *eng) { return eng->cfg.latency_monitor_threshold ? gb_clock_mono_ns() : 0; }

static void monitor_end(gb_engine *eng, const char *event, uint64_t start_ns)
{
    if (start_ns)
        gb_latency_add_sample_if_needed(eng, event, (int64_t)((gb_clock_mono_ns() - start_ns) / 1000000));
}

static bool under_limit(const gb_engine *eng)
{
    return gb_evict_counted_memory(eng) <= (size_t)eng->cfg.maxmemory;
}

/* Out of keys to evict: values still being freed in the background may
 * be enough; wait for them a little (no longer than the cycle's time). */
static bool wait_for_lazyfree(gb_engine *eng, uint64_t t0_cycles, uint64_t limit_us)
{
    uint64_t mon = monitor_start(eng);
    bool enough = false;
    while (gb_lazyfree_pending(eng->lazyfree) && elapsed_us(eng, t0_cycles) < limit_us) {
        if (under_limit(eng)) {
            enough = true;
            break;
        }
        uint64_t us = limit_us < 1000 ? limit_us : 1000;
        struct timespec ts = {0, (long)(us * 1000u)};
        nanosleep(&ts, NULL);
    }
    monitor_end(eng, "eviction-lazyfree", mon);
    return enough;
}

enum gb_evict_result gb_evict_perform(gb_engine *eng)
{
    size_t limit = (size_t)eng->cfg.maxmemory;
    if (limit == 0 || gb_mem_used() <= limit || !safe_to_evict(eng))
        return GB_EVICT_OK;
    /* Deleted values still waiting for their slices are memory about to come
     * back: it comes back now, before any key is evicted for it. */
    if (gb_sliced_free_pending(eng->sliced_free)) {
        gb_sliced_free_drain(eng);
        if (gb_mem_used() <= limit)
            return GB_EVICT_OK;
    }
    /* A replica is its primary's exact copy (replica-ignore-maxmemory). */
    if (gb_engine_is_replica(eng) && eng->cfg.replica_ignore_maxmemory)
        return GB_EVICT_OK;
    size_t counted = gb_evict_counted_memory(eng);
    if (counted <= limit)
        return GB_EVICT_OK;
    int policy = eng->cfg.maxmemory_policy;
    if (policy == GB_POLICY_NOEVICTION)
        return GB_EVICT_FAIL;

    size_t tofree = counted - limit, freed = 0;
    uint64_t limit_us = time_limit_us(eng->cfg.maxmemory_eviction_tenacity);
    uint64_t t0 = gb_cycles_now();
    bool lazy = eng->cfg.lazyfree_lazy_eviction != 0;
    bool allkeys = (policy & GB_EVICT_FLAG_ALLKEYS) != 0;
    bool random = policy == GB_POLICY_ALLKEYS_RANDOM || policy == GB_POLICY_VOLATILE_RANDOM;
    struct gb_evict_pool *p = pool_of(eng);
    pool_entry *victim = &p->victim;
    unsigned evicted = 0;
    /* The LATENCY monitor's events, as Redis names them: the whole cycle,
     * each key's deletion, the wait for lazily freed values. */
    uint64_t cycle_mon = monitor_start(eng);
    while (freed < tofree) {
        bool found = random ? pick_random(eng, p, allkeys, victim) : pick_from_pool(eng, p, allkeys, victim);
        if (!found) {
            enum gb_evict_result result = wait_for_lazyfree(eng, t0, limit_us) ? GB_EVICT_OK : GB_EVICT_FAIL;
            monitor_end(eng, "eviction-cycle", cycle_mon);
            return result;
        }
        uint64_t del_mon = monitor_start(eng);
        freed += evict_key(eng, &eng->dbs[victim->dbid], gb_slice_make(victim->key, victim->keylen));
        monitor_end(eng, "eviction-del", del_mon);
        entry_clear(victim);
        /* The clock is read every 16 keys (Redis's rhythm), every key when
         * a pick samples so many keys that 16 of them could outlast the
         * budget. */
        if (++evicted % 16 == 0 || eng->cfg.maxmemory_samples > 64) {
            /* Lazily freed values leave memory later, not in `freed`. */
            if (lazy && under_limit(eng))
                break;
            if (elapsed_us(eng, t0) > limit_us) {
                eng->evict_pending = true; /* the loop goes on: gb_evict_background */
                break;
            }
        }
    }
    monitor_end(eng, "eviction-cycle", cycle_mon);
    return eng->evict_pending ? GB_EVICT_RUNNING : GB_EVICT_OK;
}

bool gb_evict_background(gb_engine *eng)
{
    gb_engine_update_time(eng);
    if (gb_evict_perform(eng) != GB_EVICT_RUNNING)
        eng->evict_pending = false;
    return eng->evict_pending;
}

void gb_evict_maxmemory_changed(gb_engine *eng)
{
    if (eng->cfg.maxmemory <= 0)
        return;
    size_t used = gb_evict_counted_memory(eng);
    if ((size_t)eng->cfg.maxmemory < used)
        gb_log(GB_LOG_WARNING,
               "WARNING: the new maxmemory value set via CONFIG SET (%llu) is smaller than the current memory usage "
               "(%zu). This will result in key eviction and/or the inability to accept new write commands depending "
               "on the maxmemory-policy.",
               (unsigned long long)eng->cfg.maxmemory, used);
    eng->evict_pending = true;
}

bool gb_kv_set_lru_or_lfu(const gb_engine *eng, gb_kv *kv, int64_t freq, int64_t idle_s)
{
    if (gb_policy_is_lfu(eng)) {
        if (freq < 0)
            return false;
        gb_kv_lfu_set(eng, kv, freq > 255 ? 255u : (unsigned)freq);
        return true;
    }
    if (idle_s < 0)
        return false;
    /* The clock wraps (32 bits of 1/64 s): an idle time up to half its
     * range reads back exactly, however long the server has run. */
    uint64_t ticks = (uint64_t)idle_s * GB_LRU_TICKS_PER_S;
    if (ticks > UINT32_MAX / 2)
        ticks = UINT32_MAX / 2;
    kv->lru = gb_lru_clock(eng) - (uint32_t)ticks;
    return true;
}
