/*
 * Typed key-level operations: what a binary protocol (SBE over the ring)
 * calls with native values, and what the RESP handlers call after parsing
 * text. Each looks the key up (lazily expiring it), checks its type, creates
 * it when the operation creates keys, tells WATCH/blocking machinery, and
 * returns a gb_result; none of them formats a reply.
 *
 * Strings are in engine/t_string.h. Lists, hashes and sorted sets are here.
 */
#ifndef GB_ENGINE_OPS_H
#define GB_ENGINE_OPS_H

#include "engine/db.h"
#include "engine/result.h"

/* ---- lists (engine/cmd_list.c) ---- */

/* LPUSH/RPUSH: *len receives the new length. */
gb_result gb_op_push(gb_db *db, gb_slice key, bool tail, size_t n, const gb_slice *vals, int64_t *len);
/* LPOP/RPOP of one value: emit receives it (valid during the call).
 * GB_R_NOTFOUND when the key is missing. */
gb_result gb_op_pop(gb_db *db, gb_slice key, bool tail, void (*emit)(void *ctx, gb_slice v), void *ctx);

/* ---- hashes (engine/cmd_hash.c) ---- */

/* HSET: *added receives how many fields were new. */
gb_result gb_op_hset(gb_db *db, gb_slice key, size_t n, const gb_slice *fields, const gb_slice *values,
                     int64_t *added);
/* HGET: *out borrows the value (integers rendered into buf, 24 bytes). */
gb_result gb_op_hget(gb_db *db, gb_slice key, gb_slice field, gb_slice *out, char *buf);

/* ---- sorted sets (engine/cmd_zset.c) ---- */

enum {
    GB_ZADD_NX = 1 << 0,
    GB_ZADD_XX = 1 << 1,
    GB_ZADD_GT = 1 << 2,
    GB_ZADD_LT = 1 << 3,
    GB_ZADD_CH = 1 << 4,
    GB_ZADD_INCR = 1 << 5,
};

typedef struct gb_zadd_result {
    int64_t added;      /* new members */
    int64_t changed;    /* new or updated members (what CH reports) */
    bool incr_done;     /* INCR: whether the member was added/updated */
    double incr_score;  /* INCR: the member's new score */
} gb_zadd_result;

/* ZADD with native scores. GB_R_SYNTAX for an invalid flag combination
 * (NX with XX, GT/LT with NX, INCR with n != 1), GB_R_NAN when an INCR would
 * produce NaN. */
gb_result gb_op_zadd(gb_db *db, gb_slice key, int flags, size_t n, const double *scores, const gb_slice *members,
                     gb_zadd_result *res);
/* ZSCORE: GB_R_NOTFOUND when the key or the member is missing. */
gb_result gb_op_zscore(gb_db *db, gb_slice key, gb_slice member, double *out);

#endif
