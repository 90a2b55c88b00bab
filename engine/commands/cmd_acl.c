/* ACL: SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI, CAT, LOG, GENPASS,
 * DRYRUN, SAVE, LOAD, HELP, with Redis 7.0's replies and error texts. The
 * users, rules and checks themselves are engine/core/acl*.h. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "engine/base/mem.h"
#include "engine/base/strbuf.h"
#include "engine/base/util.h"
#include "engine/core/acl/acl.h"
#include "engine/core/acl/acl_file.h"
#include "engine/core/engine.h"

/* Redis's addReplySubcommandSyntaxError. */
static void reply_subcommand_syntax(gb_client *c, gb_slice *argv)
{
    char upper[16];
    size_t n = GB_MIN(argv[0].len, sizeof upper - 1);
    for (size_t i = 0; i < n; i++)
        upper[i] = (char)(argv[0].ptr[i] >= 'a' && argv[0].ptr[i] <= 'z' ? argv[0].ptr[i] - 32 : argv[0].ptr[i]);
    upper[n] = '\0';
    gb_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try %s HELP.",
                    (int)GB_MIN(argv[1].len, 128), argv[1].ptr, upper);
}

static void reply_strbuf(gb_client *c, const gb_strbuf *b) { gb_reply_bulk(c, gb_strbuf_cstr(b), b->len); }

/* ---- SETUSER / DELUSER ------------------------------------------------------------- */

static void acl_setuser(gb_client *c, int argc, gb_slice *argv)
{
    gb_slice name = argv[2];
    if (gb_acl_has_spaces(name)) {
        gb_reply_error(c, "ERR Usernames can't contain spaces or null characters");
        return;
    }
    gb_slice *rules;
    int bad;
    int n = gb_acl_merge_selector_args(argv + 3, argc - 3, &rules, &bad);
    if (n < 0) {
        gb_reply_errorf(c, "ERR Unmatched parenthesis in acl selector starting at '%.*s'.", (int)argv[3 + bad].len,
                        argv[3 + bad].ptr);
        return;
    }
    enum gb_acl_rule_error e = gb_acl_set_user(c->eng, name, rules, n, &bad);
    if (e)
        gb_reply_errorf(c, "ERR Error in ACL SETUSER modifier '%.*s': %s", (int)rules[bad].len, rules[bad].ptr,
                        gb_acl_rule_error_text(e));
    else
        gb_reply_ok(c);
    gb_free(rules);
}

static void acl_deluser(gb_client *c, int argc, gb_slice *argv)
{
    for (int j = 2; j < argc; j++)
        if (gb_slice_eq(argv[j], gb_slice_cstr("default"))) {
            gb_reply_error(c, "ERR The 'default' user cannot be removed");
            return;
        }
    int64_t deleted = 0;
    for (int j = 2; j < argc; j++)
        deleted += gb_acl_delete_user(c->eng, argv[j], c);
    gb_reply_int(c, deleted);
}

/* ---- GETUSER / LIST / USERS / WHOAMI ----------------------------------------------- */

/* A selector's commands, keys and channels: three pairs of a map. */
static void reply_selector(gb_client *c, const gb_acl_selector *s)
{
    const gb_acl_commands *cmds = &c->eng->acl->cmds;
    gb_strbuf b = {0};
    gb_reply_cstr(c, "commands");
    gb_acl_describe_commands(s, cmds, &b);
    reply_strbuf(c, &b);
    gb_strbuf_reset(&b);
    gb_reply_cstr(c, "keys");
    gb_acl_describe_keys(s, &b);
    reply_strbuf(c, &b);
    gb_strbuf_reset(&b);
    gb_reply_cstr(c, "channels");
    gb_acl_describe_channels(s, &b);
    reply_strbuf(c, &b);
    gb_strbuf_free(&b);
}

