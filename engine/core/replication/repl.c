#include "engine/core/replication/repl.h"

#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>
#include <string.h>

#include "engine/base/mem.h"
#include "engine/base/random.h"
#include "engine/base/splitargs.h"
#include "engine/base/strbuf.h"
#include "engine/core/replication/failover.h"
#include "engine/core/replication/replica.h"
#include "engine/base/util.h"
#include "engine/core/request/blocking.h"
#include "engine/core/memory/client_memory.h"
#include "engine/core/engine.h"

/* ---- the backlog ring ------------------------------------------------------- */

/* The first allocation, and the step the ring grows by at least. */
#define BACKLOG_FIRST_CAP ((size_t)16 * 1024)

void gb_repl_backlog_init(gb_repl_backlog *b, size_t size, int64_t next_offset)
{
    b->asked = size;
    b->size = size ? size : 1;
    b->cap = GB_MIN(b->size, BACKLOG_FIRST_CAP);
    b->buf = gb_try_malloc(b->cap);
    if (!b->buf) { /* cannot happen at 16 KB but for a broken heap: one byte */
        b->cap = b->size = 1;
        b->buf = gb_malloc(1);
    }
    b->idx = 0;
    b->histlen = 0;
    b->offset = next_offset;
}

void gb_repl_backlog_free(gb_repl_backlog *b)
{
    gb_free(b->buf);
    b->buf = NULL;
    b->asked = b->size = b->cap = b->idx = b->histlen = 0;
}

/* Makes room for len more bytes while the ring is below its size (still
 * unwrapped, so a realloc keeps the bytes in order). */
static void grow_for(gb_repl_backlog *b, size_t len)
{
    if (b->cap >= b->size || b->histlen + len <= b->cap)
        return;
    size_t want = GB_MAX(b->cap * 2, b->histlen + len);
    want = GB_MIN(want, b->size);
    char *p = gb_try_realloc(b->buf, want);
    if (!p) {
        b->size = b->cap; /* no more memory for it: the ring it has is the backlog */
        return;
    }
    b->buf = p;
    b->cap = want;
    /* Unwrapped, the bytes held are [0, histlen): the next byte goes after
     * them. (An append that filled the old capacity exactly left idx at 0,
     * which in the larger ring would write over the oldest bytes.) */
    b->idx = b->histlen;
}

void gb_repl_backlog_append(gb_repl_backlog *b, const char *p, size_t len)
{
    grow_for(b, len);
    if (len >= b->cap) { /* only the tail fits */
        b->offset += (int64_t)(b->histlen + len - b->cap);
        memcpy(b->buf, p + len - b->cap, b->cap);
        b->idx = 0;
        b->histlen = b->cap;
        return;
    }
    size_t first = GB_MIN(len, b->cap - b->idx);
    memcpy(b->buf + b->idx, p, first);
    memcpy(b->buf, p + first, len - first);
    b->idx = (b->idx + len) % b->cap;
    size_t held = b->histlen + len;
    if (held > b->cap) {
        b->offset += (int64_t)(held - b->cap);
        held = b->cap;
    }
    b->histlen = held;
}

bool gb_repl_backlog_covers(const gb_repl_backlog *b, int64_t offset)
{
    return b->buf && offset >= b->offset && offset <= b->offset + (int64_t)b->histlen;
}

size_t gb_repl_backlog_copy_from(const gb_repl_backlog *b, int64_t offset,
                                 void (*out)(void *ctx, const char *p, size_t n), void *ctx)
{
    size_t skip = (size_t)(offset - b->offset);
    size_t n = b->histlen - skip;
    /* The oldest byte held sits histlen bytes behind idx. */
    size_t start = (b->idx + b->cap - b->histlen + skip) % b->cap;
    size_t first = GB_MIN(n, b->cap - start);
    if (first)
        out(ctx, b->buf + start, first);
    if (n > first)
        out(ctx, b->buf, n - first);
    return n;
}

static void append_to(void *ctx, const char *p, size_t n) { gb_repl_backlog_append(ctx, p, n); }

void gb_repl_backlog_resize(gb_repl_backlog *b, size_t size)
{
    if (size == b->asked || !b->buf)
        return;
    gb_repl_backlog fresh;
    size_t keep = GB_MIN(b->histlen, size);
    int64_t from = b->offset + (int64_t)(b->histlen - keep);
    gb_repl_backlog_init(&fresh, size, from);
    gb_repl_backlog_copy_from(b, from, append_to, &fresh);
    gb_repl_backlog_free(b);
    *b = fresh;
}

/* ---- state ------------------------------------------------------------------ */

/* A replica's way to online: a full sync waits for the background scan
 * to start (REPLICA_WAIT_SCAN, Redis's wait_bgsave_start), then gets the
 * RDB while the stream produced meanwhile is held back (REPLICA_TRANSFER),
 * then the held stream and the live one. After an RDB ended by its EOF
 * mark the stream waits for the replica's first REPLCONF ACK
 * (REPLICA_WAIT_ACK, Redis's repl_put_online_on_ack): a replica finds the
 * mark only in the last bytes of a read, so nothing may follow it before
 * the replica has loaded the RDB. */
enum replica_state { REPLICA_NONE = 0, REPLICA_WAIT_SCAN, REPLICA_TRANSFER, REPLICA_WAIT_ACK, REPLICA_ONLINE };

/* A client that spoke REPLCONF or became a replica. */
typedef struct repl_link {
    gb_client *c;
    enum replica_state state;
    int listening_port;
    char ip[256];         /* REPLCONF ip-address (Redis's NET_HOST_STR_LEN); empty: the peer's address */
    int64_t ack_off;      /* the stream it processed (REPLCONF ACK) */
    int64_t ack_time_ms;  /* wall clock of its last ACK */
    /* Bytes handed to its transport so far, and where the full sync's RDB
     * ended among them: the RDB is not stream, and not held to the output
     * limit (Redis sends it outside the replica's buffer). */
    uint64_t appended;
    uint64_t rdb_end;
    bool psync;           /* a full sync asked by PSYNC: +FULLRESYNC goes first (SYNC: nothing) */
    bool eof_capa;        /* REPLCONF capa eof: it takes an RDB of unknown length ($EOF:<mark>) */
    bool psync2_capa;     /* REPLCONF capa psync2: +CONTINUE names the replication ID */
    bool sync_only;       /* it asked with SYNC: a replica from before PSYNC, which sends no ACK */
    /* REPLCONF rdb-only 1: it wants the RDB and no stream, and is closed
     * after it (redis-cli --rdb); rdb-filter-only: the RDB holds no keys,
     * and the function libraries only when "functions" was named
     * (redis-cli --functions-rdb). */
    bool rdb_only, exclude_data, exclude_functions;
    uint64_t sent_seen;   /* during the transfer: bytes its transport had sent at the last look */
    int64_t stuck_since_ms; /* ...and since when that has not moved with bytes pending (0: moving) */
    int64_t wait_since_ms;/* wall clock it began to wait for a scan */
    gb_strbuf held;       /* the stream since its RDB's moment, sent after the RDB */
} repl_link;

