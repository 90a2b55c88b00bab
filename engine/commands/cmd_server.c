/* Connection and server commands: PING, ECHO, QUIT, AUTH, HELLO, CLIENT,
 * COMMAND, INFO, CONFIG, TIME, SHUTDOWN, MEMORY. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "engine/core/blocking.h"
#include "engine/commands/cmd_util.h"
#include "engine/commands/typed.h"
#include "engine/persist/persist.h"
#include "engine/core/engine.h"
#include "engine/base/mem.h"
#include "engine/core/multi.h"
#include "engine/base/util.h"

#ifndef GOBLIN_VERSION
#define GOBLIN_VERSION "0.1.0"
#endif

static void cmd_ping(gb_client *c, int argc, gb_slice *argv)
{
    if (argc > 2) {
        gb_reply_wrong_arity(c, "ping");
        return;
    }
    if (argc == 2)
        gb_reply_slice(c, argv[1]);
    else
        gb_cmd_ping(c);
}

void gb_cmd_ping(gb_client *c) { gb_reply_status(c, "PONG"); }

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

static bool password_ok(gb_client *c, gb_slice user, gb_slice pass)
{
    const char *req = c->eng->cfg.requirepass;
    if (!gb_slice_eq(user, gb_slice_cstr("default")))
        return false;
    if (!req || !req[0])
        return true; /* the default user has no password: any is accepted */
    /* Constant-time comparison: the reply must not leak how much matched. */
    size_t rl = strlen(req);
    unsigned diff = (unsigned)(rl ^ pass.len);
    for (size_t i = 0; i < pass.len; i++)
        diff |= (unsigned char)pass.ptr[i] ^ (unsigned char)req[i % (rl ? rl : 1)];
    return diff == 0;
}

