#define _POSIX_C_SOURCE 200809L
#include "transport/net/server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "engine/base/mem.h"
#include "engine/core/acl/acl.h"
#include "engine/core/memory/client_memory.h"
#include "engine/core/pubsub/pubsub.h"
#include "platform/shm.h"
#include "platform/sockopt.h"
#include "platform/uring.h"
#include "transport/loop/loop.h"
#include "transport/resp/resp_parser.h"
#include "transport/tls/tls_handshaker.h"
#include "transport/tls/tls.h"
#include "transport/resp/resp_writer.h"

/* Reads go into the query buffer in chunks of at least this many bytes. */
#define READ_CHUNK (16 * 1024)
/* Query buffers above this size are shrunk back when they empty out. */
#define QBUF_KEEP (64 * 1024)
/* A TLS connection's socket is read into a scratch buffer this big, whose
 * records are decrypted into the query buffer at once. */
#define TLS_READ_CHUNK (64 * 1024)
/* Replies are encrypted at most this much at a time. */
#define TLS_WRITE_BATCH (256 * 1024)
/* The io_uring (io-engine, docs/io_uring.md): queued requests between two
 * submissions, and the receive buffers every connection's multishot
 * receive draws from (each handed back as soon as its bytes are copied
 * into the query buffer, so they only need to cover one batch of
 * completions; when they run out, a receive ends and is armed again). */
#define URING_DEPTH 4096
#define URING_BUFS 512
/* Submissions a pump makes at most for what its own completions queued
 * (the rest of a short send, a receive armed again); has_pending keeps the
 * loop awake for anything left. */
#define URING_PUMP_ROUNDS 4
#define URING_BUF_SIZE READ_CHUNK

/* The most one write or ring send hands the kernel: a send's length is
 * 32 bits in a uv_buf_t and an io_uring request (and its result an int),
 * so a reply buffer past 4 GiB goes in pieces. */
#define WRITE_BUF_MAX ((size_t)1 << 30)

typedef struct conn conn;

typedef struct write_req {
    uv_write_t req;
    char *data;
    size_t len;
    conn *c;
} write_req;

struct conn {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    gb_net_server *srv;
    gb_client *client;
    gb_resp_parser parser;
    char *qbuf;
    size_t qlen, qcap;
    size_t qpeak;           /* most input held since the last resize check (Redis's querybuf_peak) */
    int64_t last_read_ms;   /* monotonic; with the client's last command, its last interaction */
    int64_t last_write_ms;  /* monotonic: the last write that made progress (timeout counts it, as Redis) */
    size_t write_queue_seen; /* libuv's write queue at the last cron: less now is progress mid-write */
    gb_outbuf out;
    size_t out_peak;        /* most replies the buffer held since out_peak_since (Redis's buf_peak) */
    int64_t out_peak_since;
    size_t inflight;        /* bytes handed to uv_write, not yet confirmed */
    bool closing;
    bool resume_queued;
    bool reply_queued;      /* in srv->reply_head: its replies leave at the end of this iteration */
    bool is_unix;
    bool is_tls;            /* accepted on the TLS port: every byte goes through tls */
    bool tls_peer_done;     /* the peer's close_notify (or a bad record) came after requests still to run */
    gb_tls_session *tls;
    size_t tls_off;         /* how much of out is encrypted and sent or in flight */
    bool tls_user_checked;  /* tls-auth-clients-user was applied once the handshake was done */
    /* io_uring (io-engine): reads arrive as completions and replies leave
     * as ring sends from `sending`, which out's contents move into while
     * the kernel holds them (out keeps gathering replies meanwhile). The
     * conn is freed once its handle has closed and no ring request names
     * it. TLS connections stay on libuv's reads and writes. */
    bool on_uring;
    bool handle_closed;
    unsigned uring_ops;     /* ring requests naming c, not yet completed */
    gb_outbuf sending;
    size_t send_off;        /* how much of sending the kernel has taken */
    /* What arrived while this connection's own script ran (a busy script's
     * pump reaps its receives): the running command's arguments point into
     * qbuf, which taking the bytes could move, so they wait here until the
     * command has ended (drain_resumes). */
    gb_outbuf parked;
    char addr[64];
    char laddr[64];
    conn *next_resume;
    conn *prev_reply, *next_reply; /* in srv->reply_head's list */
};

typedef struct listener {
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    gb_net_server *srv;
    bool is_unix;
    bool is_tls; /* serves tls-port */
    /* Refusing a connection when its conn cannot be allocated: libuv has
     * accepted the socket already and stops listening until it is taken,
     * so it is taken into this handle and closed. One refusal at a time;
     * a connection that arrives meanwhile waits (pending) and is taken
     * when the handle has closed. */
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } spare;
    bool spare_busy;
    bool spare_pending;
    bool retired;       /* closed by CONFIG SET port/bind: freed once its handles have closed */
    bool handle_closed;
    int port;           /* TCP: the port and the bind word it serves (without a leading '-') */
    char addr[256];
    char desc[300];
} listener;

/* Redis's CONFIG_BINDADDR_MAX: most words in `bind`. */
#define GB_BIND_MAX 16

struct gb_net_server {
    gb_engine *eng;
    uv_loop_t *loop;
    /* Every listener (the TCP ones, then the Unix socket's), for the
     * loops that treat them alike. */
    listener *listeners[2 * GB_BIND_MAX + 1];
    int nlisteners;
    listener *tcp[GB_BIND_MAX]; /* serving `port` on the words of `bind` */
    int ntcp;
    listener *unix_listener;
    listener *tls[GB_BIND_MAX]; /* serving `tls-port` on the words of `bind` */
    int ntls;
    int tls_port;
    gb_tls_context *tls_ctx;    /* for new TLS connections (open ones hold their own reference) */
    gb_tls_handshaker *handshaker; /* started with the first TLS connection; NULL: none (yet) */
    uv_async_t handshakes_done;    /* the handshaker's wake-up of this thread */
    size_t handshaking;            /* connections handed to it, not back yet */
    char tls_scratch[TLS_READ_CHUNK];
    int port;                   /* what the TCP listeners serve now (CONFIG SET may change it) */
    char *bind;
    char *unix_path;
    gb_loop *ev;            /* the loop this server is a peer of */
    conn *resume_head;
    conn *reply_head;       /* connections with replies to write at the end of this iteration */
    gb_uring *uring;        /* io-engine io_uring: the plain connections' reads and writes; NULL: libuv's */
    uv_poll_t uring_poll;   /* wakes the loop when completions wait */
    size_t uring_conns;     /* conns on the ring not yet freed (shutdown waits for them) */
    char desc[512];
    bool stopped;
};

/* ---- connection life cycle ---------------------------------------------------- */

static void conn_close(conn *c);
static void conn_process(conn *c);
static void conn_flush(conn *c);
static void conn_write_out(conn *c);
static void uring_write_out(conn *c);

static void conn_free(conn *c)
{
    if (c->client)
        gb_client_free(c->client);
    if (c->on_uring)
        c->srv->uring_conns--;
    gb_resp_parser_free(&c->parser);
    gb_tls_session_free(c->tls);
    gb_free(c->qbuf);
    gb_outbuf_free(&c->out);
    gb_outbuf_free(&c->sending);
    gb_outbuf_free(&c->parked);
    gb_free(c);
}

/* The handle has closed; ring requests still naming c free it when the
 * last completes (uring_completed). */
static void conn_free_cb(uv_handle_t *h)
{
    conn *c = h->data;
    c->handle_closed = true;
    if (c->uring_ops == 0)
        conn_free(c);
}

static void dequeue_replies(conn *c)
{
    if (c->prev_reply)
        c->prev_reply->next_reply = c->next_reply;
    else
        c->srv->reply_head = c->next_reply;
    if (c->next_reply)
        c->next_reply->prev_reply = c->prev_reply;
    c->reply_queued = false;
}

/* Takes c off the resume list (a singly linked list: walked, which only a
 * connection closing while queued pays). */
static void dequeue_resume(conn *c)
{
    for (conn **p = &c->srv->resume_head; *p; p = &(*p)->next_resume)
        if (*p == c) {
            *p = c->next_resume;
            break;
        }
    c->resume_queued = false;
}

static void conn_close(conn *c)
{
    if (c->closing)
        return;
    c->closing = true;
    if (c->reply_queued)
        dequeue_replies(c);
    /* On io_uring c may be freed before this iteration's check phase (its
     * last ring request completing after its handle closed): it must not
     * be left on the list the check phase walks. */
    if (c->resume_queued)
        dequeue_resume(c);
    /* Out of the engine's sight at once: no more blocking wake-ups or
     * CLIENT LIST entries for a connection that is going away. */
    if (c->client) {
        gb_client_free(c->client);
        c->client = NULL;
    }
    /* The ring's requests hold the socket open: they end before uv_close
     * closes the descriptor (and complete, cancelled, later). Should the
     * cancellation not reach the kernel, shutting the socket down ends
     * them too (a receive sees EOF, a send EPIPE). */
    uv_os_fd_t fd;
    if (c->uring_ops && uv_fileno(&c->h.handle, &fd) == 0 && gb_uring_cancel_fd(c->srv->uring, (int)fd) != 0)
        shutdown((int)fd, SHUT_RDWR);
    uv_close(&c->h.handle, conn_free_cb);
}

/* ---- engine hooks --------------------------------------------------------------- */

static void queue_resume(conn *c)
{
    if (c->resume_queued || c->closing)
        return;
    c->resume_queued = true;
    c->next_resume = c->srv->resume_head;
    c->srv->resume_head = c;
    /* The resumed client runs in this iteration's check phase. */
    gb_loop_stay_awake(c->srv->ev);
}

static bool check_output_limits(conn *c);

/* Replies (or pub/sub messages) were added outside the client's own
 * command: they leave at the end of this loop iteration (drain_resumes),
 * one write for however many arrived - a subscriber of a pipelined PUBLISH
 * burst gets one syscall, not one per message. A client past its
 * output-buffer limit is marked for closing instead (closed there too: the
 * engine may be iterating subscribers now). */
static void hook_flush(gb_client *gc)
{
    conn *c = gc->conn;
    if (c->closing)
        return;
    if (!check_output_limits(c))
        return;
    queue_resume(c);
}

static void hook_close(gb_client *gc)
{
    conn *c = gc->conn;
    /* Not synchronously: the engine may be iterating its client list. */
    c->client->flags |= GB_CLIENT_CLOSE_ASAP;
    queue_resume(c);
}

/* A buffer of this client's could not grow: its replies have a hole, so
 * it goes; everyone else is served as before. `now`: closed at once (the
 * caller is not inside the engine); else at the next chance, as a killed
 * client is (this may run inside the engine's iteration over blocked
 * clients). */
static void close_for_oom(conn *c, const char *which, bool now)
{
    if (c->closing)
        return;
    if (!c->client || !(c->client->flags & GB_CLIENT_CLOSE_ASAP))
        gb_log(GB_LOG_WARNING, "Client %s closed: out of memory for its buffers (%s)", c->addr, which);
    if (now || !c->client)
        conn_close(c);
    else
        hook_close(c->client);
}

