#include "engine/core/command.h"
#include "engine/base/mem.h"

#include <stdio.h>
#include <stdlib.h>

#include "engine/core/engine.h"
#include "engine/base/util.h"

typedef struct cmd_rec {
    gb_hnode node;
    gb_command cmd;
} cmd_rec;

static uint64_t rec_hash(const gb_hnode *n)
{
    const cmd_rec *r = (const cmd_rec *)n;
    return gb_hash_bytes(r->cmd.def->name, strlen(r->cmd.def->name));
}

static bool rec_eq(const gb_hnode *n, const void *key)
{
    const cmd_rec *r = (const cmd_rec *)n;
    const gb_slice *k = key;
    return strlen(r->cmd.def->name) == k->len && memcmp(r->cmd.def->name, k->ptr, k->len) == 0;
}

static const gb_htable_type cmd_table_type = {rec_hash, rec_eq};

void gb_commands_register(gb_engine *eng, const gb_command_def *defs, size_t n)
{
    if (!eng->commands.type)
        gb_htable_init(&eng->commands, &cmd_table_type);
    for (size_t i = 0; i < n; i++) {
        cmd_rec *r = gb_calloc(1, sizeof *r);
        r->cmd.def = &defs[i];
        gb_slice name = gb_slice_cstr(defs[i].name);
        gb_htable_insert(&eng->commands, &r->node, gb_hash_slice(name));
        eng->ncommands++;
    }
}

static void free_rec(gb_hnode *n, void *ctx)
{
    (void)ctx;
    gb_free(n);
}

void gb_commands_destroy(gb_engine *eng) { gb_htable_clear(&eng->commands, free_rec, NULL); }

gb_command *gb_command_lookup(gb_engine *eng, gb_slice name)
{
    char lower[64];
    if (!gb_ascii_lower(lower, sizeof lower, name))
        return NULL;
    gb_slice k = gb_slice_make(lower, name.len);
    cmd_rec *r = (cmd_rec *)gb_htable_find(&eng->commands, &k, gb_hash_slice(k));
    return r ? &r->cmd : NULL;
}

void gb_commands_foreach(gb_engine *eng, void (*fn)(gb_command *cmd, void *ctx), void *ctx)
{
    gb_htable_iter it;
    gb_htable_iter_init(&it, &eng->commands);
    for (gb_hnode *n; (n = gb_htable_iter_next(&it));)
        fn(&((cmd_rec *)n)->cmd, ctx);
    gb_htable_iter_done(&it);
}

static void reset_one(gb_command *cmd, void *ctx)
{
    (void)ctx;
    cmd->calls = cmd->timed_calls = cmd->cycles = cmd->rejected_calls = cmd->failed_calls = 0;
}

void gb_commands_reset_stats(gb_engine *eng) { gb_commands_foreach(eng, reset_one, NULL); }

void gb_reply_wrong_arity(gb_client *c, const char *cmdname)
{
    gb_reply_errorf(c, "ERR wrong number of arguments for '%s' command", cmdname);
}

void gb_reply_unknown_subcommand(gb_client *c, gb_slice sub, const char *cmdname)
{
    char upper[32];
    size_t n = strlen(cmdname);
    if (n >= sizeof upper)
        n = sizeof upper - 1;
    for (size_t i = 0; i < n; i++)
        upper[i] = (char)((cmdname[i] >= 'a' && cmdname[i] <= 'z') ? cmdname[i] - 32 : cmdname[i]);
    upper[n] = '\0';
    gb_reply_errorf(c, "ERR unknown subcommand '%.*s'. Try %s HELP.", (int)GB_MIN(sub.len, 128), sub.ptr, upper);
}

/* Redis resolves a container command (CLIENT, CONFIG, ...) to its
 * subcommand before anything else: an unknown subcommand gets "unknown
 * subcommand 'x'. Try CLIENT HELP." and a known one with the wrong number of
 * arguments "wrong number of arguments for 'client|kill' command"; inside
 * MULTI either is rejected at once and aborts the transaction (EXECABORT),
 * like an unknown command. The container handlers and the MULTI queue call
 * gb_subcommand_check, which knows Redis 7.0's subcommand arities (including
 * subcommands goblin-core answers as unknown when they run). */
typedef struct subcmd_arity {
    const char *container, *sub;
    int arity;
} subcmd_arity;

static const subcmd_arity subcmd_arities[] = {
    {"object", "encoding", 3}, {"object", "freq", 3}, {"object", "idletime", 3}, {"object", "refcount", 3},
    {"object", "help", 2},
    {"client", "caching", 3}, {"client", "getname", 2}, {"client", "getredir", 2}, {"client", "help", 2},
    {"client", "id", 2}, {"client", "info", 2}, {"client", "kill", -3}, {"client", "list", -2},
    {"client", "no-evict", 3}, {"client", "pause", -3}, {"client", "reply", 3}, {"client", "setname", 3},
    {"client", "tracking", -3}, {"client", "trackinginfo", 2}, {"client", "unblock", -3}, {"client", "unpause", 2},
    {"config", "get", -3}, {"config", "help", 2}, {"config", "resetstat", 2}, {"config", "rewrite", 2},
    {"config", "set", -4},
    {"command", "count", 2}, {"command", "docs", -2}, {"command", "getkeys", -3}, {"command", "getkeysandflags", -3},
    {"command", "help", 2}, {"command", "info", -2}, {"command", "list", -2},
    {"memory", "doctor", 2}, {"memory", "help", 2}, {"memory", "malloc-stats", 2}, {"memory", "purge", 2},
    {"memory", "stats", 2}, {"memory", "usage", -3},
    {"xgroup", "create", -5}, {"xgroup", "createconsumer", 5}, {"xgroup", "delconsumer", 5},
    {"xgroup", "destroy", 4}, {"xgroup", "help", 2}, {"xgroup", "setid", -5},
    {"xinfo", "consumers", 4}, {"xinfo", "groups", 3}, {"xinfo", "help", 2}, {"xinfo", "stream", -3},
};

bool gb_subcommand_check(gb_client *c, const char *name, int argc, gb_slice *argv)
{
    bool container = false;
    for (size_t i = 0; i < GB_ARRAY_LEN(subcmd_arities); i++) {
        const subcmd_arity *s = &subcmd_arities[i];
        if (strcmp(s->container, name) != 0)
            continue;
        container = true;
        if (argc < 2 || !gb_slice_ieq(argv[1], s->sub))
            continue;
        if ((s->arity > 0 && argc != s->arity) || (s->arity < 0 && argc < -s->arity)) {
            char full[64];
            snprintf(full, sizeof full, "%s|%s", s->container, s->sub);
            gb_reply_wrong_arity(c, full);
            return false;
        }
        return true;
    }
    if (container && argc >= 2) {
        gb_reply_unknown_subcommand(c, argv[1], name);
        return false;
    }
    return true;
}
