/* Connection and server commands: PING, ECHO, QUIT, AUTH, HELLO, CLIENT,
 * INFO, CONFIG, TIME, SHUTDOWN, MEMORY. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "engine/core/acl.h"
#include "engine/core/acl_file.h"
#include "engine/core/blocking.h"
#include "engine/commands/cmd_client.h"
#include "engine/commands/cmd_util.h"
#include "engine/commands/typed.h"
#include "engine/persist/persist.h"
#include "engine/core/engine.h"
#include "engine/core/evict.h"
#include "engine/base/mem.h"
#include "engine/core/lazyfree.h"
#include "engine/core/multi.h"
#include "engine/core/process_settings.h"
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
        gb_reply_status(c, "PONG");
}

void gb_cmd_ping(gb_client *c)
{
    gb_slice argv[1] = {gb_slice_cstr("ping")};
    cmd_ping(c, 1, argv);
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

static bool valid_client_name(gb_slice name)
{
    for (size_t i = 0; i < name.len; i++)
        if (name.ptr[i] < '!' || name.ptr[i] > '~')
            return false;
    return true;
}

static void set_client_name(gb_client *c, gb_slice name)
{
    gb_free(c->name);
    c->name = NULL;
    if (name.len) {
        c->name = gb_malloc(name.len + 1);
        memcpy(c->name, name.ptr, name.len);
        c->name[name.len] = '\0';
    }
}

static void cmd_hello(gb_client *c, int argc, gb_slice *argv)
{
    /* Redis 7.0's order: version (not an integer; NOPROTO unless 2 or 3),
     * options (syntax), AUTH (WRONGPASS), the NOAUTH check, then SETNAME's
     * validation, then the switch. A transport without RESP3 (an SBE ring)
     * refuses it only once all of that passed, so an unauthenticated
     * "HELLO 3" gets NOAUTH as from Redis, and a valid "HELLO 3 AUTH ..."
     * does not authenticate a connection it refuses. */
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
    gb_slice user = {0}, pass = {0}, name = {0};
    bool have_auth = false, have_name = false;
    for (; j < argc; j++) {
        int more = argc - 1 - j;
        if (gb_slice_ieq(argv[j], "auth") && more >= 2) {
            user = argv[j + 1];
            pass = argv[j + 2];
            have_auth = true;
            j += 2;
        } else if (gb_slice_ieq(argv[j], "setname") && more >= 1) {
            name = argv[j + 1];
            have_name = true;
            j++;
        } else {
            gb_reply_errorf(c, "ERR Syntax error in HELLO option '%.*s'", (int)GB_MIN(argv[j].len, 128),
                            argv[j].ptr);
            return;
        }
    }
    bool authed = (c->flags & GB_CLIENT_AUTHED) != 0;
    const gb_acl_user *as = NULL;
    if (have_auth) {
        as = gb_acl_check_credentials(c, user, pass, argv[0]);
        if (!as) {
            gb_reply_error(c, GB_ERR_WRONGPASS);
            return;
        }
        authed = true;
    }
    if (!authed) {
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
    if (as)
        gb_acl_login(c, as);
    if (have_name && !valid_client_name(name)) {
        gb_reply_error(c, "ERR Client names cannot contain spaces, newlines or special characters.");
        return;
    }
    if (have_name)
        set_client_name(c, name);
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
    gb_reply_cstr(c, "master");
    gb_reply_cstr(c, "modules");
    gb_reply_array(c, 0);
}

/* ---- CLIENT ------------------------------------------------------------------ */

typedef struct strbuf {
    char *p;
    size_t len, cap;
} strbuf;

