#include "engine/core/replication/failover.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/core/request/blocking.h"
#include "engine/core/engine.h"
#include "engine/core/replication/repl.h"
#include "engine/core/replication/replica.h"
#include "engine/core/request/reply.h"

typedef struct gb_failover {
    gb_failover_state state;
    char *host; /* the target (NULL: any replica, until one caught up) */
    int port;
    int64_t end_ms; /* wall clock; 0: no TIMEOUT */
    bool force;
} gb_failover;

static gb_failover *F(struct gb_engine *eng)
{
    if (!eng->failover)
        eng->failover = gb_calloc(1, sizeof *eng->failover);
    return eng->failover;
}

gb_failover_state gb_failover_state_of(const gb_engine *eng)
{
    return eng->failover ? eng->failover->state : GB_FAILOVER_NONE;
}

const char *gb_failover_state_name(const gb_engine *eng)
{
    switch (gb_failover_state_of(eng)) {
    case GB_FAILOVER_WAIT_FOR_SYNC: return "waiting-for-sync";
    case GB_FAILOVER_IN_PROGRESS: return "failover-in-progress";
    default: return "no-failover";
    }
}

/* Redis's clearFailoverState: the target forgotten, writes resumed. */
static void clear(gb_engine *eng)
{
    gb_failover *f = F(eng);
    gb_free(f->host);
    f->host = NULL;
    f->port = 0;
    f->end_ms = 0;
    f->force = false;
    f->state = GB_FAILOVER_NONE;
    gb_pause_for(eng, GB_PAUSE_FOR_FAILOVER, false);
}

/* Redis's abortFailover: a failover already under way makes this server a
 * primary again. */
static void abort_failover(gb_engine *eng, const char *why)
{
    gb_failover *f = F(eng);
    if (f->state == GB_FAILOVER_NONE)
        return;
    if (f->host)
        gb_log(GB_LOG_NOTICE, "FAILOVER to %s:%d aborted: %s", f->host, f->port, why);
    else
        gb_log(GB_LOG_NOTICE, "FAILOVER to any replica aborted: %s", why);
    if (f->state == GB_FAILOVER_IN_PROGRESS)
        gb_replica_unset_master(eng);
    clear(eng);
}

/* The attached replica listening on host:port, or NULL. */
static bool find_replica(gb_engine *eng, const char *host, int port, gb_repl_replica_view *out)
{
    gb_repl_replica_view v[64];
    size_t n = gb_repl_replicas(eng, v, 64);
    for (size_t i = 0; i < n && i < 64; i++)
        if (v[i].port == port && strcmp(v[i].ip, host) == 0) {
            *out = v[i];
            return true;
        }
    return false;
}

static void begin(gb_engine *eng)
{
    gb_failover *f = F(eng);
    f->state = GB_FAILOVER_IN_PROGRESS;
    /* Our link to the target sends PSYNC ... FAILOVER (transport/replica). */
    gb_replica_set_master(eng, f->host, f->port);
}

void gb_failover_cron(gb_engine *eng)
{
    gb_failover *f = eng->failover;
    if (!f || f->state != GB_FAILOVER_WAIT_FOR_SYNC)
        return;
    if (f->end_ms && f->end_ms <= eng->now_ms) {
        if (f->force) {
            gb_log(GB_LOG_NOTICE, "FAILOVER to %s:%d time out exceeded, failing over.", f->host, f->port);
            begin(eng);
        } else {
            abort_failover(eng, "Replica never caught up before timeout");
        }
        return;
    }
    int64_t offset = gb_repl_offset(eng);
    if (f->host) {
        gb_repl_replica_view v;
        if (!find_replica(eng, f->host, f->port, &v) || v.ack_off != offset)
            return;
    } else {
        gb_repl_replica_view v[64];
        size_t n = gb_repl_replicas(eng, v, 64), i;
        for (i = 0; i < n && i < 64; i++)
            if (v[i].ack_off == offset)
                break;
        if (i == n || i == 64)
            return;
        f->host = gb_strdup(v[i].ip);
        f->port = v[i].port;
    }
    gb_log(GB_LOG_NOTICE, "Failover target %s:%d is synced, failing over.", f->host, f->port);
    begin(eng);
}

