/* Connection and server commands: PING, ECHO, QUIT, AUTH, HELLO, CLIENT,
 * INFO, CONFIG, TIME, SHUTDOWN, MEMORY. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "engine/core/acl/acl.h"
#include "engine/core/acl/acl_file.h"
#include "engine/core/request/blocking.h"
#include "engine/core/memory/client_memory.h"
#include "engine/commands/cmd_client.h"
#include "engine/commands/cmd_util.h"
#include "engine/commands/typed.h"
#include "engine/persist/persist.h"
#include "engine/core/engine.h"
#include "engine/core/replication/repl.h"
#include "engine/core/replication/replica.h"
#include "engine/core/memory/evict.h"
#include "engine/base/mem.h"
#include "engine/base/strbuf.h"
#include "engine/core/memory/lazyfree.h"
#include "engine/core/request/multi.h"
#include "engine/core/config/process_settings.h"
#include "engine/core/shutdown.h"
#include "engine/base/util.h"

static void cmd_ping(gb_client *c, int argc, gb_slice *argv)
{
    if (argc > 2) {
        gb_reply_wrong_arity(c, "ping");
        return;
    }
    if (GB_UNLIKELY(c->pubsub && c->resp == 2)) {
        /* A subscribed RESP2 client reads pushes: the answer looks like one. */
        gb_reply_array(c, 2);
        gb_reply_cstr(c, "pong");
        gb_reply_slice(c, argc == 2 ? argv[1] : gb_slice_make("", 0));
        return;
    }
    if (argc == 2)
        gb_reply_slice(c, argv[1]);
    else
        gb_cmd_ping(c);
}

static void cmd_echo(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_reply_slice(c, argv[1]);
}

static void cmd_quit(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    gb_reply_ok(c);
    c->flags |= GB_CLIENT_CLOSE_AFTER_REPLY;
}

/* ---- authentication -------------------------------------------------------- */

static void cmd_auth(gb_client *c, int argc, gb_slice *argv)
{
    if (argc > 3) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    gb_slice user = gb_slice_cstr("default"), pass;
    if (argc == 2) {
        if (c->eng->acl->default_user->flags & GB_ACL_USER_NOPASS) {
            gb_reply_error(c, "ERR AUTH <password> called without any password configured for the default user. "
                              "Are you sure your configuration is correct?");
            return;
        }
        pass = argv[1];
    } else {
        user = argv[1];
        pass = argv[2];
    }
    const gb_acl_user *u = gb_acl_check_credentials(c, user, pass, argv[0]);
    if (u) {
        gb_acl_login(c, u);
        gb_reply_ok(c);
    } else {
        gb_reply_error(c, GB_ERR_WRONGPASS);
    }
}

