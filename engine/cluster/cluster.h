/*
 * Redis Cluster's state as one node sees it (Redis 7.0's clusterState):
 * this node, the nodes it knows by their 40-hex names, the owner of each
 * of the 16384 hash slots, the epochs, and nodes.conf, which keeps all of
 * it across restarts in Redis's own line format (so a file either server
 * wrote loads in the other).
 *
 * The engine holds one only with cluster-enabled yes (gb_engine.cluster);
 * otherwise nothing here runs. What a node knows of other nodes comes from
 * nodes.conf and, once the cluster bus exists, from its messages.
 */
#ifndef GB_ENGINE_CLUSTER_CLUSTER_H
#define GB_ENGINE_CLUSTER_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/cluster/keyslot.h"

#define GB_CLUSTER_NAMELEN 40
#define GB_CLUSTER_IPLEN 46 /* Redis's NET_IP_STR_LEN */

/* Node flags, Redis's CLUSTER_NODE_* values (the bus carries them). */
enum {
    GB_CNODE_MASTER = 1u << 0,
    GB_CNODE_SLAVE = 1u << 1,
    GB_CNODE_PFAIL = 1u << 2,
    GB_CNODE_FAIL = 1u << 3,
    GB_CNODE_MYSELF = 1u << 4,
    GB_CNODE_HANDSHAKE = 1u << 5,
    GB_CNODE_NOADDR = 1u << 6,
    GB_CNODE_MEET = 1u << 7,
    GB_CNODE_MIGRATE_TO = 1u << 8,
    GB_CNODE_NOFAILOVER = 1u << 9,
};

typedef struct gb_cluster_node {
    char name[GB_CLUSTER_NAMELEN + 1];
    uint32_t flags;
    uint64_t config_epoch;
    char ip[GB_CLUSTER_IPLEN];
    char *hostname; /* "" when none */
    int port, cport;
    char replica_of[GB_CLUSTER_NAMELEN + 1]; /* "" for a primary */
    int64_t ping_sent, pong_received;       /* ms (wall clock, as Redis's); 0: none pending / none yet */
    int64_t ctime;                          /* created (ms): a handshake's age */
    int64_t data_received;                  /* ms: the last message from it */
    int64_t fail_time;                      /* ms: when it was marked FAIL */
    int64_t voted_time;                     /* ms: when this node last voted for a replica of it */
    uint64_t repl_offset;                   /* from its last message */
    /* replica migration (transport/cluster/bus.c): how many nodes name it
     * their primary (failing ones too), and since when it has been a
     * primary that has (or had) replicas but no working one; 0: it is not */
    int listed_replicas;
    int64_t orphaned_time;
    int pport;
    void *link;                             /* the bus's outbound link to it (transport/cluster), or NULL */
    /* primaries that said this node is failing (PFAIL or FAIL in their
     * gossip), by name, with when they last said it */
    struct gb_cluster_report {
        char reporter[GB_CLUSTER_NAMELEN];
        int64_t time;
    } *reports;
    size_t nreports;
    uint8_t slots[GB_CLUSTER_SLOTS / 8];
    int nslots;
} gb_cluster_node;

enum gb_cluster_health { GB_CLUSTER_FAIL = 0, GB_CLUSTER_OK = 1 };

/* One bus link as CLUSTER LINKS shows it. */
typedef struct gb_cluster_link_info {
    bool inbound;                   /* "from" the node, else "to" it */
    char node[GB_CLUSTER_NAMELEN];
    int64_t ctime;                  /* ms */
    bool writing;                   /* bytes wait to be written: events "rw", else "r" */
    size_t send_used;               /* those bytes */
} gb_cluster_link_info;

