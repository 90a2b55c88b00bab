/*
 * MODULE: HELP, LIST, LOAD, LOADEX, UNLOAD, as Redis 7.0 answers them
 * with no module loaded.
 *
 * goblin-core loads no Redis modules: a module is a shared library built
 * against Redis's own internals (its RedisModule_* API reaches into
 * Redis's objects, keyspace and event loop), so there is nothing here it
 * could run against. What clients ask of MODULE still gets Redis's
 * answers: LIST an empty list (client libraries and tools such as
 * RedisInsight ask it at connection time to find RedisJSON or
 * RediSearch), UNLOAD "no such module", and LOAD and LOADEX, where
 * enable-module-command lets the client run them at all (the gate,
 * engine/core/request/gate.c), the error of a load that failed, with the
 * reason in the log as Redis logs it. The library named is never opened.
 * The `loadmodule` directive stops the server at start-up, as a failed
 * load stops Redis (engine/core/config/config.c).
 */
#include "engine/commands/cmd_util.h"
#include "engine/core/engine.h"

static void module_help(gb_client *c)
{
    static const char *const lines[] = {
        "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LIST",
        "    Return a list of loaded modules.",
        "LOAD <path> [<arg> ...]",
        "    Load a module library from <path>, passing to it any optional arguments.",
        "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
        "    Load a module library from <path>, while passing it module configurations and optional arguments.",
        "UNLOAD <name>",
        "    Unload a module.",
        "HELP",
        "    Prints this help.",
    };
    gb_reply_help(c, lines, GB_ARRAY_LEN(lines));
}

/* Redis logs why a load failed and answers the same error whatever it
 * was; the path is the client's bytes, logged with a bound. */
static void module_load_fails(gb_client *c, gb_slice path)
{
    gb_log(GB_LOG_WARNING, "Module %.*s failed to load: goblin-core does not load Redis modules",
           (int)GB_MIN(path.len, 1024), path.ptr);
    gb_reply_error(c, "ERR Error loading the extension. Please check the server logs.");
}

static void cmd_module(gb_client *c, int argc, gb_slice *argv)
{
    gb_slice sub = argv[1];
    if (gb_slice_ieq(sub, "help") && argc == 2)
        module_help(c);
    else if ((gb_slice_ieq(sub, "load") || gb_slice_ieq(sub, "loadex")) && argc >= 3)
        module_load_fails(c, argv[2]);
    else if (gb_slice_ieq(sub, "unload") && argc == 3)
        gb_reply_error(c, "ERR Error unloading module: no such module with that name");
    else if (gb_slice_ieq(sub, "list") && argc == 2)
        gb_reply_array(c, 0);
    else
        gb_reply_unknown_subcommand(c, sub, "module");
}

GB_DEFINE_COMMANDS(module,
    {"module", cmd_module, GB_CMD_PROTECTED, NULL, "load loadex unload"});
