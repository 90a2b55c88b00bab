#include "engine/script/script_run.h"

#include <lauxlib.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/base/mem.h"
#include "engine/core/acl/acl.h"
#include "engine/core/request/gate.h"
#include "engine/core/request/propagate.h"
#include "engine/script/sha1.h"

/* ---- flags -------------------------------------------------------------------------------- */

const char *const gb_script_flag_names[5] = {"no-writes", "allow-oom", "allow-stale", "no-cluster",
                                             "allow-cross-slot-keys"};

uint32_t gb_script_flag_parse(const char *s, size_t len)
{
    for (size_t i = 0; i < GB_ARRAY_LEN(gb_script_flag_names); i++)
        if (strlen(gb_script_flag_names[i]) == len && memcmp(gb_script_flag_names[i], s, len) == 0)
            return 1u << i;
    return 0;
}

uint32_t gb_script_cmd_flags(uint32_t cmd_flags, uint32_t script_flags)
{
    if (script_flags & GB_SFLAG_EVAL_COMPAT)
        return cmd_flags;
    cmd_flags &= ~(uint32_t)(GB_CMD_STALE | GB_CMD_DENYOOM | GB_CMD_WRITE);
    /* no-writes implies allow-oom */
    if (!(script_flags & (GB_SFLAG_ALLOW_OOM | GB_SFLAG_NO_WRITES)))
        cmd_flags |= GB_CMD_DENYOOM;
    if (!(script_flags & GB_SFLAG_NO_WRITES))
        cmd_flags |= GB_CMD_WRITE;
    if (script_flags & GB_SFLAG_ALLOW_STALE)
        cmd_flags |= GB_CMD_STALE;
    /* declared flags say whether it writes: no guess that it may */
    return cmd_flags & ~(uint32_t)GB_CMD_MAY_REPLICATE;
}

/* ---- preparing and running ------------------------------------------------------------------ */

/* Redis 7.0's texts for a writing script refused by a disk error. */
static const char *misconf_for_scripts(const char *why)
{
    if (strstr(why, "AOF"))
        return "MISCONF Redis is configured to persist data to AOF, but it's currently unable to persist to disk. "
               "Writable scripts are blocked. Use 'no-writes' flag for read only scripts.";
    return "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. "
           "Writable scripts are blocked. Use 'no-writes' flag for read only scripts.";
}