typedef struct gb_cluster {
    gb_cluster_node *myself;
    gb_cluster_node **nodes; /* myself among them */
    size_t nnodes, nodecap;
    gb_cluster_node *slots[GB_CLUSTER_SLOTS]; /* owner of each slot, NULL: unassigned */
    /* CLUSTER SETSLOT's open slots: where a slot this node serves is
     * going, where a slot it is taking comes from; NULL: stable. Read
     * freely; write only through gb_cluster_set_migrating/_importing and
     * gb_cluster_close_open_slots, which keep nopen (the non-NULL entries
     * of both) so that nodes.conf saves skip the scan when none is open. */
    gb_cluster_node *migrating_to[GB_CLUSTER_SLOTS];
    gb_cluster_node *importing_from[GB_CLUSTER_SLOTS];
    unsigned nopen;
    /* slots whose owner's messages stopped claiming them (Redis 7.0's
     * owner_not_claiming_slot): another node may take them at any epoch */
    uint8_t not_claimed[GB_CLUSTER_SLOTS / 8];
    /* Slots deleted from this node or from its primary since the engine
     * last looked (gb_cluster_del_slot sets them): their shard channels'
     * subscribers are to be unsubscribed (Redis 7.0's removeChannelsInSlot
     * in clusterDelSlot). any_shard_slot_lost: some bit is set. */
    uint8_t shard_slots_lost[GB_CLUSTER_SLOTS / 8];
    bool any_shard_slot_lost;
    uint64_t current_epoch, last_vote_epoch;
    int state;                 /* enum gb_cluster_health */
    int size;                  /* primaries serving slots, as the last health check counted them (1 at first) */
    int64_t started_ms;        /* Redis's first clusterUpdateState call: a primary waits before OK */
    int64_t minority_ms;       /* when this node last saw too few primaries reachable */
    uint64_t messages_sent, messages_received;
    uint64_t links_buffer_limit_exceeded; /* links closed for cluster-link-sendbuf-limit */
    char *config_path;         /* nodes.conf: the directory joined with cluster-config-file */
    int config_fd;             /* config_path kept open for in-place saves; -1: not open */
    int lock_fd;               /* holds the lock on nodes.conf (gb_cluster_lock_config); -1: none */
    /* A save of nodes.conf owed before this loop iteration's replies
     * (Redis's clusterDoBeforeSleep): GB_CLUSTER_SAVE_*. */
    uint8_t save_owed;
    /* The bus's hook, called before a node is removed (its links close),
     * or NULL without a bus. */
    void (*node_removed)(void *ctx, gb_cluster_node *n);
    /* PUBLISH (shard false: to every node) and SPUBLISH (to this shard's
     * nodes) of a local client, sent on the bus; NULL without a bus */
    void (*publish)(void *ctx, bool shard, const char *channel, size_t channel_len, const char *message,
                    size_t message_len);
    /* The links associated with nodes, into *out (the caller frees it with
     * gb_free); their number. NULL without a bus. */
    size_t (*links)(void *ctx, gb_cluster_link_info **out);
    void *hook_ctx;
    /* CLUSTER FORGET's nodes, not re-added from gossip until `until` (ms) */
    struct gb_cluster_forgotten {
        char name[GB_CLUSTER_NAMELEN];
        int64_t until;
    } *forgotten;
    size_t nforgotten;
    /* CLUSTER FAILOVER (Redis's mf_*): until mf_end (ms; 0: none). A
     * replica: mf_can_start once caught up with its paused primary (or at
     * once with FORCE), mf_takeover for TAKEOVER, mf_primary_offset the
     * offset the paused primary gave (-1: not yet). A primary: mf_replica
     * names the replica it paused its writes for. */
    int64_t mf_end;
    bool mf_can_start, mf_takeover;
    int64_t mf_primary_offset;
    char mf_replica[GB_CLUSTER_NAMELEN + 1];
    /* the settings that act here, copied from gb_settings at start-up and on CONFIG SET */
    bool require_full_coverage;
    bool allow_reads_when_down;
} gb_cluster;

/* A new cluster state with one node, this one, a primary under a random
 * name (Redis's createClusterNode with CLUSTER_NODE_MYSELF|MASTER). */
gb_cluster *gb_cluster_new(int port, int cport, const char *config_path);
void gb_cluster_free(gb_cluster *cl);

/* Loads config_path: 0 when loaded, 1 when the file does not exist or is
 * empty (a new node: the caller saves), -1 when it is unreadable or
 * malformed (err says what; Redis then refuses to start). */
