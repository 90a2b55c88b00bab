#include "engine/cluster/keyslot.h"

#include <stdbool.h>
#include <string.h>

/* CRC16-XMODEM byte by byte: the table holds each byte's remainder,
 * built once from the polynomial (the engine thread computes slots; the
 * build is idempotent, so a second thread racing it writes the same
 * values). */
static uint16_t crc_table[256];
static bool crc_table_ready;

static void build_crc_table(void)
{
    for (unsigned i = 0; i < 256; i++) {
        uint16_t c = (uint16_t)(i << 8);
        for (int bit = 0; bit < 8; bit++)
            c = (uint16_t)((c & 0x8000) ? (c << 1) ^ 0x1021 : c << 1);
        crc_table[i] = c;
    }
    crc_table_ready = true;
}

uint16_t gb_crc16(const char *buf, size_t len)
{
    if (!crc_table_ready)
        build_crc_table();
    uint16_t crc = 0;
    const unsigned char *p = (const unsigned char *)buf;
    for (size_t i = 0; i < len; i++)
        crc = (uint16_t)((crc << 8) ^ crc_table[((crc >> 8) ^ p[i]) & 0xff]);
    return crc;
}

unsigned gb_keyslot(const char *key, size_t len)
{
    const char *open = len ? memchr(key, '{', len) : NULL;
    if (open) {
        size_t start = (size_t)(open - key) + 1;
        const char *close = start < len ? memchr(key + start, '}', len - start) : NULL;
        if (close && close != key + start)
            return gb_crc16(key + start, (size_t)(close - (key + start))) & (GB_CLUSTER_SLOTS - 1);
    }
    return gb_crc16(key, len) & (GB_CLUSTER_SLOTS - 1);
}