static void acl_getuser(gb_client *c, gb_slice name)
{
    const gb_acl_user *u = gb_acl_find_user(c->eng, name);
    if (!u) {
        gb_reply_nil(c);
        return;
    }
    gb_reply_map(c, 6);
    gb_reply_cstr(c, "flags");
    int nflags = 0;
    for (int j = 0; j < GB_ACL_USER_FLAG_COUNT; j++)
        nflags += (u->flags >> j) & 1;
    gb_reply_set(c, nflags);
    for (int j = 0; j < GB_ACL_USER_FLAG_COUNT; j++)
        if (u->flags & (1u << j))
            gb_reply_cstr(c, gb_acl_user_flag_names[j]);
    gb_reply_cstr(c, "passwords");
    gb_reply_array(c, gb_acl_list_count(&u->passwords));
    GB_ACL_LIST_EACH(&u->passwords, p)
        gb_reply_bulk(c, p->bytes, p->len);
    reply_selector(c, u->selectors[0]);
    gb_reply_cstr(c, "selectors");
    gb_reply_array(c, u->nselectors - 1);
    for (uint32_t i = 1; i < u->nselectors; i++) {
        gb_reply_map(c, 3);
        reply_selector(c, u->selectors[i]);
    }
}

static void acl_list(gb_client *c, bool names_only)
{
    const gb_acl *acl = c->eng->acl;
    gb_reply_array(c, (int64_t)acl->nusers);
    gb_strbuf b = {0};
    for (size_t i = 0; i < acl->nusers; i++) {
        const gb_acl_user *u = acl->users[i];
        if (names_only) {
            gb_reply_bulk(c, u->name, u->namelen);
            continue;
        }
        gb_strbuf_reset(&b);
        gb_strbuf_adds(&b, "user ");
        gb_strbuf_add(&b, u->name, u->namelen);
        gb_strbuf_addc(&b, ' ');
        gb_acl_describe_user(u, &acl->cmds, &b);
        reply_strbuf(c, &b);
    }
    gb_strbuf_free(&b);
}

/* ---- CAT ---------------------------------------------------------------------------- */

/* The commands of this server in a category, in command table order
 * (Redis's order is its hash table's): what a "+@category" rule lets a
 * user run here. */
static void acl_cat(gb_client *c, int argc, gb_slice *argv)
{
    if (argc == 2) {
        gb_reply_array(c, GB_ACL_CATEGORY_COUNT);
        for (int j = 0; j < GB_ACL_CATEGORY_COUNT; j++)
            gb_reply_cstr(c, gb_acl_category_names[j]);
        return;
    }
    uint32_t category = gb_acl_category_by_name(argv[2]);
    if (!category) {
        gb_reply_errorf(c, "ERR Unknown category '%.*s'", (int)GB_MIN(argv[2].len, 128), argv[2].ptr);
        return;
    }
    const gb_acl_commands *cmds = &c->eng->acl->cmds;
    size_t handle = gb_reply_array_deferred(c);
    int64_t n = 0;
    for (uint16_t id = 0; id < cmds->n; id++) {
        const gb_command_meta *m = cmds->cmd[id].meta;
        if ((m->acl_categories & category) && gb_command_lookup_fullname(c->eng, gb_slice_cstr(m->name))) {
            gb_reply_cstr(c, m->name);
            n++;
        }
    }
    gb_reply_set_deferred(c, handle, n);
}

/* ---- LOG ------------------------------------------------------------------------------ */

