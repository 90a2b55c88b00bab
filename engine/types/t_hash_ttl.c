/*
 * Lazy hash-field expiry: engine/types/t_hash_ttl.h.
 */
#include "engine/types/t_hash_ttl.h"

#include "engine/core/replication/replica.h"

bool gb_hfe_expire_field_slow(gb_db *db, gb_slice key, gb_tobj *o, gb_slice field, bool notify)
{
    if (!gb_hash_field_expired(&o->o.h, field, db->eng->now_ms))
        return false;
    /* A replica leaves the field to its primary's HDEL: gone for its
     * clients, still there for the primary's own commands (Redis 7.4's
     * hashTypeGetValue), as it does with keys. */
    bool present;
    if (GB_UNLIKELY(gb_replica_keeps_expired(db->eng, &present)))
        return !present;
    if (!gb_hfe_may_delete(db))
        return true;
    gb_db_lookup_write(db, key); /* a snapshot in progress saves the key first */
    gb_hfe_propagate_hdel(db, key, field);
    gb_hash_del(&o->o.h, 1, &field);
    bool gone = gb_hfe_settle(db, key, o->kv, &o->o.h);
    if (gone)
        o->kv = NULL;
    if (notify)
        gb_hfe_notify_batch(db, key, 1, gone);
    return true;
}

