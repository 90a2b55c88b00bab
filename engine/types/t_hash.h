/*
 * The hash type's typed key operations (see engine/types/t_list.h for what
 * a typed key operation does and does not do).
 */
#ifndef GB_ENGINE_TYPES_T_HASH_H
#define GB_ENGINE_TYPES_T_HASH_H

#include "engine/types/result.h"
#include "engine/types/tobj.h"

/* HSET: *added receives how many fields were new. Creates the key (unless
 * n == 0); GB_R_WRONGTYPE when it holds another type. */
gb_result gb_op_hset(gb_db *db, gb_slice key, size_t n, const gb_slice *fields, const gb_slice *values,
                     int64_t *added);
/* HGET: *out borrows the value until the next write (integers rendered
 * into buf, GB_HASH_VALUE_BUF = 24 bytes). GB_R_NOTFOUND when the key or the
 * field is missing. */
gb_result gb_op_hget(gb_db *db, gb_slice key, gb_slice field, gb_slice *out, char *buf);

#endif
