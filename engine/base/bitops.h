/*
 * Bit primitives of the bitmap commands (SETBIT, BITCOUNT, BITPOS, BITOP,
 * BITFIELD), with Redis 7.0's exact rules. A string is a bit array whose bit
 * 0 is the most significant bit of byte 0; bytes past the end read as 0.
 * Pure functions on byte buffers: no keys, no replies.
 */
#ifndef GB_ENGINE_BASE_BITOPS_H
#define GB_ENGINE_BASE_BITOPS_H

#include "engine/base/common.h"

/* Bits set in p[0..n). */
uint64_t gb_bits_popcount(const unsigned char *p, size_t n);

/* BITCOUNT key start end [BYTE|BIT] over a string of len bytes: start and
 * end are byte indexes, or bit indexes when in_bits, negative ones counting
 * from the end, clamped (Redis's rules, including "both negative and start
 * > end" answering 0 before any clamp). */
int64_t gb_bits_count_range(const unsigned char *p, size_t len, int64_t start, int64_t end, bool in_bits);

/* Redis's redisBitpos: the position of the first bit equal to bit (0 or 1)
 * in p[0..n): -1 when bit is 1 and none is set; n * 8 when bit is 0 and
 * none is clear (the string reads as zero-padded on the right). */
int64_t gb_bits_first(const unsigned char *p, size_t n, int bit);

/* BITPOS key bit [start [end [BYTE|BIT]]] over a string of len bytes.
 * Without end_given the range runs to the end of the string and a search
 * for 0 that finds none answers the first bit after it; with end_given it
 * answers -1. -1 for an empty range. Call with start 0 and end_given false
 * for no range. */
int64_t gb_bits_pos_range(const unsigned char *p, size_t len, int bit, int64_t start, int64_t end, bool end_given,
                          bool in_bits);

/* BITOP: the operations, and dst[0..maxlen) computed from n sources
 * (src[i], len[i] bytes; a missing key is length 0): each source reads as
 * zero-padded to maxlen; NOT takes one source. dst may be one of the
 * sources (each output byte depends only on the same byte of each input). */
typedef enum { GB_BITOP_AND, GB_BITOP_OR, GB_BITOP_XOR, GB_BITOP_NOT } gb_bitop;
void gb_bits_op(gb_bitop op, unsigned char *dst, size_t maxlen, const unsigned char *const *src, const size_t *len,
                size_t n);

/* BITFIELD integers of 1..64 bits at any bit offset (no bounds checks: the
 * caller sized the buffer for offset + bits). */
uint64_t gb_bits_get_unsigned(const unsigned char *p, uint64_t offset, unsigned bits);
int64_t gb_bits_get_signed(const unsigned char *p, uint64_t offset, unsigned bits);
void gb_bits_set(unsigned char *p, uint64_t offset, unsigned bits, uint64_t value);

/* BITFIELD's OVERFLOW behaviours. */
typedef enum { GB_BF_WRAP, GB_BF_SAT, GB_BF_FAIL } gb_bf_overflow;

/* Whether value + incr fits a `bits`-wide unsigned (1..63) / signed (1..64)
 * integer: 0 when it does, 1 on overflow, -1 on underflow. On a non-zero
 * answer *limit is the value to store under WRAP (the sum wrapped) or SAT
 * (the bound crossed); under FAIL it is not set. Redis's
 * checkUnsignedBitfieldOverflow / checkSignedBitfieldOverflow. */
int gb_bits_overflow_unsigned(uint64_t value, int64_t incr, unsigned bits, gb_bf_overflow ow, uint64_t *limit);
int gb_bits_overflow_signed(int64_t value, int64_t incr, unsigned bits, gb_bf_overflow ow, int64_t *limit);

#endif
