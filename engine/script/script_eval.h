/*
 * EVAL scripts (Redis 7.0's eval.c): the script cache, named by the SHA-1
 * of the body, compiled once in the EVAL interpreter ("@user_script"),
 * with the flags of an optional "#!lua flags=..." first line; KEYS and
 * ARGV as globals while a script runs.
 */
#ifndef GB_ENGINE_SCRIPT_EVAL_H
#define GB_ENGINE_SCRIPT_EVAL_H

#include "engine/script/scripting.h"

struct gb_eval_cache *gb_eval_cache_new(gb_engine *eng, uint64_t *rand_state);
void gb_eval_cache_free(struct gb_eval_cache *ec);

/* EVAL / EVALSHA / EVAL_RO / EVALSHA_RO with the command's arguments. */
void gb_eval_command(gb_scripting *sys, gb_client *c, int argc, gb_slice *argv, bool by_sha, bool ro);

/* SCRIPT LOAD, EXISTS, FLUSH. */
void gb_eval_script_load(gb_scripting *sys, gb_client *c, gb_slice body);
bool gb_eval_script_exists(gb_scripting *sys, gb_slice sha);
void gb_eval_script_flush(gb_scripting *sys);

/* The flags admission checks for an EVAL/EVALSHA (engine/core/request/script_state.h). */
uint32_t gb_eval_command_flags(gb_scripting *sys, uint32_t cmd_flags, int argc, const gb_slice *argv, bool by_sha);

/* INFO: scripts cached, bytes they hold outside Lua, the interpreter's heap. */
size_t gb_eval_scripts(const struct gb_eval_cache *ec);
size_t gb_eval_cache_bytes(const struct gb_eval_cache *ec);
size_t gb_eval_vm_bytes(const struct gb_eval_cache *ec);

#endif
