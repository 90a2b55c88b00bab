/*
 * The socket server: a libuv loop on the engine thread with TCP and Unix
 * socket listeners, one connection object per client (query buffer, RESP
 * parser, output buffer), the engine's cron, blocked-client deadlines and
 * signal handling.
 *
 * Other transports (the shared-memory rings) hook into the same loop through
 * gb_net_poller: they are polled between socket events, and can ask the loop
 * not to sleep while they have work.
 */
#ifndef GB_TRANSPORT_NET_SERVER_H
#define GB_TRANSPORT_NET_SERVER_H

#include <uv.h>

#include "engine/core/engine.h"

typedef struct gb_net_server gb_net_server;

/* A transport polled by the loop (the ring pool). poll() runs once per loop
 * iteration and returns true if it did work (the loop then polls sockets
 * without blocking); prepare_sleep() runs before the loop would block and
 * returns false if it must not (spin budget not spent yet). */
typedef struct gb_net_poller {
    bool (*poll)(void *ctx);
    bool (*prepare_sleep)(void *ctx);
    void (*shutdown)(void *ctx); /* close the transport's loop handles */
    void *ctx;
} gb_net_poller;

/* Creates listeners from eng->cfg (port/bind, unixsocket/unixsocketperm).
 * Returns NULL with a one-line reason in err (e.g. the port is taken). */
gb_net_server *gb_net_server_new(gb_engine *eng, uv_loop_t *loop, char *err, size_t errlen);

/* Registers a poller (at most one; the ring pool). */
void gb_net_server_set_poller(gb_net_server *srv, const gb_net_poller *p);

/* Runs until SIGINT/SIGTERM or SHUTDOWN. */
int gb_net_server_run(gb_net_server *srv);

/* Closes listeners and connections, removes the Unix socket file, frees. */
void gb_net_server_free(gb_net_server *srv);

/* The listener descriptions for the start-up log ("tcp 127.0.0.1:6379"). */
const char *gb_net_server_describe(const gb_net_server *srv);

/* The loop the server runs on (rings add their wake descriptors to it). */
uv_loop_t *gb_net_server_loop(gb_net_server *srv);

#endif
