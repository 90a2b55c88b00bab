/*
 * The keyspace's own typed operations, whatever the value's type: DEL,
 * EXISTS, TYPE, KEYS, SCAN, RANDOMKEY, RENAME, MOVE, COPY, the EXPIRE and
 * TTL families, PERSIST, OBJECT, SWAPDB and FLUSHDB (see
 * engine/types/t_list.h for what a typed key operation does and does not
 * do, and how they are named).
 */
#ifndef GB_ENGINE_TYPES_T_KEYS_H
#define GB_ENGINE_TYPES_T_KEYS_H

#include "engine/core/db.h"
#include "engine/types/result.h"

/* ---- expiry ---- */

/* What an expiry operation did to its key: the caller propagates it as
 * PEXPIREAT, DEL or PERSIST (engine/core/propagate.h). */
typedef enum gb_expiry_change {
    GB_EXPIRY_NONE,      /* nothing changed */
    GB_EXPIRY_SET,       /* the key now expires at the time asked */
    GB_EXPIRY_DELETED,   /* the time asked had passed: the key is gone */
    GB_EXPIRY_PERSISTED, /* the key's expiry was removed */
} gb_expiry_change;

/* Gives key (its record kv) the absolute expiry when_ms (Unix ms), or
 * deletes it when that time is not in the future (Redis 7.0); tells WATCH.
 * The typed operations that set expiries (EXPIRE & co, GETEX) end here. */
gb_expiry_change gb_keys_expire_record(gb_db *db, gb_slice key, gb_kv *kv, int64_t when_ms);

#endif
