/*
 * The server's loop: one libuv loop on the engine thread, and everything
 * that belongs to the loop rather than to a way of reaching the server -
 * the engine's cron (at `hz`, followed when CONFIG SET changes it), the
 * blocked clients' deadlines, the background-work retry, SIGINT/SIGTERM,
 * the check phase after every iteration (resume clients, poll what the
 * loop does not watch, make the log durable, write replies, a slice of
 * background work, decide whether to sleep or spin), the busy-script pump
 * and an orderly shutdown.
 *
 * It is not a transport: it is the layer transports stand on. Sockets,
 * rings and every later listener (replication link, cluster bus, TLS)
 * attach to it as peers (gb_loop_add_peer) and never include each other.
 * They create their own I/O handles (uv_tcp_t, uv_pipe_t, uv_poll_t) on
 * gb_loop_uv(); only this module touches libuv's timers, signals and the
 * check/idle/prepare phases (test/integration/test_layering.py checks it).
 */
#ifndef GB_TRANSPORT_LOOP_LOOP_H
#define GB_TRANSPORT_LOOP_LOOP_H

#include <uv.h>

#include "engine/core/engine.h"

typedef struct gb_loop gb_loop;

/* A transport or listener attached to the loop. Every callback may be
 * NULL; ctx is passed to each. */
typedef struct gb_loop_peer {
    const char *name;
    void *ctx;
    /* The check phase, after each loop iteration, calls these in this
     * order, each for every peer in the order they were added: */
    void (*resume)(void *ctx);        /* continue clients resumed (unblocked, killed) since the last pass */
    bool (*poll)(void *ctx);          /* serve input the loop does not watch (rings); true if it did work
                                       * (then every peer's resume runs again) */
    void (*flush)(void *ctx);         /* write the replies queued this iteration (the log has what they
                                       * acknowledge by now) */
    bool (*pending)(void *ctx);       /* work queued that must not wait for a sleep */
    bool (*prepare_sleep)(void *ctx); /* the loop would block: false if it must not (a spin budget) */
    /* Each cron tick, after the engine's cron (buffer trimming, idle
     * timeouts). */
    void (*cron)(void *ctx);
    /* One pass by hand while a script runs past busy-reply-threshold (the
     * loop cannot be re-entered): accept, read and answer what waits. */
    void (*busy_pump)(void *ctx);
    /* Shutdown: close every handle and client of this peer. */
    void (*shutdown)(void *ctx);
} gb_loop_peer;

/* Initialises the libuv loop, the cron, timers and signal handlers, and
 * installs the engine's busy pump. NULL with a one-line reason in err. */
gb_loop *gb_loop_new(gb_engine *eng, char *err, size_t errlen);

/* The libuv loop, for a peer's own I/O handles. */
uv_loop_t *gb_loop_uv(gb_loop *loop);

/* Attaches a peer (copied). Returns 0, or -1 when the table is full. */
int gb_loop_add_peer(gb_loop *loop, const gb_loop_peer *peer);

/* The loop must not block before the next check phase (replies or a
 * resumed client wait for it). */
void gb_loop_stay_awake(gb_loop *loop);

/* Runs until SIGINT/SIGTERM or SHUTDOWN. */
int gb_loop_run(gb_loop *loop);

/* Shuts every peer down if that has not happened (a start-up failure),
 * lets libuv close every handle, closes the loop and frees it. Before the
 * peers' own structures are freed. */
void gb_loop_free(gb_loop *loop);

#endif
