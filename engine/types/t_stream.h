/*
 * The stream type: its gb_type_ops, its keyspace lookups, and the typed
 * operations of the work-queue path (XADD, XREADGROUP's delivery, XACK)
 * that a handler calls after parsing or a binary protocol could call with
 * native values. They change the stream, tell WATCH and the blocking
 * machinery, and record the effects Redis 7.0 propagates; entries go to a
 * visitor, never into a reply here.
 */
#ifndef GB_ENGINE_TYPES_T_STREAM_H
#define GB_ENGINE_TYPES_T_STREAM_H

#include "engine/core/request/client.h"
#include "engine/core/keyspace/db.h"
#include "engine/ds/stream.h"
#include "engine/ds/stream_cg.h"
#include "engine/types/result.h"

struct gb_engine;

void gb_stream_type_register(void);

/* stream-node-max-bytes / -entries as configured now. */
gb_stream_limits gb_stream_limits_of(const struct gb_engine *eng);
/* XADD/XTRIM's "~" work limit when no LIMIT is given: 100 nodes' worth,
 * bounded to [1, 1000000] entries (10000 when the setting is 0), as Redis
 * 7.0.15 computes it. */
int64_t gb_stream_default_trim_limit(const struct gb_engine *eng);

/* The stream under key: 1 (in *s), 0 missing, -1 another type. Writes
 * (write == true) count no keyspace hits, as in Redis. */
int gb_stream_lookup(gb_db *db, gb_slice key, bool write, gb_stream **s);
/* The same as a read, for a command that may then change the stream's
 * consumer groups (gb_db_lookup_read_changing): XACK, XCLAIM, XAUTOCLAIM,
 * XREADGROUP. */
int gb_stream_lookup_for_groups(gb_db *db, gb_slice key, gb_stream **s);
/* Adds key holding a new empty stream (the key must be missing). */
gb_stream *gb_stream_add_key(gb_db *db, gb_slice key);

/* ---- XADD ---- */

typedef struct gb_xadd_args {
    bool nomkstream;
    bool id_given;          /* an ID rather than "*" */
    bool seq_given;         /* ... and not "<ms>-*" */
    gb_stream_id id;
    gb_stream_trim trim;    /* strategy GB_TRIM_NONE: none */
} gb_xadd_args;

typedef enum gb_xadd_status {
    GB_XADD_OK,
    GB_XADD_NOKEY,        /* NOMKSTREAM and no key: nothing done */
    GB_XADD_WRONGTYPE,
    GB_XADD_EXHAUSTED,    /* the stream's last ID is the largest there is */
    GB_XADD_ID_TOO_SMALL,
    GB_XADD_TOO_LARGE,
} gb_xadd_status;

/* Appends one entry (nfields pairs in fv) and trims as asked. *id gets
 * the new ID. When the ID or the trim needs rewriting to replay exactly,
 * *rewrite says so: the new ID (if it was "*" or "<ms>-*") and, for "~",
 * "=" with the stream's length (MAXLEN) or first ID (MINID) after trimming
 * (Redis 7.0's propagated XADD). */
typedef struct gb_xadd_rewrite {
    bool id;
    bool trim;
    uint64_t trim_len;
    gb_stream_id trim_id;
} gb_xadd_rewrite;

gb_xadd_status gb_stream_op_add(gb_db *db, gb_slice key, const gb_xadd_args *a, const gb_slice *fv, size_t nfields,
                                gb_stream_id *id, gb_xadd_rewrite *rewrite);

/* ---- consumer-group delivery (XREADGROUP) ---- */

/* Where delivered entries go, in order. */
typedef struct gb_stream_visitor {
    /* An entry: it is positioned on it (gb_stream_iter_pairs gives its
     * fields); nfields pairs. */
    void (*entry)(void *ctx, gb_stream_id id, uint32_t nfields, const gb_stream_iter *it);
    /* A pending entry whose stream entry was deleted (history reads). */
    void (*gone)(void *ctx, gb_stream_id id);
    void *ctx;
} gb_stream_visitor;

typedef struct gb_deliver {
    gb_client *c;       /* for the effects: its database */
    gb_slice key, group_name, consumer_name;
    gb_stream *s;
    gb_stream_cg *group;
    bool noack;
    uint64_t count;     /* 0: no limit */
} gb_deliver;

/* A new consumer of cg named name, with the keyspace event Redis sends
 * for it (xgroup-createconsumer); NULL when the group has one already. */
gb_stream_consumer *gb_stream_consumer_add(gb_client *c, gb_slice key, gb_stream_cg *cg, gb_slice name);

/* The consumer named in d, created when missing (with the XGROUP
 * CREATECONSUMER effect when NOACK leaves nothing else to create it on
 * replay); its seen time is now. */
gb_stream_consumer *gb_stream_consumer_touch(const gb_deliver *d, bool *created);

/* New entries after start to d's consumer: the group's last ID and read
 * counter advance, each entry is added to (or moved into) the consumer's
 * pending list unless NOACK, and the effects are Redis 7.0's (XCLAIM ...
 * FORCE JUSTID LASTID per entry; XGROUP SETID ... ENTRIESREAD after a
 * NOACK read). Returns the entries delivered. */
uint64_t gb_stream_deliver_new(const gb_deliver *d, gb_stream_consumer *consumer, gb_stream_id start,
                               const gb_stream_visitor *v);
/* The consumer's own pending entries from start (a history read):
 * delivered again (time and count updated, and propagated, as Redis 7.0
 * does not: the log then replays to the same counts), deleted ones as
 * gone. */
uint64_t gb_stream_deliver_history(const gb_deliver *d, gb_stream_consumer *consumer, gb_stream_id start,
                                   const gb_stream_visitor *v);

/* ---- acknowledging ---- */

/* XACK on a group the caller has looked up (once: Redis 7.0's XACK
 * counts one keyspace hit): removes ids from its pending lists; returns
 * how many were pending. */
int64_t gb_stream_op_ack(gb_db *db, gb_stream_cg *cg, const gb_stream_id *ids, size_t n);

/* ---- effects shared with the group commands ---- */

/* XCLAIM key group consumer 0 id TIME t RETRYCOUNT n FORCE JUSTID LASTID
 * last: the state of one pending entry, replayable. */
void gb_stream_propagate_claim(gb_client *c, gb_slice key, gb_slice group, const gb_stream_cg *cg, gb_stream_id id,
                               const gb_stream_nack *nack);
/* XGROUP SETID key group last ENTRIESREAD n. */
void gb_stream_propagate_group_id(gb_client *c, gb_slice key, gb_slice group, const gb_stream_cg *cg);
/* XGROUP CREATECONSUMER key group consumer. */
void gb_stream_propagate_consumer(gb_client *c, gb_slice key, gb_slice group, gb_slice consumer);

#endif
