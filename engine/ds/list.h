/*
 * gb_list: the one list type behind LPUSH ... BLMPOP.
 *
 * A list picks its own representation (docs/lists.md):
 *
 *   compact    one listpack (engine/ds/listpack.h) while the list is small;
 *              OBJECT ENCODING "listpack" (engine/ds/list_compact.c)
 *   segmented  bounded listpack-encoded leaves plus a leaf index with
 *              per-leaf start positions: O(log n) to any index, O(1) at the
 *              ends; OBJECT ENCODING "segmented" (engine/ds/list_segmented.c)
 *   pma        an adaptive packed-memory array of 16-byte slots with a count
 *              tree over its segments; OBJECT ENCODING "pma"
 *              (engine/ds/list_pma.c). Redis would say "quicklist" for its large
 *              list; Goblin names the large representation it really uses.
 *
 * A compact list converts to the configured large representation when a
 * mutation would take it past list-max-listpack-size, and a large list
 * converts back once it is at most half that limit (hysteresis: push/pop at
 * the boundary does not flip representations every command).
 *
 * Values go in as gb_slice and come out as gb_slice. A returned or emitted
 * slice borrows the list's storage (or a small buffer on the stack when the
 * entry is stored as an integer) and is valid only until the callback
 * returns / the next mutation of that list: copy it if you keep it. Indexes
 * are 0-based; negative indexes count from the tail (-1 = last), as in Redis.
 *
 * Nothing here allocates per element on the push/pop paths beyond the
 * representation's own storage; all memory goes through engine/base/mem.h.
 */
#ifndef GB_ENGINE_LIST_H
#define GB_ENGINE_LIST_H

#include "engine/base/common.h"

typedef struct gb_list gb_list;

/* The large representation a server uses (--list-implementation). */
typedef enum gb_list_impl {
    GB_LIST_SEGMENTED = 0,
    GB_LIST_PMA = 1,
} gb_list_impl;

/* What a given list currently is. */
typedef enum gb_list_encoding {
    GB_LIST_ENC_COMPACT = 0,
    GB_LIST_ENC_SEGMENTED = 1,
    GB_LIST_ENC_PMA = 2,
} gb_list_encoding;

typedef enum gb_list_end {
    GB_LIST_HEAD = 0, /* LEFT */
    GB_LIST_TAIL = 1, /* RIGHT */
} gb_list_end;

/* Copied into each list at creation (as Redis copies `fill` into a
 * quicklist): changing the server's config affects lists created later.
 *   max_listpack_size: Redis's list-max-listpack-size. N > 0: at most N
 *     entries (and at most 8 KiB) per compact list / segmented leaf; 0 is
 *     treated as 1; -1..-5: at most 4/8/16/32/64 KiB; below -5 means -5.
 *   large_impl: representation a list converts to when it outgrows compact;
 *     a list that is already large keeps its representation until it
 *     shrinks back to compact. */
typedef struct gb_list_config {
    int max_listpack_size;
    gb_list_impl large_impl;
    /* list-compress-depth: 0 = off; N: the N segments at each end of a large
     * list stay plain, the interior ones are stored LZF-compressed. Values
     * past 65535 act as 65535 (Redis's quicklist keeps 16 bits). */
    int compress_depth;
} gb_list_config;

#define GB_LIST_DEFAULT_MAX_LISTPACK_SIZE (-2)
#define GB_LIST_CONFIG_DEFAULT {GB_LIST_DEFAULT_MAX_LISTPACK_SIZE, GB_LIST_SEGMENTED, 0}

/* Receives one value. The slice is valid only during the call. */
typedef void (*gb_list_emit_fn)(void *ctx, gb_slice v);
/* Receives one value with its 0-based index; return false to stop. */
typedef bool (*gb_list_visit_fn)(void *ctx, size_t index, gb_slice v);
/* Receives one matching index (LPOS). */
typedef void (*gb_list_pos_fn)(void *ctx, size_t index);

/* Buffer for rendering an integer-encoded entry (gb_list_index). */
#define GB_LIST_INT_BUF 24

/* ---- lifetime ---- */

/* An empty compact list (cfg NULL = GB_LIST_CONFIG_DEFAULT). Empty lists are
 * legal; the keyspace deletes a key whose list became empty. */
gb_list *gb_list_new(const gb_list_config *cfg);
/* A list made from an untrusted listpack (a snapshot's), taking ownership
 * of lp (gb_malloc'd). NULL (lp freed, *why set) when it is damaged or
 * empty. Past the compact limit of cfg it takes the large representation. */
gb_list *gb_list_from_listpack(const gb_list_config *cfg, unsigned char *lp, size_t size, const char **why);
/* The listpack of a compact list, or NULL: what a snapshot stores as is. */
const unsigned char *gb_list_listpack(const gb_list *l);
void gb_list_free(gb_list *l);

/* ---- size & introspection ---- */

