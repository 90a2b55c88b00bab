/*
 * Consumer groups of a stream: each group's last delivered ID and logical
 * read counter, its pending entries list (PEL: delivered, not yet
 * acknowledged) and its consumers, each with its own PEL.
 *
 * A pending entry is one gb_stream_nack, shared by the group's PEL and its
 * owner's PEL (both radix trees keyed by the 16-byte ID, so ranges come out
 * in ID order: XPENDING, XAUTOCLAIM's scan, a consumer's history). Moving
 * an entry to another consumer moves the pointer between consumer PELs.
 *
 *   gb_stream_nack (24 bytes)      delivery_time (Unix ms), delivery_count, consumer
 *   gb_stream_consumer             seen_time (Unix ms), pel, name (inline)
 *   gb_stream_cg                   last_id, entries_read (-1: unknown), pel, consumers
 */
#ifndef GB_ENGINE_DS_STREAM_CG_H
#define GB_ENGINE_DS_STREAM_CG_H

#include "engine/ds/stream.h"

typedef struct gb_stream_consumer gb_stream_consumer;

typedef struct gb_stream_nack {
    int64_t delivery_time;
    uint64_t delivery_count;
    gb_stream_consumer *consumer;
} gb_stream_nack;

struct gb_stream_consumer {
    int64_t seen_time;
    gb_rax pel;
    uint32_t name_len;
    char name[];
};

typedef struct gb_stream_cg {
    gb_stream_id last_id;
    int64_t entries_read;
    gb_rax pel;
    gb_rax consumers;
} gb_stream_cg;

static inline gb_slice gb_stream_consumer_name(const gb_stream_consumer *c)
{
    return gb_slice_make(c->name, c->name_len);
}

static inline uint64_t gb_stream_groups_count(const gb_stream *s) { return s->groups ? gb_rax_size(s->groups) : 0; }

/* A new group; NULL when one by that name exists. */
gb_stream_cg *gb_stream_cg_create(gb_stream *s, gb_slice name, gb_stream_id last_id, int64_t entries_read);
gb_stream_cg *gb_stream_cg_lookup(const gb_stream *s, gb_slice name);
/* Removes and frees the group; false when there is none. */
bool gb_stream_cg_destroy(gb_stream *s, gb_slice name);

gb_stream_consumer *gb_stream_consumer_lookup(const gb_stream_cg *cg, gb_slice name);
/* A new consumer seen at now_ms; NULL when it exists. */
gb_stream_consumer *gb_stream_consumer_create(gb_stream_cg *cg, gb_slice name, int64_t now_ms);
/* Removes a consumer and its pending entries (from the group's PEL too);
 * returns how many were pending. */
uint64_t gb_stream_consumer_delete(gb_stream_cg *cg, gb_stream_consumer *c);

/* A pending entry delivered now to consumer (may be NULL: XCLAIM FORCE
 * creates it before knowing its owner). */
gb_stream_nack *gb_stream_nack_new(gb_stream_consumer *consumer, int64_t now_ms);

/* Loading a stream (Goblin's snapshot, a Redis RDB file): the group's
 * pending entries come first, owned by nobody, then each consumer takes
 * its own. Each returns NULL, or the reason the input is not a valid
 * stream (IDs out of order, an entry missing or owned twice). */
const char *gb_stream_cg_load_pending(gb_stream_cg *cg, gb_stream_id id, gb_stream_id prev, bool first,
                                      int64_t delivery_time, uint64_t delivery_count);
const char *gb_stream_consumer_load_pending(gb_stream_cg *cg, gb_stream_consumer *c, gb_stream_id id);
void gb_stream_nack_free(gb_stream_nack *n);
/* Removes id's pending entry from the group's and its owner's lists and
 * frees it; false when it is not pending. */
bool gb_stream_nack_remove(gb_stream_cg *cg, gb_stream_id id);

/* The stream's groups, all at once (the stream's life cycle). */
void gb_stream_cg_free_all(gb_stream *s);
/* The same, the pending-entries lists (the part that grows with the
 * stream) handed to t to free in steps (gb_stream_free_step). */
void gb_stream_cg_hand_over_all(gb_stream *s, gb_rax_teardown *t);
void gb_stream_cg_dup_all(gb_stream *dst, const gb_stream *src);
size_t gb_stream_cg_mem_all(const gb_stream *s);
size_t gb_stream_cg_effort_all(const gb_stream *s);

#endif
