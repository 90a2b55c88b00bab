#include "engine/types/registry.h"

#include "engine/types/t_list.h"
#include "engine/types/t_stream.h"
#include "engine/types/tobj.h"

void gb_types_init(void)
{
    gb_list_type_register();
    gb_hash_type_register();
    gb_set_type_register();
    gb_zset_type_register();
    gb_stream_type_register();
}