/* A client blocked in WAIT. */
typedef struct repl_waiter {
    gb_client *c;
    int64_t offset;
    int64_t numreplicas;
} repl_waiter;

typedef struct gb_repl {
    char replid[GB_REPL_ID_LEN + 1];
    char replid2[GB_REPL_ID_LEN + 1];
    int64_t master_repl_offset;
    int64_t second_replid_offset;
    gb_repl_backlog backlog;  /* buf NULL: no backlog */
    int64_t no_replicas_since_ms; /* wall clock; the backlog's TTL counts from here */
    repl_link *links;
    size_t nlinks, linkcap;
    size_t nreplicas;
    repl_waiter *waiters;
    size_t nwaiters, waitercap;
    int seldb;                /* database of the last effect streamed; -1: SELECT comes first */
    gb_prop_sink sink;
    int64_t last_ping_ms;
    bool following;           /* this server is a replica: the primary's stream is proxied */
    int good_replicas;
    uint64_t sync_full, sync_partial_ok, sync_partial_err;
    gb_strbuf scratch;        /* one effect's RESP form */
} gb_repl;

static gb_repl *R(const gb_engine *eng) { return eng->repl; }

void gb_repl_reset_stats(gb_engine *eng)
{
    gb_repl *r = R(eng);
    if (r)
        r->sync_full = r->sync_partial_ok = r->sync_partial_err = 0;
}

void gb_repl_random_id(char *out)
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < GB_REPL_ID_LEN; i++)
        out[i] = hex[gb_random_u64() & 15];
    out[GB_REPL_ID_LEN] = '\0';
}

static void clear_replid2(gb_repl *r)
{
    memset(r->replid2, '0', GB_REPL_ID_LEN);
    r->replid2[GB_REPL_ID_LEN] = '\0';
    r->second_replid_offset = -1;
}

static void sink_emit(void *ctx, int dbid, int argc, const gb_slice *argv);

void gb_repl_init(gb_engine *eng)
{
    gb_repl *r = gb_calloc(1, sizeof *r);
    gb_repl_random_id(r->replid);
    clear_replid2(r);
    r->seldb = -1;
    r->sink = (gb_prop_sink){sink_emit, eng, GB_PROP_REPL};
    eng->repl = r;
}

void gb_repl_destroy(gb_engine *eng)
{
    gb_repl *r = R(eng);
    if (!r)
        return;
    if (r->backlog.buf)
        gb_propagate_detach(eng, &r->sink);
    gb_repl_backlog_free(&r->backlog);
    gb_free(r->links);
    gb_free(r->waiters);
    gb_strbuf_free(&r->scratch);
    gb_free(r);
    eng->repl = NULL;
}

void gb_repl_set_following(gb_engine *eng, bool following)
{
    gb_repl *r = R(eng);
    r->following = following;
    /* The backlog's TTL counts from the promotion, not from the last
     * replica this server had as a primary, if it ever had one (Redis's
     * replicationUnsetMaster resets repl_no_slaves_since): else a promoted
     * replica would free at once the backlog its siblings continue from. */
    if (!following)
        r->no_replicas_since_ms = eng->now_ms;
}
bool gb_repl_following(const gb_engine *eng) { return R(eng)->following; }

const char *gb_repl_id(const gb_engine *eng) { return R(eng)->replid; }
int64_t gb_repl_offset(const gb_engine *eng) { return R(eng)->master_repl_offset; }

int gb_repl_stream_db(gb_engine *eng)
{
    gb_repl *r = R(eng);
    if (!r->following) /* Redis's rdbPopulateSaveInfo */
        return r->seldb < 0 ? 0 : r->seldb;
    const gb_replica *rep = gb_replica_of(eng);
    if (rep->master)
        return rep->master->db->id;
    return rep->master_db >= 0 ? rep->master_db : 0;
}

/* ---- links ------------------------------------------------------------------ */

static repl_link *find_link(gb_repl *r, const gb_client *c)
{
    for (size_t i = 0; i < r->nlinks; i++)
        if (r->links[i].c == c)
            return &r->links[i];
    return NULL;
}

static repl_link *link_of(gb_repl *r, gb_client *c)
{
    repl_link *l = find_link(r, c);
    if (l)
        return l;
    if (r->nlinks == r->linkcap) {
        r->linkcap = r->linkcap ? r->linkcap * 2 : 4;
        r->links = gb_realloc(r->links, r->linkcap * sizeof *r->links);
    }
    l = &r->links[r->nlinks++];
    memset(l, 0, sizeof *l);
    l->c = c;
    return l;
}

bool gb_repl_is_replica(const gb_client *c) { return (c->flags & GB_CLIENT_REPLICA) != 0; }

static void write_raw(repl_link *l, const char *p, size_t n)
{
    if (n == 0) /* an empty held stream is a NULL buffer: nothing for the hook */
        return;
    l->c->hooks->write_raw(l->c, p, n);
    l->appended += n;
}

static void write_raw_cb(void *ctx, const char *p, size_t n) { write_raw(ctx, p, n); }

/* The peer's IP as CLIENT LIST shows it, without the port. */
static void peer_ip(const gb_client *c, char *ip, size_t cap)
{
    gb_client_desc d = {.fd = -1};
    if (c->hooks && c->hooks->describe)
        c->hooks->describe(c, &d);
    const char *colon = strrchr(d.addr, ':');
    size_t n = colon ? (size_t)(colon - d.addr) : strlen(d.addr);
    snprintf(ip, cap, "%.*s", (int)n, d.addr);
}

/* The replica's address as ROLE and INFO show it: the one it announced,
 * else its connection's. */
static void replica_ip(const repl_link *l, char *ip, size_t cap)
{
    if (l->ip[0])
        snprintf(ip, cap, "%s", l->ip);
    else
        peer_ip(l->c, ip, cap);
}

/* ---- the stream ---------------------------------------------------------------- */

