/* The client commands modern clients send on connecting or for client-side
 * caching: CLIENT REPLY, PAUSE, UNPAUSE, NO-EVICT, TRACKING, CACHING,
 * GETREDIR, TRACKINGINFO, and the others of CLIENT (ID, SETNAME, GETNAME,
 * INFO, LIST, KILL, UNBLOCK, HELP), RESET and MONITOR. Argument order, error texts and replies are Redis 7.0's
 * (networking.c clientCommand, resetCommand, monitorCommand). */
#include "engine/commands/cmd_client.h"

#include "engine/core/memory/client_memory.h"

#include "engine/base/mem.h"
#include "engine/base/strbuf.h"
#include "engine/base/util.h"
#include "engine/commands/cmd_util.h"
#include "engine/core/acl/acl.h"
#include "engine/core/request/blocking.h"
#include "engine/core/engine.h"
#include "engine/core/introspect/monitor.h"
#include "engine/core/request/multi.h"
#include "engine/core/pubsub/pubsub.h"
#include "engine/core/pubsub/tracking.h"
#include "platform/clock.h"

/* Redis's addReplySubcommandSyntaxError: a known subcommand with a count
 * of arguments its handler does not take. */
static void subcommand_syntax(gb_client *c, gb_slice sub)
{
    gb_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try CLIENT HELP.",
                    (int)GB_MIN(sub.len, 128), sub.ptr);
}

/* Whether the client's replies are a RESP stream: an SBE ring answers each
 * call with one typed frame, so it cannot go without replies or receive
 * MONITOR lines. */
static bool speaks_resp(const gb_client *c) { return c->wire_rops->resp2 != NULL; }

static void client_reply(gb_client *c, gb_slice mode)
{
    if (!speaks_resp(c)) {
        gb_reply_error(c, "ERR CLIENT REPLY needs a RESP connection: an SBE ring answers every call");
        return;
    }
    if (gb_slice_ieq(mode, "on")) {
        c->flags &= ~(GB_CLIENT_REPLY_SKIP | GB_CLIENT_REPLY_OFF);
        gb_client_update_reply(c);
        gb_reply_ok(c);
    } else if (gb_slice_ieq(mode, "off")) {
        c->flags |= GB_CLIENT_REPLY_OFF;
        gb_client_update_reply(c);
    } else if (gb_slice_ieq(mode, "skip")) {
        if (!(c->flags & GB_CLIENT_REPLY_OFF))
            c->flags |= GB_CLIENT_REPLY_SKIP_NEXT;
    } else {
        gb_reply_error(c, GB_ERR_SYNTAX);
    }
}

/* CLIENT PAUSE timeout [WRITE|ALL]: the mode first, then the timeout
 * (Redis's getTimeoutFromObjectOrReply, milliseconds). */
