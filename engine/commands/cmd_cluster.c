/*
 * CLUSTER and its subcommands, ASKING, READONLY, READWRITE: Redis 7.0's
 * replies and errors (its clusterCommand). The state is
 * engine/cluster/cluster.h's; the redirections are the gate's
 * (engine/core/cluster_mode.h). The subcommands that need the cluster
 * bus (MEET, REPLICATE, FAILOVER, REPLICAS, SLAVES) are not registered
 * yet: the gate answers them as unknown (docs/cluster.md).
 */
#include <string.h>

#include "engine/base/mem.h"
#include "engine/base/strbuf.h"
#include "engine/base/util.h"
#include "engine/cluster/cluster.h"
#include "engine/commands/cmd_util.h"
#include "engine/core/cluster_mode.h"
#include "engine/core/engine.h"
#include "engine/core/keyspace/slot_list.h"
#include "engine/core/replication/repl.h"
#include "engine/core/replication/replica.h"
#include "engine/core/pubsub/tracking.h"
#include "engine/types/t_keys.h"

#define ERR_DISABLED "ERR This instance has cluster support disabled"

/* The cluster state, or NULL after answering that there is none. */
static gb_cluster *cluster_or_reply(gb_client *c)
{
    if (!c->eng->cluster)
        gb_reply_error(c, ERR_DISABLED);
    return c->eng->cluster;
}

static void cluster_help(gb_client *c)
{
    static const char *const lines[] = {
        "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ADDSLOTS <slot> [<slot> ...]",
        "    Assign slots to current node.",
        "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
        "    Assign slots which are between <start-slot> and <end-slot> to current node.",
        "BUMPEPOCH",
        "    Advance the cluster config epoch.",
        "COUNT-FAILURE-REPORTS <node-id>",
        "    Return number of failure reports for <node-id>.",
        "COUNTKEYSINSLOT <slot>",
        "    Return the number of keys in <slot>.",
        "DELSLOTS <slot> [<slot> ...]",
        "    Delete slots information from current node.",
        "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
        "    Delete slots information which are between <start-slot> and <end-slot> from current node.",
        "FAILOVER [FORCE|TAKEOVER]",
        "    Promote current replica node to being a master.",
        "FORGET <node-id>",
        "    Remove a node from the cluster.",
        "GETKEYSINSLOT <slot> <count>",
        "    Return key names stored by current node in a slot.",
        "FLUSHSLOTS",
        "    Delete current node own slots information.",
        "INFO",
        "    Return information about the cluster.",
        "KEYSLOT <key>",
        "    Return the hash slot for <key>.",
        "MEET <ip> <port> [<bus-port>]",
        "    Connect nodes into a working cluster.",
        "MYID",
        "    Return the node id.",
        "NODES",
        "    Return cluster configuration seen by node. Output format:",
        "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
        "REPLICATE <node-id>",
        "    Configure current node as replica to <node-id>.",
        "RESET [HARD|SOFT]",
        "    Reset current node (default: soft).",
        "SET-CONFIG-EPOCH <epoch>",
        "    Set config epoch of current node.",
        "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
        "    Set slot state.",
        "REPLICAS <node-id>",
        "    Return <node-id> replicas.",
        "SAVECONFIG",
        "    Force saving cluster configuration on disk.",
        "SLOTS",
        "    Return information about slots range mappings. Each range is made of:",
        "    start, end, master and replicas IP addresses, ports and ids",
        "SHARDS",
        "    Return information about slot range mappings and the nodes associated with them.",
        "LINKS",
        "    Return information about all network links between this node and its peers.",
        "    Output format is an array where each array element is a map containing attributes of a link",
        "HELP",
        "    Prints this help.",
    };
    gb_reply_help(c, lines, GB_ARRAY_LEN(lines));
}

/* ---- reading the state ---- */

static const gb_cluster_node *primary_of(const gb_cluster *cl, const gb_cluster_node *n)
{
    return n->replica_of[0] ? gb_cluster_lookup(cl, n->replica_of, GB_CLUSTER_NAMELEN) : NULL;
}

static void cluster_info(gb_client *c, gb_cluster *cl)
{
    int assigned = 0, ok = 0, pfail = 0, fail = 0;
    for (int j = 0; j < GB_CLUSTER_SLOTS; j++) {
        const gb_cluster_node *n = cl->slots[j];
        if (!n)
            continue;
        assigned++;
        if (n->flags & GB_CNODE_FAIL)
            fail++;
        else if (n->flags & GB_CNODE_PFAIL)
            pfail++;
        else
            ok++;
    }
    const gb_cluster_node *me = cl->myself, *primary = primary_of(cl, me);
    uint64_t my_epoch = (me->flags & GB_CNODE_SLAVE) && primary ? primary->config_epoch : me->config_epoch;
    gb_strbuf b = {0};
    gb_strbuf_printf(&b,
                     "cluster_state:%s\r\ncluster_slots_assigned:%d\r\ncluster_slots_ok:%d\r\n"
                     "cluster_slots_pfail:%d\r\ncluster_slots_fail:%d\r\ncluster_known_nodes:%zu\r\n"
                     "cluster_size:%d\r\ncluster_current_epoch:%llu\r\ncluster_my_epoch:%llu\r\n"
                     "cluster_stats_messages_sent:%llu\r\ncluster_stats_messages_received:%llu\r\n"
                     "total_cluster_links_buffer_limit_exceeded:%llu\r\n",
                     cl->state == GB_CLUSTER_OK ? "ok" : "fail", assigned, ok, pfail, fail, cl->nnodes,
                     cl->size, (unsigned long long)cl->current_epoch, (unsigned long long)my_epoch,
                     (unsigned long long)cl->messages_sent, (unsigned long long)cl->messages_received,
                     (unsigned long long)cl->links_buffer_limit_exceeded);
    gb_reply_verbatim(c, b.p, b.len);
    gb_strbuf_free(&b);
}

