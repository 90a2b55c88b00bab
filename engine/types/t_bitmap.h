/*
 * Bitmaps: the bit commands' typed key operations on string values (see
 * engine/types/t_list.h for what a typed key operation does and does not
 * do). The bit arithmetic itself is engine/base/bitops.h; BITCOUNT and
 * BITPOS read a string with gb_string_get and count there.
 *
 * A write (SETBIT, BITFIELD SET/INCRBY) first makes the string long enough
 * for the highest bit it touches, zero-padded, in a heap buffer of its own
 * (Redis's lookupStringForBitCommand: the value becomes "raw" even when no
 * bit changes), creating the key when absent. The caller bounds the offsets
 * (proto-max-bulk-len).
 */
#ifndef GB_ENGINE_T_BITMAP_H
#define GB_ENGINE_T_BITMAP_H

#include "engine/base/bitops.h"
#include "engine/core/keyspace/db.h"
#include "engine/types/result.h"

/* GETBIT: *bit is the bit at offset (0 past the end or for a missing key).
 * GB_R_WRONGTYPE. */
gb_result gb_bitmap_getbit(gb_db *db, gb_slice key, uint64_t offset, int *bit);

/* SETBIT: sets the bit at offset to on (0 or 1); *old is its previous
 * value, *changed whether the dataset changed (the key created or grown,
 * or the bit flipped). GB_R_WRONGTYPE. */
gb_result gb_bitmap_setbit(gb_db *db, gb_slice key, uint64_t offset, int on, int *old, bool *changed);

/* One BITFIELD operation, parsed. */
typedef enum { GB_BF_GET, GB_BF_SET, GB_BF_INCRBY } gb_bf_kind;
typedef struct gb_bitfield_op {
    uint64_t offset;        /* bit offset of the integer */
    int64_t value;          /* SET's value, INCRBY's increment */
    uint8_t kind;           /* gb_bf_kind */
    uint8_t overflow;       /* gb_bf_overflow in force for this operation */
    uint8_t bits;           /* 1..64 signed, 1..63 unsigned */
    bool is_signed;
} gb_bitfield_op;

/* One operation's answer: the value (unsigned ones fit: at most 63 bits),
 * or nil for a SET/INCRBY refused by OVERFLOW FAIL. */
typedef struct gb_bitfield_reply {
    int64_t value;
    bool nil;
} gb_bitfield_reply;

/* BITFIELD / BITFIELD_RO: runs ops[0..n) in order, out[i] answering ops[i].
 * Only GETs: a read (a missing key reads as zeros; nothing is created).
 * Otherwise the string grows to the highest bit written first. *changes
 * counts the operations that changed a value (or wrote to a key created or
 * grown for them): Redis's "setbit" event fires when it is non-zero.
 * GB_R_WRONGTYPE, with nothing done. */
gb_result gb_bitmap_bitfield(gb_db *db, gb_slice key, const gb_bitfield_op *ops, size_t n, gb_bitfield_reply *out,
                             size_t *changes);

/* BITOP op dst src...: stores the result of op over the n source keys (a
 * missing one reads as an empty string) in dst, as a fresh value without
 * expiry; an empty result deletes dst instead. *len is the result's length;
 * *dst_deleted whether an existing dst was deleted for an empty result.
 * GB_R_WRONGTYPE when a source is not a string (nothing done). */
gb_result gb_bitmap_bitop(gb_db *db, gb_bitop op, gb_slice dst, const gb_slice *srcs, size_t n, size_t *len,
                          bool *dst_deleted);

#endif
