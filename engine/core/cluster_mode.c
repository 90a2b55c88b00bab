#include "engine/core/cluster_mode.h"

#include <stdio.h>
#include <string.h>

#include "engine/base/mem.h"
#include "engine/core/keyspace/db.h"
#include "engine/core/pubsub/pubsub.h"
#include "engine/core/engine.h"
#include "engine/core/request/blocking.h"
#include "engine/core/request/multi.h"

/* ---- life ---- */

int gb_cluster_mode_base_port(const gb_settings *cfg) { return cfg->tls_cluster ? cfg->tls_port : cfg->port; }

int gb_cluster_mode_bus_port(const gb_settings *cfg)
{
    return cfg->cluster_port ? cfg->cluster_port : gb_cluster_mode_base_port(cfg) + 10000;
}

/* Redis 7.0's deriveAnnouncedPorts: with tls-cluster the client port is
 * the TLS one and pport the plaintext one (0 without tls-cluster). */
static void announced_ports(const gb_settings *cfg, int *port, int *pport, int *cport)
{
    *port = gb_cluster_mode_base_port(cfg);
    *pport = cfg->tls_cluster ? cfg->port : 0;
    *cport = cfg->cluster_announce_bus_port ? cfg->cluster_announce_bus_port : gb_cluster_mode_bus_port(cfg);
    if (cfg->tls_cluster && cfg->cluster_announce_tls_port) {
        *port = cfg->cluster_announce_tls_port;
        *pport = cfg->cluster_announce_port;
    } else if (cfg->cluster_announce_port) {
        *port = cfg->cluster_announce_port;
    }
}

bool gb_cluster_mode_shows_pport(const gb_client *c) { return c->eng->cfg.tls_cluster && !(c->flags & GB_CLIENT_TLS); }

int gb_cluster_mode_client_port(const gb_client *c, const gb_cluster_node *n)
{
    return gb_cluster_mode_shows_pport(c) && n->pport ? n->pport : n->port;
}

void gb_cluster_mode_refresh_myself(gb_engine *eng)
{
    gb_cluster_node *me = eng->cluster->myself;
    const gb_settings *cfg = &eng->cfg;
    announced_ports(cfg, &me->port, &me->pport, &me->cport);
    if (cfg->cluster_announce_ip && cfg->cluster_announce_ip[0])
        snprintf(me->ip, sizeof me->ip, "%s", cfg->cluster_announce_ip);
    const char *host = cfg->cluster_announce_hostname ? cfg->cluster_announce_hostname : "";
    if (strcmp(me->hostname, host) != 0) {
        gb_free(me->hostname);
        me->hostname = gb_strdup(host);
    }
}

static char *config_path(const gb_settings *cfg)
{
    const char *file = cfg->cluster_config_file;
    size_t n = strlen(cfg->dir) + strlen(file) + 2;
    char *path = gb_malloc(n);
    if (file[0] == '/')
        snprintf(path, n, "%s", file);
    else
        snprintf(path, n, "%s/%s", cfg->dir, file);
    return path;
}

int gb_cluster_mode_start(gb_engine *eng, char *err, size_t errlen)
{
    const gb_settings *cfg = &eng->cfg;
    if (!cfg->cluster_enabled)
        return 0;
    if (!cfg->cluster_port && gb_cluster_mode_base_port(cfg) > 65535 - 10000) {
        /* Redis's check: the bus port would not exist */
        snprintf(err, errlen, "Redis port number too high. Cluster communication port is 10,000 port numbers higher "
                              "than your Redis port. Your Redis port number must be 55535 or less.");
        return -1;
    }
    char *path = config_path(cfg);
    eng->cluster = gb_cluster_new(gb_cluster_mode_base_port(cfg), gb_cluster_mode_base_port(cfg) + 10000, path);
    gb_free(path);
    if (gb_cluster_lock_config(eng->cluster, err, errlen) != 0)
        return -1;
    int loaded = gb_cluster_load_config(eng->cluster, err, errlen);
    if (loaded < 0)
        return -1;
    gb_cluster_mode_refresh_myself(eng);
    if (loaded == 1) {
        gb_log(GB_LOG_NOTICE, "No cluster configuration found, I'm %s", eng->cluster->myself->name);
        if (gb_cluster_save_config(eng->cluster, true, err, errlen) != 0)
            return -1;
    } else {
        gb_log(GB_LOG_NOTICE, "Node configuration loaded, I'm %.40s", eng->cluster->myself->name);
    }
    gb_db_count_slots(&eng->dbs[0]);
    return 0;
}

