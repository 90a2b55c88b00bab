#include "engine/core/request/client.h"

#include "engine/core/memory/client_memory.h"

#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "engine/core/acl/acl.h"
#include "engine/core/request/blocking.h"
#include "engine/core/engine.h"
#include "engine/base/mem.h"
#include "engine/core/introspect/monitor.h"
#include "engine/core/request/multi.h"
#include "engine/core/pubsub/tracking.h"
#include "engine/core/pubsub/pubsub.h"
#include "engine/core/replication/repl.h"
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
    c->wire_rops = rops;
    c->rctx = rctx;
    c->hooks = hooks;
    c->conn = conn;
    c->ctime_ms = (int64_t)gb_clock_mono_ms();
    c->last_ms = c->ctime_ms;
    if (flags & GB_CLIENT_OBEY) {
        c->user = eng->acl->unrestricted;
    } else {
        c->user = eng->acl->default_user;
        if (gb_acl_user_is_open(c->user))
            c->flags |= GB_CLIENT_AUTHED;
    }
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
    gb_repl_client_gone(c);
    if (c->flags & GB_CLIENT_BLOCKED)
        gb_blocking_unblock(c, GB_UNBLOCK_DISCONNECT);
    gb_multi_discard(c);
    gb_multi_unwatch_all(c);
    gb_pubsub_client_free(c);
    gb_reply_flush_deferred_pushes(c, false);
    gb_free(c->watched);
    gb_monitor_remove(c);
    gb_tracking_client_gone(c);
    gb_client_memory_forget(c);
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

static const gb_reply_ops *ops_for(const gb_client *c, int ver)
{
    return ver == 3 ? c->wire_rops->resp3 : c->wire_rops->resp2;
}

bool gb_client_protected_allowed(const gb_client *c, int setting)
{
    return setting == GB_PROTECTED_YES || (setting == GB_PROTECTED_LOCAL && gb_client_is_local(c));
}

bool gb_client_can_speak(const gb_client *c, int ver) { return ver == c->resp || ops_for(c, ver) != NULL; }

void gb_client_set_resp(gb_client *c, int ver)
{
    const gb_reply_ops *ops = ops_for(c, ver);
    if (ops)
        c->wire_rops = ops;
    c->resp = ver;
    gb_client_update_reply(c);
}

gb_client *gb_client_by_id(gb_engine *eng, uint64_t id)
{
    for (gb_client *x = eng->clients; x; x = x->next)
        if (x->id == id)
            return gb_client_gone(x) ? NULL : x;
    return NULL;
}

void gb_client_kill(gb_client *victim)
{
    victim->flags |= GB_CLIENT_CLOSE_ASAP;
    gb_pubsub_client_free(victim);
    if (victim->hooks && victim->hooks->close)
        victim->hooks->close(victim);
}

void gb_client_asking_done(gb_client *c)
{
    /* Kept inside MULTI (for the EXEC) and after ASKING itself; an
     * unknown command (no last_cmd) ends it, as in Redis. */
    if (!(c->flags & GB_CLIENT_MULTI) && !(c->last_cmd && strcmp(c->last_cmd->fullname, "asking") == 0))
        c->flags &= ~(uint32_t)GB_CLIENT_ASKING;
}

void gb_client_update_reply(gb_client *c)
{
    /* A replica gets no replies at all: its output is the stream. */
    c->rops = (c->flags & (GB_CLIENT_REPLY_OFF | GB_CLIENT_REPLY_SKIP | GB_CLIENT_REPLICA)) ? &gb_reply_discard_ops
                                                                                              : c->wire_rops;
}

/* CLIENT LIST's tot-mem, as Redis's getClientMemoryUsage adds it up:
 * buffers, arguments, the MULTI queue, watched keys and the structures
 * themselves. */
static size_t memory_of(const gb_client *c, const gb_client_desc *d)
{
    size_t mem = sizeof *c + d->own_mem + d->qbuf + d->qbuf_free + d->argv_mem + d->rbs + d->omem;
    mem += c->mbytes + (size_t)c->mcap * sizeof *c->mqueue;
    mem += (size_t)c->watchcap * sizeof *c->watched; /* the keys' own bytes are not counted, as in Redis */
    return mem;
}

