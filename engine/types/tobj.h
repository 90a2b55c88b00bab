/*
 * How the keyspace holds a hash, set or sorted set: the representation's
 * pointer with its encoding in the two low bits (the keyspace object
 * format of the collection types), and the keyed lookups, creation and
 * replacement that every collection operation starts from.
 */
#ifndef GB_ENGINE_TYPES_TOBJ_H
#define GB_ENGINE_TYPES_TOBJ_H

#include "engine/core/keyspace/db.h"
#include "engine/core/engine.h"
#include "engine/ds/collection.h"
#include "engine/ds/hash.h"
#include "engine/ds/set.h"
#include "engine/ds/zset.h"
#include "engine/types/result.h"

/* The thresholds currently configured (eng->cfg): built per call, so a
 * CONFIG SET applies to the next command. */
static inline gb_types_config gb_types_cfg(const gb_engine *eng)
{
    gb_types_config c;
    c.hash_max_listpack_entries = (size_t)eng->cfg.hash_max_listpack_entries;
    c.hash_max_listpack_value = (size_t)eng->cfg.hash_max_listpack_value;
    c.set_max_intset_entries = (size_t)eng->cfg.set_max_intset_entries;
    c.set_max_listpack_entries = (size_t)eng->cfg.set_max_listpack_entries;
    c.set_max_listpack_value = (size_t)eng->cfg.set_max_listpack_value;
    c.zset_max_listpack_entries = (size_t)eng->cfg.zset_max_listpack_entries;
    c.zset_max_listpack_value = (size_t)eng->cfg.zset_max_listpack_value;
    return c;
}

/* ---- how the keyspace holds the objects ----
 *
 * A hash, set or sorted set is kept in its key's record (gb_kv_ptr) as
 * its representation's pointer -- the listpack, the intset, or the large
 * structure, all malloc'd and so at least 8-aligned -- with the encoding in
 * the two low bits. The 16-byte gb_hash / gb_set / gb_zset header that the
 * type modules work on is rebuilt on the stack for each command (gb_tobj)
 * and written back after every change (gb_tobj_sync), so a key costs one
 * allocation less: 24 bytes of used_memory, 32 of RSS with glibc -- what
 * makes 100,000 small hashes smaller than Redis's (docs/benchmarks.md). */

typedef union gb_tobj_hdr {
    gb_hash h;
    gb_set s;
    gb_zset z;
} gb_tobj_hdr;

typedef struct gb_tobj {
    gb_kv *kv; /* the key's record; NULL when the key is missing */
    gb_tobj_hdr o;
} gb_tobj;

static inline void *gb_tobj_pack(uint8_t enc, void *p) { return (void *)((uintptr_t)p | enc); }

static inline gb_tobj_hdr gb_tobj_unpack(const void *packed)
{
    gb_tobj_hdr u;
    memset(&u, 0, sizeof u);
    u.h.enc = (uint8_t)((uintptr_t)packed & 3u);
    u.h.p = (void *)((uintptr_t)packed & ~(uintptr_t)3u);
    return u;
}

/* Looks key up for reading or writing. Returns 1 (o filled) when it holds
 * type t, 0 when it is missing (o->kv NULL), -1 when it holds another type
 * (the caller replies WRONGTYPE). */
int gb_tobj_lookup(gb_db *db, gb_slice key, enum gb_type t, bool write, gb_tobj *o);

/* Writes the header back into the key after a change (the representation
 * may have moved or converted). Call it before anything may delete the key. */
static inline void gb_tobj_sync(gb_tobj *o) { gb_kv_set_ptr(o->kv, gb_tobj_pack(o->o.h.enc, o->o.h.p)); }

/* After a change: writes the header back, then deletes the key when the
 * collection is empty (Redis never keeps an empty hash, set or zset). */
void gb_tobj_sync_or_delete(gb_db *db, gb_slice key, gb_tobj *o);

/* The keyspace form of a header from gb_hash_new, gb_set_union & co; the
 * header is freed. */
void *gb_tobj_adopt(void *heap_hdr);

/* Adds key (which must not exist) holding a new object (a heap header,
 * adopted) of type t and fills o. A new zset key wakes BZPOP* waiters. */
void gb_tobj_add(gb_db *db, gb_slice key, enum gb_type t, void *heap_hdr, gb_tobj *o);

/* Replaces whatever key holds (any type; its TTL goes too, as Redis's
 * setKey) with obj (a heap header of type t, adopted), or deletes the key
 * when obj is NULL. Tells WATCH when something changed. */
void gb_types_store(gb_db *db, gb_slice key, enum gb_type t, void *obj);

/* How many elements a random pick with count returns from a collection of
 * len elements (HRANDFIELD, SRANDMEMBER, ZRANDMEMBER): count < 0 -> -count
 * (repeats allowed); else min(count, len). */
static inline uint64_t gb_types_random_n(int64_t count, size_t len)
{
    if (count < 0)
        return (uint64_t)(-count);
    return (uint64_t)count < len ? (uint64_t)count : len;
}

/* ---- HSCAN / SSCAN / ZSCAN ---- */

/* What a collection scan asks for besides its cursor. */
typedef struct gb_scan_opts {
    gb_slice pattern; /* MATCH, when use_pattern */
    bool use_pattern;
    int64_t count;    /* COUNT, >= 1 */
} gb_scan_opts;

/* How many steps a scan may take without finding count elements: ten per
 * element asked for (Redis's), saturating so that a client's huge COUNT
 * cannot overflow. */
static inline int64_t gb_scan_step_budget(int64_t count) { return count > INT64_MAX / 10 ? INT64_MAX : count * 10; }

/* HSCAN, SSCAN, ZSCAN on the collection of type t under key: batches from
 * cursor until about opts->count elements (hash and sorted-set elements
 * count twice, as Redis counts its reply's items) or ten times as many
 * steps; elements the pattern refuses are skipped. Each goes to sink->pair
 * (hash), sink->value (set) or sink->scored (sorted set); *next receives
 * the cursor to go on from (0: done). GB_R_NOTFOUND: no such key;
 * GB_R_BADARG when opts is NULL and the key holds type t. */
gb_result gb_tobj_scan(gb_db *db, gb_slice key, enum gb_type t, uint64_t cursor, const gb_scan_opts *opts,
                       const gb_sink *sink, uint64_t *next);

/* The gb_type_ops of the hash, set and sorted-set types (keyspace
 * destructors, COPY, OBJECT ENCODING, MEMORY USAGE). */
void gb_hash_type_register(void);
void gb_set_type_register(void);
void gb_zset_type_register(void);

#endif