static void cluster_nodes(gb_client *c, gb_cluster *cl)
{
    gb_strbuf b = {0};
    gb_cluster_describe_nodes(cl, 0, gb_cluster_mode_shows_pport(c), &b);
    gb_reply_verbatim(c, gb_strbuf_cstr(&b), b.len);
    gb_strbuf_free(&b);
}

/* One node in CLUSTER SLOTS: the preferred endpoint (null for
 * unknown-endpoint), port, id, and a map of the endpoints it is not: the
 * ip, the hostname if any (Redis's addNodeToNodeReply). */
static void reply_slot_node(gb_client *c, const gb_cluster_node *n)
{
    int type = c->eng->cfg.cluster_preferred_endpoint_type;
    gb_reply_array(c, 4);
    if (type == GB_ENDPOINT_UNKNOWN)
        gb_reply_nil(c);
    else
        gb_reply_cstr(c, gb_cluster_mode_endpoint(c->eng, n));
    gb_reply_int(c, gb_cluster_mode_client_port(c, n));
    gb_reply_bulk(c, n->name, GB_CLUSTER_NAMELEN);
    bool with_ip = type != GB_ENDPOINT_IP;
    bool with_host = type != GB_ENDPOINT_HOSTNAME && n->hostname[0] != '\0';
    gb_reply_map(c, with_ip + with_host);
    if (with_ip) {
        gb_reply_cstr(c, "ip");
        gb_reply_cstr(c, n->ip);
    }
    if (with_host) {
        gb_reply_cstr(c, "hostname");
        gb_reply_cstr(c, n->hostname);
    }
}

/* Redis's isReplicaAvailable: r follows primary, is not failing and has
 * reported a replication offset. */
static bool replica_available(gb_client *c, const gb_cluster *cl, const gb_cluster_node *r,
                              const gb_cluster_node *primary)
{
    if (!(r->flags & GB_CNODE_SLAVE) || strcmp(r->replica_of, primary->name) != 0 || (r->flags & GB_CNODE_FAIL))
        return false;
    uint64_t offset = r == cl->myself ? (uint64_t)gb_repl_offset(c->eng) : r->repl_offset;
    return offset != 0;
}

static void cluster_slots(gb_client *c, gb_cluster *cl)
{
    size_t handle = gb_reply_array_deferred(c);
    int64_t ranges = 0;
    for (int start = 0; start < GB_CLUSTER_SLOTS;) {
        const gb_cluster_node *n = cl->slots[start];
        int end = start;
        while (end + 1 < GB_CLUSTER_SLOTS && cl->slots[end + 1] == n)
            end++;
        if (n) {
            int64_t nreplicas = 0;
            for (size_t i = 0; i < cl->nnodes; i++)
                nreplicas += replica_available(c, cl, cl->nodes[i], n);
            gb_reply_array(c, 3 + nreplicas);
            gb_reply_int(c, start);
            gb_reply_int(c, end);
            reply_slot_node(c, n);
            for (size_t i = 0; i < cl->nnodes; i++)
                if (replica_available(c, cl, cl->nodes[i], n))
                    reply_slot_node(c, cl->nodes[i]);
            ranges++;
        }
        start = end + 1;
    }
    gb_reply_set_deferred(c, handle, ranges);
}

