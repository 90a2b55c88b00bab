/*
 * Cluster mode's per-slot key lists (database 0 only): the keys of each
 * hash slot in a doubly linked list threaded through the records
 * themselves (gb_kv's slot link, GB_KV_SLOT_LINKED), as Redis 7.0 threads
 * its slotToKeys lists through dictEntry metadata. A new key goes first, so
 * CLUSTER GETKEYSINSLOT lists a slot's keys newest first, in Redis's order;
 * an overwrite or a new expiry keeps the key's place (the record may be
 * reallocated: its neighbours are repointed).
 *
 * Outside cluster mode db->slot_keys is NULL, records carry no links and
 * db.c's single predictable test skips all of this.
 */
#ifndef GB_ENGINE_SLOT_LIST_H
#define GB_ENGINE_SLOT_LIST_H

#include "engine/core/keyspace/db.h"

/* Allocates db's per-slot counts and list heads (all empty). */
void gb_slot_list_create(gb_db *db);
/* Frees them (db->slot_keys becomes NULL). */
void gb_slot_list_destroy(gb_db *db);
/* Every slot empty again (the keys went with a flush). */
void gb_slot_list_clear(gb_db *db);

/* kv has joined db's table: counted, and first in its slot's list. */
void gb_slot_list_add(gb_db *db, gb_kv *kv);
/* kv has left db's table: uncounted and unlinked (it may be freed next). */
void gb_slot_list_remove(gb_db *db, gb_kv *kv);
/* nkv replaces old (same key) in the table: it takes old's place in the
 * list. Call before old is freed. */
void gb_slot_list_replace(gb_db *db, gb_kv *old, gb_kv *nkv);
/* nkv is a reallocated copy of a linked record, its link copied: the
 * neighbours (or the head) that pointed at the old copy now point at it. */
void gb_slot_list_moved(gb_db *db, gb_kv *nkv);

/* The first key of slot's list (NULL: none); then gb_slot_list_next. */
gb_kv *gb_slot_list_first(const gb_db *db, unsigned slot);
static inline gb_kv *gb_slot_list_next(gb_kv *kv)
{
    return (kv->flags & GB_KV_SLOT_LINKED) ? gb_kv_slot_link_of(kv)->next : NULL;
}

#endif
