/*
 * t_zset: the sorted-set value object. One type, two representations,
 * chosen and changed by the object itself:
 *
 *   listpack   at most zset-max-listpack-entries members, none longer than
 *              zset-max-listpack-value bytes: one block of
 *              member, score, member, score, ... sorted by (score, member).
 *   btree      otherwise: an order-statistic B+tree of (score, member key)
 *              (engine/ds/zset_tree.h) plus an htable member -> record. Reported
 *              by OBJECT ENCODING as "btree" (Redis says "skiplist" for its
 *              large encoding; ours is not a skiplist, so it says so).
 *
 * A set converts listpack -> btree when an insert would cross a threshold
 * and never converts back on its own, as in Redis;
 * gb_zset_convert_if_fits() is the explicit way back (Redis does it for
 * ZUNIONSTORE/ZINTERSTORE/ZDIFFSTORE results).
 *
 * Scores in the listpack (see docs/types.md): an integral score that fits
 * an int64 (and is not -0) is stored as a listpack integer (1-9 bytes);
 * any other score as its 8 raw IEEE-754 bytes in a string entry (10 bytes),
 * or 9 bytes when those 8 happen to spell a canonical decimal integer.
 * Reading a score is a memcpy, never strtod.
 *
 * btree record (one malloc block per member, shared by both halves):
 *
 *   offset  size   field
 *   0       8      next    htable chain link (gb_hnode)
 *   8       8      score   double (ZSCORE reads it here: one lookup)
 *   16      1..5   len     member length, varint
 *   17..    len    member bytes
 *
 * The tree's entries point at offset 16 (the member key), so a member's
 * bytes exist once. A 10-byte member: 27 bytes -> 40-byte chunk.
 *
 * The operations are typed for both the RESP handlers and the binary
 * protocol: scores are doubles, members are byte slices, results are
 * counts or (member, score) pairs handed to a callback. Member slices handed
 * to callbacks are valid only during the call.
 */
#ifndef GB_ENGINE_T_ZSET_H
#define GB_ENGINE_T_ZSET_H

#include "engine/base/common.h"
#include "engine/base/score.h"
#include "engine/ds/set.h"
#include "engine/ds/collection.h"

typedef enum gb_zset_enc {
    GB_ZSET_LISTPACK = 0,
    GB_ZSET_BTREE,
} gb_zset_enc;

/* 16 bytes; the fields are private to t_zset.c. */
typedef struct gb_zset {
    uint8_t enc;
    uint8_t pad[7];
    void *p; /* listpack, or the btree + htable struct */
} gb_zset;

typedef void (*gb_zset_emit_fn)(void *ctx, gb_slice member, double score);

/* A set about to receive size_hint members, the longest maxlen_hint bytes:
 * listpack when both fit the thresholds, else btree (Redis's
 * zsetTypeCreate). ZADD on a new key passes (1, length of its first member)
 * to match redis-server 7.0, which only looks at the first member. */
gb_zset *gb_zset_new(const gb_types_config *cfg, size_t size_hint, size_t maxlen_hint);
/* A sorted set made from an untrusted listpack of member, score pairs in
 * the order this module keeps them (a snapshot's), taking ownership of lp
 * (gb_malloc'd). NULL (lp freed, *why set) when it is not one: damaged,
 * empty, a score that is not one (or NaN), pairs out of (score, member)
 * order, a member twice. Past the thresholds it becomes a tree. */
gb_zset *gb_zset_from_listpack(unsigned char *lp, size_t size, const gb_types_config *cfg, const char **why);
/* The listpack of a listpack-encoded sorted set, or NULL. */
static inline const unsigned char *gb_zset_listpack(const gb_zset *z)
{
    return z->enc == GB_ZSET_LISTPACK ? (const unsigned char *)z->p : NULL;
}
void gb_zset_free(gb_zset *z);
/* Frees the representation only, for a header the caller owns (the
 * command layer keeps headers on the stack; see engine/commands/cmd_collection.h). */
