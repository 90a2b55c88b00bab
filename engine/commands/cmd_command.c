/*
 * COMMAND: what the server says about its commands, from Redis 7.0's own
 * description of them (engine/core/request/command_meta.h) for the commands this
 * server registers. COMMAND [INFO|DOCS|LIST|COUNT|GETKEYS|GETKEYSANDFLAGS|HELP].
 */
#include <string.h>

#include "engine/base/util.h"
#include "engine/commands/cmd_util.h"
#include "engine/core/engine.h"

/* ---- COMMAND INFO ---- */

static void reply_bit_names(gb_client *c, uint32_t bits, const char *const *names, int count, const char *prefix)
{
    int n = 0;
    for (int i = 0; i < count; i++)
        n += (bits >> i) & 1u;
    gb_reply_set(c, n);
    for (int i = 0; i < count; i++) {
        if (!((bits >> i) & 1u))
            continue;
        char name[48];
        snprintf(name, sizeof name, "%s%s", prefix, names[i]);
        gb_reply_status(c, name);
    }
}

static void reply_key_spec(gb_client *c, const gb_key_spec *s)
{
    gb_reply_map(c, s->notes ? 4 : 3);
    if (s->notes) {
        gb_reply_cstr(c, "notes");
        gb_reply_cstr(c, s->notes);
    }
    gb_reply_cstr(c, "flags");
    reply_bit_names(c, s->flags, gb_key_spec_flag_names, GB_KS_FLAG_COUNT, "");

    gb_reply_cstr(c, "begin_search");
    gb_reply_map(c, 2);
    gb_reply_cstr(c, "type");
    if (s->begin == GB_KS_BEGIN_INDEX) {
        gb_reply_cstr(c, "index");
        gb_reply_cstr(c, "spec");
        gb_reply_map(c, 1);
        gb_reply_cstr(c, "index");
        gb_reply_int(c, s->begin_index);
    } else if (s->begin == GB_KS_BEGIN_KEYWORD) {
        gb_reply_cstr(c, "keyword");
        gb_reply_cstr(c, "spec");
        gb_reply_map(c, 2);
        gb_reply_cstr(c, "keyword");
        gb_reply_cstr(c, s->begin_keyword);
        gb_reply_cstr(c, "startfrom");
        gb_reply_int(c, s->begin_startfrom);
    } else {
        gb_reply_cstr(c, "unknown");
        gb_reply_cstr(c, "spec");
        gb_reply_map(c, 0);
    }

    gb_reply_cstr(c, "find_keys");
    gb_reply_map(c, 2);
    gb_reply_cstr(c, "type");
    if (s->find == GB_KS_FIND_RANGE) {
        gb_reply_cstr(c, "range");
        gb_reply_cstr(c, "spec");
        gb_reply_map(c, 3);
        gb_reply_cstr(c, "lastkey");
        gb_reply_int(c, s->range_lastkey);
        gb_reply_cstr(c, "keystep");
        gb_reply_int(c, s->range_keystep);
        gb_reply_cstr(c, "limit");
        gb_reply_int(c, s->range_limit);
    } else if (s->find == GB_KS_FIND_KEYNUM) {
        gb_reply_cstr(c, "keynum");
        gb_reply_cstr(c, "spec");
        gb_reply_map(c, 3);
        gb_reply_cstr(c, "keynumidx");
        gb_reply_int(c, s->keynum_index);
        gb_reply_cstr(c, "firstkey");
        gb_reply_int(c, s->keynum_firstkey);
        gb_reply_cstr(c, "keystep");
        gb_reply_int(c, s->keynum_keystep);
    } else {
        gb_reply_cstr(c, "unknown");
        gb_reply_cstr(c, "spec");
        gb_reply_map(c, 0);
    }
}

/* Redis 7.0's ten fields: name, arity, flags, first key, last key, step,
 * ACL categories, tips, key specs, subcommands (those implemented here). */
