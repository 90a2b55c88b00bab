/*
 * TLS for the socket server's connections and the replication link
 * (docs/tls.md): OpenSSL 3 over
 * memory BIOs. The socket I/O stays with the loop (transport/net): the
 * bytes read from a socket are fed in (gb_tls_feed), the decrypted bytes
 * come out (gb_tls_read) for the connection's RESP path; replies go in
 * (gb_tls_write) and the records to send come out (gb_tls_take_output).
 * The handshake runs on the socket server's handshake thread
 * (gb_tls_handshake, transport/tls/tls_handshaker.h), or inside
 * gb_tls_read as its bytes arrive when there is no such thread; it never
 * blocks the loop either way.
 *
 * This module knows nothing of libuv or the engine: it is a pure
 * bytes-in/bytes-out layer (test/fuzz/fuzz_tls.c drives it alone).
 */
#ifndef GB_TRANSPORT_TLS_TLS_H
#define GB_TRANSPORT_TLS_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* tls-auth-clients (Redis's values). */
enum { GB_TLS_AUTH_NO = 0, GB_TLS_AUTH_YES = 1, GB_TLS_AUTH_OPTIONAL = 2 };
/* tls-auth-clients-user (Valkey's values): off, or the client
 * certificate's CN names the ACL user the connection starts as. */
enum { GB_TLS_AUTH_USER_OFF = 0, GB_TLS_AUTH_USER_CN = 1 };

/* What a context is built from: Redis 7.0's tls-* options. NULL or empty
 * strings are unset. */
typedef struct gb_tls_config {
    const char *cert_file;
    const char *key_file;
    const char *key_file_pass;
    const char *ca_cert_file;
    const char *ca_cert_dir;
    const char *protocols;
    const char *ciphers;
    const char *ciphersuites;
    const char *dh_params_file;
    bool prefer_server_ciphers;
    bool session_caching;
    int session_cache_size;
    int session_cache_timeout;
    /* Whether a CA is needed: tls-auth-clients other than no, or TLS on
     * the replication link or the cluster bus. */
    bool needs_ca;
    /* The identity of the connections this server makes (the replication
     * link): tls-client-cert-file and its key; unset, the server's own. */
    const char *client_cert_file;
    const char *client_key_file;
    const char *client_key_file_pass;
} gb_tls_config;

struct gb_settings;
/* The tls-* settings as a gb_tls_config (its strings point into cfg). */
gb_tls_config gb_tls_config_from(const struct gb_settings *cfg);

typedef struct gb_tls_context gb_tls_context;
typedef struct gb_tls_session gb_tls_session;

/* Builds a server context. NULL on failure, with the reason logged in
 * Redis's words (and the last one in err). */
gb_tls_context *gb_tls_context_new(const gb_tls_config *cfg, char *err, size_t errlen);

/* Releases the context; sessions made from it keep what they need, so
 * replacing a context (CONFIG SET tls-cert-file) leaves open connections
 * as they are. NULL is allowed. */
void gb_tls_context_free(gb_tls_context *ctx);

/* A client context, for the connections this server makes (Redis's
 * client-side SSL_CTX): the client identity (or the server's), the CA the
 * peer's certificate must chain to (it is always checked), the protocols
 * and ciphers. NULL on failure, as gb_tls_context_new. */
gb_tls_context *gb_tls_client_context_new(const gb_tls_config *cfg, char *err, size_t errlen);

/* A server-side session for one accepted connection; auth is
 * tls-auth-clients. NULL when out of memory. */
gb_tls_session *gb_tls_session_new(gb_tls_context *ctx, int auth);
/* A client-side session (from a client context): gb_tls_handshake starts
 * it, its ClientHello then waits in the output. NULL when out of memory. */
gb_tls_session *gb_tls_client_session_new(gb_tls_context *ctx);
void gb_tls_session_free(gb_tls_session *s);

/* Hands bytes read from the socket to the session. 0, or -1 when out of
 * memory. */
int gb_tls_feed(gb_tls_session *s, const char *data, size_t len);

/* gb_tls_read results besides a count of bytes. */
enum { GB_TLS_WANT_MORE = 0, GB_TLS_FAILED = -1, GB_TLS_CLOSED = -2 };

/* Advances the handshake and decrypts: > 0 bytes of plaintext put in buf,
 * GB_TLS_WANT_MORE (the socket must bring more), GB_TLS_CLOSED (the peer
 * said close_notify) or GB_TLS_FAILED with the reason in err (a failed
 * handshake, a bad record). Output may be waiting afterwards (an alert,
 * handshake messages): see gb_tls_take_output. */
ssize_t gb_tls_read(gb_tls_session *s, char *buf, size_t cap, char *err, size_t errlen);

/* Advances the handshake alone (no application data is read: what
 * follows the client's Finished stays for gb_tls_read). 1 once it is
 * established, 0 while it needs more bytes, -1 when it failed (reason in
 * err). Output may be waiting afterwards. */
int gb_tls_handshake(gb_tls_session *s, char *err, size_t errlen);

/* Encrypts len bytes of plaintext into records waiting to be sent. 0, or
 * -1 (the session failed, or it is not established). */
int gb_tls_write(gb_tls_session *s, const char *data, size_t len);

/* Whether the handshake is done (and the session has not failed). */
bool gb_tls_established(const gb_tls_session *s);

/* The Common Name of the certificate the peer presented, when the
 * session is established and the certificate verified against the CA
 * (tls-auth-clients yes or optional; with no, none is asked for): true
 * with the name (UTF-8, NUL-terminated) in out, false when there is none
 * or it does not fit cap or holds a NUL. */
bool gb_tls_peer_common_name(const gb_tls_session *s, char *out, size_t cap);

/* How many bytes of records wait to be sent, and taking them: copies up
 * to cap of them into buf and returns how many. */
size_t gb_tls_output_pending(const gb_tls_session *s);
size_t gb_tls_take_output(gb_tls_session *s, char *buf, size_t cap);

#endif