static void hook_describe(const gb_client *gc, gb_client_desc *d)
{
    const conn *c = gc->conn;
    snprintf(d->addr, sizeof d->addr, "%s", c->addr);
    snprintf(d->laddr, sizeof d->laddr, "%s", c->laddr);
    uv_os_fd_t fd;
    d->fd = uv_fileno(&c->h.handle, &fd) == 0 ? (int)fd : -1;
    d->qbuf = c->qlen;
    d->qbuf_free = c->qcap - c->qlen;
    d->argv_mem = gb_resp_args_bytes(&c->parser);
    /* With io_uring the replies take turns in out and sending: the reply
     * buffer is the larger, whose peak rbp is (libuv: sending is empty). */
    d->rbs = GB_MAX(c->out.cap, c->sending.cap);
    d->rbp = GB_MAX(c->out_peak, c->out.len);
    d->obl = c->out.len;
    d->oll = c->inflight ? 1 : 0; /* one write at a time is handed to the socket */
    d->omem = c->inflight;
    d->obuf = c->out.len + c->inflight;
    d->own_mem = sizeof *c + (size_t)c->parser.cap * sizeof *c->parser.args +
                 (c->sending.cap - GB_MIN(c->sending.cap, c->inflight)); /* io_uring's idle buffer */
}

static int hook_send_with_fds(gb_client *gc, const char *data, size_t len, const int *fds, int nfds)
{
    conn *c = gc->conn;
    if (c->closing)
        return GB_ECLOSED;
    /* Descriptors must travel with these bytes, after everything before
     * them; replies the log's sync holds make this wait (GB_EBUSY). */
    if (!gb_engine_replies_held(c->srv->eng))
        conn_write_out(c);
    if (c->out.len || c->inflight)
        return GB_EBUSY;
    uv_os_fd_t fd;
    if (uv_fileno(&c->h.handle, &fd) != 0)
        return GB_EIO;
    int rc = gb_shm_send_fds((int)fd, fds, nfds, data, len);
    if (rc == 0)
        c->srv->eng->stats.total_net_output_bytes += len;
    return rc;
}

/* A replica's stream (engine/core/replication/repl.h): the bytes as they are, after
 * whatever the output buffer holds; hook_flush sends them. */
static void hook_write_raw(gb_client *gc, const char *data, size_t len)
{
    conn *c = gc->conn;
    if (!c->closing)
        gb_outbuf_append(&c->out, data, len);
}

static void hook_set_nodelay(gb_client *gc, bool on)
{
    conn *c = gc->conn;
    if (!c->closing)
        uv_tcp_nodelay(&c->h.tcp, on); /* not critical if it fails, as in Redis */
}

static const gb_client_hooks conn_hooks = {hook_flush, hook_close, hook_describe, NULL, hook_write_raw,
                                           hook_set_nodelay};
static const gb_client_hooks unix_conn_hooks = {hook_flush, hook_close, hook_describe, hook_send_with_fds,
                                                hook_write_raw, NULL};

static bool is_conn_client(const gb_client *gc) { return gc->hooks == &conn_hooks || gc->hooks == &unix_conn_hooks; }

/* ---- output ---------------------------------------------------------------------- */

#define OBUF_UNCOUNTED (16 * 1024)

static size_t pending_output(const conn *c) { return c->out.len - c->tls_off + c->inflight; }

/* Enforces client-output-buffer-limit (the engine's policy, on what
 * this connection holds and the socket has not taken); returns false if
 * the client is being closed. */
static bool check_output_limits(conn *c)
{
    if (!c->client || (c->client->flags & GB_CLIENT_CLOSE_ASAP))
        return false;
    /* A reply that could not be buffered left a hole: the client goes, at
     * the next chance (this may run inside PUBLISH's walk of subscribers). */
    if (GB_UNLIKELY(gb_outbuf_oom(&c->out))) {
        close_for_oom(c, "output buffer", false);
        return false;
    }
    /* Redis counts its reply list, not the first 16 KB of replies, which
     * sit in the client's own buffer (PROTO_REPLY_CHUNK_BYTES): a 5000-byte
     * reply under `normal 1kb` is served there, and was closed here. */
    size_t held = pending_output(c);
    return !gb_client_obuf_enforce(c->client, held > OBUF_UNCOUNTED ? held - OBUF_UNCOUNTED : 0);
}

static void write_done(uv_write_t *req, int status)
{
    write_req *w = (write_req *)req;
    conn *c = w->c;
    c->inflight -= w->len;
    c->last_write_ms = (int64_t)c->srv->eng->now_mono_ms;
    gb_free(w->data);
    gb_free(w);
    if (c->closing)
        return;
    if (status < 0) {
        conn_close(c);
        return;
    }
    if (c->out.len)
        conn_flush(c);
    else if (c->inflight == 0 && c->client && (c->client->flags & GB_CLIENT_CLOSE_AFTER_REPLY))
        conn_close(c);
}

/* Sends data (gb_malloc'd, taken over): what the socket takes now, the
 * rest through uv_write after what is in flight. False if c was closed. */
static bool send_owned(conn *c, char *data, size_t len)
{
    size_t sent = 0;
    if (c->inflight == 0) {
        uv_buf_t b = uv_buf_init(data, (unsigned)len); /* at most a batch of records */
        int n = uv_try_write(&c->h.stream, &b, 1);
        if (n > 0)
            sent = (size_t)n;
        else if (n < 0 && n != UV_EAGAIN) {
            gb_free(data);
            conn_close(c);
            return false;
        }
    }
    if (sent == len) {
        gb_free(data);
        return true;
    }
    write_req *w = gb_try_malloc(sizeof *w);
    if (!w) {
        gb_free(data);
        close_for_oom(c, "write request", false);
        return false;
    }
    w->data = data;
    w->len = len - sent;
    w->c = c;
    c->inflight += w->len;
    uv_buf_t b = uv_buf_init(data + sent, (unsigned)w->len);
    if (uv_write(&w->req, &c->h.stream, &b, 1, write_done) != 0) {
        c->inflight -= w->len;
        gb_free(data);
        gb_free(w);
        conn_close(c);
        return false;
    }
    return true;
}

/* Sends the records c's TLS session has waiting (handshake messages,
 * alerts, encrypted replies). False if c was closed. */
static bool tls_send(conn *c)
{
    size_t pending = gb_tls_output_pending(c->tls);
    if (pending == 0)
        return true;
    char *data = gb_try_malloc(pending);
    if (!data) {
        close_for_oom(c, "TLS records", false);
        return false;
    }
    return send_owned(c, data, gb_tls_take_output(c->tls, data, pending));
}

/* Encrypts c's replies and sends them. One batch in flight at a time, as
 * for plain connections: write_done continues with what gathered meanwhile.
 * False if c was closed. */
static bool tls_write_out(conn *c)
{
    /* In batches, so a big reply is never held twice (plain and
     * encrypted) in full; the buffer is emptied once all of it is sent. */
    while (c->inflight == 0 && c->tls_off < c->out.len) {
        size_t n = GB_MIN(c->out.len - c->tls_off, (size_t)TLS_WRITE_BATCH);
        if (gb_tls_write(c->tls, c->out.data + c->tls_off, n) != 0) {
            conn_close(c);
            return false;
        }
        c->srv->eng->stats.total_net_output_bytes += n;
        c->tls_off += n;
        if (!tls_send(c))
            return false;
    }
    if (c->tls_off == c->out.len) {
        gb_outbuf_consume(&c->out, c->out.len);
        c->tls_off = 0;
    }
    return true;
}

/* c has replies to send. They leave at the end of this loop iteration
 * (release_replies), after the log has what the iteration's commands wrote
 * (synced there under appendfsync always: one sync for every client, group
 * commit), and all together, as Redis writes them before it sleeps: when
 * many connections are ready at once, the replies go out back to back
 * instead of one between each request read, so a client waiting on several
 * connections wakes once for many of them. Measured at pipeline 1 with the
 * server saturated (docs/benchmarks.md, "Scripts"). */
static void conn_flush(conn *c)
{
    if (c->closing)
        return;
    if (GB_UNLIKELY(gb_outbuf_oom(&c->out))) {
        close_for_oom(c, "output buffer", false);
        return;
    }
    if (c->out.len == 0 || c->reply_queued)
        return;
    gb_net_server *srv = c->srv;
    c->reply_queued = true;
    c->prev_reply = NULL;
    c->next_reply = srv->reply_head;
    if (c->next_reply)
        c->next_reply->prev_reply = c;
    srv->reply_head = c;
    gb_loop_stay_awake(srv->ev); /* the loop must not sleep before the check phase writes them */
}

/* Writes what c's output buffer holds: what the socket takes now, the
 * rest through uv_write. */
static void conn_write_out(conn *c)
{
    if (c->closing)
        return;
    if (GB_UNLIKELY(gb_outbuf_oom(&c->out))) {
        close_for_oom(c, "output buffer", false);
        return;
    }
    if (c->out.len == 0)
        return;
    if (c->out.len > c->out_peak)
        c->out_peak = c->out.len;
    if (c->on_uring) {
        uring_write_out(c);
        return;
    }
    gb_engine *eng = c->srv->eng;
    if (c->tls) {
        if (!tls_write_out(c))
            return;
    } else if (c->inflight == 0) {
        uv_buf_t b = uv_buf_init(c->out.data, (unsigned)GB_MIN(c->out.len, (size_t)UINT32_MAX));
        int n = uv_try_write(&c->h.stream, &b, 1);
        if (n > 0) {
            eng->stats.total_net_output_bytes += (uint64_t)n;
            gb_outbuf_consume(&c->out, (size_t)n);
        } else if (n < 0 && n != UV_EAGAIN) {
            conn_close(c);
            return;
        }
    }
    if (c->out.len == 0) {
        if (c->inflight == 0 && c->client && (c->client->flags & GB_CLIENT_CLOSE_AFTER_REPLY))
            conn_close(c);
        else if (c->out.cap > QBUF_KEEP) {
            gb_outbuf_free(&c->out);
            c->out_peak = 0; /* the peak was that buffer's */
        }
        return;
    }
    if (c->inflight)
        return; /* write_done continues */
    /* The socket is full: hand the buffer to libuv and start a fresh one. */
    write_req *w = gb_try_malloc(sizeof *w);
    if (!w) {
        close_for_oom(c, "write request", false);
        return;
    }
    w->data = c->out.data;
    w->len = c->out.len;
    w->c = c;
    gb_outbuf_init(&c->out);
    c->out_peak = 0; /* the peak was that buffer's */
    c->inflight += w->len;
    eng->stats.total_net_output_bytes += w->len;
    /* A uv_buf_t's length is 32 bits: a reply buffer past 4 GiB (a normal
     * client without an output limit, Redis's default) goes as several
     * (it was cut to its low 32 bits, and the client waited for ever). */
    size_t nbufs = w->len ? (w->len + WRITE_BUF_MAX - 1) / WRITE_BUF_MAX : 1;
    uv_buf_t one, *bufs = nbufs <= 1 ? &one : gb_try_calloc(nbufs, sizeof *bufs);
    int rc = bufs ? 0 : UV_ENOMEM;
    for (size_t i = 0; bufs && i < nbufs; i++) {
        size_t off = i * WRITE_BUF_MAX;
        bufs[i] = uv_buf_init(w->data + off, (unsigned)GB_MIN(w->len - off, WRITE_BUF_MAX));
    }
    if (rc == 0) /* libuv keeps its own copy of the array */
        rc = uv_write(&w->req, &c->h.stream, bufs, (unsigned)nbufs, write_done);
    if (bufs != &one)
        gb_free(bufs);
    if (rc != 0) {
        c->inflight -= w->len;
        gb_free(w->data);
        gb_free(w);
        conn_close(c);
    }
}

