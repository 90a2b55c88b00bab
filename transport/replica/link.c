/*
 * The replica's link to its primary (see link.h). Log lines and the order
 * of the handshake follow Redis 7.0's src/replication.c.
 *
 * Every byte from the primary is untrusted: reply lines are bounded, the
 * payload's announced length sizes nothing (it is streamed to a file as it
 * arrives), and the command stream goes through the bounded RESP parser.
 * Any error drops the connection; the cron reconnects a second later.
 *
 * A connection's state lives in its own `link_conn`, freed in its close
 * callback: a dropped connection whose callbacks are still pending never
 * touches the link's next connection.
 *
 * With tls-replication the connection speaks TLS (transport/tls, a client
 * session over memory BIOs): the handshake with the primary's TLS port
 * comes first, its certificate checked against the CA, then the same
 * protocol goes through the session (conn_send encrypts, read_cb
 * decrypts before feed).
 */
#define _POSIX_C_SOURCE 200809L
#include "transport/replica/link.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/base/mem.h"
#include "engine/core/request/blocking.h"
#include "engine/core/replication/failover.h"
#include "engine/core/request/gate.h"
#include "engine/core/replication/repl.h"
#include "engine/core/replication/replica.h"
#include "engine/core/pubsub/tracking.h"
#include "engine/types/t_keys.h"
#include "engine/persist/fileio.h"
#include "engine/persist/persist.h"
#include "engine/persist/repl_load.h"
#include "transport/resp/resp_parser.h"
#include "transport/tls/tls.h"
#include "platform/file.h"

#define READ_CHUNK (64 * 1024)
#define REPLY_LINE_MAX 1024  /* a handshake reply, the payload's "$..." line */
#define EOF_MARK_LEN 40      /* RDB_EOF_MARK_SIZE */
#define RETRY_MS 1000        /* a failed attempt is retried after a second */
#define ACK_PERIOD_MS 1000

/* Handshake steps: what the reply being read answers. */
typedef enum hs_step { HS_PING, HS_AUTH, HS_PORT, HS_IP, HS_CAPA, HS_PSYNC } hs_step;

typedef struct link_conn link_conn;

struct gb_replica_link {
    gb_engine *eng;
    gb_loop *loop;
    uint64_t epoch;           /* the replica state's epoch this link follows */
    link_conn *conn;          /* the connection, or NULL */
    uv_getaddrinfo_t *resolving; /* a lookup in flight, or NULL */
    uint64_t last_attempt_ms; /* monotonic */
    uint64_t last_ack_ms;
    gb_tls_context *tls_ctx;  /* tls-replication's client context, built at each attempt; NULL: plain TCP */
    bool pre_psync;           /* the primary refused PSYNC and was asked for SYNC: it gets no REPLCONF ACK */
};

struct link_conn {
    uv_tcp_t tcp;
    uv_connect_t creq;
    gb_replica_link *link; /* NULL once dropped: callbacks still pending do nothing */
    hs_step step;
    /* a reply line being read (handshake, the payload's header) */
    char line[REPLY_LINE_MAX];
    size_t line_len;
    /* the payload */
    bool have_header;
    bool eof_mode;
    char eof_mark[EOF_MARK_LEN];
    int64_t left;   /* bytes of a sized payload still to come */
    int64_t written;
    /* Where it goes (engine/persist/repl_load.h): a temporary
     * file, or memory with repl-diskless-load. */
    bool in_memory;
    int fd;         /* the temporary file, -1 when none */
    char tmp_path[4096];
    char *mem;      /* the payload so far, in memory */
    size_t mem_cap;
    char tail[EOF_MARK_LEN]; /* the last bytes written, to find a mark split across reads */
    size_t tail_len;
    char window[EOF_MARK_LEN + READ_CHUNK];
    /* the command stream */
    gb_resp_parser parser;
    char *in;
    size_t in_len, in_cap;
    size_t req_start;  /* where the request being parsed starts */
    size_t applied_to; /* bytes before this are applied (a MULTI not yet EXECed is not) */
    bool kill;         /* CLIENT KILL of the master client: dropped at the next cron */
    gb_tls_session *tls; /* tls-replication: the session, or NULL */
    bool tls_ready;      /* its handshake is done */
    char readbuf[READ_CHUNK];
    char plain[READ_CHUNK]; /* what the session decrypted from readbuf */
};

static uint64_t now_ms(const gb_replica_link *l) { return l->eng->now_mono_ms; }
static gb_replica *state_of(gb_replica_link *l) { return gb_replica_of(l->eng); }

/* ---- closing --------------------------------------------------------------- */

static void conn_closed(uv_handle_t *h)
{
    link_conn *c = h->data;
    gb_tls_session_free(c->tls);
    gb_resp_parser_free(&c->parser);
    gb_free(c->in);
    gb_free(c);
}

static void drop_payload(link_conn *c)
{
    gb_free(c->mem);
    c->mem = NULL;
    c->mem_cap = 0;
    if (c->fd >= 0) {
        gb_plat_close(c->fd);
        c->fd = -1;
    }
    if (c->tmp_path[0]) {
        gb_plat_unlink(c->tmp_path);
        c->tmp_path[0] = '\0';
    }
}

static void free_master_client(gb_replica *r)
{
    if (!r->master)
        return;
    gb_client *m = r->master;
    r->master = NULL;
    r->master_db = m->db->id; /* a partial resync goes on in it: the primary sends no SELECT again */
    gb_client_free(m); /* an open MULTI is discarded: the offset stops before it */
}

/* Ends the connection, if any; the state goes back to CONNECT (retried a
 * second from now) while the server still follows a primary. What the
 * last sync established stays for a partial resync. */