void gb_zset_release(gb_zset *z);
/* gb_zset_release a slice at a time (engine/core/memory/sliced_free.h): frees
 * about max_nodes elements of a large encoding per call, resuming at
 * *cursor (0 to start); true once the representation is gone, as after
 * gb_zset_release. A compact encoding goes in one call. */
bool gb_zset_release_step(gb_zset *z, uint64_t *cursor, size_t max_nodes);
gb_zset *gb_zset_dup(const gb_zset *z);

static inline gb_zset_enc gb_zset_encoding(const gb_zset *z) { return (gb_zset_enc)z->enc; }
const char *gb_zset_encoding_name(const gb_zset *z);
size_t gb_zset_card(const gb_zset *z);
/* Bytes held (listpack or nodes + records + buckets), as allocated: the 16-byte header
 * not counted (the keyspace holds none, engine/commands/cmd_collection.h). */
size_t gb_zset_payload_mem(const gb_zset *z);

/* ---- ZADD / ZINCRBY ---- */

#define GB_ZADD_NX 0x01   /* only add new members */
#define GB_ZADD_XX 0x02   /* only update existing members */
#define GB_ZADD_GT 0x04   /* update only when the new score is greater */
#define GB_ZADD_LT 0x08   /* update only when the new score is less */
#define GB_ZADD_CH 0x10   /* ignored here: tells the caller to reply added + updated */
#define GB_ZADD_INCR 0x20 /* the score is an increment (ZINCRBY, ZADD INCR) */

typedef struct gb_zadd_result {
    size_t added;     /* members created */
    size_t updated;   /* existing members whose score changed */
    size_t processed; /* pairs not skipped by NX/XX/GT/LT */
    double score;     /* the last pair's resulting score (the INCR reply when processed) */
} gb_zadd_result;

/* Applies n (score, member) pairs in order (named as the data structures'
 * other batch inserts, gb_set_add_many and gb_hash_set_many; ZADD on a key
 * is engine/types/t_zset.h's gb_zset_zadd). Returns 0, GB_EINVAL for flag
 * combinations Redis rejects (NX with XX; GT, LT or NX together; INCR with
 * n != 1) before touching anything, or GB_ERANGE when a score is NaN or an
 * increment yields NaN ("ERR resulting score is not a number (NaN)"); pairs
 * before the failing one stay applied, as in Redis. ZADD replies
 * added (+ updated with CH); with INCR it replies score, or nil when
 * processed == 0. */
int gb_zset_add_many(gb_zset *z, const gb_types_config *cfg, int flags, size_t n, const double *scores,
                     const gb_slice *members, gb_zadd_result *res);

/* ZINCRBY: adds incr to member's score (creating it at incr). Returns 0 with
 * the new score, or GB_ERANGE when the sum is NaN (+inf plus -inf). */
int gb_zset_incrby(gb_zset *z, const gb_types_config *cfg, gb_slice member, double incr, double *out);

/* ---- lookups ---- */

bool gb_zset_score(const gb_zset *z, gb_slice member, double *score);
/* ZRANK/ZREVRANK: 0-based rank; false when member is absent. score may be NULL. */
bool gb_zset_rank(const gb_zset *z, gb_slice member, bool reverse, size_t *rank, double *score);
/* ZCOUNT / ZLEXCOUNT. */
size_t gb_zset_count(const gb_zset *z, const gb_score_range *r);
size_t gb_zset_lexcount(const gb_zset *z, const gb_lex_range *r);

/* ---- ranges (emit (member, score) in order; return how many) ----
 * Rank ranges take Redis's start/stop: inclusive, negative counts from the
 * end, clamped. Score/lex ranges take the real min/max (the command layer
 * swaps the arguments of the REV forms) and Redis's LIMIT semantics:
 * offset < 0 yields nothing, limit < 0 means no limit. Reverse walks from
 * the high end. */
size_t gb_zset_range_rank(const gb_zset *z, int64_t start, int64_t stop, bool reverse, gb_zset_emit_fn emit,
                          void *ctx);
size_t gb_zset_range_score(const gb_zset *z, const gb_score_range *r, bool reverse, int64_t offset,
                           int64_t limit, gb_zset_emit_fn emit, void *ctx);