static void cmd_auth(gb_client *c, int argc, gb_slice *argv)
{
    if (argc > 3) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    gb_slice user = gb_slice_cstr("default"), pass;
    if (argc == 2) {
        if (!c->eng->cfg.requirepass || !c->eng->cfg.requirepass[0]) {
            gb_reply_error(c, "ERR AUTH <password> called without any password configured for the default user. "
                              "Are you sure your configuration is correct?");
            return;
        }
        pass = argv[1];
    } else {
        user = argv[1];
        pass = argv[2];
    }
    if (password_ok(c, user, pass)) {
        c->flags |= GB_CLIENT_AUTHED;
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
     * validation. RESP3 is refused only once all of that passed, so an
     * unauthenticated "HELLO 3" gets NOAUTH as from Redis, and a valid
     * "HELLO 3 AUTH ..." does not authenticate a connection it refuses. */
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
    if (have_auth) {
        if (!password_ok(c, user, pass)) {
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
    if (ver == 3) {
        gb_reply_error(c, "NOPROTO unsupported protocol version: goblin-core speaks RESP2 only for now "
                          "(use HELLO 2 or no HELLO)");
        return;
    }
    if (have_auth)
        c->flags |= GB_CLIENT_AUTHED;
    if (have_name && !valid_client_name(name)) {
        gb_reply_error(c, "ERR Client names cannot contain spaces, newlines or special characters.");
        return;
    }
    if (have_name)
        set_client_name(c, name);
    gb_reply_array(c, 14);
    gb_reply_cstr(c, "server");
    gb_reply_cstr(c, "goblin-core");
    gb_reply_cstr(c, "version");
    gb_reply_cstr(c, "7.0.15");
    gb_reply_cstr(c, "proto");
    gb_reply_int(c, 2);
    gb_reply_cstr(c, "id");
    gb_reply_int(c, (int64_t)c->id);
    gb_reply_cstr(c, "mode");
    gb_reply_cstr(c, "standalone");
    gb_reply_cstr(c, "role");
    gb_reply_cstr(c, "master");
    gb_reply_cstr(c, "modules");
    gb_reply_array(c, 0);
}

/* ---- CLIENT ------------------------------------------------------------------ */

/* One CLIENT LIST line, in Redis's field order. */
static size_t client_line(gb_client *c, char *buf, size_t cap)
{
    gb_client_desc d = {.fd = -1};
    if (c->hooks && c->hooks->describe)
        c->hooks->describe(c, &d);
    char flags[8];
    int nf = 0;
    if (c->flags & GB_CLIENT_MULTI)
        flags[nf++] = 'x';
    if (c->flags & GB_CLIENT_BLOCKED)
        flags[nf++] = 'b';
    if (c->flags & GB_CLIENT_DIRTY_CAS)
        flags[nf++] = 'd';
    if (c->flags & GB_CLIENT_CLOSE_AFTER_REPLY)
        flags[nf++] = 'c';
    if (c->flags & GB_CLIENT_UNIX)
        flags[nf++] = 'U';
    if (nf == 0)
        flags[nf++] = 'N';
    flags[nf] = '\0';
    int64_t now = (int64_t)c->eng->now_mono_ms;
    int n = snprintf(buf, cap,
                     "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=0 psub=0 ssub=0 "
                     "multi=%d qbuf=%zu qbuf-free=%zu argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=%zu oll=0 omem=%zu "
                     "tot-mem=%zu events=r cmd=%s user=default redir=-1 resp=%d%s\n",
                     (unsigned long long)c->id, d.addr, d.laddr, d.fd, c->name ? c->name : "",
                     (long long)((now - c->ctime_ms) / 1000), (long long)((now - c->last_ms) / 1000), flags,
                     c->db->id, (c->flags & GB_CLIENT_MULTI) ? c->mcount : -1, d.qbuf, d.qbuf_free, d.obuf, d.omem,
                     d.omem + d.qbuf + d.qbuf_free, c->last_cmd ? c->last_cmd->def->name : "NULL", c->resp,
                     (c->flags & GB_CLIENT_RING) ? " transport=ring" : "");
    if (n < 0)
        return 0;
    return (size_t)n < cap ? (size_t)n : cap - 1;
}

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

static gb_client *client_by_id(gb_engine *eng, uint64_t id)
{
    for (gb_client *x = eng->clients; x; x = x->next)
        if (x->id == id)
            return x;
    return NULL;
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
    gb_slice addr = {0}, laddr = {0};
    bool skipme = true, have_addr = false, have_laddr = false;
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
            if (!gb_slice_ieq(v, "normal") && !gb_slice_ieq(v, "master") && !gb_slice_ieq(v, "replica") &&
                !gb_slice_ieq(v, "slave") && !gb_slice_ieq(v, "pubsub")) {
                gb_reply_errorf(c, "ERR Unknown client type '%.*s'", (int)GB_MIN(v.len, 64), v.ptr);
                return;
            }
            if (!gb_slice_ieq(v, "normal")) {
                gb_reply_int(c, 0); /* no replicas or pub/sub clients exist here */
                return;
            }
        } else if (gb_slice_ieq(k, "user")) {
            if (!gb_slice_ieq(v, "default")) {
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
        if (skipme && x == c)
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
    if (!gb_subcommand_check(c, "client", argc, argv))
        return;
    gb_slice sub = argv[1];
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
        char line[1024];
        size_t n = client_line(c, line, sizeof line);
        gb_reply_bulk(c, line, n);
    } else if (gb_slice_ieq(sub, "list")) {
        /* CLIENT LIST [TYPE normal] [ID id ...] */
        int64_t *ids = NULL;
        int nids = 0;
        if (argc >= 4 && gb_slice_ieq(argv[2], "id")) {
            ids = gb_malloc((size_t)(argc - 3) * sizeof *ids);
            for (int i = 3; i < argc; i++) {
                if (!gb_slice2ll(argv[i], &ids[nids]) || ids[nids] <= 0) {
                    gb_free(ids);
                    gb_reply_error(c, "ERR Invalid client ID");
                    return;
                }
                nids++;
            }
        } else if (argc == 4 && gb_slice_ieq(argv[2], "type")) {
            gb_slice t = argv[3];
            if (!gb_slice_ieq(t, "normal") && !gb_slice_ieq(t, "master") && !gb_slice_ieq(t, "replica") &&
                !gb_slice_ieq(t, "slave") && !gb_slice_ieq(t, "pubsub")) {
                gb_reply_errorf(c, "ERR Unknown client type '%.*s'", (int)GB_MIN(t.len, 64), t.ptr);
                return;
            }
            if (!gb_slice_ieq(t, "normal")) { /* no replicas or pub/sub clients (yet) */
                gb_reply_bulk(c, "", 0);
                return;
            }
        } else if (argc != 2) {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
        strbuf b = {0};
        char line[1024];
        for (gb_client *x = c->eng->clients; x; x = x->next) {
            if (nids) {
                bool hit = false;
                for (int i = 0; i < nids; i++)
                    if ((uint64_t)ids[i] == x->id)
                        hit = true;
                if (!hit)
                    continue;
            }
            size_t n = client_line(x, line, sizeof line);
            sb_add(&b, line, n);
        }
        gb_reply_bulk(c, b.p ? b.p : "", b.len);
        gb_free(b.p);
        gb_free(ids);
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
        if (x && (x->flags & GB_CLIENT_BLOCKED)) {
            gb_blocking_unblock(x, as_error ? GB_UNBLOCK_ERROR : GB_UNBLOCK_TIMEOUT);
            gb_reply_int(c, 1);
        } else {
            gb_reply_int(c, 0);
        }
    } else if (gb_slice_ieq(sub, "help") && argc == 2) {
        static const char *lines[] = {
            "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GETNAME",
            "    Return the name of the current connection.",
            "ID",
            "    Return the ID of the current connection.",
            "INFO",
            "    Return information about the current client connection.",
            "KILL <ip:port>",
            "    Kill connection made from <ip:port>.",
            "KILL <option> <value> [<option> <value> [...]]",
            "    Kill connections. Options are: ID <client-id>, ADDR <ip:port>, LADDR <ip:port>,",
            "    TYPE normal, USER default, SKIPME (YES|NO).",
            "LIST [TYPE normal] [ID <id> [<id> ...]]",
            "    Return information about client connections.",
            "SETNAME <name>",
            "    Assign the name <name> to the current connection.",
            "UNBLOCK <clientid> [TIMEOUT|ERROR]",
            "    Unblock the specified blocked client.",
            "HELP",
            "    Print this help.",
        };
        gb_reply_help(c, lines, GB_ARRAY_LEN(lines));
    } else {
        static const char *known[] = {"id", "setname", "getname", "info", "list", "kill", "unblock", "help"};
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

/* ---- COMMAND ---------------------------------------------------------------------- */

static void reply_flag_list(gb_client *c, const gb_command_def *d)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } names[] = {{GB_CMD_WRITE, "write"},     {GB_CMD_READONLY, "readonly"}, {GB_CMD_DENYOOM, "denyoom"},
                 {GB_CMD_ADMIN, "admin"},     {GB_CMD_NOAUTH, "no_auth"},    {GB_CMD_FAST, "fast"},
                 {GB_CMD_BLOCKING, "blocking"}, {GB_CMD_LOADING, "loading"},   {GB_CMD_STALE, "stale"},
                 {GB_CMD_NOSCRIPT, "noscript"}, {GB_CMD_MOVABLEKEYS, "movablekeys"},
                 {GB_CMD_ALLOW_BUSY, "allow_busy"}};
    int n = 0;
    for (size_t i = 0; i < GB_ARRAY_LEN(names); i++)
        if (d->flags & names[i].bit)
            n++;
    gb_reply_array(c, n);
    for (size_t i = 0; i < GB_ARRAY_LEN(names); i++)
        if (d->flags & names[i].bit)
            gb_reply_status(c, names[i].name);
}

static void reply_command_info(gb_client *c, const gb_command *cmd)
{
    const gb_command_def *d = cmd->def;
    gb_reply_array(c, 10);
    gb_reply_cstr(c, d->name);
    gb_reply_int(c, d->arity);
    reply_flag_list(c, d);
    gb_reply_int(c, d->first_key);
    gb_reply_int(c, d->last_key);
    gb_reply_int(c, d->key_step);
    gb_reply_array(c, 1);
    char cat[40];
    snprintf(cat, sizeof cat, "@%s", d->group);
    gb_reply_status(c, cat);
    gb_reply_array(c, 0); /* tips */
    gb_reply_array(c, 0); /* key specs: clients fall back to first/last/step */
    gb_reply_array(c, 0); /* subcommands */
}

static void reply_command_doc(gb_client *c, const gb_command *cmd)
{
    const gb_command_def *d = cmd->def;
    gb_reply_cstr(c, d->name);
    gb_reply_array(c, 6);
    gb_reply_cstr(c, "summary");
    gb_reply_cstr(c, d->summary ? d->summary : "");
    gb_reply_cstr(c, "since");
    gb_reply_cstr(c, d->since ? d->since : "1.0.0");
    gb_reply_cstr(c, "group");
    gb_reply_cstr(c, d->group);
}

typedef struct each_ctx {
    gb_client *c;
    int kind; /* 0 info, 1 docs, 2 names */
    int filter; /* kind 2: 0 none, 1 pattern, 2 aclcat (the command's group), 3 module (none match) */
    gb_slice arg;
    int64_t n;
} each_ctx;

static void each_command(gb_command *cmd, void *ctx)
{
    each_ctx *e = ctx;
    if (e->kind == 0)
        reply_command_info(e->c, cmd);
    else if (e->kind == 1)
        reply_command_doc(e->c, cmd);
    else {
        const char *name = cmd->def->name;
        if (e->filter == 1 && !gb_glob_match(e->arg.ptr, e->arg.len, name, strlen(name), true))
            return;
        if (e->filter == 2 && !(cmd->def->group && strlen(cmd->def->group) == e->arg.len &&
                                gb_slice_ieq(e->arg, cmd->def->group)))
            return;
        if (e->filter == 3)
            return;
        gb_reply_cstr(e->c, name);
        e->n++;
    }
}

static void cmd_command(gb_client *c, int argc, gb_slice *argv)
{
    gb_engine *eng = c->eng;
    if (!gb_subcommand_check(c, "command", argc, argv))
        return;
    if (argc == 1) {
        gb_reply_array(c, (int64_t)eng->ncommands);
        each_ctx e = {.c = c, .kind = 0};
        gb_commands_foreach(eng, each_command, &e);
        return;
    }
    gb_slice sub = argv[1];
    if (gb_slice_ieq(sub, "count") && argc == 2) {
        gb_reply_int(c, (int64_t)eng->ncommands);
    } else if (gb_slice_ieq(sub, "info")) {
        if (argc == 2) {
            gb_reply_array(c, (int64_t)eng->ncommands);
            each_ctx e = {.c = c, .kind = 0};
            gb_commands_foreach(eng, each_command, &e);
            return;
        }
        gb_reply_array(c, argc - 2);
        for (int i = 2; i < argc; i++) {
            gb_command *cmd = gb_command_lookup(eng, argv[i]);
            if (cmd)
                reply_command_info(c, cmd);
            else
                gb_reply_nil(c); /* Redis: addReplyNull, "$-1" in RESP2 */
        }
    } else if (gb_slice_ieq(sub, "docs")) {
        if (argc == 2) {
            gb_reply_array(c, (int64_t)eng->ncommands * 2);
            each_ctx e = {.c = c, .kind = 1};
            gb_commands_foreach(eng, each_command, &e);
            return;
        }
        size_t h = gb_reply_array_deferred(c);
        int64_t n = 0;
        for (int i = 2; i < argc; i++) {
            gb_command *cmd = gb_command_lookup(eng, argv[i]);
            if (cmd) {
                reply_command_doc(c, cmd);
                n += 2;
            }
        }
        gb_reply_set_deferred(c, h, n);
    } else if (gb_slice_ieq(sub, "list")) {
        /* COMMAND LIST [FILTERBY MODULE name | ACLCAT cat | PATTERN glob];
         * anything else is a syntax error, as in Redis. */
        each_ctx e = {c, 2, 0, {0}, 0};
        if (argc == 5 && gb_slice_ieq(argv[2], "filterby")) {
            e.arg = argv[4];
            if (gb_slice_ieq(argv[3], "pattern"))
                e.filter = 1;
            else if (gb_slice_ieq(argv[3], "aclcat"))
                e.filter = 2;
            else if (gb_slice_ieq(argv[3], "module"))
                e.filter = 3;
        }
        if (argc != 2 && e.filter == 0) {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
        size_t h = gb_reply_array_deferred(c);
        gb_commands_foreach(eng, each_command, &e);
        gb_reply_set_deferred(c, h, e.n);
    } else if (gb_slice_ieq(sub, "help") && argc == 2) {
        static const char *lines[] = {
            "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "(no subcommand)",
            "    Return details about all commands.",
            "COUNT",
            "    Return the total number of commands in this server.",
            "LIST",
            "    Return a list of all commands in this server.",
            "INFO [<command-name> ...]",
            "    Return details about multiple commands.",
            "DOCS [<command-name> ...]",
            "    Return documentation details about multiple commands.",
            "HELP",
            "    Print this help.",
        };
        gb_reply_help(c, lines, GB_ARRAY_LEN(lines));
    } else {
        gb_reply_unknown_subcommand(c, sub, "command");
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
    gb_reply_bulk(c, b.p ? b.p : "", b.len);
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
        if (strcmp(p->names[i], name) == 0)
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

/* Settings that take an action when they change. Returns false after
 * replying an error (the change is then undone). */
static bool config_apply(gb_client *c, const char *name)
{
    gb_engine *eng = c->eng;
    if (strcmp(name, "loglevel") == 0)
        gb_log_set_level(eng->cfg.loglevel);
    if (strcmp(name, "appendonly") == 0) {
        char err[640];
        if (gb_persist_appendonly_changed(gb_persist_of(eng), err, sizeof err) != 0) {
            gb_log(GB_LOG_WARNING, "Unable to turn on AOF: %s", err);
            eng->cfg.appendonly = 0;
            gb_reply_error(c, "ERR CONFIG SET failed (possibly related to argument 'appendonly') - Unable to turn "
                              "on AOF. Check server logs.");
            return false;
        }
    }
    return true;
}

static void cmd_config(gb_client *c, int argc, gb_slice *argv)
{
    if (!gb_subcommand_check(c, "config", argc, argv))
        return;
    gb_slice sub = argv[1];
    if (gb_slice_ieq(sub, "get")) {
        if (argc < 3) {
            gb_reply_wrong_arity(c, "config|get");
            return;
        }
        cfg_pairs p = {0};
        for (int i = 2; i < argc; i++)
            gb_config_get(&c->eng->cfg, argv[i], cfg_emit, &p);
        gb_reply_array(c, (int64_t)p.n * 2);
        for (size_t i = 0; i < p.n; i++) {
            gb_reply_cstr(c, p.names[i]);
            gb_reply_cstr(c, p.values[i]);
            gb_free(p.names[i]);
            gb_free(p.values[i]);
        }
        gb_free(p.names);
        gb_free(p.values);
    } else if (gb_slice_ieq(sub, "set")) {
        if (argc % 2 != 0) { /* pairs; fewer than 4 arguments: gb_subcommand_check */
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
            if (!gb_config_is_runtime(canon)) {
                gb_reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - can't set immutable config",
                                name);
                goto undo;
            }
            for (int q = 0; q < p; q++)
                if (names[q] == canon) {
                    gb_reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - duplicate parameter",
                                    name);
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
        gb_settings_free(&c->eng->cfg);
        c->eng->cfg = scratch;
        bool applied = true;
        for (int p = 0; p < npairs && applied; p++)
            applied = config_apply(c, names[p]);
        gb_free(names);
        if (applied)
            gb_reply_ok(c);
        return;
    undo:
        gb_settings_free(&scratch);
        gb_free(names);
        return;
    } else if (gb_slice_ieq(sub, "resetstat") && argc == 2) {
        gb_engine *eng = c->eng;
        memset(&eng->stats, 0, sizeof eng->stats);
        eng->stats.ops_sample_last_ms = eng->now_mono_ms;
        gb_commands_reset_stats(eng);
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
            "HELP",
            "    Print this help.",
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

static void cmd_shutdown(gb_client *c, int argc, gb_slice *argv)
{
    for (int i = 1; i < argc; i++) {
        if (!gb_slice_ieq(argv[i], "nosave") && !gb_slice_ieq(argv[i], "save") && !gb_slice_ieq(argv[i], "now") &&
            !gb_slice_ieq(argv[i], "force")) {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    bool save = false, nosave = false;
    for (int i = 1; i < argc; i++) {
        save |= gb_slice_ieq(argv[i], "save");
        nosave |= gb_slice_ieq(argv[i], "nosave");
    }
    if (save && nosave) {
        gb_reply_error(c, GB_ERR_SYNTAX);
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

static void cmd_memory(gb_client *c, int argc, gb_slice *argv)
{
    if (!gb_subcommand_check(c, "memory", argc, argv))
        return;
    if (gb_slice_ieq(argv[1], "usage")) {
        /* Redis: any number of "SAMPLES <count>" pairs, count >= 0. */
        for (int j = 3; j < argc; j += 2) {
            int64_t samples;
            if (!gb_slice_ieq(argv[j], "samples") || j + 1 >= argc) {
                gb_reply_error(c, GB_ERR_SYNTAX);
                return;
            }
            if (!gb_slice2ll(argv[j + 1], &samples)) {
                gb_reply_error(c, GB_ERR_NOT_INT);
                return;
            }
            if (samples < 0) {
                gb_reply_error(c, GB_ERR_SYNTAX);
                return;
            }
        }
        gb_kv *kv = gb_db_lookup_quiet(c->db, argv[2]);
        if (!kv)
            gb_reply_nil(c);
        else
            gb_reply_int(c, (int64_t)gb_kv_mem(kv));
    } else if (gb_slice_ieq(argv[1], "help")) {
        gb_reply_array(c, 2);
        gb_reply_status(c, "MEMORY USAGE <key> [SAMPLES <count>]");
        gb_reply_status(c, "    Return memory in bytes used by <key> and its value (exact, not sampled).");
    } else {
        gb_reply_unknown_subcommand(c, argv[1], "memory");
    }
}

#define CONN (GB_CMD_LOADING | GB_CMD_STALE | GB_CMD_FAST)

GB_DEFINE_COMMANDS(server,
    {"ping", -1, GB_CMD_FAST | GB_CMD_STALE, 0, 0, 0, cmd_ping, "connection", "Returns the server's liveliness response.",
     "1.0.0"},
    {"echo", 2, GB_CMD_FAST, 0, 0, 0, cmd_echo, "connection", "Returns the given string.", "1.0.0"},
    {"quit", -1, CONN | GB_CMD_NOAUTH | GB_CMD_NOMULTI | GB_CMD_NOSCRIPT | GB_CMD_ALLOW_BUSY, 0, 0, 0, cmd_quit, "connection", "Closes the connection.",
     "1.0.0"},
    {"auth", -2, CONN | GB_CMD_NOAUTH | GB_CMD_NOSCRIPT | GB_CMD_ALLOW_BUSY, 0, 0, 0, cmd_auth, "connection",
     "Authenticates the connection.", "1.0.0"},
    {"hello", -1, CONN | GB_CMD_NOAUTH | GB_CMD_NOSCRIPT | GB_CMD_ALLOW_BUSY, 0, 0, 0, cmd_hello, "connection",
     "Handshakes with the server.", "6.0.0"},
    {"client", -2, GB_CMD_ADMIN | GB_CMD_NOSCRIPT | GB_CMD_LOADING | GB_CMD_STALE, 0, 0, 0, cmd_client, "connection",
     "A container for client connection commands.", "2.4.0"},
    {"command", -1, GB_CMD_LOADING | GB_CMD_STALE, 0, 0, 0, cmd_command, "server",
     "Returns detailed information about all commands.", "2.8.13"},
    {"info", -1, GB_CMD_LOADING | GB_CMD_STALE, 0, 0, 0, cmd_info, "server",
     "Returns information and statistics about the server.", "1.0.0"},
    {"config", -2, GB_CMD_ADMIN | GB_CMD_NOSCRIPT | GB_CMD_LOADING | GB_CMD_STALE, 0, 0, 0, cmd_config, "server",
     "A container for server configuration commands.", "2.0.0"},
    {"time", 1, GB_CMD_LOADING | GB_CMD_STALE | GB_CMD_FAST, 0, 0, 0, cmd_time, "server",
     "Returns the server time.", "2.6.0"},
    {"shutdown", -1, GB_CMD_ADMIN | GB_CMD_NOSCRIPT | GB_CMD_ALLOW_BUSY | GB_CMD_LOADING | GB_CMD_STALE, 0, 0, 0, cmd_shutdown,
     "server", "Synchronously saves the database(s) to disk and shuts down the Redis server.", "1.0.0"},
    {"memory", -2, GB_CMD_READONLY, 0, 0, 0, cmd_memory, "server", "A container for memory diagnostics commands.",
     "4.0.0"});
