/* The script's hook, called from C functions that work long without
 * executing Lua (script_steps.h). */
#include "engine/script/script_steps.h"

#include <string.h>

void gb_script_steps_hook(lua_State *L, gb_script_steps *s)
{
    s->next_hook = s->done + GB_SCRIPT_C_STEPS;
    lua_Hook hook = lua_gethook(L);
    if (!hook)
        return;
    lua_Debug ar;
    memset(&ar, 0, sizeof ar);
    ar.event = LUA_HOOKCOUNT;
    hook(L, &ar);
}
