/*
 * string.rep, string.upper, string.lower and string.reverse for scripts:
 * Lua 5.1's, each result built in one block asked for whole
 * (engine/script/lib_string.c).
 */
#ifndef GB_ENGINE_SCRIPT_LIB_STRING_H
#define GB_ENGINE_SCRIPT_LIB_STRING_H

#include <lua.h>

/* Replaces rep, upper, lower and reverse in the string library table at
 * the top of L's stack. */
void gb_lua_install_strings(lua_State *L);

#endif
