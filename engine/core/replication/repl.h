/*
 * Replication, the primary's side: the engine's replication identity and
 * offset, the backlog, and the replicas attached to it (issue 29).
 *
 * What it keeps, as Redis 7.0 does:
 *   - replid: 40 hex characters, new at start; replid2 and
 *     second_replid_offset: the previous history this server continues
 *     (after a promotion), valid up to that offset;
 *   - master_repl_offset: bytes of replication stream produced so far;
 *   - the backlog: a ring of repl-backlog-size bytes holding the latest
 *     stream, from repl_backlog_first_byte_offset for histlen bytes, so a
 *     replica that lost its link continues (PSYNC replid offset ->
 *     +CONTINUE) instead of loading everything again. It exists from the
 *     first replica's attach (or a sync with our own primary) until
 *     repl-backlog-ttl seconds pass without any replica (a primary only);
 *     while it exists the stream sink is attached to the engine's
 *     propagation (no cost when no replica ever attached).
 *
 * The stream is Redis's: each effect as a RESP multibulk, SELECT n first
 * where the database changes (and again after a full sync starts), PING
 * every repl-ping-replica-period seconds, REPLCONF GETACK * for WAIT.
 *
 * A replica is a client that sent SYNC or PSYNC: from then on it gets no
 * replies, only the stream (through its transport's write_raw hook); its
 * REPLCONF ACKs move its acknowledged offset (WAIT, ROLE, INFO, the
 * min-replicas-to-write check).
 *
 * A full sync's RDB is made by the fork-less snapshot's copy-on-write scan
 * in the background and sent as it is made (engine/persist/repl_fsync.h,
 * which drives the transfer through the gb_repl_fsync_* calls below):
 * replicas asking for one wait for the scan to start (several share it),
 * get +FULLRESYNC with the offset of that moment, the RDB, then the stream
 * produced meanwhile, held for them until the RDB has gone.
 */
#ifndef GB_ENGINE_CORE_REPL_H
#define GB_ENGINE_CORE_REPL_H

#include "engine/core/request/client.h"

struct gb_engine;
typedef struct gb_engine gb_engine;

#define GB_REPL_ID_LEN 40

/* ---- the backlog ring (pure: unit-tested alone) ---- */

/* The ring's memory grows with the stream up to size (a large
 * repl-backlog-size costs only what the stream has filled), and stays
 * unwrapped until it reaches it: while cap < size, buf[0, histlen) holds
 * the bytes in order. An allocation that fails stops the growth there (a
 * smaller backlog: replicas fall back to full syncs sooner), never the
 * server. */
typedef struct gb_repl_backlog {
    char *buf;
    size_t asked;   /* repl-backlog-size when it was made */
    size_t size;    /* the most it may hold: asked, or less after a failed allocation */
    size_t cap;     /* allocated now: the ring's modulus */
    size_t idx;     /* where the next byte goes */
    size_t histlen; /* bytes held (<= size) */
    int64_t offset; /* the replication offset of the first byte held */
} gb_repl_backlog;

/* An empty backlog of size bytes whose next byte has offset next_offset. */
void gb_repl_backlog_init(gb_repl_backlog *b, size_t size, int64_t next_offset);
void gb_repl_backlog_free(gb_repl_backlog *b);
/* Appends len bytes; the oldest go when it is full. */
void gb_repl_backlog_append(gb_repl_backlog *b, const char *p, size_t len);
/* Whether a replica that needs the stream from offset (its next byte) can
 * be served from here: first byte <= offset <= last byte + 1. */
bool gb_repl_backlog_covers(const gb_repl_backlog *b, int64_t offset);
/* Calls out(ctx, bytes, n) for the bytes from offset to the end (one or two
 * pieces); returns how many. Requires gb_repl_backlog_covers. */
size_t gb_repl_backlog_copy_from(const gb_repl_backlog *b, int64_t offset,
                                 void (*out)(void *ctx, const char *p, size_t n), void *ctx);
/* A new size (CONFIG SET repl-backlog-size): the newest bytes that fit
 * are kept. */
void gb_repl_backlog_resize(gb_repl_backlog *b, size_t size);

/* ---- the engine's replication state ---- */

/* Creates / frees eng->repl (gb_engine_create, gb_engine_free). */
void gb_repl_init(gb_engine *eng);
void gb_repl_destroy(gb_engine *eng);
/* CONFIG RESETSTAT: sync_full and sync_partial_ok/_err from zero. */
void gb_repl_reset_stats(gb_engine *eng);

/* Appends bytes to the stream: the backlog, every online replica's output,
 * master_repl_offset += len. */
void gb_repl_feed_stream(gb_engine *eng, const char *buf, size_t len);
/* A new replication ID: GB_REPL_ID_LEN random hex characters and a NUL. */
void gb_repl_random_id(char *out);
/* After a full sync from a primary: its replid and offset become ours, the
 * backlog is emptied, or made if there was none (its next byte is offset +
 * 1), so that after a promotion our replicas continue this history. */