bool gb_failover_psync_answered(gb_engine *eng, bool accepted)
{
    if (gb_failover_state_of(eng) != GB_FAILOVER_IN_PROGRESS)
        return true;
    if (accepted) {
        clear(eng);
        return true;
    }
    abort_failover(eng, "Failover target rejected psync request");
    return false;
}

void gb_failover_command(gb_client *c, int argc, const gb_slice *argv)
{
    gb_engine *eng = c->eng;
    gb_failover *f = F(eng);
    if (argc == 2 && gb_slice_ieq(argv[1], "abort")) {
        if (f->state == GB_FAILOVER_NONE) {
            gb_reply_error(c, "ERR No failover in progress.");
            return;
        }
        abort_failover(eng, "Failover manually aborted");
        gb_reply_ok(c);
        return;
    }
    int64_t timeout_ms = 0, port = 0;
    bool force = false;
    const gb_slice *host = NULL;
    for (int j = 1; j < argc; j++) {
        if (gb_slice_ieq(argv[j], "timeout") && j + 1 < argc && timeout_ms == 0) {
            if (!gb_slice2ll(argv[j + 1], &timeout_ms)) {
                gb_reply_error(c, GB_ERR_NOT_INT);
                return;
            }
            if (timeout_ms <= 0) {
                gb_reply_error(c, "ERR FAILOVER timeout must be greater than 0");
                return;
            }
            j++;
        } else if (gb_slice_ieq(argv[j], "to") && j + 2 < argc && !host) {
            if (!gb_slice2ll(argv[j + 2], &port)) {
                gb_reply_error(c, GB_ERR_NOT_INT);
                return;
            }
            host = &argv[j + 1];
            j += 2;
        } else if (gb_slice_ieq(argv[j], "force") && !force) {
            force = true;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    if (f->state != GB_FAILOVER_NONE) {
        gb_reply_error(c, "ERR FAILOVER already in progress.");
        return;
    }
    if (gb_engine_is_replica(eng)) {
        gb_reply_error(c, "ERR FAILOVER is not valid when server is a replica.");
        return;
    }
    gb_repl_replica_view any;
    if (gb_repl_replicas(eng, &any, 1) == 0) {
        gb_reply_error(c, "ERR FAILOVER requires connected replicas.");
        return;
    }
    if (force && (!timeout_ms || !host)) {
        gb_reply_error(c, "ERR FAILOVER with force option requires both a timeout and target HOST and IP.");
        return;
    }
    if (host) {
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)host->len, host->ptr);
        gb_repl_replica_view v;
        if (!find_replica(eng, name, (int)port, &v)) {
            gb_reply_error(c, "ERR FAILOVER target HOST and PORT is not a replica.");
            return;
        }
        if (!v.online) {
            gb_reply_error(c, "ERR FAILOVER target replica is not online.");
            return;
        }
        f->host = gb_strdup(name);
        f->port = (int)port;
        gb_log(GB_LOG_NOTICE, "FAILOVER requested to %s:%lld.", name, (long long)port);
    } else {
        gb_log(GB_LOG_NOTICE, "FAILOVER requested to any replica.");
    }
    f->end_ms = timeout_ms ? eng->now_ms + timeout_ms : 0;
    f->force = force;
    f->state = GB_FAILOVER_WAIT_FOR_SYNC;
    gb_pause_for(eng, GB_PAUSE_FOR_FAILOVER, true);
    gb_reply_ok(c);
}

void gb_failover_destroy(gb_engine *eng)
{
    if (!eng->failover)
        return;
    gb_free(eng->failover->host);
    gb_free(eng->failover);
    eng->failover = NULL;
}
