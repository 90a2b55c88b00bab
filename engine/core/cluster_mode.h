/*
 * The engine in cluster mode (cluster-enabled yes): the cluster state's
 * life (start-up, nodes.conf, the cron's health check) and the gate's
 * redirections, Redis 7.0's getNodeByQuery and clusterRedirectClient.
 * Nothing here runs when eng->cluster is NULL.
 */
#ifndef GB_ENGINE_CORE_CLUSTER_MODE_H
#define GB_ENGINE_CORE_CLUSTER_MODE_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/cluster/cluster.h"
#include "engine/core/request/command.h"

struct gb_engine;

/* With cluster-enabled yes: the state from nodes.conf (in dir), or a new
 * node saved there; per-slot key counting on database 0. 0, or -1 with
 * err (Redis refuses to start then). Before the dataset loads. */
int gb_cluster_mode_start(struct gb_engine *eng, char *err, size_t errlen);
/* The cron's part: the cluster's health (Redis's clusterUpdateState). */
void gb_cluster_mode_cron(struct gb_engine *eng);
/* After a change of the slot map or of the nodes: health again, and
 * nodes.conf saved before this iteration's replies go out (one save for
 * every change of the iteration, as Redis's clusterBeforeSleep; a failure
 * is logged, where Redis's clusterSaveConfigOrDie would stop the server).
 * _durably: the save is fsynced too, for what must survive a machine's
 * crash (epochs, votes, a primary that became a replica). */
void gb_cluster_mode_changed(struct gb_engine *eng);
void gb_cluster_mode_changed_durably(struct gb_engine *eng);

/* Redis's resetManualFailover: a CLUSTER FAILOVER under way ends, and a
 * primary's pause for it too. */
void gb_cluster_mode_end_manual_failover(struct gb_engine *eng);
/* The owed save, if any (the loop's check phase, before the replies). */
void gb_cluster_mode_before_replies(struct gb_engine *eng);
/* This node's address as the settings announce it (cluster-announce-*,
 * port, cluster-port). */
void gb_cluster_mode_refresh_myself(struct gb_engine *eng);
/* The port the cluster is built on (tls-port with tls-cluster, else
 * port) and the bus port it gives (cluster-port, else that + 10000), as
 * Redis 7.0's clusterInit. */
struct gb_settings;
int gb_cluster_mode_base_port(const struct gb_settings *cfg);
int gb_cluster_mode_bus_port(const struct gb_settings *cfg);
/* Whether c is a plaintext client of a TLS cluster, which Redis 7.0
 * shows the plaintext ports (pport) where a TLS client sees the TLS ones. */
bool gb_cluster_mode_shows_pport(const gb_client *c);
/* The port of n that c is shown (CLUSTER SLOTS/NODES/REPLICAS, MOVED,
 * ASK): pport when c is such a client and n's is known, else n's port. */
int gb_cluster_mode_client_port(const gb_client *c, const gb_cluster_node *n);

/* cluster-preferred-endpoint-type's values (the config table's order). */
enum { GB_ENDPOINT_IP = 0, GB_ENDPOINT_HOSTNAME = 1, GB_ENDPOINT_UNKNOWN = 2 };
/* How clients are told to reach n (Redis's getPreferredEndpoint): its ip,
 * its hostname ("?" when it has none) or "" (unknown-endpoint: "the
 * address you used"). */
const char *gb_cluster_mode_endpoint(const struct gb_engine *eng, const gb_cluster_node *n);

/* Whether cmd must go elsewhere or not run at all in cluster mode
 * (CROSSSLOT, MOVED, ASK, TRYAGAIN, CLUSTERDOWN): the error text, in
 * buf, without the leading '-'; NULL when it runs here. flags: the
 * command's GB_CMD_* flags as admission judges them (a script's own). */
const char *gb_cluster_redirection(gb_client *c, const gb_command *cmd, uint32_t flags, int argc, gb_slice *argv,
                                   char *buf, size_t buflen);

/* Redis's clusterRedirectBlockedClientIfNeeded for c, blocked on key (a
 * list, sorted set or stream; writes: its command writes): the error that
 * ends its wait now, the cluster being down or the key's slot served by
 * another node and not imported here (-MOVED there, or -CLUSTERDOWN when
 * no node serves it); NULL while it may wait on. buf holds a MOVED. */
const char *gb_cluster_blocked_redirection(gb_client *c, gb_slice key, bool writes, char *buf, size_t buflen);

/* Redis's scriptVerifyClusterState for a command a script runs on c, its
 * client, for caller: NULL when it may run here, else the error
 * ("ERR Script attempted to ..."). *slot: the slot the script's keys hash
 * to so far (-1: none), kept or set here; cross_slot: the script declared
 * allow-cross-slot-keys. */
const char *gb_cluster_script_check(gb_client *c, gb_client *caller, const gb_command *cmd, uint32_t flags, int argc,
                                    gb_slice *argv, int *slot, bool cross_slot);

/* Whether the gate asks gb_cluster_redirection about cmd: it has keys
 * (or movable ones), or it is EXEC (Redis's processCommand rule). */
bool gb_cluster_checks_command(const gb_command *cmd);

#endif