bool gb_script_prepare(gb_scripting *sys, gb_script_run *run, gb_lua_vm *vm, gb_client *caller, const char *name,
                       uint32_t script_flags, bool ro, bool eval)
{
    gb_engine *eng = sys->eng;
    bool compat = script_flags & GB_SFLAG_EVAL_COMPAT;
    bool over = gb_engine_over_maxmemory(eng);
    if (!compat && (script_flags & GB_SFLAG_NO_CLUSTER) && eng->cluster) {
        gb_reply_error(caller, "ERR Can not run script on cluster, 'no-cluster' flag is set.");
        return false;
    }
    /* A replica serving no stale data while its link is down (Redis's
     * running_stale): a script without flags is refused as a command is;
     * one with flags runs only if it allows stale data. */
    if (!(caller->flags & GB_CLIENT_OBEY) && gb_gate_stale_refused(caller)) {
        if (compat) {
            gb_reply_error(caller, "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
            return false;
        }
        if (!(script_flags & GB_SFLAG_ALLOW_STALE)) {
            gb_reply_error(caller, "MASTERDOWN Link with MASTER is down, replica-serve-stale-data is set to 'no' and "
                                   "'allow-stale' flag is not set");
            return false;
        }
    }
    if (!compat && !(caller->flags & GB_CLIENT_OBEY)) {
        /* no-writes implies allow-oom */
        if (!(script_flags & (GB_SFLAG_ALLOW_OOM | GB_SFLAG_NO_WRITES)) && over) {
            gb_reply_error(caller, "OOM allow-oom flag is not set on the script, can not run it when used memory > "
                                   "'maxmemory'");
            return false;
        }
        if (!(script_flags & GB_SFLAG_NO_WRITES)) {
            const char *why = eng->service ? eng->service->write_refusal(eng->service->ctx) : NULL;
            if (why) {
                gb_reply_error(caller, misconf_for_scripts(why));
                return false;
            }
            if (ro) {
                gb_reply_error(caller, "ERR Can not execute a script with write flag using *_ro command.");
                return false;
            }
        }
    }
    memset(run, 0, sizeof *run);
    run->vm = vm;
    run->caller = caller;
    run->name = name;
    run->eval = eval;
    run->repl = GB_REPL_ALL;
    if (ro || (!compat && (script_flags & GB_SFLAG_NO_WRITES)))
        run->calls.rules |= GB_SCRIPT_READ_ONLY;
    if (!compat && (script_flags & GB_SFLAG_ALLOW_OOM))
        run->calls.rules |= GB_SCRIPT_ALLOW_OOM;
    if (over)
        run->calls.rules |= GB_SCRIPT_OOM_AT_START;
    /* a script without a shebang may mix slots, as in Redis 7.0 */
    if (compat || (script_flags & GB_SFLAG_ALLOW_CROSS_SLOT))
        run->calls.rules |= GB_SCRIPT_CROSS_SLOT;
    /* the declared keys' slot, as admission found it (-1: none declared) */
    run->calls.slot = eng->cluster ? caller->slot : -1;
    return true;
}

static void busy_hook(lua_State *L, lua_Debug *ar);

/* From now on every line raises again: pcall cannot swallow the kill. */
static void raise_killed(lua_State *L)
{
    static const char why[] = "Script killed by user with SCRIPT KILL...";
    lua_sethook(L, busy_hook, LUA_MASKLINE, 0);
    gb_lua_push_error(L, why, sizeof why - 1);
    lua_error(L);
}

/* Every GB_SCRIPT_HOOK_INSTRUCTIONS: past busy-reply-threshold, serve the
 * others (BUSY, or a kill) and stop if killed. */
static void busy_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    gb_lua_vm *vm = gb_lua_vm_of(L);
    gb_script_run *run = vm->run;
    gb_engine *eng = vm->eng;
    if (!run)
        return;
    if (run->killed || eng->shutdown_requested)
        raise_killed(L);
    if (!run->timed_out) {
        uint64_t elapsed = gb_clock_mono_ms() - run->start_ms;
        if (elapsed < (uint64_t)eng->cfg.busy_reply_threshold_ms)
            return;
        gb_log(GB_LOG_WARNING,
               "Slow script detected: still in execution after %llu milliseconds. You can try killing the script "
               "using the %s command.",
               (unsigned long long)elapsed, run->eval ? "SCRIPT KILL" : "FUNCTION KILL");
        run->timed_out = true;
        eng->script.timed_out = true;
    }
    if (eng->busy_pump.pump)
        eng->busy_pump.pump(eng->busy_pump.ctx);
    if (run->killed || eng->shutdown_requested) {
        gb_log(GB_LOG_WARNING, "Lua script killed by user with %s.", run->eval ? "SCRIPT KILL" : "FUNCTION KILL");
        raise_killed(L);
    }
}

/* The error a failed script answers (luaCallFunction): "<err> script:
 * <name>, on <source>:<line>." */
static void reply_script_error(gb_client *c, lua_State *L, const char *name)
{
    if (!lua_istable(L, -1)) {
        const char *msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
        gb_reply_errorf(c, "ERR Error running script %s, %.100s", name, msg);
        return;
    }
    /* the error of a command the script called was counted when it arose */
    lua_getfield(L, -1, "ignore_error_stats_update");
    bool counted = lua_toboolean(L, -1);
    lua_pop(L, 1);
    void (*reply)(gb_client *, const char *) = counted ? gb_reply_error_counted_already : gb_reply_error;
    lua_getfield(L, -1, "err");
    lua_getfield(L, -2, "source");
    lua_getfield(L, -3, "line");
    const char *err = lua_isstring(L, -3) ? lua_tostring(L, -3) : "ERR unknown error";
    if (lua_isstring(L, -2) && lua_isstring(L, -1)) {
        const char *src = lua_tostring(L, -2), *line = lua_tostring(L, -1);
        size_t n = strlen(err) + strlen(name) + strlen(src) + strlen(line) + 32;
        char *msg = gb_malloc(n);
        snprintf(msg, n, "%s script: %s, on %s:%s.", err, name, src, line);
        reply(c, msg);
        gb_free(msg);
    } else {
        reply(c, err);
    }
    lua_pop(L, 3);
}

