/*
 * A database: the key table, the volatile-key array that the active expiry
 * samples from, and the per-key registries that WATCH and the blocking
 * commands hang off.
 *
 * Expiry is enforced two ways, as in Redis: lazily (every lookup of an
 * expired key deletes it and reports "not found") and actively
 * (gb_db_active_expire samples random volatile keys under a time budget).
 */
#ifndef GB_ENGINE_DB_H
#define GB_ENGINE_DB_H

#include "engine/ds/htable.h"
#include "engine/core/keyspace/keyrecord.h"

struct gb_engine;
struct gb_db;

/*
 * Copy-on-write by key, for a snapshot taken without fork (engine/persist):
 * the snapshot is of the moment it began, serialised in slices between
 * commands. A key is pending while its GB_KV_COW_MARK bit differs from
 * `mark`; the snapshot's begin flips `mark`, so every key present then is
 * pending, and a key created later is born with the new mark (nothing to
 * save: it was not there). Before anything changes or deletes a pending key
 * (a write lookup, an overwrite, an expiry, a delete), the db calls
 * save_key, which serialises the key's value as it still is and sets its
 * mark; before SWAPDB exchanges two databases, save_db on each; before a
 * flush (FLUSHDB, FLUSHALL), take_db, which may take the database's whole
 * table (db then has a new, empty one) and serialise its pending keys at
 * the snapshot's own pace before freeing it. The invariant: a key is
 * serialised exactly once, with the value it had when the snapshot began,
 * or not at all if it did not exist then.
 */
typedef struct gb_cow {
    bool active;
    uint8_t mark; /* GB_KV_COW_MARK or 0: what "already saved" looks like */
    void (*save_key)(void *ctx, struct gb_db *db, gb_kv *kv);
    void (*save_db)(void *ctx, struct gb_db *db);
    /* True when it took db's table (and left db an empty one); false when
     * the table holds no pending key, and the flush frees it as usual. */
    bool (*take_db)(void *ctx, struct gb_db *db);
    void *ctx;
} gb_cow;

static inline bool gb_cow_pending(const gb_cow *cow, const gb_kv *kv)
{
    return cow->active && (kv->flags & GB_KV_COW_MARK) != cow->mark;
}

typedef struct gb_db {
    gb_htable keys;       /* gb_kv records */
    gb_kv **vol;          /* keys with an expiry, for random sampling */
    size_t nvol, volcap;
    gb_htable watched;    /* key -> clients WATCHing it (engine/core/request/multi.c) */
    gb_htable blocking;   /* key -> clients blocked on it (engine/core/request/blocking.c) */
    struct gb_zset *hfe;  /* hashes with field deadlines (engine/types/t_hash_ttl.h), or NULL */
    struct gb_engine *eng;
    int id;
    /* The number of keys in each hash slot (CLUSTER COUNTKEYSINSLOT) and
     * the first of each slot's list of keys (GETKEYSINSLOT), or NULL: kept
     * only in cluster mode, for database 0 (slot_list.h). */
    uint32_t *slot_keys;
    gb_kv **slot_first;
} gb_db;

/* Starts counting db's keys by hash slot (cluster-enabled, before loading). */
void gb_db_count_slots(gb_db *db);

void gb_db_init(gb_db *db, struct gb_engine *eng, int id);
/* Deletes every key, freeing them now. Watchers are told by the caller. */
void gb_db_flush(gb_db *db);
/* The same, the values freed in the background (FLUSHDB ASYNC). */
void gb_db_flush_lazy(gb_db *db);
/* The same, the values freed by this thread between events when there are
 * many (FLUSHDB SYNC: engine/core/memory/sliced_free.h). */
void gb_db_flush_sliced(gb_db *db);
/* Frees everything, including the registries (shutdown). */
void gb_db_destroy(gb_db *db);
/* Exchanges the data sets (keys + volatile arrays) of two databases (SWAPDB). */
void gb_db_swap_data(gb_db *a, gb_db *b);

static inline size_t gb_db_size(const gb_db *db) { return gb_htable_size(&db->keys); }

/* Lookups. Each deletes the key first if it has expired. `read` variants
 * count keyspace hits/misses; all update the access time unless told not. */