/* An empty backlog whose next byte is the stream's next one. */
static void create_backlog(gb_engine *eng)
{
    gb_repl *r = R(eng);
    gb_repl_backlog_init(&r->backlog, (size_t)eng->cfg.repl_backlog_size, r->master_repl_offset + 1);
    gb_propagate_attach(eng, &r->sink);
}

static void ensure_backlog(gb_engine *eng)
{
    gb_repl *r = R(eng);
    if (r->backlog.buf)
        return;
    /* A primary's backlog made from scratch starts a new history (Redis's
     * syncCommand: changeReplicationId, clearReplicationId2); a replica
     * keeps its primary's, which its sub-replicas share. */
    if (!r->following) {
        gb_repl_random_id(r->replid);
        clear_replid2(r);
    }
    create_backlog(eng);
    gb_log(GB_LOG_NOTICE, "Replication backlog created, my new replication IDs are '%s' and '%s'", r->replid,
           r->replid2);
}

static void free_backlog(gb_engine *eng)
{
    gb_repl *r = R(eng);
    if (!r->backlog.buf)
        return;
    gb_propagate_detach(eng, &r->sink);
    gb_repl_backlog_free(&r->backlog);
    /* Redis's freeReplicationBacklog after the TTL: a new history, as
     * nothing can continue the old one. */
    gb_repl_random_id(r->replid);
    clear_replid2(r);
    r->seldb = -1;
}

/* The stream while l gets its RDB: kept until the RDB has gone, and held
 * to client-output-buffer-limit replica as Redis holds the replica's
 * output buffer meanwhile (gb_repl_limited_output counts it; past the
 * limit the replica is dropped and starts over). */
static void hold_stream(repl_link *l, const char *buf, size_t len)
{
    gb_strbuf_add(&l->held, buf, len);
    gb_client_desc d = {.fd = -1};
    l->c->hooks->describe(l->c, &d);
    if (gb_client_obuf_enforce(l->c, d.obuf))
        gb_strbuf_free(&l->held);
}

void gb_repl_feed_stream(gb_engine *eng, const char *buf, size_t len)
{
    gb_repl *r = R(eng);
    if (r->backlog.buf)
        gb_repl_backlog_append(&r->backlog, buf, len);
    r->master_repl_offset += (int64_t)len;
    for (size_t i = 0; i < r->nlinks; i++) {
        gb_client *c = r->links[i].c;
        enum replica_state st = r->links[i].state;
        if ((st == REPLICA_TRANSFER || st == REPLICA_WAIT_ACK) && !(c->flags & GB_CLIENT_CLOSE_ASAP)) {
            hold_stream(&r->links[i], buf, len);
            continue;
        }
        if (r->links[i].state != REPLICA_ONLINE || (c->flags & GB_CLIENT_CLOSE_ASAP))
            continue;
        write_raw(&r->links[i], buf, len);
        /* Sends at the end of the iteration; a replica past its
         * client-output-buffer-limit (replica class) is closed there. */
        c->hooks->flush(c);
    }
}

static void add_command(gb_strbuf *b, int argc, const gb_slice *argv)
{
    gb_strbuf_printf(b, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        gb_strbuf_printf(b, "$%zu\r\n", argv[i].len);
        gb_strbuf_add(b, argv[i].ptr, argv[i].len);
        gb_strbuf_add(b, "\r\n", 2);
    }
}

/* A command into the stream as it is (PING, REPLCONF GETACK: no SELECT).
 * Not on a replica: its sub-replicas get its primary's stream byte for
 * byte, at the primary's offsets (Redis's replicationFeedSlaves returns
 * on a replica too). */
static void feed_command(gb_engine *eng, int argc, const gb_slice *argv)
{
    gb_repl *r = R(eng);
    if (r->following)
        return;
    gb_strbuf_reset(&r->scratch);
    add_command(&r->scratch, argc, argv);
    gb_repl_feed_stream(eng, r->scratch.p, r->scratch.len);
}

/* The propagation sink: each effect, SELECT first where the database
 * changes (Redis's replicationFeedSlaves). */
static void sink_emit(void *ctx, int dbid, int argc, const gb_slice *argv)
{
    gb_engine *eng = ctx;
    gb_repl *r = R(eng);
    if (r->following)
        return; /* the primary's stream is what sub-replicas get */
    gb_strbuf_reset(&r->scratch);
    if (dbid != r->seldb) {
        char num[GB_INT_BUF];
        gb_slice sel[2] = {gb_slice_cstr("SELECT"), gb_slice_make(num, gb_ll2str(num, dbid))};
        add_command(&r->scratch, 2, sel);
        r->seldb = dbid;
    }
    add_command(&r->scratch, argc, argv);
    gb_repl_feed_stream(eng, r->scratch.p, r->scratch.len);
}

/* ---- identity ------------------------------------------------------------------ */

/* The stream stands at offset, with an empty backlog whose next byte is
 * offset + 1 (the old one, if any, goes); the next effect selects its
 * database. */
static void empty_backlog_at(gb_engine *eng, int64_t offset)
{
    gb_repl *r = R(eng);
    r->master_repl_offset = offset;
    r->seldb = -1;
    if (r->backlog.buf) {
        gb_propagate_detach(eng, &r->sink);
        gb_repl_backlog_free(&r->backlog);
    }
    create_backlog(eng);
}

void gb_repl_adopt(gb_engine *eng, const char *replid, int64_t offset)
{
    gb_repl *r = R(eng);
    snprintf(r->replid, sizeof r->replid, "%.*s", GB_REPL_ID_LEN, replid);
    clear_replid2(r);
    /* An empty backlog from here, made if there was none (as Redis does
     * after a sync), so that after a promotion our replicas can continue
     * this history with PSYNC. */
    empty_backlog_at(eng, offset);
}

void gb_repl_history_aux(gb_repl_saved_history *h, gb_slice name, gb_slice value)
{
    int64_t v;
    if (gb_slice_eq(name, gb_slice_cstr("repl-id"))) {
        if (value.len != GB_REPL_ID_LEN)
            return;
        memcpy(h->replid, value.ptr, GB_REPL_ID_LEN);
        h->replid[GB_REPL_ID_LEN] = '\0';
        h->have |= 1u;
    } else if (gb_slice_eq(name, gb_slice_cstr("repl-offset"))) {
        if (gb_slice2ll(value, &v) && v >= 0) {
            h->offset = v;
            h->have |= 2u;
        }
    } else if (gb_slice_eq(name, gb_slice_cstr("repl-stream-db"))) {
        if (gb_slice2ll(value, &v) && v >= 0 && v <= INT32_MAX) {
            h->stream_db = (int)v;
            h->have |= 4u;
        }
    }
}

