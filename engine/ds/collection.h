/*
 * Shared by the hash, set and sorted-set types (t_hash.c, t_set.c,
 * t_zset.c): the encoding thresholds and the random-sampling helpers behind
 * HRANDFIELD, SRANDMEMBER, SPOP and ZRANDMEMBER.
 */
#ifndef GB_ENGINE_TYPES_COMMON_H
#define GB_ENGINE_TYPES_COMMON_H

#include "engine/base/common.h"

/* Encoding thresholds, owned by the command layer (CONFIG SET changes them at
 * run time; objects read them on every insert). Names and defaults are
 * Redis 7.2's. */
typedef struct gb_types_config {
    size_t hash_max_listpack_entries; /* 512 */
    size_t hash_max_listpack_value;   /* 64 bytes, field or value */
    size_t set_max_intset_entries;    /* 512 */
    size_t set_max_listpack_entries;  /* 128 */
    size_t set_max_listpack_value;    /* 64 bytes */
    size_t zset_max_listpack_entries; /* 128 */
    size_t zset_max_listpack_value;   /* 64 bytes */
} gb_types_config;

void gb_types_config_defaults(gb_types_config *c);

/* A compact listpack never grows past this many bytes, whatever the
 * thresholds say (Redis's lpSafeToAdd limit: 1 GiB). */
#define GB_TYPES_LISTPACK_MAX_BYTES ((size_t)1 << 30)

/* A set of 64-bit keys (indices or pointers; never UINT64_MAX), open
 * addressing, for de-duplicating random picks. */
typedef struct gb_u64set {
    uint64_t *slot;
    size_t mask;
    size_t used;
} gb_u64set;

void gb_u64set_init(gb_u64set *s, size_t expected);
/* Returns true when k was not in the set. */
bool gb_u64set_add(gb_u64set *s, uint64_t k);
void gb_u64set_free(gb_u64set *s);

/* Whether the entries at positions 0, stride, 2*stride, ... of a
 * (validated) listpack are all different: a hash's fields (stride 2), a
 * set's members (1), a sorted set's members (2). O(n): each entry is hashed
 * into a table of its own; equal hashes are compared byte for byte. */
bool gb_lp_keys_unique(unsigned char *lp, unsigned stride);

/* Writes k distinct indices drawn uniformly from [0, n) (k <= n) into out,
 * in random order. */
void gb_sample_distinct(uint64_t n, uint64_t k, uint64_t *out);

struct gb_htable;
struct gb_hnode;
/* Calls fn on k distinct records of ht (k <= a third of its size), drawn
 * uniformly (gb_htable_random, repeats rejected): O(k), where copying the
 * table to pick positions would be O(size) for HRANDFIELD h 5 on a
 * million fields. */
void gb_htable_sample_distinct(struct gb_htable *ht, uint64_t k, void (*fn)(struct gb_hnode *n, void *ctx),
                               void *ctx);

#endif
