#include "engine/core/client.h"

#include <stdio.h>
#include <stdlib.h>

#include "engine/core/blocking.h"
#include "engine/core/engine.h"
#include "engine/base/mem.h"
#include "engine/core/multi.h"
#include "platform/clock.h"

gb_client *gb_client_new(gb_engine *eng, const gb_reply_ops *rops, void *rctx, const gb_client_hooks *hooks,
                         void *conn, uint32_t flags)
{
    gb_client *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->id = eng->next_client_id++;
    c->eng = eng;
    c->db = &eng->dbs[0];
    c->flags = flags;
    c->resp = 2;
    c->rops = rops;
    c->rctx = rctx;
    c->hooks = hooks;
    c->conn = conn;
    c->ctime_ms = (int64_t)gb_clock_mono_ms();
    c->last_ms = c->ctime_ms;
    if (!eng->cfg.requirepass || !eng->cfg.requirepass[0])
        c->flags |= GB_CLIENT_AUTHED;
    c->next = eng->clients;
    if (eng->clients)
        eng->clients->prev = c;
    eng->clients = c;
    eng->nclients++;
    return c;
}

void gb_client_free(gb_client *c)
{
    gb_engine *eng = c->eng;
    if (eng->client_free_hook)
        eng->client_free_hook(eng->client_free_ctx, c);
    if (c->flags & GB_CLIENT_BLOCKED)
        gb_blocking_unblock(c, GB_UNBLOCK_DISCONNECT);
    gb_multi_discard(c);
    gb_multi_unwatch_all(c);
    free(c->watched);
    if (c->prev)
        c->prev->next = c->next;
    else
        eng->clients = c->next;
    if (c->next)
        c->next->prev = c->prev;
    eng->nclients--;
    free(c->name);
    free(c);
}

gb_argv_copy gb_argv_copy_make(const gb_command *cmd, int argc, const gb_slice *argv)
{
    size_t bytes = (size_t)argc * sizeof(gb_slice);
    for (int i = 0; i < argc; i++)
        bytes += argv[i].len;
    gb_argv_copy a = {cmd, argc, NULL};
    a.argv = gb_malloc(bytes ? bytes : 1);
    char *p = (char *)(a.argv + argc);
    for (int i = 0; i < argc; i++) {
        if (argv[i].len)
            memcpy(p, argv[i].ptr, argv[i].len);
        a.argv[i] = gb_slice_make(p, argv[i].len);
        p += argv[i].len;
    }
    return a;
}

void gb_argv_copy_free(gb_argv_copy *a)
{
    gb_free(a->argv);
    a->argv = NULL;
    a->argc = 0;
}

/* Redis's "unknown command" text quotes the first arguments, up to 128
 * bytes in all. */
static void reply_unknown_command(gb_client *c, int argc, gb_slice *argv)
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
    gb_reply_errorf(c, "ERR unknown command '%.*s', with args beginning with: %s", (int)GB_MIN(argv[0].len, 128),
                    argv[0].ptr, args);
}

static bool arity_ok(const gb_command_def *d, int argc) { return d->arity > 0 ? argc == d->arity : argc >= -d->arity; }

/* Runs a resolved command and accounts for it. */
void gb_client_call(gb_client *c, gb_command *cmd, int argc, gb_slice *argv)
{
    gb_call_stats st = gb_call_begin(c->eng, cmd);
    c->last_cmd = cmd;
    cmd->def->proc(c, argc, argv);
    gb_call_end(c->eng, cmd, st);
}

void gb_client_execute(gb_client *c, int argc, gb_slice *argv)
{
    gb_engine *eng = c->eng;
    if (argc == 0)
        return;
    c->last_ms = (int64_t)eng->now_mono_ms;

    gb_command *cmd = gb_command_lookup(eng, argv[0]);
    if (!cmd) {
        reply_unknown_command(c, argc, argv);
        if (c->flags & GB_CLIENT_MULTI)
            c->flags |= GB_CLIENT_DIRTY_EXEC;
        return;
    }
    const gb_command_def *d = cmd->def;
    if (!arity_ok(d, argc)) {
        cmd->rejected_calls++;
        if (d->proc == gb_multi_exec_proc) {
            /* Redis's execCommandAbort: a rejected EXEC discards the
             * transaction (if any) and says why. */
            gb_reply_errorf(c, "EXECABORT Transaction discarded because of: wrong number of arguments for '%s' command",
                            d->name);
            gb_multi_discard(c);
            gb_multi_unwatch_all(c);
            return;
        }
        gb_reply_wrong_arity(c, d->name);
        if (c->flags & GB_CLIENT_MULTI)
            c->flags |= GB_CLIENT_DIRTY_EXEC;
        return;
    }
    if (!(c->flags & GB_CLIENT_AUTHED) && !(d->flags & GB_CMD_NOAUTH)) {
        cmd->rejected_calls++;
        gb_reply_error(c, GB_ERR_NOAUTH);
        if (c->flags & GB_CLIENT_MULTI)
            c->flags |= GB_CLIENT_DIRTY_EXEC;
        return;
    }
    if ((d->flags & GB_CMD_DENYOOM) && gb_engine_over_maxmemory(eng)) {
        cmd->rejected_calls++;
        gb_reply_error(c, GB_ERR_OOM);
        if (c->flags & GB_CLIENT_MULTI)
            c->flags |= GB_CLIENT_DIRTY_EXEC;
        return;
    }
    if ((c->flags & GB_CLIENT_MULTI) && !(d->flags & GB_CMD_NOMULTI)) {
        gb_multi_queue(c, cmd, argc, argv);
        return;
    }

    gb_client_call(c, cmd, argc, argv);

    /* Keys that became ready during this command are served now, after it
     * completed (Redis's handleClientsBlockedOnKeys). */
    if (eng->nready && !eng->serving_ready)
        gb_blocking_serve_ready(eng);
}
