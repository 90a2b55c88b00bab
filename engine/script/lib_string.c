/*
 * The functions of Lua 5.1's string library that build a string byte by
 * byte, written for Goblin Core: string.rep, string.upper, string.lower
 * and string.reverse, with Lua 5.1's arguments, results and errors.
 *
 * Lua 5.1 builds their results through luaL_Buffer: a byte at a time into
 * 8 KB pieces that it interns and merges as they pile up, each byte
 * copied again at every merge. All of it is C, where the VM's hook never
 * runs, and on the development machine it took 13-17 s to reach the
 * 512 MB limit with string.rep and 22 s for string.upper of a 400 MB
 * string, during which no other client was served and SCRIPT KILL could
 * not stop the script. Here each result's length is known before it is
 * built, so its whole block is asked for first: a result over
 * proto-max-bulk-len is refused at once with Lua's "not enough memory"
 * (script_vm.c's allocator), and the others are written in one pass. The
 * block is garbage once the string is made from it: a result needs twice
 * its size for a moment, as it did in Lua's merges.
 */
#include "engine/script/lib_string.h"

#include <ctype.h>
#include <lauxlib.h>
#include <stdint.h>
#include <string.h>

#include "engine/base/common.h"

/* string.rep(s, n): n is cast to an int as Lua 5.1 does (2^32 + 3 repeats
 * 3 times); the block is filled by doubling what is already there. */
static int string_rep(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    int n = luaL_checkint(L, 2);
    if (n <= 0 || len == 0) {
        lua_pushliteral(L, "");
        return 1;
    }
    /* Past SIZE_MAX / 2 the allocator refuses as surely as at the exact size. */
    uint64_t want = (uint64_t)len * (uint64_t)n;
    size_t total = want > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)want;
    char *block = lua_newuserdata(L, total); /* s stays alive: it is argument 1 */
    memcpy(block, s, len);
    for (size_t have = len; have < total;) { /* doubling what is there */
        size_t more = GB_MIN(have, total - have);
        memcpy(block + have, block, more);
        have += more;
    }
    lua_pushlstring(L, block, total);
    return 1;
}

/* string.upper, string.lower, string.reverse: one byte of the result per
 * byte of the argument. */
typedef enum { TO_UPPER, TO_LOWER, REVERSED } byte_map;

static int map_bytes(lua_State *L, byte_map how)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    if (len == 0) {
        lua_pushliteral(L, "");
        return 1;
    }
    /* A short result on the C stack, as Lua's own buffer is: a userdata
     * per call cost 12-17% on 23-byte strings. */
    char small[512];
    char *out = len <= sizeof small ? small : lua_newuserdata(L, len); /* s stays alive: argument 1 */
    switch (how) {
    case TO_UPPER:
        for (size_t i = 0; i < len; i++)
            out[i] = (char)toupper((unsigned char)s[i]);
        break;
    case TO_LOWER:
        for (size_t i = 0; i < len; i++)
            out[i] = (char)tolower((unsigned char)s[i]);
        break;
    case REVERSED:
        for (size_t i = 0; i < len; i++)
            out[i] = s[len - 1 - i];
        break;
    }
    lua_pushlstring(L, out, len);
    return 1;
}

static int string_upper(lua_State *L)
{
    return map_bytes(L, TO_UPPER);
}

static int string_lower(lua_State *L)
{
    return map_bytes(L, TO_LOWER);
}

static int string_reverse(lua_State *L)
{
    return map_bytes(L, REVERSED);
}

void gb_lua_install_strings(lua_State *L)
{
    lua_pushcfunction(L, string_rep);
    lua_setfield(L, -2, "rep");
    lua_pushcfunction(L, string_upper);
    lua_setfield(L, -2, "upper");
    lua_pushcfunction(L, string_lower);
    lua_setfield(L, -2, "lower");
    lua_pushcfunction(L, string_reverse);
    lua_setfield(L, -2, "reverse");
}
