/*
 * The sorted-set type's typed key operations (see engine/types/t_list.h for
 * what a typed key operation does and does not do, and how they are named).
 * A missing key reads as an empty sorted set; an emptied one's key is
 * deleted. Elements stream to sink->scored (member, score).
 */
#ifndef GB_ENGINE_TYPES_T_ZSET_H
#define GB_ENGINE_TYPES_T_ZSET_H

#include "engine/base/score.h"
#include "engine/types/result.h"
#include "engine/types/tobj.h"

/* ---- ZADD / ZINCRBY ---- */

/* ZADD with native scores. flags: GB_ZADD_NX, XX, GT, LT, INCR and CH
 * (engine/ds/zset.h; the same bits as the SBE ZAddFlags). CH changes nothing
 * here: a caller that got CH replies res->added + res->updated.
 *
 * res (engine/ds/zset.h's gb_zadd_result) receives:
 *   added      members created
 *   updated    existing members whose score changed
 *   processed  pairs not skipped by NX/XX/GT/LT (0 with XX on a missing key)
 *   score      the last pair's resulting score: with INCR, the reply when
 *              processed > 0 (nil otherwise)
 *
 * Returns GB_R_SYNTAX for a flag combination Redis rejects (NX with XX; GT,
 * LT or NX together; INCR with n != 1) before touching anything -- the RESP
 * layer checks those first with Redis's own texts; GB_R_WRONGTYPE;
 * GB_R_NAN when a score is NaN or an INCR yields NaN (Redis's text: "ERR
 * resulting score is not a number (NaN)"; pairs before it stay applied).
 * A missing key is created (unless XX), as a listpack or btree by Redis
 * 7.0's rule (the first member's length), and deleted again if it ends up
 * empty. */
gb_result gb_zset_zadd(gb_db *db, gb_slice key, int flags, size_t n, const double *scores, const gb_slice *members,
                       gb_zadd_result *res);

/* ---- lookups ---- */

/* ZSCORE: GB_R_NOTFOUND when the key or the member is missing. */
gb_result gb_zset_zscore(gb_db *db, gb_slice key, gb_slice member, double *out);
/* ZMSCORE: sink->len(n), then for each member sink->scored or
 * sink->missing. */
gb_result gb_zset_zmscore(gb_db *db, gb_slice key, size_t n, const gb_slice *members, const gb_sink *sink);
/* ZCARD, ZCOUNT, ZLEXCOUNT: 0 for a missing key. */
gb_result gb_zset_zcard(gb_db *db, gb_slice key, int64_t *card);
gb_result gb_zset_zcount(gb_db *db, gb_slice key, const gb_score_range *range, int64_t *n);
gb_result gb_zset_zlexcount(gb_db *db, gb_slice key, const gb_lex_range *range, int64_t *n);
/* ZRANK/ZREVRANK: 0-based rank and the score. GB_R_NOTFOUND when the key
 * or the member is missing. */
gb_result gb_zset_zrank(gb_db *db, gb_slice key, gb_slice member, bool reverse, int64_t *rank, double *score);

/* ---- ranges ---- */

typedef enum gb_zrange_by { GB_ZRANGE_RANK, GB_ZRANGE_SCORE, GB_ZRANGE_LEX } gb_zrange_by;

/* A range of ZRANGE & co, ZRANGESTORE and ZREMRANGEBY*. */
typedef struct gb_zrange {
    gb_zrange_by by;
    bool rev;                  /* from the high end (not for removals) */
    int64_t start, stop;       /* GB_ZRANGE_RANK: Redis's index rules */
    gb_score_range score;      /* GB_ZRANGE_SCORE: the real min and max */
    gb_lex_range lex;          /* GB_ZRANGE_LEX: the real min and max */
    int64_t offset, limit;     /* LIMIT of score and lex ranges: limit < 0 is none */
} gb_zrange;

