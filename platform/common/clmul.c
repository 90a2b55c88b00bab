/* gb_clmul_fold (platform/clmul.h): PCLMULQDQ on x86-64, none elsewhere. */
#include "clmul.h"

#include <stdatomic.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* x carried 'distance' bits ahead (the constants k say how far) and added
 * to the block found there: the low half of x (the block's first 8
 * bytes, the higher powers) times k's low constant, the high half times
 * k's high one. */
__attribute__((target("pclmul,sse2"))) static inline __m128i fold_block(__m128i x, __m128i k, __m128i next)
{
    __m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
    __m128i hi = _mm_clmulepi64_si128(x, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

__attribute__((target("pclmul,sse2"))) static inline __m128i load(const unsigned char *p)
{
    return _mm_loadu_si128((const __m128i *)(const void *)p);
}

__attribute__((target("pclmul,sse2"))) static void fold_pclmul(const uint64_t k[4], uint64_t crc, const void *src,
                                                                size_t n, unsigned char out[16])
{
    const unsigned char *p = src;
    const __m128i k512 = _mm_set_epi64x((long long)k[1], (long long)k[0]);
    const __m128i k128 = _mm_set_epi64x((long long)k[3], (long long)k[2]);
    /* A reflected CRC started from crc is the CRC from 0 of the message
     * with crc added to its first 8 bytes. */
    __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi64_si128((long long)crc));
    p += 16;
    n -= 16;
    if (n >= 48) {
        /* four lanes 64 bytes apart: their multiplies do not wait on each other */
        __m128i x1 = load(p), x2 = load(p + 16), x3 = load(p + 32);
        p += 48;
        n -= 48;
        for (; n >= 64; p += 64, n -= 64) {
            x0 = fold_block(x0, k512, load(p));
            x1 = fold_block(x1, k512, load(p + 16));
            x2 = fold_block(x2, k512, load(p + 32));
            x3 = fold_block(x3, k512, load(p + 48));
        }
        x1 = fold_block(x0, k128, x1);
        x2 = fold_block(x1, k128, x2);
        x0 = fold_block(x2, k128, x3);
    }
    for (; n >= 16; p += 16, n -= 16)
        x0 = fold_block(x0, k128, load(p));
    _mm_storeu_si128((__m128i *)(void *)out, x0);
}

static void no_fold(const uint64_t k[4], uint64_t crc, const void *p, size_t n, unsigned char out[16])
{
    (void)k, (void)crc, (void)p, (void)n, (void)out;
}

/* Asked once (a CRC of every DUMP payload asks again); two first callers
 * racing store the same answer. no_fold marks "looked, none". */
static _Atomic(gb_clmul_fold_fn *) chosen;

gb_clmul_fold_fn *gb_clmul_fold(void)
{
    gb_clmul_fold_fn *f = atomic_load_explicit(&chosen, memory_order_acquire);
    if (!f) {
        __builtin_cpu_init();
        f = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse2") ? fold_pclmul : no_fold;
        atomic_store_explicit(&chosen, f, memory_order_release);
    }
    return f == no_fold ? NULL : f;
}
#else
gb_clmul_fold_fn *gb_clmul_fold(void)
{
    return 0;
}
#endif
