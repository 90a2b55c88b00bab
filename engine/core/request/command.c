#include "engine/core/request/command.h"
#include "engine/base/mem.h"

#include <stdio.h>
#include <stdlib.h>

#include "engine/core/acl/acl.h"
#include "engine/core/engine.h"
#include "engine/base/util.h"

typedef struct cmd_rec {
    gb_hnode node;
    uint64_t hash;   /* of the name, compared before the name itself: most */
    size_t name_len; /* records a lookup meets in its bucket are other commands */
    gb_command cmd;
} cmd_rec;

/* What gb_command_lookup looks for: a lowercase name and its hash. */
typedef struct cmd_key {
    gb_slice name;
    uint64_t hash;
} cmd_key;

static uint64_t rec_hash(const gb_hnode *n) { return ((const cmd_rec *)n)->hash; }

static bool rec_eq(const gb_hnode *n, const void *key)
{
    const cmd_rec *r = (const cmd_rec *)n;
    const cmd_key *k = key;
    return r->hash == k->hash && r->name_len == k->name.len && memcmp(r->cmd.def->name, k->name.ptr, k->name.len) == 0;
}

static const gb_htable_type cmd_table_type = {rec_hash, rec_eq};

/* The engine's flags (GB_CMD_*) and Redis's (GB_CMDF_*) that mean the same. */
static const struct {
    uint32_t engine, redis;
} flag_map[] = {{GB_CMD_WRITE, GB_CMDF_WRITE},       {GB_CMD_READONLY, GB_CMDF_READONLY},
                {GB_CMD_DENYOOM, GB_CMDF_DENYOOM},   {GB_CMD_ADMIN, GB_CMDF_ADMIN},
                {GB_CMD_NOSCRIPT, GB_CMDF_NOSCRIPT}, {GB_CMD_BLOCKING, GB_CMDF_BLOCKING},
                {GB_CMD_LOADING, GB_CMDF_LOADING},   {GB_CMD_STALE, GB_CMDF_STALE},
                {GB_CMD_FAST, GB_CMDF_FAST},         {GB_CMD_NOAUTH, GB_CMDF_NO_AUTH},
                {GB_CMD_MOVABLEKEYS, GB_CMDF_MOVABLEKEYS}, {GB_CMD_ALLOW_BUSY, GB_CMDF_ALLOW_BUSY},
                {GB_CMD_MAY_REPLICATE, GB_CMDF_MAY_REPLICATE}, {GB_CMD_SKIP_MONITOR, GB_CMDF_SKIP_MONITOR}};

/* The flags the engine acts on: Redis's for the command (a subcommand's
 * own), and the engine's own (GB_CMD_ENGINE_OWN), which Redis keys on the
 * command itself. */
static uint32_t engine_flags(const gb_command_meta *m, const gb_command_def *d)
{
    uint32_t f = d->flags & GB_CMD_ENGINE_OWN;
    for (size_t i = 0; i < GB_ARRAY_LEN(flag_map); i++)
        if (m->flags & flag_map[i].redis)
            f |= flag_map[i].engine;
    return f;
}

/* Redis's description of a command the engine registers. Every handler has
 * one (cmake/command_meta_extra.json adds the commands Redis 7.0 lacks), so
 * a missing one is a build mistake: refuse to start rather than run a
 * command whose arity and flags nobody wrote down. */
static const gb_command_meta *described(const char *name)
{
    const gb_command_meta *m = gb_command_meta_find(name);
    if (!m) {
        fprintf(stderr, "command '%s' has a handler but no description in engine/core/request/command_meta_table.c\n", name);
        abort();
    }
    return m;
}

static int sub_cmp(const void *a, const void *b)
{
    return strcmp(((const gb_command *)a)->fullname, ((const gb_command *)b)->fullname);
}

/* Is name a word of list, a space-separated list? NULL lists every name. */
static bool listed(const char *list, const char *name)
{
    if (!list)
        return true;
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        size_t w = strcspn(p, " ");
        if (w == len && memcmp(p, name, len) == 0)
            return true;
        p += w + (p[w] == ' ');
    }
    return false;
}

/* One record per implemented subcommand of a container: the handler is the
 * container's, the arity, flags and statistics the subcommand's own. */
