/*
 * SORT's source key: the list, set or sorted set it sorts, looked up once
 * for reading (one keyspace hit or miss, as Redis's lookupKeyRead), then
 * read in its own order. The sorting, the BY/GET lookups and the reply are
 * the command layer's (engine/commands/cmd_sort.c); BY and GET read other
 * keys through the ordinary typed reads (gb_string_get, gb_hash_hget).
 */
#ifndef GB_ENGINE_T_SORT_H
#define GB_ENGINE_T_SORT_H

#include "engine/core/keyspace/db.h"
#include "engine/types/result.h"
#include "engine/types/tobj.h"

typedef struct gb_sort_source {
    enum gb_type type; /* GB_TYPE_LIST, GB_TYPE_SET or GB_TYPE_ZSET */
    size_t len;
    void *list;        /* the list (GB_TYPE_LIST) */
    gb_tobj_hdr hdr;   /* the set or sorted set */
} gb_sort_source;

/* GB_R_NOTFOUND: no such key (SORT treats it as an empty list);
 * GB_R_WRONGTYPE: a string, hash or stream. */
gb_result gb_sort_source_find(gb_db *db, gb_slice key, gb_sort_source *src);

/* Emits the elements at positions start..stop (0-based, clamped by the
 * caller) of a list or sorted set in their own order, from the other end
 * with reverse (position 0 is then the last element); a set emits all its
 * members in iteration order and ignores the range. Nothing may change the
 * keyspace between gb_sort_source_find and this call. */
void gb_sort_source_emit(const gb_sort_source *src, size_t start, size_t stop, bool reverse, gb_set_emit_fn emit,
                         void *ctx);

#endif
