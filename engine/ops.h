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
#include "engine/t_hash.h"
#include "engine/t_zset.h"

/* ---- lists (engine/cmd_list.c) ---- */

/* LPUSH/RPUSH: *len receives the new length. */
gb_result gb_op_push(gb_db *db, gb_slice key, bool tail, size_t n, const gb_slice *vals, int64_t *len);
/* LPOP/RPOP of one value: emit receives it (valid during the call).
 * GB_R_NOTFOUND when the key is missing. */
gb_result gb_op_pop(gb_db *db, gb_slice key, bool tail, void (*emit)(void *ctx, gb_slice v), void *ctx);

/* ---- hashes (engine/cmd_hash.c) ---- */

/* HSET: *added receives how many fields were new. Creates the key (unless
 * n == 0); GB_R_WRONGTYPE when it holds another type. */
gb_result gb_op_hset(gb_db *db, gb_slice key, size_t n, const gb_slice *fields, const gb_slice *values,
                     int64_t *added);
/* HGET: *out borrows the value until the next write (integers rendered
 * into buf, GB_HASH_VALUE_BUF = 24 bytes). GB_R_NOTFOUND when the key or the
 * field is missing. */
gb_result gb_op_hget(gb_db *db, gb_slice key, gb_slice field, gb_slice *out, char *buf);

/* ---- sorted sets (engine/cmd_zset.c) ---- */

/* ZADD with native scores. flags: GB_ZADD_NX, XX, GT, LT, INCR and CH
 * (engine/t_zset.h; the same bits as the SBE ZAddFlags). CH changes nothing
 * here: a caller that got CH replies res->added + res->updated.
 *
 * res (t_zset.h's gb_zadd_result) receives:
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
gb_result gb_op_zadd(gb_db *db, gb_slice key, int flags, size_t n, const double *scores, const gb_slice *members,
                     gb_zadd_result *res);
/* ZSCORE: GB_R_NOTFOUND when the key or the member is missing. */
gb_result gb_op_zscore(gb_db *db, gb_slice key, gb_slice member, double *out);

#endif