static void link_drop(gb_replica_link *l)
{
    gb_replica *r = state_of(l);
    link_conn *c = l->conn;
    if (c) {
        l->conn = NULL;
        c->link = NULL;
        drop_payload(c);
        uv_close((uv_handle_t *)&c->tcp, conn_closed);
    }
    if (l->resolving) {
        uv_cancel((uv_req_t *)l->resolving); /* its callback frees it */
        l->resolving = NULL;
    }
    if (r->state == GB_REPL_CONNECTED)
        r->down_since_s = (uint64_t)time(NULL);
    free_master_client(r);
    r->applying = false;
    r->state = r->host ? GB_REPL_CONNECT : GB_REPL_NONE;
    l->last_attempt_ms = now_ms(l);
}

/* ---- writing ----------------------------------------------------------------- */

typedef struct link_write {
    uv_write_t req;
    char data[];
} link_write;

static void write_done(uv_write_t *req, int status)
{
    (void)status; /* a failed write shows up as a read error or a timeout */
    gb_free(req->data);
}

/* Hands len bytes of w->data to the socket as they are; w is freed when
 * written. */
static void socket_send(link_conn *c, link_write *w, size_t len)
{
    w->req.data = w;
    uv_buf_t b = uv_buf_init(w->data, (unsigned)len);
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, write_done) != 0)
        gb_free(w);
}

/* The TLS records the session has ready (handshake messages, data,
 * alerts) to the socket. */
static void tls_flush(link_conn *c)
{
    size_t pending;
    while ((pending = gb_tls_output_pending(c->tls)) > 0) {
        link_write *w = gb_malloc(sizeof *w + pending);
        size_t got = gb_tls_take_output(c->tls, w->data, pending);
        if (got == 0) {
            gb_free(w);
            return;
        }
        socket_send(c, w, got);
    }
}

/* Sends len bytes of w->data to the primary (through the TLS session
 * when there is one); w is the callee's. */
static void conn_send(link_conn *c, link_write *w, size_t len)
{
    if (!c->tls) {
        socket_send(c, w, len);
        return;
    }
    /* A failed session shows up at the next read, which drops the link. */
    (void)gb_tls_write(c->tls, w->data, len);
    gb_free(w);
    tls_flush(c);
}

/* A command as a RESP array of bulk strings, as Redis's sendCommand
 * (a masterauth of any length included). */
static void send_command(link_conn *c, int argc, const char **argv)
{
    size_t cap = 16;
    for (int i = 0; i < argc; i++)
        cap += strlen(argv[i]) + 32;
    link_write *w = gb_malloc(sizeof *w + cap);
    size_t n = (size_t)snprintf(w->data, cap, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        size_t len = strlen(argv[i]);
        n += (size_t)snprintf(w->data + n, cap - n, "$%zu\r\n", len);
        memcpy(w->data + n, argv[i], len);
        memcpy(w->data + n + len, "\r\n", 2);
        n += len + 2;
    }
    conn_send(c, w, n);
}

static void send_ack(link_conn *c, int64_t offset)
{
    if (c->link && c->link->pre_psync)
        return; /* a primary older than PSYNC has no REPLCONF (Redis's CLIENT_PRE_PSYNC) */
    char off[32];
    snprintf(off, sizeof off, "%lld", (long long)offset);
    send_command(c, 3, (const char *[]){"REPLCONF", "ACK", off});
}

/* ---- the command stream ------------------------------------------------------ */

/* Bytes of whole commands the replica has applied: the offset moves (the
 * primary's offset at sync plus these). The single place the applied
 * stream passes through: a replica's own backlog and sub-replicas are fed
 * from here. */
static void stream_applied(gb_replica_link *l, const char *buf, size_t len)
{
    state_of(l)->offset += (int64_t)len;
    /* The same bytes, as they came, into our backlog and to our own
     * replicas (a chain): master_repl_offset moves with the offset. */
    gb_repl_feed_stream(l->eng, buf, len);
}

static void master_kill(gb_client *m)
{
    gb_replica_link *l = m->conn;
    if (l->conn)
        l->conn->kill = true;
}

static void master_describe(const gb_client *m, gb_client_desc *d)
{
    gb_replica_link *l = m->conn;
    gb_replica *r = state_of(l);
    snprintf(d->addr, sizeof d->addr, "%s:%d", r->host ? r->host : "?", r->port);
    d->fd = -1;
    d->qbuf = l->conn ? l->conn->in_len - l->conn->req_start : 0;
}

static const gb_client_hooks master_hooks = {.close = master_kill, .describe = master_describe};

/* The master client applies the stream from now on, in master_db: after a
 * full sync the database its RDB named (0 when it named none), after a
 * partial one the database the last link was in. */
static void start_stream(gb_replica_link *l)
{
    gb_replica *r = state_of(l);
    r->master = gb_client_new(l->eng, &gb_reply_discard_ops, NULL, &master_hooks, l,
                              GB_CLIENT_AUTHED | GB_CLIENT_OBEY | GB_CLIENT_MASTER);
    if (r->master_db >= 0 && r->master_db < l->eng->ndbs)
        r->master->db = &l->eng->dbs[r->master_db];
    r->state = GB_REPL_CONNECTED;
    r->down_since_s = 0;
    l->last_ack_ms = now_ms(l);
    send_ack(l->conn, r->offset); /* a disk-less sync's primary waits for it to go online */
}

/* REPLCONF from the primary: GETACK is answered with the offset applied
 * before it (Redis's replicationSendAck); the rest needs no answer. */
static void stream_replconf(gb_replica_link *l, int argc, const gb_slice *argv)
{
    if (argc >= 2 && gb_slice_ieq(argv[1], "getack"))
        send_ack(l->conn, state_of(l)->offset);
}

