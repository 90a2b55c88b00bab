/*
 * The sorted-set type's typed key operations (see engine/types/t_list.h for
 * what a typed key operation does and does not do).
 */
#ifndef GB_ENGINE_TYPES_T_ZSET_H
#define GB_ENGINE_TYPES_T_ZSET_H

#include "engine/types/result.h"
#include "engine/types/tobj.h"

/* ZADD with native scores. flags: GB_ZADD_NX, XX, GT, LT, INCR and CH
 * (engine/ds/zset.h; the same bits as the SBE ZAddFlags). CH changes nothing
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
