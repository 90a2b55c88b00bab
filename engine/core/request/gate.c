#include "engine/core/request/gate.h"
#include "engine/core/replication/replica.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/core/acl/acl.h"
#include "engine/core/request/blocking.h"
#include "engine/core/memory/evict.h"
#include "engine/core/cluster_mode.h"
#include "engine/core/engine.h"
#include "engine/core/introspect/monitor.h"
#include "engine/core/request/multi.h"
#include "engine/core/request/propagate.h"
#include "engine/core/replication/repl.h"
#include "engine/core/pubsub/tracking.h"

/* ---- argument vectors built from native values ------------------------------------ */

void gb_argv_init(gb_argv_builder *b, size_t nslices, size_t nnums)
{
    b->n = 0;
    b->used = 0;
    b->v = nslices <= GB_ARRAY_LEN(b->vstack) ? b->vstack : gb_malloc(nslices * sizeof *b->v);
    b->num = nnums * GB_ARGV_NUM_ROOM <= sizeof b->numstack ? b->numstack : gb_malloc(nnums * GB_ARGV_NUM_ROOM);
}

void gb_argv_free(gb_argv_builder *b)
{
    if (b->v != b->vstack)
        gb_free(b->v);
    if (b->num != b->numstack)
        gb_free(b->num);
    b->v = NULL;
    b->num = NULL;
}

void gb_argv_ll(gb_argv_builder *b, int64_t v)
{
    char *p = b->num + b->used;
    int k = snprintf(p, GB_ARGV_NUM_ROOM, "%lld", (long long)v);
    gb_argv_add(b, gb_slice_make(p, (size_t)k));
    b->used += (size_t)k;
}

void gb_argv_text(gb_argv_builder *b, const char *s, size_t len)
{
    char *p = b->num + b->used;
    memcpy(p, s, len);
    gb_argv_add(b, gb_slice_make(p, len));
    b->used += len;
}

size_t gb_format_double_arg(char *p, double v)
{
    /* inf/-inf/nan come out as the words the text parsers accept or reject
     * exactly as they would from a RESP client. */
    int k = 0;
    for (int prec = 15; prec <= 17; prec++) {
        k = snprintf(p, GB_ARGV_NUM_ROOM, "%.*g", prec, v);
        if (isnan(v) || strtod(p, NULL) == v)
            break;
    }
    return (size_t)k;
}

void gb_argv_dbl(gb_argv_builder *b, double v)
{
    char *p = b->num + b->used;
    size_t k = gb_format_double_arg(p, v);
    gb_argv_add(b, gb_slice_make(p, k));
    b->used += k;
}

/* ---- the call ------------------------------------------------------------------------ */

/* The state one call saves on entry and restores on exit, so that calls
 * nest (EXEC's queue, scripts). */
typedef struct call_frame {
    gb_call_stats stats;
    uint64_t dirty;
    bool explicit_effect;
} call_frame;

static inline call_frame frame_open(gb_client *c, gb_command *cmd)
{
    gb_engine *eng = c->eng;
    call_frame f = {gb_call_begin(eng, cmd), eng->stats.dirty, eng->prop.explicit_effect};
    f.stats.served = (c->flags & GB_CLIENT_REEXEC) != 0;
    eng->prop.explicit_effect = false;
    /* CLIENT LIST's cmd= names what the client sent: not the commands its
     * EXEC runs (Redis's lastcmd stays "exec"). */
    if (eng->prop.depth++ == 0)
        c->last_cmd = cmd;
    return f;
}

/* Undoes frame_open for a call that did not run (a typed call handing over
 * to its RESP form): nothing is counted. */
static inline void frame_abandon(gb_client *c, call_frame f)
{
    c->eng->prop.depth--;
    c->eng->prop.explicit_effect = f.explicit_effect;
}

/* Whether the call that ran since frame_open needs its argument vector
 * recorded as its effect: something listens, the command is a write, it
 * changed the dataset and chose no effect of its own. */
static inline bool wants_default_effect(const gb_engine *eng, const gb_command *cmd, call_frame f)
{
    return GB_UNLIKELY(gb_propagating(&eng->prop)) && eng->stats.dirty != f.dirty && !eng->prop.explicit_effect &&
           (cmd->flags & GB_CMD_WRITE);
}

/* Redis's slowlogPushCurrentCommand, for a call that took long enough (a
 * blocked one is not done yet: it is logged when it is served). */
static inline bool slow_enough(const gb_client *c, int64_t duration_us)
{
    long long threshold = c->eng->cfg.slowlog_log_slower_than;
    return GB_UNLIKELY(threshold >= 0 && duration_us >= threshold) && !(c->flags & GB_CLIENT_BLOCKED);
}

/* The argument vector of the call closing, for the slow log: the RESP
 * one, or the typed call's built on demand (a call that took long enough
 * is rare). */
typedef struct call_args {
    int argc;
    gb_slice *argv;
    const gb_typed_call *typed;
    void *typed_args;
} call_args;

static void slowlog_call(gb_client *c, gb_command *cmd, const call_args *a, int64_t duration_us)
{
    if (!a->typed) {
        gb_slowlog_push(c->eng, c, cmd, a->argc, a->argv, duration_us);
        return;
    }
    gb_argv_builder b;
    a->typed->to_argv(a->typed_args, &b);
    gb_slowlog_push(c->eng, c, cmd, b.n, b.v, duration_us);
    gb_argv_free(&b);
}

