#define _GNU_SOURCE
#include "floor.h"

#include <pthread.h>
#include <stdatomic.h>

#include "platform/clock.h"
#include "platform/cpu.h"

/* The line the two threads hand back and forth, alone in 128 bytes. */
typedef struct {
    _Alignas(GB_CACHE_ISOLATION) _Atomic uint64_t word;
    char pad[GB_CACHE_ISOLATION - sizeof(uint64_t)];
} isolated_line;

static isolated_line line;
static _Atomic int stop;

typedef struct {
    int cpu;
} echo_arg;

static void *echo(void *p)
{
    echo_arg *a = p;
    gb_bench_pin(a->cpu, "floor echo thread");
    uint64_t expect = 1;
    for (;;) {
        uint64_t v;
        while ((v = atomic_load_explicit(&line.word, memory_order_acquire)) != expect) {
            if (atomic_load_explicit(&stop, memory_order_relaxed))
                return NULL;
            gb_cpu_relax();
        }
        atomic_store_explicit(&line.word, v + 1, memory_order_release);
        expect = v + 2;
    }
}

void gb_bench_floor(int cpu_a, int cpu_b, double seconds, gb_hist *h)
{
    atomic_store(&line.word, 0);
    atomic_store(&stop, 0);
    echo_arg a = {cpu_b};
    pthread_t t;
    pthread_create(&t, NULL, echo, &a);
    gb_bench_pin(cpu_a, "floor ping thread");
    double npc = gb_bench_ns_per_cycle();
    uint64_t end = gb_clock_mono_ns() + (uint64_t)(seconds * 1e9);
    uint64_t v = 1;
    for (uint64_t i = 0;; i++) {
        uint64_t t0 = gb_cycles_now();
        atomic_store_explicit(&line.word, v, memory_order_release);
        while (atomic_load_explicit(&line.word, memory_order_acquire) != v + 1)
            gb_cpu_relax();
        uint64_t t1 = gb_cycles_now();
        v += 2;
        if (i > 10000) /* warm-up excluded */
            gb_hist_add(h, (uint64_t)((double)(t1 - t0) * npc));
        if ((i & 1023) == 0 && gb_clock_mono_ns() > end)
            break;
    }
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
}
