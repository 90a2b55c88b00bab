/*
 * Records on one ring (transport/ring/ring_io.h) between two threads: a
 * writer and a reader share the ring memory and the reader's published head,
 * as the server and a client do across processes. The reader parks on a
 * wake word when the ring is empty (platform/park.h, the layout's
 * spin-then-park protocol in miniature) and the writer wakes it.
 *
 * Natively this checks that every payload arrives intact and in order while
 * both sides run at once. Its real reader is ThreadSanitizer (the TSan check,
 * cmake/check-tsan.sh): the payload bytes are plain stores and loads, so
 * they are ordered only by the header's release store / acquire load and by
 * the head's release / acquire. Weaken either to relaxed and TSan reports a
 * data race on the payload, which x86's strong ordering would hide here.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "platform/clock.h"
#include "platform/cpu.h"
#include "platform/park.h"
#include "platform/shm_atomic.h"
#include "transport/ring/ring_io.h"

#define CAP 4096u
#define KEY 0x7a11u
/* Up to this many records or TIME_BUDGET_NS, whichever ends first (at least
 * MIN_RECORDS): a loaded or instrumented machine does fewer, never fails for
 * being slow. */
#define MAX_RECORDS 200000u
#define MIN_RECORDS 5000u
#define TIME_BUDGET_NS (2ull * 1000000000ull)
#define SPINS_BEFORE_PARK 256
#define PARK_SLICE_NS (50ull * 1000000ull)

typedef struct shared {
    _Alignas(GB_CACHE_ISOLATION) uint8_t mem[CAP];
    _Alignas(GB_CACHE_ISOLATION) uint64_t head_pub; /* reader -> writer */
    _Alignas(GB_CACHE_ISOLATION) uint32_t reader_parked;
    _Alignas(GB_CACHE_ISOLATION) uint32_t wake;     /* writer adds 1 to wake the reader */
    _Alignas(GB_CACHE_ISOLATION) uint64_t total;   /* records the writer ended with; 0 while running */
    uint64_t records_read; /* reader's own count (read after join) */
    int reader_error;      /* first mismatch, after join */
} shared;

static uint8_t pattern(uint64_t seq, size_t i) { return (uint8_t)(seq * 131u + i * 7u + 1u); }

static uint32_t next_len(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (*s & 7) ? (uint32_t)(*s >> 8) % 57 : (uint32_t)(*s >> 8) % (CAP / 4 + 1);
}

/* After publishing: the full fence orders our header store before reading
 * the reader's state (Dekker with the reader's park below). */
static void wake_reader(shared *sh)
{
    gb_shm_fence_full();
    if (gb_shm_load_relaxed_u32(&sh->reader_parked)) {
        gb_shm_fetch_add_release_u32(&sh->wake, 1);
        gb_park_wake((_Atomic uint32_t *)&sh->wake, 1);
    }
}

static void *writer_main(void *arg)
{
    shared *sh = arg;
    gb_ring_writer w = {sh->mem, CAP, 0, 0, &sh->head_pub, CAP / 4, KEY};
    uint64_t seed = 0x2545f4914f6cdd1dull, seq = 0;
    uint64_t deadline = gb_clock_mono_ns() + TIME_BUDGET_NS;
    while (seq < MAX_RECORDS && (seq < MIN_RECORDS || gb_clock_mono_ns() < deadline)) {
        uint32_t len = next_len(&seed);
        uint8_t *dst;
        int rc;
        /* Full: the reader is behind. Yield now and then, so a reader that
         * shares our core (a loaded machine) gets to drain it. */
        for (unsigned spins = 1; (rc = gb_ring_write_begin(&w, len, &dst)) == GB_RING_FULL; spins++) {
            if (spins % 1024 == 0)
                sched_yield();
            else
                gb_cpu_relax();
        }
        if (rc != GB_RING_READY)
            return (void *)"the writer saw an impossible head";
        for (uint32_t b = 0; b < len; b++)
            dst[b] = pattern(seq, b);
        gb_ring_write_commit(&w, len);
        wake_reader(sh);
        seq++;
    }
    gb_shm_store_release_u64(&sh->total, seq);
    gb_shm_fetch_add_release_u32(&sh->wake, 1);
    gb_park_wake((_Atomic uint32_t *)&sh->wake, 1);
    return NULL;
}

/* Spin, then park: read the wake word, say we park, fence, look once more,
 * and sleep only while the word is unchanged. */
static int next_record(shared *sh, gb_ring_reader *r, const uint8_t **pl, uint32_t *len)
{
    for (int spins = 0;; spins++) {
        int rc = gb_ring_read_peek(r, pl, len);
        if (rc != GB_RING_EMPTY)
            return rc;
        uint64_t total = gb_shm_load_acquire_u64(&sh->total);
        if (total && sh->records_read == total)
            return GB_RING_EMPTY; /* all read */
        if (spins < SPINS_BEFORE_PARK) {
            gb_cpu_relax();
            continue;
        }
        uint32_t seen = gb_shm_load_acquire_u32(&sh->wake);
        gb_shm_store_relaxed_u32(&sh->reader_parked, 1);
        gb_shm_fence_full();
        rc = gb_ring_read_peek(r, pl, len);
        if (rc == GB_RING_EMPTY && !gb_shm_load_acquire_u64(&sh->total))
            gb_park_wait((_Atomic uint32_t *)&sh->wake, seen, PARK_SLICE_NS);
        gb_shm_store_relaxed_u32(&sh->reader_parked, 0);
        if (rc != GB_RING_EMPTY)
            return rc;
        spins = 0;
    }
}

static void *reader_main(void *arg)
{
    shared *sh = arg;
    gb_ring_reader r = {sh->mem, CAP, 0, &sh->head_pub, CAP / 4, KEY};
    uint64_t seed = 0x2545f4914f6cdd1dull;
    for (;;) {
        const uint8_t *pl;
        uint32_t len;
        int rc = next_record(sh, &r, &pl, &len);
        if (rc == GB_RING_EMPTY)
            return NULL;
        if (rc != GB_RING_READY || len != next_len(&seed)) {
            sh->reader_error = 1;
            return NULL;
        }
        for (uint32_t b = 0; b < len; b++)
            if (pl[b] != pattern(sh->records_read, b)) {
                sh->reader_error = 2;
                return NULL;
            }
        gb_ring_read_consume(&r, len);
        sh->records_read++;
    }
}

static void test_two_threads(void **state)
{
    (void)state;
    shared *sh = aligned_alloc(GB_CACHE_ISOLATION, sizeof *sh); /* sizeof is a multiple of the alignment */
    assert_non_null(sh);
    memset(sh, 0, sizeof *sh);
    pthread_t wt, rt;
    assert_int_equal(pthread_create(&rt, NULL, reader_main, sh), 0);
    assert_int_equal(pthread_create(&wt, NULL, writer_main, sh), 0);
    void *werr = NULL;
    assert_int_equal(pthread_join(wt, &werr), 0);
    assert_int_equal(pthread_join(rt, NULL), 0);
    if (werr)
        fail_msg("%s", (const char *)werr);
    print_message("%llu records through a %u-byte ring\n", (unsigned long long)sh->records_read, CAP);
    assert_int_equal(sh->reader_error, 0);
    assert_true(sh->records_read >= MIN_RECORDS);
    assert_int_equal(sh->records_read, gb_shm_load_acquire_u64(&sh->total));
    free(sh);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
