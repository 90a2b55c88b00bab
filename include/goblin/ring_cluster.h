/*
 * Goblin Core ring client library, cluster side: one object that speaks to
 * every primary of a Redis Cluster (goblin-core or redis-server nodes) and
 * routes each call by its key's hash slot (docs/ring_cluster.md).
 *
 *   gb_ring_cluster *cl;
 *   char err[256];
 *   if (gb_ring_cluster_connect("127.0.0.1:7000", GB_RING_SBE, NULL, &cl, err, sizeof err) != 0)
 *       fprintf(stderr, "%s\n", err);
 *   gb_ring_cluster_set(cl, "k", 1, "v", 1, 0);
 *   gb_ring_cluster_close(cl);
 *
 * A primary on this host that has a Unix socket is reached through a ring
 * claimed on it (the protocol asked for); any other (a remote host, no
 * unixsocket, a redis-server that cannot claim rings) through a plain RESP
 * socket. MOVED and ASK are followed, TRYAGAIN retried after a short
 * sleep, up to GB_RING_CLUSTER_MAX_REDIRECTS times per call.
 *
 * Like gb_ring_client, one object is used by one thread at a time. Calls
 * return 0 or a negative GB_E* code; gb_ring_cluster_error() has the words.
 * The typed calls have the gb_ring_* signatures (goblin/ring_client.h) and
 * the same meaning: a server refusal is GB_EPROTO with Redis's words.
 *
 * For tests and diagnostics, GOBLIN_RING_CLUSTER_SOCKETS=1 in the
 * environment at connect time reaches every node by socket, as if remote.
 */
#ifndef GOBLIN_RING_CLUSTER_H
#define GOBLIN_RING_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "goblin/ring_client.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gb_ring_cluster gb_ring_cluster;

#define GB_RING_CLUSTER_SLOTS 16384
#define GB_RING_CLUSTER_MAX_NODES 1024
#define GB_RING_CLUSTER_MAX_REDIRECTS 16

/* seed: a node's Unix socket path (anything with a '/') or "host:port". */
GB_EXPORT int gb_ring_cluster_connect(const char *seed, gb_ring_proto proto, const gb_ring_client_options *opt,
                                      gb_ring_cluster **out, char *err, size_t errlen);
GB_EXPORT void gb_ring_cluster_close(gb_ring_cluster *cl);
GB_EXPORT const char *gb_ring_cluster_error(const gb_ring_cluster *cl);
/* Reads the slot map again (CLUSTER SLOTS) from a connected node. */
GB_EXPORT int gb_ring_cluster_refresh(gb_ring_cluster *cl);

/* The hash slot of a key: CRC16 (XMODEM) of the key, or of the text
 * between the first '{' and the next '}' when that is not empty, mod 16384. */
GB_EXPORT int gb_ring_cluster_key_slot(const void *key, size_t klen);

/* ---- the mapping (diagnostics, tests) ---- */
GB_EXPORT size_t gb_ring_cluster_node_count(const gb_ring_cluster *cl);
/* "host:port" of node i, or NULL past the end. */
GB_EXPORT const char *gb_ring_cluster_node_address(const gb_ring_cluster *cl, size_t i);
/* 1 when node i is reached through a ring, 0 by socket, -1 past the end. */
GB_EXPORT int gb_ring_cluster_node_uses_ring(const gb_ring_cluster *cl, size_t i);
/* The node that serves a slot as far as this client knows, or -1. */
GB_EXPORT int gb_ring_cluster_slot_node(const gb_ring_cluster *cl, int slot);
/* The connection to node i (a gb_ring_client; over a socket it is a RESP
 * client that has no ring), for calls this header has no wrapper for. */
GB_EXPORT gb_ring_client *gb_ring_cluster_node_client(gb_ring_cluster *cl, size_t i);

/* The redirections followed since connect (for tests and benchmarks). */
typedef struct gb_ring_cluster_stats {
    uint64_t moved, ask, tryagain;
} gb_ring_cluster_stats;
GB_EXPORT void gb_ring_cluster_get_stats(const gb_ring_cluster *cl, gb_ring_cluster_stats *out);

/* ---- any command: routed by its first key (COMMAND's key positions) ---- */
/* A keyless command goes to any node. An error reply other than a
 * redirection is a reply of kind GB_REPLY_ERROR, as with gb_ring_command. */
GB_EXPORT int gb_ring_cluster_command(gb_ring_cluster *cl, int argc, const char *const *argv, const size_t *lens,
                                      gb_reply **reply);

/* ---- typed calls (as in goblin/ring_client.h) ---- */
GB_EXPORT int gb_ring_cluster_get(gb_ring_cluster *cl, const void *key, size_t klen, void *buf, size_t cap,
                                  int64_t *len);
GB_EXPORT int gb_ring_cluster_set(gb_ring_cluster *cl, const void *key, size_t klen, const void *val, size_t vlen,
                                  int64_t ttl_ms);
GB_EXPORT int gb_ring_cluster_del(gb_ring_cluster *cl, const void *key, size_t klen, int64_t *deleted);
GB_EXPORT int gb_ring_cluster_incrby(gb_ring_cluster *cl, const void *key, size_t klen, int64_t by, int64_t *value);
GB_EXPORT int gb_ring_cluster_hset(gb_ring_cluster *cl, const void *key, size_t klen, size_t n,
                                   const void *const *fields, const size_t *flens, const void *const *values,
                                   const size_t *vlens, int64_t *added);
GB_EXPORT int gb_ring_cluster_hget(gb_ring_cluster *cl, const void *key, size_t klen, const void *field, size_t flen,
                                   void *buf, size_t cap, int64_t *len);
GB_EXPORT int gb_ring_cluster_zadd(gb_ring_cluster *cl, const void *key, size_t klen, int flags, size_t n,
                                   const double *scores, const void *const *members, const size_t *mlens,
                                   int64_t *result, double *score);
GB_EXPORT int gb_ring_cluster_zscore(gb_ring_cluster *cl, const void *key, size_t klen, const void *member,
                                     size_t mlen, double *score, int *found);
GB_EXPORT int gb_ring_cluster_lpush(gb_ring_cluster *cl, const void *key, size_t klen, size_t n,
                                    const void *const *vals, const size_t *vlens, int64_t *len);
GB_EXPORT int gb_ring_cluster_rpop(gb_ring_cluster *cl, const void *key, size_t klen, void *buf, size_t cap,
                                   int64_t *len);

#ifdef __cplusplus
}
#endif

#endif
