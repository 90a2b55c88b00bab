/*
 * The sorted-set type's typed key operations, on top of engine/ds/zset.h.
 */
#include "engine/types/t_zset.h"

#include "engine/core/blocking.h"

gb_result gb_op_zadd(gb_db *db, gb_slice key, int flags, size_t n, const double *scores, const gb_slice *members,
                     gb_zadd_result *res)
{
    memset(res, 0, sizeof *res);
    bool nx = flags & GB_ZADD_NX, xx = flags & GB_ZADD_XX, gt = flags & GB_ZADD_GT, lt = flags & GB_ZADD_LT;
    if ((nx && xx) || (nx && (gt || lt)) || (gt && lt) || ((flags & GB_ZADD_INCR) && n != 1))
        return GB_R_SYNTAX;
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_ZSET, true, &o);
    if (found < 0)
        return GB_R_WRONGTYPE;
    gb_types_config cfg = gb_types_cfg(db->eng);
    if (!found) {
        if (xx || n == 0)
            return GB_R_OK;
        /* redis-server 7.0 sizes a new set by its first member only. */
        gb_tobj_add(db, key, GB_TYPE_ZSET, gb_zset_new(&cfg, 1, members[0].len), &o);
    }
    int rc = gb_zset_add(&o.o.z, &cfg, flags & ~GB_ZADD_CH, n, scores, members, res);
    if (res->added || res->updated) {
        gb_engine_key_modified(db, key);
        if (res->added)
            gb_blocking_signal_key(db, key);
    }
    gb_tobj_sync_or_delete(db, key, &o); /* deleted when created and then nothing was added */
    if (rc == 0)
        return GB_R_OK;
    return rc == GB_ERANGE ? GB_R_NAN : GB_R_SYNTAX;
}

gb_result gb_op_zscore(gb_db *db, gb_slice key, gb_slice member, double *out)
{
    gb_tobj o;
    int found = gb_tobj_lookup(db, key, GB_TYPE_ZSET, false, &o);
    if (found <= 0)
        return found < 0 ? GB_R_WRONGTYPE : GB_R_NOTFOUND;
    return gb_zset_score(&o.o.z, member, out) ? GB_R_OK : GB_R_NOTFOUND;
}
