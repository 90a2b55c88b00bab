/*
 * The keyspace's own typed operations, on top of engine/core/db.h.
 */
#include "engine/types/t_keys.h"

#include "engine/core/engine.h"

/* ---- expiry ---------------------------------------------------------------------------- */

gb_expiry_change gb_keys_expire_record(gb_db *db, gb_slice key, gb_kv *kv, int64_t when_ms)
{
    gb_expiry_change change;
    if (when_ms <= db->eng->now_ms) {
        gb_db_delete(db, key);
        change = GB_EXPIRY_DELETED;
    } else {
        gb_db_set_expire(db, kv, when_ms);
        change = GB_EXPIRY_SET;
    }
    gb_engine_key_modified(db, key);
    return change;
}