void gb_repl_adopt(gb_engine *eng, const char *replid, int64_t offset);
/* On promotion (REPLICAOF NO ONE): replid2 = replid, second_replid_offset
 * = master_repl_offset + 1, a new random replid (Redis's
 * shiftReplicationId). */
void gb_repl_shift_replid(gb_engine *eng);
/* A partial resync with our primary gave a new replication ID (it was
 * promoted): ours becomes it, the old one the second, valid up to
 * master_repl_offset + 1, and our replicas reconnect to learn it
 * (Redis's slaveTryPartialResynchronization). */
void gb_repl_continue_as(gb_engine *eng, const char *replid);
/* The repl-* aux fields a snapshot or RDB file holds, as a load reads them
 * (all three, or the file recorded no history). */
typedef struct gb_repl_saved_history {
    char replid[GB_REPL_ID_LEN + 1];
    int64_t offset;
    int stream_db;
    unsigned have; /* bits: 1 repl-id, 2 repl-offset, 4 repl-stream-db */
} gb_repl_saved_history;
#define GB_REPL_SAVED_ALL 7u

/* Takes one aux field into h if it is one of the three (well formed). */
void gb_repl_history_aux(gb_repl_saved_history *h, gb_slice name, gb_slice value);

/* What a snapshot records of the replication history, to be continued
 * after a restart (Redis's rdbPopulateSaveInfo: repl-id, repl-offset,
 * repl-stream-db): the replication ID, the offset of the data set's last
 * byte of stream, and the database the stream is in. False when there is
 * nothing to continue: a primary that never made a backlog, a replica that
 * never synced. */
bool gb_repl_history(struct gb_engine *eng, char *replid, int64_t *offset, int *stream_db);
/* At start-up, the history the loaded snapshot recorded (Redis's
 * loadDataFromDisk). A replica (replicaof, or a cluster replica) takes it
 * as its primary's, so that its first PSYNC continues it; a primary keeps
 * it as its second ID, valid up to offset + 1, with an empty backlog from
 * there, so that its replicas continue with PSYNC after it restarted. */
void gb_repl_restore_history(struct gb_engine *eng, const char *replid, int64_t offset, int stream_db, bool as_replica);

/* Drops every attached replica (they resync). */
void gb_repl_disconnect_replicas(gb_engine *eng);

/* Whether this server follows a primary (the replica half sets it on
 * REPLICAOF host port, clears it on REPLICAOF NO ONE). While it does, as in
 * Redis: its own effects are not streamed (the primary's bytes are, through
 * gb_repl_feed_stream, so sub-replicas get exactly the primary's stream),
 * no PING or GETACK of its own goes into the stream, WAIT is refused and
 * min-replicas-to-write does not apply. */
void gb_repl_set_following(gb_engine *eng, bool following);
bool gb_repl_following(const gb_engine *eng);

const char *gb_repl_id(const gb_engine *eng);
int64_t gb_repl_offset(const gb_engine *eng);
/* The database the stream is in at this point, for a full sync's RDB
 * (its repl-stream-db): what a replica's first write after the RDB
 * applies to when no SELECT comes first. A primary's stream selects again
 * after a sync begins; a replica relays its primary's, which does not. */
int gb_repl_stream_db(gb_engine *eng);

/* ---- the primary's protocol (engine/commands/cmd_repl.c) ---- */

/* Whether c may start a sync now (SYNC / PSYNC, before anything else):
 * its transport carries raw bytes and no reply is still waiting to leave
 * (Redis's "SYNC and PSYNC are invalid with pending output"); else the
 * error is replied. */
bool gb_repl_can_sync(gb_client *c);
/* PSYNC replid offset: when the history and the backlog allow it, c
 * becomes an online replica, gets +CONTINUE and the backlog from offset,
 * and true is returned (sync_partial_ok); else false (sync_partial_err
 * counted unless replid is "?"). */
bool gb_repl_try_partial(gb_client *c, gb_slice replid, int64_t offset);
/* A full sync is asked for by c (SYNC, or PSYNC that could not continue):
 * c becomes a replica waiting for the next scan (psync false: SYNC's old
 * protocol, no +FULLRESYNC line). */
void gb_repl_full_begin(gb_client *c, bool psync);
/* Whether c asked for an RDB without keys (REPLCONF rdb-filter-only;
 * *functions: with the function libraries). Such an RDB is made at once
 * and handed to gb_repl_full_send_now instead of waiting for a scan. */
bool gb_repl_rdb_filtered(gb_client *c, bool *functions);
void gb_repl_full_send_now(gb_client *c, bool psync, const char *rdb, size_t len);

