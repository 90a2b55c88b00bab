/*
 * A client's memory: one policy for every transport. Redis's
 * client-output-buffer-limit classes (normal, replica, pubsub) with their
 * hard limit, and their soft limit that a client may stay over for its
 * soft seconds. The transports only count what they hold for a client and
 * have not handed over yet (a socket's reply buffer and writes in flight,
 * a ring's replies waiting for room) and ask gb_client_obuf_enforce after
 * adding to it; the decision, the log line and the count are here, and
 * the client is closed through its transport's close hook as CLIENT KILL
 * closes it.
 */
#ifndef GB_ENGINE_CLIENT_MEMORY_H
#define GB_ENGINE_CLIENT_MEMORY_H

#include "engine/core/request/client.h"

/* Redis's client types for output-buffer limits (a master counts as
 * normal, a MONITOR client too). */
typedef enum gb_client_class {
    GB_CLIENT_CLASS_NORMAL,
    GB_CLIENT_CLASS_REPLICA,
    GB_CLIENT_CLASS_PUBSUB,
} gb_client_class;

typedef struct gb_obuf_limit {
    long long hard;       /* bytes; 0: none */
    long long soft;       /* bytes; 0: none */
    int soft_seconds;     /* how long the output may stay over soft */
} gb_obuf_limit;

typedef enum gb_obuf_verdict {
    GB_OBUF_WITHIN,       /* keep serving */
    GB_OBUF_OVER_SOFT,    /* over the soft limit for longer than its seconds */
    GB_OBUF_OVER_HARD,
} gb_obuf_verdict;

/* The class c's output is limited by: replica for a replica's link, pubsub
 * while it holds a subscription, normal otherwise (Redis's getClientType). */
gb_client_class gb_client_obuf_class(const gb_client *c);
/* "normal", "replica", "pubsub": as client-output-buffer-limit names them. */
const char *gb_client_class_name(gb_client_class cls);
/* The class's limits as configured now. */
gb_obuf_limit gb_client_obuf_limit(const gb_client *c);

/* The decision alone: is c, with `pending` bytes of output its transport
 * holds, over its limit at now_ms? Notes when the soft limit was first
 * passed (c->obuf_soft_since_ms), and forgets it once under again. */
gb_obuf_verdict gb_client_obuf_check(gb_client *c, size_t pending, int64_t now_ms);

/* What each transport calls after adding to a client's pending output:
 * over its limit, the client is logged (Redis's line), counted in
 * client_output_buffer_limit_disconnections, marked GB_CLIENT_CLOSE_ASAP
 * and handed to its transport's close hook, which closes it at the next
 * chance (never now: the engine may be walking its clients, PUBLISH its
 * subscribers). Returns true when the client goes (also when it was going
 * already): the transport then keeps nothing more for it. */
bool gb_client_obuf_enforce(gb_client *c, size_t pending);

/* Whether a reply of at least reply_bytes would take the client past the
 * hard limit of its client-output-buffer-limit class; if so the client is
 * closed as soon as possible (logged and counted as Redis closes a client
 * over its limit) and the caller sends nothing. For commands whose reply
 * size a client's number decides (SRANDMEMBER key -9223372036854775807):
 * Redis builds such a reply until memory runs out, holding every other
 * client meanwhile. Scripts' clients are not connections and are never
 * closed here. */
bool gb_client_reply_over_limit(gb_client *c, uint64_t reply_bytes);

/* ---- maxmemory-clients: client eviction (Redis 7.0's evictClients) ----
 * The memory of normal and pub/sub clients is counted (a replica's, the
 * link to our primary's, scripts' and the log's clients' is not). When
 * the total reaches maxmemory-clients the largest of those CLIENT
 * NO-EVICT does not exempt are closed first, each logged ("Evicting client: ...") and counted in INFO's
 * evicted_clients. Redis files clients in log2 buckets to find a large one
 * quickly; here the largest is found by a walk of the clients, which runs
 * only while over the limit. Nothing here costs anything while the
 * setting is 0. */

/* maxmemory-clients in bytes as it applies now (a percentage taken of
 * maxmemory, never under 128kb); 0: no limit. */
size_t gb_client_eviction_limit(const struct gb_engine *eng);
/* Counts c's memory anew and closes clients while over the limit. Called
 * by the transports when a client's buffers changed (after its input was
 * processed, after output was added), and by the cron for every client. */
void gb_client_memory_changed(gb_client *c);
/* c is being freed: its memory leaves the total. */
void gb_client_memory_forget(gb_client *c);
/* CONFIG SET maxmemory-clients / maxmemory, and the cron: every client
 * counted anew (or forgotten, with no limit), then evictions. */
void gb_clients_memory_recount(struct gb_engine *eng);

#endif