/* Runs one command of the stream on the master client. */
static void stream_run(gb_replica_link *l, int argc, gb_slice *argv)
{
    if (argc == 0)
        return;
    if (gb_slice_ieq(argv[0], "replconf")) {
        stream_replconf(l, argc, argv);
        return;
    }
    gb_replica *r = state_of(l);
    r->applying = true;
    gb_gate_execute(r->master, argc, argv);
    r->applying = false;
    /* A primary propagates what a blocking command did, never the command;
     * one sent anyway must not park the stream behind it. */
    if (r->master->flags & GB_CLIENT_BLOCKED)
        gb_blocking_unblock(r->master, GB_UNBLOCK_DISCONNECT);
}

/* Room for more bytes of the stream. No client-query-buffer-limit: the
 * buffer keeps a whole transaction (from its MULTI, to resume before it if
 * the link drops), and Redis exempts its master client from the limit; a
 * replica refusing a big transaction would drop and resume into the same
 * one for ever. */
static void stream_grow(link_conn *c, size_t more)
{
    if (c->in_len + more <= c->in_cap)
        return;
    size_t want = GB_MAX(c->in_cap * 2, c->in_len + more);
    c->in = gb_realloc(c->in, want);
    c->in_cap = want;
}

static void stream_compact(link_conn *c)
{
    if (c->applied_to == 0)
        return;
    memmove(c->in, c->in + c->applied_to, c->in_len - c->applied_to);
    c->in_len -= c->applied_to;
    c->req_start -= c->applied_to;
    c->applied_to = 0;
}

/* Parses and runs every whole command buffered. False when the link was
 * dropped (a protocol error, a REPLICAOF from the stream). */
static bool stream_process(gb_replica_link *l)
{
    link_conn *c = l->conn;
    gb_replica *r = state_of(l);
    while (c->req_start < c->in_len) {
        size_t consumed = 0;
        char err[256];
        int st = gb_resp_parse(&c->parser, c->in + c->req_start, c->in_len - c->req_start, &consumed, err,
                               sizeof err);
        if (st == GB_RESP_NEED_MORE)
            break;
        if (st == GB_RESP_ERROR) {
            gb_log(GB_LOG_WARNING, "Protocol error (%s) from MASTER %s:%d: closing the link", err, r->host, r->port);
            link_drop(l);
            return false;
        }
        int argc = c->parser.argc;
        gb_slice stackv[GB_RESP_STACK_ARGS];
        gb_slice *argv = argc <= GB_RESP_STACK_ARGS ? stackv : gb_malloc(sizeof *argv * (size_t)argc);
        gb_resp_args_to_slices(&c->parser, c->in + c->req_start, argv);
        uint64_t epoch = l->epoch;
        stream_run(l, argc, argv);
        if (argv != stackv)
            gb_free(argv);
        gb_resp_parser_reset(&c->parser);
        if (l->conn != c || state_of(l)->epoch != epoch)
            return false;
        c->req_start += consumed;
        /* A transaction counts once EXEC ran: a link dropped inside it
         * resumes before its MULTI (Redis's reploff). */
        if (!(r->master->flags & GB_CLIENT_MULTI)) {
            stream_applied(l, c->in + c->applied_to, c->req_start - c->applied_to);
            c->applied_to = c->req_start;
        }
    }
    stream_compact(c);
    return true;
}

/* Buffers bytes of the stream and applies the whole commands among them. */
static bool stream_feed(gb_replica_link *l, const char *data, size_t n)
{
    link_conn *c = l->conn;
    state_of(l)->read_offset += (int64_t)n;
    stream_grow(c, n);
    memcpy(c->in + c->in_len, data, n);
    c->in_len += n;
    return stream_process(l);
}

/* ---- the payload of a full sync --------------------------------------------- */

/* The log holds the data set the sync replaced: a rewrite gives it the
 * new one as its base, or a restart of a promoted replica would replay the
 * old data (engine/persist/persist.h). */
static void restart_log_after_sync(gb_engine *eng)
{
    if (!eng->cfg.appendonly)
        return;
    char err[640] = "";
    if (gb_persist_restart_log_after_sync(gb_persist_of(eng), err, sizeof err) != 0)
        gb_log(GB_LOG_WARNING, "The append only file could not be rewritten after the sync with the MASTER (%s): "
               "run BGREWRITEAOF", err);
}

/* The payload is whole in the temporary file: replace the data set with it.
 * False (logged) when it does not load. */
static bool payload_load(gb_replica_link *l, link_conn *c)
{
    gb_engine *eng = l->eng;
    gb_replica *r = state_of(l);
    if (c->fd >= 0) {
        gb_plat_close(c->fd);
        c->fd = -1;
    }
    gb_sync_payload p = {.path = c->in_memory ? NULL : c->tmp_path, .buf = (const uint8_t *)c->mem,
                         .len = (size_t)c->written};
    int stream_db;
    /* Our replicas follow another history from here: they resync. Not
     * before the payload is here, as Redis 7.0 (replicationAttachToNewMaster
     * as the load begins): they keep their link meanwhile. */
    gb_repl_disconnect_replicas(eng);
    int64_t keys = gb_sync_load(eng, &p, &stream_db);
    drop_payload(c);
    if (keys < 0) {
        r->have_master = false;
        return false;
    }
    gb_log(GB_LOG_NOTICE, "MASTER <-> REPLICA sync: Finished with success (%lld keys)", (long long)keys);
    restart_log_after_sync(eng);
    r->have_master = true;
    r->read_offset = r->offset;
    /* The stream goes on in the database the RDB names: a primary's
     * selects again, a chained replica's (relaying its own primary's
     * stream) does not, and Redis's replica reads repl-stream-db too. */
    r->master_db = stream_db;
    /* The primary's replication ID and offset become ours, with an empty
     * backlog: sub-replicas and, after a promotion, our siblings continue
     * from here. */
    gb_repl_adopt(eng, r->replid, r->offset);
    return true;
}

