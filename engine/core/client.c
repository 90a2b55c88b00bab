#include "engine/core/client.h"

#include <stdlib.h>

#include "engine/core/blocking.h"
#include "engine/core/engine.h"
#include "engine/base/mem.h"
#include "engine/core/multi.h"
#include "platform/clock.h"

gb_client *gb_client_new(gb_engine *eng, const gb_reply_ops *rops, void *rctx, const gb_client_hooks *hooks,
                         void *conn, uint32_t flags)
{
    gb_client *c = gb_calloc(1, sizeof *c);
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
    gb_free(c->watched);
    if (c->prev)
        c->prev->next = c->next;
    else
        eng->clients = c->next;
    if (c->next)
        c->next->prev = c->prev;
    eng->nclients--;
    gb_free(c->name);
    gb_free(c);
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