/* Writes every queued connection's replies (conn_flush queued them). */
static void write_queued_replies(gb_net_server *srv)
{
    while (srv->reply_head) {
        conn *c = srv->reply_head;
        dequeue_replies(c);
        conn_write_out(c);
    }
}

/* ---- input ----------------------------------------------------------------------- */

/* Room at the end of c's query buffer for the next read (grown towards
 * the end of a big bulk in progress). False when it cannot grow. */
static bool query_room(conn *c, char **room, size_t *len)
{
    size_t want = READ_CHUNK;
    /* A big bulk in progress: read straight towards its end. */
    size_t need = gb_resp_bytes_wanted(&c->parser);
    if (need > c->qlen && need - c->qlen > want)
        want = GB_MIN(need - c->qlen, (size_t)64 * 1024 * 1024);
    if (c->qcap - c->qlen < want) {
        size_t ncap = c->qcap ? c->qcap : READ_CHUNK;
        while (ncap - c->qlen < want)
            ncap *= 2;
        char *q = gb_try_realloc(c->qbuf, ncap);
        if (!q)
            return false;
        c->qbuf = q;
        c->qcap = ncap;
    }
    *room = c->qbuf + c->qlen;
    *len = c->qcap - c->qlen;
    return true;
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    conn *c = h->data;
    if (c->is_tls) { /* records: decrypted into the query buffer by read_cb, before the next read */
        buf->base = c->srv->tls_scratch;
        buf->len = sizeof c->srv->tls_scratch;
        return;
    }
    char *room;
    size_t len;
    if (!query_room(c, &room, &len)) {
        /* libuv then reports UV_ENOBUFS to read_cb, which closes. */
        buf->base = NULL;
        buf->len = 0;
        return;
    }
    buf->base = room;
    buf->len = len;
}

/* tls-auth-clients-user CN (Valkey's): a client whose certificate
 * verified starts as the ACL user its Common Name names, when that user
 * exists and is on; otherwise it stays the default user, as if the setting
 * were off. Once per connection, as soon as its handshake is done and
 * before its first command. */
static void tls_login_by_certificate(conn *c)
{
    gb_engine *eng = c->srv->eng;
    if (c->tls_user_checked || !c->client || !gb_tls_established(c->tls))
        return;
    c->tls_user_checked = true;
    char cn[256];
    if (eng->cfg.tls_auth_clients_user != GB_TLS_AUTH_USER_CN || !gb_tls_peer_common_name(c->tls, cn, sizeof cn))
        return;
    const gb_acl_user *u = gb_acl_find_user(eng, gb_slice_cstr(cn));
    if (!u || (u->flags & GB_ACL_USER_OFF)) {
        for (char *p = cn; *p; p++) /* the certificate's text, not a forged log line */
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
        gb_log(GB_LOG_NOTICE, "TLS: Auto-authentication failed, user '%s' %s (addr=%s)", cn,
               u ? "is disabled" : "not found", c->addr);
        return;
    }
    gb_acl_login(c->client, u);
    gb_log(GB_LOG_VERBOSE, "TLS: Auto-authenticated client as %s (addr=%s)", u->name, c->addr);
}

/* Bytes from a TLS connection's socket: the handshake advances, and what
 * the records decrypt to lands in the query buffer. A failed handshake
 * (no client certificate where one is required, a wrong CA, garbage)
 * closes this connection alone, logged as Redis logs it. False if c was
 * closed. */
static bool tls_input(conn *c, const char *data, size_t len)
{
    if (gb_tls_feed(c->tls, data, len) != 0) {
        close_for_oom(c, "TLS input", true);
        return false;
    }
    for (;;) {
        char *room;
        size_t cap;
        if (!query_room(c, &room, &cap)) {
            close_for_oom(c, "query buffer", true);
            return false;
        }
        char err[320];
        ssize_t n = gb_tls_read(c->tls, room, cap, err, sizeof err);
        tls_login_by_certificate(c); /* a handshake done on the loop: before the first command is parsed */
        if (n > 0) {
            c->qlen += (size_t)n;
            c->srv->eng->stats.total_net_input_bytes += (uint64_t)n;
            continue;
        }
        if (n == GB_TLS_WANT_MORE)
            return tls_send(c);
        if (n == GB_TLS_FAILED)
            gb_log(GB_LOG_VERBOSE, "Error accepting a client connection: %s (addr=%s laddr=%s)", err, c->addr,
                   c->laddr);
        if (!tls_send(c)) /* the alert that says why, when there is one */
            return false;
        /* Requests decrypted before the close_notify (or a bad record)
         * came in the same read: they run first, and the connection
         * closes once their replies are written, as Redis, reading one
         * record at a time, sees the end only after running them. */
        if (c->qlen > 0 && c->client) {
            c->tls_peer_done = true; /* tls_end_after_input closes */
            return true;
        }
        conn_close(c);
        return false;
    }
}

/* After the requests that came before a TLS peer's close ran: the
 * connection closes once their replies are written, or now if there are
 * none. */
static void tls_end_after_input(conn *c)
{
    if (c->closing || !c->tls_peer_done)
        return;
    c->client->flags |= GB_CLIENT_CLOSE_AFTER_REPLY;
    if (c->out.len == 0 && c->inflight == 0 && !c->reply_queued)
        conn_close(c);
}

static void protocol_error(conn *c, const char *err)
{
    gb_engine *eng = c->srv->eng;
    if (c->parser.oom)
        gb_log(GB_LOG_WARNING, "Client %s closed: out of memory for its buffers (argument array)", c->addr);
    else {
        eng->stats.protocol_errors++;
        gb_log(GB_LOG_VERBOSE, "Protocol error (%s) from client %s", err, c->addr);
    }
    gb_reply_error(c->client, err);
    c->client->flags |= GB_CLIENT_CLOSE_AFTER_REPLY;
    c->qlen = 0;
}

/* Parses and executes as many complete requests as the buffer holds. */
static void conn_process(conn *c)
{
    gb_engine *eng = c->srv->eng;
    size_t pos = 0;
    char err[256];
    while (!c->closing && c->client && pos < c->qlen) {
        gb_client *gc = c->client;
        if (gc->flags & (GB_CLIENT_BLOCKED | GB_CLIENT_CLOSE_AFTER_REPLY | GB_CLIENT_CLOSE_ASAP))
            break;
        c->parser.unauthenticated = !(gc->flags & GB_CLIENT_AUTHED);
        c->parser.max_bulk = eng->cfg.proto_max_bulk_len;
        size_t consumed = 0;
        int rc = gb_resp_parse(&c->parser, c->qbuf + pos, c->qlen - pos, &consumed, err, sizeof err);
        if (rc == GB_RESP_NEED_MORE)
            break;
        if (rc == GB_RESP_ERROR) {
            pos = 0;
            protocol_error(c, err);
            break;
        }
        if (!gb_resp_execute(&c->parser, c->qbuf + pos, gc)) {
            close_for_oom(c, "argument array", true);
            return;
        }
        gb_resp_parser_reset(&c->parser);
        pos += consumed;
        if (c->closing || !c->client)
            return;
        if (!check_output_limits(c))
            return;
    }
    if (c->closing)
        return;
    /* Keep the unparsed tail at the front of the buffer. */
    if (pos > 0) {
        memmove(c->qbuf, c->qbuf + pos, c->qlen - pos);
        c->qlen -= pos;
    }
    if (c->qlen == 0 && c->qcap > QBUF_KEEP) {
        gb_free(c->qbuf);
        c->qbuf = NULL;
        c->qcap = 0;
    }
    /* A partly sent large request grows the query buffer with no command
     * run: its memory counts for maxmemory-clients now (Redis does the
     * same after processing the input). */
    if (GB_UNLIKELY(eng->cfg.maxmemory_clients) && c->client)
        gb_client_memory_changed(c->client);
    if (c->client && (c->client->flags & GB_CLIENT_CLOSE_ASAP)) {
        conn_close(c);
        return;
    }
    conn_flush(c);
}

static void input_arrived(conn *c);

/* n bytes were read into the room at the end of c's query buffer. */
static void count_input(conn *c, size_t n)
{
    c->srv->eng->stats.total_net_input_bytes += (uint64_t)n;
    c->qlen += n;
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    conn *c = s->data;
    if (c->closing)
        return;
    if (nread == UV_ENOBUFS) { /* alloc_cb could not grow the query buffer */
        close_for_oom(c, "query buffer", true);
        return;
    }
    if (nread < 0) {
        conn_close(c);
        return;
    }
    if (nread == 0)
        return;
    gb_engine *eng = c->srv->eng;
    gb_engine_update_time(eng);
    if (c->is_tls) {
        if (!tls_input(c, buf->base, (size_t)nread))
            return;
    } else
        count_input(c, (size_t)nread);
    input_arrived(c);
    if (c->is_tls)
        tls_end_after_input(c);
}

/* New bytes are in c's query buffer: the limits, then the requests. */
static void input_arrived(conn *c)
{
    gb_engine *eng = c->srv->eng;
    c->last_read_ms = (int64_t)eng->now_mono_ms;
    if (c->qlen > c->qpeak)
        c->qpeak = c->qlen;
    /* The bytes not yet parsed into arguments, as Redis counts its query
     * buffer: the arguments of a request in progress (kept in place until
     * it is whole) are not (a 1 MB limit closed an MSET of two 600 KB
     * values, which Redis serves). */
    if (c->qlen - gb_resp_args_bytes(&c->parser) > (size_t)eng->cfg.client_qbuf_limit) {
        /* Redis's line, with the client's info and the buffer's size and limit */
        char info[1024] = "";
        if (c->client)
            gb_client_info(c->client, info, sizeof info);
        gb_log(GB_LOG_WARNING,
               "Closing client that reached max query buffer length: %s (%zu bytes, client-query-buffer-limit %lld)",
               info[0] ? info : c->addr, c->qlen, eng->cfg.client_qbuf_limit);
        eng->stats.client_qbuf_disconnects++;
        conn_close(c);
        return;
    }
    conn_process(c);
}

/* ---- io_uring (io-engine, platform/uring.h) ---------------------------------------- */