bool gb_repl_history(gb_engine *eng, char *replid, int64_t *offset, int *stream_db)
{
    gb_repl *r = R(eng);
    if (r->following ? !gb_replica_of(eng)->have_master : !r->backlog.buf)
        return false;
    memcpy(replid, r->replid, GB_REPL_ID_LEN + 1);
    *offset = r->master_repl_offset;
    *stream_db = gb_repl_stream_db(eng);
    return true;
}

void gb_repl_restore_history(gb_engine *eng, const char *replid, int64_t offset, int stream_db, bool as_replica)
{
    gb_repl *r = R(eng);
    if (as_replica) {
        gb_repl_adopt(eng, replid, offset);
        gb_replica_of(eng)->resume_db = stream_db;
        gb_log(GB_LOG_NOTICE, "Replication history restored from the snapshot: %s up to offset %lld", r->replid,
               (long long)offset);
        return;
    }
    snprintf(r->replid2, sizeof r->replid2, "%.*s", GB_REPL_ID_LEN, replid);
    r->second_replid_offset = offset + 1;
    empty_backlog_at(eng, offset);
    r->no_replicas_since_ms = eng->now_ms;
    gb_log(GB_LOG_NOTICE, "Replication history restored from the snapshot as the secondary ID %s, valid up to "
           "offset %lld", r->replid2, (long long)r->second_replid_offset);
}

void gb_repl_shift_replid(gb_engine *eng)
{
    gb_repl *r = R(eng);
    memcpy(r->replid2, r->replid, sizeof r->replid);
    r->second_replid_offset = r->master_repl_offset + 1;
    gb_repl_random_id(r->replid);
    r->seldb = -1; /* a new history: its first effect selects its database */
    gb_log(GB_LOG_NOTICE, "Setting secondary replication ID to %s, valid up to offset: %lld. New replication ID is %s",
           r->replid2, (long long)r->second_replid_offset, r->replid);
}

void gb_repl_continue_as(gb_engine *eng, const char *replid)
{
    gb_repl *r = R(eng);
    memcpy(r->replid2, r->replid, sizeof r->replid);
    r->second_replid_offset = r->master_repl_offset + 1;
    snprintf(r->replid, sizeof r->replid, "%.*s", GB_REPL_ID_LEN, replid);
    gb_repl_disconnect_replicas(eng);
}

static void close_client(gb_client *c)
{
    c->flags |= GB_CLIENT_CLOSE_ASAP;
    if (c->hooks && c->hooks->close)
        c->hooks->close(c);
}

void gb_repl_disconnect_replicas(gb_engine *eng)
{
    gb_repl *r = R(eng);
    for (size_t i = 0; i < r->nlinks; i++)
        if (r->links[i].c->flags & GB_CLIENT_REPLICA)
            close_client(r->links[i].c);
}

/* ---- becoming a replica -------------------------------------------------------- */

/* Whether c can become a replica now: its transport carries raw bytes,
 * and no reply is still waiting to leave (Redis's check: the stream must
 * start on a clean output). */
bool gb_repl_can_sync(gb_client *c)
{
    if (!c->hooks || !c->hooks->write_raw || !c->hooks->flush || !c->hooks->describe) {
        gb_reply_error(c, "ERR replication needs a socket connection (this transport cannot carry the stream)");
        return false;
    }
    gb_client_desc d = {.fd = -1};
    c->hooks->describe(c, &d);
    if (d.obuf) {
        gb_reply_error(c, "ERR SYNC and PSYNC are invalid with pending output");
        return false;
    }
    return true;
}

static void count_replicas(gb_engine *eng);

/* c joins the replicas, online: it gets the stream from now on, and no
 * replies (Redis's replicas get none). */
static repl_link *attach_replica(gb_client *c)
{
    gb_engine *eng = c->eng;
    gb_repl *r = R(eng);
    repl_link *l = link_of(r, c);
    c->flags |= GB_CLIENT_REPLICA;
    gb_client_update_reply(c); /* no replies from now on */
    l->ack_time_ms = eng->now_ms;
    r->nreplicas++;
    return l;
}

static void put_online(gb_client *c, repl_link *l)
{
    l->state = REPLICA_ONLINE;
    l->ack_time_ms = c->eng->now_ms;
    count_replicas(c->eng);
}

bool gb_repl_try_partial(gb_client *c, gb_slice replid, int64_t offset)
{
    gb_engine *eng = c->eng;
    gb_repl *r = R(eng);
    bool id1 = gb_slice_ieq(replid, r->replid);
    bool id2 = gb_slice_ieq(replid, r->replid2) && offset <= r->second_replid_offset;
    bool question = replid.len > 0 && replid.ptr[0] == '?';
    if (!id1 && !id2) {
        if (!question)
            gb_log(GB_LOG_NOTICE, "Partial resynchronization not accepted: replication ID mismatch or offset %lld "
                   "past the second ID's", (long long)offset);
        goto full;
    }
    if (!r->backlog.buf || !gb_repl_backlog_covers(&r->backlog, offset)) {
        gb_log(GB_LOG_NOTICE, "Unable to partial resync with replica for lack of backlog (Replica request was: %lld).",
               (long long)offset);
        goto full;
    }
    repl_link *l = attach_replica(c);
    char line[128];
    /* A replica older than PSYNC2 reads a bare +CONTINUE (Redis's test of
     * SLAVE_CAPA_PSYNC2). */
    int n = l->psync2_capa ? snprintf(line, sizeof line, "+CONTINUE %s\r\n", r->replid)
                           : snprintf(line, sizeof line, "+CONTINUE\r\n");
    write_raw(l, line, (size_t)n);
    size_t sent = gb_repl_backlog_copy_from(&r->backlog, offset, write_raw_cb, l);
    put_online(c, l);
    c->hooks->flush(c);
    r->sync_partial_ok++;
    gb_log(GB_LOG_NOTICE, "Partial resynchronization request accepted. Sending %zu bytes of backlog starting from "
           "offset %lld.", sent, (long long)offset);
    return true;
full:
    if (!question)
        r->sync_partial_err++;
    return false;
}

static void finish_rdb(gb_client *c, repl_link *l);

bool gb_repl_rdb_filtered(gb_client *c, bool *functions)
{
    const repl_link *l = find_link(R(c->eng), c);
    if (!l || !l->exclude_data)
        return false;
    *functions = !l->exclude_functions;
    return true;
}