static void update_state(gb_engine *eng)
{
    gb_cluster *cl = eng->cluster;
    cl->require_full_coverage = eng->cfg.cluster_require_full_coverage != 0;
    cl->allow_reads_when_down = eng->cfg.cluster_allow_reads_when_down != 0;
    int before = cl->state;
    gb_cluster_update_state(cl, (int64_t)eng->now_mono_ms, eng->cfg.cluster_node_timeout);
    if (cl->state != before)
        gb_log(GB_LOG_NOTICE, "Cluster state changed: %s", cl->state == GB_CLUSTER_OK ? "ok" : "fail");
}

void gb_cluster_mode_cron(gb_engine *eng)
{
    gb_cluster_mode_refresh_myself(eng);
    update_state(eng);
}

void gb_cluster_mode_changed(gb_engine *eng)
{
    update_state(eng);
    eng->cluster->save_owed |= GB_CLUSTER_SAVE;
}

void gb_cluster_mode_changed_durably(gb_engine *eng)
{
    gb_cluster_mode_changed(eng);
    eng->cluster->save_owed |= GB_CLUSTER_SAVE_DURABLE;
}

void gb_cluster_mode_end_manual_failover(gb_engine *eng)
{
    gb_cluster *cl = eng->cluster;
    if (cl->mf_replica[0])
        gb_pause_for(eng, GB_PAUSE_FOR_FAILOVER, false);
    cl->mf_end = 0;
    cl->mf_can_start = cl->mf_takeover = false;
    cl->mf_primary_offset = -1;
    cl->mf_replica[0] = '\0';
}

void gb_cluster_mode_before_replies(gb_engine *eng)
{
    gb_cluster *cl = eng->cluster;
    if (cl->any_shard_slot_lost) {
        cl->any_shard_slot_lost = false;
        gb_pubsub_drop_shard_slots(eng, cl->shard_slots_lost);
        memset(cl->shard_slots_lost, 0, sizeof cl->shard_slots_lost);
    }
    if (!cl->save_owed)
        return;
    bool durable = (cl->save_owed & GB_CLUSTER_SAVE_DURABLE) != 0;
    cl->save_owed = 0;
    char err[512];
    if (gb_cluster_save_config(cl, durable, err, sizeof err) != 0)
        gb_log(GB_LOG_WARNING, "%s", err);
}

/* ---- redirection ---- */

enum redirect {
    REDIR_NONE,
    REDIR_CROSS_SLOT,
    REDIR_UNSTABLE,
    REDIR_DOWN_STATE,
    REDIR_DOWN_RO_STATE,
    REDIR_DOWN_UNBOUND,
    REDIR_MOVED,
    REDIR_ASK,
};

/* What the keys of a call (or of a whole transaction) say, gathered as
 * Redis's getNodeByQuery walks them. */
typedef struct slot_query {
    gb_slice first;          /* the first key; .ptr NULL: none yet */
    int slot;
    gb_cluster_node *owner;  /* the first key's slot's node */
    bool multiple_keys;      /* another key than the first, in the same slot */
    bool migrating, importing;
    int missing, existing;   /* keys absent / present here, counted while the slot is open */
} slot_query;

static bool is_shard_pubsub(const gb_command *cmd)
{
    const char *n = cmd->fullname;
    return strcmp(n, "spublish") == 0 || strcmp(n, "ssubscribe") == 0 || strcmp(n, "sunsubscribe") == 0;
}

/* Whether key is there for a migration's question, expired or not
 * deleted by asking (Redis's LOOKUP_NOEXPIRE): a command refused with ASK
 * or TRYAGAIN changes nothing. */
static bool key_present(gb_engine *eng, gb_slice key)
{
    gb_kv *kv = gb_db_find_stored(&eng->dbs[0], key);
    return kv && !gb_kv_expired_at(kv, eng->now_ms);
}