size_t gb_zset_range_lex(const gb_zset *z, const gb_lex_range *r, bool reverse, int64_t offset, int64_t limit,
                         gb_zset_emit_fn emit, void *ctx);

/* A score-ordered walk that reads a member only when asked (geo searches,
 * engine/types/t_geo.c: most entries of a box fail the shape test on their
 * score alone). For each entry with min <= score < max_excl, in order,
 * want(ctx, score) answers GB_ZSCAN_SKIP, GB_ZSCAN_EMIT (then emit(ctx,
 * member, score) follows) or GB_ZSCAN_STOP. */
enum { GB_ZSCAN_SKIP = 0, GB_ZSCAN_EMIT = 1, GB_ZSCAN_STOP = -1 };
typedef int (*gb_zset_want_fn)(void *ctx, double score);
void gb_zset_scan_scores(const gb_zset *z, double min, double max_excl, gb_zset_want_fn want, gb_zset_emit_fn emit,
                         void *ctx);

/* ---- removal ---- */

/* ZREM: returns how many of the n members were removed. */
size_t gb_zset_remove(gb_zset *z, size_t n, const gb_slice *members);
size_t gb_zset_remrange_rank(gb_zset *z, int64_t start, int64_t stop);
size_t gb_zset_remrange_score(gb_zset *z, const gb_score_range *r);
size_t gb_zset_remrange_lex(gb_zset *z, const gb_lex_range *r);
/* ZPOPMIN/ZPOPMAX (and ZMPOP, BZPOP*): removes up to count members from the
 * low (max == false) or high end, emitting each before it goes. */
size_t gb_zset_pop(gb_zset *z, bool max, size_t count, gb_zset_emit_fn emit, void *ctx);

/* ---- random and scan ---- */

/* ZRANDMEMBER with a count: count > 0 emits min(count, card) distinct
 * members (the whole set in rank order when count >= card); count < 0 emits
 * -count members that may repeat. */
void gb_zset_random(const gb_zset *z, int64_t count, gb_zset_emit_fn emit, void *ctx);
/* ZSCAN: a batch and the next cursor (0: done); listpack sets emit
 * everything at once and return 0. */
uint64_t gb_zset_scan(gb_zset *z, uint64_t cursor, gb_zset_emit_fn emit, void *ctx);

/* ---- algebra: ZUNION/ZINTER/ZDIFF[STORE], ZINTERCARD ---- */

typedef enum gb_zagg { GB_ZAGG_SUM = 0, GB_ZAGG_MIN, GB_ZAGG_MAX } gb_zagg;

/* One input: a sorted set, or a plain set (every member scores 1), or
 * neither (a missing key: empty). weight multiplies the scores (a product
 * that is NaN, e.g. inf * 0, counts as 0). */
typedef struct gb_zsrc {
    const gb_zset *zset;
    const gb_set *set;
    double weight;
} gb_zsrc;

/* Results with Redis's arithmetic (inputs visited smallest first; SUM of
 * +inf and -inf is 0) and encoding (listpack when the result fits the
 * thresholds). Never NULL; possibly empty. ZDIFF ignores weights and takes
 * scores from the first input. */
gb_zset *gb_zset_union(const gb_zsrc *src, size_t n, gb_zagg agg, const gb_types_config *cfg);
gb_zset *gb_zset_inter(const gb_zsrc *src, size_t n, gb_zagg agg, const gb_types_config *cfg);
gb_zset *gb_zset_diff(const gb_zsrc *src, size_t n, const gb_types_config *cfg);
/* ZINTERCARD: size of the intersection, stopping at limit when limit > 0. */
size_t gb_zset_intercard(const gb_zsrc *src, size_t n, size_t limit);

/* Converts a btree set back to listpack when it fits the thresholds. */
void gb_zset_convert_if_fits(gb_zset *z, const gb_types_config *cfg);

/* Structural check for tests (listpack order and validity; tree verify;
 * hash and tree agree). On failure writes a reason. */
bool gb_zset_verify(const gb_zset *z, char *why, size_t whylen);

#endif
