/*
 * What the core knows of scripting (engine/script, docs/scripting.md),
 * without linking Lua:
 *
 *   - whether a script is running and whether it has run past
 *     busy-reply-threshold, in which case the gate answers every other
 *     client BUSY except for the commands flagged GB_CMD_ALLOW_BUSY
 *     (SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE, ...);
 *   - the busy pump: how the engine, from inside a long script, lets the
 *     transport serve other clients (Redis's processEventsWhileBlocked).
 *     The transport installs it; the script's interrupt hook calls it;
 *   - the scripting hooks, installed by engine/script: the flags a script
 *     declares (admission), INFO's memory fields, and the function
 *     libraries as source code for persistence (snapshots, log rewrites).
 */
#ifndef GB_ENGINE_CORE_SCRIPT_STATE_H
#define GB_ENGINE_CORE_SCRIPT_STATE_H

#include "engine/base/common.h"

struct gb_client;

/* The state of the script being run (gb_engine.script). */
typedef struct gb_script_state {
    /* The client whose EVAL/FCALL is running, or NULL. Transports must not
     * process its input while the busy pump runs: it is in the middle of a
     * command. Not const: the commands a script runs are the caller's
     * (ACL checks, ACL LOG entries of context "lua"). */
    struct gb_client *caller;
    /* The caller's EVAL/FCALL arguments: the keys it declares are the ones
     * its tracking client reads when the script runs a read-only command
     * (Redis's trackingRememberKeys(script_caller)). */
    int caller_argc;
    const gb_slice *caller_argv;
    bool timed_out;  /* past busy-reply-threshold: others get BUSY */
    bool eval;       /* an EVAL (SCRIPT KILL applies) rather than an FCALL (FUNCTION KILL) */
} gb_script_state;

/* Redis 7.0's texts (shared.slowevalerr, shared.slowscripterr). */
#define GB_ERR_BUSY_EVAL "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
#define GB_ERR_BUSY_FUNCTION "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."

static inline const char *gb_script_busy_error(const gb_script_state *s)
{
    return s->eval ? GB_ERR_BUSY_EVAL : GB_ERR_BUSY_FUNCTION;
}

/* The transport's part (gb_engine.busy_pump): serve other clients' pending
 * events once and return, without blocking and without touching the
 * caller's connection. NULL where no transport drives the engine (unit
 * tests): a busy script then simply runs on. */
typedef struct gb_busy_pump {
    void (*pump)(void *ctx);
    void *ctx;
} gb_busy_pump;

/* engine/script's part (gb_engine.scripting). */
typedef struct gb_scripting_hooks {
    /* The GB_CMD_* flags a GB_CMD_RUNS_SCRIPT command has with these
     * arguments: the command's own when the script declares nothing. */
    uint32_t (*command_flags)(void *ctx, struct gb_client *c, uint32_t cmd_flags, int argc, const gb_slice *argv);
    /* INFO memory's scripting fields, one "name:value" line each. */
    void (*info_memory)(void *ctx, void (*line)(void *lctx, const char *text), void *lctx);
    /* The function libraries, each as the source FUNCTION LOAD took. */
    void (*foreach_library)(void *ctx, void (*fn)(void *fctx, gb_slice code), void *fctx);
    /* Loads a library's source (a snapshot being read). Returns 0, or a
     * negative GB_E* code with the reason in err. */
    int (*load_library)(void *ctx, gb_slice code, char *err, size_t errlen);
    /* Removes every library (before a snapshot replaces the dataset). */
    void (*flush_libraries)(void *ctx);
    void (*destroy)(void *ctx);
    void *ctx;
} gb_scripting_hooks;

#endif
