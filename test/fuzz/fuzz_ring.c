/*
 * Fuzz harness: the ring record reader and writer (transport/ring/ring_io.h)
 * and the ring protocols (ring_proto_resp.c, ring_proto_sbe.c) behind them,
 * as a ring slot runs them (ring_server.c, serve_slot / flush_replies).
 * A ring's client is hostile: it writes the request ring's bytes and the
 * response ring's head.
 *
 * Input: [mode u8][capacity u8][stamp key u64][start u16][head delta u16] then
 *   capacity: 256 << (byte % 6) bytes (256 B .. 8 KiB: smaller than the
 *     server's 4 KiB and up, so that wrapping takes few input bytes; nothing
 *     in ring_io.h depends on the size), max_payload a quarter of it as the
 *     server sets it; start: where both rings' positions begin (in units of
 *     GB_RING_RECORD_ALIGN, as every position a writer reaches: later laps,
 *     not just the first).
 *   mode bit 0 clear, raw: the request ring's bytes as a client left them
 *     (zeros past the input). The reader returns records that lie inside
 *     the ring, no longer than max_payload, and stops (EMPTY or BAD) after
 *     at most one read per record slot (GB_RING_RECORD_ALIGN bytes): a
 *     64-bit stamp matches one position only, so it cannot loop on a ring
 *     that does not change.
 *   mode bit 0 set, records: [u16 length][bytes] records, written with the
 *     client's writer and read with the server's reader, interleaved as the
 *     ring fills: every record comes out once, in order, byte for byte,
 *     and the writer says FULL only when the unread bytes leave no room.
 *   mode bit 1: the records speak SBE (else RESP); mode bit 2: each record
 *     read is executed, as serve_slot does, by a ring client of an emptied
 *     engine; replies are published on a response ring with the server's
 *     writer and read back, and must decode (SBE) or form the byte stream
 *     the protocol produced (RESP). A client that blocks is timed out and
 *     its buffered pipeline resumed, as the ring's deadline would.
 * Then, in both modes, the response-ring writer meets a hostile head
 * (start + 8 * (head delta & 0x1fff) - 32 KiB, from the client) when
 * reserving a record of (1 + (delta >> 13)) eighths of the ring less its
 * header: it refuses (BAD) a head
 * that claims more than was written or went backwards, and otherwise
 * reserves only bytes the reader is done with.
 */
#include "fuzz_util.h"

#include "engine/core/request/blocking.h"
#include "transport/ring/ring_io.h"
#include "transport/ring/ring_proto.h"
#include "transport/sbe/sbe_client.h"

#define MAX_RECORDS 64

typedef struct ring {
    uint8_t *base;
    uint64_t cap;
    uint64_t head_pub; /* the reader's published head, read by the writer */
    gb_ring_reader rd;
    gb_ring_writer wr;
} ring;

static void ring_init(ring *r, uint64_t cap, uint64_t key, uint64_t start)
{
    /* Exactly cap bytes (aligned as the record headers): a read past
     * the ring is an ASan report. */
    r->base = aligned_alloc(GB_RING_RECORD_ALIGN, cap);
    FUZZ_CHECK(r->base != NULL, "out of memory");
    memset(r->base, 0, cap);
    r->cap = cap;
    r->head_pub = start;
    uint32_t maxp = (uint32_t)(cap / 4);
    r->rd = (gb_ring_reader){r->base, cap, start, &r->head_pub, maxp, key};
    r->wr = (gb_ring_writer){r->base, cap, start, start, &r->head_pub, maxp, key};
}

/* Peeks as the server does and checks what the reader claims. */
static int peek(ring *r, const uint8_t **p, uint32_t *len)
{
    int rc = gb_ring_read_peek(&r->rd, p, len);
    FUZZ_CHECK(rc == GB_RING_EMPTY || rc == GB_RING_READY || rc == GB_RING_BAD, "peek rc %d", rc);
    if (rc == GB_RING_READY) {
        FUZZ_CHECK(*len <= r->rd.max_payload, "record of %u bytes, max %u", *len, r->rd.max_payload);
        FUZZ_CHECK(*p >= r->base + GB_RING_RECORD_HEADER && (uint64_t)(*p - r->base) + *len <= r->cap,
                   "record at %td+%u outside a %llu-byte ring", *p - r->base, *len, (unsigned long long)r->cap);
        FUZZ_CHECK((*p - r->base) % GB_RING_RECORD_ALIGN == GB_RING_RECORD_HEADER % GB_RING_RECORD_ALIGN,
                   "record not aligned");
    }
    return rc;
}

