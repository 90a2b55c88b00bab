/*
 * LZF compression and decompression (liblzf's format, which Redis uses for compressed
 * strings in RDB payloads), written for hostile input: every byte of the
 * compressed block may be an attacker's.
 *
 * The format is a sequence of items, each starting with a control byte c:
 *   c < 0x20        a literal run: the next c + 1 bytes are copied as is;
 *   c >> 5 in 1..6  a back-reference of (c >> 5) + 2 bytes, offset
 *                   ((c & 0x1f) << 8 | next byte) + 1 back from the output end;
 *   c >> 5 == 7     the same with the length (7 + next byte) + 2, the offset's
 *                   low byte after that.
 * So a block of n bytes expands to at most n * GB_LZF_MAX_RATIO bytes
 * (a 3-byte long reference copies at most 264): callers bound the size they
 * allocate for a declared original length with that.
 */
#ifndef GB_ENGINE_LZF_H
#define GB_ENGINE_LZF_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#define GB_LZF_MAX_RATIO 88

/* Decompresses in[0..in_len) into out[0..out_cap). Returns the bytes
 * written, or -1 when the block is malformed: truncated, a back-reference
 * before the start of the output, or output that would pass out_cap. Never
 * reads or writes outside the two buffers. */
int64_t gb_lzf_decompress(const void *in, size_t in_len, void *out, size_t out_cap);

/* Compresses in[0..in_len) into out[0..out_cap) (engine/base/lzf_compress.c).
 * Returns the compressed size, or 0 when it would not fit in out_cap (the
 * caller keeps the data uncompressed then). in_len must be below 4 GiB. */
size_t gb_lzf_compress(const void *in, size_t in_len, void *out, size_t out_cap);

#endif