/* Statistics and the slow log (as Redis's call(): before the clients the
 * command unblocked run); then, at the outermost call, the unit's effects
 * go to the sinks and the clients whose keys became ready are served
 * (Redis's handleClientsBlockedOnKeys, after the whole command or EXEC). */
static inline void frame_close(gb_client *c, gb_command *cmd, call_frame f, const call_args *a)
{
    gb_engine *eng = c->eng;
    int64_t duration_us = gb_call_end(eng, cmd, f.stats);
    if (slow_enough(c, duration_us))
        slowlog_call(c, cmd, a, duration_us);
    eng->prop.explicit_effect = f.explicit_effect;
    if (--eng->prop.depth == 0) {
        if (GB_UNLIKELY(eng->prop.npending))
            gb_propagate_flush(eng);
        gb_repl_note_client_offset(c);
        if (eng->nready && !eng->serving_ready)
            gb_blocking_serve_ready(eng);
        if (GB_UNLIKELY(eng->tracking != NULL))
            gb_tracking_after_command(eng);
        if (GB_UNLIKELY(eng->pause_lifted))
            gb_pause_resume(eng);
    }
}

/* What happens after a command ran, besides its effects: MONITOR's line
 * (not for a command re-run after a wake-up, shown when it first ran),
 * and the keys a tracking client read. As in Redis's call(): a read-only
 * command a script runs counts for the script's caller, with the keys
 * the caller's EVAL or FCALL declares; EVAL_RO, EVALSHA_RO and FCALL_RO
 * count only through the commands their script runs. */
static void after_call(gb_client *c, gb_command *cmd, int argc, gb_slice *argv)
{
    gb_engine *eng = c->eng;
    if (eng->nmonitors && !(c->flags & GB_CLIENT_REEXEC))
        gb_monitor_feed(c, cmd, argc, argv);
    if ((cmd->flags & (GB_CMD_READONLY | GB_CMD_RUNS_SCRIPT)) != GB_CMD_READONLY)
        return;
    if (c->flags & GB_CLIENT_TRACKING) {
        gb_tracking_remember(c, cmd, argc, argv);
    } else if ((c->flags & GB_CLIENT_SCRIPT) && eng->script.caller && (eng->script.caller->flags & GB_CLIENT_TRACKING) &&
               eng->script.caller->last_cmd) {
        gb_client *caller = eng->script.caller;
        gb_tracking_remember(caller, caller->last_cmd, eng->script.caller_argc, eng->script.caller_argv);
    }
}

void gb_gate_call(gb_client *c, gb_command *cmd, int argc, gb_slice *argv)
{
    call_frame f = frame_open(c, cmd);
    if (GB_UNLIKELY(c->eng->nmonitors) && (cmd->flags & GB_CMD_RUNS_SCRIPT) && !(c->flags & GB_CLIENT_REEXEC))
        gb_monitor_feed_always(c, cmd, argc, argv);
    cmd->def->proc(c, argc, argv);
    if (wants_default_effect(c->eng, cmd, f))
        gb_propagate_record(c->eng, c->db->id, argc, argv);
    if (GB_UNLIKELY(c->eng->nmonitors || (c->flags & GB_CLIENT_TRACKING) ||
                    ((c->flags & GB_CLIENT_SCRIPT) && c->eng->tracking)))
        after_call(c, cmd, argc, argv);
    call_args a = {argc, argv, NULL, NULL};
    frame_close(c, cmd, f, &a);
}

/* ---- admission ----------------------------------------------------------------------- */

static bool is_exec(const gb_command *cmd) { return cmd->def->proc == gb_multi_exec_proc; }

/* Redis's rejectCommand: the error reply, and inside MULTI the transaction
 * is flagged to abort; a rejected EXEC aborts it now, saying why. err is the
 * error text as Redis replies it ("ERR ..." or "NOAUTH ..."); EXECABORT
 * quotes it without the generic "ERR " prefix, as Redis's
 * execCommandAbort does. */
static void reject(gb_client *c, gb_command *cmd, const char *err)
{
    if (cmd)
        cmd->rejected_calls++;
    if (cmd && is_exec(cmd)) {
        const char *why = strncmp(err, "ERR ", 4) == 0 ? err + 4 : err;
        gb_reply_errorf(c, "EXECABORT Transaction discarded because of: %s", why);
        gb_multi_discard(c);
        gb_multi_unwatch_all(c);
        return;
    }
    gb_reply_error(c, err);
    if (c->flags & GB_CLIENT_MULTI)
        c->flags |= GB_CLIENT_DIRTY_EXEC;
}

/* Redis's "unknown command" text quotes the first arguments, up to 128
 * bytes in all. */
static void reject_unknown(gb_client *c, int argc, gb_slice *argv)
{
    char args[512];
    size_t used = 0;
    args[0] = '\0';
    for (int i = 1; i < argc && used < 128; i++) {
        int room = 128 - (int)used;
        int n = snprintf(args + used, sizeof args - used, "'%.*s' ", (int)GB_MIN(argv[i].len, (size_t)room),
                         argv[i].ptr);
        if (n < 0)
            break;
        used += (size_t)n;
        if (used >= sizeof args)
            used = sizeof args - 1;
    }
    char err[768];
    snprintf(err, sizeof err, "ERR unknown command '%.*s', with args beginning with: %s", (int)GB_MIN(argv[0].len, 128),
             argv[0].ptr, args);
    reject(c, NULL, err);
}

