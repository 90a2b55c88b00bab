/*
 * HyperLogLog in Redis 7.0's exact representation (src/hyperloglog.c), so
 * that a PF key's string moves between Goblin and redis-server (GET/SET,
 * DUMP/RESTORE) and estimates the same, byte for byte.
 *
 * A HLL is a string: a 16-byte header ("HYLL", the encoding byte 0 dense or
 * 1 sparse, 3 unused bytes, the cached cardinality as 8 little-endian bytes
 * whose top bit set means "stale"), then 16384 registers of 6 bits:
 *
 *   dense   12288 bytes, register i in bits 6i.. of the little-endian bit
 *           stream (the string is exactly 12304 bytes);
 *   sparse  run-length opcodes: ZERO 00xxxxxx (1..64 zero registers), XZERO
 *           01xxxxxx yyyyyyyy (1..16384 zero registers), VAL 1vvvvvxx (1..4
 *           registers of value 1..32). PFADD creates one XZERO of 16384
 *           zeros ("\x7f\xff") and goes dense past hll-sparse-max-bytes
 *           or for a register above 32.
 *
 * Strings come from outside (SET, RESTORE, a replica's stream), so every
 * reader here takes hostile bytes: an opcode that would pass register 16383
 * makes the string invalid (Redis's INVALIDOBJ) and is never followed. As in
 * Redis, an XZERO cut off by the string's end reads its second byte as 0 (an
 * sds string's terminator).
 *
 * Pure functions on byte buffers: no keys, no replies.
 */
#ifndef GB_ENGINE_BASE_HLL_H
#define GB_ENGINE_BASE_HLL_H

#include "engine/base/common.h"

#define GB_HLL_P 14
#define GB_HLL_REGISTERS (1u << GB_HLL_P)
#define GB_HLL_HDR_SIZE 16
#define GB_HLL_DENSE_SIZE (GB_HLL_HDR_SIZE + GB_HLL_REGISTERS * 6 / 8)
/* An empty HLL as PFADD creates it: the header and one XZERO of 16384. */
#define GB_HLL_SPARSE_EMPTY_SIZE (GB_HLL_HDR_SIZE + 2)
/* Bytes a sparse string may grow by in one gb_hll_sparse_set, past its
 * length (an XZERO split into XZERO VAL XZERO, plus Redis's terminator). */
#define GB_HLL_SPARSE_SLACK 4
#define GB_HLL_SPARSE_VAL_MAX 32 /* the largest register a VAL holds */

enum { GB_HLL_DENSE = 0, GB_HLL_SPARSE = 1 };

/* Redis's MurmurHash64A, endian-neutral. */
uint64_t gb_hll_murmur64a(const void *key, size_t len, uint64_t seed);

/* The register an element goes to (*index) and its run of zeros plus one
 * (1..51), from MurmurHash64A with Redis's seed 0xadc83b19. */
uint8_t gb_hll_pattern(const void *ele, size_t len, uint32_t *index);

/* Redis's isHLLObjectOrReply on a string's bytes: at least a header, the
 * magic, encoding 0 or 1, and a dense one exactly GB_HLL_DENSE_SIZE long. */
bool gb_hll_valid_header(const uint8_t *s, size_t len);

static inline int gb_hll_encoding(const uint8_t *s) { return s[4]; }

/* Writes an empty sparse HLL (GB_HLL_SPARSE_EMPTY_SIZE bytes) to s; its
 * cached cardinality is 0 and valid. */
void gb_hll_init_sparse(uint8_t *s);

/* The cached cardinality in the header. */
bool gb_hll_cache_valid(const uint8_t *s);
uint64_t gb_hll_cache_get(const uint8_t *s);
void gb_hll_cache_set(uint8_t *s, uint64_t card);
void gb_hll_cache_invalidate(uint8_t *s);

/* Dense registers (regs = s + GB_HLL_HDR_SIZE, 12288 bytes). */
uint8_t gb_hll_dense_get(const uint8_t *regs, uint32_t index);
/* Raises register index to count when lower; true when it changed. */
bool gb_hll_dense_set(uint8_t *regs, uint32_t index, uint8_t count);
/* All 16384 registers as one byte each, and back. */
void gb_hll_dense_unpack(const uint8_t *regs, uint8_t *raw);
void gb_hll_dense_pack(const uint8_t *raw, uint8_t *regs);

/* What gb_hll_sparse_set did. */
typedef enum {
    GB_HLL_SET_INVALID = -1, /* the string is not a valid sparse HLL */
    GB_HLL_SET_UNCHANGED = 0,
    GB_HLL_SET_UPDATED = 1,
    GB_HLL_SET_PROMOTE = 2, /* not representable within max_bytes: go dense */
} gb_hll_set_result;

/* Redis's hllSparseSet on a sparse string s of *len bytes with room for
 * *len + GB_HLL_SPARSE_SLACK: raises register index to count, in place,
 * updating *len and invalidating the cache, with Redis's exact opcode
 * splitting and merging (so the bytes match redis-server's). PROMOTE
 * leaves s unchanged: the caller converts it to dense and sets there. */
gb_hll_set_result gb_hll_sparse_set(uint8_t *s, size_t *len, uint32_t index, uint8_t count, size_t max_bytes);

/* raw[i] = max(raw[i], register i) for the HLL s (dense or sparse, valid
 * header). False for a sparse string whose opcodes do not cover exactly
 * 16384 registers (raw may then be partly merged). */
bool gb_hll_merge_raw(const uint8_t *s, size_t len, uint8_t *raw);

/* The estimate (Redis 7's "improved" estimator, Ertl 2017) of the HLL s,
 * dense or sparse; *invalid set for a sparse string that does not cover
 * exactly 16384 registers. */
uint64_t gb_hll_count(const uint8_t *s, size_t len, bool *invalid);
/* The same for registers one byte each. */
uint64_t gb_hll_count_raw(const uint8_t *raw);

/* PFDEBUG DECODE's text for a sparse string: "z:N", "Z:N", "v:V,N" per
 * opcode, separated by spaces. Calls out for each piece. */
void gb_hll_sparse_decode(const uint8_t *s, size_t len, void (*out)(void *ctx, const char *p, size_t n), void *ctx);

/* PFSELFTEST: Redis's register access and estimate-error checks, on a
 * dense and a sparse HLL built side by side. NULL when they pass, else the
 * error text (the caller frees it with gb_free). */
char *gb_hll_selftest(size_t max_bytes);

#endif
