/*
 * Running one script (EVAL or FCALL): Redis's scriptPrepareForRun,
 * luaCallFunction and scriptResetRun.
 *
 * While it runs, the engine's gb_script_state says so; every redis.call
 * goes through the gate (gb_gate_script_call) as the script's client, in
 * the caller's database; effects are recorded by the gate and, the script
 * being one command, handed to the log as one MULTI/EXEC unit.
 *
 * Busy scripts: a count hook every GB_SCRIPT_HOOK_INSTRUCTIONS checks the
 * time; past busy-reply-threshold the script is "timed out": the gate
 * answers others BUSY, and each hook call runs the transport's busy pump
 * (engine/core/request/script_state.h) so SCRIPT KILL, FUNCTION KILL and SHUTDOWN
 * NOSAVE can arrive. A kill makes the hook raise an error on every line
 * from then on, so pcall cannot swallow it.
 */
#ifndef GB_ENGINE_SCRIPT_RUN_H
#define GB_ENGINE_SCRIPT_RUN_H

#include "engine/core/request/gate.h"
#include "engine/script/scripting.h"

#define GB_SCRIPT_HOOK_INSTRUCTIONS 100000

/* redis.REDIS_VERSION and _NUM: the Redis version Goblin answers as (INFO's
 * redis_version, engine/core/introspect/info.c). */
#define GB_SCRIPT_REDIS_VERSION "7.0.15"
#define GB_SCRIPT_REDIS_VERSION_NUM 0x0007000f

/* redis.set_repl flags (Redis's PROPAGATE_AOF / PROPAGATE_REPL). */
enum { GB_REPL_NONE = 0, GB_REPL_AOF = 1, GB_REPL_REPLICA = 2, GB_REPL_ALL = 3 };

/* Script flags ("#!lua flags=..." and redis.register_function's flags). */
enum {
    GB_SFLAG_NO_WRITES = 1u << 0,
    GB_SFLAG_ALLOW_OOM = 1u << 1,
    GB_SFLAG_ALLOW_STALE = 1u << 2,
    GB_SFLAG_NO_CLUSTER = 1u << 3,
    GB_SFLAG_ALLOW_CROSS_SLOT = 1u << 4,
    GB_SFLAG_EVAL_COMPAT = 1u << 5, /* an EVAL script without a shebang: none of the above apply */
};

/* Parses one flag name; returns its bit or 0. */
uint32_t gb_script_flag_parse(const char *s, size_t len);
/* The flag names, in Redis's order, for FUNCTION LIST. */
extern const char *const gb_script_flag_names[5];

/* The GB_CMD_* flags of an EVAL/FCALL of a script with these flags
 * (Redis's scriptFlagsToCmdFlags). */
uint32_t gb_script_cmd_flags(uint32_t cmd_flags, uint32_t script_flags);

typedef struct gb_script_run {
    gb_lua_vm *vm;
    gb_client *caller;
    const char *name;           /* the sha (EVAL) or function name, for error texts */
    gb_script_call_state calls; /* what the gate knows of this run */
    uint64_t start_ms;          /* monotonic */
    int repl;                   /* redis.set_repl */
    bool eval;
    bool timed_out;
    bool killed;
    bool in_call;               /* inside redis.call (reentrancy guard) */
    int argc;                   /* the FCALL that runs it (FUNCTION STATS) */
    const gb_slice *argv;
} gb_script_run;

/* Checks the script's flags against the server's state (no-writes with an
 * _RO command, allow-oom over maxmemory, MISCONF) and fills run; replies
 * to the caller and returns false when it may not run. */
bool gb_script_prepare(gb_scripting *sys, gb_script_run *run, gb_lua_vm *vm, gb_client *caller, const char *name,
                       uint32_t script_flags, bool ro, bool eval);

/* Fetching a script's keys into the cache before it runs, in two steps so
 * that the key-table misses overlap one another and the interpreter's
 * set-up instead of stalling each redis.call in turn: the buckets of the
 * first GB_SCRIPT_PREFETCH_KEYS keys as soon as the command is parsed,
 * their first records once the script's arguments are pushed (by then the
 * buckets have arrived). Hints only: nothing is read or changed. */
#define GB_SCRIPT_PREFETCH_KEYS 8
typedef struct gb_script_prefetch {
    struct gb_db *db;
    uint64_t hash[GB_SCRIPT_PREFETCH_KEYS];
    int n;
} gb_script_prefetch;
void gb_script_prefetch_buckets(gb_script_prefetch *pf, gb_client *caller, const gb_slice *keys, int nkeys);
void gb_script_prefetch_records(const gb_script_prefetch *pf);

/* Calls the function below its nargs arguments on the vm's stack and
 * replies to the caller with its result or error. */
void gb_script_call(gb_scripting *sys, gb_script_run *run, int nargs);

/* SCRIPT KILL (eval) / FUNCTION KILL: replies to c. */
void gb_script_kill(gb_scripting *sys, gb_client *c, bool eval);

/* Adds the redis.* API of running scripts to the table on top of L:
 * functions' (FCALL), and EVAL's, which adds replicate_commands,
 * breakpoint and debug. */
void gb_script_api_register(lua_State *L, gb_lua_vm *vm);
void gb_script_eval_api_register(lua_State *L, gb_lua_vm *vm);

/* Pushes a Lua array of the slices. */
void gb_lua_push_slices(lua_State *L, const gb_slice *v, int n);

#endif