gb_kv *gb_db_lookup_read(gb_db *db, gb_slice key);
gb_kv *gb_db_lookup_write(gb_db *db, gb_slice key);
/* A read lookup (hits and misses counted, as Redis's lookupKeyRead) of a
 * value the caller may then change in place: saved first for a snapshot
 * in progress, as a write lookup's is. Redis reads a stream this way in
 * XACK, XCLAIM, XAUTOCLAIM and XREADGROUP, which change its consumer
 * groups. */
gb_kv *gb_db_lookup_read_changing(gb_db *db, gb_slice key);
/* Stats counted, the access clock not touched (Redis's LOOKUP_NOTOUCH:
 * EXISTS, TYPE, TTL and its family). */
gb_kv *gb_db_lookup_read_notouch(gb_db *db, gb_slice key);
/* No stats, no access-time update (internal checks, OBJECT). */
gb_kv *gb_db_lookup_quiet(gb_db *db, gb_slice key);
/* The record as stored, even when it has expired and is not yet deleted;
 * nothing counted, touched or deleted (DEBUG DIGEST-VALUE, as Redis's
 * dictFind). */
static inline gb_kv *gb_db_find_stored(gb_db *db, gb_slice key)
{
    return (gb_kv *)gb_htable_find(&db->keys, &key, gb_hash_slice(key));
}

/* Creates key -> obj (type t, GB_ENC_OBJ). The key must not exist. */
gb_kv *gb_db_add_object(gb_db *db, gb_slice key, enum gb_type t, void *obj);
/* Sets key to obj (type t), replacing any value of any type and its expiry
 * (Redis's setKey for the STORE commands): a key that exists keeps its
 * place among its slot's keys in cluster mode, as Redis's overwrite does;
 * an expired one is deleted first, so the key is new. */
gb_kv *gb_db_set_object(gb_db *db, gb_slice key, enum gb_type t, void *obj);
/* Sets key to a string value, replacing any value of any type. With
 * keep_ttl the old expiry (if any) is kept, else it is cleared. */
gb_kv *gb_db_set_string(gb_db *db, gb_slice key, gb_slice val, bool keep_ttl);
/* The same, but never with the integer encoding (INCRBYFLOAT's results are
 * text in Redis: OBJECT ENCODING says embstr/raw, not int). */
gb_kv *gb_db_set_string_text(gb_db *db, gb_slice key, gb_slice val, bool keep_ttl);
/* Sets key to an integer string value (INCR & co), keeping the TTL. */
gb_kv *gb_db_set_int(gb_db *db, gb_slice key, int64_t v);
/* The same three for a key whose lookup the caller has just done, so the
 * common case walks the key's chain once: kv is the string record
 * gb_db_lookup_write returned for it (set_int: a string); add_string: the
 * lookup found nothing (the key is absent). Each returns the record now
 * holding the value, which may not be kv. */
gb_kv *gb_db_set_string_found(gb_db *db, gb_kv *kv, gb_slice val, bool keep_ttl);
gb_kv *gb_db_set_int_found(gb_db *db, gb_kv *kv, int64_t v);
gb_kv *gb_db_add_string(gb_db *db, gb_slice key, gb_slice val);
/* Makes the string value of kv a heap gb_str with room for cap bytes and
 * returns it (APPEND, SETRANGE). kv does not move. */
gb_str *gb_db_string_writable(gb_db *db, gb_kv *kv, size_t cap);
/* The same with exactly cap bytes of room (cap >= its length): a value
 * that will not grow again, such as a HyperLogLog gone dense, without the
 * geometric growth's slack. */
gb_str *gb_db_string_sized(gb_db *db, gb_kv *kv, size_t cap);
/* Sets key to the string in s, which the key takes over (no copy: a BITOP
 * result of megabytes), in its heap buffer as Redis keeps a computed
 * string (OBJECT ENCODING "raw"), replacing any value of any type and its
 * expiry. Returns the new record. */
gb_kv *gb_db_set_string_owned(gb_db *db, gb_slice key, gb_str *s);
/* Installs a copy of src's value under key in db (COPY, MOVE, RENAME),
 * replacing any existing value; returns the new record. expire < 0 = none. */
