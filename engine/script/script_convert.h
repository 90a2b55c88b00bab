/*
 * Redis's conversion rules between replies and Lua values
 * (docs/scripting.md, "Conversions"), both ways.
 *
 * Reply -> Lua: the script's client replies into a gb_lua_sink, which
 * builds the Lua value on the interpreter's stack as the command answers:
 *   integer -> number, bulk -> string, null bulk / null array -> false
 *   (nil under RESP3), array -> table (nested), status -> {ok=s},
 *   error -> {err=s}, double -> string under RESP2 (as a RESP2 client
 *   reads it), {double=n} under RESP3; under RESP3 a map -> {map={k=v}},
 *   a set -> {set={m=true}} and a verbatim string ->
 *   {verbatim_string={format=, string=}} (RESP2: arrays and a string, as
 *   a RESP2 client reads them).
 *
 * Lua -> reply (what a script returns): string -> bulk, number -> integer
 * (truncated: 3.99 -> 3), true -> 1, false/nil -> null, a table with a
 * string "err" -> error, "ok" -> status, "double" -> double, "map" /
 * "set" (RESP3 maps and sets for a RESP3 caller) / "big_number" /
 * "verbatim_string" as Redis, otherwise an array of
 * t[1], t[2], ... up to the first nil.
 */
#ifndef GB_ENGINE_SCRIPT_CONVERT_H
#define GB_ENGINE_SCRIPT_CONVERT_H

#include <lua.h>

#include "engine/core/request/client.h"

/* Nesting deeper than this in one reply is not built (no engine reply
 * comes near it). */
#define GB_LUA_SINK_DEPTH 32

typedef struct gb_lua_sink_frame {
    int64_t remaining; /* elements still expected; -1: deferred length */
    int n;             /* elements set so far */
    int kind;          /* GB_LUA_SINK_ARRAY, _MAP (2 elements a pair) or _SET */
} gb_lua_sink_frame;

/* What an open table becomes when it is complete: an array stays one; a
 * map or set is built as the array of its elements, then (RESP3) turned
 * into Redis's {map=} / {set=} table. */
enum { GB_LUA_SINK_ARRAY = 0, GB_LUA_SINK_MAP, GB_LUA_SINK_SET };

typedef struct gb_lua_sink {
    lua_State *L;
    int resp;            /* the script's protocol (redis.setresp): 2 or 3 */
    int depth;           /* open tables */
    int values;          /* complete top-level values pushed */
    bool error;          /* the (last) top-level value is an error reply */
    gb_lua_sink_frame frames[GB_LUA_SINK_DEPTH];
} gb_lua_sink;

extern const gb_reply_ops gb_lua_sink_ops;

/* Prepares the sink for one command's reply on L. */
void gb_lua_sink_begin(gb_lua_sink *s, lua_State *L, int resp);

/* Replies to c with the Lua value on top of L's stack (consumed);
 * script_resp decides how booleans read (redis.setresp). */
void gb_lua_reply(gb_client *c, lua_State *L, int script_resp);

#endif
