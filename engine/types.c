#include "engine/types.h"

#include "engine/engine.h"

void gb_types_init(struct gb_engine *eng)
{
    /* Each value type registers its gb_type_ops and commands here as it
     * lands (lists, hashes, sets, sorted sets). */
    (void)eng;
}