/* Appends payload bytes where they go; false on a write error. */
static bool payload_append(link_conn *c, const char *p, size_t n)
{
    if (!c->in_memory)
        return gb_write_all(c->fd, p, n) == 0;
    size_t need = (size_t)c->written + n;
    if (need > c->mem_cap) { /* grown by what arrived, never by the length the primary announced */
        size_t cap = GB_MAX(need, c->mem_cap * 2);
        c->mem = gb_realloc(c->mem, cap);
        c->mem_cap = cap;
    }
    memcpy(c->mem + c->written, p, n);
    return true;
}

/* The payload ends at c->written: the EOF mark after it goes. */
static bool payload_truncate(link_conn *c)
{
    return c->in_memory || gb_plat_ftruncate(c->fd, (off_t)c->written) == 0;
}

static bool payload_open(gb_replica_link *l, link_conn *c)
{
    c->in_memory = gb_sync_load_in_memory(l->eng);
    if (c->in_memory)
        return true;
    snprintf(c->tmp_path, sizeof c->tmp_path, "%s/temp-%d.%ld.rdb", l->eng->cfg.dir, (int)time(NULL),
             (long)getpid());
    c->fd = gb_plat_open(c->tmp_path, O_CREAT | O_WRONLY | O_EXCL | O_TRUNC | O_CLOEXEC, 0644);
    if (c->fd < 0) {
        gb_log(GB_LOG_WARNING, "Opening the temp file needed for MASTER <-> REPLICA synchronization: %s",
               strerror(errno));
        c->tmp_path[0] = '\0';
        return false;
    }
    return true;
}

/* The "$<len>" or "$EOF:<mark>" line. False (logged) when it is neither. */
static bool payload_header(gb_replica_link *l, link_conn *c, const char *line)
{
    if (line[0] == '-') {
        gb_log(GB_LOG_WARNING, "MASTER aborted replication with an error: %s", line + 1);
        return false;
    }
    if (line[0] != '$') {
        gb_log(GB_LOG_WARNING, "Bad protocol from MASTER, the first byte is not '$' (we received '%.200s'), are you "
               "sure the host and port are right?", line);
        return false;
    }
    if (strncmp(line + 1, "EOF:", 4) == 0 && strlen(line + 5) == EOF_MARK_LEN) {
        c->eof_mode = true;
        memcpy(c->eof_mark, line + 5, EOF_MARK_LEN);
        state_of(l)->transfer_size = 0;
        gb_log(GB_LOG_NOTICE, "MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to %s",
               gb_sync_load_in_memory(l->eng) ? "memory" : "disk");
    } else {
        char *end;
        errno = 0;
        long long len = strtoll(line + 1, &end, 10);
        if (end == line + 1 || *end || errno || len < 0) {
            gb_log(GB_LOG_WARNING, "Bad protocol from MASTER, the payload length is not a number: '%.200s'", line);
            return false;
        }
        c->left = len;
        state_of(l)->transfer_size = len;
        gb_log(GB_LOG_NOTICE, "MASTER <-> REPLICA sync: receiving %lld bytes from master to %s", len,
               gb_sync_load_in_memory(l->eng) ? "memory" : "disk");
    }
    c->have_header = true;
    return payload_open(l, c);
}

/* Appends a byte to the reply line; returns 1 at its end ('\n', the '\r'
 * before it dropped), 0 for more, -1 when it is too long. */
static int line_push(link_conn *c, char ch)
{
    if (ch == '\n') {
        if (c->line_len && c->line[c->line_len - 1] == '\r')
            c->line_len--;
        c->line[c->line_len] = '\0';
        return 1;
    }
    if (c->line_len + 1 >= sizeof c->line)
        return -1;
    c->line[c->line_len++] = ch;
    return 0;
}

/* Where the mark is in buf, or NULL. */
static const char *find_mark(const char *buf, size_t len, const char *mark)
{
    for (const char *p = buf; len >= EOF_MARK_LEN;) {
        const char *q = memchr(p, mark[0], len - EOF_MARK_LEN + 1);
        if (!q)
            return NULL;
        if (memcmp(q, mark, EOF_MARK_LEN) == 0)
            return q;
        len -= (size_t)(q + 1 - p);
        p = q + 1;
    }
    return NULL;
}

/* Takes bytes of an EOF-marked payload; returns how many belong to it
 * (fewer than n when the mark ended inside them), or -1 on a write error.
 * *done when the mark was found. */
static ssize_t payload_eof_bytes(link_conn *c, const char *data, size_t n, bool *done)
{
    if (!payload_append(c, data, n))
        return -1;
    c->written += (int64_t)n;
    /* The mark may straddle the previous read: look in its tail and this. */
    memcpy(c->window, c->tail, c->tail_len);
    memcpy(c->window + c->tail_len, data, n);
    size_t wlen = c->tail_len + n;
    const char *m = find_mark(c->window, wlen, c->eof_mark);
    if (m) {
        size_t after = wlen - (size_t)(m - c->window) - EOF_MARK_LEN; /* bytes past the mark */
        c->written -= (int64_t)(after + EOF_MARK_LEN);
        if (!payload_truncate(c))
            return -1;
        *done = true;
        return (ssize_t)(n - after);
    }
    c->tail_len = GB_MIN(wlen, (size_t)EOF_MARK_LEN);
    memmove(c->tail, c->window + wlen - c->tail_len, c->tail_len);
    return (ssize_t)n;
}

/* Takes payload bytes; returns how many it used, or -1 when the link was
 * dropped. The rest (after the payload) is the command stream. */
