/*
 * Shutting down as Redis 7.0 does (its prepareForShutdown / finishShutdown):
 *
 * 1. SHUTDOWN, or SIGTERM/SIGINT with the flags shutdown-on-sigterm /
 *    shutdown-on-sigint give, begins it. Unless NOW is given or
 *    shutdown-timeout is 0, a primary whose replicas have not acknowledged
 *    the whole replication stream first waits for them: writes are paused
 *    (engine/core/request/blocking.h, GB_PAUSE_FOR_SHUTDOWN), every replica is
 *    asked for its offset (REPLCONF GETACK), the SHUTDOWN client is
 *    blocked, INFO shows shutdown_in_milliseconds.
 * 2. The cron finishes it once every replica has caught up or the timeout
 *    has passed (each lagging replica logged): the final save (SAVE /
 *    NOSAVE / the save points) and the log's fsync through the engine's
 *    service; with FORCE a failed save is logged and the server exits
 *    anyway. Then the loop stops.
 * 3. A failed save, or SHUTDOWN ABORT while waiting, cancels it: writes
 *    resume and the blocked SHUTDOWN clients get Redis's error.
 */
#ifndef GB_ENGINE_SHUTDOWN_H
#define GB_ENGINE_SHUTDOWN_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/core/request/client.h"

struct gb_engine;

enum {
    GB_SHUTDOWN_SAVE = 1u << 0,
    GB_SHUTDOWN_NOSAVE = 1u << 1,
    GB_SHUTDOWN_NOW = 1u << 2,  /* do not wait for replicas */
    GB_SHUTDOWN_FORCE = 1u << 3, /* exit even if the final save fails */
};

/* shutdown-on-sigint / shutdown-on-sigterm: words among default (no
 * flag), save, nosave, now, force, separated by spaces, in any case, not
 * both save and nosave (Redis's check). false for anything else. */
bool gb_shutdown_parse_flags(const char *text, unsigned *flags);

/* Begins a shutdown (for a SHUTDOWN command, c is its client: blocked
 * while the shutdown waits for replicas). Returns 0 when the server stops
 * now (eng->shutdown_requested is set), 1 while it waits for replicas,
 * or -1 when the final save failed (logged; the server keeps serving; c,
 * when given, got Redis's error). */
int gb_shutdown_begin(struct gb_engine *eng, unsigned flags, gb_client *c, int argc, const gb_slice *argv);
/* SHUTDOWN ABORT: 0 when a waiting shutdown was cancelled, -1 when none
 * was in progress. */
int gb_shutdown_abort(struct gb_engine *eng);
bool gb_shutdown_in_progress(const struct gb_engine *eng);
/* INFO server's shutdown_in_milliseconds while waiting, else -1. */
int64_t gb_shutdown_ms_left(const struct gb_engine *eng);
/* The cron: finishes a waiting shutdown when the replicas caught up or
 * its time is up. */
void gb_shutdown_cron(struct gb_engine *eng);
/* A blocked client's command was SHUTDOWN; it is unblocked or gone
 * (blocking.c calls this as it does WAIT's). */
bool gb_shutdown_is_waiter(const gb_argv_copy *cmd);
void gb_shutdown_waiter_gone(gb_client *c);
void gb_shutdown_destroy(struct gb_engine *eng);

#endif
