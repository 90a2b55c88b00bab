/*
 * A stream node: a run of consecutive stream entries packed in one block,
 * with field names shared through the node's master field list (the
 * design Redis documents for its stream listpacks), in a denser encoding
 * of its own.
 *
 * Layout (one allocation; integers in the header are native, the rest is
 * bytes):
 *
 *   offset size  field
 *   0      4     used       bytes in use, this header included
 *   4      4     live       entries not deleted
 *   8      4     deleted    entries flagged deleted (kept as tombstones)
 *   12     4     lp_rest    bytes Redis's listpack for the same entries would
 *                           take, less its 7-byte frame and its two counters
 *                           (see "node boundaries" below)
 *   16     16    last       ID of the node's last entry, deleted or not:
 *                           the base of the next entry's delta
 *   32     ...   master     varint n, then n field names (values, below)
 *   ...    ...   entries    one after another, oldest first
 *
 * The node's first entry has the node's key as its ID (the "master ID",
 * held by the stream's radix tree, not here).
 *
 * Entry:
 *   u8 flags    bit 0 deleted, bit 1 same fields as the master list,
 *               bits 2-3 how the ID follows the previous entry's (P):
 *                 0: P.ms, P.seq + 1                 (nothing follows)
 *                 1: P.ms, P.seq + 2 + varint d
 *                 2: P.ms + 1 + varint d, 0
 *                 3: P.ms + 1 + varint d, varint seq
 *               (the first entry's ID is the master ID: form 0, no bytes)
 *               bit 4 (with bits 2-3 zero): the ID is not above P and
 *                 follows whole, varint ms, varint seq. Only live entries
 *                 are in ascending order: XSETID may set the last ID below
 *                 a deleted entry, and the next XADD lands after that
 *                 tombstone (as in Redis, whose deltas are signed)
 *   [varint n]  field count, only without the same-fields bit
 *   values      same fields: n values; else n (field, value) pairs
 *
 * Value (fields too): varint tag; an even tag is a string of tag/2 bytes
 * that follow; an odd tag is an integer, zigzag(v) = tag/2, for strings
 * that are the canonical decimal form of an int64 within +-2^61 (they read
 * back as the same text). A small number costs one byte, "v1" three.
 *
 * Compared with Redis's listpack entry (flags, ms delta, seq delta, values,
 * back count, each with its own back-length byte) an entry of three small
 * values is about half the size. Reverse walks do not read backwards: the
 * stream iterator replays a node forward in chunks (engine/ds/stream.c).
 *
 * Node boundaries: XADD starts a new node exactly where Redis 7.0 would
 * (the node's listpack size plus the new entry's field and value bytes
 * reaching stream-node-max-bytes, or stream-node-max-entries entries), so
 * approximate trimming (MAXLEN ~, MINID ~), which removes whole nodes,
 * leaves the same entries as Redis, and XINFO's radix-tree counts match.
 * lp_rest keeps the listpack size without re-encoding anything.
 *
 * Deleting an entry sets its flag in place; XDEL removes a node whose
 * last live entry it deletes (exact trimming inside a node may leave one
 * with none, as Redis does).
 */
#ifndef GB_ENGINE_DS_STREAM_NODE_H
#define GB_ENGINE_DS_STREAM_NODE_H

#include "engine/ds/stream_id.h"

typedef struct gb_snode {
    uint32_t used;
    uint32_t live;
    uint32_t deleted;
    uint32_t lp_rest;
    uint64_t last_ms, last_seq;
    uint8_t data[];
} gb_snode;

_Static_assert(sizeof(gb_snode) == 32, "stream node header is 32 bytes");

#define GB_SNODE_DELETED 0x01u
#define GB_SNODE_SAMEFIELDS 0x02u
#define GB_SNODE_INT_BUF 24

/* A node holding one entry (id, nfields field/value pairs in fv), whose
 * fields become the master list. */
gb_snode *gb_snode_new(gb_stream_id id, const gb_slice *fv, size_t nfields);
/* Appends an entry whose id is greater than the node's last; returns the
 * node (it may move). master is the node's key. */
gb_snode *gb_snode_append(gb_snode *n, gb_stream_id master, gb_stream_id id, const gb_slice *fv, size_t nfields);
/* Gives back the allocation's slack (a node that will take no more entries). */
gb_snode *gb_snode_shrink(gb_snode *n);
void gb_snode_free(gb_snode *n);
gb_snode *gb_snode_dup(const gb_snode *n);

static inline uint64_t gb_snode_entries(const gb_snode *n) { return (uint64_t)n->live + n->deleted; }
static inline gb_stream_id gb_snode_last(const gb_snode *n) { return gb_stream_id_make(n->last_ms, n->last_seq); }

/* The bytes of Redis's listpack holding the same entries (lpBytes). */
size_t gb_snode_lp_bytes(const gb_snode *n);
/* The listpack bytes one int64 or one string takes (Redis's encoding). */
size_t gb_lp_redis_int_size(int64_t v);
size_t gb_lp_redis_str_size(gb_slice s);

/* ---- reading entries ---- */

typedef struct gb_snode_entry {
    gb_stream_id id;
    uint8_t flags;
    uint32_t nfields;
    uint32_t at;     /* offset of the flags byte */
    uint32_t fields; /* offset of the first value (or field) */
} gb_snode_entry;

/* A forward cursor over a node's entries, deleted ones included. It is
 * plain data: a copy taken at one entry resumes from there. */
typedef struct gb_snode_cursor {
    const gb_snode *node;
    gb_stream_id master;
    uint32_t master_n;   /* master field count */
    uint32_t master_at;  /* offset of the first master field */
    uint32_t pos;        /* offset of the next entry */
    uint32_t index;      /* entries passed */
    gb_snode_entry e;    /* the current entry (after a successful next) */
} gb_snode_cursor;

void gb_snode_cursor_init(gb_snode_cursor *c, const gb_snode *n, gb_stream_id master);
/* Steps to the next entry; false past the last. */
bool gb_snode_cursor_next(gb_snode_cursor *c);

/* The field/value pairs of the cursor's current entry. Slices point into
 * the node or into the pairs' buffers (integers), valid until the next
 * gb_snode_pairs_next. */
typedef struct gb_snode_pairs {
    const uint8_t *mp; /* next master field (same-fields entries) */
    const uint8_t *p;  /* next byte of the entry */
    bool same;
    uint32_t left;
    char fbuf[GB_SNODE_INT_BUF], vbuf[GB_SNODE_INT_BUF];
} gb_snode_pairs;

void gb_snode_pairs_init(gb_snode_pairs *pp, const gb_snode_cursor *c);
bool gb_snode_pairs_next(gb_snode_pairs *pp, gb_slice *field, gb_slice *value);

/* Flags the cursor's current entry deleted and updates the counters. */
void gb_snode_delete(gb_snode *n, const gb_snode_entry *e);

/* ---- untrusted bytes (a snapshot) ----
 *
 * A snapshot stores a node as its bytes after the header (n->data,
 * n->used - 32 of them); the header is derived from them again. */

/* Builds a node from such bytes read from outside, checking everything
 * before anything relies on it: every length within the block, varints
 * well formed, at least one entry (all may be deleted: trimming inside a
 * node can leave it so, as in Redis), IDs strictly
 * increasing from master without overflow (or given whole, not above
 * the previous one), live entries ascending, the field counts of
 * same-fields entries. *why says what is wrong when it returns NULL. */
gb_snode *gb_snode_from_bytes(const uint8_t *bytes, size_t len, gb_stream_id master, const char **why);

#endif