static void reply_command_info(gb_client *c, const gb_command *cmd)
{
    const gb_command_meta *m = cmd->meta;
    gb_reply_array(c, 10);
    gb_reply_cstr(c, m->name);
    gb_reply_int(c, m->arity);
    reply_bit_names(c, m->flags, gb_command_flag_names, GB_CMDF_COUNT, "");
    gb_reply_int(c, m->first_key);
    gb_reply_int(c, m->last_key);
    gb_reply_int(c, m->key_step);
    reply_bit_names(c, m->acl_categories, gb_acl_category_names, GB_ACL_CATEGORY_COUNT, "@");
    gb_reply_set(c, m->ntips);
    for (uint8_t i = 0; i < m->ntips; i++)
        gb_reply_cstr(c, m->tips[i]);
    gb_reply_set(c, m->nkey_specs);
    for (uint8_t i = 0; i < m->nkey_specs; i++)
        reply_key_spec(c, &m->key_specs[i]);
    if (cmd->nsubs == 0) {
        gb_reply_set(c, 0); /* Redis: an empty set, a non-empty array */
        return;
    }
    gb_reply_array(c, cmd->nsubs);
    for (uint8_t i = 0; i < cmd->nsubs; i++)
        reply_command_info(c, &cmd->subs[i]);
}

/* ---- COMMAND DOCS ---- */

static void reply_args(gb_client *c, const gb_cmd_arg *args, uint8_t n)
{
    gb_reply_array(c, n);
    for (uint8_t i = 0; i < n; i++) {
        const gb_cmd_arg *a = &args[i];
        int64_t fields = 2 + (a->key_spec_index >= 0) + (a->token != NULL) + (a->since != NULL) +
                         (a->deprecated_since != NULL) + (a->flags != 0) + (a->nargs != 0);
        gb_reply_map(c, fields);
        gb_reply_cstr(c, "name");
        gb_reply_cstr(c, a->name);
        gb_reply_cstr(c, "type");
        gb_reply_cstr(c, gb_arg_type_names[a->type]);
        if (a->key_spec_index >= 0) {
            gb_reply_cstr(c, "key_spec_index");
            gb_reply_int(c, a->key_spec_index);
        }
        if (a->token) {
            gb_reply_cstr(c, "token");
            gb_reply_cstr(c, a->token);
        }
        if (a->since) {
            gb_reply_cstr(c, "since");
            gb_reply_cstr(c, a->since);
        }
        if (a->deprecated_since) {
            gb_reply_cstr(c, "deprecated_since");
            gb_reply_cstr(c, a->deprecated_since);
        }
        if (a->flags) {
            gb_reply_cstr(c, "flags");
            reply_bit_names(c, a->flags, gb_arg_flag_names, GB_ARG_FLAG_COUNT, "");
        }
        if (a->nargs) {
            gb_reply_cstr(c, "arguments");
            reply_args(c, a->args, a->nargs);
        }
    }
}

/* The map value of one command in COMMAND DOCS, fields in Redis's order. */
static void reply_command_docs(gb_client *c, const gb_command *cmd)
{
    const gb_command_meta *m = cmd->meta;
    int64_t fields = 3 + (m->complexity != NULL) + (m->doc_flags != 0) + (m->deprecated_since != NULL) +
                     (m->replaced_by != NULL) + (m->nhistory != 0) + (m->nargs != 0) + (cmd->nsubs != 0);
    gb_reply_map(c, fields);
    gb_reply_cstr(c, "summary");
    gb_reply_cstr(c, m->summary);
    gb_reply_cstr(c, "since");
    gb_reply_cstr(c, m->since);
    gb_reply_cstr(c, "group");
    gb_reply_cstr(c, m->group);
    if (m->complexity) {
        gb_reply_cstr(c, "complexity");
        gb_reply_cstr(c, m->complexity);
    }
    if (m->doc_flags) {
        gb_reply_cstr(c, "doc_flags");
        reply_bit_names(c, m->doc_flags, gb_doc_flag_names, GB_DOC_FLAG_COUNT, "");
    }
    if (m->deprecated_since) {
        gb_reply_cstr(c, "deprecated_since");
        gb_reply_cstr(c, m->deprecated_since);
    }
    if (m->replaced_by) {
        gb_reply_cstr(c, "replaced_by");
        gb_reply_cstr(c, m->replaced_by);
    }
    if (m->nhistory) {
        gb_reply_cstr(c, "history");
        gb_reply_set(c, m->nhistory); /* Redis 7.0: a set of [version, change] */
        for (uint8_t i = 0; i < m->nhistory; i++) {
            gb_reply_array(c, 2);
            gb_reply_cstr(c, m->history[i].version);
            gb_reply_cstr(c, m->history[i].change);
        }
    }
    if (m->nargs) {
        gb_reply_cstr(c, "arguments");
        reply_args(c, m->args, m->nargs);
    }
    if (cmd->nsubs) {
        gb_reply_cstr(c, "subcommands");
        gb_reply_map(c, cmd->nsubs);
        for (uint8_t i = 0; i < cmd->nsubs; i++) {
            gb_reply_cstr(c, cmd->subs[i].fullname);
            reply_command_docs(c, &cmd->subs[i]);
        }
    }
}