/* ---- a slot: protocol state, its engine client, the response ring ------------------- */

typedef struct slot {
    const gb_ring_proto_ops *proto;
    void *st;
    gb_client *c;
    ring resp;
    /* RESP: every byte the protocol produced, and every byte read back. */
    gb_outbuf produced, readback;
    unsigned requests, reply_records, replies_read;
    bool dropped;
} slot;

/* Publishes one record on the response ring; reads the ring empty first
 * when it is full (the client reading), as a slot's pending queue would
 * be drained. */
static void publish(slot *s, const char *data, uint32_t len);

/* Reads what was published, and only that: the bytes after it may be a
 * stored value that looks like the next record's header, since this
 * harness's "other clients" know the stamp key (in a server they do not:
 * 64 random bits per claim, ring_layout.h). */
static void read_responses(slot *s)
{
    const uint8_t *p;
    uint32_t len;
    for (; s->replies_read < s->reply_records; s->replies_read++) {
        int rc = peek(&s->resp, &p, &len);
        FUZZ_CHECK(rc == GB_RING_READY, "a published reply record reads as %d", rc);
        if (s->proto->stream) {
            gb_outbuf_append(&s->readback, (const char *)p, len);
        } else {
            gb_sbe_reply_view root;
            size_t nn = 0;
            int drc = gb_sbe_decode_reply(p, len, &root, NULL, &nn);
            if (drc == GB_ERANGE) {
                gb_sbe_reply_view *nodes = calloc(nn, sizeof *nodes);
                drc = gb_sbe_decode_reply(p, len, &root, nodes, &nn);
                free(nodes);
            }
            FUZZ_CHECK(drc == 0, "a reply record its client cannot decode (rc %d)", drc);
        }
        gb_ring_read_consume(&s->resp.rd, len);
    }
}

static void publish(slot *s, const char *data, uint32_t len)
{
    FUZZ_CHECK(len <= s->resp.wr.max_payload, "reply record of %u bytes, max %u", len, s->resp.wr.max_payload);
    uint8_t *dst;
    int rc = gb_ring_write_begin(&s->resp.wr, len, &dst);
    if (rc == GB_RING_FULL) {
        read_responses(s);
        rc = gb_ring_write_begin(&s->resp.wr, len, &dst);
    }
    FUZZ_CHECK(rc == GB_RING_READY, "no room for %u bytes in an emptied %llu-byte ring (rc %d)", len,
               (unsigned long long)s->resp.cap, rc);
    memcpy(dst, data, len);
    gb_ring_write_commit(&s->resp.wr, len);
    s->reply_records++;
}

/* flush_replies: a stream cut into records of at most max_payload, or one
 * record per frame with an oversize reply replaced by an error. */
static void flush(slot *s)
{
    s->proto->finish(s->st);
    gb_outbuf *out = s->proto->take_output(s->st);
    size_t off = 0;
    uint32_t maxp = s->resp.wr.max_payload;
    if (s->proto->stream) {
        gb_outbuf_append(&s->produced, out->data, out->len);
        for (; off < out->len; off += GB_MIN(out->len - off, (size_t)maxp))
            publish(s, out->data + off, (uint32_t)GB_MIN(out->len - off, (size_t)maxp));
    } else {
        while (off + 4 <= out->len) {
            uint32_t len;
            memcpy(&len, out->data + off, 4);
            FUZZ_CHECK(off + 4 + len <= out->len, "a frame past the output");
            if (len > maxp) {
                char enc[256];
                size_t n = s->proto->encode_error(enc, sizeof enc, "ERR reply exceeds the ring's largest record");
                FUZZ_CHECK(n > 0 && n <= maxp, "error reply of %zu bytes", n);
                publish(s, enc, (uint32_t)n);
            } else {
                publish(s, out->data + off + 4, len);
            }
            off += 4 + (size_t)len;
        }
        FUZZ_CHECK(off == out->len, "%zu stray bytes after the frames", out->len - off);
    }
    out->len = 0;
}

/* One request record, as serve_slot runs it. */
static void execute(slot *s, const uint8_t *payload, uint32_t len)
{
    if (s->dropped)
        return;
    s->requests++;
    char *msg = (char *)fuzz_dup(payload, len); /* the private copy */
    int rc = s->proto->execute(s->st, s->c, msg, len);
    free(msg);
    FUZZ_CHECK(rc == 0 || rc == GB_EPROTO || rc == GB_ENOMEM, "execute rc %d", rc);
    flush(s);
    /* A blocked client times out; a RESP pipeline behind it resumes. */
    for (int guard = 0; rc == 0 && guard < 4096 && (s->c->flags & GB_CLIENT_BLOCKED); guard++) {
        gb_blocking_unblock(s->c, GB_UNBLOCK_TIMEOUT);
        flush(s);
        if (s->proto->has_input(s->st)) {
            rc = s->proto->execute(s->st, s->c, NULL, 0);
            FUZZ_CHECK(rc == 0, "resume rc %d", rc);
            flush(s);
        }
    }
    if (rc != 0 || (s->c->flags & (GB_CLIENT_CLOSE_AFTER_REPLY | GB_CLIENT_CLOSE_ASAP)))
        s->dropped = true; /* the slot is released */
}