static ssize_t payload_feed(gb_replica_link *l, const char *data, size_t n)
{
    link_conn *c = l->conn;
    gb_replica *r = state_of(l);
    size_t used = 0;
    while (!c->have_header && used < n) {
        char ch = data[used++];
        if (ch == '\n' && c->line_len == 0)
            continue; /* the primary's keep-alive while it prepares the payload */
        int got = line_push(c, ch);
        if (got < 0 || (got == 1 && !payload_header(l, c, c->line))) {
            if (got < 0)
                gb_log(GB_LOG_WARNING, "Bad protocol from MASTER: the payload's header line is too long");
            link_drop(l);
            return -1;
        }
        if (got == 1)
            c->line_len = 0;
    }
    if (!c->have_header)
        return (ssize_t)used;
    bool done = false;
    ssize_t took;
    if (c->eof_mode) {
        took = payload_eof_bytes(c, data + used, n - used, &done);
    } else {
        size_t k = (size_t)GB_MIN((int64_t)(n - used), c->left);
        took = payload_append(c, data + used, k) ? (ssize_t)k : -1;
        c->written += took > 0 ? took : 0;
        c->left -= took > 0 ? took : 0;
        done = c->left == 0;
    }
    if (took < 0) {
        gb_log(GB_LOG_WARNING, "Write error saving the DB from MASTER to disk: %s", strerror(errno));
        link_drop(l);
        return -1;
    }
    r->transfer_read += took;
    r->transfer_last_io_ms = now_ms(l);
    used += (size_t)took;
    if (done) {
        if (!payload_load(l, c)) {
            link_drop(l);
            return -1;
        }
        start_stream(l);
    }
    return (ssize_t)used;
}

/* ---- the handshake ---------------------------------------------------------- */

static void send_psync(gb_replica_link *l, link_conn *c)
{
    gb_replica *r = state_of(l);
    c->step = HS_PSYNC;
    if (r->have_master) {
        char off[32];
        snprintf(off, sizeof off, "%lld", (long long)r->offset + 1);
        gb_log(GB_LOG_NOTICE, "Trying a partial resynchronization (request %s:%s).", r->replid, off);
        /* A primary handing over its role (FAILOVER) asks the target to
         * promote itself first (engine/core/replication/failover.h). */
        if (gb_failover_state_of(l->eng) == GB_FAILOVER_IN_PROGRESS)
            send_command(c, 4, (const char *[]){"PSYNC", r->replid, off, "FAILOVER"});
        else
            send_command(c, 3, (const char *[]){"PSYNC", r->replid, off});
    } else {
        gb_log(GB_LOG_NOTICE, "Partial resynchronization not possible (no cached master)");
        if (gb_failover_state_of(l->eng) == GB_FAILOVER_IN_PROGRESS)
            send_command(c, 4, (const char *[]){"PSYNC", "?", "-1", "FAILOVER"});
        else
            send_command(c, 3, (const char *[]){"PSYNC", "?", "-1"});
    }
}

/* Sends the next step's command after `done` got its reply. */
static void handshake_next(gb_replica_link *l, link_conn *c, hs_step done)
{
    const gb_settings *cfg = &l->eng->cfg;
    switch (done) {
    case HS_PING:
        if (cfg->masterauth && cfg->masterauth[0]) {
            c->step = HS_AUTH;
            if (cfg->masteruser && cfg->masteruser[0])
                send_command(c, 3, (const char *[]){"AUTH", cfg->masteruser, cfg->masterauth});
            else
                send_command(c, 2, (const char *[]){"AUTH", cfg->masterauth});
            return;
        }
        /* fall through */
    case HS_AUTH: {
        char port[16];
        /* Redis's order: replica-announce-port, tls-port under
         * tls-replication, port. */
        int announced = cfg->replica_announce_port          ? cfg->replica_announce_port
                        : cfg->tls_replication && cfg->tls_port ? cfg->tls_port
                                                              : cfg->port;
        snprintf(port, sizeof port, "%d", announced);
        c->step = HS_PORT;
        send_command(c, 3, (const char *[]){"REPLCONF", "listening-port", port});
        return;
    }
    case HS_PORT:
        if (cfg->replica_announce_ip && cfg->replica_announce_ip[0]) {
            c->step = HS_IP;
            send_command(c, 3, (const char *[]){"REPLCONF", "ip-address", cfg->replica_announce_ip});
            return;
        }
        /* fall through */
    case HS_IP:
        c->step = HS_CAPA;
        send_command(c, 5, (const char *[]){"REPLCONF", "capa", "eof", "capa", "psync2"});
        return;
    case HS_CAPA:
        send_psync(l, c);
        return;
    case HS_PSYNC:
        return;
    }
}

/* A replica ID: 40 characters, hexadecimal as Redis writes them. */
static bool valid_replid(const char *s, size_t n)
{
    if (n != 40)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789abcdefABCDEF", s[i]))
            return false;
    return true;
}

/* After +FULLRESYNC or SYNC: the payload comes next. */
static void expect_payload(gb_replica_link *l, link_conn *c)
{
    gb_replica *r = state_of(l);
    r->have_master = false; /* until the payload loads */
    r->state = GB_REPL_TRANSFER;
    r->transfer_size = -1;
    r->transfer_read = 0;
    r->transfer_last_io_ms = now_ms(l);
    c->line_len = 0;
}

/* A primary that does not understand PSYNC (or answered it with anything
 * else but a transient refusal) is asked for SYNC, as Redis 7.0's
 * syncWithMaster does: the payload follows, then the stream. Such a
 * primary names no history, so the data set starts a new one of its own
 * at offset 0 (Redis keeps its stale ID and counts from -1), which no
 * replica of ours can mistake for the one it followed. */
