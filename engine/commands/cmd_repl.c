/*
 * Replication commands, the primary's side (engine/core/replication/repl.h): SYNC,
 * PSYNC, REPLCONF, WAIT, FAILOVER (ROLE: cmd_replica.c, for both roles).
 */
#include "engine/commands/cmd_util.h"
#include "engine/base/strbuf.h"
#include "engine/base/util.h"
#include "engine/core/replication/failover.h"
#include "engine/core/replication/repl.h"
#include "engine/core/replication/replica.h"
#include "engine/persist/rdb_save.h"

/* A full sync: c waits for the background scan that makes the RDB
 * (engine/persist/repl_fsync.h: several replicas share one; +FULLRESYNC
 * comes when it starts, the stream after the RDB). */
/* repl-disable-tcp-nodelay: a replica that needs a full sync gets its
 * stream in fewer, larger packets (Redis's syncCommand). */
static void full_sync(gb_client *c, bool psync)
{
    if (c->eng->cfg.repl_disable_tcp_nodelay && c->hooks->set_nodelay)
        c->hooks->set_nodelay(c, false);
    bool functions;
    if (gb_repl_rdb_filtered(c, &functions)) { /* redis-cli --functions-rdb: no keys, no scan */
        gb_strbuf rdb = {0};
        gb_rdb_put_without_data(&rdb, c->eng, functions);
        gb_repl_full_send_now(c, psync, rdb.p, rdb.len);
        gb_strbuf_free(&rdb);
        return;
    }
    gb_repl_full_begin(c, psync);
}

/* What refuses a sync before anything is sent (Redis's syncCommand): a
 * FAILOVER under way here, or a replica whose own link is down. */
static bool may_serve_sync(gb_client *c)
{
    if (gb_failover_state_of(c->eng) != GB_FAILOVER_NONE) {
        gb_reply_error(c, "NOMASTERLINK Can't SYNC while failing over");
        return false;
    }
    if (gb_engine_is_replica(c->eng) && gb_replica_of(c->eng)->state != GB_REPL_CONNECTED) {
        gb_reply_error(c, "NOMASTERLINK Can't SYNC while not connected with my master");
        return false;
    }
    return gb_repl_can_sync(c);
}

/* PSYNC <replid> <offset> FAILOVER from our primary (its FAILOVER,
 * engine/core/replication/failover.h): with our own replication ID we promote
 * ourselves first, then answer the PSYNC as a primary. False when
 * refused (replied). */
static bool failover_request(gb_client *c, gb_slice replid)
{
    gb_log(GB_LOG_WARNING, "Failover request received for replid %.*s.", (int)replid.len, replid.ptr);
    if (!gb_engine_is_replica(c->eng)) {
        gb_reply_error(c, "ERR PSYNC FAILOVER can't be sent to a master.");
        return false;
    }
    if (!gb_slice_ieq(replid, gb_repl_id(c->eng))) {
        gb_reply_error(c, "ERR PSYNC FAILOVER replid must match my replid.");
        return false;
    }
    gb_replica_unset_master(c->eng);
    char who[1024];
    gb_client_info(c, who, sizeof who);
    gb_log(GB_LOG_NOTICE, "MASTER MODE enabled (failover request from '%s')", who);
    return true;
}

/* SYNC: the old protocol (no +FULLRESYNC line, no ACKs expected). */
static void cmd_sync(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    if (gb_repl_is_replica(c))
        return; /* Redis ignores SYNC from a replica */
    if (may_serve_sync(c))
        full_sync(c, false);
}

/* PSYNC replid offset: continue from the backlog when possible, else a
 * full sync. An offset that is not a number is Redis's integer error. */
static void cmd_psync(gb_client *c, int argc, gb_slice *argv)
{
    if (gb_repl_is_replica(c))
        return;
    if (argc > 3 && gb_slice_ieq(argv[3], "failover") && !failover_request(c, argv[1]))
        return;
    if (!may_serve_sync(c))
        return;
    int64_t offset;
    if (!gb_slice2ll(argv[2], &offset)) {
        gb_reply_error(c, GB_ERR_NOT_INT);
        return;
    }
    if (gb_repl_try_partial(c, argv[1], offset))
        return;
    full_sync(c, true);
}

static void cmd_replconf(gb_client *c, int argc, gb_slice *argv) { gb_repl_replconf(c, argc, argv); }

static void cmd_wait(gb_client *c, int argc, gb_slice *argv) { gb_repl_wait(c, argc, argv); }

static void cmd_failover(gb_client *c, int argc, gb_slice *argv)
{
    if (GB_UNLIKELY(c->eng->cluster != NULL)) {
        gb_reply_error(c, "ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.");
        return;
    }
    gb_failover_command(c, argc, argv);
}

GB_DEFINE_COMMANDS(repl,
    {"sync", cmd_sync},
    {"psync", cmd_psync},
    {"replconf", cmd_replconf},
    {"wait", cmd_wait},
    {"failover", cmd_failover});