/* A completion names its conn and what it finished in its tag (conns are
 * at least 8-byte aligned: the low bit is free). */
enum { URING_RECV = 0, URING_SEND = 1 };
_Static_assert(URING_BUF_SIZE <= READ_CHUNK, "query_room leaves READ_CHUNK bytes: a receive buffer must fit");

static uint64_t uring_tag(conn *c, int kind) { return (uint64_t)(uintptr_t)c | (uint64_t)kind; }

/* Queues c's multishot receive (submitted with the iteration's sends). */
static void uring_arm_recv(conn *c)
{
    uv_os_fd_t fd;
    int rc = uv_fileno(&c->h.handle, &fd);
    if (rc == 0)
        rc = gb_uring_recv(c->srv->uring, (int)fd, uring_tag(c, URING_RECV));
    if (rc != 0) {
        conn_close(c);
        return;
    }
    c->uring_ops++;
}

/* Queues a send of what the kernel has not taken of c->sending. */
static void uring_send_rest(conn *c)
{
    uv_os_fd_t fd;
    int rc = uv_fileno(&c->h.handle, &fd);
    if (rc == 0)
        rc = gb_uring_send(c->srv->uring, (int)fd, c->sending.data + c->send_off,
                           GB_MIN(c->sending.len - c->send_off, WRITE_BUF_MAX), uring_tag(c, URING_SEND));
    if (rc != 0) {
        conn_close(c);
        return;
    }
    c->uring_ops++;
}

/* c's replies go to the ring: out's contents move to `sending` and the
 * emptied buffer that was there takes their place, so replies keep
 * gathering without a copy; one send for the lot, submitted with every
 * other connection's at the end of this iteration (flush_replies). One
 * send in flight at a time, as uv_write: its completion continues with
 * what gathered meanwhile. */
static void uring_write_out(conn *c)
{
    if (c->inflight)
        return;
    gb_outbuf emptied = c->sending;
    c->sending = c->out;
    /* out_peak stays: the two buffers take turns holding the same
     * replies, and the cron trims each as the peak says. */
    c->out = emptied;
    c->send_off = 0;
    c->inflight = c->sending.len;
    c->srv->eng->stats.total_net_output_bytes += c->sending.len;
    uring_send_rest(c);
}

static void uring_sent(conn *c, int res)
{
    if (res < 0) {
        conn_close(c); /* EPIPE, ECONNRESET: the peer went */
        return;
    }
    c->send_off += (size_t)res;
    c->inflight = c->sending.len - c->send_off;
    if (res > 0)
        c->last_write_ms = (int64_t)c->srv->eng->now_mono_ms;
    if (c->inflight) { /* a short send: the rest follows */
        uring_send_rest(c);
        return;
    }
    c->sending.len = 0;
    c->send_off = 0;
    if (c->sending.cap > QBUF_KEEP)
        gb_outbuf_free(&c->sending);
    if (c->out.len)
        conn_flush(c);
    else if (c->client && (c->client->flags & GB_CLIENT_CLOSE_AFTER_REPLY))
        conn_close(c);
}

/* A receive's bytes join c's query buffer and run, as read_cb's do. The
 * connection whose script is running (a busy script's pump reaps) keeps
 * them for when its command has finished. False if c was closed. */
static bool uring_take_input(conn *c, const char *data, size_t n)
{
    gb_engine *eng = c->srv->eng;
    if (c->client && c->client == eng->script.caller) {
        gb_outbuf_append(&c->parked, data, n);
        eng->stats.total_net_input_bytes += (uint64_t)n;
        if (gb_outbuf_oom(&c->parked) || c->parked.len + c->qlen > (size_t)eng->cfg.client_qbuf_limit) {
            gb_log(GB_LOG_WARNING, "Closing client that reached max query buffer length (%s): once its script "
                   "has ended", gb_outbuf_oom(&c->parked) ? "out of memory" : "client-query-buffer-limit");
            c->client->flags |= GB_CLIENT_CLOSE_ASAP;
        }
        queue_resume(c);
        return true;
    }
    char *room;
    size_t cap;
    if (!query_room(c, &room, &cap)) {
        close_for_oom(c, "query buffer", true);
        return false;
    }
    memcpy(room, data, GB_MIN(n, cap));
    gb_engine_update_time(eng);
    count_input(c, GB_MIN(n, cap));
    input_arrived(c);
    return !c->closing;
}

static void uring_received(conn *c, const gb_uring_event *ev)
{
    if (ev->res > 0) {
        if (!ev->data || !uring_take_input(c, ev->data, (size_t)ev->res))
            return;
    } else if (ev->res != -ENOBUFS) { /* 0: the peer closed; else an error */
        /* The client whose script is running (the busy pump reaps its
         * events meanwhile) outlives the script, as Redis protects it: it
         * closes when it is resumed after (drain_resumes). Freed now, the
         * script would write its reply, and EXEC read its queue, through
         * a client that is gone. */
        if (c->client && c->client == c->srv->eng->script.caller) {
            c->client->flags |= GB_CLIENT_CLOSE_ASAP;
            queue_resume(c);
            return;
        }
        /* The peer closed its side after requests whose replies are not
         * written yet (`printf 'PING\r\n' | nc -N`): they are written,
         * then the connection closes, as Redis (and the libuv engine) see
         * the end only after writing them. Nothing more is read. */
        if (ev->res == 0 && c->client && (c->out.len || c->inflight || c->reply_queued)) {
            c->client->flags |= GB_CLIENT_CLOSE_AFTER_REPLY;
            return;
        }
        conn_close(c);
        return;
    }
    /* The receive ended (the buffers ran out): armed again, by when the
     * buffers of this batch are back. */
    if (!ev->more && !c->closing)
        uring_arm_recv(c);
}

static void uring_completed(void *ctx, const gb_uring_event *ev)
{
    (void)ctx;
    conn *c = (conn *)(uintptr_t)(ev->tag & ~(uint64_t)1);
    int kind = (int)(ev->tag & 1);
    if (kind == URING_SEND || !ev->more)
        c->uring_ops--;
    if (c->closing) {
        if (c->handle_closed && c->uring_ops == 0)
            conn_free(c);
        return;
    }
    if (kind == URING_SEND)
        uring_sent(c, ev->res);
    else
        uring_received(c, ev);
}

/* Hands the iteration's requests to the kernel (one system call) and
 * runs what has completed. A completion may queue another request (the
 * rest of a short send, a receive armed again): it goes in at once as
 * well, since a request left queued would wait for whatever wakes the loop
 * next (a timer: up to 1/hz seconds per piece of a large reply). */
static void uring_pump(gb_net_server *srv)
{
    for (int round = 0; round < URING_PUMP_ROUNDS; round++) {
        int rc = gb_uring_submit(srv->uring);
        if (rc != 0 && rc != -EBUSY && rc != -EINTR)
            gb_log(GB_LOG_WARNING, "io_uring submit failed: %s", strerror(-rc));
        gb_uring_reap(srv->uring, uring_completed, srv);
        if (gb_uring_queued(srv->uring) == 0)
            return;
    }
}

static void uring_ready(uv_poll_t *p, int status, int events)
{
    (void)status, (void)events;
    gb_net_server *srv = p->data;
    gb_engine_update_time(srv->eng);
    gb_uring_reap(srv->uring, uring_completed, srv);
}

/* io-engine at start-up: the ring, watched by the loop, or libuv's reads
 * and writes (auto says why in the log; io_uring insists). */
static int choose_io_engine(gb_net_server *srv, char *err, size_t errlen)
{
    gb_engine *eng = srv->eng;
    int want = eng->cfg.io_engine;
    eng->io_engine = "libuv";
    if (want == GB_IO_ENGINE_LIBUV)
        return 0;
    char why[256];
    srv->uring = gb_uring_open(URING_DEPTH, URING_BUFS, URING_BUF_SIZE, why, sizeof why);
    if (srv->uring) {
        int rc = uv_poll_init(srv->loop, &srv->uring_poll, gb_uring_fd(srv->uring));
        if (rc == 0) {
            srv->uring_poll.data = srv;
            uv_poll_start(&srv->uring_poll, UV_READABLE, uring_ready);
            eng->io_engine = "io_uring";
            return 0;
        }
        snprintf(why, sizeof why, "the loop cannot watch the ring: %s", uv_strerror(rc));
        gb_uring_close(srv->uring);
        srv->uring = NULL;
    }
    if (want == GB_IO_ENGINE_IO_URING) {
        snprintf(err, errlen, "io-engine io_uring: %s", why);
        return -1;
    }
    gb_log(GB_LOG_NOTICE, "io-engine auto: client sockets use libuv's reads and writes (%s)", why);
    return 0;
}

/* After the loop has closed every handle: the cancelled requests
 * complete, freeing the conns that waited for them, and the ring goes. */
static void close_uring(gb_net_server *srv)
{
    if (!srv->uring)
        return;
    for (int i = 0; srv->uring_conns && i < 200; i++) {
        gb_uring_wait(srv->uring, 10);
        gb_uring_reap(srv->uring, uring_completed, srv);
    }
    gb_uring_close(srv->uring);
    srv->uring = NULL;
}

/* ---- accepting ------------------------------------------------------------------- */

static void describe_tcp_peer(uv_tcp_t *t, char *addr, size_t alen, char *laddr, size_t llen)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    char ip[48]; /* INET6_ADDRSTRLEN: "[ip]:port" always fits a 64-byte field */
    addr[0] = laddr[0] = '\0';
    if (uv_tcp_getpeername(t, (struct sockaddr *)&ss, &len) == 0) {
        int port = 0;
        if (ss.ss_family == AF_INET6) {
            uv_ip6_name((struct sockaddr_in6 *)&ss, ip, sizeof ip);
            port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
            snprintf(addr, alen, "[%.46s]:%d", ip, port & 0xffff);
        } else {
            uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof ip);
            port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
            snprintf(addr, alen, "%.46s:%d", ip, port & 0xffff);
        }
    }
    len = sizeof ss;
    if (uv_tcp_getsockname(t, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET6) {
            uv_ip6_name((struct sockaddr_in6 *)&ss, ip, sizeof ip);
            snprintf(laddr, llen, "[%.46s]:%u", ip, (unsigned)ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
        } else {
            uv_ip4_name((struct sockaddr_in *)&ss, ip, sizeof ip);
            snprintf(laddr, llen, "%.46s:%u", ip, (unsigned)ntohs(((struct sockaddr_in *)&ss)->sin_port));
        }
    }
}

/* A listener closed, or a connection refused before it had a client: the
 * handle is the first member of its listener or conn, which goes with it. */
static void reject_close_cb(uv_handle_t *h) { gb_free(h); }

/* Whether a TCP peer is this host's loopback address, as Redis 7.0 tells
 * (the peer's address is exactly 127.0.0.1 or ::1). */
static bool peer_is_loopback(uv_tcp_t *t)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    if (uv_tcp_getpeername(t, (struct sockaddr *)&ss, &len) != 0)
        return false;
    if (ss.ss_family == AF_INET)
        return ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) == 0x7f000001u;
    if (ss.ss_family == AF_INET6) {
        static const unsigned char one[16] = {[15] = 1};
        return memcmp(&((struct sockaddr_in6 *)&ss)->sin6_addr, one, 16) == 0;
    }
    return false;
}