int gb_cluster_load_config(gb_cluster *cl, char *err, size_t errlen);
/* Locks nodes.conf for this process (creating it empty when missing), as
 * Redis 7.0's clusterLockConfig, so that two nodes never share one file
 * and so one node ID. A durable save's file, renamed into place, is locked
 * before the rename. 0, or -1 with Redis's text in err when another
 * process holds it. */
int gb_cluster_lock_config(gb_cluster *cl, char *err, size_t errlen);
/* Writes the file: a temporary file in the same directory renamed over
 * the old one, so a crash of the process leaves one or the other whole.
 * durable: the file and then its directory are fsynced too, so that a
 * crash of the machine keeps it (Redis fsyncs for epochs, votes and
 * role changes, not for a slot assignment). 0 or -1 (err). */
int gb_cluster_save_config(gb_cluster *cl, bool durable, char *err, size_t errlen);

/* save_owed's bits */
enum { GB_CLUSTER_SAVE = 1, GB_CLUSTER_SAVE_DURABLE = 2 };

gb_cluster_node *gb_cluster_lookup(const gb_cluster *cl, const char *name, size_t len);
/* Whether ip is an IPv4 or IPv6 address, and whether host may be a node's
 * hostname (letters, digits, '-', '_', '.'; at most 255 bytes): what a
 * peer sends goes into nodes.conf, whose lines must stay parseable. */
bool gb_cluster_valid_ip(const char *ip);
bool gb_cluster_valid_hostname(const char *host, size_t len);
/* Whether the 40 bytes at name are a node name (lower-case hex, as Redis
 * makes them). */
bool gb_cluster_valid_name(const char *name);
static inline bool gb_cluster_node_has_slot(const gb_cluster_node *n, unsigned slot)
{
    return (n->slots[slot >> 3] >> (slot & 7)) & 1u;
}
/* Opens slot towards n (or closes that side with NULL). */
void gb_cluster_set_migrating(gb_cluster *cl, unsigned slot, gb_cluster_node *n);
void gb_cluster_set_importing(gb_cluster *cl, unsigned slot, gb_cluster_node *n);
/* Every slot stable again (a node turned replica, reset, dropped). */
void gb_cluster_close_open_slots(gb_cluster *cl);
/* Gives slot to n; false when it already had an owner. */
bool gb_cluster_add_slot(gb_cluster *cl, gb_cluster_node *n, unsigned slot);
/* Takes slot from its owner; false when it had none. */
bool gb_cluster_del_slot(gb_cluster *cl, unsigned slot); /* (marks shard_slots_lost) */

/* Redis's clusterUpdateState: OK when every slot is served (or
 * cluster-require-full-coverage is no) by a node not marked failing, and
 * a majority of the primaries that serve slots is reachable; a primary
 * that just started waits 2 s before it first says OK, and one that was
 * in the minority waits the node timeout (0.5 to 5 s) before it rejoins. */
void gb_cluster_update_state(gb_cluster *cl, int64_t now_ms, int64_t node_timeout_ms);

/* One node's line of CLUSTER NODES and nodes.conf, without the newline
 * (Redis's clusterGenNodeDescription), appended to out. use_pport: the
 * plaintext port where one is known (a TLS cluster's plaintext client). */
struct gb_strbuf;
void gb_cluster_describe_node(const gb_cluster *cl, const gb_cluster_node *n, bool use_pport, struct gb_strbuf *out);
/* Every node's line, each ending in "\n"; filter: flags of nodes to leave out. */
void gb_cluster_describe_nodes(const gb_cluster *cl, uint32_t filter, bool use_pport, struct gb_strbuf *out);

/* CLUSTER BUMPEPOCH's and SET-CONFIG-EPOCH's rules. */
uint64_t gb_cluster_max_epoch(const gb_cluster *cl);
/* Redis's clusterBumpConfigEpochWithoutConsensus: this node takes a new
 * config epoch (current + 1) unless its own is already the greatest and
 * not 0. True when it did. */
bool gb_cluster_bump_epoch(gb_cluster *cl);

/* ---- what the bus changes (Redis's cluster.c rules) ---- */

