/* A replica's election rank: see election.h. */
#include "engine/cluster/election.h"

#include <string.h>

int gb_cluster_replica_rank(const gb_cluster *cl, const gb_cluster_node *primary, uint64_t my_offset)
{
    int rank = 0;
    for (size_t i = 0; i < cl->nnodes; i++) {
        const gb_cluster_node *r = cl->nodes[i];
        if (r != cl->myself && (r->flags & GB_CNODE_SLAVE) && strcmp(r->replica_of, primary->name) == 0 &&
            !(r->flags & GB_CNODE_NOFAILOVER) && r->repl_offset > my_offset)
            rank++;
    }
    return rank;
}

int64_t gb_cluster_rank_added_delay(int scheduled_rank, int new_rank)
{
    return new_rank > scheduled_rank ? (int64_t)(new_rank - scheduled_rank) * GB_CLUSTER_RANK_DELAY_MS : 0;
}
