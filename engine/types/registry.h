/*
 * Registers the value types (list, hash, set, zset, stream) with the keyspace:
 * their gb_type_ops (engine/core/keyspace/keyrecord.h).
 */
#ifndef GB_ENGINE_TYPES_REGISTRY_H
#define GB_ENGINE_TYPES_REGISTRY_H

/* The type table is process-wide (engine/core/keyspace/db.c; the ops are constant
 * functions of the type, the same for every engine): registering again is
 * harmless. */
void gb_types_init(void);

#endif