gb_kv *gb_db_insert_value(gb_db *db, gb_slice key, const gb_kv *src, bool copy_value, int64_t expire);
/* Detaches kv's value (so deleting kv does not free it) — for moves. kv
 * comes from gb_db_lookup_write (which saved it for a snapshot in
 * progress: the value is about to leave it). */
void gb_db_steal_value(gb_kv *kv);

/* Deletes key; false when it was not there (or already expired). The
 * value is freed now, or in the background for a big one when
 * lazyfree-lazy-server-del is on (an implicit deletion), or when lazy. */
bool gb_db_delete(gb_db *db, gb_slice key);
bool gb_db_delete_lazy(gb_db *db, gb_slice key, bool lazy);
/* The same for eviction's victim: deleted as stored, past its deadline or
 * not (Redis counts and signals an expired victim as evicted). */
bool gb_db_delete_evicted(gb_db *db, gb_slice key, bool lazy);

/* Loading a snapshot, where the key table's cache misses are most of the
 * cost of adding a key (perf, 2 GB load: 15%), so they are started early
 * and overlapped with decoding values. gb_db_prefetch_key comes first, as
 * soon as a key's name has been read: it returns the key's hash and starts
 * fetching its bucket. gb_db_loaded_string/_object build the key's record
 * (expire < 0: none) without adding it; gb_db_prefetch_chain, once the
 * bucket is in the cache, starts fetching the first record of its chain
 * (gb_db_prefetch_chain_next, once that is in, the second);
 * gb_db_insert_loaded adds the record unless its key exists (false then:
 * the record is not added and stays the caller's, gb_kv_free frees it with
 * its value). Watchers and waiters are not told: nothing waits during a
 * load. */
uint64_t gb_db_prefetch_key(gb_db *db, gb_slice key);
gb_kv *gb_db_loaded_string(gb_db *db, gb_slice key, gb_slice val, int64_t expire);
gb_kv *gb_db_loaded_object(gb_db *db, gb_slice key, enum gb_type t, void *obj, int64_t expire);
void gb_db_prefetch_chain(gb_db *db, uint64_t hash);
void gb_db_prefetch_chain_next(gb_db *db, uint64_t hash);
bool gb_db_insert_loaded(gb_db *db, gb_kv *kv, uint64_t hash);

/* Expiry: the returned pointer replaces kv (the record may move). */
gb_kv *gb_db_set_expire(gb_db *db, gb_kv *kv, int64_t when_ms);
/* Whether an expiry time a command gives has passed already, so that the
 * command deletes the key (or field) at once (Redis's checkAlreadyExpired).
 * Never while loading or on a replica: they keep it with its past time,
 * unseen by clients, for what comes next in the log or from the primary,
 * which may be a PERSIST (a log holds "PEXPIREAT k <past>" then "PERSIST
 * k" for a key that lives on) or the primary's DEL. */
bool gb_db_already_expired(const gb_db *db, int64_t when_ms);
gb_kv *gb_db_persist(gb_db *db, gb_kv *kv);
/* Absolute expiry of kv in ms, or -1. */
static inline int64_t gb_db_expire_of(const gb_kv *kv) { return gb_kv_volatile(kv) ? gb_kv_expire(kv) : -1; }
static inline size_t gb_db_volatile_count(const gb_db *db) { return db->nvol; }

/* Active expiry: deletes expired keys among random samples until the budget
 * (absolute monotonic ns deadline) runs out or few samples are expired.
 * Returns keys deleted. */
size_t gb_db_active_expire(gb_db *db, uint64_t deadline_ns);

/* A random live key, or NULL (RANDOMKEY). */
gb_kv *gb_db_random(gb_db *db);

/* Frees a record and its value. */
void gb_kv_free(gb_kv *kv);
/* About how many allocations freeing kv's value touches (Redis's
 * lazyfreeGetFreeEffort): 1 for a string or a compact encoding. */
size_t gb_kv_free_effort(const gb_kv *kv);
/* Bytes used by kv including its value (MEMORY USAGE). */
size_t gb_kv_mem(const gb_kv *kv);

#endif
