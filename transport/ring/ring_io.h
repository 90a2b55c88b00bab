/*
 * Reading and writing records on one ring (include/goblin/ring_layout.h).
 * Shared by the server (transport/ring/ring_server.c) and the client library
 * (transport/ring/client/ring_client.c); header-only because it is the hot
 * path. Every access to ring memory goes through the named accessors of
 * platform/shm_atomic.h:
 *
 *   writer: length and payload stores, then the stamp store RELEASE -> pairs with
 *   reader: stamp load ACQUIRE, then the length and payload loads.
 *   reader: head store RELEASE after it is done with the bytes -> pairs with
 *   writer: head load ACQUIRE before it reuses them.
 * Nothing else is shared on this path: no tail index, no counter.
 *
 * The reader validates everything (the peer may be hostile): the stamp, the
 * length against max_payload (loaded once, relaxed: the peer may change it
 * after validation and we must not load it twice), the record against the
 * end of the ring, and a padding record's position. It never reads outside
 * [base, base + cap).
 */
#ifndef GB_TRANSPORT_RING_IO_H
#define GB_TRANSPORT_RING_IO_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "goblin/ring_layout.h"
#include "platform/shm_atomic.h"

typedef struct gb_ring_writer {
    uint8_t *base;
    uint64_t cap;        /* power of two, >= 4 KiB */
    uint64_t tail;       /* next write position (private) */
    uint64_t head_cache; /* last head read from the reader */
    uint64_t *head;      /* the reader's published head (shared) */
    uint32_t max_payload;
    uint64_t key;        /* hdr.stamp_key */
} gb_ring_writer;

typedef struct gb_ring_reader {
    const uint8_t *base;
    uint64_t cap;
    uint64_t head;      /* next read position (private) */
    uint64_t *head_pub; /* where we publish head for the writer (shared) */
    uint32_t max_payload;
    uint64_t key;
} gb_ring_reader;

enum gb_ring_status {
    GB_RING_EMPTY = 0,  /* nothing published yet */
    GB_RING_READY = 1,  /* a record is available (peek) / space is reserved (write) */
    GB_RING_FULL = 2,   /* no room for the record now (write) */
    GB_RING_BAD = -1,   /* the peer broke the protocol */
};

static inline gb_ring_record_header *gb_ring_record_at(uint8_t *base, uint64_t idx)
{
    return (gb_ring_record_header *)(void *)(base + idx);
}

/* Publishes a record header: the length first, then the stamp.
 * RELEASE on the stamp: the length and the payload stored before it are
 * visible to a reader whose acquire load sees the stamp (gb_ring_read_peek). */
static inline void gb_ring_record_publish(gb_ring_record_header *h, uint64_t stamp, uint32_t len)
{
    gb_shm_store_relaxed_u32(&h->len, len);
    gb_shm_store_relaxed_u32(&h->reserved, 0);
    gb_shm_store_release_u64(&h->stamp, stamp);
}

/*
 * Reserves room for a record of `len` payload bytes. On GB_RING_READY,
 * *payload points at where to write them, and gb_ring_write_commit(w, len)
 * publishes. GB_RING_FULL: try again later. GB_RING_BAD: the reader's head is
 * impossible (it claims to have read what was never written, or less than
 * before), i.e. the peer is broken or hostile.
 */
static inline int gb_ring_write_begin(gb_ring_writer *w, uint32_t len, uint8_t **payload)
{
    uint64_t size = gb_ring_record_size(len);
    uint64_t idx = w->tail & (w->cap - 1);
    uint64_t pad = idx + size > w->cap ? w->cap - idx : 0;
    if (w->tail + pad + size - w->head_cache > w->cap) {
        /* ACQUIRE: pairs with the reader's release store of its head
         * (gb_ring_read_consume): it is done with the bytes up to h before
         * we overwrite them. */
        uint64_t h = gb_shm_load_acquire_u64(w->head);
        if (h > w->tail || w->tail - h > w->cap || h < w->head_cache)
            return GB_RING_BAD;
        w->head_cache = h;
        if (w->tail + pad + size - h > w->cap)
            return GB_RING_FULL;
    }
    if (pad) {
        /* Padding covers the rest of the ring; the record starts at 0. */
        gb_ring_record_publish(gb_ring_record_at(w->base, idx), gb_ring_stamp(w->tail, w->key), GB_RING_PAD);
        w->tail += pad;
        idx = 0;
    }
    *payload = w->base + idx + GB_RING_RECORD_HEADER;
    return GB_RING_READY;
}

static inline void gb_ring_write_commit(gb_ring_writer *w, uint32_t len)
{
    uint64_t idx = w->tail & (w->cap - 1);
    gb_ring_record_publish(gb_ring_record_at(w->base, idx), gb_ring_stamp(w->tail, w->key), len);
    w->tail += gb_ring_record_size(len);
}

/*
 * Looks at the next record. GB_RING_READY: *payload and *len describe it (in ring
 * memory: a hostile writer may still change those bytes, so copy before
 * trusting them); call gb_ring_read_consume() when done. Padding records are
 * skipped here.
 */
static inline int gb_ring_read_peek(gb_ring_reader *r, const uint8_t **payload, uint32_t *len)
{
    for (int skipped = 0;; skipped++) {
        uint64_t idx = r->head & (r->cap - 1);
        const gb_ring_record_header *h = (const gb_ring_record_header *)(const void *)(r->base + idx);
        /* ACQUIRE: pairs with the writer's release store of this stamp
         * (gb_ring_record_publish): the length and payload written before it are
         * visible once we see it. */
        if (gb_shm_load_acquire_u64(&h->stamp) != gb_ring_stamp(r->head, r->key))
            return GB_RING_EMPTY;
        /* Relaxed, once: the peer may rewrite it; only this copy is used. */
        uint32_t l = gb_shm_load_relaxed_u32(&h->len);
        if (l == GB_RING_PAD) {
            /* A pad at the start of the ring, or two in a row, is never
             * written by a correct peer. */
            if (idx == 0 || skipped)
                return GB_RING_BAD;
            r->head += r->cap - idx;
            continue;
        }
        if (l > r->max_payload || idx + gb_ring_record_size(l) > r->cap)
            return GB_RING_BAD;
        *payload = r->base + idx + GB_RING_RECORD_HEADER;
        *len = l;
        return GB_RING_READY;
    }
}

static inline void gb_ring_read_consume(gb_ring_reader *r, uint32_t len)
{
    r->head += gb_ring_record_size(len);
    /* RELEASE: pairs with the writer's acquire load of this head
     * (gb_ring_write_begin): our reads of the record are done before it may
     * reuse the bytes. */
    gb_shm_store_release_u64(r->head_pub, r->head);
}

#endif
