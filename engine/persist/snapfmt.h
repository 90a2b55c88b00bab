/*
 * The snapshot file format, version 5 (docs/persistence.md has the same
 * with examples). Every integer is little-endian, whatever the machine.
 *
 * File = header, blocks, trailer.
 *
 * Header, 32 bytes:
 *   offset size field
 *   0      8    magic "GOBLINSN"
 *   8      4    format version (4; a reader also takes 3, which is 4
 *                without STREAM values, and 2, which is 3 without
 *                FUNCTION records)
 *   12     4    flags (0; a reader refuses bits it does not know)
 *   16     8    created, Unix ms
 *   24     8    XXH3-64 of bytes 0..23
 *
 * Block, a 24-byte header then `stored` bytes:
 *   0      4    magic "GBLK"
 *   4      4    stored: bytes that follow the header
 *   8      4    raw: bytes once decoded (at most GB_SNAP_BLOCK_MAX)
 *   12     1    codec: 0 stored as is, 1 zstd
 *   13     3    zero
 *   16     8    XXH3-64 of header bytes 0..15 and the stored bytes
 *
 * Trailer, 48 bytes; its presence is what marks the file complete:
 *   0      4    magic "GEND"
 *   4      4    zero
 *   8      8    blocks
 *   16     8    raw bytes in all blocks
 *   24     8    keys
 *   32     8    XXH3-64 over the blocks' checksums, in order (a block
 *               dropped, repeated or reordered fails it)
 *   40     8    XXH3-64 of trailer bytes 0..39
 *
 * The blocks' decoded bytes are one stream of records (a record may span
 * blocks). Lengths and counts are unsigned LEB128 varints ("varint"),
 * signed integers zigzag varints ("svarint"), a "str" is varint length
 * then bytes.
 *
 *   AUX      0xFA  str name, str value            (goblin-ver, ctime; repl-stream-db, repl-id,
 *                                                   repl-offset where there is a replication
 *                                                   history to continue: docs/replication.md)
 *   FUNCTION 0xF5  str code                       (a function library's source, as
 *                                                   FUNCTION LOAD took it; after the AUX
 *                                                   records, one per library; version 3)
 *   DBSIZE   0xFB  varint db, varint keys         (before the keys: the table is sized once)
 *   SELECTDB 0xFE  varint db
 *   KEY      0xFD  u8 type, u8 flags, [i64 expire ms if flags & 1], str key,
 *                  value by type:
 *        0 STRING          str
 *        1 STRING_INT      svarint                (an integer-encoded string)
 *        2 LIST            varint n, n x str
 *        3 SET             varint n, n x str
 *        4 HASH            varint n, n x (str field, str value)
 *        5 ZSET            varint n, n x (str member, f64 score)
 *        6 LIST_LISTPACK   str: a listpack (engine/ds/listpack.h), as the list holds it
 *        7 SET_LISTPACK    str: a listpack of members
 *        8 SET_INTSET      str: an intset (engine/ds/intset.h: u8 width, 3 x 0, u32 count, values)
 *        9 HASH_LISTPACK   str: a listpack of field, value pairs
 *       10 ZSET_LISTPACK   str: a listpack of member, score pairs in order
 *                          (scores as engine/ds/zset.c encodes them)
 *       11 STREAM          (version 4; engine/persist/snap_stream.c; IDs are varint ms, varint seq)
 *                          varint nodes, nodes x (str 16-byte big-endian first ID,
 *                                                 str the node's bytes after its header,
 *                                                     engine/ds/stream_node.h),
 *                          varint length, ID last, ID first, ID max-deleted,
 *                          varint entries-added,
 *                          varint groups, groups x (str name, ID last-delivered,
 *                              svarint entries-read (-1: unknown),
 *                              varint pending, pending x (ID, svarint delivery ms,
 *                                                        varint delivery count),
 *                              varint consumers, consumers x (str name,
 *                                  svarint seen ms, varint n, n x ID: its pending))
 *       12 HASH_TTL        (version 5) a hash with field deadlines (engine/ds/hash_ttl.h):
 *                          varint n, n x (str field, str value),
 *                          varint m, m x (str field, varint deadline: Unix ms)
 *                          for the m fields that have one
 *   EOF      0xFF  varint keys                    (then the trailer)
 *
 * Small collections are stored as their compact encoding's bytes: saving
 * and loading them is a copy, and a load checks them whole (structure,
 * duplicates, order) before they are used. Large ones are stored element by
 * element and rebuilt.
 *
 * A loaded value takes the encoding the current thresholds give it (a
 * compact one converts when it exceeds them; a large one is rebuilt and
 * picks its own), as Redis does when it loads an RDB file.
 */
#ifndef GB_ENGINE_PERSIST_SNAPFMT_H
#define GB_ENGINE_PERSIST_SNAPFMT_H

#include <stdint.h>

#define GB_SNAP_MAGIC "GOBLINSN"
#define GB_SNAP_VERSION 5u
#define GB_SNAP_VERSION_MIN 2u /* the oldest version this build reads */
#define GB_SNAP_HEADER_SIZE 32u
#define GB_SNAP_BLOCK_MAGIC 0x4B4C4247u   /* "GBLK" */
#define GB_SNAP_BLOCK_HEADER_SIZE 24u
#define GB_SNAP_TRAILER_MAGIC 0x444E4547u /* "GEND" */
#define GB_SNAP_TRAILER_SIZE 48u
/* Decoded bytes per block: big enough for zstd to find repeats, small
 * enough that a reader's allocation is bounded whatever a file claims. */
#define GB_SNAP_BLOCK_MAX (1u << 20)

enum gb_snap_codec { GB_SNAP_CODEC_NONE = 0, GB_SNAP_CODEC_ZSTD = 1 };

enum gb_snap_op {
    GB_SNAP_OP_FUNCTION = 0xF5, /* Redis's RDB_OPCODE_FUNCTION2 number */
    GB_SNAP_OP_AUX = 0xFA,
    GB_SNAP_OP_DBSIZE = 0xFB,
    GB_SNAP_OP_KEY = 0xFD,
    GB_SNAP_OP_SELECTDB = 0xFE,
    GB_SNAP_OP_EOF = 0xFF,
};

enum gb_snap_type {
    GB_SNAP_T_STRING = 0,
    GB_SNAP_T_STRING_INT = 1,
    GB_SNAP_T_LIST = 2,
    GB_SNAP_T_SET = 3,
    GB_SNAP_T_HASH = 4,
    GB_SNAP_T_ZSET = 5,
    GB_SNAP_T_LIST_LISTPACK = 6,
    GB_SNAP_T_SET_LISTPACK = 7,
    GB_SNAP_T_SET_INTSET = 8,
    GB_SNAP_T_HASH_LISTPACK = 9,
    GB_SNAP_T_ZSET_LISTPACK = 10,
    GB_SNAP_T_STREAM = 11,
    GB_SNAP_T_HASH_TTL = 12,
    GB_SNAP_T_MAX = 12,
};

#define GB_SNAP_KEY_HAS_EXPIRE 0x01u

static inline void gb_le32_put(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void gb_le64_put(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t gb_le32_get(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline uint64_t gb_le64_get(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

#endif