static void cmd_hello(gb_client *c, int argc, gb_slice *argv)
{
    /* Redis 7.0's order: the version (not an integer; NOPROTO unless 2 or
     * 3), then the options left to right, each acting as it is read (AUTH
     * logs in or stops with WRONGPASS, SETNAME names or stops with the
     * name's error, anything else is a syntax error, after what came
     * before it took effect), then the NOAUTH check. A transport without
     * RESP3 (an SBE ring) refuses it only then, so an unauthenticated
     * "HELLO 3" gets NOAUTH as from Redis. */
    int64_t ver = 0;
    int j = 1;
    if (argc >= 2) {
        if (!gb_slice2ll(argv[1], &ver)) {
            gb_reply_error(c, "ERR Protocol version is not an integer or out of range");
            return;
        }
        j = 2;
        if (ver < 2 || ver > 3) {
            gb_reply_error(c, "NOPROTO unsupported protocol version");
            return;
        }
    }
    for (; j < argc; j++) {
        int more = argc - 1 - j;
        if (gb_slice_ieq(argv[j], "auth") && more >= 2) {
            const gb_acl_user *as = gb_acl_check_credentials(c, argv[j + 1], argv[j + 2], argv[0]);
            if (!as) {
                gb_reply_error(c, GB_ERR_WRONGPASS);
                return;
            }
            gb_acl_login(c, as);
            j += 2;
        } else if (gb_slice_ieq(argv[j], "setname") && more >= 1) {
            if (!gb_client_name_valid(argv[j + 1])) {
                gb_reply_error(c, "ERR Client names cannot contain spaces, newlines or special characters.");
                return;
            }
            gb_client_name_set(c, argv[j + 1]);
            j++;
        } else {
            gb_reply_errorf(c, "ERR Syntax error in HELLO option '%.*s'", (int)GB_MIN(argv[j].len, 128),
                            argv[j].ptr);
            return;
        }
    }
    if (!(c->flags & GB_CLIENT_AUTHED)) {
        /* Redis 7.0.15's text, word for word. */
        gb_reply_error(c, "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
                          "AUTH <user> <pass> option can be used to authenticate the client and select the "
                          "RESP protocol version at the same time");
        return;
    }
    if (ver && !gb_client_can_speak(c, (int)ver)) {
        gb_reply_error(c, "NOPROTO unsupported protocol version: an SBE ring's replies are typed frames "
                          "(RESP3 needs a socket or a RESP ring)");
        return;
    }
    /* The reply is already in the new protocol (a map in RESP3). */
    if (ver)
        gb_client_set_resp(c, (int)ver);
    gb_reply_map(c, 7);
    gb_reply_cstr(c, "server");
    gb_reply_cstr(c, "goblin-core");
    gb_reply_cstr(c, "version");
    gb_reply_cstr(c, "7.0.15");
    gb_reply_cstr(c, "proto");
    gb_reply_int(c, c->resp);
    gb_reply_cstr(c, "id");
    gb_reply_int(c, (int64_t)c->id);
    gb_reply_cstr(c, "mode");
    gb_reply_cstr(c, c->eng->cluster ? "cluster" : "standalone");
    gb_reply_cstr(c, "role");
    gb_reply_cstr(c, gb_engine_is_replica(c->eng) ? "replica" : "master");
    gb_reply_cstr(c, "modules");
    gb_reply_array(c, 0);
}

/* ---- INFO ---------------------------------------------------------------------------- */

static void info_out(void *ctx, const char *s, size_t n) { gb_strbuf_add(ctx, s, n); }

static void cmd_info(gb_client *c, int argc, gb_slice *argv)
{
    gb_strbuf b = {0};
    gb_slice dflt = gb_slice_cstr("default");
    if (argc == 1)
        gb_engine_info(c->eng, 1, &dflt, info_out, &b);
    else
        gb_engine_info(c->eng, argc - 1, argv + 1, info_out, &b);
    gb_reply_verbatim(c, b.p ? b.p : "", b.len);
    gb_free(b.p);
}

/* ---- CONFIG ---------------------------------------------------------------------------- */

typedef struct cfg_pairs {
    char **names;
    char **values;
    size_t n, cap;
} cfg_pairs;

static void cfg_emit(void *ctx, const char *name, const char *value)
{
    cfg_pairs *p = ctx;
    for (size_t i = 0; i < p->n; i++)
        if (gb_strcasecmp(p->names[i], name) == 0) /* Redis's matches are keyed ignoring case */
            return;
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 16;
        p->names = gb_realloc(p->names, p->cap * sizeof *p->names);
        p->values = gb_realloc(p->values, p->cap * sizeof *p->values);
    }
    p->names[p->n] = gb_strdup(name);
    p->values[p->n] = gb_strdup(value);
    p->n++;
}

static bool names_include(const char **names, int n, const char *name);
static const char *tls_name_given(const char **names, int n);

/* Settings that take an action when they change. Returns NULL, or Redis's
 * error when the action failed (CONFIG SET then rolls every change back). */