void gb_repl_full_send_now(gb_client *c, bool psync, const char *rdb, size_t len)
{
    gb_repl *r = R(c->eng);
    r->sync_full++;
    repl_link *l = attach_replica(c);
    ensure_backlog(c->eng);
    gb_strbuf b = {0};
    if (psync)
        gb_strbuf_printf(&b, "+FULLRESYNC %s %lld\r\n", r->replid, (long long)r->master_repl_offset);
    gb_strbuf_printf(&b, "$%zu\r\n", len);
    gb_strbuf_add(&b, rdb, len);
    write_raw(l, b.p, b.len);
    l->rdb_end = l->appended;
    gb_strbuf_free(&b);
    gb_log(GB_LOG_NOTICE, "Replica asked for an RDB without keys (rdb-filter-only): %zu bytes sent at once", len);
    finish_rdb(c, l);
}

void gb_repl_full_begin(gb_client *c, bool psync)
{
    gb_repl *r = R(c->eng);
    r->sync_full++;
    repl_link *l = attach_replica(c);
    l->state = REPLICA_WAIT_SCAN;
    l->psync = psync;
    l->sync_only = !psync;
    l->wait_since_ms = c->eng->now_ms;
}

/* ---- the full sync's transfer (driven by engine/persist/repl_fsync.c) ------------------ */

static bool in_state(const repl_link *l, enum replica_state st)
{
    return l->state == st && !(l->c->flags & GB_CLIENT_CLOSE_ASAP);
}

size_t gb_repl_fsync_waiting(const gb_engine *eng, int64_t *oldest_ms, bool *all_eof)
{
    const gb_repl *r = R(eng);
    size_t n = 0;
    *all_eof = true;
    for (size_t i = 0; i < r->nlinks; i++) {
        const repl_link *l = &r->links[i];
        if (!in_state(l, REPLICA_WAIT_SCAN))
            continue;
        if (n == 0 || l->wait_since_ms < *oldest_ms)
            *oldest_ms = l->wait_since_ms;
        *all_eof = *all_eof && l->eof_capa;
        n++;
    }
    return n;
}

size_t gb_repl_fsync_start(gb_engine *eng)
{
    gb_repl *r = R(eng);
    ensure_backlog(eng);
    /* The dataset is of this moment, at this offset; what follows it in
     * the stream starts with a SELECT (Redis's slaveseldb = -1). */
    r->seldb = -1;
    size_t n = 0;
    for (size_t i = 0; i < r->nlinks; i++) {
        repl_link *l = &r->links[i];
        if (!in_state(l, REPLICA_WAIT_SCAN))
            continue;
        l->state = REPLICA_TRANSFER;
        gb_strbuf_reset(&l->held);
        if (l->psync) {
            char line[128];
            int len = snprintf(line, sizeof line, "+FULLRESYNC %s %lld\r\n", r->replid,
                               (long long)r->master_repl_offset);
            write_raw(l, line, (size_t)len);
            l->c->hooks->flush(l->c);
        }
        n++;
    }
    return n;
}

size_t gb_repl_fsync_receivers(const gb_engine *eng, size_t *max_pending)
{
    const gb_repl *r = R(eng);
    size_t n = 0;
    *max_pending = 0;
    for (size_t i = 0; i < r->nlinks; i++) {
        const repl_link *l = &r->links[i];
        if (!in_state(l, REPLICA_TRANSFER))
            continue;
        gb_client_desc d = {.fd = -1};
        l->c->hooks->describe(l->c, &d);
        *max_pending = GB_MAX(*max_pending, d.obuf);
        n++;
    }
    return n;
}

void gb_repl_fsync_send(gb_engine *eng, const char *p, size_t n)
{
    gb_repl *r = R(eng);
    for (size_t i = 0; i < r->nlinks; i++) {
        repl_link *l = &r->links[i];
        if (!in_state(l, REPLICA_TRANSFER))
            continue;
        write_raw(l, p, n);
        l->rdb_end = l->appended; /* the RDB is not held to the output limit */
        l->c->hooks->flush(l->c);
    }
}

/* The held stream goes, and the live one from now on. */
static void stream_from_now(repl_link *l)
{
    write_raw(l, l->held.p, l->held.len);
    gb_strbuf_free(&l->held);
    put_online(l->c, l);
    l->c->hooks->flush(l->c);
}

/* An rdb-only replica has its RDB: it gets no stream, and its connection
 * closes once the RDB has left (Redis closes such a replica then). */
static void rdb_only_done(repl_link *l)
{
    gb_strbuf_free(&l->held);
    l->state = REPLICA_NONE;
    l->c->flags |= GB_CLIENT_CLOSE_AFTER_REPLY;
    l->c->hooks->flush(l->c);
    gb_log(GB_LOG_NOTICE, "Streamed RDB transfer with replica (rdb-only) succeeded: closing the connection");
}

/* After an RDB made at once (filtered_sync): closed or online. */
static void finish_rdb(gb_client *c, repl_link *l)
{
    if (l->rdb_only) {
        rdb_only_done(l);
        return;
    }
    put_online(c, l);
    c->hooks->flush(c);
}

void gb_repl_fsync_keepalive(gb_engine *eng, bool receivers_too)
{
    gb_repl *r = R(eng);
    for (size_t i = 0; i < r->nlinks; i++) {
        repl_link *l = &r->links[i];
        bool receiving = in_state(l, REPLICA_TRANSFER);
        if (!in_state(l, REPLICA_WAIT_SCAN) && !(receivers_too && receiving))
            continue;
        write_raw(l, "\n", 1);
        if (receiving)
            l->rdb_end = l->appended;
        l->c->hooks->flush(l->c);
    }
}

void gb_repl_fsync_done(gb_engine *eng, bool until_ack)
{
    gb_repl *r = R(eng);
    for (size_t i = 0; i < r->nlinks; i++) {
        repl_link *l = &r->links[i];
        if (!in_state(l, REPLICA_TRANSFER))
            continue;
        if (l->rdb_only) {
            rdb_only_done(l);
            continue;
        }
        if (until_ack) {
            l->state = REPLICA_WAIT_ACK;
            l->ack_time_ms = eng->now_ms; /* online to Redis from here: repl-timeout counts */
            gb_log(GB_LOG_NOTICE, "Streamed RDB transfer with replica succeeded (socket). Waiting for REPLCONF ACK "
                   "from replica to enable streaming");
            continue;
        }
        stream_from_now(l);
        gb_log(GB_LOG_NOTICE, "Synchronization with replica succeeded");
    }
}

