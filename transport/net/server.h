/*
 * The socket server: TCP and Unix socket listeners, one connection object
 * per client (query buffer, RESP parser, output buffer), on the engine
 * thread. It is a peer of the server's loop (transport/loop/loop.h), which
 * runs the cron, timers, signals and the check phase that calls back here
 * to continue resumed clients and write replies.
 */
#ifndef GB_TRANSPORT_NET_SERVER_H
#define GB_TRANSPORT_NET_SERVER_H

#include "engine/core/engine.h"
#include "transport/loop/loop.h"

typedef struct gb_net_server gb_net_server;

/* Creates listeners from eng->cfg (port/bind, unixsocket/unixsocketperm)
 * and attaches to the loop. Returns NULL with a one-line reason in err
 * (e.g. the port is taken). */
gb_net_server *gb_net_server_new(gb_engine *eng, gb_loop *loop, char *err, size_t errlen);

/* Frees what the server holds (after gb_loop_free closed its handles) and
 * removes the Unix socket file. */
void gb_net_server_free(gb_net_server *srv);

/* The listener descriptions for the start-up log ("tcp 127.0.0.1:6379"). */
const char *gb_net_server_describe(const gb_net_server *srv);

#endif