static const char *config_apply(gb_engine *eng, const char *name)
{
    if (strcmp(name, "loglevel") == 0)
        gb_log_set_level(eng->cfg.loglevel);
    if (strcmp(name, "requirepass") == 0)
        gb_acl_requirepass_changed(eng);
    if (strcmp(name, "slowlog-max-len") == 0)
        gb_slowlog_trim(eng);
    if (strcmp(name, "hz") == 0)
        eng->hz = eng->cfg.hz; /* Redis's updateHZ: dynamic-hz raises it again at the next cron */
    eng->time_every_call = gb_engine_times_every_call(&eng->cfg);
    if ((strcmp(name, "oom-score-adj") == 0 || strcmp(name, "oom-score-adj-values") == 0) &&
        gb_oom_score_apply(&eng->cfg) != 0)
        return "ERR CONFIG SET failed (possibly related to argument 'oom-score-adj') - Failed to set current "
               "oom_score_adj. Check server logs.";
    if (strcmp(name, "proc-title-template") == 0) {
        if (!gb_proc_title_valid(eng->cfg.proc_title_template, &eng->cfg))
            return "ERR CONFIG SET failed (possibly related to argument 'proc-title-template') - template format is "
                   "invalid or contains unknown variables";
        if (gb_proc_title_apply(&eng->cfg) != 0)
            return "ERR CONFIG SET failed (possibly related to argument 'proc-title-template') - failed to set "
                   "process title";
    }
    /* Redis's resizeReplicationBacklog: never under 16 KiB */
    if (strcmp(name, "repl-backlog-size") == 0 && eng->cfg.repl_backlog_size < 16 * 1024)
        eng->cfg.repl_backlog_size = 16 * 1024;
    if (strcmp(name, "maxclients") == 0) {
        static char msg[320];
        char why[200];
        if (gb_fd_limit_apply(&eng->cfg, false, why, sizeof why) != 0) {
            snprintf(msg, sizeof msg, "ERR CONFIG SET failed (possibly related to argument 'maxclients') - %s", why);
            return msg;
        }
    }
    if (strcmp(name, "crash-log-enabled") == 0 || strcmp(name, "crash-memcheck-enabled") == 0)
        gb_crash_log_apply(&eng->cfg);
    if (strcmp(name, "jemalloc-bg-thread") == 0)
        gb_allocator_bg_thread_apply(&eng->cfg);
    if (strcmp(name, "maxmemory") == 0)
        gb_evict_maxmemory_changed(eng);
    if (strcmp(name, "maxmemory") == 0 || strcmp(name, "maxmemory-clients") == 0)
        gb_clients_memory_recount(eng);
    if (strcmp(name, "appendonly") == 0) {
        char err[640];
        if (gb_persist_appendonly_changed(gb_persist_of(eng), err, sizeof err) != 0) {
            gb_log(GB_LOG_WARNING, "Unable to turn on AOF: %s", err);
            return "ERR CONFIG SET failed (possibly related to argument 'appendonly') - Unable to turn on AOF. "
                   "Check server logs.";
        }
    }
    return NULL;
}

/* Redis 7.0's CONFIG SET atomicity: the new settings are applied one by
 * one; when one fails, every setting returns to what it was and what was
 * applied is applied again with the old values (listeners included).
 * Returns false after replying the failure. */
static bool config_commit(gb_client *c, gb_settings *next, const char **names, int n)
{
    gb_engine *eng = c->eng;
    gb_settings old = eng->cfg;
    eng->cfg = *next;
    for (int p = 0; p < n; p++) {
        const char *err = config_apply(eng, names[p]);
        if (!err)
            continue;
        *next = eng->cfg;
        eng->cfg = old;
        for (int q = 0; q <= p; q++)
            (void)config_apply(eng, names[q]);
        const gb_listener_hook *hook = &eng->listeners;
        if (hook->rebind && (next->port != old.port || names_include(names, n, "bind"))) {
            char why[256];
            (void)hook->rebind(hook->ctx, old.port, old.bind, why, sizeof why);
        }
        if (hook->tls_apply && tls_name_given(names, n)) {
            char why[256];
            (void)hook->tls_apply(hook->ctx, &eng->cfg, why, sizeof why);
        }
        gb_reply_error(c, err);
        return false;
    }
    *next = old;
    return true;
}

