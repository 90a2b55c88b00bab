/*
 * REPLICAOF / SLAVEOF and ROLE: the replica side's commands (the state is
 * engine/core/replication/replica.h; the link follows it from the loop's cron).
 */
#include <stdio.h>
#include <string.h>

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/commands/cmd_util.h"
#include "engine/core/engine.h"
#include "engine/core/replication/failover.h"
#include "engine/core/replication/repl.h"
#include "engine/core/replication/replica.h"

/* Redis's replicaofCommand: "NO ONE" promotes; otherwise the port is
 * checked, the same primary again is a no-op with its own +OK text. */
static void cmd_replicaof(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_engine *eng = c->eng;
    char who[1024];
    /* a cluster node's primary is CLUSTER REPLICATE's */
    if (GB_UNLIKELY(eng->cluster != NULL)) {
        gb_reply_error(c, "ERR REPLICAOF not allowed in cluster mode.");
        return;
    }
    if (gb_failover_state_of(eng) != GB_FAILOVER_NONE) {
        gb_reply_error(c, "ERR REPLICAOF not allowed while failing over.");
        return;
    }
    if (gb_arg_is(argv[1], "no") && gb_arg_is(argv[2], "one")) {
        if (gb_engine_is_replica(eng)) {
            gb_replica_unset_master(eng);
            gb_client_info(c, who, sizeof who);
            gb_log(GB_LOG_NOTICE, "MASTER MODE enabled (user request from '%s')", who);
        }
        gb_reply_ok(c);
        return;
    }
    if (c->flags & GB_CLIENT_REPLICA) {
        gb_reply_error(c, "ERR Command is not valid when client is a replica.");
        return;
    }
    int64_t port;
    if (!gb_arg_ll_range(c, argv[2], 0, 65535, "ERR Invalid master port", &port))
        return;
    char host[256];
    snprintf(host, sizeof host, "%.*s", (int)GB_MIN(argv[1].len, sizeof host - 1), argv[1].ptr);
    const gb_replica *r = eng->replica;
    if (gb_engine_is_replica(eng) && gb_strcasecmp(r->host, host) == 0 && r->port == port) {
        gb_log(GB_LOG_NOTICE, "REPLICAOF would result into synchronization with the master we are already "
                              "connected with. No operation performed.");
        gb_reply_status(c, "OK Already connected to specified master");
        return;
    }
    gb_replica_set_master(eng, host, (int)port);
    gb_client_info(c, who, sizeof who);
    gb_log(GB_LOG_NOTICE, "REPLICAOF %s:%d enabled (user request from '%s')", host, (int)port, who);
    gb_reply_ok(c);
}

/* ROLE: a replica's five fields (engine/core/replication/replica.h); a primary's
 * [master, offset, [[ip, port, acked offset]...]] (engine/core/replication/repl.h). */
static void cmd_role(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    if (gb_engine_is_replica(c->eng)) {
        gb_replica_role_reply(c);
        return;
    }
    gb_repl_role(c);
}

GB_DEFINE_COMMANDS(replica,
    {"replicaof", cmd_replicaof},
    {"slaveof", cmd_replicaof},
    {"role", cmd_role});
