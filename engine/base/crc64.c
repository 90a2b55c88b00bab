#include "engine/base/crc64.h"

#include "platform/clmul.h"

/* Slice-by-8 (as Redis's crcspeed): eight table lookups per 8 bytes instead
 * of 64 shift-and-xor steps, which mattered once whole Redis dump.rdb files
 * were checked at start-up (a bit at a time it was 22% of a load).
 * crc64_table.h was generated with:
 *
 *   t0[i] = i run through 8 steps of crc = (crc >> 1) ^ (POLY if crc & 1)
 *   tk[i] = (t(k-1)[i] >> 8) ^ t0[t(k-1)[i] & 0xff]          for k = 1..7
 */
#include "engine/base/crc64_table.h"

/* Eight table lookups fold one 8-byte word into crc. */
static inline uint64_t fold_word(uint64_t crc, const unsigned char *p)
{
    uint64_t w = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
                 (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
    crc ^= w;
    return crc64_table[7][crc & 0xff] ^ crc64_table[6][(crc >> 8) & 0xff] ^ crc64_table[5][(crc >> 16) & 0xff] ^
           crc64_table[4][(crc >> 24) & 0xff] ^ crc64_table[3][(crc >> 32) & 0xff] ^
           crc64_table[2][(crc >> 40) & 0xff] ^ crc64_table[1][(crc >> 48) & 0xff] ^ crc64_table[0][crc >> 56];
}

static uint64_t crc_serial(uint64_t crc, const unsigned char *p, size_t n)
{
    for (; n >= 8; p += 8, n -= 8)
        crc = fold_word(crc, p);
    while (n--)
        crc = crc64_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

/* ---- three streams at once ------------------------------------------------------------------ */

/* Each word's lookups wait for the previous word's result, so one stream
 * runs at the table's latency, not at the rate the CPU can load: a long
 * buffer is cut in three, whose CRCs run side by side from 0 and are
 * joined at the end (zlib's crc32_combine): the CRC of A then B is A's CRC
 * carried through len(B) zero bytes, xor B's own. Checking a whole Redis
 * dump.rdb at start-up is where it shows (7% of loading 1M small keys). */
#define STREAMS_FROM ((size_t)1 << 20) /* joining costs ~100K bit operations: worth it on long buffers only */

/* A 64x64 matrix over GF(2): column i is what bit i of a vector becomes. */
static uint64_t gf2_times(const uint64_t *mat, uint64_t vec)
{
    uint64_t sum = 0;
    for (; vec; vec >>= 1, mat++)
        if (vec & 1)
            sum ^= *mat;
    return sum;
}

static void gf2_square(uint64_t *square, const uint64_t *mat)
{
    for (int i = 0; i < 64; i++)
        square[i] = gf2_times(mat, mat[i]);
}

/* crc carried through len zero bytes. */
static uint64_t crc_shift(uint64_t crc, size_t len)
{
    uint64_t odd[64], even[64];
    odd[0] = crc64_table[0][128]; /* one zero bit: the (reflected) polynomial where bit 0 falls off */
    for (int i = 1; i < 64; i++)
        odd[i] = (uint64_t)1 << (i - 1);
    gf2_square(even, odd); /* two zero bits */
    gf2_square(odd, even); /* four */
    while (len) {
        gf2_square(even, odd); /* 8, 32, 128, ... zero bits */
        if (len & 1)
            crc = gf2_times(even, crc);
        if (!(len >>= 1))
            break;
        gf2_square(odd, even); /* 16, 64, ... */
        if (len & 1)
            crc = gf2_times(odd, crc);
        len >>= 1;
    }
    return crc;
}

static uint64_t crc_three_streams(uint64_t crc, const unsigned char *p, size_t n)
{
    size_t third = n / 3 & ~(size_t)7;
    const unsigned char *a = p, *b = p + third, *c = p + 2 * third;
    uint64_t ca = crc, cb = 0, cc = 0;
    for (size_t i = 0; i < third; i += 8) {
        ca = fold_word(ca, a + i);
        cb = fold_word(cb, b + i);
        cc = fold_word(cc, c + i);
    }
    size_t rest = n - 2 * third - third;
    cc = crc_serial(cc, c + third, rest);
    uint64_t ab = crc_shift(ca, third) ^ cb;
    return crc_shift(ab, third + rest) ^ cc;
}

/* ---- carry-less multiplication ---------------------------------------------------------- */

/* Where the CPU has a carry-less multiply (platform/clmul.h), buffers from
 * this size on are folded with it, 64 bytes a step, to 16 bytes that the
 * tables finish: every DUMP payload and RESTORE of MIGRATE, a snapshot's
 * whole-file check. Measured on the development machine (AMD EPYC): 3.3
 * against 2.5 GB/s at 32 bytes, 13 against 2.0 at 1 KiB, 14.5 against 2.9
 * (three streams) at 1 MiB. */
#define FOLD_FROM 32

/* The fold constants of the Jones polynomial (platform/clmul.h says what
 * each is): R(x^e mod P) is the CRC, from 0, of a byte 0x01 followed by
 * (e - 71) / 8 zero bytes, which is how test_crc64 checks them. */
static const uint64_t fold_constants[4] = {
    0xaf86efb16d9ab4fbull, /* x^575 mod P */
    0xf49784a634f014e4ull, /* x^511 mod P */
    0xd9d7be7d505da32cull, /* x^191 mod P */
    0x381d0015c96f4444ull, /* x^127 mod P */
};

uint64_t gb_crc64_tables(uint64_t crc, const void *data, size_t n)
{
    return n >= STREAMS_FROM ? crc_three_streams(crc, data, n) : crc_serial(crc, data, n);
}

uint64_t gb_crc64(uint64_t crc, const void *data, size_t n)
{
    if (n >= FOLD_FROM) {
        gb_clmul_fold_fn *fold = gb_clmul_fold();
        if (fold) {
            size_t whole = n & ~(size_t)15;
            unsigned char folded[16];
            fold(fold_constants, crc, data, whole, folded);
            return crc_serial(crc_serial(0, folded, sizeof folded), (const unsigned char *)data + whole, n - whole);
        }
    }
    return gb_crc64_tables(crc, data, n);
}
