/*
 * intset: a sorted array of distinct integers, the encoding of sets whose
 * members are all canonical decimal int64s (at most set-max-intset-entries).
 *
 * Layout (one heap block; integers in native byte order, unaligned access
 * through memcpy):
 *
 *   offset  size       field
 *   0       1          width   bytes per element: 2, 4 or 8
 *   1       3          (pad)
 *   4       4          len     number of elements
 *   8       width*len  data    ascending, no duplicates
 *
 * Every element uses the width of the widest one. Adding a value that does
 * not fit widens the whole array in place (int16 -> int32 -> int64, done
 * back to front so no scratch copy is needed); the width never shrinks, as in
 * Redis. Lookup is a binary search; insert and delete move the tail.
 */
#ifndef GB_ENGINE_INTSET_H
#define GB_ENGINE_INTSET_H

#include "engine/base/common.h"

typedef struct gb_intset {
    uint8_t width;
    uint8_t pad[3];
    uint32_t len;
    unsigned char data[];
} gb_intset;

_Static_assert(sizeof(gb_intset) == 8, "intset header is 8 bytes");

gb_intset *gb_intset_new(void);
void gb_intset_free(gb_intset *is);
gb_intset *gb_intset_dup(const gb_intset *is);

/* Each returns the (possibly moved) intset; *added / *removed (may be NULL)
 * say whether the set changed. */
gb_intset *gb_intset_add(gb_intset *is, int64_t v, bool *added);
gb_intset *gb_intset_remove(gb_intset *is, int64_t v, bool *removed);

bool gb_intset_find(const gb_intset *is, int64_t v);
static inline uint32_t gb_intset_len(const gb_intset *is) { return is->len; }
/* Element at pos (0 <= pos < len), ascending order. */
int64_t gb_intset_get(const gb_intset *is, uint32_t pos);
int64_t gb_intset_random(const gb_intset *is);
/* Bytes of the block (header + data), as allocated. */
size_t gb_intset_bytes(const gb_intset *is);
/* Width (2, 4 or 8) the value v needs. */
uint8_t gb_intset_width_for(int64_t v);

/* Structural check: width in {2,4,8}, ascending, distinct, and every value
 * representable in width. */
bool gb_intset_verify(const gb_intset *is);

#endif
