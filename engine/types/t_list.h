/*
 * The list type's typed key operations: what a binary protocol (SBE over the
 * ring) calls with native values, and what the RESP handlers call after
 * parsing text. Each looks the key up (lazily expiring it), checks its type,
 * creates or deletes the key as Redis does, tells the WATCH and blocking
 * machinery, and returns a gb_result; none formats a reply.
 */
#ifndef GB_ENGINE_TYPES_T_LIST_H
#define GB_ENGINE_TYPES_T_LIST_H

#include "engine/core/db.h"
#include "engine/ds/list.h"
#include "engine/types/result.h"

struct gb_engine;

/* The list settings currently configured (list-max-listpack-size,
 * list-implementation), for a list about to be created. */
gb_list_config gb_list_config_for(const struct gb_engine *eng);

/* The list type's gb_type_ops (keyspace destructor, COPY, OBJECT ENCODING). */
void gb_list_type_register(void);

/* LPUSH/RPUSH: *len receives the new length. */
gb_result gb_op_push(gb_db *db, gb_slice key, bool tail, size_t n, const gb_slice *vals, int64_t *len);
/* LPOP/RPOP of one value: emit receives it (valid during the call).
 * GB_R_NOTFOUND when the key is missing. */
gb_result gb_op_pop(gb_db *db, gb_slice key, bool tail, void (*emit)(void *ctx, gb_slice v), void *ctx);

#endif