void gb_repl_fsync_failed(gb_engine *eng)
{
    gb_repl *r = R(eng);
    for (size_t i = 0; i < r->nlinks; i++)
        if (in_state(&r->links[i], REPLICA_TRANSFER))
            close_client(r->links[i].c);
}

size_t gb_repl_backlog_bytes(const gb_engine *eng) { return R(eng)->backlog.buf ? R(eng)->backlog.cap : 0; }

size_t gb_repl_output_bytes(const gb_engine *eng)
{
    const gb_repl *r = R(eng);
    size_t n = 0;
    for (size_t i = 0; i < r->nlinks; i++) {
        const gb_client *c = r->links[i].c;
        if (!(c->flags & GB_CLIENT_REPLICA))
            continue;
        gb_client_desc d = {.fd = -1};
        c->hooks->describe(c, &d);
        n += d.rbs + d.omem; /* the memory its output holds, not only the bytes in it */
        n += r->links[i].held.cap;
    }
    return n;
}

size_t gb_repl_limited_output(const gb_client *c, size_t pending)
{
    const repl_link *l = find_link(R(c->eng), c);
    if (!l)
        return pending;
    uint64_t sent = l->appended > pending ? l->appended - pending : 0;
    uint64_t rdb_unsent = l->rdb_end > sent ? l->rdb_end - sent : 0;
    return pending - (size_t)GB_MIN(rdb_unsent, (uint64_t)pending) + l->held.len;
}

/* ---- REPLCONF ------------------------------------------------------------------- */

/* REPLCONF rdb-filter-only "<filter> ...": the RDB leaves out everything
 * but what the filters name, and Redis 7.0 knows one, "functions". False
 * (replied) for an unknown filter or a value that does not split. */
static bool rdb_filter(gb_client *c, repl_link *l, gb_slice val)
{
    gb_slice *filters;
    int n = gb_split_args(val.ptr, val.len, &filters);
    if (n < 0) {
        gb_reply_error(c, "ERR Missing rdb-filter-only values");
        return false;
    }
    bool functions = false;
    for (int i = 0; i < n; i++) {
        if (gb_slice_ieq(filters[i], "functions")) {
            functions = true;
        } else {
            gb_reply_errorf(c, "ERR Unsupported rdb-filter-only option: %.*s", (int)filters[i].len, filters[i].ptr);
            gb_split_args_free(filters);
            return false;
        }
    }
    gb_split_args_free(filters);
    l->exclude_data = true;
    l->exclude_functions = !functions;
    return true;
}

static void serve_waiters(gb_engine *eng);

void gb_repl_replconf(gb_client *c, int argc, const gb_slice *argv)
{
    gb_repl *r = R(c->eng);
    if (argc % 2 == 0) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    for (int j = 1; j < argc; j += 2) {
        gb_slice opt = argv[j], val = argv[j + 1];
        if (gb_slice_ieq(opt, "listening-port")) {
            int64_t port;
            if (!gb_slice2ll(val, &port)) {
                gb_reply_error(c, GB_ERR_NOT_INT);
                return;
            }
            link_of(r, c)->listening_port = (int)port;
        } else if (gb_slice_ieq(opt, "ip-address")) {
            if (val.len >= sizeof link_of(r, c)->ip) {
                gb_reply_errorf(c, "ERR REPLCONF ip-address provided by replica instance is too long: %zu bytes",
                                val.len);
                return;
            }
            repl_link *l = link_of(r, c);
            memcpy(l->ip, val.ptr, val.len);
            l->ip[val.len] = '\0';
        } else if (gb_slice_ieq(opt, "capa")) {
            /* eof: the replica takes a diskless RDB ($EOF:<mark>); psync2:
             * it reads the replication ID after +CONTINUE. */
            if (gb_slice_ieq(val, "eof"))
                link_of(r, c)->eof_capa = true;
            else if (gb_slice_ieq(val, "psync2"))
                link_of(r, c)->psync2_capa = true;
        } else if (gb_slice_ieq(opt, "ack")) {
            /* No reply, ever (the replica reads none). */
            repl_link *l = find_link(r, c);
            int64_t off;
            if (!l || !(c->flags & GB_CLIENT_REPLICA) || !gb_slice2ll(val, &off))
                return;
            if (l->state == REPLICA_WAIT_ACK) {
                stream_from_now(l);
                gb_log(GB_LOG_NOTICE, "Synchronization with replica succeeded");
            }
            if (off > l->ack_off)
                l->ack_off = off;
            l->ack_time_ms = c->eng->now_ms;
            serve_waiters(c->eng);
            return;
        } else if (gb_slice_ieq(opt, "getack")) {
            return; /* for a replica from its primary: nothing to do here */
        } else if (gb_slice_ieq(opt, "rdb-only")) {
            int64_t v;
            if (!gb_slice2ll(val, &v)) {
                gb_reply_error(c, GB_ERR_NOT_INT);
                return;
            }
            if (v < 0 || v > 1) {
                gb_reply_error(c, "ERR value is out of range, value must between 0 and 1");
                return;
            }
            link_of(r, c)->rdb_only = v == 1;
        } else if (gb_slice_ieq(opt, "rdb-filter-only")) {
            if (!rdb_filter(c, link_of(r, c), val))
                return;
        } else {
            gb_reply_errorf(c, "ERR Unrecognized REPLCONF option: %.*s", (int)GB_MIN(opt.len, 128), opt.ptr);
            return;
        }
    }
    gb_reply_ok(c);
}

/* ---- WAIT --------------------------------------------------------------------------- */

static int64_t acks_at(gb_repl *r, int64_t offset)
{
    int64_t n = 0;
    for (size_t i = 0; i < r->nlinks; i++)
        if (r->links[i].state == REPLICA_ONLINE && r->links[i].ack_off >= offset)
            n++;
    return n;
}

void gb_repl_note_client_offset(gb_client *c) { c->repl_woff = R(c->eng)->master_repl_offset; }

static void remove_waiter(gb_repl *r, size_t i)
{
    r->waiters[i] = r->waiters[--r->nwaiters];
}

static ssize_t find_waiter(gb_repl *r, const gb_client *c)
{
    for (size_t i = 0; i < r->nwaiters; i++)
        if (r->waiters[i].c == c)
            return (ssize_t)i;
    return -1;
}

