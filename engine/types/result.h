/*
 * Results of the typed engine API (t_string.h, t_hash.h, ...). The RESP and
 * SBE command layers turn them into replies; gb_reply_result() gives Redis's
 * text for the common ones.
 */
#ifndef GB_ENGINE_RESULT_H
#define GB_ENGINE_RESULT_H

typedef enum gb_result {
    GB_R_OK = 0,
    GB_R_NOTFOUND,   /* key (or field/member) does not exist */
    GB_R_WRONGTYPE,  /* key holds another type */
    GB_R_NOTINT,     /* value is not an integer or out of range */
    GB_R_NOTFLOAT,   /* value is not a valid float */
    GB_R_OVERFLOW,   /* increment or decrement would overflow */
    GB_R_NAN,        /* increment would produce NaN or Infinity */
    GB_R_SKIPPED,    /* a condition (NX/XX/GT/LT) prevented the change */
    GB_R_TOOBIG,     /* string exceeds maximum allowed size */
    GB_R_SYNTAX,     /* bad option combination */
    GB_R_RANGE,      /* index or offset out of range */
} gb_result;

#endif