/* A node to meet at ip:port (bus port cport): a new node under a random
 * name, flagged HANDSHAKE and MEET, unless one is being met there already.
 * Returns the node, or NULL with *invalid set when the address is not an
 * IPv4/IPv6 address or a port is out of range (Redis's EINVAL), or NULL
 * alone when a handshake with that address is in progress. */
gb_cluster_node *gb_cluster_start_handshake(gb_cluster *cl, const char *ip, long long port, long long cport,
                                            int64_t now_ms, bool *invalid);
/* A node gossip named that this node did not know: added under its name
 * with the flags gossip gave it; the bus connects to it. NULL when name
 * is known already. */
gb_cluster_node *gb_cluster_add_gossiped(gb_cluster *cl, const char *name, const char *ip, int port, int cport,
                                         uint32_t flags, int64_t now_ms);
/* Removes n (not myself): its slots become unassigned, open slots naming
 * it are closed. The caller has closed n's link. */
void gb_cluster_del_node(gb_cluster *cl, gb_cluster_node *n);
/* Failure reports (Redis's clusterNodeAddFailureReport & co): one per
 * reporting primary, valid for twice the node timeout. */
void gb_cluster_report_failure(gb_cluster_node *n, const char *reporter, int64_t now_ms);
void gb_cluster_withdraw_failure(gb_cluster_node *n, const char *reporter);
size_t gb_cluster_failure_reports(gb_cluster_node *n, int64_t now_ms, int64_t node_timeout_ms);
/* Redis's markNodeAsFailingIfNeeded: n, which this node cannot reach
 * (PFAIL), becomes FAIL once a majority of the primaries (this one
 * included, if a primary) report it. True when it did: the caller
 * broadcasts FAIL. */
bool gb_cluster_mark_failing_if_needed(gb_cluster *cl, gb_cluster_node *n, int64_t now_ms, int64_t node_timeout_ms);
/* Redis's clusterSendFailoverAuthIfNeeded: whether this primary votes
 * for replica's election (request: its FAILOVER_AUTH_REQUEST's epochs,
 * claimed slots and force-ack flag). When it does, the vote is recorded
 * (lastVoteEpoch, the failed primary's voted_time); *why otherwise. */
bool gb_cluster_grant_vote(gb_cluster *cl, gb_cluster_node *replica, uint64_t req_current_epoch,
                           uint64_t req_config_epoch, const uint8_t *claimed, bool force_ack, int64_t now_ms,
                           int64_t node_timeout_ms, const char **why);
/* CLUSTER FORGET: n is removed and not re-added from gossip for 60 s. */
void gb_cluster_forget(gb_cluster *cl, gb_cluster_node *n, int64_t now_ms);
bool gb_cluster_forgotten(gb_cluster *cl, const char *name, int64_t now_ms);
/* CLUSTER RESET: every other node forgotten, no slot, no open slot; hard:
 * a new name and every epoch 0. */
void gb_cluster_reset(gb_cluster *cl, bool hard);
/* A node learnt under a handshake name takes its real one. */
void gb_cluster_rename_node(gb_cluster_node *n, const char *name);
/* n's role as its messages say: a primary, or a replica of primary_name
 * (40 bytes). A primary turned replica loses its slots; when it is this
 * node, its open slots close too. */
void gb_cluster_set_primary(gb_cluster_node *n);
void gb_cluster_set_replica_of(gb_cluster *cl, gb_cluster_node *n, const char *primary_name);
/* Redis's clusterUpdateSlotsConfigWith: every slot sender claims that is
 * unassigned or held under an older config epoch becomes sender's (not one
 * this node is importing). Slots this node lost while it still held keys
 * in them are listed in lost[] (the caller deletes those keys); returns
 * their number. */
int gb_cluster_take_claimed_slots(gb_cluster *cl, gb_cluster_node *sender, uint64_t epoch, const uint8_t *slots,
                                  const uint32_t *slot_keys, uint16_t *lost);
/* Redis's clusterHandleConfigEpochCollision: two primaries with the same
 * config epoch; the one with the greater name takes a new epoch. True
 * when this node did. */
bool gb_cluster_resolve_epoch_collision(gb_cluster *cl, const gb_cluster_node *sender);

#endif