/* Lua's collector gets extra steps every so many runs, so it never needs
 * a full cycle at an awkward moment (Redis's LUA_GC_CYCLE_PERIOD). */
#define GC_PERIOD 50

void gb_script_call(gb_scripting *sys, gb_script_run *run, int nargs)
{
    gb_engine *eng = sys->eng;
    gb_lua_vm *vm = run->vm;
    lua_State *L = vm->L;
    int base = lua_gettop(L) - nargs; /* the function */
    lua_pushcfunction(L, gb_lua_error_handler);
    lua_insert(L, base);
    /* The function sees the sealed globals whatever an earlier run did. */
    lua_rawgeti(L, LUA_REGISTRYINDEX, vm->proxy_ref);
    lua_setfenv(L, base + 1);

    gb_client *sc = &sys->client;
    sc->db = run->caller->db;
    sc->resp = 2;
    sc->flags = GB_CLIENT_SCRIPT | GB_CLIENT_AUTHED | (run->caller->flags & GB_CLIENT_OBEY);
    sc->user = run->caller->user; /* the commands it runs are the caller's (ACL) */
    run->start_ms = gb_clock_mono_ms();
    vm->run = run;
    sys->run = run;
    eng->script.caller = run->caller;
    eng->script.caller_argc = run->argc;
    eng->script.caller_argv = run->argv;
    eng->script.eval = run->eval;
    eng->script.timed_out = false;
    bool hooked = eng->cfg.busy_reply_threshold_ms > 0;
    if (hooked)
        lua_sethook(L, busy_hook, LUA_MASKCOUNT, GB_SCRIPT_HOOK_INSTRUCTIONS);

    int rc = gb_lua_vm_pcall(vm, nargs, 1, base);
    if (rc != 0)
        reply_script_error(run->caller, L, run->name);
    else
        gb_lua_reply(run->caller, L, sc->resp);

    if (hooked)
        lua_sethook(L, NULL, 0, 0);
    lua_settop(L, base - 1);
    gb_lua_vm_reset_env(vm);
    vm->run = NULL;
    sys->run = NULL;
    /* SHUTDOWN NOSAVE stopped it: the server exits and, as in Redis, the
     * log never sees the half-run script. */
    if (run->timed_out && eng->shutdown_requested)
        gb_propagate_discard(eng);
    memset(&eng->script, 0, sizeof eng->script);
    /* Lua 5.1 has no emergency collection: after running out, the garbage
     * of the failed script is collected now, not left for the next one. */
    if (rc == LUA_ERRMEM) {
        lua_gc(L, LUA_GCCOLLECT, 0);
        sys->runs_since_gc = 0;
    } else if (++sys->runs_since_gc == GC_PERIOD) {
        lua_gc(L, LUA_GCSTEP, GC_PERIOD);
        sys->runs_since_gc = 0;
    }
}

void gb_script_prefetch_buckets(gb_script_prefetch *pf, gb_client *caller, const gb_slice *keys, int nkeys)
{
    pf->db = caller->db;
    pf->n = GB_MIN(nkeys, GB_SCRIPT_PREFETCH_KEYS);
    for (int i = 0; i < pf->n; i++)
        pf->hash[i] = gb_db_prefetch_key(pf->db, keys[i]);
}

void gb_script_prefetch_records(const gb_script_prefetch *pf)
{
    for (int i = 0; i < pf->n; i++)
        gb_db_prefetch_chain(pf->db, pf->hash[i]);
}

void gb_script_kill(gb_scripting *sys, gb_client *c, bool eval)
{
    gb_script_run *run = sys->run;
    if (!run) {
        gb_reply_error(c, "NOTBUSY No scripts in execution right now.");
        return;
    }
    if (run->calls.wrote) {
        gb_reply_error(c, "UNKILLABLE Sorry the script already executed write commands against the dataset. You can "
                          "either wait the script termination or kill the server in a hard way using the SHUTDOWN "
                          "NOSAVE command.");
        return;
    }
    if (eval != run->eval) {
        gb_reply_error(c, eval ? GB_ERR_BUSY_FUNCTION : GB_ERR_BUSY_EVAL);
        return;
    }
    run->killed = true;
    gb_reply_ok(c);
}