static void sb_add(strbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = gb_realloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

/* One CLIENT LIST line, whole however long the client's name, and its
 * newline. */
static void add_client_line(strbuf *b, const gb_client *x)
{
    size_t n;
    char *line = gb_client_info_dup(x, &n);
    sb_add(b, line, n);
    sb_add(b, "\n", 1);
    gb_free(line);
}

static gb_client *client_by_id(gb_engine *eng, uint64_t id)
{
    for (gb_client *x = eng->clients; x; x = x->next)
        if (x->id == id)
            return x;
    return NULL;
}

enum client_type { CLIENT_TYPE_ANY, CLIENT_TYPE_NORMAL, CLIENT_TYPE_PUBSUB, CLIENT_TYPE_REPLICA, CLIENT_TYPE_NONE };

/* Redis's getClientType as CLIENT LIST / KILL TYPE filter: a replica's
 * link is "replica", a subscribed client (flag P) "pubsub", any other
 * "normal"; "master" matches nothing on a primary. */
static bool client_is_type(const gb_client *x, enum client_type type)
{
    bool replica = (x->flags & GB_CLIENT_REPLICA) != 0;
    return type == CLIENT_TYPE_ANY || (type == CLIENT_TYPE_REPLICA && replica) ||
           (type == CLIENT_TYPE_PUBSUB && x->pubsub && !replica) ||
           (type == CLIENT_TYPE_NORMAL && !x->pubsub && !replica);
}

/* A TYPE argument's class, or false for a name Redis does not know. */
static bool parse_client_type(gb_slice t, enum client_type *type)
{
    if (gb_slice_ieq(t, "normal"))
        *type = CLIENT_TYPE_NORMAL;
    else if (gb_slice_ieq(t, "pubsub"))
        *type = CLIENT_TYPE_PUBSUB;
    else if (gb_slice_ieq(t, "replica") || gb_slice_ieq(t, "slave"))
        *type = CLIENT_TYPE_REPLICA;
    else if (gb_slice_ieq(t, "master"))
        *type = CLIENT_TYPE_NONE;
    else
        return false;
    return true;
}

/* CLIENT LIST [TYPE type | ID id ...], as Redis 7.0 answers it: every
 * client in the order they connected (oldest first), or the clients with
 * those ids in the order given (an id with no client, 0 or negative
 * included, adds nothing; only a non-number is an error). */
static void client_list(gb_client *c, int argc, gb_slice *argv)
{
    enum client_type type = CLIENT_TYPE_ANY;
    int64_t *ids = NULL;
    int nids = 0;
    if (argc == 4 && gb_slice_ieq(argv[2], "type")) {
        gb_slice t = argv[3];
        if (!parse_client_type(t, &type)) {
            gb_reply_errorf(c, "ERR Unknown client type '%.*s'", (int)GB_MIN(t.len, 64), t.ptr);
            return;
        }
    } else if (argc > 3 && gb_slice_ieq(argv[2], "id")) {
        ids = gb_malloc((size_t)(argc - 3) * sizeof *ids);
        for (int i = 3; i < argc; i++)
            if (!gb_slice2ll(argv[i], &ids[nids++])) {
                gb_free(ids);
                gb_reply_error(c, "ERR Invalid client ID");
                return;
            }
    } else if (argc != 2) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    strbuf b = {0};
    if (ids) {
        for (int i = 0; i < nids; i++) {
            gb_client *x = ids[i] > 0 ? client_by_id(c->eng, (uint64_t)ids[i]) : NULL;
            if (x)
                add_client_line(&b, x);
        }
    } else {
        /* The engine's list holds the newest first. */
        gb_client *oldest = c->eng->clients;
        while (oldest && oldest->next)
            oldest = oldest->next;
        for (gb_client *x = oldest; x; x = x->prev)
            if (client_is_type(x, type))
                add_client_line(&b, x);
    }
    gb_reply_verbatim(c, b.p ? b.p : "", b.len);
    gb_free(b.p);
    gb_free(ids);
}

static void kill_client(gb_client *self, gb_client *victim)
{
    if (victim == self) {
        self->flags |= GB_CLIENT_CLOSE_AFTER_REPLY;
        return;
    }
    victim->flags |= GB_CLIENT_CLOSE_ASAP;
    if (victim->hooks && victim->hooks->close)
        victim->hooks->close(victim);
}

static void client_kill(gb_client *c, int argc, gb_slice *argv)
{
    if (argc == 3) {
        /* Old form: CLIENT KILL addr:port */
        for (gb_client *x = c->eng->clients; x; x = x->next) {
            gb_client_desc d = {.fd = -1};
            if (x->hooks && x->hooks->describe)
                x->hooks->describe(x, &d);
            if (gb_slice_eq(argv[2], gb_slice_cstr(d.addr))) {
                kill_client(c, x);
                gb_reply_ok(c);
                return;
            }
        }
        gb_reply_error(c, "ERR No such client");
        return;
    }
    if ((argc - 2) % 2 != 0) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    int64_t id = -1;
    enum client_type type = CLIENT_TYPE_ANY;
    gb_slice addr = {0}, laddr = {0};
    bool skipme = true, have_addr = false, have_laddr = false;
    const gb_acl_user *user = NULL;
    for (int i = 2; i < argc; i += 2) {
        gb_slice k = argv[i], v = argv[i + 1];
        if (gb_slice_ieq(k, "id")) {
            if (!gb_slice2ll(v, &id) || id <= 0) {
                gb_reply_error(c, "ERR client-id should be greater than 0");
                return;
            }
        } else if (gb_slice_ieq(k, "addr")) {
            addr = v;
            have_addr = true;
        } else if (gb_slice_ieq(k, "laddr")) {
            laddr = v;
            have_laddr = true;
        } else if (gb_slice_ieq(k, "skipme")) {
            if (gb_slice_ieq(v, "yes"))
                skipme = true;
            else if (gb_slice_ieq(v, "no"))
                skipme = false;
            else {
                gb_reply_error(c, GB_ERR_SYNTAX);
                return;
            }
        } else if (gb_slice_ieq(k, "type")) {
            if (!parse_client_type(v, &type)) {
                gb_reply_errorf(c, "ERR Unknown client type '%.*s'", (int)GB_MIN(v.len, 64), v.ptr);
                return;
            }
        } else if (gb_slice_ieq(k, "user")) {
            user = gb_acl_find_user(c->eng, v);
            if (!user) {
                gb_reply_errorf(c, "ERR No such user '%.*s'", (int)GB_MIN(v.len, 64), v.ptr);
                return;
            }
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    int64_t killed = 0;
    for (gb_client *x = c->eng->clients; x; x = x->next) {
        if (id > 0 && x->id != (uint64_t)id)
            continue;
        if ((skipme && x == c) || (user && x->user != user) || !client_is_type(x, type))
            continue;
        if (have_addr || have_laddr) {
            gb_client_desc d = {.fd = -1};
            if (x->hooks && x->hooks->describe)
                x->hooks->describe(x, &d);
            if (have_addr && !gb_slice_eq(addr, gb_slice_cstr(d.addr)))
                continue;
            if (have_laddr && !gb_slice_eq(laddr, gb_slice_cstr(d.laddr)))
                continue;
        }
        kill_client(c, x);
        killed++;
    }
    gb_reply_int(c, killed);
}

static void cmd_client(gb_client *c, int argc, gb_slice *argv)
{
    gb_slice sub = argv[1];
    if (gb_cmd_client_more(c, argc, argv))
        return;
    if (gb_slice_ieq(sub, "id") && argc == 2) {
        gb_reply_int(c, (int64_t)c->id);
    } else if (gb_slice_ieq(sub, "setname") && argc == 3) {
        if (!valid_client_name(argv[2])) {
            gb_reply_error(c, "ERR Client names cannot contain spaces, newlines or special characters.");
            return;
        }
        set_client_name(c, argv[2]);
        gb_reply_ok(c);
    } else if (gb_slice_ieq(sub, "getname") && argc == 2) {
        if (c->name)
            gb_reply_cstr(c, c->name);
        else
            gb_reply_nil(c);
    } else if (gb_slice_ieq(sub, "info") && argc == 2) {
        strbuf b = {0};
        add_client_line(&b, c);
        gb_reply_verbatim(c, b.p, b.len);
        gb_free(b.p);
    } else if (gb_slice_ieq(sub, "list")) {
        client_list(c, argc, argv);
    } else if (gb_slice_ieq(sub, "kill") && argc >= 3) {
        client_kill(c, argc, argv);
    } else if (gb_slice_ieq(sub, "unblock") && (argc == 3 || argc == 4)) {
        int64_t id;
        if (!gb_arg_ll(c, argv[2], &id))
            return;
        bool as_error = false;
        if (argc == 4) {
            if (gb_slice_ieq(argv[3], "error"))
                as_error = true;
            else if (!gb_slice_ieq(argv[3], "timeout")) {
                gb_reply_error(c, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
                return;
            }
        }
        gb_client *x = id > 0 ? client_by_id(c->eng, (uint64_t)id) : NULL;
        if (x && (x->flags & GB_CLIENT_BLOCKED) && !gb_pause_is_postponed(x)) {
            gb_blocking_unblock(x, as_error ? GB_UNBLOCK_ERROR : GB_UNBLOCK_TIMEOUT);
            gb_reply_int(c, 1);
        } else {
            gb_reply_int(c, 0);
        }
    } else if (gb_slice_ieq(sub, "help") && argc == 2) {
        static const char *lines[] = {
            "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "CACHING (YES|NO)",
            "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
            "GETREDIR",
            "    Return the client ID we are redirecting to when tracking is enabled.",
            "GETNAME",
            "    Return the name of the current connection.",
            "ID",
            "    Return the ID of the current connection.",
            "INFO",
            "    Return information about the current client connection.",
            "KILL <ip:port>",
            "    Kill connection made from <ip:port>.",
            "KILL <option> <value> [<option> <value> [...]]",
            "    Kill connections. Options are:",
            "    * ADDR (<ip:port>|<unixsocket>:0)",
            "      Kill connections made from the specified address",
            "    * LADDR (<ip:port>|<unixsocket>:0)",
            "      Kill connections made to specified local address",
            "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
            "      Kill connections by type.",
            "    * USER <username>",
            "      Kill connections authenticated by <username>.",
            "    * SKIPME (YES|NO)",
            "      Skip killing current connection (default: yes).",
            "LIST [options ...]",
            "    Return information about client connections. Options:",
            "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
            "      Return clients of specified type.",
            "UNPAUSE",
            "    Stop the current client pause, resuming traffic.",
            "PAUSE <timeout> [WRITE|ALL]",
            "    Suspend all, or just write, clients for <timeout> milliseconds.",
            "REPLY (ON|OFF|SKIP)",
            "    Control the replies sent to the current connection.",
            "SETNAME <name>",
            "    Assign the name <name> to the current connection.",
            "UNBLOCK <clientid> [TIMEOUT|ERROR]",
            "    Unblock the specified blocked client.",
            "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
            "         [OPTIN] [OPTOUT] [NOLOOP]",
            "    Control server assisted client side caching.",
            "TRACKINGINFO",
            "    Report tracking status for the current connection.",
            "NO-EVICT (ON|OFF)",
            "    Protect current client connection from eviction.",
            "HELP",
            "    Prints this help.",
        };
        gb_reply_help(c, lines, GB_ARRAY_LEN(lines));
    } else {
        static const char *known[] = {"id", "setname", "getname", "info", "list", "kill", "unblock", "help"};
        /* (REPLY, PAUSE, TRACKING, ... are answered by gb_cmd_client_more.) */
        for (size_t i = 0; i < GB_ARRAY_LEN(known); i++)
            if (gb_slice_ieq(sub, known[i])) {
                char name[32];
                snprintf(name, sizeof name, "client|%s", known[i]);
                gb_reply_wrong_arity(c, name);
                return;
            }
        gb_reply_unknown_subcommand(c, sub, "client");
    }
}

/* ---- INFO ---------------------------------------------------------------------------- */

static void info_out(void *ctx, const char *s, size_t n) { sb_add(ctx, s, n); }

static void cmd_info(gb_client *c, int argc, gb_slice *argv)
{
    strbuf b = {0};
    if (argc == 1) {
        gb_engine_info(c->eng, "default", info_out, &b);
    } else {
        for (int i = 1; i < argc; i++) {
            char sec[32];
            if (!gb_ascii_lower(sec, sizeof sec, argv[i]))
                continue;
            size_t before = b.len;
            if (b.len)
                sb_add(&b, "\r\n", 2);
            gb_engine_info(c->eng, sec, info_out, &b);
            if (b.len == before + (before ? 2 : 0))
                b.len = before; /* unknown section: nothing, like Redis */
        }
    }
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
    if (strcmp(name, "crash-log-enabled") == 0)
        gb_crash_log_apply(&eng->cfg);
    if (strcmp(name, "jemalloc-bg-thread") == 0)
        gb_allocator_bg_thread_apply(&eng->cfg);
    if (strcmp(name, "maxmemory") == 0)
        gb_evict_maxmemory_changed(eng);
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
    if (rc == GB_TLS_APPLY_OK)
        return true;
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
        memset(&eng->stats, 0, sizeof eng->stats);
        eng->stats.ops_sample_last_ms = eng->now_mono_ms;
        gb_commands_reset_stats(eng);
        gb_errorstats_reset(&eng->errorstats);
        eng->expire_cycle_us = 0;
        gb_lazyfree_reset_stats(eng->lazyfree);
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
    for (int i = 1; i < argc; i++) {
        if (!gb_slice_ieq(argv[i], "nosave") && !gb_slice_ieq(argv[i], "save") && !gb_slice_ieq(argv[i], "now") &&
            !gb_slice_ieq(argv[i], "force") && !gb_slice_ieq(argv[i], "abort")) {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    bool save = false, nosave = false, abort_ = false;
    for (int i = 1; i < argc; i++) {
        save |= gb_slice_ieq(argv[i], "save");
        nosave |= gb_slice_ieq(argv[i], "nosave");
        abort_ |= gb_slice_ieq(argv[i], "abort");
    }
    /* ABORT goes alone (Redis 7.0's illegal combinations). */
    if ((save && nosave) || (abort_ && !all_args_are(argc, argv, "abort"))) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    /* ABORT cancels a shutdown that waits for replicas to catch up; a
     * shutdown here never waits (no replication), so there is never one to
     * cancel. */
    if (abort_) {
        gb_reply_error(c, "ERR No shutdown in progress.");
        return;
    }
    /* A busy script may only be stopped by SHUTDOWN NOSAVE (Redis 7.0). */
    if (!nosave && c->eng->script.timed_out) {
        gb_reply_error(c, gb_script_busy_error(&c->eng->script));
        return;
    }
    gb_log(GB_LOG_WARNING, "User requested shutdown...");
    /* A save that fails keeps the server up (Redis's prepareForShutdown). */
    if (gb_engine_prepare_shutdown(c->eng, save, nosave) != 0) {
        gb_reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
        return;
    }
    c->eng->shutdown_requested = true;
    c->flags |= GB_CLIENT_CLOSE_AFTER_REPLY;
}

#define CONN (GB_CMD_LOADING | GB_CMD_STALE | GB_CMD_FAST)

GB_DEFINE_COMMANDS(server,
    {"ping", -1, GB_CMD_FAST, 0, 0, 0, cmd_ping, "connection", "Returns the server's liveliness response.",
     "1.0.0"},
    {"echo", 2, GB_CMD_FAST | GB_CMD_LOADING | GB_CMD_STALE, 0, 0, 0, cmd_echo, "connection", "Returns the given string.", "1.0.0"},
    {"quit", -1, CONN | GB_CMD_NOAUTH | GB_CMD_NOMULTI | GB_CMD_NOSCRIPT | GB_CMD_ALLOW_BUSY, 0, 0, 0, cmd_quit, "connection", "Closes the connection.",
     "1.0.0"},
    {"auth", -2, CONN | GB_CMD_NOAUTH | GB_CMD_NOSCRIPT | GB_CMD_ALLOW_BUSY, 0, 0, 0, cmd_auth, "connection",
     "Authenticates the connection.", "1.0.0"},
    {"hello", -1, CONN | GB_CMD_NOAUTH | GB_CMD_NOSCRIPT | GB_CMD_ALLOW_BUSY, 0, 0, 0, cmd_hello, "connection",
     "Handshakes with the server.", "6.0.0"},
    {"client", -2, 0, 0, 0, 0, cmd_client, "connection",
     "A container for client connection commands.", "2.4.0",
     "caching getname getredir help id info kill list no-evict pause reply setname tracking trackinginfo unblock "
     "unpause"},
    {"info", -1, GB_CMD_LOADING | GB_CMD_STALE, 0, 0, 0, cmd_info, "server",
     "Returns information and statistics about the server.", "1.0.0"},
    {"config", -2, 0, 0, 0, 0, cmd_config, "server",
     "A container for server configuration commands.", "2.0.0", "get help resetstat rewrite set"},
    {"time", 1, GB_CMD_LOADING | GB_CMD_STALE | GB_CMD_FAST, 0, 0, 0, cmd_time, "server",
     "Returns the server time.", "2.6.0"},
    {"shutdown", -1, GB_CMD_ADMIN | GB_CMD_NOSCRIPT | GB_CMD_ALLOW_BUSY | GB_CMD_LOADING | GB_CMD_STALE, 0, 0, 0, cmd_shutdown,
     "server", "Synchronously saves the database(s) to disk and shuts down the Redis server.", "1.0.0"});