/* Redis 7.0's memory rule (processCommand): with maxmemory set, every
 * command first evicts what the policy allows (engine/core/memory/evict.h); still
 * over the limit, refuse a command that may grow memory; inside MULTI
 * refuse everything but EXEC, DISCARD, QUIT and RESET (a nested MULTI or
 * a WATCH too), because queueing itself consumes memory; refuse an EXEC
 * whose transaction holds a command that may grow memory. */
static bool refused_for_memory(const gb_client *c, const gb_command *cmd, uint32_t flags)
{
    if (gb_evict_perform(c->eng) != GB_EVICT_FAIL)
        return false;
    if ((flags & GB_CMD_DENYOOM) || (is_exec(cmd) && (c->mcmd_flags & GB_CMD_DENYOOM)))
        return true;
    const char *name = cmd->def->name;
    return (c->flags & GB_CLIENT_MULTI) && !is_exec(cmd) && strcmp(name, "discard") != 0 &&
           strcmp(name, "quit") != 0 && strcmp(name, "reset") != 0;
}

/* Redis 7.0's disk-error rule: while persistence refuses writes (MISCONF),
 * write commands, an EXEC holding one, and PING are refused. */
static const char *refused_for_disk(const gb_client *c, const gb_command *cmd, uint32_t f)
{
    const gb_service *sv = c->eng->service;
    const char *why = sv ? sv->write_refusal(sv->ctx) : NULL;
    if (GB_LIKELY(!why))
        return NULL;
    bool writes = (f & GB_CMD_WRITE) || (is_exec(cmd) && (c->mcmd_flags & GB_CMD_WRITE));
    return writes || strcmp(cmd->def->name, "ping") == 0 ? why : NULL;
}

/* A replica's primary is obeyed whatever the disk says, but Redis 7.0
 * (processCommand) does not let a replica that cannot persist drift from
 * its disk silently: with replica-ignore-disk-write-errors no, a write
 * from the primary while writes are refused here (MISCONF) stops the
 * server; with yes it applies, with a warning at most every 10 s. A PING
 * in the stream only warns. Redis panics (a crash report and abort);
 * Goblin logs Redis's line and exits with status 1 at once (_exit: the
 * data set is not saved, nor freed for a leak checker, since it holds
 * what the disk lacks). */
static __attribute__((noinline)) void primary_write_despite_disk(gb_client *c, const gb_command *cmd, uint32_t f)
{
    const char *why = refused_for_disk(c, cmd, f);
    if (!why)
        return;
    bool ping = strcmp(cmd->def->name, "ping") == 0;
    if (!c->eng->cfg.replica_ignore_disk_write_errors && !ping) {
        gb_log(GB_LOG_WARNING, "Replica was unable to write command to disk. (%.*s; the primary sent '%s': "
                               "exiting, as replica-ignore-disk-write-errors is no)",
               (int)strcspn(why, "\r\n"), why, cmd->fullname);
        _exit(1);
    }
    static bool warned;
    static uint64_t last_warning_ms;
    if (!warned || c->eng->now_mono_ms - last_warning_ms >= 10000) {
        warned = true;
        last_warning_ms = c->eng->now_mono_ms;
        gb_log(GB_LOG_WARNING, "Replica is applying a command even though it is unable to write to disk.");
    }
}

/* min-replicas-to-write: with too few good replicas, write commands and
 * an EXEC holding one are refused (-NOREPLICAS), after the disk check as
 * in Redis's processCommand. */
static const char *refused_for_replicas(const gb_client *c, const gb_command *cmd, uint32_t f)
{
    if (GB_LIKELY(c->eng->cfg.min_replicas_to_write == 0))
        return NULL; /* off: no call on the command path */
    const char *why = gb_repl_write_refusal(c->eng);
    if (!why)
        return NULL;
    bool writes = (f & GB_CMD_WRITE) || (is_exec(cmd) && (c->mcmd_flags & GB_CMD_WRITE));
    return writes ? why : NULL;
}

/* A replica's refusals (READONLY, MASTERDOWN: engine/core/replication/replica.h);
 * a server that never was one pays one test. */
static inline const char *refused_on_replica(const gb_client *c, bool writes, bool stale_ok)
{
    return GB_UNLIKELY(c->eng->replica != NULL) ? gb_replica_refusal(c, writes, stale_ok) : NULL;
}

/* The flags admission checks: the command's own, or for EVAL/FCALL those
 * its script declares (a script with "#!lua flags=no-writes" is not a
 * write). */
static uint32_t admitted_flags(gb_client *c, const gb_command *cmd, int argc, const gb_slice *argv)
{
    uint32_t f = cmd->flags;
    const gb_scripting_hooks *sh = c->eng->scripting;
    if (GB_UNLIKELY(f & GB_CMD_RUNS_SCRIPT) && sh)
        f = sh->command_flags(sh->ctx, c, f, argc, argv);
    return f;
}

/* Redis's text for a container's unknown subcommand: "unknown subcommand
 * 'x'. Try CONFIG HELP." */
