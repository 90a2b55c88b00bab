/*
 * Helpers shared by the hash, set and sorted-set command modules
 * (cmd_hash.c, cmd_set.c, cmd_zset.c): the encoding thresholds as the type
 * objects want them, their gb_type_ops, lookups that reply WRONGTYPE,
 * HSCAN/SSCAN/ZSCAN, Redis's random-count argument rules, and storing a
 * computed result under a key (the *STORE commands).
 */
#ifndef GB_ENGINE_CMD_TYPES_H
#define GB_ENGINE_CMD_TYPES_H

#include "engine/core/client.h"
#include "engine/types/tobj.h"

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