static void slot_open(slot *s, bool sbe, uint64_t cap, uint64_t key, uint64_t start)
{
    static gb_engine *eng;
    if (!eng) {
        eng = fuzz_engine_new(NULL, NULL);
        fuzz_engine_deny_commands(eng);
    }
    fuzz_engine_reset(eng);
    memset(s, 0, sizeof *s);
    s->proto = sbe ? &gb_ring_proto_sbe : &gb_ring_proto_resp;
    s->st = s->proto->new_state(eng);
    s->c = gb_client_new(eng, s->proto->reply_ops, s->proto->reply_ctx(s->st), NULL, NULL,
                         GB_CLIENT_RING | GB_CLIENT_AUTHED);
    ring_init(&s->resp, cap, key, start);
    gb_outbuf_init(&s->produced);
    gb_outbuf_init(&s->readback);
}

static void slot_close(slot *s)
{
    read_responses(s);
    if (fuzz_verbose())
        fprintf(stderr, "ring: %u requests, %u reply records%s: %.*s\n",
                s->requests, s->reply_records,
                s->dropped ? ", slot dropped" : "", (int)GB_MIN(s->readback.len, 300), s->readback.data);
    if (s->proto->stream)
        FUZZ_CHECK(s->readback.len == s->produced.len &&
                       (!s->produced.len || memcmp(s->readback.data, s->produced.data, s->produced.len) == 0),
                   "the response ring carried %zu bytes of a %zu-byte stream, or other bytes", s->readback.len,
                   s->produced.len);
    gb_engine *eng = s->c->eng;
    gb_client_free(s->c);
    s->proto->free_state(s->st);
    free(s->resp.base);
    gb_outbuf_free(&s->produced);
    gb_outbuf_free(&s->readback);
    fuzz_verify_dataset(eng);
}

/* ---- the two modes --------------------------------------------------------------------- */

static void raw(ring *r, fuzz_in *in, slot *s)
{
    memcpy(r->base, in->p, GB_MIN(in->left, (size_t)r->cap));
    uint64_t reads = 0, limit = r->cap / GB_RING_RECORD_ALIGN;
    const uint8_t *p;
    uint32_t len;
    while (peek(r, &p, &len) == GB_RING_READY) {
        FUZZ_CHECK(++reads <= limit, "more than %llu records read from an unchanging %llu-byte ring",
                   (unsigned long long)limit, (unsigned long long)r->cap);
        if (s)
            execute(s, p, len);
        gb_ring_read_consume(&r->rd, len);
        FUZZ_CHECK(r->head_pub == r->rd.head, "head not published");
    }
}

/* A record written by the client's writer comes out of the server's reader. */
static void expect_one(ring *r, const uint8_t *want, uint32_t n, slot *s)
{
    const uint8_t *p;
    uint32_t len;
    int rc = peek(r, &p, &len);
    FUZZ_CHECK(rc == GB_RING_READY, "a written record reads as %d", rc);
    FUZZ_CHECK(len == n && memcmp(p, want, n) == 0, "read %u bytes for a %u-byte record", len, n);
    if (s)
        execute(s, p, len);
    gb_ring_read_consume(&r->rd, len);
}