static void reject_unknown_subcommand(gb_client *c, gb_command *container, gb_slice sub)
{
    char upper[32];
    size_t n = 0;
    for (const char *p = container->fullname; *p && n < sizeof upper - 1; p++)
        upper[n++] = (char)((*p >= 'a' && *p <= 'z') ? *p - 32 : *p);
    upper[n] = '\0';
    char err[256];
    snprintf(err, sizeof err, "ERR unknown subcommand '%.*s'. Try %s HELP.", (int)GB_MIN(sub.len, 128), sub.ptr, upper);
    reject(c, NULL, err); /* no statistics: Redis found no command */
}

/* ---- permissions (engine/core/acl/acl.h) ---- */

/* The user may run cmd with these arguments: one bit test for what the
 * user may run with any arguments, the full check (keys, channels, other
 * selectors) only when that bit is clear. On a denial *why and *argpos
 * say what was refused. */
static inline bool permitted(const gb_client *c, const gb_command *cmd, int argc, const gb_slice *argv,
                             enum gb_acl_denial *why, int *argpos)
{
    if (GB_LIKELY(gb_acl_permits_any_args(c->user, cmd->acl_id)))
        return true;
    *why = gb_acl_check(c, cmd, argc, argv, argpos);
    return *why == GB_ACL_ALLOWED;
}

static enum gb_acl_log_context log_context(const gb_client *c)
{
    return (c->flags & (GB_CLIENT_MULTI | GB_CLIENT_IN_EXEC)) ? GB_ACL_CTX_MULTI : GB_ACL_CTX_TOPLEVEL;
}

/* Redis 7.0's NOPERM replies (processCommand). */
static void reject_for_permission(gb_client *c, gb_command *cmd, int argc, gb_slice *argv, enum gb_acl_denial why,
                                  int argpos)
{
    c->last_cmd = cmd; /* the client's last command, as CLIENT LIST in the log entry shows it */
    gb_acl_log_denial(c, why, log_context(c), cmd, argc, argv, argpos);
    char err[256];
    if (why == GB_ACL_DENIED_CMD)
        snprintf(err, sizeof err, "NOPERM this user has no permissions to run the '%s' command", cmd->fullname);
    else if (why == GB_ACL_DENIED_KEY)
        snprintf(err, sizeof err, "NOPERM this user has no permissions to access one of the keys used as arguments");
    else
        snprintf(err, sizeof err,
                 "NOPERM this user has no permissions to access one of the channels used as arguments");
    reject(c, cmd, err);
}

void gb_gate_call_queued(gb_client *c, gb_command *cmd, int argc, gb_slice *argv)
{
    enum gb_acl_denial why;
    int argpos = 0;
    if (GB_LIKELY(permitted(c, cmd, argc, argv, &why, &argpos))) {
        gb_gate_call(c, cmd, argc, argv);
        return;
    }
    /* The rules changed since the command was queued (Redis's execCommand
     * checks again, with its own words). */
    gb_acl_log_denial(c, why, GB_ACL_CTX_MULTI, cmd, argc, argv, argpos);
    const char *reason = why == GB_ACL_DENIED_CMD   ? "no permission to execute the command or subcommand"
                         : why == GB_ACL_DENIED_KEY ? "no permission to touch the specified keys"
                                                    : "no permission to access one of the channels used as arguments";
    gb_reply_errorf(c,
                    "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC "
                    "call. This command is no longer allowed for the following reason: %s",
                    reason);
}

const char *gb_gate_script_permits(gb_client *caller, gb_command *cmd, int argc, gb_slice *argv)
{
    enum gb_acl_denial why;
    int argpos = 0;
    if (GB_LIKELY(permitted(caller, cmd, argc, argv, &why, &argpos)))
        return NULL;
    gb_acl_log_denial(caller, why, GB_ACL_CTX_LUA, cmd, argc, argv, argpos);
    switch (why) {
    case GB_ACL_DENIED_CMD:
        return "The user executing the script can't run this command or subcommand";
    case GB_ACL_DENIED_KEY:
        return "The user executing the script can't access at least one of the keys mentioned in the command "
               "arguments";
    case GB_ACL_DENIED_CHANNEL:
        return "The user executing the script can't publish to the channel mentioned in the command";
    default:
        return "The user executing the script is lacking the permissions for the command";
    }
}

/* Redis 7.0's rule for a subscribed RESP2 client: its connection carries
 * pushes, so only the commands that manage subscriptions, PING, QUIT and
 * RESET may run (RESP3 tells replies and pushes apart: no rule). */
static bool refused_in_subscribed_mode(const gb_client *c, const gb_command *cmd)
{
    if (GB_LIKELY(!c->pubsub) || c->resp != 2)
        return false;
    static const char *const allowed[] = {"ping",         "subscribe",  "ssubscribe", "unsubscribe", "sunsubscribe",
                                          "psubscribe",   "punsubscribe", "quit",     "reset"};
    for (size_t i = 0; i < GB_ARRAY_LEN(allowed); i++)
        if (strcmp(cmd->fullname, allowed[i]) == 0)
            return false;
    return true;
}

/* ---- the rules: one list for RESP and typed calls ---- */

/* The room for a cluster redirection's text (MOVED/ASK, host and port). */
#define REDIRECT_CAP 128

/* One call as admission judges it: a RESP call (argv) or a typed one
 * (typed, typed_args: its keys for ACL, no argument vector built). */
