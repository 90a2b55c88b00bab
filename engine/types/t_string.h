/*
 * The string type's typed key operations (see engine/types/t_list.h for
 * what a typed key operation does and does not do; string commands carry
 * no type prefix, so these are gb_string_<verb>). The RESP handlers
 * (cmd_string.c) parse text arguments into these calls; the SBE ring path
 * calls them with native values.
 */
#ifndef GB_ENGINE_T_STRING_H
#define GB_ENGINE_T_STRING_H

#include "engine/core/keyspace/db.h"
#include "engine/types/result.h"
#include "engine/types/t_keys.h"

enum {
    GB_SET_NX = 1u << 0,      /* only if the key does not exist */
    GB_SET_XX = 1u << 1,      /* only if it exists */
    GB_SET_KEEPTTL = 1u << 2, /* keep the current expiry */
    GB_SET_GET = 1u << 3,     /* return the old value */
};

/* The value of key as bytes (integers rendered into intbuf, GB_INT_BUF
 * bytes). GB_R_NOTFOUND / GB_R_WRONGTYPE. */
gb_result gb_string_get(gb_db *db, gb_slice key, gb_slice *out, char *intbuf);

/* GETDEL: the value to sink->value, then the key goes. GB_R_NOTFOUND /
 * GB_R_WRONGTYPE. */
gb_result gb_string_getdel(gb_db *db, gb_slice key, const gb_sink *sink);

/* GETEX: the value to sink->value, then *when_ms (absolute Unix ms; -1:
 * none) becomes the key's expiry (a time not in the future deletes it), or
 * with persist its expiry goes; *change says what happened. GB_R_NOTFOUND,
 * GB_R_WRONGTYPE; GB_R_BADARG when when_ms is NULL and the key holds a
 * string (Redis checks the key before the expiry). */
gb_result gb_string_getex(gb_db *db, gb_slice key, const int64_t *when_ms, bool persist, const gb_sink *sink,
                          gb_expiry_change *change);

/* GETRANGE/SUBSTR: *out borrows the bytes in [start, end] (Redis's index
 * rules; empty when none) until the next write. GB_R_NOTFOUND /
 * GB_R_WRONGTYPE. */
gb_result gb_string_getrange(gb_db *db, gb_slice key, int64_t start, int64_t end, gb_slice *out, char *intbuf);

/* MGET: sink->len(n), then for each key sink->value (a string's value) or
 * sink->missing (a missing key or another type). */
gb_result gb_string_mget(gb_db *db, size_t n, const gb_slice *keys, const gb_sink *sink);

/* MSET, MSETNX (nx: only when none of the keys exists): npairs key-value
 * pairs, kv[2i] the key and kv[2i+1] its value; each key loses its TTL.
 * *set says whether they were set (always, without nx). */
gb_result gb_string_mset(gb_db *db, size_t npairs, const gb_slice *kv, bool nx, bool *set);

/* SET: flags GB_SET_*, expire_at_ms absolute Unix ms or -1 for none.
 * With GB_SET_GET, *old (and old_found) receive the previous value, copied
 * into a gb_malloc'd buffer the caller frees (*old_owned). Returns GB_R_OK,
 * GB_R_SKIPPED (NX/XX prevented it) or GB_R_WRONGTYPE (GET on a non-string). */
gb_result gb_string_set(gb_db *db, gb_slice key, gb_slice val, unsigned flags, int64_t expire_at_ms,
                        bool *old_found, char **old_owned, size_t *old_len);

/* SET's EX/PX/EXAT/PXAT value as absolute Unix ms (Redis's
 * getExpireMillisecondsOrReply): v is in seconds when seconds, else ms, and
 * relative to now_ms when relative (EX, PX), else a Unix time (EXAT, PXAT).
 * False where Redis answers "invalid expire time": v <= 0, or a result
 * beyond int64. */
static inline bool gb_string_expire_at(int64_t v, bool seconds, bool relative, int64_t now_ms, int64_t *out)
{
    if (v <= 0 || (seconds && v > INT64_MAX / 1000))
        return false;
    if (seconds)
        v *= 1000;
    if (relative) {
        if (v > INT64_MAX - now_ms)
            return false;
        v += now_ms;
    }
    *out = v;
    return true;
}

/* INCRBY: GB_R_NOTINT, GB_R_OVERFLOW, GB_R_WRONGTYPE. */
gb_result gb_string_incrby(gb_db *db, gb_slice key, int64_t by, int64_t *out);

/* INCRBYFLOAT: the new value as Redis formats it (LD_STR_HUMAN) into buf
 * (GB_LONG_DOUBLE_BUF bytes), length in *len. GB_R_NOTFLOAT when the value
 * or the increment is not a float, GB_R_NAN when the result is not finite.
 * The key keeps its TTL. */
gb_result gb_string_incrbyfloat(gb_db *db, gb_slice key, gb_slice incr, char *buf, size_t *len);

/* APPEND: new length in *out; GB_R_TOOBIG over max_len. */
gb_result gb_string_append(gb_db *db, gb_slice key, gb_slice val, size_t max_len, size_t *out);

/* SETRANGE: new length in *out. */
gb_result gb_string_setrange(gb_db *db, gb_slice key, int64_t offset, gb_slice val, size_t max_len, size_t *out);

/* STRLEN (0 when missing). */
gb_result gb_string_strlen(gb_db *db, gb_slice key, size_t *out);

#endif