/* Sends a refusal (one error line) to a connection that never gets a
 * client, and closes it. */
static void refuse_connection(conn *c, const char *text)
{
    char line[2048];
    int n = snprintf(line, sizeof line, "-%s\r\n", text);
    uv_buf_t b = uv_buf_init(line, (unsigned)GB_MIN((size_t)n, sizeof line - 1));
    if (!c->is_tls) /* a TLS client is mid-handshake: plain text would only garble it */
        uv_try_write(&c->h.stream, &b, 1);
    c->srv->eng->stats.rejected_connections++;
    uv_close(&c->h.handle, reject_close_cb);
}

static void on_connection(uv_stream_t *server, int status);

static void spare_closed(uv_handle_t *h)
{
    listener *l = h->data;
    l->spare_busy = false;
    if (l->retired) {
        if (l->handle_closed)
            gb_free(l);
        return;
    }
    if (l->spare_pending) {
        l->spare_pending = false;
        on_connection(&l->h.stream, 0); /* the connection libuv holds for us */
    }
}

/* No memory for a new connection's conn: take the socket libuv accepted
 * into the listener's spare handle, tell the client why, and close it. */
static void refuse_for_oom(listener *l)
{
    if (l->spare_busy) {
        l->spare_pending = true;
        return;
    }
    int rc = l->is_unix ? uv_pipe_init(l->srv->loop, &l->spare.pipe, 0) : uv_tcp_init(l->srv->loop, &l->spare.tcp);
    if (rc != 0)
        return; /* nothing was initialised: libuv keeps the connection */
    l->spare.handle.data = l;
    l->spare_busy = true;
    if (uv_accept(&l->h.stream, &l->spare.stream) == 0) {
        static const char line[] = "-ERR out of memory: connection refused\r\n";
        uv_buf_t b = uv_buf_init((char *)line, sizeof line - 1);
        uv_try_write(&l->spare.stream, &b, 1);
    }
    l->srv->eng->stats.rejected_connections++;
    gb_log(GB_LOG_WARNING, "Connection refused: out of memory for its buffers");
    uv_close(&l->spare.handle, spare_closed);
}

/* A connection whose handle holds an accepted socket: its name, the
 * maxclients check, its engine client, reading. */
/* A connection whose handle holds an accepted socket: its name, socket
 * options, then Redis's order: the client limit (connections in their TLS
 * handshake count), then protected mode. False if it was refused (and is
 * closing); *loopback says whether the peer is this host. */
static bool conn_admit(gb_net_server *srv, conn *c, bool *loopback)
{
    gb_engine *eng = srv->eng;
    *loopback = false;
    if (c->is_unix) {
        snprintf(c->addr, sizeof c->addr, "%s:0", srv->unix_path);
        snprintf(c->laddr, sizeof c->laddr, "%s:0", srv->unix_path);
    } else {
        uv_tcp_nodelay(&c->h.tcp, 1);
        uv_os_fd_t kfd;
        if (eng->cfg.tcp_keepalive > 0 && uv_fileno(&c->h.handle, &kfd) == 0) /* per connection as it is accepted */
            (void)gb_plat_tcp_keepalive((int)kfd, (int)eng->cfg.tcp_keepalive);
        describe_tcp_peer(&c->h.tcp, c->addr, sizeof c->addr, c->laddr, sizeof c->laddr);
        *loopback = peer_is_loopback(&c->h.tcp);
    }
    size_t visible = eng->nclients + srv->handshaking;
    if (visible >= (size_t)eng->cfg.maxclients && srv->uring) {
        /* Closes the ring has seen but not yet reported free places, as
         * libuv's would have been read by now: counted before refusing. */
        uring_pump(srv);
        visible = eng->nclients + srv->handshaking;
    }
    if (visible >= (size_t)eng->cfg.maxclients) {
        refuse_connection(c, "ERR max number of clients reached");
        return false;
    }
    if (!c->is_unix && gb_acl_protected_mode_refuses_remote(eng) && !*loopback) {
        refuse_connection(c, GB_ERR_PROTECTED_MODE);
        return false;
    }
    return true;
}

/* An admitted connection gets its engine client and starts reading. A TLS
 * one without a session yet (no handshake thread) gets one and shakes
 * hands on the loop. */
static void conn_start(gb_net_server *srv, conn *c, bool loopback)
{
    gb_engine *eng = srv->eng;
    gb_resp_parser_init(&c->parser, eng->cfg.proto_max_bulk_len);
    gb_outbuf_init(&c->out);
    uint32_t flags = (c->is_unix ? GB_CLIENT_UNIX : loopback ? GB_CLIENT_LOOPBACK : 0) | (c->is_tls ? GB_CLIENT_TLS : 0);
    c->client = gb_client_new(eng, &gb_resp2_reply_ops, &c->out, c->is_unix ? &unix_conn_hooks : &conn_hooks, c, flags);
    if (!c->client) {
        gb_tls_session_free(c->tls); /* an established one, from the handshake thread */
        c->tls = NULL;
        uv_close(&c->h.handle, reject_close_cb);
        return;
    }
    eng->stats.total_connections_received++;
    if (c->is_tls && !c->tls) {
        /* tls-auth-clients as it is now, as Redis reads it per connection. */
        c->tls = srv->tls_ctx ? gb_tls_session_new(srv->tls_ctx, eng->cfg.tls_auth_clients) : NULL;
        if (!c->tls) {
            close_for_oom(c, "TLS session", true);
            return;
        }
    }
    if (srv->uring && !c->is_tls) {
        c->on_uring = true;
        srv->uring_conns++;
        uring_arm_recv(c);
        return;
    }
    int rc = uv_read_start(&c->h.stream, alloc_cb, read_cb);
    if (rc != 0)
        conn_close(c);
}

static bool hand_to_handshaker(gb_net_server *srv, conn *c);

/* A socket just accepted on listener l: TLS ones go to the handshake
 * thread, the others are served at once. */
static void conn_setup(listener *l, conn *c)
{
    if (l->is_tls && hand_to_handshaker(l->srv, c))
        return;
    bool loopback;
    if (conn_admit(l->srv, c, &loopback))
        conn_start(l->srv, c, loopback);
}

static conn *conn_alloc(listener *l)
{
    conn *c = gb_try_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->srv = l->srv;
    c->is_unix = l->is_unix;
    c->is_tls = l->is_tls;
    return c;
}

static void on_connection(uv_stream_t *server, int status)
{
    listener *l = server->data;
    gb_net_server *srv = l->srv;
    if (status < 0) {
        gb_log(GB_LOG_WARNING, "Accepting a connection failed: %s", uv_strerror(status));
        return;
    }
    gb_engine_update_time(srv->eng);
    conn *c = conn_alloc(l);
    if (!c) {
        refuse_for_oom(l);
        return;
    }
    int rc = l->is_unix ? uv_pipe_init(srv->loop, &c->h.pipe, 0) : uv_tcp_init(srv->loop, &c->h.tcp);
    if (rc == 0)
        rc = uv_accept(server, &c->h.stream);
    c->h.handle.data = c;
    if (rc != 0) {
        gb_log(GB_LOG_WARNING, "Accepting a connection failed: %s", uv_strerror(rc));
        uv_close(&c->h.handle, reject_close_cb);
        return;
    }
    conn_setup(l, c);
}

/* ---- TLS handshakes on the helper thread (tls_handshaker.h) ------------------------------ */

/* A handshake the helper finished: the socket joins the loop as an
 * established TLS connection (its client is made now, so the engine never
 * sees a connection in its handshake), and what the client sent after its
 * Finished, already in the session, is served at once. */
static void adopt_established(gb_net_server *srv, gb_tls_handoff *d)
{
    gb_engine_update_time(srv->eng);
    conn *c = gb_try_calloc(1, sizeof *c);
    int rc = c ? uv_tcp_init(srv->loop, &c->h.tcp) : UV_ENOMEM;
    if (rc != 0) {
        gb_log(GB_LOG_WARNING, "Connection refused: out of memory for its buffers");
        srv->eng->stats.rejected_connections++;
        close(d->fd);
        gb_tls_session_free(d->session);
        gb_free(c);
        return;
    }
    c->srv = srv;
    c->is_tls = true;
    c->h.handle.data = c;
    if (uv_tcp_open(&c->h.tcp, d->fd) != 0) {
        close(d->fd);
        gb_tls_session_free(d->session);
        uv_close(&c->h.handle, reject_close_cb);
        return;
    }
    c->tls = d->session;
    snprintf(c->addr, sizeof c->addr, "%s", d->addr);
    snprintf(c->laddr, sizeof c->laddr, "%s", d->laddr);
    conn_start(srv, c, peer_is_loopback(&c->h.tcp));
    tls_login_by_certificate(c);
    if (!c->closing && c->client && tls_input(c, NULL, 0)) {
        input_arrived(c);
        tls_end_after_input(c);
    }
}

static void on_handshakes_done(uv_async_t *a)
{
    gb_net_server *srv = a->data;
    gb_tls_handoff done[32];
    size_t n;
    while (srv->handshaker && (n = gb_tls_handshaker_take(srv->handshaker, done, GB_ARRAY_LEN(done))) > 0) {
        for (size_t i = 0; i < n; i++) {
            srv->handshaking--;
            if (done[i].fd >= 0)
                adopt_established(srv, &done[i]);
            else
                gb_log(GB_LOG_VERBOSE, "Error accepting a client connection: %s (addr=%s laddr=%s)", done[i].why,
                       done[i].addr, done[i].laddr);
        }
    }
}

/* Called on the helper thread: only the thread-safe wake-up. */
static void wake_for_handshakes(void *ctx)
{
    gb_net_server *srv = ctx;
    uv_async_send(&srv->handshakes_done);
}

static bool start_handshaker(gb_net_server *srv)
{
    if (srv->handshaker)
        return true;
    if (uv_async_init(srv->loop, &srv->handshakes_done, on_handshakes_done) != 0)
        return false;
    srv->handshakes_done.data = srv;
    srv->handshaker = gb_tls_handshaker_start(&srv->eng->cfg.helper_cpus, wake_for_handshakes, srv);
    if (!srv->handshaker) {
        gb_log(GB_LOG_WARNING, "TLS handshakes run on the engine thread: the handshake thread could not start");
        uv_close((uv_handle_t *)&srv->handshakes_done, NULL);
    }
    return srv->handshaker != NULL;
}

/* Admits c (accepted on tls-port) and hands its socket, with a new
 * session, to the handshake thread. libuv owns the accepted descriptor, so
 * the thread gets a duplicate and c's handle closes. False when there is
 * no thread (tls-handshake-thread no, or it could not start): c then
 * shakes hands on the loop. */
