/*
 * Redis's compact encodings as they appear inside RDB files and DUMP
 * payloads, read without trusting a byte: listpack (Redis 7), ziplist
 * (Redis 3.2 to 6.2), intset and zipmap (Redis 2.x). Each reader walks the
 * whole blob first, checks every length against the bytes that hold it and
 * the header's counts against what it found, and only then hands entries to
 * the caller, so a damaged blob is refused before anything is built.
 *
 * Layouts (all multi-byte integers little-endian unless said):
 *
 *   listpack  u32 total_bytes | u16 count (65535: unknown) | entries | 0xFF
 *     entry = encoding+data | backlen (1..5 bytes, 7 bits each, the
 *             length of encoding+data, written so it reads right to left)
 *     0xxxxxxx            7-bit unsigned int
 *     10xxxxxx            string, 6-bit length, then the bytes
 *     110xxxxx yyyyyyyy   13-bit signed int (big-endian 13 bits)
 *     1110xxxx yyyyyyyy   string, 12-bit length (big-endian), the bytes
 *     0xF0 u32            string, 32-bit length, the bytes
 *     0xF1/0xF2/0xF3/0xF4 int16 / int24 / int32 / int64
 *
 *   ziplist   u32 zlbytes | u32 zltail | u16 zllen (65535: unknown) | entries | 0xFF
 *     entry = prevlen (1 byte < 254, or 0xFE + u32) | encoding | data
 *     00pppppp            string, 6-bit length
 *     01pppppp qqqqqqqq   string, 14-bit length (big-endian)
 *     0x80 + u32 (BE)     string, 32-bit length
 *     0xC0 int16, 0xD0 int32, 0xE0 int64, 0xF0 int24, 0xFE int8,
 *     0xF1..0xFD          the immediate values 0..12
 *
 *   intset    u32 width (2, 4 or 8) | u32 count | count ascending ints
 *
 *   zipmap    u8 count (254: unknown) | { len key len free value free-bytes } | 0xFF
 *     len = one byte < 254, or 254 + u32
 */
#ifndef GB_ENGINE_PERSIST_RDB_COMPACT_H
#define GB_ENGINE_PERSIST_RDB_COMPACT_H

#include "engine/base/common.h"
#include "engine/base/strbuf.h"

/* One element: a string (ptr/len into the blob) or an integer rendered as
 * its decimal text in num (ptr points there). */
typedef struct gb_rdb_elem {
    const char *ptr;
    size_t len;
    bool is_int;
    int64_t ival;
    char num[24];
} gb_rdb_elem;

/* Called for each element in order; returning false stops the walk (the
 * reader then returns false with *why = the callback's reason, if set). */
typedef bool (*gb_rdb_elem_fn)(void *ctx, const gb_rdb_elem *e);

/* Each reader returns the number of elements (after checking the whole blob
 * and before calling emit), or -1 with *why set when the blob is damaged or
 * emit refused an element. emit may be NULL (validation only). */
int64_t gb_rdb_listpack_each(const uint8_t *p, size_t len, gb_rdb_elem_fn emit, void *ctx, const char **why);
int64_t gb_rdb_ziplist_each(const uint8_t *p, size_t len, gb_rdb_elem_fn emit, void *ctx, const char **why);
int64_t gb_rdb_intset_each(const uint8_t *p, size_t len, gb_rdb_elem_fn emit, void *ctx, const char **why);
/* A zipmap's elements are key, value, key, value... */
int64_t gb_rdb_zipmap_each(const uint8_t *p, size_t len, gb_rdb_elem_fn emit, void *ctx, const char **why);

/* Writing a Redis listpack (for stream payloads and compact types). */
void gb_rdb_listpack_begin(gb_strbuf *b, size_t *start);
void gb_rdb_listpack_add(gb_strbuf *b, gb_slice s);      /* an integer's text becomes an int entry */
void gb_rdb_listpack_add_int(gb_strbuf *b, int64_t v);
void gb_rdb_listpack_end(gb_strbuf *b, size_t start, size_t count);

#endif
