/*
 * Registers the value types (list, hash, set, zset) with the engine: their
 * gb_type_ops and their command tables.
 */
#ifndef GB_ENGINE_TYPES_H
#define GB_ENGINE_TYPES_H

struct gb_engine;
void gb_types_init(struct gb_engine *eng);

/* Each value type's registration of its gb_type_ops (in its cmd_*.c). */
void gb_list_type_register(void);
void gb_hash_type_register(void);
void gb_set_type_register(void);
void gb_zset_type_register(void);

#endif
