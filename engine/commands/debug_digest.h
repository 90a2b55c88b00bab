/*
 * DEBUG DIGEST and DEBUG DIGEST-VALUE: Redis 7.0's SHA-1 digest of the
 * whole dataset and of single values, bit for bit, so that a dataset
 * can be compared between goblin-core and redis-server (after a
 * migration, a replica's full sync, or the same commands sent to both)
 * with one command on each side.
 *
 * The digest follows what a value holds, not how it is stored: a list,
 * set, sorted set or hash gives the same digest in any of its encodings,
 * here as in Redis (engine/commands/debug_digest.c says how each type is
 * mixed in).
 */
#ifndef GB_ENGINE_COMMANDS_DEBUG_DIGEST_H
#define GB_ENGINE_COMMANDS_DEBUG_DIGEST_H

#include <stdint.h>

#include "engine/core/keyspace/db.h"

struct gb_engine;

/* Redis's computeDatasetDigest: every database that holds keys, its
 * number mixed in first; all zero for an empty dataset. */
void gb_dataset_digest(struct gb_engine *eng, uint8_t out[20]);

/* Redis's xorObjectDigest of kv's value (its type, the value, whether it
 * has an expiry) into digest, which the caller zeroes first. */
void gb_value_digest(const gb_kv *kv, uint8_t digest[20]);

#endif