/* ZRANGE (ZREVRANGE, ZRANGEBYSCORE, ...): sink->len (the count for a rank
 * range, GB_SINK_LEN_UNKNOWN for the others), then sink->scored for each
 * member in range; *n says how many. GB_R_NOTFOUND: no such key. */
gb_result gb_zset_zrange(gb_db *db, gb_slice key, const gb_zrange *range, const gb_sink *sink, size_t *n);
/* ZRANGESTORE: the range of src replaces whatever dst held (an empty
 * range, or a missing src, deletes dst); *card receives its size. */
gb_result gb_zset_zrangestore(gb_db *db, gb_slice dst, gb_slice src, const gb_zrange *range, int64_t *card);

/* ---- removal ---- */

/* ZREM: *removed says how many of the n members went. */
gb_result gb_zset_zrem(gb_db *db, gb_slice key, size_t n, const gb_slice *members, int64_t *removed);
/* ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX (range->rev unused). */
gb_result gb_zset_zremrange(gb_db *db, gb_slice key, const gb_zrange *range, int64_t *removed);
/* ZPOPMIN/ZPOPMAX (max): removes min(count, size) members from that end:
 * sink->len how many (0 for count 0, which changes nothing), then
 * sink->scored each. GB_R_NOTFOUND: no such key. */
gb_result gb_zset_zpopmin(gb_db *db, gb_slice key, bool max, size_t count, const gb_sink *sink);
/* ZMPOP, BZMPOP, BZPOPMIN, BZPOPMAX: gb_zset_zpopmin on the first of keys
 * that holds a sorted set; *which (its index in keys) is set before
 * sink->len. GB_R_NOTFOUND when none does; GB_R_WRONGTYPE at a key of
 * another type met before any sorted set. */
gb_result gb_zset_zmpop(gb_db *db, size_t nkeys, const gb_slice *keys, bool max, size_t count, const gb_sink *sink,
                        size_t *which);

/* ZRANDMEMBER: count > 0 picks min(count, size) distinct members, count < 0
 * picks -count that may repeat: sink->len(how many), then sink->scored for
 * each. GB_R_NOTFOUND: no such key. */
gb_result gb_zset_zrandmember(gb_db *db, gb_slice key, int64_t count, const gb_sink *sink);

/* ---- algebra ----
 * The keys are looked up in order, for reading; a plain set counts as a
 * sorted set whose scores are 1, a missing key as an empty one, and the
 * first key of another type is GB_R_WRONGTYPE. Redis looks every key up
 * before parsing the options: opts NULL (the caller's options did not
 * parse) is GB_R_BADARG once the keys passed their checks. */

typedef enum gb_zsetop { GB_ZSETOP_UNION, GB_ZSETOP_INTER, GB_ZSETOP_DIFF } gb_zsetop;

typedef struct gb_zsetop_opts {
    const double *weights; /* one per key, or NULL for 1 each (ZDIFF ignores them) */
    gb_zagg agg;
} gb_zsetop_opts;

/* ZUNION, ZINTER, ZDIFF (op): sink->len(the result's size), then
 * sink->scored for each member in order. */
gb_result gb_zset_zunion(gb_db *db, gb_zsetop op, size_t nkeys, const gb_slice *keys, const gb_zsetop_opts *opts,
                         const gb_sink *sink);
/* ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE (op): the result replaces whatever
 * dst held (an empty result deletes dst); *card receives its size. */
gb_result gb_zset_zunionstore(gb_db *db, gb_zsetop op, gb_slice dst, size_t nkeys, const gb_slice *keys,
                              const gb_zsetop_opts *opts, int64_t *card);
/* ZINTERCARD: the intersection's size, counting stops at *limit (0: none);
 * limit NULL as opts NULL above. */
gb_result gb_zset_zintercard(gb_db *db, size_t nkeys, const gb_slice *keys, const size_t *limit, int64_t *card);

#endif