static bool names_include(const char **names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* The first tls-* option of a CONFIG SET that rebuilds the TLS context
 * (every one but tls-auth-clients, which each new connection reads, as in
 * Redis), or NULL. */
static const char *tls_name_given(const char **names, int n)
{
    for (int i = 0; i < n; i++)
        if (strncmp(names[i], "tls-", 4) == 0 && strcmp(names[i], "tls-auth-clients") != 0)
            return names[i];
    return NULL;
}

/* CONFIG SET tls-*: the transport builds the new context (and moves the
 * TLS listeners) before the settings are committed; when it cannot, it
 * keeps what it had and the reply is Redis's error. */
static bool config_apply_tls(gb_client *c, const gb_settings *next, const char **names, int n)
{
    const gb_listener_hook *hook = &c->eng->listeners;
    const char *name = tls_name_given(names, n);
    if (!hook->tls_apply || !name)
        return true;
    char why[512];
    int rc = hook->tls_apply(hook->ctx, next, why, sizeof why);
    if (rc == GB_TLS_APPLY_OK) {
        c->eng->tls_config_changes++;
        return true;
    }
    if (rc == GB_TLS_APPLY_LISTEN)
        gb_reply_error(c, "ERR CONFIG SET failed (possibly related to argument 'tls-port') - Unable to listen on "
                          "this port. Check server logs.");
    else
        gb_reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - Unable to update TLS "
                           "configuration. Check server logs.",
                        name);
    return false;
}

/* CONFIG SET port / bind: the transport listens as the new settings say
 * before they are committed; when it cannot, nothing changes (it keeps its
 * listeners) and the reply is Redis's error. */
static bool config_apply_listeners(gb_client *c, const gb_settings *next, const char **names, int n)
{
    const gb_settings *now = &c->eng->cfg;
    bool port_changed = next->port != now->port;
    bool bind_given = names_include(names, n, "bind");
    const gb_listener_hook *hook = &c->eng->listeners;
    if (!hook->rebind || (!port_changed && !bind_given))
        return true;
    char why[512];
    if (hook->rebind(hook->ctx, next->port, next->bind, why, sizeof why) == 0)
        return true;
    gb_reply_error(c, port_changed ? "ERR CONFIG SET failed (possibly related to argument 'port') - Unable to "
                                     "listen on this port. Check server logs."
                                   : "ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind "
                                     "to specified addresses.");
    return false;
}

