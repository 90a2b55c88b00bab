/*
 * Eviction: what `maxmemory-policy` does when used memory passes
 * `maxmemory`, as Redis 7.0's evict.c does it.
 *
 * Before each command (the gate, engine/core/request/gate.c) gb_evict_perform
 * deletes keys until memory is under the limit again: the policy's keys
 * are sampled (maxmemory-samples per database with keys), ranked by the
 * policy's score (idle time, inverse LFU frequency, nearness of expiry)
 * into a 16-entry pool kept across calls, and the best candidate goes;
 * the random policies take a random key of the next database in turn.
 * Each eviction is a normal deletion: WATCH and client tracking see it,
 * the `evicted` keyspace event fires, the log and replicas get DEL (UNLINK
 * with lazyfree-lazy-eviction, which frees the value in the background),
 * INFO counts it in evicted_keys. A cycle stops after the time
 * maxmemory-eviction-tenacity allows; the rest is done in slices between
 * events (gb_evict_background) so the loop is never held longer than
 * Redis's would be.
 *
 * The per-key access clock (gb_kv's lru field, keyrecord.h) is
 * kept here too: LRU idle seconds, or Redis's LFU counter (logarithmic,
 * lfu-log-factor) and its decay time (lfu-decay-time minutes).
 */
#ifndef GB_ENGINE_CORE_EVICT_H
#define GB_ENGINE_CORE_EVICT_H

#include "engine/core/engine.h"

/* A new key's LFU counter (Redis's LFU_INIT_VAL): a new key is not
 * evicted before it had a chance to be used. */
#define GB_LFU_INIT_VAL 5

static inline bool gb_policy_is_lfu(const gb_engine *eng)
{
    return (eng->cfg.maxmemory_policy & GB_EVICT_FLAG_LFU) != 0;
}

/* The LRU clock: ticks of 1/64 s since the engine started. Finer than
 * Redis's 1 s, so that keys sampled together rarely tie (a tie ranks the
 * last used no better than the least); 32 bits wrap after 2 years (Redis's
 * 24-bit clock after 194 days). */
#define GB_LRU_TICKS_PER_S 64u
static inline uint32_t gb_lru_clock(const gb_engine *eng)
{
    return (uint32_t)(gb_engine_uptime_ms(eng) * GB_LRU_TICKS_PER_S / 1000u);
}

/* The LFU decay clock: Unix minutes, 16 bits (Redis's LFUGetTimeInMinutes). */
static inline uint32_t gb_lfu_minutes(const gb_engine *eng) { return (uint32_t)((eng->now_ms / 60000) & 65535); }

/* Under an LFU policy a key's lru field holds, as Redis's does, the
 * minute of the counter's last change (16 bits) above the counter (8). */
static inline unsigned gb_kv_lfu_counter(const gb_kv *kv) { return kv->lru & 255u; }
static inline uint32_t gb_kv_lfu_minute(const gb_kv *kv) { return (kv->lru >> 8) & 65535u; }
/* Sets the counter, changed this minute. */
static inline void gb_kv_lfu_set(const gb_engine *eng, gb_kv *kv, unsigned counter)
{
    kv->lru = gb_lfu_minutes(eng) << 8 | (counter & 255u);
}

/* A new key's clock (Redis's createObject). */
static inline void gb_kv_clock_init(const gb_engine *eng, gb_kv *kv)
{
    if (gb_policy_is_lfu(eng))
        gb_kv_lfu_set(eng, kv, GB_LFU_INIT_VAL);
    else
        kv->lru = gb_lru_clock(eng);
}

/* The counter after its decay since the last change (Redis's LFUDecrAndReturn). */
unsigned gb_lfu_decayed(const gb_engine *eng, const gb_kv *kv);
/* An LFU access: decay, then a logarithmic increment (Redis's updateLFU). */
void gb_lfu_access(const gb_engine *eng, gb_kv *kv);

/* An access by a command (Redis's lookupKey without LOOKUP_NOTOUCH). While
 * a background save runs, keys are not touched (Redis: no touch while a
 * child process exists, whose pages the touch would copy). */
static inline void gb_kv_clock_touch(const gb_engine *eng, gb_kv *kv)
{
    if (GB_UNLIKELY(eng->cow.active))
        return;
    if (gb_policy_is_lfu(eng))
        gb_lfu_access(eng, kv);
    else
        kv->lru = gb_lru_clock(eng);
}

/* RESTORE ... IDLETIME/FREQ and a dump.rdb's IDLE/FREQ opcodes (Redis's
 * objectSetLRUOrLFU): under an LFU policy a given freq (>= 0) becomes the
 * counter, decayed from now; otherwise a given idle time (seconds, >= 0)
 * moves the LRU clock back, so OBJECT IDLETIME answers it. -1: not given.
 * True when kv changed. */
bool gb_kv_set_lru_or_lfu(const gb_engine *eng, gb_kv *kv, int64_t freq, int64_t idle_s);

/* Seconds since kv was last touched, by the LRU clock (OBJECT IDLETIME). */
static inline uint64_t gb_kv_idle_seconds(const gb_engine *eng, const gb_kv *kv)
{
    return (uint32_t)(gb_lru_clock(eng) - kv->lru) / GB_LRU_TICKS_PER_S;
}

/* What an eviction cycle achieved (Redis's EVICT_*). */
enum gb_evict_result {
    GB_EVICT_OK = 0,   /* under the limit (or eviction does not apply now) */
    GB_EVICT_RUNNING,  /* over it, but eviction goes on between events */
    GB_EVICT_FAIL,     /* over it and nothing more can be evicted */
};

/* Used memory as maxmemory sees it: what the allocator counts, less the
 * buffers Redis leaves out (the append-only log's pending writes). */
size_t gb_evict_counted_memory(const gb_engine *eng);

/* Evicts until under maxmemory or out of time (Redis's performEvictions). */
enum gb_evict_result gb_evict_perform(gb_engine *eng);

/* Whether eviction left work for the loop (gb_evict_background). */
static inline bool gb_evict_pending(const gb_engine *eng) { return eng->evict_pending; }
/* One slice of left-over eviction (Redis's evictionTimeProc); returns
 * whether more is left. */
bool gb_evict_background(gb_engine *eng);

/* CONFIG SET maxmemory: a limit below the memory in use is logged, and
 * eviction starts in the loop's slices at once, not only at the next
 * command (Redis's updateMaxmemory). */
void gb_evict_maxmemory_changed(gb_engine *eng);

/* Frees the candidate pool (engine shutdown). */
void gb_evict_free(gb_engine *eng);

#endif
