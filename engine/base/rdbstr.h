/*
 * Redis's RDB length and string encodings (rdb.c there), as far as
 * FUNCTION DUMP / RESTORE payloads use them.
 *
 * A length is 00xxxxxx (6 bits), 01xxxxxx + 1 byte (14 bits, big-endian),
 * 0x80 + 4 bytes or 0x81 + 8 bytes (big-endian). A first byte 11xxxxxx
 * instead names a special string encoding: 0xC0/0xC1/0xC2 an int8/int16/
 * int32 (little-endian, signed) standing for its decimal text, 0xC3 an LZF
 * block (compressed length, original length, then the block).
 *
 * Reading treats every byte as hostile: nothing is read past the buffer,
 * and nothing is allocated beyond what the bytes left can stand for.
 */
#ifndef GB_ENGINE_RDBSTR_H
#define GB_ENGINE_RDBSTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/base/strbuf.h"

#define GB_RDB_ENC_INT8 0
#define GB_RDB_ENC_INT16 1
#define GB_RDB_ENC_INT32 2
#define GB_RDB_ENC_LZF 3

typedef struct gb_rdb_reader {
    const uint8_t *p;
    size_t len, pos; /* bytes in p, bytes consumed */
} gb_rdb_reader;

static inline gb_rdb_reader gb_rdb_reader_make(const void *p, size_t len)
{
    return (gb_rdb_reader){(const uint8_t *)p, len, 0};
}

/* Reads one byte; -1 at the end. */
int gb_rdb_read_byte(gb_rdb_reader *r);

/* Reads a length; *encoded is set when the first byte named a special
 * encoding instead (then *len is its number, GB_RDB_ENC_*). Returns 0, or -1
 * when truncated or 10xxxxxx is neither 0x80 nor 0x81. */
int gb_rdb_read_len(gb_rdb_reader *r, uint64_t *len, bool *encoded);

/* Reads a string in any encoding into *out (gb_malloc'd, NUL added; the
 * caller frees it). Returns 0, or -1 when it is malformed or its decoded
 * length would pass max. */
int gb_rdb_read_string(gb_rdb_reader *r, size_t max, char **out, size_t *out_len);

/* A string read in place: plain strings point into the reader's buffer
 * (valid while it is), integer and LZF encodings are decoded into owned
 * (gb_malloc'd; NULL otherwise). Free with gb_rdb_str_free. Loading a
 * mapped dump.rdb this way allocates nothing for most keys and values. */
typedef struct gb_rdb_str {
    const char *ptr;
    size_t len;
    char *owned;
} gb_rdb_str;

int gb_rdb_read_str(gb_rdb_reader *r, size_t max, gb_rdb_str *s);
void gb_rdb_str_free(gb_rdb_str *s);

/* Appends a length, and a string as Redis's reader accepts it (plain bytes:
 * no integer or LZF encoding). */
void gb_rdb_write_len(gb_strbuf *b, uint64_t len);
void gb_rdb_write_string(gb_strbuf *b, const void *s, size_t n);

#endif