/* ---- COMMAND LIST ---- */

typedef struct list_filter {
    gb_client *c;
    enum { LIST_ALL, LIST_PATTERN, LIST_ACLCAT, LIST_MODULE } kind;
    gb_slice arg;
    uint32_t category; /* LIST_ACLCAT */
    int64_t n;
} list_filter;

static void list_one(gb_command *cmd, void *ctx)
{
    list_filter *f = ctx;
    const char *name = cmd->fullname;
    switch (f->kind) {
    case LIST_ALL:
        break;
    case LIST_PATTERN:
        if (!gb_glob_match(f->arg.ptr, f->arg.len, name, strlen(name), true))
            return;
        break;
    case LIST_ACLCAT:
        if (!(cmd->meta->acl_categories & f->category))
            return;
        break;
    case LIST_MODULE:
        return; /* no modules */
    }
    gb_reply_cstr(f->c, name);
    f->n++;
}

static uint32_t category_bit(gb_slice name)
{
    for (int i = 0; i < GB_ACL_CATEGORY_COUNT; i++)
        if (strlen(gb_acl_category_names[i]) == name.len && gb_slice_ieq(name, gb_acl_category_names[i]))
            return 1u << i;
    return 0;
}

/* COMMAND LIST [FILTERBY MODULE name | ACLCAT cat | PATTERN glob]: every
 * command and subcommand by full name; anything else is a syntax error. */
static void command_list(gb_client *c, int argc, gb_slice *argv)
{
    list_filter f = {.c = c, .kind = LIST_ALL};
    if (argc == 5 && gb_slice_ieq(argv[2], "filterby")) {
        f.arg = argv[4];
        if (gb_slice_ieq(argv[3], "pattern"))
            f.kind = LIST_PATTERN;
        else if (gb_slice_ieq(argv[3], "aclcat"))
            f.kind = LIST_ACLCAT;
        else if (gb_slice_ieq(argv[3], "module"))
            f.kind = LIST_MODULE;
        else
            argc = -1;
    }
    if (argc != 2 && !(argc == 5 && f.kind != LIST_ALL)) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    if (f.kind == LIST_ACLCAT) {
        f.category = category_bit(f.arg);
        if (!f.category) {
            gb_reply_array(c, 0); /* Redis: an unknown category lists nothing */
            return;
        }
    }
    size_t h = gb_reply_array_deferred(c);
    gb_commands_foreach(c->eng, true, list_one, &f);
    gb_reply_set_deferred(c, h, f.n);
}

/* ---- COMMAND GETKEYS / GETKEYSANDFLAGS ---- */

