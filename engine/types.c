#include "engine/types.h"

#include "engine/engine.h"

void gb_types_init(struct gb_engine *eng)
{
    (void)eng;
    gb_list_type_register();
    gb_hash_type_register();
    gb_set_type_register();
    gb_zset_type_register();
}