void gb_repl_wait(gb_client *c, int argc, const gb_slice *argv)
{
    gb_repl *r = R(c->eng);
    int64_t numreplicas;
    uint64_t deadline;
    if (r->following) {
        gb_reply_error(c, "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a "
                          "replica is configured to be writable (which is not the default) writes to replicas are "
                          "just local and are not propagated.");
        return;
    }
    if (!gb_slice2ll(argv[1], &numreplicas)) {
        gb_reply_error(c, GB_ERR_NOT_INT);
        return;
    }
    if (!gb_blocking_parse_timeout_ms(c, argv[2], &deadline))
        return;
    int64_t acked = acks_at(r, c->repl_woff);
    if (acked >= numreplicas || (c->flags & GB_CLIENT_MULTI) || !gb_blocking_allowed(c)) {
        gb_reply_int(c, acked);
        return;
    }
    if (r->nwaiters == r->waitercap) {
        r->waitercap = r->waitercap ? r->waitercap * 2 : 4;
        r->waiters = gb_realloc(r->waiters, r->waitercap * sizeof *r->waiters);
    }
    r->waiters[r->nwaiters++] = (repl_waiter){c, c->repl_woff, numreplicas};
    gb_blocking_block(c, NULL, 0, deadline, GB_TYPE_COUNT, argc, argv);
    /* Ask every replica for its offset now, rather than waiting for its
     * next once-a-second ACK (Redis does it before the loop sleeps). */
    gb_repl_request_acks(c->eng);
}

void gb_repl_request_acks(gb_engine *eng)
{
    if (!R(eng)->nreplicas)
        return;
    gb_slice getack[3] = {gb_slice_cstr("REPLCONF"), gb_slice_cstr("GETACK"), gb_slice_cstr("*")};
    feed_command(eng, 3, getack);
}

bool gb_repl_is_wait(const gb_argv_copy *cmd)
{
    return cmd->cmd && cmd->cmd->def->proc && strcmp(cmd->cmd->def->name, "wait") == 0;
}

void gb_repl_wait_end(gb_client *c, bool timed_out)
{
    gb_repl *r = R(c->eng);
    ssize_t i = find_waiter(r, c);
    if (i < 0)
        return;
    int64_t offset = r->waiters[i].offset;
    remove_waiter(r, (size_t)i);
    if (timed_out)
        gb_reply_int(c, acks_at(r, offset));
}

/* Clients in WAIT whose replicas have acknowledged enough: unblocked with
 * the count (Redis's processClientsWaitingReplicas). */
static void serve_waiters(gb_engine *eng)
{
    gb_repl *r = R(eng);
    for (size_t i = 0; i < r->nwaiters;) {
        repl_waiter w = r->waiters[i];
        int64_t acked = acks_at(r, w.offset);
        if (acked < w.numreplicas) {
            i++;
            continue;
        }
        remove_waiter(r, i);
        gb_blocking_unblock(w.c, GB_UNBLOCK_SERVED);
        gb_reply_int(w.c, acked);
        gb_client_command_done(w.c);
        if (w.c->hooks && w.c->hooks->flush)
            w.c->hooks->flush(w.c);
    }
}

/* ---- introspection ------------------------------------------------------------------ */

void gb_repl_role(gb_client *c)
{
    gb_repl *r = R(c->eng);
    gb_reply_array(c, 3);
    gb_reply_cstr(c, "master");
    gb_reply_int(c, r->master_repl_offset);
    size_t h = gb_reply_array_deferred(c);
    int64_t n = 0;
    for (size_t i = 0; i < r->nlinks; i++) {
        repl_link *l = &r->links[i];
        if (l->state != REPLICA_ONLINE)
            continue;
        char ip[256];
        replica_ip(l, ip, sizeof ip);
        gb_reply_array(c, 3);
        gb_reply_cstr(c, ip);
        gb_reply_bulk_ll(c, l->listening_port);
        gb_reply_bulk_ll(c, l->ack_off);
        n++;
    }
    gb_reply_set_deferred(c, h, n);
}

