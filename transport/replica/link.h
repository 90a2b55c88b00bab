/*
 * The replica's link to its primary: one outbound TCP connection on the
 * server's loop, never blocking it. It follows the engine's replica state
 * (engine/core/replication/replica.h) from the loop's cron: connect, Redis's handshake
 * (PING, AUTH, REPLCONF listening-port / ip-address / capa, PSYNC), a full
 * sync's payload streamed to a temporary file and loaded, then the
 * primary's command stream applied by the master client through the
 * command gate, with REPLCONF ACK every second and on GETACK.
 */
#ifndef GB_TRANSPORT_REPLICA_LINK_H
#define GB_TRANSPORT_REPLICA_LINK_H

#include "engine/core/engine.h"
#include "transport/loop/loop.h"

typedef struct gb_replica_link gb_replica_link;

/* Attaches the link to the loop and, when the configuration names a
 * primary (replicaof), starts following it. NULL with a reason in err. */
gb_replica_link *gb_replica_link_new(gb_engine *eng, gb_loop *loop, char *err, size_t errlen);
/* After gb_loop_free (which closed its handles). */
void gb_replica_link_free(gb_replica_link *link);

#endif