static void cmd_config(gb_client *c, int argc, gb_slice *argv)
{
    gb_slice sub = argv[1];
    if (gb_slice_ieq(sub, "get")) {
        if (argc < 3) {
            gb_reply_wrong_arity(c, "config|get");
            return;
        }
        cfg_pairs p = {0};
        for (int i = 2; i < argc; i++)
            gb_config_get(&c->eng->cfg, argv[i], cfg_emit, &p);
        gb_reply_map(c, (int64_t)p.n);
        for (size_t i = 0; i < p.n; i++) {
            gb_reply_cstr(c, p.names[i]);
            gb_reply_cstr(c, p.values[i]);
            gb_free(p.names[i]);
            gb_free(p.values[i]);
        }
        gb_free(p.names);
        gb_free(p.values);
    } else if (gb_slice_ieq(sub, "set")) {
        if (argc % 2 != 0) { /* pairs (the gate checked config|set has at least one) */
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
        /* As Redis 7.0: first every name is checked (unknown, immutable,
         * duplicate, in argument order), then the values are applied to a
         * scratch copy that is committed only if every one is valid. */
        int npairs = (argc - 2) / 2;
        const char **names = gb_calloc((size_t)npairs, sizeof *names);
        gb_settings scratch;
        gb_settings_copy(&scratch, &c->eng->cfg);
        for (int p = 0; p < npairs; p++) {
            gb_slice arg = argv[2 + 2 * p];
            char name[64];
            const char *canon = gb_ascii_lower(name, sizeof name, arg) ? gb_config_canonical(name) : NULL;
            if (!canon) {
                gb_reply_errorf(c, "ERR Unknown option or number of arguments for CONFIG SET - '%.*s'",
                                (int)GB_MIN(arg.len, 128), arg.ptr);
                goto undo;
            }
            /* These name the argument as typed, as Redis does before it
             * looks at values (the value errors below name the option). */
            int shown = (int)GB_MIN(arg.len, 128);
            if (!gb_config_is_runtime(canon)) {
                gb_reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%.*s') - can't set immutable config",
                                shown, arg.ptr);
                goto undo;
            }
            if (gb_config_is_protected(canon) && !gb_client_protected_allowed(c, c->eng->cfg.enable_protected_configs)) {
                gb_reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%.*s') - can't set protected config",
                                shown, arg.ptr);
                goto undo;
            }
            for (int q = 0; q < p; q++)
                if (names[q] == canon) {
                    gb_reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%.*s') - duplicate parameter",
                                    shown, arg.ptr);
                    goto undo;
                }
            names[p] = canon;
        }
        for (int p = 0; p < npairs; p++) {
            gb_slice v = argv[3 + 2 * p];
            char *value = gb_malloc(v.len + 1);
            memcpy(value, v.ptr, v.len);
            value[v.len] = '\0';
            char why[256];
            int rc = gb_config_set(&scratch, names[p], value, true, why, sizeof why);
            gb_free(value);
            if (rc != 0) {
                char name[64];
                gb_ascii_lower(name, sizeof name, argv[2 + 2 * p]);
                gb_reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - %s", name, why);
                goto undo;
            }
        }
        if (!config_apply_listeners(c, &scratch, names, npairs))
            goto undo;
        if (!config_apply_tls(c, &scratch, names, npairs)) {
            const gb_listener_hook *hook = &c->eng->listeners;
            char why[256];
            if (hook->rebind && (scratch.port != c->eng->cfg.port || names_include(names, npairs, "bind")))
                (void)hook->rebind(hook->ctx, c->eng->cfg.port, c->eng->cfg.bind, why, sizeof why);
            goto undo;
        }
        /* On success scratch holds the old settings, on failure the
         * refused ones: freed either way. */
        if (config_commit(c, &scratch, names, npairs))
            gb_reply_ok(c);
        gb_settings_free(&scratch);
        gb_free(names);
        return;
    undo:
        gb_settings_free(&scratch);
        gb_free(names);
        return;
    } else if (gb_slice_ieq(sub, "rewrite") && argc == 2) {
        char err[512];
        if (!c->eng->cfg.config_file) {
            gb_reply_error(c, "ERR The server is running without a config file");
        } else {
            gb_strbuf users = {0};
            if (!c->eng->cfg.aclfile[0])
                gb_acl_users_text(c->eng, &users);
            if (gb_config_rewrite(&c->eng->cfg, c->eng->cfg.aclfile[0] ? NULL : gb_strbuf_cstr(&users), err,
                                  sizeof err) != 0) {
                gb_log(GB_LOG_WARNING, "CONFIG REWRITE failed: %s", err);
                gb_reply_errorf(c, "ERR Rewriting config file: %s", err);
            } else {
                gb_log(GB_LOG_NOTICE, "CONFIG REWRITE executed with success.");
                gb_reply_ok(c);
            }
            gb_strbuf_free(&users);
        }
    } else if (gb_slice_ieq(sub, "resetstat") && argc == 2) {
        gb_engine *eng = c->eng;
        /* dirty is not a statistic: the save points count it (Redis's
         * resetServerStats leaves server.dirty alone); zeroed, changes
         * made before were never saved by them. */
        uint64_t dirty = eng->stats.dirty;
        memset(&eng->stats, 0, sizeof eng->stats);
        eng->stats.dirty = dirty;
        eng->stats.ops_sample_last_ms = eng->now_mono_ms;
        gb_commands_reset_stats(eng);
        gb_errorstats_reset(&eng->errorstats);
        eng->expire_cycle_us = 0;
        gb_lazyfree_reset_stats(eng->lazyfree);
        gb_repl_reset_stats(eng);
        if (eng->service && eng->service->reset_stats)
            eng->service->reset_stats(eng->service->ctx);
        gb_reply_ok(c);
    } else if (gb_slice_ieq(sub, "help") && argc == 2) {
        static const char *lines[] = {
            "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GET <pattern>",
            "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>",
            "    Set the configuration <directive> to <value>.",
            "RESETSTAT",
            "    Reset statistics reported by the INFO command.",
            "REWRITE",
            "    Rewrite the configuration file.",
            "HELP",
            "    Prints this help.",
        };
        gb_reply_help(c, lines, GB_ARRAY_LEN(lines));
    } else {
        gb_reply_unknown_subcommand(c, sub, "config");
    }
}

