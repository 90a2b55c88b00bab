/*
 * The replica side's state and rules (see replica.h). Texts are Redis
 * 7.0's (src/replication.c, src/server.c) byte for byte.
 */
#include "engine/core/replication/replica.h"

#include "engine/core/replication/repl.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine/base/mem.h"
#include "engine/cluster/cluster.h"
#include "engine/core/request/blocking.h"
#include "engine/core/engine.h"

gb_replica *gb_replica_of(gb_engine *eng)
{
    if (!eng->replica)
        eng->replica = gb_calloc(1, sizeof *eng->replica);
    return eng->replica;
}

void gb_replica_destroy(gb_engine *eng)
{
    if (!eng->replica)
        return;
    gb_free(eng->replica->host);
    gb_free(eng->replica);
    eng->replica = NULL;
}

bool gb_engine_is_replica(const gb_engine *eng) { return eng->replica && eng->replica->host; }

/* CONFIG GET / REWRITE replicaof show where the server follows now. */
static void record_setting(gb_engine *eng, const char *host, int port)
{
    char v[320] = "";
    if (host)
        snprintf(v, sizeof v, "%s %d", host, port);
    gb_free(eng->cfg.replicaof);
    eng->cfg.replicaof = gb_strdup(v);
}

/* Redis's disconnectAllBlockedClients: a client waiting for a key of a
 * server that becomes a replica is answered with an error and closed (a
 * client held by CLIENT PAUSE is not: its command has not begun). */
static void disconnect_blocked_clients(gb_engine *eng)
{
    for (gb_client *c = eng->clients; c; c = c->next) {
        if (!(c->flags & GB_CLIENT_BLOCKED) || gb_pause_is_postponed(c))
            continue;
        gb_blocking_unblock(c, GB_UNBLOCK_DISCONNECT); /* detached, no reply of its own */
        gb_reply_error(c, "UNBLOCKED force unblock from blocking operation, instance state changed (master -> "
                          "replica?)");
        c->flags |= GB_CLIENT_CLOSE_AFTER_REPLY;
        gb_client_command_done(c);
        if (c->hooks && c->hooks->flush)
            c->hooks->flush(c);
    }
}

bool gb_replica_configured(const gb_engine *eng)
{
    const char *v = eng->cfg.replicaof;
    if (v && *v && !gb_slice_ieq(gb_slice_cstr(v), "no one"))
        return true;
    return eng->cluster && (eng->cluster->myself->flags & GB_CNODE_SLAVE);
}

void gb_replica_set_master(gb_engine *eng, const char *host, int port)
{
    gb_replica *r = gb_replica_of(eng);
    bool was_replica = r->host != NULL;
    gb_free(r->host);
    r->host = gb_strdup(host);
    r->port = port;
    disconnect_blocked_clients(eng);
    /* The link to the old primary ends here for INFO (Redis sets
     * repl_down_since as it frees the old master client), though the
     * transport closes it at its next look. */
    if (r->state == GB_REPL_CONNECTED)
        r->down_since_s = (uint64_t)time(NULL);
    r->state = GB_REPL_CONNECT;
    r->epoch++;
    /* Our replicas stay (Redis 7.0: "they may hopefully be able to
     * partially resync with us"); a new history, from a +CONTINUE with
     * another ID or a full sync's payload, disconnects them then. */
    gb_repl_set_following(eng, true);
    if (!was_replica) {
        /* A primary until now: its own history is what it asks the new
         * primary to continue (Redis's replicationCacheMasterUsingMyself),
         * so an old primary rejoining after a failover resyncs partially. */
        r->down_since_s = 0;
        r->have_master = true;
        snprintf(r->replid, sizeof r->replid, "%s", gb_repl_id(eng));
        r->offset = r->read_offset = gb_repl_offset(eng);
        r->master_db = r->resume_db > 0 ? r->resume_db : -1;
        r->resume_db = 0;
    }
    record_setting(eng, host, port);
}

void gb_replica_unset_master(gb_engine *eng)
{
    gb_replica *r = gb_replica_of(eng);
    gb_free(r->host);
    r->host = NULL;
    r->state = GB_REPL_NONE;
    r->epoch++;
    /* Redis's replicationUnsetMaster: a new history whose past is the
     * primary's (replid2), our replicas told by a reconnect. */
    gb_repl_shift_replid(eng);
    gb_repl_set_following(eng, false);
    gb_repl_disconnect_replicas(eng);
    record_setting(eng, NULL, 0);
}

