/*
 * Functions (Redis 7.0's functions.c and function_lua.c): libraries of
 * named functions loaded with FUNCTION LOAD from code that starts with
 * "#!lua name=<library>", kept by the engine (FUNCTION LIST/DELETE/FLUSH),
 * called with FCALL/FCALL_RO, carried by snapshots and the log
 * (engine/core/request/script_state.h), and copied between servers with FUNCTION
 * DUMP/RESTORE (payload: docs/scripting.md, "FUNCTION DUMP payload").
 *
 * A library's code runs once at load, in the functions interpreter, with
 * only redis.register_function, redis.log and the redis.LOG_* and
 * version fields visible, and at most GB_FUNCTION_LOAD_TIMEOUT_MS.
 */
#ifndef GB_ENGINE_SCRIPT_FUNC_H
#define GB_ENGINE_SCRIPT_FUNC_H

#include "engine/script/scripting.h"

#define GB_FUNCTION_LOAD_TIMEOUT_MS 500

struct gb_functions *gb_functions_new(gb_engine *eng, uint64_t *rand_state);
void gb_functions_free(struct gb_functions *fns);

/* FUNCTION LOAD [REPLACE]: loads code; on success replies the library's
 * name and returns true. */
bool gb_functions_load_command(gb_scripting *sys, gb_client *c, gb_slice code, bool replace);
/* Loads code without a client (snapshot); 0, or GB_EINVAL with err. */
int gb_functions_load(gb_scripting *sys, gb_slice code, bool replace, char *err, size_t errlen);

bool gb_functions_delete(gb_scripting *sys, gb_slice name);
void gb_functions_flush(gb_scripting *sys);
void gb_functions_list(gb_scripting *sys, gb_client *c, bool with_code, const gb_slice *pattern);
void gb_functions_stats(gb_scripting *sys, gb_client *c);
void gb_functions_foreach(gb_scripting *sys, void (*fn)(void *ctx, gb_slice code), void *ctx);

/* FUNCTION DUMP / RESTORE. policy: 'F'lush, 'A'ppend, 'R'eplace. */
void gb_functions_dump(gb_scripting *sys, gb_client *c);
bool gb_functions_restore(gb_scripting *sys, gb_client *c, gb_slice payload, char policy);

/* FCALL / FCALL_RO with the command's arguments. */
void gb_functions_fcall(gb_scripting *sys, gb_client *c, int argc, gb_slice *argv, bool ro);
uint32_t gb_functions_command_flags(gb_scripting *sys, uint32_t cmd_flags, int argc, const gb_slice *argv);

/* INFO: libraries, functions, bytes of their code, the interpreter's heap. */
size_t gb_functions_count(const struct gb_functions *fns, size_t *libraries);
size_t gb_functions_code_bytes(const struct gb_functions *fns);
size_t gb_functions_vm_bytes(const struct gb_functions *fns);

#endif