static void acl_log(gb_client *c, int argc, gb_slice *argv)
{
    gb_acl_log *log = &c->eng->acl->log;
    int64_t count = 10;
    if (argc == 3) {
        if (gb_slice_ieq(argv[2], "reset")) {
            gb_acl_log_reset(log);
            gb_reply_ok(c);
            return;
        }
        if (!gb_slice2ll(argv[2], &count)) {
            gb_reply_error(c, GB_ERR_NOT_INT);
            return;
        }
        if (count < 0)
            count = 0;
    }
    if ((uint64_t)count > log->n)
        count = (int64_t)log->n;
    gb_reply_array(c, count);
    int64_t now = gb_clock_real_ms();
    for (gb_acl_log_entry *e = log->head; e && count--; e = e->next) {
        gb_reply_map(c, 7);
        gb_reply_cstr(c, "count");
        gb_reply_int(c, (int64_t)e->count);
        gb_reply_cstr(c, "reason");
        gb_reply_cstr(c, gb_acl_log_reason_name(e->reason));
        gb_reply_cstr(c, "context");
        gb_reply_cstr(c, gb_acl_log_context_name(e->context));
        gb_reply_cstr(c, "object");
        gb_reply_bulk(c, e->object, e->objlen);
        gb_reply_cstr(c, "username");
        gb_reply_bulk(c, e->username, e->userlen);
        gb_reply_cstr(c, "age-seconds");
        gb_reply_double(c, (double)(now - e->ctime_ms) / 1000);
        gb_reply_cstr(c, "client-info");
        gb_reply_cstr(c, e->client_info);
    }
}

/* ---- GENPASS ------------------------------------------------------------------------------ */

#define GENPASS_MAX_BITS 4096

/* Random bytes from the operating system: a password must not be
 * predictable from anything a client can observe (the engine's own
 * generator also answers SRANDMEMBER). */
static bool os_random(unsigned char *buf, size_t n)
{
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd < 0)
        return false;
    size_t done = 0;
    while (done < n) {
        ssize_t r = read(fd, buf + done, n - done);
        if (r <= 0)
            break;
        done += (size_t)r;
    }
    close(fd);
    return done == n;
}

static void acl_genpass(gb_client *c, int argc, gb_slice *argv)
{
    int64_t bits = 256;
    if (argc == 3 && !gb_slice2ll(argv[2], &bits)) {
        gb_reply_error(c, GB_ERR_NOT_INT);
        return;
    }
    if (bits <= 0 || bits > GENPASS_MAX_BITS) {
        gb_reply_errorf(c, "ERR ACL GENPASS argument must be the number of bits for the output password, a "
                           "positive number up to %d",
                        GENPASS_MAX_BITS);
        return;
    }
    size_t chars = (size_t)(bits + 3) / 4;
    unsigned char raw[GENPASS_MAX_BITS / 8];
    char hex[GENPASS_MAX_BITS / 4];
    if (!os_random(raw, (chars + 1) / 2)) {
        gb_reply_error(c, "ERR could not read random bytes from the operating system (/dev/urandom)");
        return;
    }
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < chars; i++)
        hex[i] = digits[(raw[i / 2] >> (i % 2 ? 0 : 4)) & 15];
    gb_reply_bulk(c, hex, chars);
}

/* ---- DRYRUN ------------------------------------------------------------------------------ */

static void acl_dryrun(gb_client *c, int argc, gb_slice *argv)
{
    const gb_acl_user *u = gb_acl_find_user(c->eng, argv[2]);
    if (!u) {
        gb_reply_errorf(c, "ERR User '%.*s' not found", (int)argv[2].len, argv[2].ptr);
        return;
    }
    int cargc = argc - 3;
    gb_slice *cargv = argv + 3;
    gb_command *cmd = gb_command_lookup(c->eng, cargv[0]);
    if (cmd && gb_command_is_container(cmd) && cargc >= 2)
        cmd = gb_subcommand_lookup(cmd, cargv[1]);
    if (!cmd) {
        gb_reply_errorf(c, "ERR Command '%.*s' not found", (int)cargv[0].len, cargv[0].ptr);
        return;
    }
    if (!gb_command_arity_ok(cmd, cargc)) {
        gb_reply_errorf(c, "ERR wrong number of arguments for '%s' command", cmd->fullname);
        return;
    }
    int pos = 0;
    enum gb_acl_denial why = gb_acl_user_check(u, &c->eng->acl->cmds, cmd->acl_id, cmd->meta, cargc, cargv, &pos);
    gb_strbuf b = {0};
    if (why == GB_ACL_DENIED_CMD)
        gb_strbuf_printf(&b, "This user has no permissions to run the '%s' command", cmd->fullname);
    else if (why != GB_ACL_ALLOWED)
        gb_strbuf_printf(&b, "This user has no permissions to access the '%.*s' %s", (int)cargv[pos].len,
                         cargv[pos].ptr, why == GB_ACL_DENIED_KEY ? "key" : "channel");
    if (b.len)
        reply_strbuf(c, &b);
    else
        gb_reply_ok(c);
    gb_strbuf_free(&b);
}

