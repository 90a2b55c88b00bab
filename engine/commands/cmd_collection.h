/*
 * Helpers shared by the hash, set and sorted-set command modules
 * (cmd_hash.c, cmd_set.c, cmd_zset.c): HSCAN/SSCAN/ZSCAN, and Redis's
 * random-count argument rules.
 */
#ifndef GB_ENGINE_CMD_TYPES_H
#define GB_ENGINE_CMD_TYPES_H

#include "engine/core/request/client.h"
#include "engine/types/tobj.h"

/* ---- HSCAN / SSCAN / ZSCAN ---- */

/* "xSCAN key cursor [MATCH pattern] [COUNT count]" on a hash, set or sorted
 * set (t): Redis's scanGenericCommand (COUNT must be an integer >= 1, TYPE
 * is refused for a key's elements; the key is checked before the options).
 * Replies [cursor, [element, ...]]. */
void gb_types_scan(gb_client *c, int argc, gb_slice *argv, enum gb_type t);

/* ---- HRANDFIELD / SRANDMEMBER / ZRANDMEMBER ---- */

/* The count argument, Redis 7.0.15's rules, checked in this order: an
 * integer in [-LONG_MAX, LONG_MAX] ("value is out of range, value must
 * between ..."); then (after the caller's syntax check) with WITHVALUES /
 * WITHSCORES within +-LONG_MAX/2 ("value is out of range"). */
bool gb_types_random_count(gb_client *c, gb_slice arg, int64_t *out);
/* For gb_sink.fits: false (and the client closed, as one over its output
 * limit) when n elements of per_element replies each cannot fit within
 * the hard limit of its client-output-buffer-limit class; for a script's
 * client, an error reply when the Lua table could not be built; for any
 * client, an error reply when n elements of about element_bytes each
 * (what one takes in the value) would take more than the machine's
 * memory. A negative count repeats members, so the reply's size is the
 * client's number whatever the key holds: Redis 7.0 builds SRANDMEMBER
 * key -9223372036854775807 until memory runs out, every other client
 * waiting. */
bool gb_types_reply_fits(gb_client *c, uint64_t n, unsigned per_element, uint64_t element_bytes);
bool gb_types_random_pairs_ok(gb_client *c, int64_t count);

#endif
