/*
 * The cluster bus (cluster-enabled yes): a TCP listener on the bus port
 * (cluster-port, else port + 10000) and a link to every known node,
 * speaking redis-server 7.0's binary protocol (engine/cluster/bus_msg.h):
 * MEET, PING and PONG with gossip so that nodes learn each other, FAIL
 * and UPDATE, epochs and their collisions, PFAIL after cluster-node-timeout.
 * An engine without cluster mode gets no bus.
 */
#ifndef GB_TRANSPORT_CLUSTER_BUS_H
#define GB_TRANSPORT_CLUSTER_BUS_H

#include <stddef.h>

#include "transport/loop/loop.h"

typedef struct gb_cluster_bus gb_cluster_bus;

/* Listens and attaches to the loop. NULL with err[0] == '\0' when the
 * engine is not in cluster mode; NULL with a reason when listening fails. */
gb_cluster_bus *gb_cluster_bus_new(gb_engine *eng, gb_loop *loop, char *err, size_t errlen);
/* After the loop is freed (its handles are closed by then). */
void gb_cluster_bus_free(gb_cluster_bus *bus);

#endif