static void reply_shard_node(gb_client *c, gb_cluster *cl, const gb_cluster_node *n)
{
    bool host = n->hostname[0] != '\0';
    bool replica = (n->flags & GB_CNODE_SLAVE) != 0;
    long long offset = 0;
    if (n == cl->myself)
        offset = (long long)gb_repl_offset(c->eng);
    else
        offset = (long long)n->repl_offset;
    /* tls-cluster: port is the TLS one, pport the plaintext one (Redis
     * 7.0's addNodeDetailsToShardReply); a port of 0 is left out */
    int plaintext_port = c->eng->cfg.tls_cluster ? n->pport : n->port;
    int tls_port = c->eng->cfg.tls_cluster ? n->port : 0;
    gb_reply_map(c, 6 + (host ? 1 : 0) + (plaintext_port ? 1 : 0) + (tls_port ? 1 : 0));
    gb_reply_cstr(c, "id");
    gb_reply_bulk(c, n->name, GB_CLUSTER_NAMELEN);
    if (plaintext_port) {
        gb_reply_cstr(c, "port");
        gb_reply_int(c, plaintext_port);
    }
    if (tls_port) {
        gb_reply_cstr(c, "tls-port");
        gb_reply_int(c, tls_port);
    }
    gb_reply_cstr(c, "ip");
    gb_reply_cstr(c, n->ip);
    gb_reply_cstr(c, "endpoint");
    gb_reply_cstr(c, gb_cluster_mode_endpoint(c->eng, n));
    if (host) {
        gb_reply_cstr(c, "hostname");
        gb_reply_cstr(c, n->hostname);
    }
    gb_reply_cstr(c, "role");
    gb_reply_cstr(c, replica ? "replica" : "master");
    gb_reply_cstr(c, "replication-offset");
    gb_reply_int(c, offset);
    gb_reply_cstr(c, "health");
    gb_reply_cstr(c, (n->flags & GB_CNODE_FAIL) ? "fail" : replica && offset == 0 ? "loading" : "online");
}

/* A primary's slot ranges as start/end pairs. */
static void reply_slot_pairs(gb_client *c, const gb_cluster_node *n)
{
    size_t handle = gb_reply_array_deferred(c);
    int64_t count = 0;
    for (int j = 0; j < GB_CLUSTER_SLOTS; j++) {
        if (!gb_cluster_node_has_slot(n, (unsigned)j))
            continue;
        int end = j;
        while (end + 1 < GB_CLUSTER_SLOTS && gb_cluster_node_has_slot(n, (unsigned)end + 1))
            end++;
        gb_reply_int(c, j);
        gb_reply_int(c, end);
        count += 2;
        j = end;
    }
    gb_reply_set_deferred(c, handle, count);
}

static void cluster_shards(gb_client *c, gb_cluster *cl)
{
    size_t handle = gb_reply_array_deferred(c);
    int64_t shards = 0;
    for (size_t i = 0; i < cl->nnodes; i++) {
        const gb_cluster_node *p = cl->nodes[i];
        if (!(p->flags & GB_CNODE_MASTER))
            continue;
        shards++;
        gb_reply_map(c, 2);
        gb_reply_cstr(c, "slots");
        reply_slot_pairs(c, p);
        gb_reply_cstr(c, "nodes");
        size_t nh = gb_reply_array_deferred(c);
        int64_t members = 1;
        reply_shard_node(c, cl, p);
        for (size_t k = 0; k < cl->nnodes; k++)
            if (strcmp(cl->nodes[k]->replica_of, p->name) == 0) {
                reply_shard_node(c, cl, cl->nodes[k]);
                members++;
            }
        gb_reply_set_deferred(c, nh, members);
    }
    gb_reply_set_deferred(c, handle, shards);
}

/* ---- slots ---- */

/* Redis's getSlotOrReply. */
static int slot_or_reply(gb_client *c, gb_slice arg)
{
    int64_t slot;
    if (!gb_slice2ll(arg, &slot) || slot < 0 || slot >= GB_CLUSTER_SLOTS) {
        gb_reply_error(c, "ERR Invalid or out of range slot");
        return -1;
    }
    return (int)slot;
}

/* Redis's checkSlotAssignmentsOrReply: each slot of start..end must be
 * free (adding) or taken (deleting), and named once in the call. */
static bool slots_assignable(gb_client *c, gb_cluster *cl, uint8_t *seen, bool del, int start, int end)
{
    for (int s = start; s <= end; s++) {
        if (del && !cl->slots[s]) {
            gb_reply_errorf(c, "ERR Slot %d is already unassigned", s);
            return false;
        }
        if (!del && cl->slots[s]) {
            gb_reply_errorf(c, "ERR Slot %d is already busy", s);
            return false;
        }
        if (seen[s]++ == 1) {
            gb_reply_errorf(c, "ERR Slot %d specified multiple times", s);
            return false;
        }
    }
    return true;
}

static void apply_slots(gb_client *c, gb_cluster *cl, const uint8_t *seen, bool del)
{
    for (int s = 0; s < GB_CLUSTER_SLOTS; s++) {
        if (!seen[s])
            continue;
        gb_cluster_set_importing(cl, (unsigned)s, NULL); /* now the real owner (or none) */
        if (del)
            gb_cluster_del_slot(cl, (unsigned)s);
        else
            gb_cluster_add_slot(cl, cl->myself, (unsigned)s);
    }
    gb_cluster_mode_changed(c->eng);
    gb_reply_ok(c);
}

/* ADDSLOTS / DELSLOTS slot [slot ...] */
static void cluster_slots_list(gb_client *c, gb_cluster *cl, int argc, gb_slice *argv, bool del)
{
    for (int j = 2; j < argc; j++)
        if (slot_or_reply(c, argv[j]) < 0)
            return;
    uint8_t *seen = gb_calloc(GB_CLUSTER_SLOTS, 1);
    bool ok = true;
    for (int j = 2; j < argc && ok; j++) {
        int s = slot_or_reply(c, argv[j]);
        ok = slots_assignable(c, cl, seen, del, s, s);
    }
    if (ok)
        apply_slots(c, cl, seen, del);
    gb_free(seen);
}