/* One command's keys into q; REDIR_NONE or the error found. */
static enum redirect query_command(gb_engine *eng, const gb_command *cmd, int argc, const gb_slice *argv,
                                   slot_query *q)
{
    gb_cluster *cl = eng->cluster;
    gb_keys_result r;
    int n = is_shard_pubsub(cmd) ? gb_command_keys_and_channels(cmd->meta, argc, argv, &r)
                                 : gb_command_keys(cmd->meta, argc, argv, &r);
    enum redirect verdict = REDIR_NONE;
    for (int j = 0; j < n && verdict == REDIR_NONE; j++) {
        gb_slice key = argv[r.keys[j].pos];
        int slot = (int)gb_keyslot(key.ptr, key.len);
        if (!q->first.ptr) {
            q->first = key;
            q->slot = slot;
            q->owner = cl->slots[slot];
            if (!q->owner) {
                verdict = REDIR_DOWN_UNBOUND;
                break;
            }
            if (q->owner == cl->myself && cl->migrating_to[slot])
                q->migrating = true;
            else if (cl->importing_from[slot])
                q->importing = true;
        } else if (q->first.len != key.len || memcmp(q->first.ptr, key.ptr, key.len) != 0) {
            if (slot != q->slot) {
                verdict = REDIR_CROSS_SLOT;
                break;
            }
            q->multiple_keys = true;
        }
        /* A shard channel is served by the old owner until the slot
         * moves: its presence is not a question. */
        if ((q->migrating || q->importing) && !is_shard_pubsub(cmd)) {
            if (key_present(eng, key))
                q->existing++;
            else
                q->missing++;
        }
    }
    gb_keys_result_free(&r);
    return verdict;
}

static bool is_exec(const gb_command *cmd) { return cmd->def->proc == gb_multi_exec_proc; }

bool gb_cluster_checks_command(const gb_command *cmd)
{
    return (cmd->flags & GB_CMD_MOVABLEKEYS) || cmd->meta->nkey_specs != 0 || is_exec(cmd);
}

/* Redis's getNodeByQuery: the node that serves the call, or NULL with
 * *why set. */
static gb_cluster_node *node_for_call(gb_client *c, const gb_command *cmd, uint32_t flags, int argc, gb_slice *argv,
                                      int *slot, enum redirect *why)
{
    gb_engine *eng = c->eng;
    gb_cluster *cl = eng->cluster;
    slot_query q = {0};
    *why = REDIR_NONE;
    bool shard_pubsub = is_shard_pubsub(cmd);
    if (is_exec(cmd)) {
        if (!(c->flags & GB_CLIENT_MULTI))
            return cl->myself; /* EXEC answers its own error */
        for (int i = 0; i < c->mcount && *why == REDIR_NONE; i++)
            *why = query_command(eng, c->mqueue[i].cmd, c->mqueue[i].argc, c->mqueue[i].argv, &q);
    } else {
        *why = query_command(eng, cmd, argc, argv, &q);
    }
    if (*why != REDIR_NONE)
        return NULL;
    if (!q.owner)
        return cl->myself; /* no key at all */
    if (cl->state != GB_CLUSTER_OK) {
        if (shard_pubsub) {
            if (!eng->cfg.cluster_allow_pubsubshard_when_down) {
                *why = REDIR_DOWN_STATE;
                return NULL;
            }
        } else if (!cl->allow_reads_when_down) {
            *why = REDIR_DOWN_STATE;
            return NULL;
        } else if (flags & GB_CMD_WRITE) {
            *why = REDIR_DOWN_RO_STATE;
            return NULL;
        }
    }
    *slot = q.slot;
    if ((q.migrating || q.importing) && strcmp(cmd->fullname, "migrate") == 0)
        return cl->myself;
    if (q.migrating && q.missing) {
        *why = q.existing ? REDIR_UNSTABLE : REDIR_ASK;
        return q.existing ? NULL : cl->migrating_to[q.slot];
    }
    if (q.importing && ((c->flags & GB_CLIENT_ASKING) || (cmd->meta->flags & GB_CMDF_ASKING))) {
        if (q.multiple_keys && q.missing) {
            *why = REDIR_UNSTABLE;
            return NULL;
        }
        return cl->myself;
    }
    bool writes = (flags & GB_CMD_WRITE) || (is_exec(cmd) && (c->mcmd_flags & GB_CMD_WRITE));
    gb_cluster_node *me = cl->myself;
    if (((c->flags & GB_CLIENT_READONLY) || shard_pubsub) && !writes && (me->flags & GB_CNODE_SLAVE) &&
        strcmp(me->replica_of, q.owner->name) == 0)
        return me;
    if (q.owner != me)
        *why = REDIR_MOVED;
    return q.owner;
}