static void fall_back_to_sync(gb_replica_link *l, link_conn *c, const char *line)
{
    gb_replica *r = state_of(l);
    if (strncmp(line, "-ERR", 4) == 0)
        gb_log(GB_LOG_NOTICE, "Master does not support PSYNC or is in error state (reply: %.200s)", line);
    else
        gb_log(GB_LOG_WARNING, "Unexpected reply to PSYNC from master: %.200s", line);
    gb_log(GB_LOG_NOTICE, "Retrying with SYNC...");
    send_command(c, 1, (const char *[]){"SYNC"});
    l->pre_psync = true;
    gb_repl_random_id(r->replid);
    r->offset = 0;
    expect_payload(l, c);
}

/* The reply to PSYNC. False (logged) when the link must be dropped. */
static bool psync_reply(gb_replica_link *l, link_conn *c, const char *line)
{
    gb_replica *r = state_of(l);
    /* A FAILOVER under way ends with any answer that starts a sync, and is
     * aborted by any other (engine/core/replication/failover.h). */
    if (!gb_failover_psync_answered(l->eng, strncmp(line, "+FULLRESYNC ", 12) == 0 ||
                                                (strncmp(line, "+CONTINUE", 9) == 0 && r->have_master)))
        return false;
    /* A primary that refused PSYNC before may accept it now: ACKs resume
     * (Redis's CLIENT_PRE_PSYNC belongs to one connection's master client). */
    l->pre_psync = false;
    if (strncmp(line, "+FULLRESYNC ", 12) == 0) {
        const char *id = line + 12, *sp = strchr(id, ' ');
        char *end;
        long long off = sp ? strtoll(sp + 1, &end, 10) : -1;
        if (!sp || !valid_replid(id, (size_t)(sp - id)) || *end || end == sp + 1 || off < 0) {
            gb_log(GB_LOG_WARNING, "Master replied with wrong +FULLRESYNC syntax: '%.200s'", line);
            return false;
        }
        memcpy(r->replid, id, 40);
        r->replid[40] = '\0';
        r->offset = off;
        gb_log(GB_LOG_NOTICE, "Full resync from master: %s:%lld", r->replid, off);
        expect_payload(l, c);
        return true;
    }
    if (strncmp(line, "+CONTINUE", 9) == 0 && r->have_master) {
        const char *id = line + 9 + (line[9] == ' ');
        if (valid_replid(id, strlen(id)) && memcmp(id, r->replid, 40) != 0) {
            memcpy(r->replid, id, 40);
            gb_log(GB_LOG_NOTICE, "Master replication ID changed to %s", r->replid);
            /* Ours too, the old one kept as the second (our replicas may
             * continue either), and our replicas told by a reconnect. */
            gb_repl_continue_as(l->eng, r->replid);
        }
        gb_log(GB_LOG_NOTICE, "Successful partial resynchronization with master.");
        gb_log(GB_LOG_NOTICE, "MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
        r->read_offset = r->offset;
        start_stream(l);
        return true;
    }
    if (strncmp(line, "-NOMASTERLINK", 13) == 0 || strncmp(line, "-LOADING", 8) == 0) {
        gb_log(GB_LOG_NOTICE, "Master is currently unable to PSYNC but should be in the future: %.200s", line);
        return false;
    }
    fall_back_to_sync(l, c, line);
    return true;
}

/* One reply line of the handshake. False when the link was dropped. */
static bool handshake_reply(gb_replica_link *l, link_conn *c, const char *line)
{
    bool err = line[0] == '-';
    switch (c->step) {
    case HS_PING:
        /* +PONG, or a refusal for want of authentication (AUTH follows);
         * anything else is no Redis primary, which gets no masterauth. */
        if (line[0] != '+' && strncmp(line, "-NOAUTH", 7) != 0 && strncmp(line, "-NOPERM", 7) != 0 &&
            strncmp(line, "-ERR operation not permitted", 28) != 0) {
            gb_log(GB_LOG_WARNING, "Error reply to PING from master: '%.200s'", line);
            return false;
        }
        gb_log(GB_LOG_NOTICE, "Master replied to PING, replication can continue...");
        break;
    case HS_AUTH:
        if (err) {
            gb_log(GB_LOG_WARNING, "Unable to AUTH to MASTER: %.200s", line);
            return false;
        }
        break;
    case HS_PORT:
        if (err)
            gb_log(GB_LOG_NOTICE, "(Non critical) Master does not understand REPLCONF listening-port: %.200s", line);
        break;
    case HS_IP:
        if (err)
            gb_log(GB_LOG_NOTICE, "(Non critical) Master does not understand REPLCONF ip-address: %.200s", line);
        break;
    case HS_CAPA:
        if (err)
            gb_log(GB_LOG_NOTICE, "(Non critical) Master does not understand REPLCONF capa: %.200s", line);
        break;
    case HS_PSYNC:
        return psync_reply(l, c, line);
    }
    handshake_next(l, c, c->step);
    return true;
}

/* Takes handshake bytes; returns how many it used (it stops after the
 * PSYNC reply: what follows is the payload or the stream), -1 when the
 * link was dropped. */
static ssize_t handshake_feed(gb_replica_link *l, const char *data, size_t n)
{
    link_conn *c = l->conn;
    gb_replica *r = state_of(l);
    size_t used = 0;
    while (used < n && r->state == GB_REPL_HANDSHAKE) {
        char ch = data[used++];
        if (ch == '\n' && c->line_len == 0)
            continue; /* a keep-alive newline before the PSYNC reply */
        int got = line_push(c, ch);
        if (got < 0) {
            gb_log(GB_LOG_WARNING, "Bad protocol from MASTER: a reply line over %d bytes", REPLY_LINE_MAX);
            link_drop(l);
            return -1;
        }
        if (got == 0)
            continue;
        c->line_len = 0;
        if (!handshake_reply(l, c, c->line)) {
            link_drop(l);
            return -1;
        }
    }
    return (ssize_t)used;
}

/* ---- reading ---------------------------------------------------------------- */

static void feed(gb_replica_link *l, const char *data, size_t n)
{
    while (n > 0 && l->conn) {
        gb_replica *r = state_of(l);
        ssize_t used;
        if (r->state == GB_REPL_HANDSHAKE) {
            used = handshake_feed(l, data, n);
        } else if (r->state == GB_REPL_TRANSFER) {
            used = payload_feed(l, data, n);
        } else {
            stream_feed(l, data, n);
            return;
        }
        if (used < 0)
            return;
        data += used;
        n -= (size_t)used;
    }
}

static void handshake_start(link_conn *c);

/* Bytes from a TLS primary: the session's handshake first (the protocol's
 * own handshake begins once it is done), then the plaintext to feed. */
static void tls_input(gb_replica_link *l, link_conn *c, size_t n)
{
    char err[256];
    if (gb_tls_feed(c->tls, c->readbuf, n) != 0) {
        gb_log(GB_LOG_WARNING, "Error condition on socket for SYNC: out of memory for TLS input");
        link_drop(l);
        return;
    }
    if (!c->tls_ready) {
        int rc = gb_tls_handshake(c->tls, err, sizeof err);
        tls_flush(c);
        if (rc < 0) {
            gb_log(GB_LOG_WARNING, "Error condition on socket for SYNC: TLS handshake with MASTER failed: %s", err);
            link_drop(l);
            return;
        }
        if (rc == 0)
            return;
        c->tls_ready = true;
        handshake_start(c);
    }
    for (;;) {
        ssize_t got = gb_tls_read(c->tls, c->plain, sizeof c->plain, err, sizeof err);
        tls_flush(c);
        if (got == GB_TLS_WANT_MORE)
            return;
        if (got < 0) {
            if (got == GB_TLS_CLOSED)
                gb_log(GB_LOG_NOTICE, "Connection with master lost.");
            else
                gb_log(GB_LOG_WARNING, "Connection with master lost: TLS: %s", err);
            link_drop(l);
            return;
        }
        feed(l, c->plain, (size_t)got);
        if (l->conn != c)
            return; /* dropped while feeding */
    }
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    link_conn *c = h->data;
    *buf = uv_buf_init(c->readbuf, sizeof c->readbuf);
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    link_conn *c = s->data;
    gb_replica_link *l = c->link;
    if (!l || nread == 0)
        return;
    gb_engine_update_time(l->eng);
    gb_replica *r = state_of(l);
    if (r->epoch != l->epoch) { /* REPLICAOF since: nothing more from this primary */
        link_drop(l);
        return;
    }
    if (nread < 0) {
        if (r->state == GB_REPL_TRANSFER)
            gb_log(GB_LOG_WARNING, "I/O error trying to sync with MASTER: connection lost");
        else if (r->state == GB_REPL_CONNECTED)
            gb_log(GB_LOG_NOTICE, "Connection with master lost.");
        else
            gb_log(GB_LOG_WARNING, "Master closed the connection during the handshake: %s", uv_strerror((int)nread));
        link_drop(l);
        return;
    }
    r->last_io_ms = now_ms(l);
    if (c->tls)
        tls_input(l, c, (size_t)nread);
    else
        feed(l, c->readbuf, (size_t)nread);
    gb_loop_stay_awake(l->loop);
}

/* ---- connecting ------------------------------------------------------------- */

static void connected(uv_connect_t *req, int status)
{
    link_conn *c = req->data;
    gb_replica_link *l = c->link;
    if (!l)
        return;
    gb_replica *r = state_of(l);
    if (status < 0) {
        gb_log(GB_LOG_WARNING, "Error condition on socket for SYNC: %s", uv_strerror(status));
        link_drop(l);
        return;
    }
    gb_log(GB_LOG_NOTICE, "MASTER <-> REPLICA sync started");
    uv_tcp_nodelay(&c->tcp, 1);
    if (uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb) != 0) {
        link_drop(l);
        return;
    }
    r->state = GB_REPL_HANDSHAKE;
    r->last_io_ms = now_ms(l);
    if (l->tls_ctx) { /* TLS first: its ClientHello; PING once it is established (tls_input) */
        char err[256];
        c->tls = gb_tls_client_session_new(l->tls_ctx);
        if (!c->tls || gb_tls_handshake(c->tls, err, sizeof err) < 0) {
            gb_log(GB_LOG_WARNING, "Error condition on socket for SYNC: TLS: %s", c->tls ? err : "out of memory");
            link_drop(l);
            return;
        }
        tls_flush(c);
        return;
    }
    handshake_start(c);
}

