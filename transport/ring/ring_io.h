/*
 * Reading and writing records on one ring (include/goblin/ring_layout.h).
 * Shared by the server (transport/ring/ring_server.c) and the client library
 * (transport/ring/ring_client.c); header-only because it is the hot path.
 *
 * Memory ordering (GCC/Clang __atomic builtins on the plain layout fields):
 *   writer: payload stores, then header store RELEASE  -> pairs with
 *   reader: header load ACQUIRE, then payload loads.
 *   reader: head store RELEASE after it is done with the bytes -> pairs with
 *   writer: head load ACQUIRE before it reuses them.
 * Nothing else is shared on this path: no tail index, no counter.
 *
 * The reader validates everything (the peer may be hostile): the stamp, the
 * length against max_payload, the record against the end of the ring, and a
 * padding record's position. It never reads outside [base, base + cap).
 */
#ifndef GB_TRANSPORT_RING_IO_H
#define GB_TRANSPORT_RING_IO_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "goblin/ring_layout.h"

typedef struct gb_ring_writer {
    uint8_t *base;
    uint64_t cap;        /* power of two */
    uint64_t tail;       /* next write position (private) */
    uint64_t head_cache; /* last head read from the reader */
    uint64_t *head;      /* the reader's published head (shared) */
    uint32_t max_payload;
    uint32_t key;        /* hdr.stamp_key */
} gb_ring_writer;

typedef struct gb_ring_reader {
    const uint8_t *base;
    uint64_t cap;
    uint64_t head;   /* next read position (private) */
    uint64_t *head_pub; /* where we publish head for the writer (shared) */
    uint32_t max_payload;
    uint32_t key;
} gb_ring_reader;

enum gb_ring_status {
    GB_RING_EMPTY = 0,  /* nothing published yet */
    GB_RING_READY = 1,  /* a record is available (peek) / space is reserved (write) */
    GB_RING_FULL = 2,   /* no room for the record now (write) */
    GB_RING_BAD = -1,   /* the peer broke the protocol */
};

static inline uint64_t gb_ring_load_acquire(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void gb_ring_store_release(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

static inline uint64_t gb_ring_header_word(uint64_t pos, uint32_t key, uint32_t len)
{
    return (uint64_t)len | ((uint64_t)gb_ring_stamp(pos, key) << 32);
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
        uint64_t h = gb_ring_load_acquire(w->head);
        if (h > w->tail || w->tail - h > w->cap || h < w->head_cache)
            return GB_RING_BAD;
        w->head_cache = h;
        if (w->tail + pad + size - h > w->cap)
            return GB_RING_FULL;
    }
    if (pad) {
        /* Padding covers the rest of the ring; the record starts at 0. */
        uint64_t *hdr = (uint64_t *)(w->base + idx);
        __atomic_store_n(hdr, gb_ring_header_word(w->tail, w->key, GB_RING_PAD), __ATOMIC_RELEASE);
        w->tail += pad;
        idx = 0;
    }
    *payload = w->base + idx + GB_RING_RECORD_HEADER;
    return GB_RING_READY;
}

static inline void gb_ring_write_commit(gb_ring_writer *w, uint32_t len)
{
    uint64_t idx = w->tail & (w->cap - 1);
    uint64_t *hdr = (uint64_t *)(w->base + idx);
    /* RELEASE: the payload written before is visible to whoever sees the stamp. */
    __atomic_store_n(hdr, gb_ring_header_word(w->tail, w->key, len), __ATOMIC_RELEASE);
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
        uint64_t word = __atomic_load_n((const uint64_t *)(r->base + idx), __ATOMIC_ACQUIRE);
        if ((uint32_t)(word >> 32) != gb_ring_stamp(r->head, r->key))
            return GB_RING_EMPTY;
        uint32_t l = (uint32_t)word;
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
    /* RELEASE: we are done with those bytes; the writer may reuse them. */
    gb_ring_store_release(r->head_pub, r->head);
}

#endif