typedef struct admission {
    gb_client *c;
    gb_command *cmd;
    int argc;
    gb_slice *argv;
    const gb_typed_call *typed;
    void *typed_args;
    /* the verdict's details */
    const char *why;          /* ADMIT_REJECT, ADMIT_REDIRECT: the error text */
    char *redirect;           /* ADMIT_REDIRECT's text is built here: the caller's REDIRECT_CAP bytes (a RESP
                               * call only; a typed one is redirected in its RESP form). Not a member array:
                               * judge() runs for every call, and the initializer would clear it each time. */
    enum gb_acl_denial denial; /* ADMIT_DENY: what ACL refused, and where */
    int argpos;
} admission;

enum admit_verdict {
    ADMIT_RUN,      /* run it now */
    ADMIT_REJECT,   /* refuse it with a->why */
    ADMIT_DENY,     /* refuse it for permission (ACL LOG, NOPERM) */
    ADMIT_POSTPONE, /* CLIENT PAUSE holds it */
    ADMIT_QUEUE,    /* MULTI queues it */
    ADMIT_REDIRECT, /* cluster mode sends it elsewhere or refuses it (a->why: MOVED, ASK, CROSSSLOT ...) */
};

static inline enum admit_verdict refuse(admission *a, const char *why)
{
    a->why = why;
    return ADMIT_REJECT;
}

/* The user may run the call: by the one bit when it may run the command
 * with any arguments, else by the full check; a typed call is checked on
 * its own keys (no RESP form built), and one whose keys it cannot give is
 * judged denied here, which hands it to its RESP form. */
static inline bool admission_permitted(admission *a)
{
    if (!a->typed)
        return permitted(a->c, a->cmd, a->argc, a->argv, &a->denial, &a->argpos);
    if (GB_LIKELY(gb_acl_permits_any_args(a->c->user, a->cmd->acl_id)))
        return true;
    a->denial = GB_ACL_DENIED_CMD;
    if (!a->typed->keys)
        return false;
    gb_typed_keys k;
    a->typed->keys(a->typed_args, &k);
    return gb_acl_permits_keys(a->c, a->cmd, k.keys, k.n, gb_typed_key_flags(a->cmd, &k));
}

/* The flags admission checks (admitted_flags); a typed call runs no
 * script, so its command's own. */
static inline uint32_t admission_flags(admission *a)
{
    return a->typed ? a->cmd->flags : admitted_flags(a->c, a->cmd, a->argc, a->argv);
}

/* Redis's CMD_PROTECTED commands, DEBUG and MODULE LOAD/LOADEX/UNLOAD: the
 * refusal when the option that admits the command does not admit c, or
 * NULL. */
static const char *protected_refusal(const gb_client *c, const gb_command *cmd)
{
    bool module = strcmp(cmd->def->name, "module") == 0;
    int setting = module ? c->eng->cfg.enable_module_command : c->eng->cfg.enable_debug_command;
    if (gb_client_protected_allowed(c, setting))
        return NULL;
    if (module)
        return "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can "
               "run it from a local connection, otherwise you need to set this option in the configuration file, "
               "and then restart the server.";
    return "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it "
           "from a local connection, otherwise you need to set this option in the configuration file, and then "
           "restart the server.";
}

/* Every rule a command obeys before it runs, in Redis's processCommand
 * order, for RESP and typed calls alike: admit() acts on the verdict; a
 * typed call runs natively only on ADMIT_RUN and otherwise hands its RESP
 * form to admit(), which judges it again and answers. A rule added here
 * therefore applies to both paths. Nothing here answers the client or
 * changes its state (evicting under maxmemory is Redis's own first step
 * and may run twice for a handed-over typed call). Always inlined: every
 * typed call runs it (GCC had made it a function of its own, called from
 * both paths). */