/* The protocol's handshake: PING first (Redis's syncWithMaster). */
static void handshake_start(link_conn *c)
{
    c->step = HS_PING;
    send_command(c, 1, (const char *[]){"PING"});
}

static void resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    gb_replica_link *l = req->data;
    bool current = l && l->resolving == req;
    gb_free(req);
    if (!current) {
        if (res)
            uv_freeaddrinfo(res);
        return;
    }
    l->resolving = NULL;
    gb_replica *r = state_of(l);
    if (status < 0 || !res) {
        gb_log(GB_LOG_WARNING, "Unable to connect to MASTER: %s", uv_strerror(status));
        link_drop(l);
        return;
    }
    link_conn *c = gb_calloc(1, sizeof *c);
    c->link = l;
    c->fd = -1;
    /* No bulk limit on the primary's stream, as Redis's for its master:
     * the primary accepted these writes under its own limit (the parser
     * grows with the bytes that come, never by a claimed length). */
    gb_resp_parser_init(&c->parser, INT64_MAX);
    uv_tcp_init(gb_loop_uv(l->loop), &c->tcp);
    c->tcp.data = c;
    c->creq.data = c;
    l->conn = c;
    int rc = uv_tcp_connect(&c->creq, &c->tcp, res->ai_addr, connected);
    uv_freeaddrinfo(res);
    if (rc != 0) {
        gb_log(GB_LOG_WARNING, "Unable to connect to MASTER: %s", uv_strerror(rc));
        link_drop(l);
        return;
    }
    r->state = GB_REPL_CONNECTING;
}