const char *gb_replica_refusal(const gb_client *c, bool writes, bool stale_ok)
{
    const gb_engine *eng = c->eng;
    if (!gb_engine_is_replica(eng) || (c->flags & GB_CLIENT_OBEY))
        return NULL;
    if (writes && eng->cfg.replica_read_only)
        return "READONLY You can't write against a read only replica.";
    if (!stale_ok && eng->replica->state != GB_REPL_CONNECTED && !eng->cfg.replica_serve_stale_data)
        return "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
    return NULL;
}

bool gb_replica_keeps_expired(const gb_engine *eng, bool *present)
{
    if (!gb_engine_is_replica(eng))
        return false;
    *present = eng->replica->applying;
    return true;
}

typedef void (*line_fn)(void *ctx, const char *text);

static void linef(line_fn line, void *ctx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void linef(line_fn line, void *ctx, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    line(ctx, buf);
}

static int seconds_since(uint64_t now_ms, uint64_t then_ms) { return (int)((now_ms - then_ms) / 1000); }

void gb_replica_info(gb_engine *eng, line_fn line, void *ctx)
{
    const gb_replica *r = eng->replica;
    uint64_t now = eng->now_mono_ms;
    /* 1 until a sync has given an offset, as Redis prints. */
    int64_t off = r->have_master ? r->offset : 1, read_off = r->have_master ? r->read_offset : 1;
    linef(line, ctx, "master_host:%s", r->host);
    linef(line, ctx, "master_port:%d", r->port);
    linef(line, ctx, "master_link_status:%s", r->state == GB_REPL_CONNECTED ? "up" : "down");
    linef(line, ctx, "master_last_io_seconds_ago:%d", r->master ? seconds_since(now, r->last_io_ms) : -1);
    linef(line, ctx, "master_sync_in_progress:%d", r->state == GB_REPL_TRANSFER);
    linef(line, ctx, "slave_read_repl_offset:%lld", (long long)read_off);
    linef(line, ctx, "slave_repl_offset:%lld", (long long)off);
    if (r->state == GB_REPL_TRANSFER) {
        int64_t size = r->transfer_size > 0 ? r->transfer_size : 0;
        double perc = size ? (double)r->transfer_read / (double)size * 100 : 0;
        linef(line, ctx, "master_sync_total_bytes:%lld", (long long)r->transfer_size);
        linef(line, ctx, "master_sync_read_bytes:%lld", (long long)r->transfer_read);
        linef(line, ctx, "master_sync_left_bytes:%lld", (long long)(r->transfer_size - r->transfer_read));
        linef(line, ctx, "master_sync_perc:%.2f", perc);
        linef(line, ctx, "master_sync_last_io_seconds_ago:%d", seconds_since(now, r->transfer_last_io_ms));
    }
    if (r->state != GB_REPL_CONNECTED)
        linef(line, ctx, "master_link_down_since_seconds:%jd",
              r->down_since_s ? (intmax_t)((uint64_t)time(NULL) - r->down_since_s) : (intmax_t)-1);
    linef(line, ctx, "slave_priority:%d", eng->cfg.replica_priority);
    linef(line, ctx, "slave_read_only:%d", eng->cfg.replica_read_only);
    linef(line, ctx, "replica_announced:%d", eng->cfg.replica_announced);
}

static const char *role_state(gb_repl_state s)
{
    switch (s) {
    case GB_REPL_NONE: return "none";
    case GB_REPL_CONNECT: return "connect";
    case GB_REPL_CONNECTING: return "connecting";
    case GB_REPL_HANDSHAKE: return "handshake";
    case GB_REPL_TRANSFER: return "sync";
    case GB_REPL_CONNECTED: return "connected";
    }
    return "unknown";
}

void gb_replica_role_reply(gb_client *c)
{
    const gb_replica *r = c->eng->replica;
    gb_reply_array(c, 5);
    gb_reply_cstr(c, "slave");
    gb_reply_cstr(c, r->host);
    gb_reply_int(c, r->port);
    gb_reply_cstr(c, role_state(r->state));
    gb_reply_int(c, r->master ? r->offset : -1);
}