static inline __attribute__((always_inline)) enum admit_verdict judge(admission *a)
{
    gb_client *c = a->c;
    gb_command *cmd = a->cmd;
    /* Before authentication, as Redis's processCommand. */
    if (GB_UNLIKELY(cmd->flags & GB_CMD_PROTECTED)) {
        const char *why = protected_refusal(c, cmd);
        if (why)
            return refuse(a, why);
    }
    if (GB_UNLIKELY(!(c->flags & GB_CLIENT_AUTHED)) && !(cmd->flags & GB_CMD_NOAUTH) &&
        gb_acl_auth_required(c->eng))
        return refuse(a, GB_ERR_NOAUTH);
    /* Redis's no-multi commands (SAVE, SHUTDOWN, SYNC, PSYNC) are refused
     * in a transaction, and the refusal dooms it. */
    if (GB_UNLIKELY(c->flags & GB_CLIENT_MULTI) && (cmd->meta->flags & GB_CMDF_NO_MULTI))
        return refuse(a, "ERR Command not allowed inside a transaction");
    if (GB_UNLIKELY(!admission_permitted(a)))
        return ADMIT_DENY;
    /* A log being replayed already happened: it is obeyed (Redis's
     * mustObeyClient), whatever memory or the disk say now. */
    if (!(c->flags & GB_CLIENT_OBEY)) {
        uint32_t flags = admission_flags(a);
        /* Cluster mode's redirections, after ACL and before memory (Redis's
         * processCommand). A typed call takes its RESP form there. */
        if (GB_UNLIKELY(c->eng->cluster != NULL)) {
            if (a->typed)
                return refuse(a, NULL); /* not run natively: its RESP form is judged, and redirected, in admit() */
            c->slot = -1;
            if (gb_cluster_checks_command(cmd)) {
                a->why = gb_cluster_redirection(c, cmd, flags, a->argc, a->argv, a->redirect, REDIRECT_CAP);
                if (a->why)
                    return ADMIT_REDIRECT;
            }
        }
        /* Memory before the disk, as Redis checks them. */
        if (c->eng->cfg.maxmemory > 0 && refused_for_memory(c, cmd, flags))
            return refuse(a, GB_ERR_OOM);
        const char *disk = refused_for_disk(c, cmd, flags);
        if (!disk)
            disk = refused_for_replicas(c, cmd, flags);
        if (disk)
            return refuse(a, disk);
        /* A read-only replica (engine/core/replication/replica.h): its primary's
         * stream is an OBEY client and never gets here. */
        bool writes = (flags & GB_CMD_WRITE) || (is_exec(cmd) && (c->mcmd_flags & GB_CMD_WRITE));
        const char *ro = refused_on_replica(c, writes, true);
        if (ro)
            return refuse(a, ro);
    } else if (GB_UNLIKELY(c->flags & GB_CLIENT_MASTER)) {
        /* Never refused for memory, but a replica that does not ignore
         * maxmemory evicts before its primary's commands as before anyone
         * else's (Redis's processCommand): its primary's writes are most of
         * what it gets, and without this it grew past maxmemory. */
        if (c->eng->cfg.maxmemory > 0)
            (void)gb_evict_perform(c->eng);
        primary_write_despite_disk(c, cmd, admission_flags(a));
    }
    if (GB_UNLIKELY(refused_in_subscribed_mode(c, cmd)))
        return refuse(a, NULL); /* admit() writes the text, which names the command */
    /* A replica whose link is down, with replica-serve-stale-data no. */
    if (GB_UNLIKELY(c->eng->replica != NULL)) { /* (a script's declared flags say whether it is stale-safe) */
        const char *stale = refused_on_replica(c, false, (admission_flags(a) & GB_CMD_STALE) != 0);
        if (stale)
            return refuse(a, stale);
    }
    /* A script past busy-reply-threshold holds the engine: the busy pump
     * (engine/core/request/script_state.h) serves others only what may run beside it. */
    if (GB_UNLIKELY(c->eng->script.timed_out) && !(cmd->flags & GB_CMD_ALLOW_BUSY))
        return refuse(a, gb_script_busy_error(&c->eng->script));
    /* A replica's link may not touch the keyspace (replicas are exempt from
     * CLIENT PAUSE, so a write from one would slip past it), nor may a
     * MONITOR client, which is a replica to Redis. */
    if (GB_UNLIKELY(c->flags & (GB_CLIENT_MONITOR | GB_CLIENT_REPLICA)) &&
        (admission_flags(a) & (GB_CMD_WRITE | GB_CMD_READONLY | GB_CMD_MAY_REPLICATE)))
        return refuse(a, "ERR Replica can't interact with the keyspace");
    /* CLIENT PAUSE: last, as in Redis's processCommand, so that what would
     * be refused is refused now and only what would run (or be queued)
     * waits. */
    if (GB_UNLIKELY(c->eng->pause_type != GB_PAUSE_NONE) && gb_pause_postpones(c, cmd, admission_flags(a)))
        return ADMIT_POSTPONE;
    if ((c->flags & GB_CLIENT_MULTI) && !(cmd->flags & GB_CMD_NOT_QUEUED))
        return ADMIT_QUEUE;
    return ADMIT_RUN;
}

static void reject_in_subscribed_mode(gb_client *c, gb_command *cmd)
{
    char err[256];
    snprintf(err, sizeof err,
             "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in "
             "this context",
             cmd->fullname);
    reject(c, cmd, err);
}

/* Every check before a RESP call runs: its arity (a typed call has its
 * command's shape by construction), then judge()'s rules, acting on the
 * verdict. Returns true when it should run now; false when it was
 * rejected, postponed or queued (and answered). */
/* A cluster redirection or refusal: a rejected EXEC discards its
 * transaction and answers the error itself, not EXECABORT (Redis). */
static void reject_for_cluster(gb_client *c, gb_command *cmd, const char *err)
{
    if (is_exec(cmd)) {
        cmd->rejected_calls++;
        gb_multi_discard(c);
        gb_multi_unwatch_all(c);
        gb_reply_error(c, err);
    } else {
        reject(c, cmd, err);
    }
}

static bool admit(gb_client *c, gb_command *cmd, int argc, gb_slice *argv)
{
    if (!gb_command_arity_ok(cmd, argc)) {
        char err[128];
        snprintf(err, sizeof err, "ERR wrong number of arguments for '%s' command", cmd->fullname);
        reject(c, cmd, err);
        return false;
    }
    char redirect[REDIRECT_CAP];
    admission a = {.c = c, .cmd = cmd, .argc = argc, .argv = argv, .redirect = redirect};
    switch (judge(&a)) {
    case ADMIT_RUN:
        return true;
    case ADMIT_REJECT:
        if (a.why)
            reject(c, cmd, a.why);
        else
            reject_in_subscribed_mode(c, cmd);
        return false;
    case ADMIT_DENY:
        reject_for_permission(c, cmd, argc, argv, a.denial, a.argpos);
        return false;
    case ADMIT_POSTPONE:
        gb_pause_postpone(c, argc, argv);
        return false;
    case ADMIT_QUEUE:
        gb_multi_queue(c, cmd, admission_flags(&a), argc, argv);
        return false;
    case ADMIT_REDIRECT:
        reject_for_cluster(c, cmd, a.why);
        return false;
    }
    return false;
}