/* ---- misc ---------------------------------------------------------------------------------- */

static void cmd_time(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    int64_t us = gb_clock_real_us();
    gb_reply_array(c, 2);
    gb_reply_bulk_ll(c, us / 1000000);
    gb_reply_bulk_ll(c, us % 1000000);
}

/* Whether every argument after the command name is `word`. */
static bool all_args_are(int argc, gb_slice *argv, const char *word)
{
    for (int i = 1; i < argc; i++)
        if (!gb_slice_ieq(argv[i], word))
            return false;
    return true;
}

static void cmd_shutdown(gb_client *c, int argc, gb_slice *argv)
{
    unsigned flags = 0;
    bool abort_ = false;
    for (int i = 1; i < argc; i++) {
        if (gb_slice_ieq(argv[i], "nosave"))
            flags |= GB_SHUTDOWN_NOSAVE;
        else if (gb_slice_ieq(argv[i], "save"))
            flags |= GB_SHUTDOWN_SAVE;
        else if (gb_slice_ieq(argv[i], "now"))
            flags |= GB_SHUTDOWN_NOW;
        else if (gb_slice_ieq(argv[i], "force"))
            flags |= GB_SHUTDOWN_FORCE;
        else if (gb_slice_ieq(argv[i], "abort"))
            abort_ = true;
        else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    /* ABORT goes alone (Redis 7.0's illegal combinations). */
    if (((flags & GB_SHUTDOWN_SAVE) && (flags & GB_SHUTDOWN_NOSAVE)) || (abort_ && !all_args_are(argc, argv, "abort"))) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    if (abort_) {
        if (gb_shutdown_abort(c->eng) == 0)
            gb_reply_ok(c);
        else
            gb_reply_error(c, "ERR No shutdown in progress.");
        return;
    }
    /* A busy script may only be stopped by SHUTDOWN NOSAVE (Redis 7.0). */
    if (!(flags & GB_SHUTDOWN_NOSAVE) && c->eng->script.timed_out) {
        gb_reply_error(c, gb_script_busy_error(&c->eng->script));
        return;
    }
    /* 0: the loop stops after this command; 1: blocked until the replicas
     * caught up; -1: a failed save answered, the server goes on. */
    if (gb_shutdown_begin(c->eng, flags, c, argc, argv) == 0)
        c->flags |= GB_CLIENT_CLOSE_AFTER_REPLY;
}

GB_DEFINE_COMMANDS(server,
    {"ping", cmd_ping},
    {"echo", cmd_echo},
    {"quit", cmd_quit, GB_CMD_NOT_QUEUED},
    {"auth", cmd_auth},
    {"hello", cmd_hello},
    {"info", cmd_info},
    {"config", cmd_config, 0, "get help resetstat rewrite set"},
    {"time", cmd_time},
    {"shutdown", cmd_shutdown});
