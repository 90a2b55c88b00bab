/*
 * Internal to engine/ds/hash.c and hash_ttl.c: the hash table
 * representation's records, and where a field's deadline lives in them.
 *
 * A record is one allocation per field:
 *
 *   offset  size    field
 *   0       8       next    htable chain link (gb_hnode)
 *   8       1..5    flen    field length, varint (LEB128)
 *   ..      flen    field bytes
 *   ..      1..5    vlen    value length, varint
 *   ..      vlen    value bytes
 *   ..      10      trailer only in a "timed" table (a hash with field TTLs):
 *                   6 bytes  the deadline, Unix ms, little-endian (<= 2^48-1)
 *                   4 bytes  the record's slot in the table's deadline heap,
 *                            GB_HREC_NO_SLOT when the field has no deadline
 *
 * A timed table also keeps a binary min-heap of the records that have a
 * deadline (pointers, earliest deadline on top), each record knowing its
 * slot, so the earliest deadline is one look, and setting, dropping or
 * expiring one is O(log n). Plain tables (no TTL ever) have neither.
 */
#ifndef GB_ENGINE_DS_HASH_IMPL_H
#define GB_ENGINE_DS_HASH_IMPL_H

#include "engine/ds/htable.h"
#include "engine/ds/zset_tree.h" /* varint length format */

#define GB_HREC_TRAILER 10
#define GB_HREC_NO_SLOT UINT32_MAX

typedef struct hrec {
    gb_hnode node;
    unsigned char data[]; /* varint flen, field, varint vlen, value [, trailer] */
} hrec;

typedef struct hbig {
    gb_htable ht;
    size_t rec_bytes;
    hrec **heap;       /* timed: the records with a deadline, a min-heap */
    uint32_t nheap;    /* entries in heap */
    uint32_t heap_cap; /* slots allocated */
    bool timed;        /* every record ends in a trailer */
} hbig;

static inline gb_slice hrec_field(const hrec *r) { return gb_zmember_slice(r->data); }

static inline gb_slice hrec_value(const hrec *r)
{
    gb_slice f = hrec_field(r);
    return gb_zmember_slice((const unsigned char *)f.ptr + f.len);
}

/* The trailer of a timed table's record. */
static inline unsigned char *hrec_trailer(const hrec *r)
{
    gb_slice v = hrec_value(r);
    return (unsigned char *)v.ptr + v.len;
}

static inline uint32_t trailer_slot(const unsigned char *t)
{
    uint32_t s;
    memcpy(&s, t + 6, sizeof s);
    return s;
}

static inline int64_t trailer_deadline(const unsigned char *t)
{
    uint64_t w = 0;
    for (int i = 5; i >= 0; i--)
        w = w << 8 | t[i];
    return (int64_t)w;
}

static inline void trailer_put(unsigned char *t, int64_t when, uint32_t slot)
{
    for (int i = 0; i < 6; i++)
        t[i] = (unsigned char)((uint64_t)when >> (8 * i));
    memcpy(t + 6, &slot, sizeof slot);
}

/* A timed table's record's deadline, -1 when it has none. */
static inline int64_t hrec_deadline(const hrec *r)
{
    const unsigned char *t = hrec_trailer(r);
    return trailer_slot(t) == GB_HREC_NO_SLOT ? -1 : trailer_deadline(t);
}

/* hash.c: a record's field lookup, and setting a field's value keeping its
 * trailer (creating it without a deadline); returns the record. */
hrec *gb_hbig_find(hbig *b, gb_slice f);
hrec *gb_hbig_put(hbig *b, gb_slice f, gb_slice v, bool *created);
hbig *gb_hbig_new(bool timed);
void gb_hbig_free(hbig *b);
/* Frees records a slice at a time (gb_htable_clear_step); gb_hbig_free ends it. */
bool gb_hbig_clear_step(hbig *b, uint64_t *cursor, size_t max_nodes);

/* hash_ttl.c: the deadline heap of a timed table. */
void gb_hbig_set_deadline(hbig *b, hrec *r, int64_t when_ms);
bool gb_hbig_clear_deadline(hbig *b, hrec *r);
/* A record moved (realloc): its heap slot points to it again. */
void gb_hbig_moved(hbig *b, hrec *r);

#endif
