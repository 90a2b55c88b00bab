/*
 * The hash type's typed key operations (see engine/types/t_list.h for what
 * a typed key operation does and does not do, and how they are named). A
 * missing key reads as an empty hash; an emptied hash's key is deleted.
 */
#ifndef GB_ENGINE_TYPES_T_HASH_H
#define GB_ENGINE_TYPES_T_HASH_H

#include "engine/types/result.h"
#include "engine/types/tobj.h"

/* ---- writes ---- */

/* HSET/HMSET: *added receives how many fields were new. Creates the key
 * (unless n == 0). */
gb_result gb_hash_hset(gb_db *db, gb_slice key, size_t n, const gb_slice *fields, const gb_slice *values,
                       int64_t *added);
/* HSETNX: *set is 1 when the field was new (and set), else 0. */
gb_result gb_hash_hsetnx(gb_db *db, gb_slice key, gb_slice field, gb_slice value, int64_t *set);
/* HDEL: *removed says how many of the n fields went. */
gb_result gb_hash_hdel(gb_db *db, gb_slice key, size_t n, const gb_slice *fields, int64_t *removed);
/* HINCRBY: *out receives the new value. GB_R_NOTINT when the field's value
 * is not an integer (Redis: "hash value is not an integer"), GB_R_OVERFLOW;
 * nothing changes then, and a key created for the call goes again. */
gb_result gb_hash_hincrby(gb_db *db, gb_slice key, gb_slice field, int64_t incr, int64_t *out);
/* HINCRBYFLOAT with a finite increment (the caller refuses others): the
 * stored text of the new value into buf (GB_LONG_DOUBLE_BUF bytes), its
 * length in *len. GB_R_NOTFLOAT when the field's value is not a float
 * (Redis: "hash value is not a float"), GB_R_NAN when the sum is not
 * finite; nothing changes then. */
gb_result gb_hash_hincrbyfloat(gb_db *db, gb_slice key, gb_slice field, long double incr, char *buf, size_t *len);

/* ---- reads ---- */

/* HGET: *out borrows the value until the next write (integers rendered
 * into buf, GB_HASH_VALUE_BUF = 24 bytes). GB_R_NOTFOUND when the key or the
 * field is missing. */
gb_result gb_hash_hget(gb_db *db, gb_slice key, gb_slice field, gb_slice *out, char *buf);
/* HMGET: sink->len(n), then for each field sink->value with its value or
 * sink->missing (a missing key has no fields). */
gb_result gb_hash_hmget(gb_db *db, gb_slice key, size_t n, const gb_slice *fields, const gb_sink *sink);
/* HLEN, HEXISTS (1/0), HSTRLEN: 0 for a missing key or field. */
gb_result gb_hash_hlen(gb_db *db, gb_slice key, int64_t *len);
gb_result gb_hash_hexists(gb_db *db, gb_slice key, gb_slice field, int64_t *exists);
gb_result gb_hash_hstrlen(gb_db *db, gb_slice key, gb_slice field, int64_t *len);
/* HGETALL (HKEYS, HVALS): sink->len(number of fields), then sink->pair for
 * each. GB_R_NOTFOUND: no such key. */
gb_result gb_hash_hgetall(gb_db *db, gb_slice key, const gb_sink *sink);
/* HRANDFIELD: count > 0 picks min(count, fields) distinct fields, count < 0
 * picks -count that may repeat: sink->len(how many), then sink->pair for
 * each. GB_R_NOTFOUND: no such key. */
gb_result gb_hash_hrandfield(gb_db *db, gb_slice key, int64_t count, const gb_sink *sink);

#endif
