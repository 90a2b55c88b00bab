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
#define KEY 0x5eedu

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

/* Writes a raw header at ring offset off for position pos. */
static void put_header(pair *p, uint64_t pos, uint32_t len)
{
    uint64_t word = gb_ring_header_word(pos, KEY, len);
    memcpy(p->mem + (pos & (CAP - 1)), &word, 8);
}

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
    p->r.head = CAP - 16;
    put_header(p, CAP - 16, GB_RING_PAD);
    put_header(p, CAP, GB_RING_PAD);
    assert_int_equal(peek(p, &len), GB_RING_BAD);
    free(p);
    /* The end-of-ring pad: fine mid-ring, refused at offset 0. */
    p = pair_new();
    p->r.head = CAP - 16;
    put_header(p, CAP - 16, GB_RING_PAD);
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
    p->r.head = CAP - 16;
    put_header(p, CAP - 16, 16);
    assert_int_equal(peek(p, &len), GB_RING_BAD);
    free(p);
    p = pair_new();
    put_header(p, 0, CAP / 4 + 1);
    assert_int_equal(peek(p, &len), GB_RING_BAD);
    free(p);
}

/* The writer pads to the end of the ring only when a record does not fit
 * before it; the reader follows it to offset 0. */
static void test_writer_wrap_padding(void **state)
{
    (void)state;
    pair *p = pair_new();
    uint8_t *dst = NULL;
    p->w.tail = p->r.head = p->head_pub = p->w.head_cache = CAP - 24;
    assert_int_equal(gb_ring_write_begin(&p->w, 16, &dst), GB_RING_READY); /* 24 bytes: fits exactly */
    assert_ptr_equal(dst, p->mem + CAP - 16);
    gb_ring_write_commit(&p->w, 16);
    assert_int_equal(gb_ring_write_begin(&p->w, 40, &dst), GB_RING_READY);
    assert_ptr_equal(dst, p->mem + 8);
    gb_ring_write_commit(&p->w, 40);
    p->w.tail = p->r.head = p->head_pub = p->w.head_cache = CAP - 16;
    assert_int_equal(gb_ring_write_begin(&p->w, 16, &dst), GB_RING_READY); /* 24 bytes: padded */
    assert_ptr_equal(dst, p->mem + 8);
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
        cmocka_unit_test(test_writer_wrap_padding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