static void command_getkeys(gb_client *c, int argc, gb_slice *argv, bool with_flags)
{
    int cargc = argc - 2;
    gb_slice *cargv = argv + 2;
    gb_command *cmd = gb_command_lookup(c->eng, cargv[0]);
    if (cmd && gb_command_is_container(cmd) && cargc >= 2)
        cmd = gb_subcommand_lookup(cmd, cargv[1]);
    if (!cmd) {
        gb_reply_error(c, "ERR Invalid command specified");
        return;
    }
    if (!gb_command_has_keys(cmd->meta)) {
        gb_reply_error(c, "ERR The command has no key arguments");
        return;
    }
    if (!gb_command_arity_ok(cmd, cargc)) {
        gb_reply_error(c, "ERR Invalid number of arguments specified for command");
        return;
    }
    gb_keys_result r;
    int n = gb_command_keys(cmd->meta, cargc, cargv, &r);
    if (n == 0) {
        if (cmd->meta->flags & GB_CMDF_NO_MANDATORY_KEYS)
            gb_reply_array(c, 0);
        else
            gb_reply_error(c, "ERR Invalid arguments specified for command");
    } else {
        gb_reply_array(c, n);
        for (int i = 0; i < n; i++) {
            if (with_flags) {
                gb_reply_array(c, 2);
                gb_reply_slice(c, cargv[r.keys[i].pos]);
                reply_bit_names(c, r.keys[i].flags, gb_key_spec_flag_names, GB_KS_FLAG_COUNT, "");
            } else {
                gb_reply_slice(c, cargv[r.keys[i].pos]);
            }
        }
    }
    gb_keys_result_free(&r);
}

/* ---- COMMAND ---- */

static void reply_info_each(gb_command *cmd, void *ctx) { reply_command_info(ctx, cmd); }

static void reply_docs_each(gb_command *cmd, void *ctx)
{
    gb_reply_cstr(ctx, cmd->fullname);
    reply_command_docs(ctx, cmd);
}

static void cmd_command(gb_client *c, int argc, gb_slice *argv)
{
    gb_engine *eng = c->eng;
    if (argc == 1) {
        gb_reply_array(c, (int64_t)eng->ncommands);
        gb_commands_foreach(eng, false, reply_info_each, c);
        return;
    }
    gb_slice sub = argv[1];
    if (gb_slice_ieq(sub, "count")) {
        gb_reply_int(c, (int64_t)eng->ncommands);
    } else if (gb_slice_ieq(sub, "info")) {
        if (argc == 2) {
            gb_reply_array(c, (int64_t)eng->ncommands);
            gb_commands_foreach(eng, false, reply_info_each, c);
            return;
        }
        gb_reply_array(c, argc - 2);
        for (int i = 2; i < argc; i++) {
            gb_command *cmd = gb_command_lookup_fullname(eng, argv[i]);
            if (cmd)
                reply_command_info(c, cmd);
            else
                gb_reply_nil(c);
        }
    } else if (gb_slice_ieq(sub, "docs")) {
        if (argc == 2) {
            gb_reply_map(c, (int64_t)eng->ncommands);
            gb_commands_foreach(eng, false, reply_docs_each, c);
            return;
        }
        size_t h = gb_reply_array_deferred(c);
        int64_t n = 0;
        for (int i = 2; i < argc; i++) {
            gb_command *cmd = gb_command_lookup_fullname(eng, argv[i]);
            if (cmd) {
                reply_docs_each(cmd, c);
                n++;
            }
        }
        gb_reply_set_deferred_map(c, h, n);
    } else if (gb_slice_ieq(sub, "list")) {
        command_list(c, argc, argv);
    } else if (gb_slice_ieq(sub, "getkeys")) {
        command_getkeys(c, argc, argv, false);
    } else if (gb_slice_ieq(sub, "getkeysandflags")) {
        command_getkeys(c, argc, argv, true);
    } else {
        static const char *lines[] = {
            "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "(no subcommand)",
            "    Return details about all Redis commands.",
            "COUNT",
            "    Return the total number of commands in this Redis server.",
            "LIST",
            "    Return a list of all commands in this Redis server.",
            "INFO [<command-name> ...]",
            "    Return details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "DOCS [<command-name> ...]",
            "    Return documentation details about multiple Redis commands.",
            "    If no command names are given, documentation details for all",
            "    commands are returned.",
            "GETKEYS <full-command>",
            "    Return the keys from a full Redis command.",
            "GETKEYSANDFLAGS <full-command>",
            "    Return the keys and the access flags from a full Redis command.",
            "HELP",
            "    Prints this help.",
        };
        gb_reply_help(c, lines, GB_ARRAY_LEN(lines)); /* the gate admitted only HELP here */
    }
}

GB_DEFINE_COMMANDS(command,
    {"command", cmd_command});
