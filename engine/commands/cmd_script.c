/*
 * EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT, FCALL, FCALL_RO, FUNCTION:
 * argument parsing and replies over engine/script (docs/scripting.md).
 */
#include <stdio.h>

#include "engine/core/request/command.h"
#include "engine/core/engine.h"
#include "engine/core/request/propagate.h"
#include "engine/script/script_eval.h"
#include "engine/script/script_func.h"
#include "engine/script/script_run.h"

static gb_scripting *sys_of(gb_client *c) { return gb_scripting_of(c->eng); }

/* [ASYNC|SYNC] of SCRIPT FLUSH / FUNCTION FLUSH. Freeing is synchronous
 * either way: a script cache or a library set is small next to a dataset. */
static bool flush_mode_ok(int argc, gb_slice *argv)
{
    return argc == 2 || gb_slice_ieq(argv[2], "async") || gb_slice_ieq(argv[2], "sync");
}

/* ---- EVAL ------------------------------------------------------------------------------ */

static void cmd_eval(gb_client *c, int argc, gb_slice *argv) { gb_eval_command(sys_of(c), c, argc, argv, false, false); }
static void cmd_eval_ro(gb_client *c, int argc, gb_slice *argv) { gb_eval_command(sys_of(c), c, argc, argv, false, true); }
static void cmd_evalsha(gb_client *c, int argc, gb_slice *argv) { gb_eval_command(sys_of(c), c, argc, argv, true, false); }
static void cmd_evalsha_ro(gb_client *c, int argc, gb_slice *argv) { gb_eval_command(sys_of(c), c, argc, argv, true, true); }

static void cmd_script(gb_client *c, int argc, gb_slice *argv)
{
    /* The gate resolved the subcommand (one of the definition's list) and
     * checked its arity. */
    gb_scripting *sys = sys_of(c);
    gb_slice n = argv[1];
    if (gb_slice_ieq(n, "load")) {
        gb_eval_script_load(sys, c, argv[2]);
    } else if (gb_slice_ieq(n, "exists")) {
        gb_reply_array(c, argc - 2);
        for (int i = 2; i < argc; i++)
            gb_reply_int(c, gb_eval_script_exists(sys, argv[i]) ? 1 : 0);
    } else if (gb_slice_ieq(n, "flush")) {
        if (argc > 3 || !flush_mode_ok(argc, argv)) {
            gb_reply_error(c, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
            return;
        }
        gb_eval_script_flush(sys);
        gb_reply_ok(c);
    } else if (gb_slice_ieq(n, "kill")) {
        gb_script_kill(sys, c, true);
    } else if (gb_slice_ieq(n, "debug")) {
        /* The Lua debugger (LDB) is not built: debugging can only be off. */
        if (gb_slice_ieq(argv[2], "no"))
            gb_reply_ok(c);
        else if (gb_slice_ieq(argv[2], "yes") || gb_slice_ieq(argv[2], "sync"))
            gb_reply_error(c, "ERR SCRIPT DEBUG is not available in Goblin Core: the Lua debugger is not built");
        else
            gb_reply_error(c, "ERR Use SCRIPT DEBUG YES/SYNC/NO");
    } else {
        static const char *const lines[] = {
            "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "DEBUG (YES|SYNC|NO)",
            "    Set the debug mode for subsequent scripts executed.",
            "EXISTS <sha1> [<sha1> ...]",
            "    Return information about the existence of the scripts in the script cache.",
            "FLUSH [ASYNC|SYNC]",
            "    Flush the Lua scripts cache. Very dangerous on replicas.",
            "    When called without the optional mode argument, the behavior is determined by the",
            "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
            "    * ASYNC: Asynchronously flush the scripts cache.",
            "    * SYNC: Synchronously flush the scripts cache.",
            "KILL",
            "    Kill the currently executing Lua script.",
            "LOAD <script>",
            "    Load a script into the scripts cache without executing it.",
            "HELP",
            "    Prints this help.",
        };
        gb_reply_help(c, lines, GB_ARRAY_LEN(lines));
    }
}

/* ---- functions --------------------------------------------------------------------------- */

static void cmd_fcall(gb_client *c, int argc, gb_slice *argv) { gb_functions_fcall(sys_of(c), c, argc, argv, false); }
static void cmd_fcall_ro(gb_client *c, int argc, gb_slice *argv) { gb_functions_fcall(sys_of(c), c, argc, argv, true); }

/* A change to the libraries is a write: the log replays the command as it
 * was given (Redis propagates FUNCTION LOAD/DELETE/FLUSH/RESTORE as
 * themselves). */
static void libraries_changed(gb_client *c, int argc, gb_slice *argv)
{
    c->eng->stats.dirty++;
    if (gb_propagating(&c->eng->prop))
        gb_propagate_command(c, argc, argv);
}

static void function_list(gb_client *c, int argc, gb_slice *argv)
{
    bool with_code = false;
    const gb_slice *pattern = NULL;
    for (int j = 2; j < argc; j++) {
        if (!with_code && gb_slice_ieq(argv[j], "withcode")) {
            with_code = true;
        } else if (!pattern && gb_slice_ieq(argv[j], "libraryname")) {
            if (j + 1 >= argc) {
                gb_reply_error(c, "ERR library name argument was not given");
                return;
            }
            pattern = &argv[++j];
        } else {
            gb_reply_errorf(c, "ERR Unknown argument %.*s", (int)GB_MIN(argv[j].len, 128), argv[j].ptr);
            return;
        }
    }
    gb_functions_list(sys_of(c), c, with_code, pattern);
}

/* Redis's addReplySubcommandSyntaxError for a FUNCTION subcommand. */
static void reply_function_syntax(gb_client *c, gb_slice sub)
{
    gb_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try FUNCTION HELP.",
                    (int)GB_MIN(sub.len, 128), sub.ptr);
}

