#define _GNU_SOURCE
#include "floor.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "platform/clock.h"
#include "platform/cpu.h"
#include "platform/shm_atomic.h"

/* The line the two threads hand back and forth, alone in 128 bytes. */
typedef struct {
    _Alignas(GB_CACHE_ISOLATION) uint64_t word;
    char pad[GB_CACHE_ISOLATION - sizeof(uint64_t)];
} isolated_line;

struct gb_floor {
    isolated_line line;
    int cpu;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned window; /* incremented to start a window (under mu) */
    bool quit;       /* under mu */
    uint32_t stop;    /* ends the current window's echo loop (relaxed: a flag, orders nothing) */
};

/* Answers every odd value with the next even one until the window stops. */
static void echo_window(gb_floor *f)
{
    uint64_t expect = 1;
    for (;;) {
        uint64_t v;
        /* ACQUIRE/RELEASE as a ring's record handoff: the pair under
         * measurement (each side's release store, the other's acquire load). */
        while ((v = gb_shm_load_acquire_u64(&f->line.word)) != expect) {
            if (gb_shm_load_relaxed_u32(&f->stop))
                return;
            gb_cpu_relax();
        }
        gb_shm_store_release_u64(&f->line.word, v + 1);
        expect = v + 2;
    }
}

static void *echo_thread(void *p)
{
    gb_floor *f = p;
    gb_bench_pin(f->cpu, "floor echo thread");
    unsigned seen = 0;
    pthread_mutex_lock(&f->mu);
    for (;;) {
        while (f->window == seen && !f->quit)
            pthread_cond_wait(&f->cv, &f->mu);
        if (f->quit)
            break;
        seen = f->window;
        pthread_mutex_unlock(&f->mu);
        echo_window(f);
        pthread_mutex_lock(&f->mu);
    }
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

gb_floor *gb_bench_floor_start(int cpu_b)
{
    /* The isolated line needs its 128-byte alignment: calloc gives 16. */
    gb_floor *f = aligned_alloc(GB_CACHE_ISOLATION, sizeof *f); /* sizeof is a multiple of it */
    memset(f, 0, sizeof *f);
    f->cpu = cpu_b;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    pthread_create(&f->thread, NULL, echo_thread, f);
    return f;
}

void gb_bench_floor_window(gb_floor *f, double seconds, gb_hist *h)
{
    /* Before the window starts: the mutex below publishes both. */
    gb_shm_store_relaxed_u64(&f->line.word, 0);
    gb_shm_store_relaxed_u32(&f->stop, 0);
    pthread_mutex_lock(&f->mu);
    f->window++;
    pthread_cond_signal(&f->cv);
    pthread_mutex_unlock(&f->mu);
    double npc = gb_bench_ns_per_cycle();
    uint64_t end = gb_clock_mono_ns() + (uint64_t)(seconds * 1e9);
    uint64_t v = 1;
    for (uint64_t i = 0;; i++) {
        uint64_t t0 = gb_cycles_now();
        gb_shm_store_release_u64(&f->line.word, v);             /* pairs with the echo's acquire load */
        while (gb_shm_load_acquire_u64(&f->line.word) != v + 1) /* pairs with the echo's release store */
            gb_cpu_relax();
        uint64_t t1 = gb_cycles_now();
        v += 2;
        if (i > 10000) /* warm-up (and the echo thread's wake-up) excluded */
            gb_hist_add(h, (uint64_t)((double)(t1 - t0) * npc));
        if ((i & 1023) == 0 && gb_clock_mono_ns() > end)
            break;
    }
    gb_shm_store_relaxed_u32(&f->stop, 1);
}

void gb_bench_floor_stop(gb_floor *f)
{
    gb_shm_store_relaxed_u32(&f->stop, 1);
    pthread_mutex_lock(&f->mu);
    f->quit = true;
    pthread_cond_signal(&f->cv);
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->thread, NULL);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
    free(f);
}

void gb_bench_floor(int cpu_a, int cpu_b, double seconds, gb_hist *h)
{
    gb_floor *f = gb_bench_floor_start(cpu_b);
    gb_bench_pin(cpu_a, "floor ping thread");
    gb_bench_floor_window(f, seconds, h);
    gb_bench_floor_stop(f);
}
