/*
 * FAILOVER: a primary hands its role to one of its replicas without losing
 * a write (Redis 6.2's coordinated failover, as 7.0 has it).
 *
 *   FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]
 *
 * 1. Writes are paused (engine/core/request/blocking.h, gb_pause_for) and
 *    the state is waiting-for-sync.
 * 2. Each cron tick looks for the target (or, without TO, any replica)
 *    whose acknowledged offset is the primary's whole stream. Past TIMEOUT
 *    the failover is aborted, or with FORCE goes on to the target anyway.
 * 3. failover-in-progress: the primary makes itself a replica of the
 *    target, whose link sends `PSYNC <id> <offset> FAILOVER`; the target,
 *    finding its own replication ID, promotes itself first and then answers
 *    the PSYNC (usually +CONTINUE: the old primary's history is its
 *    second ID). Either answer ends the failover and the pause; an error
 *    aborts it: the server is a primary again.
 *
 * FAILOVER ABORT ends it from either waiting state; REPLICAOF is refused
 * meanwhile. INFO's master_failover_state shows where it is.
 */
#ifndef GB_ENGINE_CORE_FAILOVER_H
#define GB_ENGINE_CORE_FAILOVER_H

#include <stdbool.h>

#include "engine/core/request/client.h"

struct gb_engine;

typedef enum gb_failover_state {
    GB_FAILOVER_NONE = 0,
    GB_FAILOVER_WAIT_FOR_SYNC,
    GB_FAILOVER_IN_PROGRESS,
} gb_failover_state;

/* The FAILOVER command (Redis's replies and error texts). */
void gb_failover_command(gb_client *c, int argc, const gb_slice *argv);

/* Once per cron tick: the timeout, and whether a replica caught up. */
void gb_failover_cron(struct gb_engine *eng);

gb_failover_state gb_failover_state_of(const struct gb_engine *eng);
/* INFO's master_failover_state: no-failover, waiting-for-sync,
 * failover-in-progress. */
const char *gb_failover_state_name(const struct gb_engine *eng);

/* The replica link's PSYNC to the target was answered: accepted (a
 * +CONTINUE or +FULLRESYNC) ends the failover, refused aborts it. False
 * when it aborted: this server is a primary again, and the link asks the
 * target for nothing more (Redis's syncWithMaster returns). */
bool gb_failover_psync_answered(struct gb_engine *eng, bool accepted);

void gb_failover_destroy(struct gb_engine *eng);

#endif
