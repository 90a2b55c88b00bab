/*
 * The lazy half of hash-field expiry (engine/core/keyspace/hfe.h has the index and
 * the active cycle): every hash command that reads or writes one field
 * checks that field's deadline first, as Redis 8.0's HFE_LAZY_EXPIRE.
 */
#ifndef GB_ENGINE_TYPES_T_HASH_TTL_H
#define GB_ENGINE_TYPES_T_HASH_TTL_H

#include "engine/core/keyspace/hfe.h"
#include "engine/types/tobj.h"

/* Lazy expiry of one field a command is about to use (o: the hash under
 * key, just looked up). Returns true when the field's deadline has passed:
 * the caller treats it as absent. It is deleted (HDEL propagated; `hexpired`
 * notified unless the caller batches the event, notify false); when it was
 * the last field the key is deleted too (`del`) and o->kv becomes NULL. */
bool gb_hfe_expire_field_slow(gb_db *db, gb_slice key, gb_tobj *o, gb_slice field, bool notify);
static inline bool gb_hfe_expire_field(gb_db *db, gb_slice key, gb_tobj *o, gb_slice field, bool notify)
{
    /* A hash without deadlines (nearly all) costs one compare here. */
    return GB_UNLIKELY(gb_hash_has_ttl_enc(&o->o.h)) && gb_hfe_expire_field_slow(db, key, o, field, notify);
}

#endif
