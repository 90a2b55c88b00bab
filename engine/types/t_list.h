/*
 * The list type: its gb_type_ops and its typed key operations.
 *
 * A typed key operation is a command's work on the keyspace, with native
 * arguments: what a binary protocol (SBE over the ring) calls, and what the
 * RESP handlers call once they have parsed their text. Each looks its keys
 * up (lazily expiring them; reads count keyspace hits and misses, writes do
 * not, as in Redis), checks their type, creates and deletes keys as Redis
 * does, tells WATCH (gb_engine_key_modified) and the blocked clients
 * (gb_blocking_signal_key), and returns a gb_result, streaming elements
 * through a gb_sink (engine/types/result.h). None formats a reply, sees a
 * client or chooses a write's propagated effect: those belong to the
 * command layer.
 *
 * Operations are named after the command they implement, gb_<type>_<command>
 * (gb_list_lpush is LPUSH on a key; gb_list_push in engine/ds/list.h is a
 * push on a list). Commands that differ in one argument (LPUSH/RPUSH,
 * ZPOPMIN/ZPOPMAX, ZUNION/ZINTER/ZDIFF) are one operation taking it, named
 * after the first form. String commands carry no type letter: gb_string_get.
 */
#ifndef GB_ENGINE_TYPES_T_LIST_H
#define GB_ENGINE_TYPES_T_LIST_H

#include "engine/core/keyspace/db.h"
#include "engine/ds/list.h"
#include "engine/types/result.h"

struct gb_engine;

/* The list settings currently configured (list-max-listpack-size,
 * list-implementation), for a list about to be created. */
gb_list_config gb_list_config_for(const struct gb_engine *eng);

/* The list type's gb_type_ops (keyspace destructor, COPY, OBJECT ENCODING). */
void gb_list_type_register(void);

/* ---- pushes and pops ---- */

/* LPUSH/RPUSH: *len receives the new length; a missing key is created. */
gb_result gb_list_lpush(gb_db *db, gb_slice key, gb_list_end end, size_t n, const gb_slice *vals, int64_t *len);
/* LPUSHX/RPUSHX: as gb_list_lpush on an existing list; a missing key is
 * GB_R_OK with *len 0. */
gb_result gb_list_lpushx(gb_db *db, gb_slice key, gb_list_end end, size_t n, const gb_slice *vals, int64_t *len);

/* LPOP/RPOP key [count]: pops min(count, length) values from end.
 * sink->len hears how many (0 for count 0, which changes nothing), then
 * sink->value each, before its storage goes. GB_R_NOTFOUND: no such key.
 * The key is deleted once empty. */
gb_result gb_list_lpop(gb_db *db, gb_slice key, gb_list_end end, size_t count, const gb_sink *sink);

/* LMPOP, BLMPOP, BLPOP, BRPOP: gb_list_lpop on the first of keys that holds
 * a list; *which (its index in keys) is set before the sink hears of it.
 * GB_R_NOTFOUND when none does; GB_R_WRONGTYPE at a key of another type met
 * before any list. */
gb_result gb_list_lmpop(gb_db *db, size_t nkeys, const gb_slice *keys, gb_list_end end, size_t count,
                        const gb_sink *sink, size_t *which);

/* LMOVE, RPOPLPUSH (BLMOVE and BRPOPLPUSH once there is data): pops from
 * source's end `from` and pushes to destination's end `to`, the value going
 * to sink->value. GB_R_NOTFOUND when source is missing; GB_R_WRONGTYPE
 * when source holds another type, or destination does (checked only when
 * there is something to move, as in Redis). *src_found (may be NULL) says
 * whether source held a list, whatever happened next. A missing
 * destination is created; an emptied source is deleted. */
gb_result gb_list_lmove(gb_db *db, gb_slice src, gb_slice dst, gb_list_end from, gb_list_end to,
                        const gb_sink *sink, bool *src_found);

/* ---- reads ---- */

/* LLEN (0 for a missing key). */
gb_result gb_list_llen(gb_db *db, gb_slice key, int64_t *len);

/* LINDEX: *out borrows the value until the next write (integers rendered
 * into buf). GB_R_NOTFOUND: no such key; GB_R_RANGE: no such index;
 * GB_R_BADARG when index is NULL and the key holds a list. */
gb_result gb_list_lindex(gb_db *db, gb_slice key, const int64_t *index, gb_slice *out, char buf[GB_LIST_INT_BUF]);

/* LRANGE: sink->len, then sink->value for each value in [start, stop]
 * (Redis's index rules). GB_R_NOTFOUND: no such key. */
gb_result gb_list_lrange(gb_db *db, gb_slice key, int64_t start, int64_t stop, const gb_sink *sink);

/* LPOS: the head-based indexes of matches of v (rank, count and maxlen as
 * engine/ds/list.h's gb_list_pos: count 0 is all) to sink->position, after
 * sink->len(GB_SINK_LEN_UNKNOWN); *n receives how many. GB_R_NOTFOUND: no
 * such key. */
gb_result gb_list_lpos(gb_db *db, gb_slice key, gb_slice v, int64_t rank, size_t count, size_t maxlen,
                       const gb_sink *sink, size_t *n);

/* ---- in-place changes ---- */

/* LSET: GB_R_NOTFOUND: no such key; GB_R_BADARG when index is NULL and the
 * key holds a list; GB_R_RANGE: no such index. */
gb_result gb_list_lset(gb_db *db, gb_slice key, const int64_t *index, gb_slice v);

/* LTRIM: keeps [start, stop]; a missing key is GB_R_OK. */
gb_result gb_list_ltrim(gb_db *db, gb_slice key, int64_t start, int64_t stop);

/* LREM: removes count matches of v (count < 0 from the tail, 0 all);
 * *removed says how many. */
gb_result gb_list_lrem(gb_db *db, gb_slice key, int64_t count, gb_slice v, int64_t *removed);

/* LINSERT: *len receives the new length, -1 when pivot is absent, 0 when
 * the key is missing. */
gb_result gb_list_linsert(gb_db *db, gb_slice key, bool after, gb_slice pivot, gb_slice v, int64_t *len);

#endif
