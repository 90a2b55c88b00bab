/*
 * The scripting subsystem of an engine (docs/scripting.md): two Lua
 * interpreters (one for EVAL scripts, one for function libraries, as in
 * Redis 7.0), the client their commands run as, the script running now,
 * and the hooks the core calls (engine/core/request/script_state.h).
 *
 *   script_vm.c       a sandboxed interpreter and its memory
 *   script_convert.c  replies <-> Lua values
 *   script_run.c      running one script: the redis.* API, redis.call
 *                     through the gate, the busy hook, SCRIPT/FUNCTION KILL
 *   script_eval.c     EVAL/EVALSHA and the script cache
 *   script_func.c     function libraries: FUNCTION LOAD ... and FCALL
 *   lib_cmsgpack.c, lib_struct.c   two of the libraries scripts get
 */
#ifndef GB_ENGINE_SCRIPT_SCRIPTING_H
#define GB_ENGINE_SCRIPT_SCRIPTING_H

#include "engine/core/engine.h"
#include "engine/script/script_convert.h"
#include "engine/script/script_vm.h"

struct gb_script_run;
struct gb_eval_cache;
struct gb_functions;

typedef struct gb_scripting {
    gb_engine *eng;
    uint64_t rand_state;          /* math.random, shared by both interpreters */
    gb_client client;             /* what scripts' commands run as (not in the engine's client list) */
    gb_lua_sink sink;             /* its replies, into the running interpreter */
    struct gb_script_run *run;    /* the script running now, or NULL */
    struct gb_eval_cache *eval;   /* script_eval.c */
    struct gb_functions *fns;     /* script_func.c */
    unsigned runs_since_gc;
    gb_scripting_hooks hooks;
} gb_scripting;

/* Creates the subsystem and installs it on eng (eng->scripting). */
gb_scripting *gb_scripting_new(gb_engine *eng);

/* The engine's subsystem (NULL before gb_scripting_new). */
static inline gb_scripting *gb_scripting_of(gb_engine *eng)
{
    return eng->scripting ? (gb_scripting *)eng->scripting->ctx : NULL;
}

#endif
