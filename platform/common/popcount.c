/* gb_popcount_bytes: one kernel per instruction set, picked on first use
 * (platform/popcount.h). Loads go through memcpy: one unaligned load where
 * the architecture allows it, correct where it does not. */
#include "popcount.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

/* SWAR count of one word (no instruction needed). */
static inline uint64_t swar64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (x * 0x0101010101010101ull) >> 56;
}

static uint64_t tail_count(const unsigned char *p, size_t n)
{
    uint64_t bits = 0;
    for (size_t i = 0; i < n; i++)
        bits += swar64(p[i]);
    return bits;
}

uint64_t gb_popcount_bytes_portable(const void *src, size_t n)
{
    const unsigned char *p = src;
    uint64_t bits = 0;
    /* Four independent sums: the words' counts do not wait on each other. */
    uint64_t a = 0, b = 0, c = 0, d = 0;
    for (; n >= 32; p += 32, n -= 32) {
        a += swar64(load64(p));
        b += swar64(load64(p + 8));
        c += swar64(load64(p + 16));
        d += swar64(load64(p + 24));
    }
    for (; n >= 8; p += 8, n -= 8)
        bits += swar64(load64(p));
    return bits + a + b + c + d + tail_count(p, n);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

__attribute__((target("popcnt"))) static uint64_t count_popcnt(const void *src, size_t n)
{
    const unsigned char *p = src;
    uint64_t a = 0, b = 0, c = 0, d = 0;
    for (; n >= 32; p += 32, n -= 32) {
        a += (uint64_t)__builtin_popcountll(load64(p));
        b += (uint64_t)__builtin_popcountll(load64(p + 8));
        c += (uint64_t)__builtin_popcountll(load64(p + 16));
        d += (uint64_t)__builtin_popcountll(load64(p + 24));
    }
    for (; n >= 8; p += 8, n -= 8)
        a += (uint64_t)__builtin_popcountll(load64(p));
    for (; n; p++, n--)
        b += (uint64_t)__builtin_popcount(*p);
    return a + b + c + d;
}

__attribute__((target("avx512f,avx512bw,avx512vpopcntdq,popcnt"))) static uint64_t count_avx512(const void *src, size_t n)
{
    const unsigned char *p = src;
    __m512i acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
    for (; n >= 128; p += 128, n -= 128) {
        acc0 = _mm512_add_epi64(acc0, _mm512_popcnt_epi64(_mm512_loadu_si512((const void *)p)));
        acc1 = _mm512_add_epi64(acc1, _mm512_popcnt_epi64(_mm512_loadu_si512((const void *)(p + 64))));
    }
    if (n >= 64) {
        acc0 = _mm512_add_epi64(acc0, _mm512_popcnt_epi64(_mm512_loadu_si512((const void *)p)));
        p += 64;
        n -= 64;
    }
    if (n) {
        /* The last bytes through a masked load: nothing read past the end. */
        __mmask64 m = (__mmask64)(~0ull >> (64 - n));
        __m512i last = _mm512_maskz_loadu_epi8(m, (const void *)p);
        acc1 = _mm512_add_epi64(acc1, _mm512_popcnt_epi64(last));
    }
    return (uint64_t)_mm512_reduce_add_epi64(_mm512_add_epi64(acc0, acc1));
}

typedef gb_popcount_fn count_fn;

static bool cpu_has_avx512_popcount(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq") &&
           __builtin_cpu_supports("avx512bw");
}

static bool cpu_has_popcnt(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("popcnt");
}

static count_fn *named(const char *name)
{
    if (strcmp(name, "avx512-vpopcntdq") == 0)
        return cpu_has_avx512_popcount() ? count_avx512 : NULL;
    if (strcmp(name, "popcnt") == 0)
        return cpu_has_popcnt() ? count_popcnt : NULL;
    return strcmp(name, "portable") == 0 ? gb_popcount_bytes_portable : NULL;
}

static count_fn *pick(const char **name)
{
    if (cpu_has_avx512_popcount()) {
        *name = "avx512-vpopcntdq";
        return count_avx512;
    }
    if (cpu_has_popcnt()) {
        *name = "popcnt";
        return count_popcnt;
    }
    *name = "portable";
    return gb_popcount_bytes_portable;
}
#else
typedef gb_popcount_fn count_fn;

static count_fn *named(const char *name)
{
    return strcmp(name, "portable") == 0 ? gb_popcount_bytes_portable : NULL;
}

static count_fn *pick(const char **name)
{
    *name = "portable";
    return gb_popcount_bytes_portable;
}
#endif

/* Chosen once; a race between two first callers picks the same kernel. */
static _Atomic(count_fn *) chosen;
static _Atomic(const char *) chosen_name;

static count_fn *kernel(void)
{
    count_fn *f = atomic_load_explicit(&chosen, memory_order_acquire);
    if (!f) {
        const char *name;
        f = pick(&name);
        atomic_store_explicit(&chosen_name, name, memory_order_relaxed);
        atomic_store_explicit(&chosen, f, memory_order_release);
    }
    return f;
}

uint64_t gb_popcount_bytes(const void *p, size_t n)
{
    /* Short ranges (a BITCOUNT of a few bytes) skip the call through the
     * pointer: the count is a handful of instructions either way. */
    if (n < 16)
        return tail_count(p, n);
    return kernel()(p, n);
}

const char *gb_popcount_kernel(void)
{
    kernel();
    return atomic_load_explicit(&chosen_name, memory_order_relaxed);
}

gb_popcount_fn *gb_popcount_kernel_named(const char *name) { return named(name); }