/* ---- LOAD / SAVE / HELP ------------------------------------------------------------------- */

static void acl_load(gb_client *c)
{
    char *errors = gb_acl_file_load(c->eng, c);
    if (!errors) {
        gb_reply_ok(c);
        return;
    }
    gb_strbuf b = {0};
    gb_strbuf_adds(&b, "ERR ");
    gb_strbuf_adds(&b, errors);
    gb_reply_error(c, gb_strbuf_cstr(&b));
    gb_strbuf_free(&b);
    gb_free(errors);
}

static void acl_help(gb_client *c)
{
    static const char *const lines[] = {
        "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        "HELP",
        "    Prints this help.",
    };
    gb_reply_help(c, lines, GB_ARRAY_LEN(lines));
}

/* The gate resolved the subcommand and checked its arity; the argument
 * counts tested here are those Redis's handler tests itself. */
static void cmd_acl(gb_client *c, int argc, gb_slice *argv)
{
    gb_slice sub = argv[1];
    bool no_file = !c->eng->cfg.aclfile || !c->eng->cfg.aclfile[0];
    if (gb_slice_ieq(sub, "setuser")) {
        acl_setuser(c, argc, argv);
    } else if (gb_slice_ieq(sub, "deluser")) {
        acl_deluser(c, argc, argv);
    } else if (gb_slice_ieq(sub, "getuser")) {
        acl_getuser(c, argv[2]);
    } else if (gb_slice_ieq(sub, "list") || gb_slice_ieq(sub, "users")) {
        acl_list(c, gb_slice_ieq(sub, "users"));
    } else if (gb_slice_ieq(sub, "whoami")) {
        gb_reply_bulk(c, c->user->name, c->user->namelen);
    } else if (no_file && (gb_slice_ieq(sub, "load") || gb_slice_ieq(sub, "save"))) {
        gb_reply_error(c, "ERR This Redis instance is not configured to use an ACL file. You may want to specify "
                          "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a "
                          "Redis configuration file set) in order to store users in the Redis configuration.");
    } else if (gb_slice_ieq(sub, "load")) {
        acl_load(c);
    } else if (gb_slice_ieq(sub, "save")) {
        if (gb_acl_file_save(c->eng) == 0)
            gb_reply_ok(c);
        else
            gb_reply_error(c, "ERR There was an error trying to save the ACLs. Please check the server logs for more "
                              "information");
    } else if (gb_slice_ieq(sub, "cat") && argc <= 3) {
        acl_cat(c, argc, argv);
    } else if (gb_slice_ieq(sub, "genpass") && argc <= 3) {
        acl_genpass(c, argc, argv);
    } else if (gb_slice_ieq(sub, "log") && argc <= 3) {
        acl_log(c, argc, argv);
    } else if (gb_slice_ieq(sub, "dryrun")) {
        acl_dryrun(c, argc, argv);
    } else if (gb_slice_ieq(sub, "help")) {
        acl_help(c);
    } else {
        reply_subcommand_syntax(c, argv);
    }
}

GB_DEFINE_COMMANDS(acl,
    {"acl", cmd_acl});
