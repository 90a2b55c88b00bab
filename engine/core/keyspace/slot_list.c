/* Cluster mode's per-slot key lists: see slot_list.h. */
#include "engine/core/keyspace/slot_list.h"

#include "engine/base/mem.h"
#include "engine/cluster/keyslot.h"

static unsigned slot_of(const gb_kv *kv)
{
    gb_slice key = gb_kv_key(kv);
    return gb_keyslot(key.ptr, key.len);
}

void gb_slot_list_create(gb_db *db)
{
    if (!db->slot_keys) {
        db->slot_keys = gb_calloc(GB_CLUSTER_SLOTS, sizeof *db->slot_keys);
        db->slot_first = gb_calloc(GB_CLUSTER_SLOTS, sizeof *db->slot_first);
    }
    gb_slot_list_clear(db);
}

void gb_slot_list_destroy(gb_db *db)
{
    gb_free(db->slot_keys);
    gb_free(db->slot_first);
    db->slot_keys = NULL;
    db->slot_first = NULL;
}

void gb_slot_list_clear(gb_db *db)
{
    memset(db->slot_keys, 0, GB_CLUSTER_SLOTS * sizeof *db->slot_keys);
    memset(db->slot_first, 0, GB_CLUSTER_SLOTS * sizeof *db->slot_first);
}

/* Points whatever pointed at kv's old copy (its neighbours, or the head of
 * its slot) at kv. */
static void repoint_neighbours(gb_db *db, gb_kv *kv, unsigned slot)
{
    gb_kv_slot_link *l = gb_kv_slot_link_of(kv);
    if (l->next)
        gb_kv_slot_link_of(l->next)->prev = kv;
    if (l->prev)
        gb_kv_slot_link_of(l->prev)->next = kv;
    else
        db->slot_first[slot] = kv;
}

void gb_slot_list_add(gb_db *db, gb_kv *kv)
{
    unsigned slot = slot_of(kv);
    db->slot_keys[slot]++;
    /* A record made before the lists existed carries no link: counted only
     * (db.c links every record it makes for a db that has lists). */
    if (!(kv->flags & GB_KV_SLOT_LINKED))
        return;
    gb_kv_slot_link *l = gb_kv_slot_link_of(kv);
    l->prev = NULL;
    l->next = db->slot_first[slot];
    if (l->next)
        gb_kv_slot_link_of(l->next)->prev = kv;
    db->slot_first[slot] = kv;
}

void gb_slot_list_remove(gb_db *db, gb_kv *kv)
{
    unsigned slot = slot_of(kv);
    db->slot_keys[slot]--;
    if (!(kv->flags & GB_KV_SLOT_LINKED))
        return;
    gb_kv_slot_link *l = gb_kv_slot_link_of(kv);
    if (l->next)
        gb_kv_slot_link_of(l->next)->prev = l->prev;
    if (l->prev)
        gb_kv_slot_link_of(l->prev)->next = l->next;
    else if (db->slot_first[slot] == kv)
        db->slot_first[slot] = l->next;
    l->prev = l->next = NULL;
}

void gb_slot_list_replace(gb_db *db, gb_kv *old, gb_kv *nkv)
{
    if (!(old->flags & GB_KV_SLOT_LINKED) || !(nkv->flags & GB_KV_SLOT_LINKED)) {
        gb_slot_list_remove(db, old);
        gb_slot_list_add(db, nkv);
        return;
    }
    *gb_kv_slot_link_of(nkv) = *gb_kv_slot_link_of(old);
    repoint_neighbours(db, nkv, slot_of(nkv));
}

void gb_slot_list_moved(gb_db *db, gb_kv *nkv)
{
    if (db->slot_first && (nkv->flags & GB_KV_SLOT_LINKED))
        repoint_neighbours(db, nkv, slot_of(nkv));
}

gb_kv *gb_slot_list_first(const gb_db *db, unsigned slot) { return db->slot_first[slot]; }
