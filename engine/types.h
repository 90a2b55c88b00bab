/*
 * Registers the value types (list, hash, set, zset) with the engine: their
 * gb_type_ops.
 */
#ifndef GB_ENGINE_TYPES_H
#define GB_ENGINE_TYPES_H

/* The type table is process-wide (engine/db.c): registering again is
 * harmless. */
void gb_types_init(void);

/* Each value type's registration of its gb_type_ops (the list's in
 * cmd_list.c; the hash, set and zset ones in cmd_types.c). */
void gb_list_type_register(void);
void gb_hash_type_register(void);
void gb_set_type_register(void);
void gb_zset_type_register(void);

#endif
