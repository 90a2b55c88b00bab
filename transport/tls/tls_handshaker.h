/*
 * TLS handshakes off the engine thread (issue 31, docs/tls.md). The socket
 * server hands each connection accepted on tls-port to one helper thread
 * (socket and fresh session); the helper runs the handshake over the
 * socket with poll(), and hands back the connection once it is
 * established and its handshake messages are sent, or says why it failed
 * (the socket closed). The engine thread then adopts the socket into its
 * loop and sees the connection's first byte of application data only;
 * the key exchange, certificate checks and signatures - the costly part -
 * never take its CPU.
 *
 * Libuv-free: the caller is woken through its own callback (which may only
 * do something thread-safe, such as uv_async_send) and takes the results
 * on its own thread.
 */
#ifndef GB_TRANSPORT_NET_TLS_HANDSHAKER_H
#define GB_TRANSPORT_NET_TLS_HANDSHAKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/cpu.h"
#include "transport/tls/tls.h"

typedef struct gb_tls_handshaker gb_tls_handshaker;

/* A finished handshake: fd and session (established) for the caller to
 * adopt, or fd -1 and the reason (the socket is closed, the session
 * freed). addr/laddr are what the caller gave. */
typedef struct gb_tls_handoff {
    int fd;
    gb_tls_session *session;
    char addr[64];
    char laddr[64];
    char why[256];
} gb_tls_handoff;

/* Starts the helper thread on cpus (the server's helper CPUs). wake(ctx)
 * is called on the helper thread when handoffs wait. NULL when the thread
 * or its wake pipe cannot be made. */
gb_tls_handshaker *gb_tls_handshaker_start(const gb_cpuset *cpus, void (*wake)(void *ctx), void *ctx);

/* Hands over fd (non-blocking, accepted) and its new session. False when
 * out of memory: the caller keeps both. */
bool gb_tls_handshaker_add(gb_tls_handshaker *h, int fd, gb_tls_session *s, const char *addr, const char *laddr);

/* The server's `timeout`, in ms (0: none): a handshake whose peer has sent
 * nothing for longer is ended ("idle ..." as its reason), as Redis closes
 * any client idle that long. Cheap to call when nothing changed. */
void gb_tls_handshaker_set_idle_limit(gb_tls_handshaker *h, int64_t ms);

/* Takes up to max finished handshakes into out; how many. */
size_t gb_tls_handshaker_take(gb_tls_handshaker *h, gb_tls_handoff *out, size_t max);

/* Stops and joins the thread; every socket it or its queues hold is
 * closed. */
void gb_tls_handshaker_stop(gb_tls_handshaker *h);

#endif