size_t gb_client_memory_usage(const gb_client *c)
{
    gb_client_desc d = {.fd = -1};
    if (c->hooks && c->hooks->describe)
        c->hooks->describe(c, &d);
    return memory_of(c, &d);
}

size_t gb_client_info(const gb_client *c, char *buf, size_t cap)
{
    gb_client_desc d = {.fd = -1};
    if (c->hooks && c->hooks->describe)
        c->hooks->describe(c, &d);
    /* Redis 7.0's letters, in its order (getClientInfoString). */
    char flags[16];
    int nf = 0;
    if (c->flags & GB_CLIENT_MONITOR)
        flags[nf++] = 'O';
    else if (c->flags & GB_CLIENT_REPLICA)
        flags[nf++] = 'S';
    if (c->flags & GB_CLIENT_MASTER)
        flags[nf++] = 'M';
    if (c->pubsub)
        flags[nf++] = 'P';
    if (c->flags & GB_CLIENT_MULTI)
        flags[nf++] = 'x';
    if (c->flags & GB_CLIENT_BLOCKED)
        flags[nf++] = 'b';
    if (c->flags & GB_CLIENT_TRACKING)
        flags[nf++] = 't';
    if (gb_tracking_broken_redirect(c))
        flags[nf++] = 'R';
    if (gb_tracking_bcast(c))
        flags[nf++] = 'B';
    if (c->flags & GB_CLIENT_DIRTY_CAS)
        flags[nf++] = 'd';
    if (c->flags & GB_CLIENT_CLOSE_AFTER_REPLY)
        flags[nf++] = 'c';
    if (c->flags & GB_CLIENT_CLOSE_ASAP)
        flags[nf++] = 'A';
    if (c->flags & GB_CLIENT_UNIX)
        flags[nf++] = 'U';
    if (c->flags & GB_CLIENT_READONLY)
        flags[nf++] = 'r';
    if (c->flags & GB_CLIENT_NO_EVICT)
        flags[nf++] = 'e';
    if (nf == 0)
        flags[nf++] = 'N';
    flags[nf] = '\0';
    int64_t now = (int64_t)c->eng->now_mono_ms;
    int n = snprintf(buf, cap,
                     "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=%zu psub=%zu ssub=%zu "
                     "multi=%d qbuf=%zu qbuf-free=%zu argv-mem=%zu multi-mem=%zu rbs=%zu rbp=%zu obl=%zu oll=%zu "
                     "omem=%zu tot-mem=%zu events=r cmd=%s user=%s redir=%lld resp=%d%s",
                     (unsigned long long)c->id, d.addr, d.laddr, d.fd, c->name ? c->name : "",
                     (long long)((now - c->ctime_ms) / 1000), (long long)((now - c->last_ms) / 1000), flags,
                     c->db->id, gb_pubsub_client_count(c, GB_PUBSUB_CHANNEL),
                     gb_pubsub_client_count(c, GB_PUBSUB_PATTERN), gb_pubsub_client_count(c, GB_PUBSUB_SHARD),
                     (c->flags & GB_CLIENT_MULTI) ? c->mcount : -1, d.qbuf, d.qbuf_free, d.argv_mem, c->mbytes, d.rbs,
                     d.rbp, d.obl, d.oll, d.omem, memory_of(c, &d), c->last_cmd ? c->last_cmd->fullname : "NULL",
                     c->user->name, gb_tracking_redirect_id(c), c->resp,
                     (c->flags & GB_CLIENT_RING) ? " transport=ring" : "");
    return n < 0 ? 0 : (size_t)n;
}

char *gb_client_info_dup(const gb_client *c, size_t *len)
{
    char line[1024];
    size_t n = gb_client_info(c, line, sizeof line);
    char *whole = gb_malloc(n + 1);
    if (n < sizeof line)
        memcpy(whole, line, n + 1);
    else
        gb_client_info(c, whole, n + 1);
    if (len)
        *len = n;
    return whole;
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

size_t gb_argv_copy_bytes(const gb_argv_copy *a)
{
    size_t bytes = (size_t)a->argc * sizeof(gb_slice);
    for (int i = 0; i < a->argc; i++)
        bytes += a->argv[i].len;
    return bytes;
}

void gb_argv_copy_free(gb_argv_copy *a)
{
    gb_free(a->argv);
    a->argv = NULL;
    a->argc = 0;
}