static bool hand_to_handshaker(gb_net_server *srv, conn *c)
{
    if (!srv->tls_ctx || !srv->eng->cfg.tls_handshake_thread || !start_handshaker(srv))
        return false;
    bool loopback;
    if (!conn_admit(srv, c, &loopback))
        return true;
    gb_tls_handshaker_set_idle_limit(srv->handshaker, (int64_t)srv->eng->cfg.timeout_s * 1000);
    uv_os_fd_t fd;
    int copy = uv_fileno(&c->h.handle, &fd) == 0 ? dup(fd) : -1;
    gb_tls_session *s = copy >= 0 ? gb_tls_session_new(srv->tls_ctx, srv->eng->cfg.tls_auth_clients) : NULL;
    if (s && gb_tls_handshaker_add(srv->handshaker, copy, s, c->addr, c->laddr)) {
        srv->handshaking++;
    } else {
        gb_log(GB_LOG_WARNING, "Client %s closed: out of memory for its TLS handshake", c->addr);
        gb_tls_session_free(s);
        if (copy >= 0)
            close(copy);
    }
    uv_close(&c->h.handle, reject_close_cb);
    return true;
}

/* ---- serving others while a script is busy -------------------------------------------- */

/* The engine's busy pump (engine/core/request/script_state.h, Redis's
 * processEventsWhileBlocked): called from inside a script that has run
 * past busy-reply-threshold. libuv's loop cannot be re-entered from a
 * callback, so this does one pass by hand: accept what waits on the
 * listeners, read what each connection has (sockets are non-blocking) and
 * run it through the same parser and gate - which answers BUSY to all but
 * SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE and the other allow-busy
 * commands. The loop then writes the replies. The script's own connection
 * is left alone: it is in the middle of its command. */

static void busy_accept(listener *l)
{
    int lfd;
    if (uv_fileno(&l->h.handle, &lfd) != 0)
        return;
    for (int i = 0; i < 16; i++) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            return;
        conn *c = conn_alloc(l);
        if (!c) {
            close(fd);
            l->srv->eng->stats.rejected_connections++;
            gb_log(GB_LOG_WARNING, "Connection refused: out of memory for its buffers");
            return;
        }
        uv_loop_t *loop = l->srv->loop;
        int rc = l->is_unix ? uv_pipe_init(loop, &c->h.pipe, 0) : uv_tcp_init(loop, &c->h.tcp);
        if (rc == 0)
            rc = l->is_unix ? uv_pipe_open(&c->h.pipe, fd) : uv_tcp_open(&c->h.tcp, fd);
        c->h.handle.data = c;
        if (rc != 0) {
            close(fd);
            uv_close(&c->h.handle, reject_close_cb);
            continue;
        }
        conn_setup(l, c);
    }
}

static void busy_read(conn *c)
{
    int fd;
    if (uv_fileno(&c->h.handle, &fd) != 0)
        return;
    while (!c->closing) {
        uv_buf_t b;
        alloc_cb(&c->h.handle, 0, &b);
        if (!b.base) {
            close_for_oom(c, "query buffer", false); /* inside a script: closed after it */
            return;
        }
        ssize_t n = read(fd, b.base, b.len);
        if (n == 0)
            read_cb(&c->h.stream, UV_EOF, &b);
        if (n <= 0)
            return; /* nothing more now (or an error the loop will see) */
        read_cb(&c->h.stream, n, &b);
        if ((size_t)n < b.len)
            return;
    }
}

static void busy_pump(void *ctx)
{
    gb_net_server *srv = ctx;
    gb_engine *eng = srv->eng;
    for (int i = 0; i < srv->nlisteners; i++)
        busy_accept(srv->listeners[i]);
    /* The connections as they are now: commands run here may close some
     * (their conn structs outlive this pass: libuv frees them later). */
    size_t n = 0;
    conn **list = gb_try_calloc(eng->nclients + 1, sizeof *list);
    if (!list)
        return;
    for (gb_client *gc = eng->clients; gc; gc = gc->next)
        if (is_conn_client(gc) && gc != eng->script.caller)
            list[n++] = gc->conn;
    for (size_t i = 0; i < n; i++)
        if (!list[i]->closing && !list[i]->on_uring)
            busy_read(list[i]);
    gb_free(list);
    if (srv->uring) /* the ring's connections: what they sent meanwhile */
        uring_pump(srv);
}

/* ---- the loop's callbacks (this server as a peer of transport/loop) ----------------- */

/* Redis's clientsCronResizeQueryBuffer: a buffer wasting more than 4 KiB
 * is trimmed to what it holds once its client has been idle over 2 s, or,
 * busy, when it is over 32 KiB and twice the most it held since the last
 * check (never below a bulk being read). */
#define QBUF_WASTE (4 * 1024)
#define QBUF_IDLE_MS 2000
#define QBUF_RESIZE_THRESHOLD (32 * 1024)

static void resize_query_buffer(conn *c, int64_t idle_ms)
{
    size_t bulk_end = gb_resp_bytes_wanted(&c->parser);
    if (c->qcap - c->qlen > QBUF_WASTE) {
        size_t target = c->qcap;
        if (idle_ms > QBUF_IDLE_MS)
            target = c->qlen;
        else if (c->qcap > QBUF_RESIZE_THRESHOLD && c->qcap / 2 > c->qpeak)
            target = GB_MAX(GB_MAX(c->qlen, c->qpeak), bulk_end);
        if (target == 0) {
            gb_free(c->qbuf);
            c->qbuf = NULL;
            c->qcap = 0;
        } else if (target < c->qcap) {
            char *q = gb_try_realloc(c->qbuf, target); /* sweep: absorbed, a refused shrink keeps the buffer */
            if (q) {
                c->qbuf = q;
                c->qcap = target;
            }
        }
    }
    c->qpeak = GB_MAX(c->qlen, bulk_end);
}

/* Redis's clientsCronResizeOutputBuffer: a reply buffer whose peak stayed
 * under half its size shrinks to the peak (at least 1 KiB); the peak
 * restarts from what the buffer holds every 5 seconds, so an idle client's
 * buffer goes back to 1 KiB. */
#define OUT_MIN 1024
#define OUT_PEAK_RESET_MS 5000

static void shrink_by_peak(gb_outbuf *b, size_t peak)
{
    size_t half = b->cap / 2;
    if (half >= OUT_MIN && peak < half)
        gb_outbuf_shrink(b, GB_MAX((size_t)OUT_MIN, peak + 1));
}

static void resize_reply_buffer(conn *c, int64_t now_ms)
{
    shrink_by_peak(&c->out, c->out_peak);
    if (!c->inflight) /* io_uring's other reply buffer, once the kernel holds none of it */
        shrink_by_peak(&c->sending, c->out_peak);
    if (now_ms - c->out_peak_since >= OUT_PEAK_RESET_MS) {
        c->out_peak = c->out.len;
        c->out_peak_since = now_ms;
    }
}

static void resize_buffers(gb_engine *eng)
{
    int64_t now = (int64_t)eng->now_mono_ms;
    for (gb_client *gc = eng->clients; gc; gc = gc->next) {
        if (!is_conn_client(gc))
            continue;
        conn *c = gc->conn;
        if (c->closing)
            continue;
        /* Idle: neither a byte read nor a command run (Redis's lastinteraction). */
        resize_query_buffer(c, now - GB_MAX(gc->last_ms, c->last_read_ms));
        resize_reply_buffer(c, now);
    }
}

/* Each cron tick, after the engine's: buffers trimmed, idle clients
 * closed (Redis's clientsCronHandleTimeout: never blocked ones,
 * subscribers, MONITORs, replicas or the primary's link, which wait by
 * nature). */
static void net_cron(void *ctx)
{
    gb_net_server *srv = ctx;
    gb_engine *eng = srv->eng;
    resize_buffers(eng);
    if (srv->handshaker) /* a CONFIG SET timeout reaches the handshakes in progress too */
        gb_tls_handshaker_set_idle_limit(srv->handshaker, (int64_t)eng->cfg.timeout_s * 1000);
    if (eng->cfg.timeout_s > 0) {
        int64_t limit = (int64_t)eng->cfg.timeout_s * 1000;
        for (gb_client *gc = eng->clients; gc; gc = gc->next) {
            /* (A replica: SYNC's old protocol sends no ACKs.) */
            if ((gc->flags & (GB_CLIENT_BLOCKED | GB_CLIENT_RING | GB_CLIENT_REPLICA | GB_CLIENT_MONITOR |
                              GB_CLIENT_OBEY)) ||
                gb_pubsub_client_subscribed(gc) || !is_conn_client(gc))
                continue;
            /* idle: no command, and no byte read or written (Redis's
             * lastinteraction): a request sent slowly, or a big reply read
             * steadily, is not idle */
            conn *c = gc->conn;
            if (!c->on_uring) { /* libuv calls back once a write is whole: its queue shrinking is progress */
                size_t queued = uv_stream_get_write_queue_size(&c->h.stream);
                if (queued < c->write_queue_seen)
                    c->last_write_ms = (int64_t)eng->now_mono_ms;
                c->write_queue_seen = queued;
            }
            int64_t last = GB_MAX(gc->last_ms, GB_MAX(c->last_read_ms, c->last_write_ms));
            if ((int64_t)eng->now_mono_ms - last > limit)
                hook_close(gc);
        }
    }
}

/* The bytes parked while c's script ran join its query buffer. False if
 * c was closed (no memory for them). */
static bool unpark(conn *c)
{
    if (c->qcap - c->qlen < c->parked.len) {
        char *q = gb_try_realloc(c->qbuf, c->qlen + c->parked.len);
        if (!q) {
            close_for_oom(c, "query buffer", true);
            return false;
        }
        c->qbuf = q;
        c->qcap = c->qlen + c->parked.len;
    }
    memcpy(c->qbuf + c->qlen, c->parked.data, c->parked.len);
    c->qlen += c->parked.len;
    gb_outbuf_free(&c->parked);
    return true;
}

static void drain_resumes(void *ctx)
{
    gb_net_server *srv = ctx;
    while (srv->resume_head) {
        conn *c = srv->resume_head;
        srv->resume_head = c->next_resume;
        c->resume_queued = false;
        if (c->closing)
            continue;
        if (c->client && (c->client->flags & GB_CLIENT_CLOSE_ASAP)) {
            conn_close(c);
            continue;
        }
        if (c->parked.len && !unpark(c))
            continue;
        gb_engine_update_time(srv->eng);
        conn_process(c);
    }
}

/* The replies of this iteration; on the ring, submitted together (what
 * completes at once, the sends mostly, is reaped right away). */
static void flush_replies(void *ctx)
{
    gb_net_server *srv = ctx;
    write_queued_replies(srv);
    if (srv->uring)
        uring_pump(srv);
}

/* Resumed connections, replies or ring requests waiting: the loop must
 * not sleep. */
static bool has_pending(void *ctx)
{
    const gb_net_server *srv = ctx;
    return srv->resume_head != NULL || srv->reply_head != NULL || (srv->uring && gb_uring_queued(srv->uring) > 0);
}