size_t gb_list_len(const gb_list *l);
gb_list_encoding gb_list_encoding_of(const gb_list *l);
/* OBJECT ENCODING, in Redis 7.0's word for every list: "quicklist" (7.0
 * has no listpack lists; clients and tests compare it with Redis's). */
const char *gb_list_encoding_name(const gb_list *l);
/* The representation itself: "listpack", "segmented" or "pma" (DEBUG
 * OBJECT's representation field). */
const char *gb_list_representation_name(const gb_list *l);
/* The settings the list was created with (COPY gives the copy the same, as
 * Redis's quicklistDup keeps the source's fill). */
gb_list_config gb_list_config_of(const gb_list *l);
/* Bytes held for this list (struct + every block, by gb_mem_usable). */
size_t gb_list_mem_usage(const gb_list *l);
/* Segments (leaves of a segmented list) stored compressed right now per
 * list-compress-depth (DEBUG OBJECT, tests); 0 for the other
 * representations. */
size_t gb_list_compressed_segments(const gb_list *l);
/* The work freeing the list takes, in Redis's terms (lazy freeing hands
 * a list over past 64): 1 for a compact list, its leaves for a segmented
 * one (Redis counts a quicklist's nodes, which its leaves mirror: the same
 * list-max-listpack-size bounds them), its values for a pma (slots with a
 * block of their own are only known by walking them all). */
size_t gb_list_free_effort(const gb_list *l);
/* Structural self-check of the current representation, for tests. On failure
 * prints what is wrong to stderr and returns false. */
bool gb_list_verify(const gb_list *l);

/* ---- ends ---- */

/* Pushes vals[0..n) one after another at `end` and returns the new length:
 * LPUSH k a b c == gb_list_push(l, GB_LIST_HEAD, {a,b,c}, 3) leaves c first. */
size_t gb_list_push(gb_list *l, gb_list_end end, const gb_slice *vals, size_t n);

/* Removes up to `count` values from `end` as one range mutation and returns
 * how many were removed (min(count, len)). Each value goes to emit (in pop
 * order: head-first for GB_LIST_HEAD, tail-first for GB_LIST_TAIL) before its
 * storage is released; emit may be NULL (discard). The caller knows the
 * count up front: min(count, gb_list_len(l)). */
size_t gb_list_pop(gb_list *l, gb_list_end end, size_t count, gb_list_emit_fn emit, void *ctx);

/* LMOVE/RPOPLPUSH: moves one value from `from` of src to `to` of dst and
 * emits it (as stored in dst). src == dst works (rotation; with from == to
 * the list is unchanged and the end value is emitted). dst must exist (create
 * an empty one for a missing key). Returns false if src is empty. */
bool gb_list_move(gb_list *src, gb_list_end from, gb_list *dst, gb_list_end to,
                  gb_list_emit_fn emit, void *ctx);

/* ---- by index ---- */

/* LINDEX: *out = the value at index (negative from the tail); integer entries
 * are rendered into buf. Returns false when out of range. Does not change
 * the list's contents (l is not const: lookups may refresh an access hint). */
bool gb_list_index(gb_list *l, long long index, char buf[GB_LIST_INT_BUF], gb_slice *out);

/* LSET: returns false (list unchanged) when index is out of range. */
bool gb_list_set(gb_list *l, long long index, gb_slice v);

/* LRANGE: visits the values whose indexes lie in [start, stop] after Redis's
 * normalisation (negative from the tail, clamped; empty when start > stop or
 * start >= len), head to tail, or tail to head with reverse. Stops early when
 * visit returns false. Returns the number of values visited. */
size_t gb_list_range(gb_list *l, long long start, long long stop, bool reverse,
                     gb_list_visit_fn visit, void *ctx);
/* Number of values LRANGE start stop returns (for the reply header). */
size_t gb_list_range_len(const gb_list *l, long long start, long long stop);

/* ---- edits ---- */

/* LTRIM: keeps [start, stop] (Redis normalisation); an empty range empties
 * the list. */
void gb_list_trim(gb_list *l, long long start, long long stop);

/* LREM: removes values equal to v: count > 0 the first count from the head,
 * count < 0 the first |count| from the tail, count == 0 all. Returns the
 * number removed. */
size_t gb_list_remove(gb_list *l, gb_slice v, long long count);

/* LINSERT: inserts v before (after == false) or after the first value equal
 * to pivot. Returns the new length, or -1 when pivot is absent (list
 * unchanged). */
long long gb_list_insert(gb_list *l, bool after, gb_slice pivot, gb_slice v);

/* LPOS: reports indexes of values equal to v. rank != 0: rank > 0 skips the
 * first rank-1 matches scanning from the head; rank < 0 scans from the tail
 * and skips |rank|-1. count: stop after that many matches (0 = all). maxlen:
 * compare at most that many values from the scan's start (0 = all). Indexes
 * are reported head-based, in scan order. Returns the number reported. */
size_t gb_list_pos(gb_list *l, gb_slice v, long long rank, size_t count, size_t maxlen,
                   gb_list_pos_fn found, void *ctx);

#endif