static void linef(void (*line)(void *, const char *), void *ctx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void linef(void (*line)(void *, const char *), void *ctx, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    line(ctx, buf);
}

static bool min_replicas_active(const gb_engine *eng)
{
    return eng->cfg.min_replicas_to_write && eng->cfg.min_replicas_max_lag;
}

size_t gb_repl_replicas(const gb_engine *eng, gb_repl_replica_view *out, size_t cap)
{
    const gb_repl *r = R(eng);
    size_t n = 0;
    for (size_t i = 0; i < r->nlinks; i++) {
        const repl_link *l = &r->links[i];
        if (!(l->c->flags & GB_CLIENT_REPLICA))
            continue;
        if (n < cap) {
            replica_ip(l, out[n].ip, sizeof out[n].ip);
            out[n].port = l->listening_port;
            out[n].online = l->state == REPLICA_ONLINE;
            out[n].ack_off = l->ack_off;
            out[n].lag_s = l->state == REPLICA_ONLINE ? (long)((eng->now_ms - l->ack_time_ms) / 1000) : 0;
        }
        n++;
    }
    return n;
}

/* INFO's slaveN state, in Redis's words: waiting for the scan or getting
 * the RDB is wait_bgsave; once the RDB has gone, online (Redis puts a
 * diskless replica online and starts its stream on its first ACK). */
static const char *state_name(enum replica_state st)
{
    return st == REPLICA_ONLINE || st == REPLICA_WAIT_ACK ? "online" : "wait_bgsave";
}

void gb_repl_info(gb_engine *eng, void (*line)(void *ctx, const char *text), void *ctx)
{
    gb_repl *r = R(eng);
    if (!r->following) /* a replica's role and link lines come first (info.c) */
        linef(line, ctx, "role:master");
    linef(line, ctx, "connected_slaves:%zu", r->nreplicas);
    if (min_replicas_active(eng))
        linef(line, ctx, "min_slaves_good_slaves:%d", r->good_replicas);
    int id = 0;
    for (size_t i = 0; i < r->nlinks; i++) {
        repl_link *l = &r->links[i];
        if (!(l->c->flags & GB_CLIENT_REPLICA))
            continue;
        char ip[256];
        replica_ip(l, ip, sizeof ip);
        long lag = l->state == REPLICA_ONLINE ? (long)((eng->now_ms - l->ack_time_ms) / 1000) : 0;
        linef(line, ctx, "slave%d:ip=%s,port=%d,state=%s,offset=%lld,lag=%ld", id++, ip, l->listening_port,
              state_name(l->state), (long long)l->ack_off, lag);
    }
    linef(line, ctx, "master_failover_state:%s", gb_failover_state_name(eng));
    linef(line, ctx, "master_replid:%s", r->replid);
    linef(line, ctx, "master_replid2:%s", r->replid2);
    linef(line, ctx, "master_repl_offset:%lld", (long long)r->master_repl_offset);
    linef(line, ctx, "second_repl_offset:%lld", (long long)r->second_replid_offset);
    linef(line, ctx, "repl_backlog_active:%d", r->backlog.buf != NULL);
    linef(line, ctx, "repl_backlog_size:%lld", eng->cfg.repl_backlog_size);
    linef(line, ctx, "repl_backlog_first_byte_offset:%lld", r->backlog.buf ? (long long)r->backlog.offset : 0LL);
    linef(line, ctx, "repl_backlog_histlen:%lld", r->backlog.buf ? (long long)r->backlog.histlen : 0LL);
}

void gb_repl_info_stats(gb_engine *eng, void (*line)(void *ctx, const char *text), void *ctx)
{
    gb_repl *r = R(eng);
    linef(line, ctx, "sync_full:%llu", (unsigned long long)r->sync_full);
    linef(line, ctx, "sync_partial_ok:%llu", (unsigned long long)r->sync_partial_ok);
    linef(line, ctx, "sync_partial_err:%llu", (unsigned long long)r->sync_partial_err);
}

/* ---- min-replicas-to-write ---------------------------------------------------------- */

/* Redis's refreshGoodSlavesCount: online replicas whose last ACK is at
 * most min-replicas-max-lag seconds old. */
static void count_replicas(gb_engine *eng)
{
    gb_repl *r = R(eng);
    int good = 0;
    for (size_t i = 0; i < r->nlinks; i++) {
        repl_link *l = &r->links[i];
        if (l->state == REPLICA_ONLINE && (eng->now_ms - l->ack_time_ms) / 1000 <= eng->cfg.min_replicas_max_lag)
            good++;
    }
    r->good_replicas = good;
}

const char *gb_repl_write_refusal(const gb_engine *eng)
{
    if (GB_LIKELY(!min_replicas_active(eng)) || R(eng)->following ||
        R(eng)->good_replicas >= eng->cfg.min_replicas_to_write)
        return NULL;
    return "NOREPLICAS Not enough good replicas to write.";
}

/* ---- life cycle ----------------------------------------------------------------------- */

void gb_repl_client_gone(gb_client *c)
{
    gb_engine *eng = c->eng;
    gb_repl *r = R(eng);
    if (!r)
        return;
    ssize_t w = find_waiter(r, c);
    if (w >= 0)
        remove_waiter(r, (size_t)w);
    repl_link *l = find_link(r, c);
    if (!l)
        return;
    if (c->flags & GB_CLIENT_REPLICA) {
        r->nreplicas--;
        gb_log(GB_LOG_NOTICE, "Connection with replica lost.");
        if (r->nreplicas == 0)
            r->no_replicas_since_ms = eng->now_ms;
    }
    gb_strbuf_free(&l->held);
    *l = r->links[--r->nlinks];
    count_replicas(eng);
}

/* Whether a replica stopped taking what it is sent for repl-timeout
 * (Redis's replicationCron): online, no ACK for that long (a replica that
 * asked with SYNC sends none and is exempt); in a full sync, bytes pending
 * that its transport did not move for that long (Redis's
 * repl_last_partial_write). One stuck replica would otherwise hold the
 * full sync, and every later one and BGSAVE, for ever. */
static const char *replica_timed_out(gb_engine *eng, repl_link *l)
{
    int64_t timeout_ms = eng->cfg.repl_timeout * 1000;
    if (l->state == REPLICA_ONLINE || l->state == REPLICA_WAIT_ACK)
        return !l->sync_only && eng->now_ms - l->ack_time_ms > timeout_ms ? "streaming sync" : NULL;
    if (l->state != REPLICA_TRANSFER)
        return NULL;
    gb_client_desc d = {.fd = -1};
    l->c->hooks->describe(l->c, &d);
    uint64_t sent = l->appended - d.obuf;
    if (d.obuf == 0 || sent != l->sent_seen) {
        l->sent_seen = sent;
        l->stuck_since_ms = 0;
        return NULL;
    }
    if (l->stuck_since_ms == 0)
        l->stuck_since_ms = eng->now_ms;
    return eng->now_ms - l->stuck_since_ms > timeout_ms ? "full sync" : NULL;
}

static void disconnect_timed_out_replicas(gb_engine *eng)
{
    gb_repl *r = R(eng);
    for (size_t i = 0; i < r->nlinks; i++) {
        repl_link *l = &r->links[i];
        if (!(l->c->flags & GB_CLIENT_REPLICA) || (l->c->flags & GB_CLIENT_CLOSE_ASAP))
            continue;
        const char *phase = replica_timed_out(eng, l);
        if (!phase)
            continue;
        char ip[sizeof l->ip];
        replica_ip(l, ip, sizeof ip);
        gb_log(GB_LOG_WARNING, "Disconnecting timedout replica (%s): %s:%d", phase, ip, l->listening_port);
        close_client(l->c);
    }
}

void gb_repl_cron(gb_engine *eng)
{
    gb_repl *r = R(eng);
    if (!r->backlog.buf)
        return;
    gb_repl_backlog_resize(&r->backlog, (size_t)eng->cfg.repl_backlog_size);
    if (r->nreplicas == 0) {
        /* A replica keeps its backlog: it is what a promotion continues. */
        bool expired = eng->cfg.repl_backlog_ttl &&
                       eng->now_ms - r->no_replicas_since_ms >= eng->cfg.repl_backlog_ttl * 1000;
        if (!r->following && expired) {
            gb_log(GB_LOG_NOTICE, "Replication backlog freed after %lld seconds without connected replicas.",
                   eng->cfg.repl_backlog_ttl);
            free_backlog(eng);
        }
        return;
    }
    disconnect_timed_out_replicas(eng);
    if (r->following) {
        count_replicas(eng);
        return; /* the primary's PINGs come through its stream */
    }
    /* No PING while writes are paused for a failover (FAILOVER, CLUSTER
     * FAILOVER): the replica taking over waits for its offset to equal the
     * one this primary reported, which a PING would move (Redis 7.0). */
    if (eng->now_ms - r->last_ping_ms >= (int64_t)eng->cfg.repl_ping_replica_period * 1000 &&
        !(eng->paused_for & GB_PAUSE_FOR_FAILOVER)) {
        gb_slice ping = gb_slice_cstr("PING");
        feed_command(eng, 1, &ping);
        r->last_ping_ms = eng->now_ms;
    }
    count_replicas(eng);
}
