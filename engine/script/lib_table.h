/*
 * table.insert, table.remove, table.sort and table.concat for scripts: Lua
 * 5.1's, with Redis's read-only tables, a sort the script's hook reaches
 * and a concat built in one block
 * (engine/script/lib_table.c).
 */
#ifndef GB_ENGINE_SCRIPT_LIB_TABLE_H
#define GB_ENGINE_SCRIPT_LIB_TABLE_H

#include <lua.h>

/* Replaces insert, remove, sort and concat in the table library table at
 * the top of L's stack. */
void gb_lua_install_table(lua_State *L);

#endif
