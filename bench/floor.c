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
    gb_floor_spin spin; /* the window's way of waiting (under mu) */
    unsigned done;      /* windows the echo thread has left (under mu) */
    bool quit;       /* under mu */
    uint32_t stop;    /* ends the current window's echo loop (relaxed: a flag, orders nothing) */
};

/* Answers every odd value with the next even one until the window stops. */
static void echo_window(gb_floor *f, bool pause)
{
    uint64_t expect = 1;
    for (;;) {
        uint64_t v;
        /* ACQUIRE/RELEASE as a ring's record handoff: the pair under
         * measurement (each side's release store, the other's acquire load). */
        while ((v = gb_shm_load_acquire_u64(&f->line.word)) != expect) {
            if (gb_shm_load_relaxed_u32(&f->stop))
                return;
            if (pause)
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
        bool pause = f->spin == GB_FLOOR_SPIN_PAUSE;
        pthread_mutex_unlock(&f->mu);
        echo_window(f, pause);
        pthread_mutex_lock(&f->mu);
        f->done = seen;
        pthread_cond_broadcast(&f->cv);
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

void gb_bench_floor_window(gb_floor *f, double seconds, gb_floor_spin spin, gb_hist *h)
{
    bool pause = spin == GB_FLOOR_SPIN_PAUSE;
    /* Before the window starts: the mutex below publishes both. */
    gb_shm_store_relaxed_u64(&f->line.word, 0);
    gb_shm_store_relaxed_u32(&f->stop, 0);
    pthread_mutex_lock(&f->mu);
    f->window++;
    f->spin = spin;
    pthread_cond_signal(&f->cv);
    pthread_mutex_unlock(&f->mu);
    double npc = gb_bench_ns_per_cycle();
    uint64_t start = gb_clock_mono_ns();
    uint64_t end = start + (uint64_t)(seconds * 1e9);
    /* The warm-up (and the echo thread's wake-up) is excluded: 10,000 round
     * trips, a few milliseconds on an idle pair of cores, or the window's
     * first tenth where other work shares them and a round trip can wait a
     * time slice, so that every window keeps samples. */
    uint64_t warm_until = start + (uint64_t)(seconds * 1e8);
    bool warm = false;
    uint64_t v = 1;
    for (uint64_t i = 0;; i++) {
        uint64_t t0 = gb_cycles_now();
        gb_shm_store_release_u64(&f->line.word, v);             /* pairs with the echo's acquire load */
        while (gb_shm_load_acquire_u64(&f->line.word) != v + 1) /* pairs with the echo's release store */
            if (pause)
                gb_cpu_relax();
        uint64_t t1 = gb_cycles_now();
        v += 2;
        if (warm)
            gb_hist_add(h, (uint64_t)((double)(t1 - t0) * npc));
        if (!warm || (i & 63) == 0) { /* the clock is read outside the timed part */
            uint64_t now = gb_clock_mono_ns();
            if (warm && now > end) /* a window ends with samples, even past its time */
                break;
            warm = i >= 10000 || now > warm_until;
        }
    }
    /* The echo thread must have left this window before the next one resets
     * the line and the flag: else it could miss the stop and wait forever
     * for a value of this window. */
    gb_shm_store_relaxed_u32(&f->stop, 1);
    pthread_mutex_lock(&f->mu);
    while (f->done != f->window)
        pthread_cond_wait(&f->cv, &f->mu);
    pthread_mutex_unlock(&f->mu);
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

double gb_bench_floor_stricter(gb_floor *f, double seconds, gb_hist *h, double *medians_out)
{
    double medians[2];
    gb_hist *way[2] = {gb_hist_new(), gb_hist_new()};
    for (int spin = GB_FLOOR_SPIN_PAUSE; spin <= GB_FLOOR_SPIN_NOPAUSE; spin++) {
        gb_bench_floor_window(f, seconds / 2, (gb_floor_spin)spin, way[spin]);
        medians[spin] = (double)gb_hist_quantile(way[spin], 0.5);
    }
    int lower = medians[GB_FLOOR_SPIN_NOPAUSE] < medians[GB_FLOOR_SPIN_PAUSE] ? GB_FLOOR_SPIN_NOPAUSE : GB_FLOOR_SPIN_PAUSE;
    gb_hist_merge(h, way[lower]);
    free(way[0]);
    free(way[1]);
    if (medians_out)
        memcpy(medians_out, medians, sizeof medians);
    return medians[lower];
}
