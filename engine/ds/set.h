/*
 * t_set: the set value object. One type, three representations, chosen and
 * changed by the object itself (Redis 7.2 rules):
 *
 *   intset     all members are canonical decimal int64s ("12", "-3"; not
 *              "012", "+1", "-0") and there are at most
 *              set-max-intset-entries of them: a sorted integer array
 *              (engine/ds/intset.h), O(log n) lookup.
 *   listpack   at most set-max-listpack-entries members, none longer than
 *              set-max-listpack-value bytes: one contiguous block, members
 *              in insertion order, O(n) lookup.
 *   hashtable  otherwise: an htable of one-allocation records.
 *
 * Conversions go one way (intset -> listpack -> hashtable, or intset ->
 * hashtable when the intset itself overflows); removing members never
 * converts back, as in Redis. OBJECT ENCODING reports "intset", "listpack"
 * or "hashtable".
 *
 * hashtable record (one malloc block per member):
 *
 *   offset  size   field
 *   0       8      next    htable chain link (gb_hnode)
 *   8       1..5   len     member length, varint (LEB128; 1 byte below 128)
 *   9..     len    member bytes
 *
 * A 10-byte member takes 19 bytes: one 24-byte-usable malloc chunk (32 with
 * glibc's header), plus 8-16 bytes of bucket array.
 *
 * Thresholds are read from the gb_types_config passed to each call that can
 * grow the set, so CONFIG SET takes effect on the next insert.
 */
#ifndef GB_ENGINE_T_SET_H
#define GB_ENGINE_T_SET_H

#include "engine/base/common.h"
#include "engine/ds/collection.h"

typedef enum gb_set_enc {
    GB_SET_INTSET = 0,
    GB_SET_LISTPACK,
    GB_SET_HASHTABLE,
} gb_set_enc;

/* 16 bytes; the fields are private to t_set.c. */
typedef struct gb_set {
    uint8_t enc;
    uint8_t pad[7];
    void *p; /* gb_intset *, listpack, or the hashtable's struct */
} gb_set;

/* Receives one member. The bytes are valid only during the call. */
typedef void (*gb_set_emit_fn)(void *ctx, gb_slice member);

/* An empty set (intset encoding), for results built by adding. */
gb_set *gb_set_new(void);
/* Sets made from untrusted bytes (a snapshot's), taking ownership of them
 * (gb_malloc'd): a listpack of members, or an intset (8-byte header: width
 * 2, 4 or 8, count; then the values, strictly ascending). NULL (the bytes
 * freed, *why set) when they are not one: damaged, empty, a member twice,
 * out of order. Past the thresholds they take the larger encoding. */
gb_set *gb_set_from_listpack(unsigned char *lp, size_t size, const gb_types_config *cfg, const char **why);
gb_set *gb_set_from_intset(void *bytes, size_t size, const gb_types_config *cfg, const char **why);
/* The listpack or intset (its header and values: gb_set_intset_bytes
 * long) of a set in that encoding, or NULL. */
static inline const unsigned char *gb_set_listpack(const gb_set *s)
{
    return s->enc == GB_SET_LISTPACK ? (const unsigned char *)s->p : NULL;
}
static inline const void *gb_set_intset(const gb_set *s) { return s->enc == GB_SET_INTSET ? s->p : NULL; }
size_t gb_set_intset_bytes(const gb_set *s);
/* A set about to receive `first` and size_hint - 1 more members (SADD):
 * intset if first is an integer and size_hint <= set-max-intset-entries,
 * else listpack if size_hint <= set-max-listpack-entries, else hashtable. */
gb_set *gb_set_new_for(const gb_types_config *cfg, gb_slice first, size_t size_hint);
void gb_set_free(gb_set *s);
/* Frees the representation only, for a header the caller owns (the
 * command layer keeps headers on the stack; see engine/commands/cmd_collection.h). */
void gb_set_release(gb_set *s);
/* gb_set_release a slice at a time (engine/core/memory/sliced_free.h): frees
 * about max_nodes elements of a large encoding per call, resuming at
 * *cursor (0 to start); true once the representation is gone, as after
 * gb_set_release. A compact encoding goes in one call. */