/* ---- the redis.* API -------------------------------------------------------------------- */

/* Redis's (int) cast of a Lua number, as its x86-64 build computes it:
 * truncation, and INT_MIN for NaN and anything out of range (which C
 * leaves undefined: redis.setresp(2^200) must not be). */
static int number_to_int(lua_Number v)
{
    return v > -2147483649.0 && v < 2147483648.0 ? (int)v : INT_MIN;
}

static int raise_error(lua_State *L, const char *err)
{
    gb_lua_push_error(L, err, strlen(err));
    return lua_error(L);
}

static gb_lua_vm *api_vm(lua_State *L) { return lua_touserdata(L, lua_upvalueindex(1)); }

/* Arguments of a redis.call as slices: strings as they are, numbers as
 * %.17g (Lua's own conversion loses precision). Returns false when one is
 * neither. nums holds the numbers' text (32 bytes each). */
static bool args_to_slices(lua_State *L, int argc, gb_slice *argv, char *nums)
{
    for (int i = 0; i < argc; i++) {
        int t = lua_type(L, i + 1);
        if (t == LUA_TNUMBER) {
            char *p = nums + 32 * i;
            int n = snprintf(p, 32, "%.17g", (double)lua_tonumber(L, i + 1));
            argv[i] = gb_slice_make(p, (size_t)n);
        } else if (t == LUA_TSTRING) {
            size_t len;
            const char *s = lua_tolstring(L, i + 1, &len);
            argv[i] = gb_slice_make(s, len);
        } else {
            return false;
        }
    }
    return true;
}

/* Runs the command; its reply is pushed as a Lua value. Returns the error
 * text when the gate refused it (nothing pushed). */
static const char *run_command(gb_lua_vm *vm, int argc, gb_slice *argv)
{
    gb_scripting *sys = gb_scripting_of(vm->eng);
    gb_script_run *run = vm->run;
    gb_engine *eng = vm->eng;
    gb_client *sc = &sys->client;
    gb_lua_sink_begin(&sys->sink, vm->L, sc->resp);
    sc->rops = &gb_lua_sink_ops;
    sc->rctx = &sys->sink;
    size_t mark = eng->prop.npending;
    run->in_call = true;
    vm->in_command = true;
    const char *err = gb_gate_script_call(sc, argc, argv, &run->calls);
    vm->in_command = false;
    run->in_call = false;
    if (run->repl != GB_REPL_ALL) /* redis.set_repl: only where it says */
        gb_propagate_target_since(eng, mark, (run->repl & GB_REPL_AOF ? GB_PROP_AOF : 0u) |
                                                 (run->repl & GB_REPL_REPLICA ? GB_PROP_REPL : 0u));
    if (!err && sys->sink.values == 0)
        lua_pushboolean(vm->L, 0);
    return err;
}

static int redis_call_generic(lua_State *L, bool raise)
{
    gb_lua_vm *vm = api_vm(L);
    gb_script_run *run = vm->run;
    if (!run)
        return raise_error(L, "redis.call/pcall can only be called inside a script invocation");
    int argc = lua_gettop(L);
    if (argc == 0) {
        static const char e[] = "Please specify at least one argument for this redis lib call";
        gb_lua_push_error(L, e, sizeof e - 1);
        return raise ? lua_error(L) : 1;
    }
    if (run->in_call) {
        const char *w = "luaRedisGenericCommand() recursive call detected. Are you doing funny stuff with Lua debug "
                        "hooks?";
        gb_log(GB_LOG_WARNING, "%s", w);
        gb_lua_push_error(L, w, strlen(w));
        return 1;
    }
    gb_slice vstack[16];
    char nstack[16 * 32];
    gb_slice *argv = argc <= 16 ? vstack : gb_malloc((size_t)argc * sizeof *argv);
    char *nums = argc <= 16 ? nstack : gb_malloc((size_t)argc * 32);
    bool args_ok = args_to_slices(L, argc, argv, nums);
    const char *err = args_ok ? run_command(vm, argc, argv) : NULL;
    if (argv != vstack) {
        gb_free(argv);
        gb_free(nums);
    }
    if (!args_ok) { /* Redis's luaArgsToRedisArgv: a plain error, not one the command counted */
        static const char e[] = "Lua redis lib command arguments must be strings or integers";
        gb_lua_push_error(L, e, sizeof e - 1);
        return raise ? lua_error(L) : 1;
    }
    if (err) {
        size_t len = strlen(err);
        char buf[512];
        snprintf(buf, sizeof buf, "-%s", err);
        gb_lua_push_error(L, buf, GB_MIN(len + 1, sizeof buf - 1));
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "ignore_error_stats_update");
        return raise ? lua_error(L) : 1;
    }
    gb_scripting *sys = gb_scripting_of(vm->eng);
    if (raise && sys->sink.error)
        return lua_error(L);
    return 1;
}