static void register_subcommands(gb_engine *eng, gb_command *container)
{
    const gb_command_meta *m = container->meta;
    const gb_command_def *def = container->def;
    container->subs = gb_calloc(m->nsubcommands, sizeof *container->subs);
    for (uint8_t i = 0; i < m->nsubcommands; i++) {
        const gb_command_meta *sub = &m->subcommands[i];
        const char *name = gb_command_meta_subname(sub);
        if (!listed(def->subcommands, name))
            continue;
        gb_command *s = &container->subs[container->nsubs++];
        s->def = def;
        s->meta = sub;
        s->fullname = sub->name;
        s->flags = engine_flags(sub, def);
        if (!listed(def->protected_subcommands, name))
            s->flags &= ~(uint32_t)GB_CMD_PROTECTED;
        gb_acl_register_command(eng, s);
    }
    qsort(container->subs, container->nsubs, sizeof *container->subs, sub_cmp);
}

void gb_commands_register(gb_engine *eng, const gb_command_def *defs, size_t n)
{
    if (!eng->commands.type)
        gb_htable_init(&eng->commands, &cmd_table_type);
    for (size_t i = 0; i < n; i++) {
        cmd_rec *r = gb_calloc(1, sizeof *r);
        r->cmd.def = &defs[i];
        r->name_len = strlen(defs[i].name);
        r->hash = gb_hash_bytes(defs[i].name, r->name_len);
        r->cmd.fullname = defs[i].name;
        r->cmd.meta = described(defs[i].name);
        r->cmd.flags = engine_flags(r->cmd.meta, &defs[i]);
        gb_acl_register_command(eng, &r->cmd);
        if (gb_command_is_container(&r->cmd))
            register_subcommands(eng, &r->cmd);
        gb_htable_insert(&eng->commands, &r->node, r->hash);
        eng->ncommands++;
    }
}

static void free_rec(gb_hnode *n, void *ctx)
{
    (void)ctx;
    gb_command *cmd = &((cmd_rec *)n)->cmd;
    for (uint8_t i = 0; i < cmd->nsubs; i++)
        gb_latency_hist_free(cmd->subs[i].latency_hist);
    gb_latency_hist_free(cmd->latency_hist);
    gb_free(cmd->subs);
    gb_free(n);
}

void gb_commands_destroy(gb_engine *eng) { gb_htable_clear(&eng->commands, free_rec, NULL); }

gb_command *gb_command_lookup(gb_engine *eng, gb_slice name)
{
    char lower[64];
    if (!gb_ascii_lower(lower, sizeof lower, name))
        return NULL;
    cmd_key k = {gb_slice_make(lower, name.len), 0};
    k.hash = gb_hash_slice(k.name);
    cmd_rec *r = (cmd_rec *)gb_htable_find(&eng->commands, &k, k.hash);
    return r ? &r->cmd : NULL;
}

gb_command *gb_subcommand_lookup(gb_command *container, gb_slice name)
{
    for (uint8_t i = 0; i < container->nsubs; i++) {
        const char *sub = gb_command_meta_subname(container->subs[i].meta);
        if (strlen(sub) == name.len && gb_slice_ieq(name, sub))
            return &container->subs[i];
    }
    return NULL;
}

gb_command *gb_command_lookup_fullname(gb_engine *eng, gb_slice fullname)
{
    const char *bar = memchr(fullname.ptr, '|', fullname.len);
    if (!bar)
        return gb_command_lookup(eng, fullname);
    size_t head = (size_t)(bar - fullname.ptr);
    gb_command *container = gb_command_lookup(eng, gb_slice_make(fullname.ptr, head));
    return container ? gb_subcommand_lookup(container, gb_slice_make(bar + 1, fullname.len - head - 1)) : NULL;
}

void gb_commands_foreach(gb_engine *eng, bool with_subs, void (*fn)(gb_command *cmd, void *ctx), void *ctx)
{
    gb_htable_iter it;
    gb_htable_iter_init(&it, &eng->commands);
    for (gb_hnode *n; (n = gb_htable_iter_next(&it));) {
        gb_command *cmd = &((cmd_rec *)n)->cmd;
        fn(cmd, ctx);
        for (uint8_t i = 0; with_subs && i < cmd->nsubs; i++)
            fn(&cmd->subs[i], ctx);
    }
    gb_htable_iter_done(&it);
}

static void reset_one(gb_command *cmd, void *ctx)
{
    (void)ctx;
    cmd->calls = cmd->timed_calls = cmd->cycles = cmd->rejected_calls = cmd->failed_calls = 0;
    gb_latency_hist_free(cmd->latency_hist);
    cmd->latency_hist = NULL;
}

void gb_commands_reset_stats(gb_engine *eng) { gb_commands_foreach(eng, true, reset_one, NULL); }

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