bool gb_set_release_step(gb_set *s, uint64_t *cursor, size_t max_nodes);
gb_set *gb_set_dup(const gb_set *s);

static inline gb_set_enc gb_set_encoding(const gb_set *s) { return (gb_set_enc)s->enc; }
const char *gb_set_encoding_name(const gb_set *s);
size_t gb_set_card(const gb_set *s);
/* Bytes held (blocks, records, buckets), as allocated: the 16-byte header
 * not counted (the keyspace holds none, engine/commands/cmd_collection.h). */
size_t gb_set_payload_mem(const gb_set *s);

/* Adds m; returns true when it was not a member. */
bool gb_set_add(gb_set *s, const gb_types_config *cfg, gb_slice m);
/* Adds n members; returns how many were new (SADD's reply). */
size_t gb_set_add_many(gb_set *s, const gb_types_config *cfg, size_t n, const gb_slice *m);
/* Removes m; returns true when it was a member. */
bool gb_set_remove(gb_set *s, gb_slice m);
size_t gb_set_remove_many(gb_set *s, size_t n, const gb_slice *m);
bool gb_set_ismember(const gb_set *s, gb_slice m);

/* Every member: intset ascending, listpack insertion order, hashtable in
 * bucket order (SMEMBERS). */
void gb_set_members(const gb_set *s, gb_set_emit_fn emit, void *ctx);

/* SPOP count (count >= 1): removes and emits min(count, card) random
 * members; returns how many. When count >= card the set is left empty (the
 * caller deletes the key). When few members would remain, the remaining
 * ones are rebuilt into a fresh object (its encoding chosen anew, as
 * Redis's SPOP does). */
size_t gb_set_pop(gb_set *s, const gb_types_config *cfg, size_t count, gb_set_emit_fn emit, void *ctx);
/* SRANDMEMBER with a count: count > 0 emits min(count, card) distinct
 * members (all of them, in members order, when count >= card); count < 0
 * emits -count members that may repeat. */
void gb_set_random(const gb_set *s, int64_t count, gb_set_emit_fn emit, void *ctx);

/* SMOVE's data part: src == dst answers membership; otherwise removes m from
 * src and adds it to dst. Returns true when m was in src. The caller deletes
 * src when it became empty and creates dst (gb_set_new_for(cfg, m, 1)). */
bool gb_set_move(gb_set *src, gb_set *dst, const gb_types_config *cfg, gb_slice m);

/* SSCAN: emits a batch and returns the next cursor (0: done). intset and
 * listpack sets emit everything at once and return 0, as Redis does. */
uint64_t gb_set_scan(gb_set *s, uint64_t cursor, gb_set_emit_fn emit, void *ctx);

/* ---- algebra (SINTER/SUNION/SDIFF and their STORE/CARD forms) ----
 * sets[i] == NULL stands for a missing key (an empty set). The same object
 * may appear more than once. */

/* Emits the intersection in Redis's order (the smallest input's order;
 * inputs sorted by size, ties kept in argument order) and returns its size.
 * limit > 0 stops after that many (SINTERCARD LIMIT); emit may be NULL. */
size_t gb_set_inter(const gb_set *const *sets, size_t n, size_t limit, gb_set_emit_fn emit, void *ctx);
/* New sets built by adding to an empty intset, so their encoding follows the
 * usual growth rules (SUNIONSTORE/SDIFFSTORE store them; SUNION/SDIFF reply
 * with their members). Never NULL; possibly empty. */
gb_set *gb_set_union(const gb_set *const *sets, size_t n, const gb_types_config *cfg);
gb_set *gb_set_diff(const gb_set *const *sets, size_t n, const gb_types_config *cfg);

/* Structural check for tests: encoding invariants and thresholds-independent
 * consistency (intset sorted, listpack valid and duplicate-free, records
 * reachable). */
bool gb_set_verify(const gb_set *s);

#endif
