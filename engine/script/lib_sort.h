/*
 * table.sort for scripts: Lua 5.1's quicksort, reachable by the script's
 * hook (engine/script/lib_sort.c).
 */
#ifndef GB_ENGINE_SCRIPT_LIB_SORT_H
#define GB_ENGINE_SCRIPT_LIB_SORT_H

#include <lua.h>

/* table.sort(t [, comp]) as a lua_CFunction. */
int gb_lua_table_sort(lua_State *L);

#endif
