/*
 * Registers the value types (list, hash, set, zset) with the engine: their
 * gb_type_ops and their command tables.
 */
#ifndef GB_ENGINE_TYPES_H
#define GB_ENGINE_TYPES_H

struct gb_engine;
void gb_types_init(struct gb_engine *eng);

#endif