static void records(ring *r, fuzz_in *in, slot *s)
{
    /* What is written but not yet read, in order. */
    const uint8_t *queued[MAX_RECORDS];
    uint32_t qlen[MAX_RECORDS];
    int qhead = 0, qtail = 0;
    const uint8_t *p;
    uint32_t len;
    /* A ring of zeros holds no record (stamps are odd). */
    FUZZ_CHECK(peek(r, &p, &len) == GB_RING_EMPTY, "a record in a fresh ring");
    for (int i = 0; i < MAX_RECORDS && in->left; i++) {
        uint32_t n = fuzz_u16(in);
        n = (uint32_t)GB_MIN((size_t)n, in->left);
        n = GB_MIN(n, r->wr.max_payload);
        const uint8_t *rec = in->p;
        in->p += n;
        in->left -= n;
        uint8_t *dst;
        int rc;
        while ((rc = gb_ring_write_begin(&r->wr, n, &dst)) == GB_RING_FULL) {
            /* Full only when the unread bytes leave no room for it. */
            uint64_t idx = r->wr.tail & (r->cap - 1), size = gb_ring_record_size(n);
            uint64_t pad = idx + size > r->cap ? r->cap - idx : 0;
            FUZZ_CHECK(r->wr.tail + pad + size - r->head_pub > r->cap, "FULL with room");
            FUZZ_CHECK(qhead < qtail, "FULL with nothing unread");
            expect_one(r, queued[qhead], qlen[qhead], s);
            qhead++;
        }
        FUZZ_CHECK(rc == GB_RING_READY, "writer rc %d against an honest reader", rc);
        FUZZ_CHECK(dst >= r->base + GB_RING_RECORD_HEADER && (uint64_t)(dst - r->base) + n <= r->cap,
                   "reserved outside the ring");
        memcpy(dst, rec, n);
        gb_ring_write_commit(&r->wr, n);
        queued[qtail] = rec;
        qlen[qtail++] = n;
    }
    /* Nothing after the last record is checked: a payload may hold what
     * passes for a later record's header, the client's to write. */
    for (; qhead < qtail; qhead++)
        expect_one(r, queued[qhead], qlen[qhead], s);
}

/* The response-ring writer against a head published by a hostile client. */
static void hostile_head(uint64_t cap, uint64_t key, uint64_t start, uint16_t delta)
{
    ring r;
    ring_init(&r, cap, key, start);
    /* Some bytes written first (never more than half the ring with any
     * padding, so an honest head at the start leaves room). */
    uint32_t n = (uint32_t)(cap / 8);
    for (int i = 0; i < 3; i++) {
        uint8_t *dst;
        FUZZ_CHECK(gb_ring_write_begin(&r.wr, n, &dst) == GB_RING_READY, "honest write refused");
        memset(dst, 'x', n);
        gb_ring_write_commit(&r.wr, n);
    }
    uint64_t written = r.wr.tail;
    uint64_t cached = r.wr.head_cache;
    r.head_pub = start + (uint64_t)(delta & 0x1fff) * 8 - 32768; /* below start: a head that went back */
    n = (uint32_t)(cap / 8 * (1 + (delta >> 13))) - GB_RING_RECORD_HEADER; /* 1/8 .. a whole ring */
    uint8_t *dst = NULL;
    int rc = gb_ring_write_begin(&r.wr, n, &dst);
    uint64_t h = r.head_pub;
    bool impossible = h > written || written - h > cap || h < cached;
    if (rc == GB_RING_BAD) {
        FUZZ_CHECK(impossible, "head %llu refused though possible", (unsigned long long)(h - start));
    } else if (rc == GB_RING_READY) {
        FUZZ_CHECK(!impossible || r.wr.head_cache == cached, "impossible head %llu believed",
                   (unsigned long long)(h - start));
        /* Only bytes the reader is done with: from the tail (after any
         * padding) to the record's end, within cap of the head. */
        uint64_t end = r.wr.tail + gb_ring_record_size(n);
        FUZZ_CHECK(end - r.wr.head_cache <= cap, "reserved %llu bytes past the head",
                   (unsigned long long)(end - r.wr.head_cache - cap));
        FUZZ_CHECK(dst >= r.base + GB_RING_RECORD_HEADER && (uint64_t)(dst - r.base) + n <= cap,
                   "reserved outside the ring");
    } else {
        FUZZ_CHECK(rc == GB_RING_FULL && !impossible, "rc %d for head %llu", rc, (unsigned long long)(h - start));
    }
    free(r.base);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    uint8_t mode = fuzz_u8(&in);
    uint64_t cap = (uint64_t)256 << (fuzz_u8(&in) % 6);
    uint64_t key = 0;
    for (int i = 0; i < 4; i++)
        key |= (uint64_t)fuzz_u16(&in) << (16 * i);
    uint64_t start = (uint64_t)fuzz_u16(&in) * GB_RING_RECORD_ALIGN;
    uint16_t delta = fuzz_u16(&in);

    slot s, *sp = NULL;
    if (mode & 4) {
        slot_open(&s, mode & 2, cap, key, start);
        sp = &s;
    }
    ring r;
    ring_init(&r, cap, key, start);
    if (mode & 1)
        records(&r, &in, sp);
    else
        raw(&r, &in, sp);
    free(r.base);
    if (sp)
        slot_close(sp);
    hostile_head(cap, key, start, delta);
    return 0;
}
