/*
 * Replication commands, the primary's side (engine/core/repl.h): SYNC,
 * PSYNC, REPLCONF, WAIT, FAILOVER (ROLE: cmd_replica.c, for both roles).
 */
#include "engine/commands/cmd_util.h"
#include "engine/base/strbuf.h"
#include "engine/base/util.h"
#include "engine/core/failover.h"
#include "engine/core/repl.h"
#include "engine/core/replica.h"
#include "engine/persist/rdb_save.h"

/* A full sync: +FULLRESYNC, then the dataset as an RDB.
 *
 * The RDB is built here, synchronously on the engine thread: every client
 * waits while a large dataset is written. A background RDB through the
 * fork-less snapshot's copy-on-write scan (engine/persist/snapshot.c),
 * streamed to the socket while commands keep running, is the next step;
 * until then the offset in +FULLRESYNC is exact because nothing runs
 * between it and the dataset's last byte. */
static void full_sync(gb_client *c, bool psync)
{
    gb_repl_full_begin(c, psync);
    gb_strbuf rdb = {0};
    uint64_t keys;
    gb_rdb_save_buffer(c->eng, &rdb, &keys);
    gb_log(GB_LOG_NOTICE, "Full resync: %llu keys, %zu bytes of RDB sent to the replica", (unsigned long long)keys,
           rdb.len);
    gb_repl_full_send_rdb(c, rdb.p, rdb.len);
    gb_strbuf_free(&rdb);
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
 * engine/core/failover.h): with our own replication ID we promote
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
    {"sync", 1, GB_CMD_ADMIN | GB_CMD_NOSCRIPT, 0, 0, 0, cmd_sync, "server", "Internal command used for replication",
     "1.0.0"},
    {"psync", -3, GB_CMD_ADMIN | GB_CMD_NOSCRIPT, 0, 0, 0, cmd_psync, "server", "Internal command used for replication",
     "2.8.0"},
    {"replconf", -1, GB_CMD_ADMIN | GB_CMD_NOSCRIPT | GB_CMD_LOADING | GB_CMD_STALE | GB_CMD_ALLOW_BUSY, 0, 0, 0,
     cmd_replconf, "server",
     "An internal command for configuring the replication stream", "3.0.0"},
    {"wait", 3, GB_CMD_NOSCRIPT, 0, 0, 0, cmd_wait, "generic",
     "Wait for the synchronous replication of all the write commands sent in the context of the current connection",
     "3.0.0"},
    {"failover", -1, GB_CMD_ADMIN | GB_CMD_NOSCRIPT | GB_CMD_STALE, 0, 0, 0, cmd_failover, "server",
     "Start a coordinated failover between this server and one of its replicas.", "6.2.0"});
