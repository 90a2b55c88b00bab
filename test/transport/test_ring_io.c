/*
 * Records on one ring (transport/ring/ring_io.h), writer and reader in one
 * thread: a seeded random stream of record sizes against a queue model
 * (every payload arrives intact and in order, across hundreds of wraps,
 * with the writer stopped by a full ring); and the reader's verdict on
 * hand-made headers a hostile peer could write.
 */
#define _POSIX_C_SOURCE 200809L /* rand_r */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "transport/ring/ring_io.h"

#define CAP 4096u
#define KEY UINT64_C(0x9e3779b97f4a7c15)

typedef struct pair {
    _Alignas(64) uint8_t mem[CAP];
    uint64_t head_pub; /* the reader's published head */
    gb_ring_writer w;
    gb_ring_reader r;
} pair;

static pair *pair_new(void)
{
    pair *p = aligned_alloc(64, sizeof *p); /* sizeof is a multiple of 64 */
    memset(p, 0, sizeof *p);
    p->w = (gb_ring_writer){p->mem, CAP, 0, 0, &p->head_pub, CAP / 4, KEY};
    p->r = (gb_ring_reader){p->mem, CAP, 0, &p->head_pub, CAP / 4, KEY};
    return p;
}

static uint8_t pattern(uint64_t seq, size_t i) { return (uint8_t)(seq * 131u + i * 7u + 1u); }

/* Mostly small records (the hot path), sometimes up to max_payload. */
static uint32_t random_len(unsigned *seed)
{
    unsigned r = (unsigned)rand_r(seed);
    if (r % 8 != 0)
        return r % 57; /* record of 8..64 bytes */
    return r % (CAP / 4 + 1);
}

static void test_model_stream(void **state)
{
    (void)state;
    pair *p = pair_new();
    unsigned seed = 42;
    uint64_t written = 0, read = 0;
    uint32_t lens[4096]; /* lengths in flight, a FIFO by sequence number */
    while (read < 200000) {
        /* Write a random number of records until the ring is full. */
        int burst = rand_r(&seed) % 12;
        for (int i = 0; i < burst && written - read < 4096; i++) {
            uint32_t len = random_len(&seed);
            uint8_t *dst = NULL;
            int rc = gb_ring_write_begin(&p->w, len, &dst);
            assert_int_not_equal(rc, GB_RING_BAD);
            if (rc == GB_RING_FULL)
                break;
            assert_int_equal(rc, GB_RING_READY);
            for (uint32_t b = 0; b < len; b++)
                dst[b] = pattern(written, b);
            gb_ring_write_commit(&p->w, len);
            lens[written % 4096] = len;
            written++;
        }
        /* Read some back. */
        int take = rand_r(&seed) % 12;
        for (int i = 0; i < take; i++) {
            const uint8_t *pl = NULL;
            uint32_t len = 0;
            int rc = gb_ring_read_peek(&p->r, &pl, &len);
            if (read == written) {
                assert_int_equal(rc, GB_RING_EMPTY);
                break;
            }
            assert_int_equal(rc, GB_RING_READY);
            assert_int_equal(len, lens[read % 4096]);
            for (uint32_t b = 0; b < len; b++)
                assert_int_equal(pl[b], pattern(read, b));
            uint64_t start = (uint64_t)(pl - GB_RING_RECORD_HEADER - p->mem);
            assert_true(start + gb_ring_record_size(len) <= CAP); /* never wraps */
            gb_ring_read_consume(&p->r, len);
            read++;
        }
    }
    assert_true(p->w.tail > 100u * CAP); /* many laps */
    free(p);
}

/* Writes a raw header at the ring offset of position pos, with `key`. */
static void put_header_key(pair *p, uint64_t pos, uint32_t len, uint64_t key)
{
    gb_ring_record_header h = {gb_ring_stamp(pos, key), len, 0};
    memcpy(p->mem + (pos & (CAP - 1)), &h, sizeof h);
}

static void put_header(pair *p, uint64_t pos, uint32_t len) { put_header_key(p, pos, len, KEY); }

static int peek(pair *p, uint32_t *len)
{
    const uint8_t *pl;
    return gb_ring_read_peek(&p->r, &pl, len);
}

static void test_hostile_pads(void **state)
{
    (void)state;
    uint32_t len;
    pair *p;
    /* Two pads in a row are never written. */
    p = pair_new();
    p->r.head = CAP - 32;
    put_header(p, CAP - 32, GB_RING_PAD);
    put_header(p, CAP, GB_RING_PAD);
    assert_int_equal(peek(p, &len), GB_RING_BAD);
    free(p);
    /* The end-of-ring pad: fine mid-ring, refused at offset 0. */
    p = pair_new();
    p->r.head = CAP - 32;
    put_header(p, CAP - 32, GB_RING_PAD);
    put_header(p, CAP, 3);
    assert_int_equal(peek(p, &len), GB_RING_READY);
    assert_int_equal(len, 3);
    free(p);
    p = pair_new();
    put_header(p, 0, GB_RING_PAD);
    assert_int_equal(peek(p, &len), GB_RING_BAD);
    free(p);
    /* A record running past the end of the ring, or over max_payload. */
    p = pair_new();
    p->r.head = CAP - 32;
    put_header(p, CAP - 32, 32);
    assert_int_equal(peek(p, &len), GB_RING_BAD);
    free(p);
    p = pair_new();
    put_header(p, 0, CAP / 4 + 1);
    assert_int_equal(peek(p, &len), GB_RING_BAD);
    free(p);
}