static void link_connect(gb_replica_link *l)
{
    gb_replica *r = state_of(l);
    l->last_attempt_ms = now_ms(l);
    gb_log(GB_LOG_NOTICE, "Connecting to MASTER %s:%d", r->host, r->port);
    /* tls-replication: a client context from the settings of now (a
     * CONFIG SET of a certificate applies at the next attempt). */
    gb_tls_context_free(l->tls_ctx);
    l->tls_ctx = NULL;
    if (l->eng->cfg.tls_replication) {
        char err[512];
        gb_tls_config tc = gb_tls_config_from(&l->eng->cfg);
        l->tls_ctx = gb_tls_client_context_new(&tc, err, sizeof err);
        if (!l->tls_ctx) {
            gb_log(GB_LOG_WARNING, "Unable to connect to MASTER: TLS: %s", err);
            return; /* retried at the next second */
        }
    }
    char port[16];
    snprintf(port, sizeof port, "%d", r->port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    uv_getaddrinfo_t *req = gb_calloc(1, sizeof *req);
    req->data = l;
    l->resolving = req;
    r->state = GB_REPL_CONNECTING;
    r->last_io_ms = now_ms(l); /* repl-timeout counts from the attempt */
    if (uv_getaddrinfo(gb_loop_uv(l->loop), req, resolved, r->host, port, &hints) != 0) {
        l->resolving = NULL;
        gb_free(req);
        link_drop(l);
    }
}

/* ---- the cron -------------------------------------------------------------- */

/* Redis's replicationCron, replica part: timeouts, reconnection, ACKs. */
static void link_timeouts(gb_replica_link *l)
{
    gb_replica *r = state_of(l);
    uint64_t timeout = (uint64_t)l->eng->cfg.repl_timeout * 1000, now = now_ms(l);
    if (!l->conn || now - r->last_io_ms <= timeout)
        return;
    if (r->state == GB_REPL_CONNECTING || r->state == GB_REPL_HANDSHAKE)
        gb_log(GB_LOG_WARNING, "Timeout connecting to the MASTER...");
    else if (r->state == GB_REPL_TRANSFER)
        gb_log(GB_LOG_WARNING, "Timeout receiving bulk data from MASTER... If the problem persists try to set the "
                               "'repl-timeout' parameter in redis.conf to a larger value.");
    else
        gb_log(GB_LOG_WARNING, "MASTER timeout: no data nor PING received...");
    link_drop(l);
}

static void link_cron(void *ctx)
{
    gb_replica_link *l = ctx;
    gb_replica *r = l->eng->replica;
    if (!r)
        return;
    if (r->epoch != l->epoch) {
        link_drop(l);
        l->epoch = r->epoch;
        l->last_attempt_ms = 0; /* a new primary: at once */
    }
    if (l->conn && l->conn->kill) {
        gb_log(GB_LOG_NOTICE, "Connection with master killed by CLIENT KILL.");
        link_drop(l);
    }
    if (!r->host)
        return;
    link_timeouts(l);
    uint64_t now = now_ms(l);
    if (r->state == GB_REPL_CONNECT && !l->resolving && now - l->last_attempt_ms >= RETRY_MS)
        link_connect(l);
    if (r->state == GB_REPL_CONNECTED && now - l->last_ack_ms >= ACK_PERIOD_MS) {
        l->last_ack_ms = now;
        send_ack(l->conn, r->offset);
    }
}

static void link_shutdown(void *ctx)
{
    gb_replica_link *l = ctx;
    if (l->eng->replica) {
        uint64_t keep = l->eng->replica->epoch;
        link_drop(l);
        l->epoch = keep;
    }
}

/* replicaof "<host> <port>" from the configuration ("no one" or empty:
 * a primary). */
static void follow_configured_primary(gb_engine *eng)
{
    const char *v = eng->cfg.replicaof;
    if (!v || !*v || gb_slice_ieq(gb_slice_cstr(v), "no one"))
        return;
    const char *sp = strrchr(v, ' ');
    if (!sp)
        return;
    char host[256];
    snprintf(host, sizeof host, "%.*s", (int)GB_MIN((size_t)(sp - v), sizeof host - 1), v);
    gb_replica_set_master(eng, host, atoi(sp + 1));
}

gb_replica_link *gb_replica_link_new(gb_engine *eng, gb_loop *loop, char *err, size_t errlen)
{
    gb_replica_link *l = gb_calloc(1, sizeof *l);
    l->eng = eng;
    l->loop = loop;
    gb_loop_peer peer = {.name = "replica-link", .ctx = l, .cron = link_cron, .shutdown = link_shutdown};
    if (gb_loop_add_peer(loop, &peer) != 0) {
        snprintf(err, errlen, "the event loop has no room for the replication link");
        gb_free(l);
        return NULL;
    }
    follow_configured_primary(eng);
    return l;
}

void gb_replica_link_free(gb_replica_link *l)
{
    if (!l)
        return;
    gb_tls_context_free(l->tls_ctx);
    gb_free(l);
}