static int api_call(lua_State *L) { return redis_call_generic(L, true); }
static int api_pcall(lua_State *L) { return redis_call_generic(L, false); }

static int api_sha1hex(lua_State *L)
{
    if (lua_gettop(L) != 1)
        return raise_error(L, "wrong number of arguments");
    size_t len;
    const char *s = lua_tolstring(L, 1, &len);
    char hex[41];
    gb_sha1_hex(s ? s : "", s ? len : 0, hex);
    lua_pushstring(L, hex);
    return 1;
}

static int api_error_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        gb_lua_push_error(L, "wrong number or type of arguments", 33);
        return 1;
    }
    size_t len;
    const char *e = lua_tolstring(L, -1, &len);
    if (len && e[0] == '-') {
        gb_lua_push_error(L, e, len);
        return 1;
    }
    lua_pushliteral(L, "-");
    lua_pushvalue(L, 1);
    lua_concat(L, 2);
    e = lua_tolstring(L, -1, &len);
    gb_lua_push_error(L, e, len);
    return 1;
}

static int api_status_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        gb_lua_push_error(L, "wrong number or type of arguments", 33);
        return 1;
    }
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, "ok");
    return 1;
}

static int api_log(lua_State *L)
{
    int argc = lua_gettop(L);
    if (argc < 2)
        return raise_error(L, "redis.log() requires two arguments or more.");
    if (!lua_isnumber(L, 1))
        return raise_error(L, "First argument must be a number (log level).");
    int level = number_to_int(lua_tonumber(L, 1));
    if (level < GB_LOG_DEBUG || level > GB_LOG_WARNING)
        return raise_error(L, "Invalid debug level.");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int j = 2, first = 1; j <= argc; j++) {
        size_t len;
        const char *s = lua_tolstring(L, j, &len);
        if (!s)
            continue;
        if (!first)
            luaL_addchar(&b, ' ');
        luaL_addlstring(&b, s, len);
        first = 0;
    }
    luaL_pushresult(&b);
    gb_log(level, "%s", lua_tostring(L, -1));
    return 0;
}

static int api_setresp(lua_State *L)
{
    gb_lua_vm *vm = api_vm(L);
    if (!vm->run)
        return raise_error(L, "redis.setresp can only be called inside a script invocation");
    if (lua_gettop(L) != 1)
        return raise_error(L, "redis.setresp() requires one argument.");
    int resp = number_to_int(lua_tonumber(L, 1));
    if (resp != 2 && resp != 3)
        return raise_error(L, "RESP version must be 2 or 3.");
    gb_scripting_of(vm->eng)->client.resp = resp;
    return 0;
}

