#include "engine/base/crc64.h"

/* The polynomial bit-reversed, since input and output are reflected. */
#define POLY_REFLECTED 0x95ac9329ac4bc9b5ull

/* Bit by bit rather than through a 2 KiB table: what it checks are
 * FUNCTION DUMP payloads, a few kilobytes of library code, once per
 * RESTORE. */
uint64_t gb_crc64(uint64_t crc, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int b = 0; b < 8; b++)
            crc = (crc >> 1) ^ (POLY_REFLECTED & (0 - (crc & 1)));
    }
    return crc;
}
