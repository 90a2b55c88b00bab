#include "engine/base/crc64.h"


/* Slice-by-8 (as Redis's crcspeed): eight table lookups per 8 bytes instead
 * of 64 shift-and-xor steps, which mattered once whole Redis dump.rdb files
 * were checked at start-up (a bit at a time it was 22% of a load).
 * crc64_table.h was generated with:
 *
 *   t0[i] = i run through 8 steps of crc = (crc >> 1) ^ (POLY if crc & 1)
 *   tk[i] = (t(k-1)[i] >> 8) ^ t0[t(k-1)[i] & 0xff]          for k = 1..7
 */
#include "engine/base/crc64_table.h"

uint64_t gb_crc64(uint64_t crc, const void *data, size_t n)
{
    const unsigned char *p = data;
    while (n >= 8) {
        uint64_t w = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
                     (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
        crc ^= w;
        crc = crc64_table[7][crc & 0xff] ^ crc64_table[6][(crc >> 8) & 0xff] ^ crc64_table[5][(crc >> 16) & 0xff] ^
              crc64_table[4][(crc >> 24) & 0xff] ^ crc64_table[3][(crc >> 32) & 0xff] ^
              crc64_table[2][(crc >> 40) & 0xff] ^ crc64_table[1][(crc >> 48) & 0xff] ^ crc64_table[0][crc >> 56];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = crc64_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}