/* Shutdown: the listeners and every connection close. */
static void stop_serving(void *ctx)
{
    gb_net_server *srv = ctx;
    if (srv->stopped)
        return;
    srv->stopped = true;
    for (int i = 0; i < srv->nlisteners; i++)
        uv_close(&srv->listeners[i]->h.handle, NULL);
    if (srv->uring)
        uv_close((uv_handle_t *)&srv->uring_poll, NULL);
    if (srv->handshaker) {
        gb_tls_handshaker_stop(srv->handshaker); /* its sockets close: those clients never got in */
        srv->handshaker = NULL;
        uv_close((uv_handle_t *)&srv->handshakes_done, NULL);
    }
    /* Every live connection has an engine client bound to conn_hooks. */
    for (gb_client *gc = srv->eng->clients, *next; gc; gc = next) {
        next = gc->next;
        if (is_conn_client(gc))
            conn_close(gc->conn);
    }
}

/* ---- listeners -------------------------------------------------------------------- */

/* A listener that CONFIG SET port/bind no longer wants: closed, and freed
 * once both its handle and a refusal in flight on its spare have closed. */
static void retired_closed(uv_handle_t *h)
{
    listener *l = h->data;
    l->handle_closed = true;
    if (!l->spare_busy)
        gb_free(l);
}

static void retire_listener(listener *l)
{
    l->retired = true;
    uv_close(&l->h.handle, retired_closed);
}

/* Redis's listenToPort: errors that mean "this host cannot have that kind
 * of socket" skip the address, as does an address the host does not have
 * when the word starts with '-' ("-::1": optional). */
static bool bind_error_skips(int rc, bool optional)
{
    return (rc == UV_EADDRNOTAVAIL && optional) || rc == UV_EAFNOSUPPORT || rc == UV_EPROTONOSUPPORT ||
           rc == UV_ENOPROTOOPT;
}

/* One word of `bind` on port, as Redis's anetTcpServer reads it: an IPv6
 * address if it has a ':', else IPv4; "*" (or "::*") is every address of
 * that family; a host name is resolved. *out is the listener, or NULL when
 * the address is skipped (logged). Returns 0 or a negative libuv code with
 * a one-line reason in err. */
static int listen_tcp(gb_net_server *srv, const char *word, int port, listener **out, char *err, size_t errlen)
{
    *out = NULL;
    bool optional = word[0] == '-';
    const char *addr = word + optional;
    bool v6 = strchr(addr, ':') != NULL;
    const char *node = strcmp(addr, "*") == 0 || (v6 && strcmp(addr, "::*") == 0) ? NULL : addr;
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = v6 ? AF_INET6 : AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    char shown[128];
    snprintf(shown, sizeof shown, "%s%.100s%s:%d", v6 ? "[" : "", addr, v6 ? "]" : "", port);
    uv_getaddrinfo_t req;
    int rc = uv_getaddrinfo(srv->loop, &req, NULL, node, service, &hints); /* no callback: synchronous */
    if (rc != 0) {
        snprintf(err, errlen, "cannot listen on TCP %s: %s", shown, uv_strerror(rc));
        return rc;
    }
    listener *l = gb_try_calloc(1, sizeof *l);
    if (!l) {
        uv_freeaddrinfo(req.addrinfo);
        snprintf(err, errlen, "out of memory creating the TCP listener");
        return UV_ENOMEM;
    }
    l->srv = srv;
    l->port = port;
    snprintf(l->addr, sizeof l->addr, "%s", addr);
    rc = uv_tcp_init_ex(srv->loop, &l->h.tcp, (unsigned)req.addrinfo->ai_family);
    if (rc != 0) {
        gb_free(l);
        l = NULL;
    } else {
        l->h.handle.data = l;
        rc = uv_tcp_bind(&l->h.tcp, req.addrinfo->ai_addr, v6 ? UV_TCP_IPV6ONLY : 0);
        if (rc == 0)
            rc = uv_listen(&l->h.stream, srv->eng->cfg.tcp_backlog, on_connection);
    }
    uv_freeaddrinfo(req.addrinfo);
    if (rc != 0) {
        if (l)
            uv_close(&l->h.handle, reject_close_cb);
        if (bind_error_skips(rc, optional)) {
            gb_log(GB_LOG_WARNING, "Could not create server TCP listening socket %s: %s (skipped)", shown,
                   uv_strerror(rc));
            return 0;
        }
        snprintf(err, errlen, "cannot listen on TCP %s: %s%s", shown, uv_strerror(rc),
                 rc == UV_EADDRINUSE ? " (another server holds the port: stop it or pick --port)" : "");
        return rc;
    }
    snprintf(l->desc, sizeof l->desc, "tcp %s", shown);
    *out = l;
    return 0;
}

/* A listener of the current set on addr:port that the new set may keep,
 * or -1. */
static int reusable_tcp(listener *const *current, int ncurrent, const char *addr, int port, const bool *kept)
{
    for (int i = 0; i < ncurrent; i++)
        if (!kept[i] && current[i]->port == port && strcmp(current[i]->addr, addr) == 0)
            return i;
    return -1;
}

/* The listeners for `bind` on `port` (none for port 0 or an empty bind)
 * into out[*nout]: the listeners of the current set (the plain TCP ones,
 * or the TLS ones) on the same address and port are kept (kept[i] marks
 * them), the others opened. On failure what was opened is closed again
 * and the current listeners are untouched. */
static int open_set(gb_net_server *srv, listener *const *current, int ncurrent, const char *bind, int port,
                    listener **out, int *nout, bool *kept, char *err, size_t errlen)
{
    *nout = 0;
    memset(kept, 0, sizeof(bool) * GB_BIND_MAX);
    if (port == 0 || !bind)
        return 0;
    char *copy = gb_try_strdup(bind);
    if (!copy) {
        snprintf(err, errlen, "out of memory reading the bind addresses");
        return UV_ENOMEM;
    }
    bool opened[GB_BIND_MAX] = {false};
    int rc = 0;
    /* Words split at every space, as Redis 7.0's CONFIG SET does: two
     * spaces in a row make an empty address, which fails to bind there too
     * (the config file and command line were single-spaced). */
    char *next = copy[0] ? copy : NULL;
    while (next && rc == 0) {
        char *w = next;
        char *space = strchr(w, ' ');
        if (space)
            *space = '\0';
        next = space ? space + 1 : NULL;
        if (*nout == GB_BIND_MAX) {
            snprintf(err, errlen, "Too many bind addresses specified.");
            rc = UV_EINVAL;
            break;
        }
        int same = reusable_tcp(current, ncurrent, w + (w[0] == '-'), port, kept);
        if (same >= 0) {
            kept[same] = true;
            out[(*nout)++] = current[same];
            continue;
        }
        listener *l;
        rc = listen_tcp(srv, w, port, &l, err, errlen);
        if (rc == 0 && l) {
            opened[*nout] = true;
            out[(*nout)++] = l;
        }
    }
    gb_free(copy);
    if (rc != 0) {
        for (int i = 0; i < *nout; i++)
            if (opened[i])
                uv_close(&out[i]->h.handle, reject_close_cb);
        *nout = 0;
    }
    return rc;
}

/* The plain TCP set for `bind` on `port` (open_set). */
static int open_tcp_set(gb_net_server *srv, const char *bind, int port, listener **out, int *nout, bool *kept,
                        char *err, size_t errlen)
{
    return open_set(srv, srv->tcp, srv->ntcp, bind, port, out, nout, kept, err, errlen);
}

/* A socket file left by a dead server can be replaced; one a live server
 * answers on cannot. */
static int claim_unix_path(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : (snprintf(err, errlen, "cannot use %s: %s", path, strerror(errno)), -1);
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "cannot use %s: it exists and is not a socket (remove it or pick --unixsocket)", path);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket(): %s", strerror(errno));
        return -1;
    }
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    int live = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    close(fd);
    if (live) {
        snprintf(err, errlen, "cannot listen on %s: another server is accepting connections there "
                              "(stop it or pick --unixsocket)", path);
        return -1;
    }
    unlink(path);
    return 0;
}

static int listen_unix(gb_net_server *srv, const char *path, int perm, char *err, size_t errlen)
{
    if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        snprintf(err, errlen, "unix socket path too long (%zu bytes): %s", strlen(path), path);
        return -1;
    }
    if (claim_unix_path(path, err, errlen) != 0)
        return -1;
    listener *l = gb_try_calloc(1, sizeof *l);
    char *path_copy = gb_try_strdup(path);
    if (!l || !path_copy) {
        gb_free(l);
        gb_free(path_copy);
        snprintf(err, errlen, "out of memory creating the unix socket listener");
        return -1;
    }
    l->srv = srv;
    l->is_unix = true;
    uv_pipe_init(srv->loop, &l->h.pipe, 0);
    l->h.handle.data = l;
    int rc = uv_pipe_bind(&l->h.pipe, path);
    if (rc == 0) {
        /* Permissions before listen(): until then nobody can connect. 0
         * leaves the mode the umask gave, as Redis reads it (a redis.conf's
         * `unixsocketperm 0` made the socket mode 000, for root only). */
        if (perm != 0 && chmod(path, (mode_t)perm) != 0) {
            snprintf(err, errlen, "cannot set permissions %o on %s: %s", (unsigned)perm, path, strerror(errno));
            uv_close(&l->h.handle, reject_close_cb);
            unlink(path);
            gb_free(path_copy);
            return -1;
        }
        rc = uv_listen(&l->h.stream, srv->eng->cfg.tcp_backlog, on_connection);
    }
    if (rc != 0) {
        snprintf(err, errlen, "cannot listen on unix socket %s: %s", path, uv_strerror(rc));
        uv_close(&l->h.handle, reject_close_cb);
        gb_free(path_copy);
        return -1;
    }
    snprintf(l->desc, sizeof l->desc, "unix %s (mode %o)", path, (unsigned)perm);
    srv->unix_path = path_copy;
    srv->unix_listener = l;
    return 0;
}

/* srv->listeners and the description from the TCP set and the socket. */
static void list_listeners(gb_net_server *srv)
{
    srv->nlisteners = 0;
    for (int i = 0; i < srv->ntcp; i++)
        srv->listeners[srv->nlisteners++] = srv->tcp[i];
    for (int i = 0; i < srv->ntls; i++)
        srv->listeners[srv->nlisteners++] = srv->tls[i];
    if (srv->unix_listener)
        srv->listeners[srv->nlisteners++] = srv->unix_listener;
    size_t used = 0;
    srv->desc[0] = '\0';
    for (int i = 0; i < srv->nlisteners && used < sizeof srv->desc; i++)
        used += (size_t)snprintf(srv->desc + used, sizeof srv->desc - used, "%s%s", i ? ", " : "",
                                 srv->listeners[i]->desc);
}

/* The new TCP set replaces the current one: listeners it did not keep are
 * closed (connections they accepted stay). bind is the set's text, which
 * the server takes (gb_malloc'd, or NULL for none). */
