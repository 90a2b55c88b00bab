/*
 * table.insert, table.remove and table.sort for scripts: Lua 5.1's, with
 * Redis's read-only tables and a sort the script's hook reaches
 * (engine/script/lib_table.c).
 */
#ifndef GB_ENGINE_SCRIPT_LIB_TABLE_H
#define GB_ENGINE_SCRIPT_LIB_TABLE_H

#include <lua.h>

/* table.insert(t, [pos,] value) */
int gb_lua_table_insert(lua_State *L);

/* table.remove(t [, pos]) */
int gb_lua_table_remove(lua_State *L);

/* table.sort(t [, comp]) */
int gb_lua_table_sort(lua_State *L);

#endif
