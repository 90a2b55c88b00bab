/*
 * The set type's typed key operations (see engine/types/t_list.h for what a
 * typed key operation does and does not do, and how they are named). A
 * missing key reads as an empty set; an emptied set's key is deleted.
 */
#ifndef GB_ENGINE_TYPES_T_SET_H
#define GB_ENGINE_TYPES_T_SET_H

#include "engine/types/result.h"
#include "engine/types/tobj.h"

/* ---- writes ---- */

/* SADD: *added says how many members were new. Creates the key (unless
 * n == 0), sized for the n members to come. */
gb_result gb_set_sadd(gb_db *db, gb_slice key, size_t n, const gb_slice *members, int64_t *added);
/* SREM: *removed says how many of the n members went. */
gb_result gb_set_srem(gb_db *db, gb_slice key, size_t n, const gb_slice *members, int64_t *removed);
/* SMOVE: *moved is 1 when member left source for destination (or, source
 * and destination being one key, is a member), else 0. Both keys are looked
 * up first; a missing source is *moved 0 whatever the destination holds,
 * then either key of another type is GB_R_WRONGTYPE. */
/* *moved: 1 when member left src for dst; *dst_added (may be NULL): dst
 * did not hold it before (Redis fires sadd and signals dst only then). */
gb_result gb_set_smove(gb_db *db, gb_slice src, gb_slice dst, gb_slice member, int64_t *moved, bool *dst_added);
/* SPOP: removes min(count, size) random members: *card receives the set's
 * size before the pop and sink->len how many go (0 for count 0, which
 * changes nothing), then sink->value each. GB_R_NOTFOUND: no such key. */
gb_result gb_set_spop(gb_db *db, gb_slice key, size_t count, const gb_sink *sink, size_t *card);

/* ---- reads ---- */

/* SISMEMBER (1/0) and SCARD: 0 for a missing key. */
gb_result gb_set_sismember(gb_db *db, gb_slice key, gb_slice member, int64_t *is);
gb_result gb_set_scard(gb_db *db, gb_slice key, int64_t *card);
/* SMISMEMBER: sink->len(n), then for each member sink->value (a member)
 * or sink->missing (not one). */
gb_result gb_set_smismember(gb_db *db, gb_slice key, size_t n, const gb_slice *members, const gb_sink *sink);
/* SRANDMEMBER: count > 0 picks min(count, size) distinct members, count < 0
 * picks -count that may repeat: sink->len(how many), then sink->value for
 * each. GB_R_NOTFOUND: no such key. */
gb_result gb_set_srandmember(gb_db *db, gb_slice key, int64_t count, const gb_sink *sink);

/* ---- algebra ----
 * The keys are looked up in order, for reading; the first of another type
 * is GB_R_WRONGTYPE, a missing one an empty set. */

/* SINTER (SMEMBERS with one key): sink->len(GB_SINK_LEN_UNKNOWN), then
 * sink->value for each member of the intersection, *n how many.
 * GB_R_NOTFOUND when a key is missing (the intersection is empty). */
gb_result gb_set_sinter(gb_db *db, size_t nkeys, const gb_slice *keys, const gb_sink *sink, size_t *n);
/* SINTERCARD: the intersection's size, counting stops at limit (0: none). */
gb_result gb_set_sintercard(gb_db *db, size_t nkeys, const gb_slice *keys, size_t limit, int64_t *card);
/* SUNION, SDIFF: sink->len(the result's size), then sink->value each. */
gb_result gb_set_sunion(gb_db *db, size_t nkeys, const gb_slice *keys, const gb_sink *sink);
gb_result gb_set_sdiff(gb_db *db, size_t nkeys, const gb_slice *keys, const gb_sink *sink);
/* SINTERSTORE, SUNIONSTORE, SDIFFSTORE: the result replaces whatever dst
 * held (an empty result deletes dst); *card receives its size. */
gb_result gb_set_sinterstore(gb_db *db, gb_slice dst, size_t nkeys, const gb_slice *keys, int64_t *card);
gb_result gb_set_sunionstore(gb_db *db, gb_slice dst, size_t nkeys, const gb_slice *keys, int64_t *card);
gb_result gb_set_sdiffstore(gb_db *db, gb_slice dst, size_t nkeys, const gb_slice *keys, int64_t *card);

#endif