static void install_tcp_set(gb_net_server *srv, listener **set, int n, const bool *kept, int port, char *bind)
{
    for (int i = 0; i < srv->ntcp; i++)
        if (!kept[i])
            retire_listener(srv->tcp[i]);
    if (n)
        memcpy(srv->tcp, set, sizeof(listener *) * (size_t)n);
    srv->ntcp = n;
    srv->port = port;
    gb_free(srv->bind);
    srv->bind = bind;
    list_listeners(srv);
}

/* ---- TLS listeners and their context ---------------------------------------------- */

/* Redis configures TLS when the port or a link wants it. */
static bool tls_wanted(const gb_settings *cfg)
{
    return cfg->tls_port != 0 || cfg->tls_replication || cfg->tls_cluster;
}

static gb_tls_context *tls_context_from(const gb_settings *cfg, char *err, size_t errlen)
{
    const gb_tls_config tc = gb_tls_config_from(cfg);
    return gb_tls_context_new(&tc, err, errlen);
}

/* The TLS listeners for `bind` on port (none for 0): the current TLS
 * listeners on the same address and port kept, the others opened; the
 * plain set is left alone (a TLS port equal to `port` cannot be). */
static int open_tls_set(gb_net_server *srv, const char *bind, int port, listener **out, int *nout, bool *kept,
                        char *err, size_t errlen)
{
    *nout = 0;
    memset(kept, 0, sizeof(bool) * GB_BIND_MAX);
    if (port != 0 && port == srv->port && srv->ntcp > 0) {
        snprintf(err, errlen, "cannot listen on TLS port %d: the plain TCP listeners serve it", port);
        return UV_EADDRINUSE;
    }
    int rc = open_set(srv, srv->tls, srv->ntls, bind, port, out, nout, kept, err, errlen);
    for (int i = 0; rc == 0 && i < *nout; i++) {
        out[i]->is_tls = true;
        memcpy(out[i]->desc, "tls", 3); /* "tcp 127.0.0.1:6380" -> "tls ..." */
    }
    return rc;
}

/* The new TLS set replaces the current one (connections stay). */
static void install_tls_set(gb_net_server *srv, listener **set, int n, const bool *kept, int port)
{
    for (int i = 0; i < srv->ntls; i++)
        if (!kept[i])
            retire_listener(srv->tls[i]);
    if (n)
        memcpy(srv->tls, set, sizeof(listener *) * (size_t)n);
    srv->ntls = n;
    srv->tls_port = port;
    list_listeners(srv);
}

/* Moves the TLS listeners to port on bind. Non-zero (reason in err) and
 * nothing changed when it fails. */
static int move_tls_listeners(gb_net_server *srv, const char *bind, int port, char *err, size_t errlen)
{
    listener *set[GB_BIND_MAX];
    bool kept[GB_BIND_MAX];
    int n;
    int rc = open_tls_set(srv, bind, port, set, &n, kept, err, errlen);
    if (rc == 0)
        install_tls_set(srv, set, n, kept, port);
    return rc;
}

/* CONFIG SET tls-* (the engine's gb_listener_hook): a new context for new
 * connections (each open one keeps the context it was accepted with), and
 * the listeners moved when tls-port changed. Nothing changes on failure. */
static int tls_apply(void *ctx, const gb_settings *cfg, char *err, size_t errlen)
{
    gb_net_server *srv = ctx;
    gb_tls_context *fresh = NULL;
    if (tls_wanted(cfg)) {
        fresh = tls_context_from(cfg, err, errlen);
        if (!fresh)
            return GB_TLS_APPLY_CONTEXT;
    }
    if (cfg->tls_port != srv->tls_port) {
        if (move_tls_listeners(srv, srv->bind, cfg->tls_port, err, errlen) != 0) {
            gb_log(GB_LOG_WARNING, "CONFIG SET tls-port: %s", err);
            gb_tls_context_free(fresh);
            return GB_TLS_APPLY_LISTEN;
        }
        gb_log(GB_LOG_NOTICE, "Listening on %s", srv->desc);
    }
    if (fresh || !tls_wanted(cfg)) {
        gb_tls_context_free(srv->tls_ctx);
        srv->tls_ctx = fresh;
    }
    return GB_TLS_APPLY_OK;
}

/* At start-up: the context and the TLS listeners, as Redis's initServer
 * says when they fail. */
static int start_tls(gb_net_server *srv, const gb_settings *cfg, char *err, size_t errlen)
{
    if (!tls_wanted(cfg))
        return 0;
    char why[512];
    srv->tls_ctx = tls_context_from(cfg, why, sizeof why);
    if (!srv->tls_ctx) {
        snprintf(err, errlen, "Failed to configure TLS. Check logs for more info. (%s)", why);
        return -1;
    }
    if (move_tls_listeners(srv, srv->bind, cfg->tls_port, why, sizeof why) != 0) {
        snprintf(err, errlen, "Failed listening on port %d (TLS), aborting. (%s)", cfg->tls_port, why);
        return -1;
    }
    return 0;
}

/* Closes every TCP listener first, as Redis always does, then opens the
 * new set; when that fails too, the old set is opened again. For a new
 * set that this server's own listeners may be in the way of (127.0.0.1
 * -> * on the same port). */
static int rebind_closing_first(gb_net_server *srv, int port, const char *bind, listener **set, int *n, bool *kept,
                                char *err, size_t errlen)
{
    int old_port = srv->port;
    char *old_bind = srv->bind;
    srv->bind = NULL;
    bool none[GB_BIND_MAX] = {false};
    install_tcp_set(srv, NULL, 0, none, 0, NULL);
    int rc = open_tcp_set(srv, bind, port, set, n, kept, err, errlen);
    if (rc == 0) {
        gb_free(old_bind);
        return 0;
    }
    char why[256];
    if (open_tcp_set(srv, old_bind, old_port, set, n, kept, why, sizeof why) == 0) {
        install_tcp_set(srv, set, *n, kept, old_port, old_bind);
    } else {
        gb_log(GB_LOG_WARNING, "The previous TCP listeners could not be reopened: %s", why);
        gb_free(old_bind);
    }
    return rc;
}

/* CONFIG SET port / bind (the engine's gb_listener_hook). The new
 * listeners are opened before the old ones close, so a failure leaves the
 * server as it was; only when an address is taken and one of this
 * server's own listeners on that port may be what holds it does it go the
 * way Redis always goes (rebind_closing_first). */
static int rebind(void *ctx, int port, const char *bind, char *err, size_t errlen)
{
    gb_net_server *srv = ctx;
    size_t len = bind ? strlen(bind) : 0;
    char *text = gb_try_malloc(len + 1);
    if (!text) {
        snprintf(err, errlen, "out of memory");
        return UV_ENOMEM;
    }
    memcpy(text, bind ? bind : "", len + 1);
    listener *set[GB_BIND_MAX];
    bool kept[GB_BIND_MAX];
    int n;
    int rc = open_tcp_set(srv, text, port, set, &n, kept, err, errlen);
    bool own_in_the_way = false;
    for (int i = 0; i < srv->ntcp; i++)
        own_in_the_way |= !kept[i] && srv->tcp[i]->port == port;
    if (rc == UV_EADDRINUSE && own_in_the_way)
        rc = rebind_closing_first(srv, port, text, set, &n, kept, err, errlen);
    if (rc != 0) {
        gb_free(text);
        gb_log(GB_LOG_WARNING, "CONFIG SET port/bind: %s", err);
        return rc;
    }
    install_tcp_set(srv, set, n, kept, port, text);
    /* The TLS listeners follow `bind`, as Redis's changeBindAddr moves both. */
    if (srv->ntls && move_tls_listeners(srv, text, srv->tls_port, err, errlen) != 0)
        gb_log(GB_LOG_WARNING, "CONFIG SET bind: the TLS listeners stay where they were: %s", err);
    gb_log(GB_LOG_NOTICE, "Listening on %s", srv->desc);
    return 0;
}

gb_net_server *gb_net_server_new(gb_engine *eng, gb_loop *ev, char *err, size_t errlen)
{
    uv_loop_t *loop = gb_loop_uv(ev);
    gb_net_server *srv = gb_try_calloc(1, sizeof *srv);
    if (!srv) {
        snprintf(err, errlen, "out of memory creating the network server");
        return NULL;
    }
    srv->eng = eng;
    srv->loop = loop;
    srv->ev = ev;
    const gb_settings *cfg = &eng->cfg;
    if (choose_io_engine(srv, err, errlen) != 0) {
        gb_free(srv);
        return NULL;
    }
    listener *set[GB_BIND_MAX];
    bool kept[GB_BIND_MAX];
    int n;
    if (open_tcp_set(srv, cfg->bind, cfg->port, set, &n, kept, err, errlen) != 0)
        goto fail;
    install_tcp_set(srv, set, n, kept, cfg->port, gb_strdup(cfg->bind ? cfg->bind : ""));
    if (start_tls(srv, cfg, err, errlen) != 0)
        goto fail;
    if (cfg->unixsocket && cfg->unixsocket[0]) {
        if (listen_unix(srv, cfg->unixsocket, cfg->unixsocketperm, err, errlen) != 0)
            goto fail;
    }
    list_listeners(srv);
    if (srv->nlisteners == 0) {
        snprintf(err, errlen, "nothing to listen on: no TCP address (--port 0 or an empty --bind) and --unixsocket "
                              "is empty");
        goto fail;
    }

    eng->listeners = (gb_listener_hook){rebind, srv, tls_apply};
    const gb_loop_peer peer = {
        .name = "sockets",
        .ctx = srv,
        .resume = drain_resumes,
        .flush = flush_replies,
        .pending = has_pending,
        .cron = net_cron,
        .busy_pump = busy_pump,
        .shutdown = stop_serving,
    };
    if (gb_loop_add_peer(ev, &peer) != 0) {
        snprintf(err, errlen, "the event loop has no room for the socket listeners");
        eng->listeners = (gb_listener_hook){NULL, NULL, NULL};
        goto fail;
    }
    return srv;
fail:
    list_listeners(srv);
    for (int i = 0; i < srv->nlisteners; i++)
        uv_close(&srv->listeners[i]->h.handle, reject_close_cb);
    if (srv->uring)
        uv_close((uv_handle_t *)&srv->uring_poll, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    close_uring(srv);
    if (srv->unix_path) {
        unlink(srv->unix_path);
        gb_free(srv->unix_path);
    }
    gb_free(srv->bind);
    gb_tls_context_free(srv->tls_ctx);
    gb_free(srv);
    return NULL;
}

void gb_net_server_free(gb_net_server *srv)
{
    if (!srv)
        return;
    srv->eng->listeners = (gb_listener_hook){NULL, NULL, NULL};
    close_uring(srv);
    for (int i = 0; i < srv->nlisteners; i++)
        gb_free(srv->listeners[i]);
    if (srv->unix_path) {
        unlink(srv->unix_path);
        gb_free(srv->unix_path);
    }
    gb_free(srv->bind);
    gb_tls_context_free(srv->tls_ctx);
    gb_free(srv);
}

const char *gb_net_server_describe(const gb_net_server *srv) { return srv->desc; }

