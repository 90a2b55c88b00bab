/*
 * A stream: entries (an ID and field/value pairs) in ID order, kept in
 * nodes of packed entries (engine/ds/stream_node.h) indexed by a radix
 * tree keyed by each node's first ID (engine/ds/rax.h), plus the metadata
 * Redis 7.0 keeps (last generated ID, first entry, largest deleted ID,
 * entries ever added) and the consumer groups (engine/ds/stream_cg.h).
 *
 * The operations are Redis 7.0's t_stream.c low level, with its rules:
 * where a node ends (stream-node-max-bytes / -entries), what trimming
 * removes (exact, or whole nodes only with "~" and a work limit), how the
 * logical read counters and lag of groups are estimated.
 *
 *   gb_stream (96 bytes)
 *     nodes          gb_rax: 16-byte big-endian master ID -> gb_snode *
 *     length         live entries
 *     last_id        the last ID generated (XADD, XSETID): the floor of the next
 *     first_id       the first live entry (0-0 when empty)
 *     max_deleted    the largest ID deleted by XDEL (0-0: none yet)
 *     entries_added  entries ever added (XADD, XSETID ENTRIESADDED)
 *     groups         gb_rax * name -> gb_stream_cg *, NULL until the first group
 */
#ifndef GB_ENGINE_DS_STREAM_H
#define GB_ENGINE_DS_STREAM_H

#include "engine/ds/rax.h"
#include "engine/ds/stream_id.h"
#include "engine/ds/stream_node.h"

typedef struct gb_stream {
    gb_rax nodes;
    uint64_t length;
    gb_stream_id last_id;
    gb_stream_id first_id;
    gb_stream_id max_deleted;
    uint64_t entries_added;
    gb_rax *groups;
} gb_stream;

/* Redis's STREAM_LISTPACK_MAX_SIZE: no node and no entry beyond 1 GiB. */
#define GB_STREAM_NODE_MAX_SIZE ((size_t)1 << 30)

/* The node-size settings (stream-node-max-bytes, stream-node-max-entries;
 * 0 = no limit). */
typedef struct gb_stream_limits {
    uint64_t node_max_bytes;
    uint64_t node_max_entries;
} gb_stream_limits;

gb_stream *gb_stream_new(void);
void gb_stream_free(gb_stream *s);
/* gb_stream_free a slice at a time (engine/core/memory/sliced_free.h): the
 * first call (*cursor 0) frees the stream's header and its groups and
 * consumers, handing the entries' radix tree and every pending-entries
 * list to a teardown that *cursor then names; each call frees about
 * max_nodes tree nodes; true once all is gone. s is not read after the
 * first call. */
bool gb_stream_free_step(gb_stream *s, uint64_t *cursor, size_t max_nodes);
/* A deep copy, groups and pending entries included (COPY). */
gb_stream *gb_stream_dup(const gb_stream *s);
/* Bytes accounted to the stream (MEMORY USAGE). */
size_t gb_stream_mem(const gb_stream *s);
/* The work freeing it takes, as Redis 7.0's lazyfreeGetFreeEffort
 * estimates it in constant time (lazy freeing hands a stream over past
 * 64): the radix tree's nodes, and per consumer group one plus the first
 * group's pending entries. */
size_t gb_stream_free_effort(const gb_stream *s);

/* ---- adding ---- */

enum gb_stream_add_result {
    GB_STREAM_ADDED = 0,
    GB_STREAM_ID_TOO_SMALL, /* not above the last ID (or no ID left) */
    GB_STREAM_TOO_LARGE,    /* the fields and values exceed 1 GiB, or "<ms>-*" after <ms>-max */
};

/* Appends an entry (nfields pairs in fv). use_id NULL: the next ID at
 * now_ms (the clock may go back: IDs never do); else use_id, whose
 * sequence is picked when !seq_given (the "<ms>-*" form). *added gets the
 * ID. */
enum gb_stream_add_result gb_stream_append(gb_stream *s, const gb_stream_limits *lim, const gb_slice *fv,
                                           size_t nfields, const gb_stream_id *use_id, bool seq_given,
                                           uint64_t now_ms, gb_stream_id *added);

/* ---- reading ---- */

/* Iterates entries in [start, end] (inclusive), forwards or backwards,
 * skipping deleted ones. The stream must not change while in use. */
typedef struct gb_stream_iter {
    const gb_stream *s;
    gb_stream_id start, end;
    bool rev;
    bool in_node;
    gb_rax_iter ri;
    gb_snode_cursor cur;       /* forwards: the current entry */
    /* backwards: a node replayed forwards in chunks of cursors */
    gb_snode_cursor *marks;    /* the cursor before each chunk */
    size_t nmarks, marks_cap;
    size_t mark;               /* the chunk being returned */
    gb_snode_cursor *chunk;    /* its entries' cursors */
    int nchunk, ci;
    const gb_snode_cursor *at; /* the entry last returned */
} gb_stream_iter;

void gb_stream_iter_start(gb_stream_iter *it, const gb_stream *s, const gb_stream_id *start, const gb_stream_id *end,
                          bool rev);
/* The next entry in range: its ID and field count. */
bool gb_stream_iter_next(gb_stream_iter *it, gb_stream_id *id, uint32_t *nfields);
/* The field/value pairs of the entry last returned. */
void gb_stream_iter_pairs(const gb_stream_iter *it, gb_snode_pairs *pp);
void gb_stream_iter_done(gb_stream_iter *it);

/* Whether id is a live entry. */
bool gb_stream_entry_exists(const gb_stream *s, gb_stream_id id);
/* The first (first == true) or last live entry's ID; false when empty. */
bool gb_stream_edge_id(const gb_stream *s, bool first, gb_stream_id *id);

/* The ID of the first entry, deleted or not (the first node's key); the
 * largest ID when there is none. Redis's rewritten MINID names it. */
gb_stream_id gb_stream_first_node_id(const gb_stream *s);

/* ---- removing ---- */

/* Deletes the live entry id (XDEL's primitive: length only; the caller
 * keeps first_id and max_deleted). */
bool gb_stream_delete(gb_stream *s, gb_stream_id id);

enum gb_stream_trim_strategy { GB_TRIM_NONE = 0, GB_TRIM_MAXLEN, GB_TRIM_MINID };

typedef struct gb_stream_trim {
    enum gb_stream_trim_strategy strategy;
    bool approx;      /* "~": whole nodes only */
    int64_t limit;    /* entries at most (0: no limit) */
    uint64_t maxlen;  /* MAXLEN */
    gb_stream_id minid; /* MINID: no entry below it stays */
} gb_stream_trim;

/* Trims from the oldest end as Redis's streamTrim; returns the entries
 * removed and keeps first_id. */
int64_t gb_stream_trim_apply(gb_stream *s, const gb_stream_trim *t);

/* ---- consumer-group counters (Redis 7.0) ---- */

#define GB_STREAM_ENTRIES_READ_UNKNOWN (-1)

/* Whether [start, end] (end NULL: to the end) may contain a deleted entry. */
bool gb_stream_range_has_tombstones(const gb_stream *s, const gb_stream_id *start, const gb_stream_id *end);
/* The logical read counter of id: how many entries were added up to it,
 * or GB_STREAM_ENTRIES_READ_UNKNOWN when deletions make it unknowable. */
int64_t gb_stream_estimate_distance(const gb_stream *s, gb_stream_id id);

#endif