/* What a reader must not take for a published record: a header from an
 * earlier lap at the same offset (one lap ago, and 2^35 bytes ago - where
 * layout 1's 32-bit stamps of position/8 repeated), a header stamped with
 * another slot's key, never-written zeros, and the stamp word alone
 * without its low bit. */
static void test_stale_and_foreign_stamps(void **state)
{
    (void)state;
    uint32_t len;
    pair *p = pair_new();
    uint64_t pos = UINT64_C(1) << 40; /* a reader far into its stream */
    p->r.head = pos;
    assert_int_equal(peek(p, &len), GB_RING_EMPTY); /* zeros */
    put_header(p, pos - CAP, 8);
    assert_int_equal(peek(p, &len), GB_RING_EMPTY);
    put_header(p, pos - (UINT64_C(1) << 35), 8);
    assert_int_equal(peek(p, &len), GB_RING_EMPTY);
    put_header_key(p, pos, 8, KEY ^ (UINT64_C(1) << 40));
    assert_int_equal(peek(p, &len), GB_RING_EMPTY);
    put_header_key(p, pos, 8, KEY ^ 0x10);
    assert_int_equal(peek(p, &len), GB_RING_EMPTY);
    gb_ring_record_header h = {gb_ring_stamp(pos, KEY) & ~UINT64_C(1), 8, 0};
    memcpy(p->mem + (pos & (CAP - 1)), &h, sizeof h);
    assert_int_equal(peek(p, &len), GB_RING_EMPTY);
    put_header(p, pos, 8);
    assert_int_equal(peek(p, &len), GB_RING_READY);
    assert_int_equal(len, 8);
    free(p);
    /* Distinct positions, distinct stamps: xor with the key is a bijection
     * on the 16-aligned positions, and the forced low bit loses nothing. */
    for (uint64_t a = 0; a < 64 * 16; a += 16)
        for (uint64_t b = a + 16; b < 64 * 16; b += 16)
            assert_true(gb_ring_stamp(a, KEY) != gb_ring_stamp(b, KEY));
    assert_true((gb_ring_stamp(0, 0) & 1) == 1);
}

/* The writer pads to the end of the ring only when a record does not fit
 * before it; the reader follows it to offset 0. Records are 16-aligned. */
static void test_writer_wrap_padding(void **state)
{
    (void)state;
    pair *p = pair_new();
    uint8_t *dst = NULL;
    p->w.tail = p->r.head = p->head_pub = p->w.head_cache = CAP - 32;
    assert_int_equal(gb_ring_write_begin(&p->w, 16, &dst), GB_RING_READY); /* 32 bytes: fits exactly */
    assert_ptr_equal(dst, p->mem + CAP - 16);
    gb_ring_write_commit(&p->w, 16);
    assert_int_equal(gb_ring_write_begin(&p->w, 40, &dst), GB_RING_READY);
    assert_ptr_equal(dst, p->mem + 16);
    gb_ring_write_commit(&p->w, 40);
    assert_int_equal(p->w.tail, CAP + 64); /* 16 + 40, rounded up to 16 */
    p->w.tail = p->r.head = p->head_pub = p->w.head_cache = CAP - 16;
    assert_int_equal(gb_ring_write_begin(&p->w, 16, &dst), GB_RING_READY); /* 32 bytes: padded */
    assert_ptr_equal(dst, p->mem + 16);
    gb_ring_write_commit(&p->w, 16);
    uint32_t len = 0;
    assert_int_equal(peek(p, &len), GB_RING_READY);
    assert_int_equal(len, 16);
    assert_int_equal(p->r.head, CAP);
    /* Full: the reader has not consumed anything of the next lap. */
    p->head_pub = p->w.head_cache = CAP - 16;
    p->w.tail = 2 * CAP - 16;
    assert_int_equal(gb_ring_write_begin(&p->w, 8, &dst), GB_RING_FULL);
    /* A head that moved backwards is the reader's (peer's) fault. */
    p->head_pub = CAP - 32;
    p->w.head_cache = CAP - 16;
    assert_int_equal(gb_ring_write_begin(&p->w, 8, &dst), GB_RING_BAD);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_stream),
        cmocka_unit_test(test_hostile_pads),
        cmocka_unit_test(test_stale_and_foreign_stamps),
        cmocka_unit_test(test_writer_wrap_padding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