static int api_set_repl(lua_State *L)
{
    gb_lua_vm *vm = api_vm(L);
    if (!vm->run)
        return raise_error(L, "redis.set_repl can only be called inside a script invocation");
    if (lua_gettop(L) != 1)
        return raise_error(L, "redis.set_repl() requires two arguments.");
    int flags = number_to_int(lua_tonumber(L, -1));
    if (flags & ~GB_REPL_ALL)
        return raise_error(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
    vm->run->repl = flags;
    return 0;
}

static int api_replicate_commands(lua_State *L)
{
    lua_pushboolean(L, 1); /* Redis 7: effects are always what replicates */
    return 1;
}

/* The debugger (SCRIPT DEBUG) does not exist: outside it Redis answers
 * breakpoint() with false and debug() with nothing. */
static int api_breakpoint(lua_State *L)
{
    lua_pushboolean(L, 0);
    return 1;
}

static int api_debug(lua_State *L)
{
    (void)L;
    return 0;
}

/* redis.acl_check_cmd: whether the user who ran the script may run the
 * command with these arguments (Redis's ACLCheckAllUserCommandPerm: the
 * rules only, nothing logged). */
static int api_acl_check_cmd(lua_State *L)
{
    gb_lua_vm *vm = api_vm(L);
    if (!vm->run)
        return raise_error(L, "redis.acl_check_cmd can only be called inside a script invocation");
    int argc = lua_gettop(L);
    if (argc == 0)
        return raise_error(L, "Please specify at least one argument for this redis lib call");
    gb_slice *argv = gb_malloc((size_t)argc * sizeof *argv);
    char *nums = gb_malloc((size_t)argc * 32);
    int verdict = -1; /* -1: not a command */
    bool strings = args_to_slices(L, argc, argv, nums);
    if (strings) {
        gb_command *cmd = gb_command_lookup(vm->eng, argv[0]);
        /* Redis 7's lookupCommand: a container's subcommand, or nothing */
        if (cmd && gb_command_is_container(cmd) && argc >= 2)
            cmd = gb_subcommand_lookup(cmd, argv[1]);
        int argpos = 0;
        if (cmd)
            verdict = gb_acl_check(vm->run->caller, cmd, argc, argv, &argpos) == GB_ACL_ALLOWED;
    }
    gb_free(argv);
    gb_free(nums);
    if (!strings)
        return raise_error(L, "Lua redis lib command arguments must be strings or integers");
    if (verdict < 0)
        return raise_error(L, "Invalid command passed to redis.acl_check_cmd()");
    lua_pushboolean(L, verdict);
    return 1;
}

static void set_number(lua_State *L, const char *name, lua_Number v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, name);
}

static void add_api(lua_State *L, gb_lua_vm *vm, const luaL_Reg *fns, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        lua_pushlightuserdata(L, vm);
        lua_pushcclosure(L, fns[i].func, 1);
        lua_setfield(L, -2, fns[i].name);
    }
}

void gb_script_eval_api_register(lua_State *L, gb_lua_vm *vm)
{
    /* EVAL's own (Redis 7.0's scriptingInit): functions never see them */
    static const luaL_Reg fns[] = {
        {"replicate_commands", api_replicate_commands},
        {"breakpoint", api_breakpoint},
        {"debug", api_debug},
    };
    gb_script_api_register(L, vm);
    add_api(L, vm, fns, GB_ARRAY_LEN(fns));
}

void gb_script_api_register(lua_State *L, gb_lua_vm *vm)
{
    static const luaL_Reg fns[] = {
        {"call", api_call},
        {"pcall", api_pcall},
        {"sha1hex", api_sha1hex},
        {"error_reply", api_error_reply},
        {"status_reply", api_status_reply},
        {"log", api_log},
        {"setresp", api_setresp},
        {"set_repl", api_set_repl},
        {"acl_check_cmd", api_acl_check_cmd},
    };
    add_api(L, vm, fns, GB_ARRAY_LEN(fns));
    set_number(L, "LOG_DEBUG", GB_LOG_DEBUG);
    set_number(L, "LOG_VERBOSE", GB_LOG_VERBOSE);
    set_number(L, "LOG_NOTICE", GB_LOG_NOTICE);
    set_number(L, "LOG_WARNING", GB_LOG_WARNING);
    set_number(L, "REPL_NONE", GB_REPL_NONE);
    set_number(L, "REPL_AOF", GB_REPL_AOF);
    set_number(L, "REPL_SLAVE", GB_REPL_REPLICA);
    set_number(L, "REPL_REPLICA", GB_REPL_REPLICA);
    set_number(L, "REPL_ALL", GB_REPL_ALL);
    lua_pushliteral(L, GB_SCRIPT_REDIS_VERSION);
    lua_setfield(L, -2, "REDIS_VERSION");
    set_number(L, "REDIS_VERSION_NUM", GB_SCRIPT_REDIS_VERSION_NUM);
}

void gb_lua_push_slices(lua_State *L, const gb_slice *v, int n)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushlstring(L, v[i].ptr, v[i].len);
        lua_rawseti(L, -2, i + 1);
    }
}