/* The transfer, as engine/persist/repl_fsync.c drives it. */
/* Replicas waiting for a scan; with at least one, *oldest_ms is when the
 * first began to wait and *all_eof whether all take an RDB of unknown
 * length (REPLCONF capa eof). */
size_t gb_repl_fsync_waiting(const gb_engine *eng, int64_t *oldest_ms, bool *all_eof);
/* The scan starts now: every waiting replica gets +FULLRESYNC with this
 * moment's offset (the backlog made if needed) and from here the stream
 * is held for it. Returns how many. */
size_t gb_repl_fsync_start(gb_engine *eng);
/* Replicas getting the RDB now, and the most output one of them has not
 * sent yet (the transfer's flow control). */
size_t gb_repl_fsync_receivers(const gb_engine *eng, size_t *max_pending);
/* RDB bytes (or its framing) to every replica getting it. */
void gb_repl_fsync_send(gb_engine *eng, const char *p, size_t n);
/* A newline to the replicas waiting for a scan, and with receivers_too
 * to those whose RDB is being written to a file (nothing to send yet):
 * Redis's keep-alive, so that their repl-timeout does not pass. */
void gb_repl_fsync_keepalive(gb_engine *eng, bool receivers_too);
/* The RDB has gone: those replicas get their held stream and are online;
 * until_ack (an RDB ended by an EOF mark): once each has sent its first
 * REPLCONF ACK (it loaded the RDB), the stream held until then. */
void gb_repl_fsync_done(gb_engine *eng, bool until_ack);
/* The RDB could not be made: those replicas are dropped (they retry). */
void gb_repl_fsync_failed(gb_engine *eng);

/* The backlog's allocation (MEMORY STATS replication.backlog). */
size_t gb_repl_backlog_bytes(const gb_engine *eng);
/* Memory the replicas' pending outputs hold: not counted against maxmemory
 * (Redis's freeMemoryGetNotCountedMemory), or a replica that reads slowly
 * would make the primary evict keys. */
size_t gb_repl_output_bytes(const gb_engine *eng);
/* Of a replica's pending output, the part its client-output-buffer-limit
 * counts: the stream (with what is held for it during its full sync), not
 * what is left of the full sync's RDB (engine/core/memory/client_memory.c). */
size_t gb_repl_limited_output(const gb_client *c, size_t pending);
/* Whether c is a replica already (SYNC / PSYNC are ignored then). */
bool gb_repl_is_replica(const gb_client *c);

/* REPLCONF's options (Redis's replies; ACK answers nothing). */
void gb_repl_replconf(gb_client *c, int argc, const gb_slice *argv);

/* WAIT numreplicas timeout. */
void gb_repl_wait(gb_client *c, int argc, const gb_slice *argv);
/* Whether a blocked client's command is WAIT; and, when such a client is
 * unblocked (engine/core/request/blocking.c), its leaving the wait list, with the
 * timeout's reply (the replicas that acknowledged its offset) if timed_out. */
bool gb_repl_is_wait(const gb_argv_copy *cmd);
void gb_repl_wait_end(gb_client *c, bool timed_out);

/* The attached replicas as FAILOVER looks for one (the address they
 * announced, or the peer's; the port they listen on; online; the offset
 * they acknowledged). Fills up to cap, returns how many there are. */
typedef struct gb_repl_replica_view {
    char ip[64];
    int port;
    bool online;
    int64_t ack_off;
    long lag_s; /* seconds since its last ACK while online, else 0 (INFO's lag=) */
} gb_repl_replica_view;
size_t gb_repl_replicas(const gb_engine *eng, gb_repl_replica_view *out, size_t cap);
/* REPLCONF GETACK * into the stream: every replica answers with its offset
 * now rather than at its next once-a-second ACK (WAIT, a shutdown). */
void gb_repl_request_acks(gb_engine *eng);

/* ROLE for a primary. */
void gb_repl_role(gb_client *c);
/* INFO replication's lines (as Redis 7.0 writes them for a primary), and
 * INFO stats' sync_full / sync_partial_ok / sync_partial_err. */
void gb_repl_info(gb_engine *eng, void (*line)(void *ctx, const char *text), void *ctx);
void gb_repl_info_stats(gb_engine *eng, void (*line)(void *ctx, const char *text), void *ctx);

/* min-replicas-to-write: Redis's -NOREPLICAS text when too few good
 * replicas for a write now, else NULL. */
const char *gb_repl_write_refusal(const gb_engine *eng);

/* The client's replication offset after its last command (WAIT's target:
 * the gate sets it when a top-level call ends). */
void gb_repl_note_client_offset(gb_client *c);

/* A client is going away: out of the replica list and the WAIT list. */
void gb_repl_client_gone(gb_client *c);

/* Once per cron tick: PINGs into the stream, the backlog's TTL, the
 * backlog's size after CONFIG SET, the good-replica count. */
void gb_repl_cron(gb_engine *eng);

#endif
