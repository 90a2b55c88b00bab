/*
 * The server's side of the shared-memory rings: the slot pool, its placement
 * (--cpu / --numa-arena), the RING CLAIM command, and the poller that the
 * server's loop (transport/loop/loop.h) runs in its check phase, as a peer
 * of the socket server, which it knows nothing of.
 *
 * Start-up order (apps/server/main.c): gb_ring_pool_create() runs first, before
 * the engine allocates anything, so the pool can be pinned, bound to the
 * engine CPU's NUMA node, pre-faulted and verified page by page; then the
 * engine and the loop are created and gb_ring_pool_attach() wires the pool
 * into them.
 */
#ifndef GB_TRANSPORT_RING_SERVER_H
#define GB_TRANSPORT_RING_SERVER_H

#include "engine/core/engine.h"
#include "transport/loop/loop.h"

typedef struct gb_ring_pool gb_ring_pool;

/*
 * Pins the calling (engine) thread to cfg->cpu when set, creates cfg->rings
 * slots of cfg->ring_size bytes per direction (huge pages with
 * cfg->ring_hugepages), strictly bound to the CPU's NUMA node, pre-faulted and
 * verified; then lifts the strict bind and, with cfg->numa_arena, sets a soft
 * preference for the node. Returns NULL with a message that says what to do
 * when the pool cannot be placed (the server must not start). *log receives
 * human-readable notes for the start-up log (pinning, node, no-NUMA no-ops).
 */
gb_ring_pool *gb_ring_pool_create(const gb_settings *cfg, char *err, size_t errlen, char *log, size_t loglen);

/* Registers RING commands, the poller (a peer of the loop), the refill
 * thread's notifier and INFO. Wake descriptors are per claim, watched while
 * the claim lasts. Returns -1 when the loop has no room for another peer. */
int gb_ring_pool_attach(gb_ring_pool *pool, gb_engine *eng, gb_loop *loop);

void gb_ring_pool_free(gb_ring_pool *pool);

/* For the start-up log: "16 rings x 1 MiB, node 0 (verified), ..." */
const char *gb_ring_pool_describe(const gb_ring_pool *pool);

#endif