/* ADDSLOTSRANGE / DELSLOTSRANGE start end [start end ...] */
static void cluster_slots_ranges(gb_client *c, gb_cluster *cl, int argc, gb_slice *argv, bool del, const char *name)
{
    if (argc % 2 == 1) {
        gb_reply_wrong_arity(c, name);
        return;
    }
    uint8_t *seen = gb_calloc(GB_CLUSTER_SLOTS, 1);
    bool ok = true;
    for (int j = 2; j < argc && ok; j += 2) {
        int start = slot_or_reply(c, argv[j]);
        int end = start < 0 ? -1 : slot_or_reply(c, argv[j + 1]);
        if (start < 0 || end < 0) {
            ok = false;
        } else if (start > end) {
            gb_reply_errorf(c, "ERR start slot number %d is greater than end slot number %d", start, end);
            ok = false;
        } else {
            ok = slots_assignable(c, cl, seen, del, start, end);
        }
    }
    if (ok)
        apply_slots(c, cl, seen, del);
    gb_free(seen);
}

static void cluster_flushslots(gb_client *c, gb_cluster *cl)
{
    if (gb_db_size(&c->eng->dbs[0]) != 0) {
        gb_reply_error(c, "ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
        return;
    }
    for (unsigned s = 0; s < GB_CLUSTER_SLOTS; s++)
        if (cl->slots[s] == cl->myself)
            gb_cluster_del_slot(cl, s);
    gb_cluster_mode_changed(c->eng);
    gb_reply_ok(c);
}

static void cluster_countkeysinslot(gb_client *c, gb_slice arg)
{
    int64_t slot;
    if (!gb_arg_ll(c, arg, &slot))
        return;
    if (slot < 0 || slot >= GB_CLUSTER_SLOTS) {
        gb_reply_error(c, "ERR Invalid slot");
        return;
    }
    gb_reply_int(c, c->eng->dbs[0].slot_keys[slot]);
}

/* GETKEYSINSLOT: the first count keys of the slot's list, newest first as
 * in Redis 7.0 (engine/core/keyspace/slot_list.h). */
static void cluster_getkeysinslot(gb_client *c, gb_slice slot_arg, gb_slice count_arg)
{
    int64_t slot, max;
    if (!gb_arg_ll(c, slot_arg, &slot) || !gb_arg_ll(c, count_arg, &max))
        return;
    if (slot < 0 || slot >= GB_CLUSTER_SLOTS || max < 0) {
        gb_reply_error(c, "ERR Invalid slot or number of keys");
        return;
    }
    gb_db *db = &c->eng->dbs[0];
    int64_t max_n = GB_MIN(max, (int64_t)db->slot_keys[slot]);
    /* counted along the list, so the array's length is what follows */
    int64_t n = 0;
    for (gb_kv *kv = gb_slot_list_first(db, (unsigned)slot); n < max_n && kv != NULL; kv = gb_slot_list_next(kv))
        n++;
    gb_reply_array(c, n);
    gb_kv *kv = gb_slot_list_first(db, (unsigned)slot);
    for (int64_t i = 0; i < n; i++, kv = gb_slot_list_next(kv))
        gb_reply_slice(c, gb_kv_key(kv));
}

/* ---- epochs, nodes, the file ---- */

static void cluster_bumpepoch(gb_client *c, gb_cluster *cl)
{
    gb_cluster_node *me = cl->myself;
    bool bumped = gb_cluster_bump_epoch(cl);
    if (bumped) {
        gb_log(GB_LOG_WARNING, "New configEpoch set to %llu", (unsigned long long)me->config_epoch);
        gb_cluster_mode_changed_durably(c->eng);
    }
    char status[64];
    snprintf(status, sizeof status, "%s %llu", bumped ? "BUMPED" : "STILL", (unsigned long long)me->config_epoch);
    gb_reply_status(c, status);
}

static void cluster_set_config_epoch(gb_client *c, gb_cluster *cl, gb_slice arg)
{
    int64_t epoch;
    if (!gb_arg_ll(c, arg, &epoch))
        return;
    if (epoch < 0) {
        gb_reply_errorf(c, "ERR Invalid config epoch specified: %lld", (long long)epoch);
    } else if (cl->nnodes > 1) {
        gb_reply_error(c, "ERR The user can assign a config epoch only when the node does not know any other node.");
    } else if (cl->myself->config_epoch != 0) {
        gb_reply_error(c, "ERR Node config epoch is already non-zero");
    } else {
        cl->myself->config_epoch = (uint64_t)epoch;
        gb_log(GB_LOG_WARNING, "configEpoch set to %llu via CLUSTER SET-CONFIG-EPOCH", (unsigned long long)epoch);
        if (cl->current_epoch < (uint64_t)epoch)
            cl->current_epoch = (uint64_t)epoch;
        gb_cluster_mode_changed(c->eng);
        gb_reply_ok(c);
    }
}

/* The node named, or NULL after Redis's "Unknown node <name>". */
static gb_cluster_node *node_or_reply(gb_client *c, gb_cluster *cl, gb_slice name)
{
    gb_cluster_node *n = gb_cluster_lookup(cl, name.ptr, name.len);
    if (!n)
        gb_reply_errorf(c, "ERR Unknown node %.*s", (int)GB_MIN(name.len, 128), name.ptr);
    return n;
}

static void cluster_count_failure_reports(gb_client *c, gb_cluster *cl, gb_slice name)
{
    gb_cluster_node *n = node_or_reply(c, cl, name);
    if (n)
        gb_reply_int(c, (int64_t)gb_cluster_failure_reports(n, c->eng->now_ms, c->eng->cfg.cluster_node_timeout));
}

static void cluster_saveconfig(gb_client *c, gb_cluster *cl)
{
    char err[512];
    if (gb_cluster_save_config(cl, true, err, sizeof err) != 0)
        gb_reply_errorf(c, "ERR error saving the cluster node config: %s", err);
    else
        gb_reply_ok(c);
}

/* LINKS: the bus's links to and from known nodes (Redis's
 * addReplyClusterLinksDescription; the send buffer is libuv's queue). */
static void cluster_links(gb_client *c, gb_cluster *cl)
{
    gb_cluster_link_info *info = NULL;
    size_t n = cl->links ? cl->links(cl->hook_ctx, &info) : 0;
    gb_reply_array(c, (int64_t)n);
    for (size_t i = 0; i < n; i++) {
        gb_reply_map(c, 6);
        gb_reply_cstr(c, "direction");
        gb_reply_cstr(c, info[i].inbound ? "from" : "to");
        gb_reply_cstr(c, "node");
        gb_reply_bulk(c, info[i].node, GB_CLUSTER_NAMELEN);
        gb_reply_cstr(c, "create-time");
        gb_reply_int(c, info[i].ctime);
        gb_reply_cstr(c, "events");
        gb_reply_cstr(c, info[i].writing ? "rw" : "r");
        gb_reply_cstr(c, "send-buffer-allocated");
        gb_reply_int(c, (int64_t)info[i].send_used);
        gb_reply_cstr(c, "send-buffer-used");
        gb_reply_int(c, (int64_t)info[i].send_used);
    }
    gb_free(info);
}

/* ---- SETSLOT ---- */

static bool is_replica(const gb_cluster_node *n) { return (n->flags & GB_CNODE_SLAVE) != 0; }

/* The node argument of SETSLOT, a primary; NULL after the error (NODE
 * says "Unknown node", MIGRATING and IMPORTING "I don't know about"). */
static gb_cluster_node *setslot_target(gb_client *c, gb_cluster *cl, gb_slice name, bool for_node)
{
    gb_cluster_node *n = gb_cluster_lookup(cl, name.ptr, name.len);
    if (!n) {
        gb_slice shown = gb_arg_cstring(name);
        gb_reply_errorf(c, "ERR %s %.*s", for_node ? "Unknown node" : "I don't know about node",
                        (int)GB_MIN(shown.len, 128), shown.ptr);
        return NULL;
    }
    if (is_replica(n)) {
        gb_reply_error(c, "ERR Target node is not a master");
        return NULL;
    }
    return n;
}

/* SETSLOT slot NODE node: the slot is n's from now (Redis's rules: this
 * node may give a slot away only once it holds no key of it). */
static bool setslot_node(gb_client *c, gb_cluster *cl, int slot, gb_slice name)
{
    gb_cluster_node *n = setslot_target(c, cl, name, true);
    if (!n)
        return false;
    uint32_t keys = c->eng->dbs[0].slot_keys[slot];
    if (cl->slots[slot] == cl->myself && n != cl->myself && keys != 0) {
        gb_reply_errorf(c, "ERR Can't assign hashslot %d to a different node while I still hold keys for this hash slot.",
                        slot);
        return false;
    }
    if (keys == 0 && cl->migrating_to[slot])
        gb_cluster_set_migrating(cl, (unsigned)slot, NULL);
    bool was_mine = cl->slots[slot] == cl->myself;
    gb_cluster_del_slot(cl, (unsigned)slot);
    gb_cluster_add_slot(cl, n, (unsigned)slot);
    if (was_mine && n != cl->myself && cl->myself->nslots == 0 && c->eng->cfg.cluster_allow_replica_migration) {
        /* a primary left without slots follows the node that took the last one */
        gb_log(GB_LOG_WARNING, "Configuration change detected. Reconfiguring myself as a replica of %.40s", n->name);
        gb_cluster_set_replica_of(cl, cl->myself, n->name);
        gb_replica_set_master(c->eng, n->ip, n->port);
        gb_cluster_mode_changed_durably(c->eng);
    }
    if (n == cl->myself && cl->importing_from[slot]) {
        /* the import is done: a new epoch, so the others take this claim
         * over the old owner's (Redis's clusterBumpConfigEpochWithoutConsensus) */
        if (gb_cluster_bump_epoch(cl)) {
            gb_log(GB_LOG_WARNING, "configEpoch updated after importing slot %d", slot);
            gb_cluster_mode_changed_durably(c->eng);
        }
        gb_cluster_set_importing(cl, (unsigned)slot, NULL);
    }
    return true;
}

static void cluster_setslot(gb_client *c, gb_cluster *cl, int argc, gb_slice *argv)
{
    if (is_replica(cl->myself)) {
        gb_reply_error(c, "ERR Please use SETSLOT only with masters.");
        return;
    }
    int slot = slot_or_reply(c, argv[2]);
    if (slot < 0)
        return;
    gb_slice action = argv[3];
    if (gb_slice_ieq(action, "migrating") && argc == 5) {
        if (cl->slots[slot] != cl->myself) {
            gb_reply_errorf(c, "ERR I'm not the owner of hash slot %u", (unsigned)slot);
            return;
        }
        gb_cluster_node *n = setslot_target(c, cl, argv[4], false);
        if (!n)
            return;
        gb_cluster_set_migrating(cl, (unsigned)slot, n);
    } else if (gb_slice_ieq(action, "importing") && argc == 5) {
        if (cl->slots[slot] == cl->myself) {
            gb_reply_errorf(c, "ERR I'm already the owner of hash slot %u", (unsigned)slot);
            return;
        }
        gb_cluster_node *n = setslot_target(c, cl, argv[4], false);
        if (!n)
            return;
        gb_cluster_set_importing(cl, (unsigned)slot, n);
    } else if (gb_slice_ieq(action, "stable") && argc == 4) {
        gb_cluster_set_importing(cl, (unsigned)slot, NULL);
        gb_cluster_set_migrating(cl, (unsigned)slot, NULL);
    } else if (gb_slice_ieq(action, "node") && argc == 5) {
        if (!setslot_node(c, cl, slot, argv[4]))
            return;
    } else {
        gb_reply_error(c, "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
        return;
    }
    gb_cluster_mode_changed(c->eng);
    gb_reply_ok(c);
}

static void cluster_forget(gb_client *c, gb_cluster *cl, gb_slice name)
{
    gb_cluster_node *n = node_or_reply(c, cl, name);
    if (!n)
        return;
    if (n == cl->myself) {
        gb_reply_error(c, "ERR I tried hard but I can't forget myself...");
        return;
    }
    if (is_replica(cl->myself) && strcmp(cl->myself->replica_of, n->name) == 0) {
        gb_reply_error(c, "ERR Can't forget my master!");
        return;
    }
    gb_cluster_forget(cl, n, c->eng->now_ms);
    gb_cluster_mode_changed(c->eng);
    gb_reply_ok(c);
}

static void cluster_reset(gb_client *c, gb_cluster *cl, int argc, gb_slice *argv)
{
    bool hard = false;
    if (argc == 3) {
        if (gb_slice_ieq(argv[2], "hard")) {
            hard = true;
        } else if (!gb_slice_ieq(argv[2], "soft")) {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    gb_engine *eng = c->eng;
    if (!is_replica(cl->myself) && gb_db_size(c->db) != 0) {
        gb_reply_error(c, "ERR CLUSTER RESET can't be called with master nodes containing keys");
        return;
    }
    if (is_replica(cl->myself)) {
        /* Redis's clusterReset: a replica becomes an empty primary (its
         * emptyData counts no change and propagates nothing). */
        gb_cluster_set_primary(cl->myself);
        gb_replica_unset_master(eng);
        uint64_t dirty = eng->stats.dirty;
        for (int i = 0; i < eng->ndbs; i++)
            gb_keys_flushdb(&eng->dbs[i], false);
        eng->stats.dirty = dirty;
        gb_tracking_invalidate_flush(eng);
    }
    gb_cluster_mode_end_manual_failover(eng);
    gb_cluster_reset(cl, hard);
    gb_cluster_mode_changed_durably(c->eng);
    gb_reply_ok(c);
}

/* REPLICATE node: this node follows n (Redis's clusterSetMaster), through
 * the replication link (engine/core/replication/replica.h). */
static void cluster_replicate(gb_client *c, gb_cluster *cl, gb_slice name)
{
    gb_cluster_node *n = node_or_reply(c, cl, name);
    if (!n)
        return;
    gb_cluster_node *me = cl->myself;
    if (n == me) {
        gb_reply_error(c, "ERR Can't replicate myself");
        return;
    }
    if (is_replica(n)) {
        gb_reply_error(c, "ERR I can only replicate a master, not a replica.");
        return;
    }
    if (!is_replica(me) && (me->nslots != 0 || gb_db_size(&c->eng->dbs[0]) != 0)) {
        gb_reply_error(c, "ERR To set a master the node must be empty and without assigned slots.");
        return;
    }
    gb_cluster_set_replica_of(cl, me, n->name);
    me->flags &= ~(uint32_t)GB_CNODE_MIGRATE_TO;
    gb_replica_set_master(c->eng, n->ip, n->port);
    gb_log(GB_LOG_NOTICE, "Configured as a replica of %.40s (%s:%d)", n->name, n->ip, n->port);
    gb_cluster_mode_changed(c->eng);
    gb_reply_ok(c);
}

/* REPLICAS / SLAVES node: its replicas' CLUSTER NODES lines. */
static void cluster_replicas(gb_client *c, gb_cluster *cl, gb_slice name)
{
    gb_cluster_node *n = node_or_reply(c, cl, name);
    if (!n)
        return;
    if (is_replica(n)) {
        gb_reply_error(c, "ERR The specified node is not a master");
        return;
    }
    size_t handle = gb_reply_array_deferred(c);
    int64_t count = 0;
    for (size_t i = 0; i < cl->nnodes; i++) {
        const gb_cluster_node *r = cl->nodes[i];
        if (!is_replica(r) || strcmp(r->replica_of, n->name) != 0)
            continue;
        gb_strbuf b = {0};
        gb_cluster_describe_node(cl, r, gb_cluster_mode_shows_pport(c), &b);
        gb_reply_bulk(c, gb_strbuf_cstr(&b), b.len);
        gb_strbuf_free(&b);
        count++;
    }
    gb_reply_set_deferred(c, handle, count);
}

/* Redis's CLUSTER_MF_TIMEOUT. */
#define MANUAL_FAILOVER_MS 5000

/* FAILOVER [FORCE|TAKEOVER] on a replica: the bus carries it out
 * (transport/cluster: MFSTART to the primary and the wait for its offset,
 * then an election with forced acks; TAKEOVER: no election). */
static void cluster_failover(gb_client *c, gb_cluster *cl, int argc, gb_slice *argv)
{
    bool force = false, takeover = false;
    if (argc == 3) {
        if (gb_slice_ieq(argv[2], "force")) {
            force = true;
        } else if (gb_slice_ieq(argv[2], "takeover")) {
            force = takeover = true;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return;
        }
    }
    gb_cluster_node *me = cl->myself;
    gb_cluster_node *primary = is_replica(me) ? gb_cluster_lookup(cl, me->replica_of, GB_CLUSTER_NAMELEN) : NULL;
    if (!is_replica(me)) {
        gb_reply_error(c, "ERR You should send CLUSTER FAILOVER to a replica");
        return;
    }
    if (!primary) {
        gb_reply_error(c, "ERR I'm a replica but my master is unknown to me");
        return;
    }
    if (!force && ((primary->flags & GB_CNODE_FAIL) || !primary->link)) {
        gb_reply_error(c, "ERR Master is down or failed, please use CLUSTER FAILOVER FORCE");
        return;
    }
    cl->mf_end = c->eng->now_ms + MANUAL_FAILOVER_MS;
    cl->mf_primary_offset = -1;
    cl->mf_can_start = force;
    cl->mf_takeover = takeover;
    gb_log(GB_LOG_WARNING, "%s", takeover ? "Taking over the master (user request)."
                                 : force  ? "Forced failover user request accepted."
                                          : "Manual failover user request accepted.");
    gb_reply_ok(c);
}

/* Redis's addReplySubcommandSyntaxError. */
static void reply_subcommand_syntax(gb_client *c, gb_slice sub)
{
    gb_reply_errorf(c, "ERR unknown subcommand or wrong number of arguments for '%.*s'. Try CLUSTER HELP.",
                    (int)GB_MIN(sub.len, 128), sub.ptr);
}

/* MEET ip port [bus-port]: the bus connects and sends a MEET (transport/cluster). */
static void cluster_meet(gb_client *c, gb_cluster *cl, int argc, gb_slice *argv)
{
    if (argc > 5) {
        reply_subcommand_syntax(c, argv[1]);
        return;
    }
    gb_slice ip = gb_arg_cstring(argv[2]), portarg = gb_arg_cstring(argv[3]);
    int64_t port, cport;
    if (!gb_slice2ll(argv[3], &port)) {
        gb_reply_errorf(c, "ERR Invalid TCP base port specified: %.*s", (int)GB_MIN(portarg.len, 128), portarg.ptr);
        return;
    }
    if (argc == 5) {
        gb_slice b = gb_arg_cstring(argv[4]);
        if (!gb_slice2ll(argv[4], &cport)) {
            gb_reply_errorf(c, "ERR Invalid TCP bus port specified: %.*s", (int)GB_MIN(b.len, 128), b.ptr);
            return;
        }
    } else {
        /* any 64-bit port parses; one the handshake refuses keeps its bus
         * port from overflowing */
        cport = port > INT64_MAX - 10000 ? port : port + 10000;
    }
    char host[128];
    snprintf(host, sizeof host, "%.*s", (int)GB_MIN(ip.len, sizeof host - 1), ip.ptr);
    bool invalid;
    gb_cluster_start_handshake(cl, host, port, cport, c->eng->now_ms, &invalid);
    if (invalid)
        gb_reply_errorf(c, "ERR Invalid node address specified: %.*s:%.*s", (int)GB_MIN(ip.len, 128), ip.ptr,
                        (int)GB_MIN(portarg.len, 128), portarg.ptr);
    else
        gb_reply_ok(c);
}

static void cluster_proc(gb_client *c, int argc, gb_slice *argv)
{
    gb_cluster *cl = cluster_or_reply(c);
    if (!cl)
        return;
    gb_cluster_mode_refresh_myself(c->eng);
    gb_slice sub = argv[1];
    if (gb_slice_ieq(sub, "help"))
        cluster_help(c);
    else if (gb_slice_ieq(sub, "info"))
        cluster_info(c, cl);
    else if (gb_slice_ieq(sub, "myid"))
        gb_reply_bulk(c, cl->myself->name, GB_CLUSTER_NAMELEN);
    else if (gb_slice_ieq(sub, "nodes"))
        cluster_nodes(c, cl);
    else if (gb_slice_ieq(sub, "slots"))
        cluster_slots(c, cl);
    else if (gb_slice_ieq(sub, "shards"))
        cluster_shards(c, cl);
    else if (gb_slice_ieq(sub, "keyslot"))
        gb_reply_int(c, gb_keyslot(argv[2].ptr, argv[2].len));
    else if (gb_slice_ieq(sub, "addslots") || gb_slice_ieq(sub, "delslots"))
        cluster_slots_list(c, cl, argc, argv, gb_slice_ieq(sub, "delslots"));
    else if (gb_slice_ieq(sub, "addslotsrange"))
        cluster_slots_ranges(c, cl, argc, argv, false, "cluster|addslotsrange");
    else if (gb_slice_ieq(sub, "delslotsrange"))
        cluster_slots_ranges(c, cl, argc, argv, true, "cluster|delslotsrange");
    else if (gb_slice_ieq(sub, "flushslots"))
        cluster_flushslots(c, cl);
    else if (gb_slice_ieq(sub, "countkeysinslot"))
        cluster_countkeysinslot(c, argv[2]);
    else if (gb_slice_ieq(sub, "getkeysinslot"))
        cluster_getkeysinslot(c, argv[2], argv[3]);
    else if (gb_slice_ieq(sub, "bumpepoch"))
        cluster_bumpepoch(c, cl);
    else if (gb_slice_ieq(sub, "set-config-epoch"))
        cluster_set_config_epoch(c, cl, argv[2]);
    else if (gb_slice_ieq(sub, "count-failure-reports"))
        cluster_count_failure_reports(c, cl, argv[2]);
    else if (gb_slice_ieq(sub, "saveconfig"))
        cluster_saveconfig(c, cl);
    else if (gb_slice_ieq(sub, "failover") && argc <= 3)
        cluster_failover(c, cl, argc, argv);
    else if (gb_slice_ieq(sub, "failover"))
        reply_subcommand_syntax(c, sub);
    else if (gb_slice_ieq(sub, "replicate"))
        cluster_replicate(c, cl, argv[2]);
    else if (gb_slice_ieq(sub, "replicas") || gb_slice_ieq(sub, "slaves"))
        cluster_replicas(c, cl, argv[2]);
    else if (gb_slice_ieq(sub, "forget"))
        cluster_forget(c, cl, argv[2]);
    else if (gb_slice_ieq(sub, "reset") && argc <= 3)
        cluster_reset(c, cl, argc, argv);
    else if (gb_slice_ieq(sub, "reset"))
        reply_subcommand_syntax(c, sub);
    else if (gb_slice_ieq(sub, "setslot"))
        cluster_setslot(c, cl, argc, argv);
    else if (gb_slice_ieq(sub, "meet"))
        cluster_meet(c, cl, argc, argv);
    else if (gb_slice_ieq(sub, "links"))
        cluster_links(c, cl);
    else
        gb_reply_unknown_subcommand(c, sub, "cluster");
}

/* ---- the connection's cluster flags ---- */

static void cmd_asking(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc, (void)argv;
    if (!cluster_or_reply(c))
        return;
    c->flags |= GB_CLIENT_ASKING;
    gb_reply_ok(c);
}

static void cmd_readonly(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc, (void)argv;
    if (!cluster_or_reply(c))
        return;
    c->flags |= GB_CLIENT_READONLY;
    gb_reply_ok(c);
}

static void cmd_readwrite(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc, (void)argv;
    if (!cluster_or_reply(c))
        return;
    c->flags &= ~(uint32_t)GB_CLIENT_READONLY;
    gb_reply_ok(c);
}

GB_DEFINE_COMMANDS(cluster,
    {"cluster", cluster_proc, 0,
     "addslots addslotsrange bumpepoch count-failure-reports countkeysinslot delslots delslotsrange failover "
     "flushslots forget getkeysinslot help info keyslot links meet myid nodes replicas replicate reset saveconfig "
     "set-config-epoch setslot shards slaves slots"},
    {"asking", cmd_asking},
    {"readonly", cmd_readonly},
    {"readwrite", cmd_readwrite});