const char *gb_cluster_script_check(gb_client *c, gb_client *caller, const gb_command *cmd, uint32_t flags, int argc,
                                    gb_slice *argv, int *slot, bool cross_slot)
{
    const uint32_t copied = GB_CLIENT_READONLY | GB_CLIENT_ASKING;
    c->flags = (c->flags & ~copied) | (caller->flags & copied);
    int here = -1;
    enum redirect why;
    gb_cluster_node *n = node_for_call(c, cmd, flags, argc, argv, &here, &why);
    if (n != c->eng->cluster->myself || why != REDIR_NONE) {
        if (why == REDIR_DOWN_RO_STATE)
            return "ERR Script attempted to execute a write command while the cluster is down and readonly";
        if (why == REDIR_DOWN_STATE)
            return "ERR Script attempted to execute a command while the cluster is down";
        return "ERR Script attempted to access a non local key in a cluster node";
    }
    if (here != -1 && !cross_slot) {
        if (*slot == -1)
            *slot = here;
        else if (*slot != here)
            return "ERR Script attempted to access keys that do not hash to the same slot";
    }
    return NULL;
}

const char *gb_cluster_mode_endpoint(const gb_engine *eng, const gb_cluster_node *n)
{
    switch (eng->cfg.cluster_preferred_endpoint_type) {
    case GB_ENDPOINT_HOSTNAME:
        return n->hostname[0] ? n->hostname : "?";
    case GB_ENDPOINT_UNKNOWN:
        return "";
    default:
        return n->ip;
    }
}

const char *gb_cluster_blocked_redirection(gb_client *c, gb_slice key, bool writes, char *buf, size_t buflen)
{
    gb_cluster *cl = c->eng->cluster;
    /* Down: a write that would serve the client may never come, even where
     * reads are allowed when down. */
    if (cl->state != GB_CLUSTER_OK)
        return "CLUSTERDOWN The cluster is down";
    int slot = (int)gb_keyslot(key.ptr, key.len);
    gb_cluster_node *owner = cl->slots[slot], *me = cl->myself;
    if ((c->flags & GB_CLIENT_READONLY) && !writes && owner && (me->flags & GB_CNODE_SLAVE) &&
        strcmp(me->replica_of, owner->name) == 0)
        owner = me; /* a READONLY reader of this replica's primary's slot */
    if (owner == me || cl->importing_from[slot])
        return NULL;
    if (!owner)
        return "CLUSTERDOWN Hash slot not served";
    snprintf(buf, buflen, "MOVED %d %s:%d", slot, gb_cluster_mode_endpoint(c->eng, owner),
             gb_cluster_mode_client_port(c, owner));
    return buf;
}

const char *gb_cluster_redirection(gb_client *c, const gb_command *cmd, uint32_t flags, int argc, gb_slice *argv,
                                   char *buf, size_t buflen)
{
    int slot = -1;
    enum redirect why;
    gb_cluster_node *n = node_for_call(c, cmd, flags, argc, argv, &slot, &why);
    c->slot = slot;
    if (n == c->eng->cluster->myself && why == REDIR_NONE)
        return NULL;
    switch (why) {
    case REDIR_CROSS_SLOT:
        return "CROSSSLOT Keys in request don't hash to the same slot";
    case REDIR_UNSTABLE:
        return "TRYAGAIN Multiple keys request during rehashing of slot";
    case REDIR_DOWN_STATE:
        return "CLUSTERDOWN The cluster is down";
    case REDIR_DOWN_RO_STATE:
        return "CLUSTERDOWN The cluster is down and only accepts read commands";
    case REDIR_DOWN_UNBOUND:
        return "CLUSTERDOWN Hash slot not served";
    default:
        snprintf(buf, buflen, "%s %d %s:%d", why == REDIR_ASK ? "ASK" : "MOVED", slot,
                 gb_cluster_mode_endpoint(c->eng, n), gb_cluster_mode_client_port(c, n));
        return buf;
    }
}
