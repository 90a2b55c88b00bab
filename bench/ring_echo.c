#define _GNU_SOURCE
#include "ring_echo.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "platform/clock.h"
#include "platform/cpu.h"
#include "platform/shm_atomic.h"
#include "transport/ring/ring_io.h"

#define REQUEST_BYTES 8u /* an SBE PING: its message header */
#define REPLY_BYTES 16u  /* an SBE StatusReply "PONG": header, length, text */

struct gb_ring_echo {
    uint8_t *req, *resp;
    uint64_t cap;
    int cpu;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool go; /* the run starts, or stop was called first (under mu) */
    /* The heads each reader publishes for its writer, on lines of their own. */
    _Alignas(GB_CACHE_ISOLATION) uint64_t req_head;
    _Alignas(GB_CACHE_ISOLATION) uint64_t resp_head;
    _Alignas(GB_CACHE_ISOLATION) uint32_t stop; /* ends the echo loop (relaxed: a flag, orders nothing) */
};

#define KEY_REQ 0x9e3779b97f4a7c15u
#define KEY_RESP 0xc2b2ae3d27d4eb4fu

static void *echo_thread(void *p)
{
    gb_ring_echo *e = p;
    gb_bench_pin(e->cpu, "ring echo thread");
    pthread_mutex_lock(&e->mu);
    while (!e->go)
        pthread_cond_wait(&e->cv, &e->mu);
    pthread_mutex_unlock(&e->mu);
    gb_ring_reader rd = {e->req, e->cap, 0, &e->req_head, REQUEST_BYTES, KEY_REQ};
    gb_ring_writer wr = {e->resp, e->cap, 0, 0, &e->resp_head, REPLY_BYTES, KEY_RESP};
    uint8_t copy[REQUEST_BYTES];
    while (!gb_shm_load_relaxed_u32(&e->stop)) {
        const uint8_t *in;
        uint32_t len;
        if (gb_ring_read_peek(&rd, &in, &len) != GB_RING_READY) {
            gb_cpu_relax();
            continue;
        }
        memcpy(copy, in, len); /* as the server: the request is read once, into private memory */
        gb_ring_read_consume(&rd, len);
        uint8_t *out;
        while (gb_ring_write_begin(&wr, REPLY_BYTES, &out) != GB_RING_READY)
            gb_cpu_relax();
        memcpy(out, copy, REQUEST_BYTES);
        memset(out + REQUEST_BYTES, 0, REPLY_BYTES - REQUEST_BYTES);
        gb_ring_write_commit(&wr, REPLY_BYTES);
        gb_shm_fence_full();
    }
    return NULL;
}

gb_ring_echo *gb_bench_ring_echo_start(int cpu_b, uint64_t ring_bytes)
{
    gb_ring_echo *e = aligned_alloc(GB_CACHE_ISOLATION, sizeof *e);
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    e->cap = ring_bytes;
    e->cpu = cpu_b;
    e->req = aligned_alloc(4096, ring_bytes);
    e->resp = aligned_alloc(4096, ring_bytes);
    if (e->req && e->resp) {
        memset(e->req, 0, ring_bytes); /* zero stamps: nothing published */
        memset(e->resp, 0, ring_bytes);
        pthread_mutex_init(&e->mu, NULL);
        pthread_cond_init(&e->cv, NULL);
        if (pthread_create(&e->thread, NULL, echo_thread, e) == 0)
            return e;
        pthread_cond_destroy(&e->cv);
        pthread_mutex_destroy(&e->mu);
    }
    free(e->req);
    free(e->resp);
    free(e);
    return NULL;
}

static void release(gb_ring_echo *e)
{
    pthread_mutex_lock(&e->mu);
    e->go = true;
    pthread_cond_signal(&e->cv);
    pthread_mutex_unlock(&e->mu);
}

void gb_bench_ring_echo_run(gb_ring_echo *e, double seconds, gb_hist *h)
{
    release(e);
    gb_ring_writer wr = {e->req, e->cap, 0, 0, &e->req_head, REQUEST_BYTES, KEY_REQ};
    gb_ring_reader rd = {e->resp, e->cap, 0, &e->resp_head, REPLY_BYTES, KEY_RESP};
    double npc = gb_bench_ns_per_cycle();
    uint64_t end = gb_clock_mono_ns() + (uint64_t)(seconds * 1e9);
    for (uint64_t i = 0;; i++) {
        uint64_t t0 = gb_cycles_now();
        uint8_t *out;
        while (gb_ring_write_begin(&wr, REQUEST_BYTES, &out) != GB_RING_READY)
            gb_cpu_relax();
        memcpy(out, &i, sizeof i);
        gb_ring_write_commit(&wr, REQUEST_BYTES);
        gb_shm_fence_full();
        const uint8_t *in;
        uint32_t len;
        while (gb_ring_read_peek(&rd, &in, &len) != GB_RING_READY)
            gb_cpu_relax();
        gb_ring_read_consume(&rd, len);
        uint64_t t1 = gb_cycles_now();
        /* The first round trips wait for the echo thread to wake. */
        if (i >= 1000)
            gb_hist_add(h, (uint64_t)((double)(t1 - t0) * npc));
        if ((i & 255) == 0 && i >= 1000 && gb_clock_mono_ns() > end)
            break;
    }
}

void gb_bench_ring_echo_stop(gb_ring_echo *e)
{
    gb_shm_store_relaxed_u32(&e->stop, 1);
    release(e); /* a thread that never ran leaves at once */
    pthread_join(e->thread, NULL);
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->mu);
    free(e->req);
    free(e->resp);
    free(e);
}