/* Redis's resetClient, after each command a client sent (not while it is
 * blocked or held by a pause: then when it is served, so a held command
 * keeps its ASKING): CLIENT REPLY SKIP's window, ASKING and CLIENT
 * CACHING's. */
static inline void command_done(gb_client *c, const gb_command *cmd)
{
    if (GB_UNLIKELY(c->flags & GB_CLIENT_BLOCKED))
        return;
    gb_client_command_done(c);
    if (GB_UNLIKELY(c->tracking != NULL))
        gb_tracking_command_done(c, cmd);
}

static gb_command *execute(gb_client *c, int argc, gb_slice *argv)
{
    c->last_ms = (int64_t)c->eng->now_mono_ms;
    if (GB_UNLIKELY(c->eng->tracking != NULL))
        gb_tracking_set_current(c->eng, c);
    gb_command *cmd = gb_command_lookup(c->eng, argv[0]);
    /* Redis's c->lastcmd (CLIENT LIST's cmd=): the command looked up, even
     * one then refused or queued; NULL when there is none. */
    c->last_cmd = cmd;
    if (!cmd) {
        reject_unknown(c, argc, argv);
        return NULL;
    }
    /* A container with a subcommand is that subcommand (Redis 7's
     * lookupCommand); alone, it fails its own arity below. */
    if (gb_command_is_container(cmd) && argc >= 2) {
        gb_command *sub = gb_subcommand_lookup(cmd, argv[1]);
        c->last_cmd = sub;
        if (!sub) {
            reject_unknown_subcommand(c, cmd, argv[1]);
            return NULL;
        }
        cmd = sub;
    }
    if (admit(c, cmd, argc, argv))
        gb_gate_call(c, cmd, argc, argv);
    return cmd;
}

void gb_gate_execute(gb_client *c, int argc, gb_slice *argv)
{
    if (argc == 0)
        return;
    gb_command *cmd = execute(c, argc, argv);
    if (GB_UNLIKELY(c->flags & (GB_CLIENT_REPLY_SKIP | GB_CLIENT_REPLY_SKIP_NEXT | GB_CLIENT_ASKING)) ||
        GB_UNLIKELY(c->tracking != NULL))
        command_done(c, cmd);
    /* A rejected command opened no call frame: its (empty) round of
     * invalidations closes here. */
    if (GB_UNLIKELY(c->eng->tracking != NULL) && c->eng->prop.depth == 0)
        gb_tracking_after_command(c->eng);
}

/* The RESP form of a typed call through the whole gate. */
static void execute_as_argv(gb_client *c, const gb_typed_call *t, void *args)
{
    gb_argv_builder b;
    t->to_argv(args, &b);
    gb_gate_execute(c, b.n, b.v);
    gb_argv_free(&b);
}

/* What acts around a RESP call's run and not a typed one's: MONITOR's
 * feed, CLIENT TRACKING's reads and invalidations, CLIENT REPLY SKIP. A
 * typed call with any of them in play takes its RESP form. */
static inline bool typed_bookkeeping_in_play(const gb_client *c)
{
    const gb_engine *eng = c->eng;
    return (c->flags & (GB_CLIENT_TRACKING | GB_CLIENT_REPLY_SKIP | GB_CLIENT_REPLY_SKIP_NEXT)) || eng->nmonitors ||
           (GB_UNLIKELY(eng->tracking != NULL) && gb_tracking_clients(eng));
}

void gb_gate_execute_typed(gb_client *c, gb_command *cmd, const gb_typed_call *t, void *args)
{
    gb_engine *eng = c->eng;
    /* Admission's own rules (judge), so that a typed call is refused,
     * postponed or queued exactly when its RESP form would be: anything
     * but ADMIT_RUN takes the RESP form through admission, which answers
     * exactly as for a RESP client (a denial included: its reply and ACL
     * LOG entry name the argument of the RESP form). */
    admission adm = {.c = c, .cmd = cmd, .typed = t, .typed_args = args};
    bool plain = !typed_bookkeeping_in_play(c) && judge(&adm) == ADMIT_RUN;
    if (GB_UNLIKELY(!plain)) {
        execute_as_argv(c, t, args);
        return;
    }
    c->last_ms = (int64_t)eng->now_mono_ms;
    const gb_command *prev = c->last_cmd;
    call_frame f = frame_open(c, cmd);
    if (GB_UNLIKELY(!t->run(c, args))) {
        frame_abandon(c, f);
        c->last_cmd = prev;
        execute_as_argv(c, t, args);
        return;
    }
    if (wants_default_effect(eng, cmd, f)) {
        gb_argv_builder b;
        t->to_argv(args, &b);
        gb_propagate_record(eng, c->db->id, b.n, b.v);
        gb_argv_free(&b);
    }
    call_args a = {0, NULL, t, args};
    frame_close(c, cmd, f, &a);
}

/* ---- commands a script runs ------------------------------------------------------------ */

/* A command Goblin Core does not have, as Redis 7.0's command table knows
 * it (its lookupCommand: a container with an argument is that subcommand);
 * NULL when Redis has none either. */