static void function_restore(gb_client *c, int argc, gb_slice *argv)
{
    if (argc > 4) {
        reply_function_syntax(c, argv[1]);
        return;
    }
    char policy = 'A';
    if (argc == 4) {
        if (gb_slice_ieq(argv[3], "flush"))
            policy = 'F';
        else if (gb_slice_ieq(argv[3], "append"))
            policy = 'A';
        else if (gb_slice_ieq(argv[3], "replace"))
            policy = 'R';
        else
            policy = 0;
    }
    if (!policy) {
        gb_reply_error(c, "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
        return;
    }
    if (gb_functions_restore(sys_of(c), c, argv[2], policy))
        libraries_changed(c, argc, argv);
}

static const char *const function_help[] = {
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    /* one line of Redis's help, split for width (parentheses: one element) */
    ("    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE "
     "command"),
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
};

static void cmd_function(gb_client *c, int argc, gb_slice *argv)
{
    /* The gate resolved the subcommand (one of the definition's list) and
     * checked its arity. */
    gb_scripting *sys = sys_of(c);
    gb_slice n = argv[1];
    if (gb_slice_ieq(n, "load")) {
        /* every argument before the code an option: REPLACE, as often as given */
        bool replace = false;
        for (int i = 2; i < argc - 1; i++) {
            if (!gb_slice_ieq(argv[i], "replace")) {
                gb_reply_errorf(c, "ERR Unknown option given: %.*s", (int)GB_MIN(argv[i].len, 128), argv[i].ptr);
                return;
            }
            replace = true;
        }
        if (gb_functions_load_command(sys, c, argv[argc - 1], replace))
            libraries_changed(c, argc, argv);
    } else if (gb_slice_ieq(n, "delete")) {
        if (!gb_functions_delete(sys, argv[2])) {
            gb_reply_error(c, "ERR Library not found");
            return;
        }
        gb_reply_ok(c);
        libraries_changed(c, argc, argv);
    } else if (gb_slice_ieq(n, "flush")) {
        if (argc > 3) {
            reply_function_syntax(c, argv[1]);
            return;
        }
        if (!flush_mode_ok(argc, argv)) {
            gb_reply_error(c, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
            return;
        }
        gb_functions_flush(sys);
        gb_reply_ok(c);
        libraries_changed(c, argc, argv);
    } else if (gb_slice_ieq(n, "list")) {
        function_list(c, argc, argv);
    } else if (gb_slice_ieq(n, "dump")) {
        gb_functions_dump(sys, c);
    } else if (gb_slice_ieq(n, "restore")) {
        function_restore(c, argc, argv);
    } else if (gb_slice_ieq(n, "stats")) {
        gb_functions_stats(sys, c);
    } else if (gb_slice_ieq(n, "kill")) {
        gb_script_kill(sys, c, false);
    } else {
        gb_reply_help(c, function_help, GB_ARRAY_LEN(function_help));
    }
}

/* GB_CMD_RUNS_SCRIPT (the engine's own) makes admission ask the
 * script's declared flags. EVAL, EVALSHA and FCALL may replicate (Redis's
 * MAY_REPLICATE: CLIENT PAUSE WRITE holds them, MONITOR may not run
 * them) unless their script declares flags, which then say. */
GB_DEFINE_COMMANDS(script,
    {"eval", cmd_eval, GB_CMD_RUNS_SCRIPT | GB_CMD_MAY_REPLICATE},
    {"eval_ro", cmd_eval_ro, GB_CMD_RUNS_SCRIPT},
    {"evalsha", cmd_evalsha, GB_CMD_RUNS_SCRIPT | GB_CMD_MAY_REPLICATE},
    {"evalsha_ro", cmd_evalsha_ro, GB_CMD_RUNS_SCRIPT},
    {"script", cmd_script, 0, "debug exists flush help kill load"},
    {"fcall", cmd_fcall, GB_CMD_RUNS_SCRIPT | GB_CMD_MAY_REPLICATE},
    {"fcall_ro", cmd_fcall_ro, GB_CMD_RUNS_SCRIPT},
    {"function", cmd_function, 0, "delete dump flush help kill list load restore stats"});
