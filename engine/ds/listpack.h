/*
 * listpack: a compact, contiguous sequence of small strings and integers.
 *
 * The small encoding behind lists, hashes (field,value,field,value...), sets
 * of strings and sorted sets (member,score,...). One heap block, no pointers:
 * cheap to allocate, cache-friendly to scan, and O(n) to search, which is why
 * callers convert to a scalable structure past a size threshold.
 *
 * Layout (all integers little-endian):
 *
 *   +-------------+-----------+---------+---------+-----+-----+
 *   | total_bytes | count     | entry 0 | entry 1 | ... | END |
 *   | u32         | u32       |         |         |     | 0xFF|
 *   +-------------+-----------+---------+---------+-----+-----+
 *
 *   entry = <encoding+data> <back-length>
 *     encoding: one tag byte, then the payload (see listpack.c for the table:
 *               7-bit uint, 13-bit int, 16/24/32/64-bit ints, 6/12/32-bit
 *               string lengths). Strings that are the canonical decimal form
 *               of an int64 are stored as integers.
 *     back-length: the size of <encoding+data>, 1 to 5 bytes, written
 *               right-to-left (7 bits per byte, high bit = more), so the list
 *               can be walked backwards from the END byte.
 *
 * Entry handles are pointers into the block; any mutation may move the block
 * (it returns the new pointer) and invalidates every handle except the ones
 * it hands back.
 */
#ifndef GB_ENGINE_LISTPACK_H
#define GB_ENGINE_LISTPACK_H

#include "engine/base/common.h"
#include "engine/base/util.h"

#define GB_LP_HEADER_SIZE 8
#define GB_LP_INT_BUF 24 /* buffer size for rendering an integer entry */

/* A decoded entry: either a string (is_int == false: ptr/len point into the
 * listpack) or an integer (is_int == true: ival). */
typedef struct gb_lp_entry {
    bool is_int;
    int64_t ival;
    const char *ptr;
    size_t len;
} gb_lp_entry;

unsigned char *gb_lp_new(size_t capacity_hint);
void gb_lp_free(unsigned char *lp);
size_t gb_lp_bytes(const unsigned char *lp);
uint32_t gb_lp_count(const unsigned char *lp);

/* Navigation. Each returns NULL past either end. */
unsigned char *gb_lp_first(unsigned char *lp);
unsigned char *gb_lp_last(unsigned char *lp);
unsigned char *gb_lp_next(unsigned char *lp, unsigned char *p);
unsigned char *gb_lp_prev(unsigned char *lp, unsigned char *p);
/* Entry at index (negative counts from the tail, -1 = last), or NULL. */
unsigned char *gb_lp_seek(unsigned char *lp, long index);

/* Decodes the entry at p. */
void gb_lp_get(const unsigned char *p, gb_lp_entry *out);
/* The entry as bytes: integers are rendered into buf (GB_LP_INT_BUF bytes). */
gb_slice gb_lp_get_slice(const unsigned char *p, char *buf);
/* For walks over a collection's keys (every stride-th entry): the entry at
 * p as gb_lp_get_slice gives it, and in *next the entry stride entries on
 * (NULL past the end). One decode and no call per entry skipped. */
gb_slice gb_lp_get_slice_skip(const unsigned char *p, char *buf, unsigned stride, unsigned char **next);
/* Whether the entry at p equals the bytes s (an integer entry equals its
 * canonical decimal form). */
bool gb_lp_eq(const unsigned char *p, gb_slice s);

/* Mutation: each returns the (possibly moved) listpack. */
unsigned char *gb_lp_append(unsigned char *lp, gb_slice s);
unsigned char *gb_lp_prepend(unsigned char *lp, gb_slice s);
unsigned char *gb_lp_append_int(unsigned char *lp, int64_t v);
/* Inserts s before (after == false) or after the entry p; *newp (if not NULL)
 * receives the handle of the inserted entry. p == NULL (or the END byte)
 * inserts at the end. */
unsigned char *gb_lp_insert(unsigned char *lp, unsigned char *p, bool after, gb_slice s,
                            unsigned char **newp);
/* Replaces the entry at *p with s; *p is updated to the new handle. */
unsigned char *gb_lp_replace(unsigned char *lp, unsigned char **p, gb_slice s);
/* Deletes the entry at p; *next (if not NULL) receives the handle of the entry
 * that followed it, or NULL. */
unsigned char *gb_lp_delete(unsigned char *lp, unsigned char *p, unsigned char **next);
/* Deletes `count` entries starting at index (negative counts from the tail). */
unsigned char *gb_lp_delete_range(unsigned char *lp, long index, unsigned long count);

/* Searches from p for an entry equal to s, comparing p, then every
 * (skip+1)-th entry after it (skip = 1 walks the keys of a field/value
 * listpack). Returns the handle or NULL. */
unsigned char *gb_lp_find(unsigned char *lp, unsigned char *p, gb_slice s, unsigned skip);

/* Bytes the listpack would need to hold s as one entry (for size limits). */
size_t gb_lp_entry_size(gb_slice s);

/* Deletes `head` entries from the front and `tail` from the back (LTRIM). */
unsigned char *gb_lp_trim_range(unsigned char *lp, size_t head, size_t tail);

/* Largest string one entry can hold (32-bit length field). */
#define GB_LP_MAX_STRING ((size_t)UINT32_MAX - 16)

/* ---- Entry codec, shared with containers that store listpack entries
 * without the listpack header (list_segmented.c leaves) ---- */

/* Encodes s as one entry (tag, payload, back-length) at dst and returns its
 * size; with dst == NULL only returns the size (== gb_lp_entry_size(s)). */
size_t gb_lp_encode(unsigned char *dst, gb_slice s);
/* Size of the entry at p including its back-length. */
size_t gb_lp_entry_bytes(const unsigned char *p);
/* Size of the entry that ends just before `end` (reads its back-length). */
size_t gb_lp_prev_entry_bytes(const unsigned char *end);

/* Appends `bytes` bytes of already-encoded entries (n of them), e.g. copied
 * from another listpack or a segmented leaf. */
unsigned char *gb_lp_append_raw(unsigned char *lp, const unsigned char *entries, size_t bytes,
                                uint32_t n);

/* A search key prepared once (its integer form parsed) and compared against
 * many entries: what gb_lp_find and gb_lp_eq do internally. */
typedef struct gb_lp_key {
    gb_slice s;
    bool is_int;
    int64_t v;
} gb_lp_key;
void gb_lp_key_init(gb_lp_key *k, gb_slice s);
bool gb_lp_key_eq(const unsigned char *p, const gb_lp_key *k);

/* Canonical decimal <-> int64: str2int accepts exactly what int2str prints
 * ("0123", "+1", "-0", " 1" and out-of-range values are not integers): it is
 * Redis's string2ll, gb_str2ll. int2str writes at most 20 bytes, no NUL, and
 * returns the length. */
static inline bool gb_lp_str2int(const char *s, size_t len, int64_t *out) { return gb_str2ll(s, len, out); }
size_t gb_lp_int2str(int64_t v, char *buf);

/* Structural check of an untrusted listpack (e.g. loaded from a snapshot):
 * every length, back-length and the END byte are consistent with total_bytes.
 * Returns true when the block is safe to walk. */
bool gb_lp_validate(const unsigned char *lp, size_t size);

#endif