static const gb_command_meta *redis_command_meta(int argc, const gb_slice *argv)
{
    char name[32]; /* longer than every Redis command name */
    if (!gb_ascii_lower(name, sizeof name, argv[0]))
        return NULL;
    const gb_command_meta *m = gb_command_meta_find(name);
    if (m && m->nsubcommands && argc >= 2)
        m = gb_command_meta_sub(m, argv[1]);
    return m;
}

/* What Redis answers a script calling a command Goblin Core does not
 * have: its own refusals (arity, not allowed from scripts) where it would
 * refuse the call, else that the command is unknown. */
static const char *script_refuses_missing(int argc, const gb_slice *argv)
{
    const gb_command_meta *m = redis_command_meta(argc, argv);
    if (m && ((m->arity > 0 && m->arity != argc) || argc < -m->arity))
        return "ERR Wrong number of args calling Redis command from script";
    if (m && (m->flags & GB_CMDF_NOSCRIPT))
        return "ERR This Redis command is not allowed from script";
    return "ERR Unknown Redis command called from script";
}

bool gb_gate_stale_refused(const gb_client *c) { return refused_on_replica(c, false, false) != NULL; }

/* Redis's scriptCall: the same command, with the checks a script's call
 * gets instead of a client's (authentication and MULTI belong to the
 * caller, already admitted), in Redis's order and with its texts. Runs
 * it, or returns why not (*found: the command, if there is one). */
static const char *script_call(gb_client *c, int argc, gb_slice *argv, gb_script_call_state *st, gb_command **found)
{
    gb_command *cmd = gb_command_lookup(c->eng, argv[0]);
    /* Redis 7's lookupCommand: a container with a subcommand is that
     * subcommand, and one it does not know is no command at all. */
    if (cmd && gb_command_is_container(cmd) && argc >= 2)
        cmd = gb_subcommand_lookup(cmd, argv[1]);
    *found = cmd;
    if (!cmd)
        return script_refuses_missing(argc, argv);
    uint32_t f = cmd->flags;
    if (!gb_command_arity_ok(cmd, argc))
        return "ERR Wrong number of args calling Redis command from script";
    if (f & GB_CMD_NOSCRIPT)
        return "ERR This Redis command is not allowed from script";
    /* ACL: the rules of the user who ran EVAL/FCALL (scriptVerifyACL). */
    gb_client *caller = c->eng->script.caller ? c->eng->script.caller : c;
    const char *denied = gb_gate_script_permits(caller, cmd, argc, argv);
    if (denied) {
        snprintf(st->err, sizeof st->err, "ERR %s", denied);
        return st->err;
    }
    /* A command that may replicate (PFCOUNT) counts as a write here, as in
     * Redis's scriptVerifyWriteCommandAllow; the disk checks are for
     * writes alone. */
    if ((f & (GB_CMD_WRITE | GB_CMD_MAY_REPLICATE)) && (st->rules & GB_SCRIPT_READ_ONLY))
        return "ERR Write commands are not allowed from read-only scripts.";
    if (f & GB_CMD_WRITE) {
        /* A read-only replica: the script's client carries its caller's
         * OBEY, so the primary's scripts run. */
        const char *ro = refused_on_replica(c, true, true);
        if (ro)
            return ro;
        const char *disk = refused_for_disk(c, cmd, f);
        if (!disk)
            disk = refused_for_replicas(c, cmd, f);
        if (disk)
            return disk;
    }
    /* Memory is judged once, when the script started: a script that has
     * written may not be stopped half-way, and Lua's own allocations must
     * not decide for it (Redis's server.script_oom). */
    if ((f & GB_CMD_DENYOOM) && !(st->rules & GB_SCRIPT_ALLOW_OOM) && (st->rules & GB_SCRIPT_OOM_AT_START) &&
        !st->wrote && !(c->flags & GB_CLIENT_OBEY))
        return GB_ERR_OOM;
    if (f & GB_CMD_WRITE)
        st->wrote = true;
    if (GB_UNLIKELY(c->eng->cluster != NULL) && !(caller->flags & GB_CLIENT_OBEY)) {
        const char *where = gb_cluster_script_check(c, caller, cmd, f, argc, argv, &st->slot,
                                                    (st->rules & GB_SCRIPT_CROSS_SLOT) != 0);
        if (where)
            return where;
    }
    /* A replica serving no stale data while its link is down (Redis's
     * scriptVerifyAllowStale): only the commands marked stale-safe run. */
    if (!(f & GB_CMD_STALE) && refused_on_replica(c, false, false))
        return "ERR Can not execute the command on a stale replica";
    gb_gate_call(c, cmd, argc, argv);
    return NULL;
}

const char *gb_gate_script_call(gb_client *c, int argc, gb_slice *argv, gb_script_call_state *st)
{
    gb_command *cmd = NULL;
    const char *refused = script_call(c, argc, argv, st, &cmd);
    if (refused) {
        /* an error reply of the script's client and a rejected call (Redis's
         * scriptCall: afterErrorReply, incrCommandStatsOnError(REJECTED));
         * the script raises it marked as counted */
        gb_reply_count_error(c, refused);
        if (cmd)
            cmd->rejected_calls++;
        c->eng->stats.errors_at_call_end = c->eng->stats.total_error_replies; /* (as a call's end) */
    }
    return refused;
}
