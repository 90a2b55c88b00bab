/*
 * HyperLogLog: the PF commands' typed key operations on string values (see
 * engine/types/t_list.h for what a typed key operation does and does not
 * do), the representation in engine/base/hll.h. Each follows Redis 7.0's
 * pfaddCommand & co: which lookups count as reads, when the value becomes
 * a heap buffer of its own ("raw", Redis's dbUnshareStringValue), when the
 * key counts as modified, so that the string's bytes, OBJECT ENCODING and
 * the events match redis-server's.
 */
#ifndef GB_ENGINE_T_HLL_H
#define GB_ENGINE_T_HLL_H

#include "engine/core/keyspace/db.h"

/* Why an operation refused a key (each has its own Redis error). */
typedef enum gb_hll_status {
    GB_HLL_OK = 0,
    GB_HLL_WRONGTYPE,  /* not a string */
    GB_HLL_NOT_HLL,    /* a string, but its header is not a HLL's */
    GB_HLL_CORRUPT,    /* a sparse HLL whose opcodes do not cover 16384 registers */
    GB_HLL_NO_KEY,     /* PFDEBUG on a missing key */
    GB_HLL_NOT_SPARSE, /* PFDEBUG DECODE of a dense HLL */
} gb_hll_status;

/* PFADD key ele...: creates the key (an empty sparse HLL) when absent; *updated
 * says whether a register changed or the key was created (the reply). On
 * CORRUPT the registers set before the bad one stay set, unannounced, as
 * in Redis. */
gb_hll_status gb_hll_add(gb_db *db, gb_slice key, const gb_slice *eles, size_t n, bool *updated);

/* PFCOUNT key: the cached cardinality, or the estimate, which is then
 * cached in the string (a change Redis propagates: *cached_now). 0 for a
 * missing key. */
gb_hll_status gb_hll_count_key(gb_db *db, gb_slice key, uint64_t *card, bool *cached_now);

/* PFCOUNT key key...: the estimate of the union (missing keys are empty). */
gb_hll_status gb_hll_count_union(gb_db *db, const gb_slice *keys, size_t n, uint64_t *card);

/* PFMERGE dst src...: keys[0] is dst, keys[1..n) the sources; dst (created
 * when absent, itself the first input) takes the registers' maxima, dense
 * if any input is. */
gb_hll_status gb_hll_merge(gb_db *db, const gb_slice *keys, size_t n);

/* PFDEBUG's subcommands on an existing HLL. */
typedef enum {
    GB_HLL_DEBUG_GETREG,
    GB_HLL_DEBUG_DECODE,
    GB_HLL_DEBUG_ENCODING,
    GB_HLL_DEBUG_TODENSE,
    GB_HLL_DEBUG_UNKNOWN, /* the key checks alone: its error comes after them */
} gb_hll_debug_op;

/* What a PFDEBUG subcommand answers: registers (GETREG, 16384 of them, in
 * the caller's buffer), the decoded text (DECODE, through out), the
 * encoding (ENCODING), whether it converted (TODENSE). */
typedef struct gb_hll_debug_reply {
    uint8_t *registers;
    void (*out)(void *ctx, const char *p, size_t n);
    void *ctx;
    int encoding;
    bool converted;
} gb_hll_debug_reply;

/* Redis checks the key (NO_KEY, WRONGTYPE, NOT_HLL) and makes its value
 * raw before it looks at the subcommand; then op runs. GETREG and TODENSE
 * turn a sparse HLL dense (CORRUPT when it is not valid). */
gb_hll_status gb_hll_debug(gb_db *db, gb_slice key, gb_hll_debug_op op, gb_hll_debug_reply *reply);

#endif
