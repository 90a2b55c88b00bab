/*
 * Folding a byte range for a reflected 64-bit CRC with the CPU's
 * carry-less multiply, chosen once at run time (as platform/popcount.h):
 *
 *   x86-64 - PCLMULQDQ: 64 bytes a step in four independent lanes, 5 to
 *            6.5 times the rate of the best table-driven CRC (measured on
 *            AMD EPYC: 13 against 2.0 GB/s at 1 KiB, 14.5 against 2.9 at
 *            1 MiB);
 *   other  - none (NULL): the caller keeps its table-driven CRC.
 *
 * The fold knows nothing of a particular polynomial: the caller passes the
 * four constants of its own (engine/base/crc64.c, Redis's CRC-64 Jones).
 * For a polynomial P in the reflected bit order, with R(v) the 64-bit
 * reflected form of a polynomial v of degree below 64:
 *
 *   k[0] = R(x^575 mod P), k[1] = R(x^511 mod P)   (folding 512 bits ahead)
 *   k[2] = R(x^191 mod P), k[3] = R(x^127 mod P)   (folding 128 bits ahead)
 *
 * (the exponents are one short of the distance plus 64 and of the distance:
 * a carry-less product of two reflected 64-bit values comes out one bit
 * lower than the 128-bit reflected value it stands for, and the constants
 * take that bit back).
 *
 * Same on every OS: the choice depends on the architecture alone.
 */
#ifndef GB_PLATFORM_CLMUL_H
#define GB_PLATFORM_CLMUL_H

#include <stddef.h>
#include <stdint.h>

/* Folds the n bytes at p (n a multiple of 16, at least 16; any alignment)
 * into 16 bytes at out whose CRC, computed from 0, is the CRC of the n
 * bytes computed from crc: so the CRC of p[0..n) followed by more bytes is
 * the CRC of out followed by them. */
typedef void gb_clmul_fold_fn(const uint64_t k[4], uint64_t crc, const void *p, size_t n, unsigned char out[16]);

/* The fold this CPU runs, or NULL where it has no carry-less multiply. */
gb_clmul_fold_fn *gb_clmul_fold(void);

#endif