static void client_pause(gb_client *c, int argc, gb_slice *argv)
{
    int type = GB_PAUSE_ALL;
    if (argc == 4) {
        if (gb_slice_ieq(argv[3], "write")) {
            type = GB_PAUSE_WRITE;
        } else if (!gb_slice_ieq(argv[3], "all")) {
            gb_reply_error(c, "ERR CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    }
    int64_t ms;
    if (!gb_slice2ll(argv[2], &ms)) {
        gb_reply_error(c, "ERR timeout is not an integer or out of range");
        return;
    }
    if (ms < 0) {
        gb_reply_error(c, "ERR timeout is negative");
        return;
    }
    /* Redis 7.0 adds the timeout to the time in ms without an overflow
     * check: a timeout past the int64 range wraps to an end in the past,
     * a pause that is over at once (OK all the same). */
    uint64_t now = gb_clock_mono_ms();
    uint64_t end = ms > INT64_MAX - gb_clock_real_ms() ? now : now + (uint64_t)ms;
    gb_pause_start(c->eng, type, end);
    gb_reply_ok(c);
}

static void client_no_evict(gb_client *c, gb_slice mode)
{
    if (gb_slice_ieq(mode, "on")) {
        c->flags |= GB_CLIENT_NO_EVICT;
    } else if (gb_slice_ieq(mode, "off")) {
        c->flags &= ~GB_CLIENT_NO_EVICT;
    } else {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    gb_client_memory_changed(c); /* in or out of the evictable total */
    gb_reply_ok(c);
}

static bool client_more(gb_client *c, int argc, gb_slice *argv)
{
    gb_slice sub = argv[1];
    if (gb_slice_ieq(sub, "reply")) {
        client_reply(c, argv[2]);
    } else if (gb_slice_ieq(sub, "pause")) {
        if (argc == 3 || argc == 4)
            client_pause(c, argc, argv);
        else
            subcommand_syntax(c, sub);
    } else if (gb_slice_ieq(sub, "unpause")) {
        gb_pause_lift(c->eng);
        gb_reply_ok(c);
    } else if (gb_slice_ieq(sub, "no-evict")) {
        client_no_evict(c, argv[2]);
    } else if (gb_slice_ieq(sub, "tracking")) {
        gb_tracking_cmd_tracking(c, argc, argv);
    } else if (gb_slice_ieq(sub, "caching")) {
        gb_tracking_cmd_caching(c, argc, argv);
    } else if (gb_slice_ieq(sub, "getredir")) {
        gb_tracking_cmd_getredir(c);
    } else if (gb_slice_ieq(sub, "trackinginfo")) {
        gb_tracking_cmd_trackinginfo(c);
    } else {
        return false;
    }
    return true;
}

/* ---- RESET ---------------------------------------------------------------------- */

/* Redis 7.0's clearClientConnectionState: out of MONITOR, tracking off,
 * every subscription dropped silently, database 0, RESP2, the default user (authenticated if it needs no
 * password), no transaction or WATCH, no name, replies on, cluster READONLY and ASKING off. */
static void cmd_reset(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    gb_engine *eng = c->eng;
    gb_monitor_remove(c);
    gb_tracking_disable(c);
    gb_pubsub_client_free(c);
    c->db = &eng->dbs[0];
    gb_multi_discard(c);
    gb_multi_unwatch_all(c);
    c->flags &= ~(GB_CLIENT_AUTHED | GB_CLIENT_REPLY_OFF | GB_CLIENT_REPLY_SKIP | GB_CLIENT_REPLY_SKIP_NEXT |
                  GB_CLIENT_READONLY | GB_CLIENT_ASKING);
    c->user = eng->acl->default_user;
    if (gb_acl_user_is_open(c->user))
        c->flags |= GB_CLIENT_AUTHED;
    gb_free(c->name);
    c->name = NULL;
    gb_client_set_resp(c, 2);
    gb_reply_status(c, "RESET");
}

/* ---- MONITOR -------------------------------------------------------------------- */

static void cmd_monitor(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    /* EXEC expects one reply per queued command (Redis's
     * CLIENT_DENY_BLOCKING). */
    if (c->flags & GB_CLIENT_IN_EXEC) {
        gb_reply_error(c, "ERR MONITOR isn't allowed for DENY BLOCKING client");
        return;
    }
    if (!speaks_resp(c)) {
        gb_reply_error(c, "ERR MONITOR needs a RESP connection: an SBE ring answers every call with one frame");
        return;
    }
    if (c->flags & GB_CLIENT_MONITOR)
        return; /* already one: Redis answers nothing */
    gb_monitor_add(c);
    gb_reply_ok(c);
}

/* ---- CLIENT's own name (HELLO SETNAME sets it too) ---- */

bool gb_client_name_valid(gb_slice name)
{
    for (size_t i = 0; i < name.len; i++)
        if (name.ptr[i] < '!' || name.ptr[i] > '~')
            return false;
    return true;
}

void gb_client_name_set(gb_client *c, gb_slice name)
{
    gb_free(c->name);
    c->name = NULL;
    if (name.len) {
        c->name = gb_malloc(name.len + 1);
        memcpy(c->name, name.ptr, name.len);
        c->name[name.len] = '\0';
    }
}

/* ---- CLIENT ------------------------------------------------------------------ */

/* One CLIENT LIST line, whole however long the client's name, and its
 * newline. */
static void add_client_line(gb_strbuf *b, const gb_client *x)
{
    size_t n;
    char *line = gb_client_info_dup(x, &n);
    gb_strbuf_add(b, line, n);
    gb_strbuf_add(b, "\n", 1);
    gb_free(line);
}


enum client_type { CLIENT_TYPE_ANY, CLIENT_TYPE_NORMAL, CLIENT_TYPE_PUBSUB, CLIENT_TYPE_REPLICA, CLIENT_TYPE_MASTER };

/* Redis's getClientType as CLIENT LIST / KILL TYPE filter: on a replica
 * the client applying its primary's stream is "master" (and nothing
 * else), a replica's link is "replica", a subscribed client (flag P)
 * "pubsub", any other "normal". */
static bool client_is_type(const gb_client *x, enum client_type type)
{
    if (type == CLIENT_TYPE_ANY)
        return true;
    if (x->flags & GB_CLIENT_MASTER)
        return type == CLIENT_TYPE_MASTER;
    bool replica = (x->flags & GB_CLIENT_REPLICA) != 0;
    return (type == CLIENT_TYPE_REPLICA && replica) || (type == CLIENT_TYPE_PUBSUB && x->pubsub && !replica) ||
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
        *type = CLIENT_TYPE_MASTER;
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
    gb_strbuf b = {0};
    if (ids) {
        for (int i = 0; i < nids; i++) {
            gb_client *x = ids[i] > 0 ? gb_client_by_id(c->eng, (uint64_t)ids[i]) : NULL;
            if (x)
                add_client_line(&b, x);
        }
    } else {
        /* The engine's list holds the newest first. */
        gb_client *oldest = c->eng->clients;
        while (oldest && oldest->next)
            oldest = oldest->next;
        for (gb_client *x = oldest; x; x = x->prev)
            if (client_is_type(x, type) && !gb_client_gone(x))
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
    gb_client_kill(victim);
}

static void client_kill(gb_client *c, int argc, gb_slice *argv)
{
    if (argc == 3) {
        /* Old form: CLIENT KILL addr:port */
        for (gb_client *x = c->eng->clients; x; x = x->next) {
            if (gb_client_gone(x))
                continue;
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
    int64_t id = -1;
    enum client_type type = CLIENT_TYPE_ANY;
    gb_slice addr = {0}, laddr = {0};
    bool skipme = true, have_addr = false, have_laddr = false;
    const gb_acl_user *user = NULL;
    /* pairs read left to right, each checked as it comes (Redis's order:
     * a bad value before a missing one is what is reported) */
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 >= argc) {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
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
        if ((id > 0 && x->id != (uint64_t)id) || gb_client_gone(x))
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
    if (client_more(c, argc, argv))
        return;
    if (gb_slice_ieq(sub, "id") && argc == 2) {
        gb_reply_int(c, (int64_t)c->id);
    } else if (gb_slice_ieq(sub, "setname") && argc == 3) {
        if (!gb_client_name_valid(argv[2])) {
            gb_reply_error(c, "ERR Client names cannot contain spaces, newlines or special characters.");
            return;
        }
        gb_client_name_set(c, argv[2]);
        gb_reply_ok(c);
    } else if (gb_slice_ieq(sub, "getname") && argc == 2) {
        if (c->name)
            gb_reply_cstr(c, c->name);
        else
            gb_reply_nil(c);
    } else if (gb_slice_ieq(sub, "info") && argc == 2) {
        gb_strbuf b = {0};
        add_client_line(&b, c);
        gb_reply_verbatim(c, b.p, b.len);
        gb_free(b.p);
    } else if (gb_slice_ieq(sub, "list")) {
        client_list(c, argc, argv);
    } else if (gb_slice_ieq(sub, "kill") && argc >= 3) {
        client_kill(c, argc, argv);
    } else if (gb_slice_ieq(sub, "unblock") && (argc == 3 || argc == 4)) {
        /* the reason before the id, as Redis reads them */
        bool as_error = false;
        if (argc == 4) {
            if (gb_slice_ieq(argv[3], "error"))
                as_error = true;
            else if (!gb_slice_ieq(argv[3], "timeout")) {
                gb_reply_error(c, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
                return;
            }
        }
        int64_t id;
        if (!gb_arg_ll(c, argv[2], &id))
            return;
        gb_client *x = id > 0 ? gb_client_by_id(c->eng, (uint64_t)id) : NULL;
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
        /* (REPLY, PAUSE, TRACKING, ... are answered by client_more.) */
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

GB_DEFINE_COMMANDS(client,
    {"client", cmd_client, 0, "caching getname getredir help id info kill list no-evict pause reply setname tracking trackinginfo unblock "
     "unpause"},
    {"reset", cmd_reset, GB_CMD_NOT_QUEUED},
    {"monitor", cmd_monitor});
