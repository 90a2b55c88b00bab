/*
 * Lua 5.1's pattern matching for scripts, bounded in stack depth and
 * reachable by the script's hook (engine/script/lib_pattern.c).
 */
#ifndef GB_ENGINE_SCRIPT_LIB_PATTERN_H
#define GB_ENGINE_SCRIPT_LIB_PATTERN_H

#include <lua.h>

/* Replaces find, match, gmatch, gfind and gsub in the string library
 * table at the top of L's stack. */
void gb_lua_install_patterns(lua_State *L);

#endif
