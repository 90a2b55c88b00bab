/*
 * A replica's place in the queue for its primary's slots (Redis 7.0's
 * clusterGetSlaveRank and the rank refresh of clusterHandleSlaveFailover):
 * pure functions of the cluster state, so the decisions are tested without
 * a bus (test/engine/cluster/test_election.c). transport/cluster/bus.c
 * schedules and runs the election with them.
 */
#ifndef GB_ENGINE_CLUSTER_ELECTION_H
#define GB_ENGINE_CLUSTER_ELECTION_H

#include "engine/cluster/cluster.h"

/* The delay a replica of rank r adds to its election: 1 s per place, so
 * the replica with the most data asks for votes first. */
#define GB_CLUSTER_RANK_DELAY_MS 1000

/* How many other replicas of primary that may fail over have more of its
 * data (a larger replication offset, as their last messages told) than
 * my_offset: 0 goes first. */
int gb_cluster_replica_rank(const gb_cluster *cl, const gb_cluster_node *primary, uint64_t my_offset);

/* While a replica waits for its scheduled election, siblings' offsets keep
 * arriving: when its rank is now worse than the one its delay was computed
 * for, the milliseconds to add (1 s per place lost); 0 otherwise (a better
 * rank never brings the election forward, as in Redis). */
int64_t gb_cluster_rank_added_delay(int scheduled_rank, int new_rank);

#endif
