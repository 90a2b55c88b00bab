/*
 * Helpers shared by the hash, set and sorted-set command modules
 * (cmd_hash.c, cmd_set.c, cmd_zset.c): the encoding thresholds as the type
 * objects want them, their gb_type_ops, lookups that reply WRONGTYPE,
 * HSCAN/SSCAN/ZSCAN, Redis's random-count argument rules, and storing a
 * computed result under a key (the *STORE commands).
 */
#ifndef GB_ENGINE_CMD_TYPES_H
#define GB_ENGINE_CMD_TYPES_H

#include "engine/client.h"
#include "engine/db.h"
#include "engine/engine.h"
#include "engine/t_hash.h"
#include "engine/t_set.h"
#include "engine/t_zset.h"
#include "engine/types_common.h"

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
 * A hash, set or sorted set is kept in its key's record (gb_kv.v.ptr) as
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
static inline void gb_tobj_sync(gb_tobj *o) { o->kv->v.ptr = gb_tobj_pack(o->o.h.enc, o->o.h.p); }

/* The keyspace form of a header from gb_hash_new, gb_set_union & co; the
 * header is freed. */
void *gb_tobj_adopt(void *heap_hdr);

/* Adds key (which must not exist) holding a new object (a heap header,
 * adopted) of type t and fills o. A new zset key wakes BZPOP* waiters. */
void gb_tobj_add(gb_db *db, gb_slice key, enum gb_type t, void *heap_hdr, gb_tobj *o);

/* Replaces whatever key holds (any type; its TTL goes too, as Redis's
 * setKey) with obj (a heap header of type t, adopted), or deletes the key
 * when obj is NULL. Tells WATCH when something changed. */
void gb_types_store(gb_client *c, gb_slice key, enum gb_type t, void *obj);

/* gb_tobj_lookup for a command handler: true when key holds type t (o
 * filled); false when it is missing, or holds another type: then *wrong is
 * set and WRONGTYPE replied. */
bool gb_tobj_lookup_or_reply(gb_client *c, gb_slice key, enum gb_type t, bool write, gb_tobj *o, bool *wrong);

/* ---- HSCAN / SSCAN / ZSCAN ---- */

/* The elements a scan collects (private to cmd_types.c). */
typedef struct gb_scan_buf gb_scan_buf;

/* Adds one element unless the MATCH pattern filters it out. value: hashes
 * only; score: sorted sets only. */
void gb_scan_buf_add(gb_scan_buf *b, gb_slice member, gb_slice value, double score);

/* Scans one batch of o from cursor, adding each element to b; returns the
 * next cursor (the type module's gb_*_scan). */
typedef uint64_t (*gb_types_scan_fn)(gb_tobj_hdr *o, uint64_t cursor, gb_scan_buf *b);

/* "xSCAN key cursor [MATCH pattern] [COUNT count]" on a hash, set or sorted
 * set (t): Redis's scanGenericCommand (COUNT must be an integer >= 1, TYPE
 * is refused for a key's elements; hash and zset elements count twice
 * towards COUNT). Replies [cursor, [element, ...]]. */
void gb_types_scan(gb_client *c, int argc, gb_slice *argv, enum gb_type t, gb_types_scan_fn scan);

/* ---- HRANDFIELD / SRANDMEMBER / ZRANDMEMBER ---- */

/* The count argument, Redis 7.0.15's rules, checked in this order: an
 * integer in [-LONG_MAX, LONG_MAX] ("value is out of range, value must
 * between ..."); then (after the caller's syntax check) with WITHVALUES /
 * WITHSCORES within +-LONG_MAX/2 ("value is out of range"). */
bool gb_types_random_count(gb_client *c, gb_slice arg, int64_t *out);
bool gb_types_random_pairs_ok(gb_client *c, int64_t count);
/* How many elements a random pick with count returns from a collection of
 * len elements: count < 0 -> -count (repeats allowed); else min(count, len). */
static inline uint64_t gb_types_random_n(int64_t count, size_t len)
{
    if (count < 0)
        return (uint64_t)(-count);
    return (uint64_t)count < len ? (uint64_t)count : len;
}

#endif
