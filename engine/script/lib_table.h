/*
 * table.insert, table.remove, table.sort and table.concat for scripts: Lua
 * 5.1's, with Redis's read-only tables, a sort the script's hook reaches
 * and a concat built in one block
 * (engine/script/lib_table.c).
 */
#ifndef GB_ENGINE_SCRIPT_LIB_TABLE_H
#define GB_ENGINE_SCRIPT_LIB_TABLE_H

#include <lua.h>

/* table.insert(t, [pos,] value) */
int gb_lua_table_insert(lua_State *L);

/* table.remove(t [, pos]) */
int gb_lua_table_remove(lua_State *L);

/* table.concat(t [, sep [, i [, j]]]) */
int gb_lua_table_concat(lua_State *L);

/* table.sort(t [, comp]) */
int gb_lua_table_sort(lua_State *L);

#endif
