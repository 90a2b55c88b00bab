/*
 * Strings: the typed engine API. The RESP handlers (cmd_string.c) parse
 * text arguments into these calls; the SBE ring path calls them with native
 * values. Nothing here formats a reply.
 */
#ifndef GB_ENGINE_T_STRING_H
#define GB_ENGINE_T_STRING_H

#include "engine/core/db.h"
#include "engine/types/result.h"

enum {
    GB_SET_NX = 1u << 0,      /* only if the key does not exist */
    GB_SET_XX = 1u << 1,      /* only if it exists */
    GB_SET_KEEPTTL = 1u << 2, /* keep the current expiry */
    GB_SET_GET = 1u << 3,     /* return the old value */
};

/* The value of key as bytes (integers rendered into intbuf, GB_INT_BUF
 * bytes). GB_R_NOTFOUND / GB_R_WRONGTYPE. */
gb_result gb_string_get(gb_db *db, gb_slice key, gb_slice *out, char *intbuf);

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
