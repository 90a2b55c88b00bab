/*
 * The hash type's typed key operations, on top of engine/ds/hash.h.
 */
#include "engine/types/t_hash.h"

gb_result gb_op_hset(gb_db *db, gb_slice key, size_t n, const gb_slice *fields, const gb_slice *values,
                     int64_t *added)
{
    *added = 0;
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_HASH, true, &o);
    if (found < 0)
        return GB_R_WRONGTYPE;
    if (n == 0)
        return GB_R_OK;
    if (!found)
        gb_tobj_add(db, key, GB_TYPE_HASH, gb_hash_new(), &o);
    gb_types_config cfg = gb_types_cfg(db->eng);
    *added = (int64_t)gb_hash_set_many(&o.o.h, &cfg, n, fields, values);
    gb_tobj_sync(&o);
    gb_engine_key_modified(db, key);
    return GB_R_OK;
}

gb_result gb_op_hget(gb_db *db, gb_slice key, gb_slice field, gb_slice *out, char *buf)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_HASH, false, &o);
    if (found <= 0)
        return found < 0 ? GB_R_WRONGTYPE : GB_R_NOTFOUND;
    return gb_hash_get(&o.o.h, field, out, buf) ? GB_R_OK : GB_R_NOTFOUND;
}
