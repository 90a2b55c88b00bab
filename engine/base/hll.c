/*
 * HyperLogLog in Redis 7.0's representation (engine/base/hll.h). The
 * sparse writer follows Redis's hllSparseSet step by step, since its
 * opcode splits and its limited merge scan decide the exact bytes; the
 * readers take hostile strings and stop at the first opcode past the last
 * register.
 */
#include "engine/base/hll.h"

#include <math.h>
#include <stdio.h>

#include "engine/base/mem.h"
#include "engine/base/random.h"

#define HLL_Q (64 - GB_HLL_P) /* hash bits left for the run of zeros */
#define HLL_REGISTER_MAX 63
#define HLL_SEED 0xadc83b19ULL
#define HLL_ALPHA_INF 0.721347520444481703680 /* 0.5 / ln(2) */
#define DENSE_BYTES (GB_HLL_DENSE_SIZE - GB_HLL_HDR_SIZE)

/* ---- sparse opcodes ----------------------------------------------------------------------- */

#define SPARSE_XZERO_BIT 0x40
#define SPARSE_VAL_BIT 0x80
#define SPARSE_IS_ZERO(p) (((*(p)) & 0xc0) == 0)
#define SPARSE_IS_XZERO(p) (((*(p)) & 0xc0) == SPARSE_XZERO_BIT)
#define SPARSE_IS_VAL(p) ((*(p)) & SPARSE_VAL_BIT)
#define SPARSE_ZERO_LEN(p) (((*(p)) & 0x3f) + 1)
#define SPARSE_VAL_VALUE(p) ((((*(p)) >> 2) & 0x1f) + 1)
#define SPARSE_VAL_LEN(p) (((*(p)) & 0x3) + 1)
#define SPARSE_VAL_MAX_LEN 4
#define SPARSE_ZERO_MAX_LEN 64

/* An XZERO's run; its second byte past end reads as 0, as Redis reads the
 * sds terminator there. */
static inline uint32_t xzero_len(const uint8_t *p, const uint8_t *end)
{
    uint32_t lo = p + 1 < end ? p[1] : 0;
    return ((((uint32_t)p[0] & 0x3f) << 8) | lo) + 1;
}

static inline void val_put(uint8_t *p, unsigned val, unsigned len)
{
    *p = (uint8_t)(((val - 1) << 2 | (len - 1)) | SPARSE_VAL_BIT);
}

/* A run of len zero registers as ZERO or XZERO; returns the bytes written. */
static inline int zeros_put(uint8_t *p, unsigned len)
{
    if (len > SPARSE_ZERO_MAX_LEN) {
        p[0] = (uint8_t)(((len - 1) >> 8) | SPARSE_XZERO_BIT);
        p[1] = (uint8_t)((len - 1) & 0xff);
        return 2;
    }
    p[0] = (uint8_t)(len - 1);
    return 1;
}

/* ---- hashing ------------------------------------------------------------------------------ */

uint64_t gb_hll_murmur64a(const void *key, size_t len, uint64_t seed)
{
    const uint64_t m = 0xc6a4a7935bd1e995ULL;
    const int r = 47;
    uint64_t h = seed ^ ((uint64_t)len * m);
    const uint8_t *data = key;
    const uint8_t *end = data + (len - (len & 7));
    while (data != end) {
        uint64_t k = 0;
        for (int i = 7; i >= 0; i--) /* little-endian, as Redis on any host */
            k = (k << 8) | data[i];
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
        data += 8;
    }
    switch (len & 7) {
    case 7: h ^= (uint64_t)data[6] << 48; /* fall through */
    case 6: h ^= (uint64_t)data[5] << 40; /* fall through */
    case 5: h ^= (uint64_t)data[4] << 32; /* fall through */
    case 4: h ^= (uint64_t)data[3] << 24; /* fall through */
    case 3: h ^= (uint64_t)data[2] << 16; /* fall through */
    case 2: h ^= (uint64_t)data[1] << 8;  /* fall through */
    case 1:
        h ^= (uint64_t)data[0];
        h *= m;
        break;
    default: break;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

uint8_t gb_hll_pattern(const void *ele, size_t len, uint32_t *index)
{
    uint64_t hash = gb_hll_murmur64a(ele, len, HLL_SEED);
    *index = (uint32_t)(hash & (GB_HLL_REGISTERS - 1));
    hash >>= GB_HLL_P;
    hash |= (uint64_t)1 << HLL_Q; /* the run ends by bit Q: count <= Q + 1 */
    uint8_t count = 1;
    while (!(hash & 1)) {
        count++;
        hash >>= 1;
    }
    return count;
}

/* ---- header ------------------------------------------------------------------------------- */

bool gb_hll_valid_header(const uint8_t *s, size_t len)
{
    if (len < GB_HLL_HDR_SIZE || memcmp(s, "HYLL", 4) != 0 || s[4] > GB_HLL_SPARSE)
        return false;
    return s[4] != GB_HLL_DENSE || len == GB_HLL_DENSE_SIZE;
}

void gb_hll_init_sparse(uint8_t *s)
{
    memset(s, 0, GB_HLL_SPARSE_EMPTY_SIZE);
    memcpy(s, "HYLL", 4);
    s[4] = GB_HLL_SPARSE;
    zeros_put(s + GB_HLL_HDR_SIZE, GB_HLL_REGISTERS);
}

bool gb_hll_cache_valid(const uint8_t *s) { return (s[15] & 0x80) == 0; }

uint64_t gb_hll_cache_get(const uint8_t *s)
{
    uint64_t card = 0;
    for (int i = 7; i >= 0; i--)
        card = (card << 8) | s[8 + i];
    return card;
}

void gb_hll_cache_set(uint8_t *s, uint64_t card)
{
    for (int i = 0; i < 8; i++)
        s[8 + i] = (uint8_t)(card >> (8 * i));
}

void gb_hll_cache_invalidate(uint8_t *s) { s[15] |= 0x80; }

/* ---- dense -------------------------------------------------------------------------------- */

/* Register i's bits start at bit fb of byte; with fb 0 or 2 they lie in
 * that byte alone (so the last register never touches a byte past the
 * registers, which Redis reads from the sds terminator). */
uint8_t gb_hll_dense_get(const uint8_t *regs, uint32_t index)
{
    uint32_t byte = index * 6 / 8, fb = index * 6 & 7;
    unsigned v = (unsigned)regs[byte] >> fb;
    if (fb > 2)
        v |= (unsigned)regs[byte + 1] << (8 - fb);
    return (uint8_t)(v & HLL_REGISTER_MAX);
}

static void dense_put(uint8_t *regs, uint32_t index, unsigned val)
{
    uint32_t byte = index * 6 / 8, fb = index * 6 & 7;
    regs[byte] = (uint8_t)((regs[byte] & ~(HLL_REGISTER_MAX << fb)) | (val << fb));
    if (fb > 2)
        regs[byte + 1] =
            (uint8_t)((regs[byte + 1] & ~(HLL_REGISTER_MAX >> (8 - fb))) | (val >> (8 - fb)));
}

bool gb_hll_dense_set(uint8_t *regs, uint32_t index, uint8_t count)
{
    if (count <= gb_hll_dense_get(regs, index))
        return false;
    dense_put(regs, index, count);
    return true;
}

/* Four registers live in each 3 bytes. */
void gb_hll_dense_unpack(const uint8_t *regs, uint8_t *raw)
{
    for (uint32_t i = 0; i < GB_HLL_REGISTERS; i += 4, regs += 3, raw += 4) {
        unsigned b0 = regs[0], b1 = regs[1], b2 = regs[2];
        raw[0] = (uint8_t)(b0 & 63);
        raw[1] = (uint8_t)((b0 >> 6 | b1 << 2) & 63);
        raw[2] = (uint8_t)((b1 >> 4 | b2 << 4) & 63);
        raw[3] = (uint8_t)(b2 >> 2);
    }
}

void gb_hll_dense_pack(const uint8_t *raw, uint8_t *regs)
{
    for (uint32_t i = 0; i < GB_HLL_REGISTERS; i += 4, regs += 3, raw += 4) {
        regs[0] = (uint8_t)(raw[0] | raw[1] << 6);
        regs[1] = (uint8_t)(raw[1] >> 2 | raw[2] << 4);
        regs[2] = (uint8_t)(raw[2] >> 4 | raw[3] << 2);
    }
}

static void dense_merge_raw(const uint8_t *regs, uint8_t *raw)
{
    uint8_t block[64];
    for (uint32_t i = 0; i < GB_HLL_REGISTERS; i += 64) {
        const uint8_t *r = regs + i * 6 / 8;
        for (int j = 0; j < 64; j += 4, r += 3) {
            unsigned b0 = r[0], b1 = r[1], b2 = r[2];
            block[j] = (uint8_t)(b0 & 63);
            block[j + 1] = (uint8_t)((b0 >> 6 | b1 << 2) & 63);
            block[j + 2] = (uint8_t)((b1 >> 4 | b2 << 4) & 63);
            block[j + 3] = (uint8_t)(b2 >> 2);
        }
        for (int j = 0; j < 64; j++)
            raw[i + j] = block[j] > raw[i + j] ? block[j] : raw[i + j];
    }
}

static void dense_histogram(const uint8_t *regs, uint64_t *histo)
{
    for (uint32_t i = 0; i < GB_HLL_REGISTERS; i += 4, regs += 3) {
        unsigned b0 = regs[0], b1 = regs[1], b2 = regs[2];
        histo[b0 & 63]++;
        histo[(b0 >> 6 | b1 << 2) & 63]++;
        histo[(b1 >> 4 | b2 << 4) & 63]++;
        histo[b2 >> 2]++;
    }
}

/* ---- sparse reading ----------------------------------------------------------------------- */

/* Walks the opcodes of a sparse string, calling on_run for each run of
 * registers (value 0 for ZERO and XZERO). False when they do not cover
 * exactly 16384 registers; the walk stops before a run that would pass
 * the last one. */
typedef void (*run_fn)(void *ctx, uint32_t first, uint32_t len, unsigned val);

static bool sparse_walk(const uint8_t *s, size_t len, run_fn on_run, void *ctx)
{
    const uint8_t *p = s + GB_HLL_HDR_SIZE, *end = s + len;
    uint32_t idx = 0;
    while (p < end) {
        uint32_t run;
        unsigned val = 0;
        if (SPARSE_IS_ZERO(p)) {
            run = SPARSE_ZERO_LEN(p);
            p++;
        } else if (SPARSE_IS_XZERO(p)) {
            run = xzero_len(p, end);
            p += 2;
        } else {
            run = SPARSE_VAL_LEN(p);
            val = SPARSE_VAL_VALUE(p);
            p++;
        }
        if (run > GB_HLL_REGISTERS - idx)
            return false;
        on_run(ctx, idx, run, val);
        idx += run;
    }
    return idx == GB_HLL_REGISTERS;
}

static void run_merge(void *ctx, uint32_t first, uint32_t len, unsigned val)
{
    uint8_t *raw = ctx;
    for (uint32_t i = first; val && i < first + len; i++)
        if (raw[i] < val)
            raw[i] = (uint8_t)val;
}

static void run_histogram(void *ctx, uint32_t first, uint32_t len, unsigned val)
{
    (void)first;
    ((uint64_t *)ctx)[val] += len;
}

bool gb_hll_merge_raw(const uint8_t *s, size_t len, uint8_t *raw)
{
    if (gb_hll_encoding(s) == GB_HLL_DENSE) {
        dense_merge_raw(s + GB_HLL_HDR_SIZE, raw);
        return true;
    }
    return sparse_walk(s, len, run_merge, raw);
}

/* ---- sparse writing (Redis's hllSparseSet) ------------------------------------------------ */

/* Step 4 of hllSparseSet: merges adjacent VALs of one value, scanning at
 * most 5 opcodes from the one before the change (not further: the bytes
 * must stay Redis's). Returns the new end. */
static uint8_t *sparse_merge_vals(uint8_t *p, uint8_t *end)
{
    int scanlen = 5;
    while (p < end && scanlen--) {
        if (SPARSE_IS_XZERO(p)) {
            p += 2;
            continue;
        }
        if (SPARSE_IS_ZERO(p)) {
            p++;
            continue;
        }
        if (p + 1 < end && SPARSE_IS_VAL(p + 1)) {
            unsigned v1 = SPARSE_VAL_VALUE(p), v2 = SPARSE_VAL_VALUE(p + 1);
            unsigned len = SPARSE_VAL_LEN(p) + SPARSE_VAL_LEN(p + 1);
            if (v1 == v2 && len <= SPARSE_VAL_MAX_LEN) {
                val_put(p + 1, v1, len);
                memmove(p, p + 1, (size_t)(end - p));
                end--;
                continue; /* try the merged one with its right neighbour */
            }
        }
        p++;
    }
    return end;
}

/* The opcodes replacing the one at p (covering first..last, reading
 * `is_zero` for ZERO/XZERO) when register index takes count. */
static int sparse_split(const uint8_t *p, bool is_zero, uint32_t first, uint32_t last, uint32_t index,
                        uint8_t count, uint8_t *seq)
{
    uint8_t *n = seq;
    unsigned curval = is_zero ? 0 : SPARSE_VAL_VALUE(p);
    if (index != first) {
        if (is_zero)
            n += zeros_put(n, index - first);
        else
            val_put(n++, curval, index - first);
    }
    val_put(n++, count, 1);
    if (index != last) {
        if (is_zero)
            n += zeros_put(n, last - index);
        else
            val_put(n++, curval, last - index);
    }
    return (int)(n - seq);
}

gb_hll_set_result gb_hll_sparse_set(uint8_t *s, size_t *len, uint32_t index, uint8_t count, size_t max_bytes)
{
    if (count > GB_HLL_SPARSE_VAL_MAX)
        return GB_HLL_SET_PROMOTE;
    s[*len] = 0; /* Redis's sds terminator, which a cut XZERO reads */
    uint8_t *sparse = s + GB_HLL_HDR_SIZE, *p = sparse, *end = s + *len, *prev = NULL;
    uint64_t first = 0, span = 0;
    /* Step 1: the opcode covering index. */
    while (p < end) {
        int oplen = 1;
        if (SPARSE_IS_ZERO(p))
            span = SPARSE_ZERO_LEN(p);
        else if (SPARSE_IS_VAL(p))
            span = SPARSE_VAL_LEN(p);
        else {
            span = xzero_len(p, end + 1);
            oplen = 2;
        }
        if (index <= first + span - 1)
            break;
        prev = p;
        p += oplen;
        first += span;
    }
    if (span == 0 || p >= end)
        return GB_HLL_SET_INVALID;
    bool is_xzero = SPARSE_IS_XZERO(p), is_val = SPARSE_IS_VAL(p);
    uint8_t *next = is_xzero ? p + 2 : p + 1;
    if (next >= end)
        next = NULL;
    /* Step 2: the cases done in place. */
    if (is_val && SPARSE_VAL_VALUE(p) >= count)
        return GB_HLL_SET_UNCHANGED;
    if (span == 1 && !is_xzero) { /* a VAL or ZERO of one register */
        val_put(p, count, 1);
    } else {
        /* Step 3: split the opcode; the sequence replaces it, moving what
         * follows (Redis's arithmetic, also for an XZERO cut by the end). */
        uint8_t seq[5];
        int seqlen = sparse_split(p, !is_val, (uint32_t)first, (uint32_t)(first + span - 1), index, count, seq);
        int deltalen = seqlen - (is_xzero ? 2 : 1);
        if (deltalen > 0 && *len + (size_t)deltalen > max_bytes)
            return GB_HLL_SET_PROMOTE;
        if (deltalen && next)
            memmove(next + deltalen, next, (size_t)(end - next));
        memcpy(p, seq, (size_t)seqlen);
        *len = (size_t)((ptrdiff_t)*len + deltalen);
        end += deltalen;
        *end = 0;
    }
    /* Step 4: merge adjacent VALs. */
    end = sparse_merge_vals(prev ? prev : sparse, end);
    *len = (size_t)(end - s);
    gb_hll_cache_invalidate(s);
    return GB_HLL_SET_UPDATED;
}

/* ---- estimate ----------------------------------------------------------------------------- */

/* Ertl's sigma and tau (arXiv:1702.01284), as Redis computes them. */
static double hll_sigma(double x)
{
    if (x == 1.)
        return INFINITY;
    double z_prime, y = 1, z = x;
    do {
        x *= x;
        z_prime = z;
        z += x * y;
        y += y;
    } while (z_prime != z);
    return z;
}

static double hll_tau(double x)
{
    if (x == 0. || x == 1.)
        return 0.;
    double z_prime, y = 1.0, z = 1 - x;
    do {
        x = sqrt(x);
        z_prime = z;
        y *= 0.5;
        z -= pow(1 - x, 2) * y;
    } while (z_prime != z);
    return z / 3;
}

/* Registers above Q + 1 (possible only in a forged dense string) are
 * counted in the histogram but not in the estimate, as in Redis. */
static uint64_t estimate(const uint64_t *histo)
{
    double m = GB_HLL_REGISTERS;
    double z = m * hll_tau((m - (double)histo[HLL_Q + 1]) / m);
    for (int j = HLL_Q; j >= 1; --j) {
        z += (double)histo[j];
        z *= 0.5;
    }
    z += m * hll_sigma((double)histo[0] / m);
    return (uint64_t)llroundl(HLL_ALPHA_INF * m * m / z);
}

uint64_t gb_hll_count(const uint8_t *s, size_t len, bool *invalid)
{
    uint64_t histo[64] = {0};
    if (gb_hll_encoding(s) == GB_HLL_DENSE)
        dense_histogram(s + GB_HLL_HDR_SIZE, histo);
    else if (!sparse_walk(s, len, run_histogram, histo)) {
        *invalid = true;
        return 0;
    }
    return estimate(histo);
}

uint64_t gb_hll_count_raw(const uint8_t *raw)
{
    uint64_t histo[64] = {0};
    for (uint32_t i = 0; i < GB_HLL_REGISTERS; i++)
        histo[raw[i] & 63]++;
    return estimate(histo);
}

/* ---- PFDEBUG DECODE ----------------------------------------------------------------------- */

void gb_hll_sparse_decode(const uint8_t *s, size_t len, void (*out)(void *ctx, const char *p, size_t n), void *ctx)
{
    const uint8_t *p = s + GB_HLL_HDR_SIZE, *end = s + len;
    char buf[32];
    while (p < end) {
        int n;
        const char *sep = p == s + GB_HLL_HDR_SIZE ? "" : " ";
        if (SPARSE_IS_ZERO(p)) {
            n = snprintf(buf, sizeof buf, "%sz:%d", sep, SPARSE_ZERO_LEN(p));
            p++;
        } else if (SPARSE_IS_XZERO(p)) {
            n = snprintf(buf, sizeof buf, "%sZ:%u", sep, xzero_len(p, end));
            p += 2;
        } else {
            n = snprintf(buf, sizeof buf, "%sv:%d,%d", sep, SPARSE_VAL_VALUE(p), SPARSE_VAL_LEN(p));
            p++;
        }
        out(ctx, buf, (size_t)n);
    }
}

/* ---- PFSELFTEST --------------------------------------------------------------------------- */

/* The error text PFSELFTEST answers, in a buffer the caller frees. */
static char *selftest_error(const char *text)
{
    size_t n = strlen(text) + 1;
    return memcpy(gb_malloc(n), text, n);
}

/* Test 1: every register of a dense HLL keeps what was written to it and
 * leaves its neighbours alone. */
static char *selftest_registers(uint8_t *regs)
{
    static uint8_t bytes[GB_HLL_REGISTERS];
    for (int cycle = 0; cycle < 1000; cycle++) {
        for (uint32_t i = 0; i < GB_HLL_REGISTERS; i++) {
            bytes[i] = (uint8_t)(gb_random_u64() & HLL_REGISTER_MAX);
            dense_put(regs, i, bytes[i]);
        }
        for (uint32_t i = 0; i < GB_HLL_REGISTERS; i++) {
            unsigned v = gb_hll_dense_get(regs, i);
            if (v != bytes[i]) {
                char text[96];
                snprintf(text, sizeof text, "TESTFAILED Register %u should be %d but is %u", i, bytes[i], v);
                return selftest_error(text);
            }
        }
    }
    return NULL;
}

/* A sparse HLL's add, going dense when the sparse form cannot take it. */
static void selftest_sparse_add(uint8_t **s, size_t *len, const void *ele, size_t elesize, size_t max_bytes)
{
    uint32_t index;
    uint8_t count = gb_hll_pattern(ele, elesize, &index);
    if (gb_hll_encoding(*s) == GB_HLL_DENSE) {
        gb_hll_dense_set(*s + GB_HLL_HDR_SIZE, index, count);
        return;
    }
    *s = gb_realloc(*s, *len + GB_HLL_SPARSE_SLACK);
    if (gb_hll_sparse_set(*s, len, index, count, max_bytes) != GB_HLL_SET_PROMOTE)
        return;
    static uint8_t raw[GB_HLL_REGISTERS];
    memset(raw, 0, sizeof raw);
    gb_hll_merge_raw(*s, *len, raw);
    *s = gb_realloc(*s, GB_HLL_DENSE_SIZE);
    (*s)[4] = GB_HLL_DENSE;
    gb_hll_dense_pack(raw, *s + GB_HLL_HDR_SIZE);
    *len = GB_HLL_DENSE_SIZE;
    gb_hll_dense_set(*s + GB_HLL_HDR_SIZE, index, count);
}

/* Test 2: estimates within six standard errors at 1, 10, ... 10^7
 * distinct elements, dense and sparse agreeing. */
static char *selftest_estimates(uint8_t *dense, size_t max_bytes)
{
    memset(dense + GB_HLL_HDR_SIZE, 0, DENSE_BYTES);
    size_t len = GB_HLL_SPARSE_EMPTY_SIZE;
    uint8_t *sparse = gb_malloc(len);
    gb_hll_init_sparse(sparse);
    double relerr = 1.04 / sqrt(GB_HLL_REGISTERS);
    uint64_t checkpoint = 1, seed = gb_random_u64();
    char *err = NULL;
    for (uint64_t j = 1; j <= 10000000 && !err; j++) {
        uint8_t ele[8];
        uint64_t v = j ^ seed;
        for (int b = 0; b < 8; b++) /* the bytes of a uint64 on a little-endian host, as Redis */
            ele[b] = (uint8_t)(v >> (8 * b));
        uint32_t index;
        uint8_t count = gb_hll_pattern(ele, 8, &index);
        gb_hll_dense_set(dense + GB_HLL_HDR_SIZE, index, count);
        selftest_sparse_add(&sparse, &len, ele, 8, max_bytes);
        if (j != checkpoint)
            continue;
        bool invalid = false;
        uint64_t dense_card = gb_hll_count(dense, GB_HLL_DENSE_SIZE, &invalid);
        if (j < max_bytes / 2 && gb_hll_encoding(sparse) != GB_HLL_SPARSE)
            err = selftest_error("TESTFAILED sparse encoding not used");
        else if (dense_card != gb_hll_count(sparse, len, &invalid))
            err = selftest_error("TESTFAILED dense/sparse disagree");
        else {
            int64_t abserr = (int64_t)checkpoint - (int64_t)dense_card;
            uint64_t maxerr = j == 10 ? 1 : (uint64_t)ceil(relerr * 6 * (double)checkpoint);
            if (abserr < 0)
                abserr = -abserr;
            if (abserr > (int64_t)maxerr) {
                char text[96];
                snprintf(text, sizeof text, "TESTFAILED Too big error. card:%llu abserr:%llu",
                         (unsigned long long)checkpoint, (unsigned long long)abserr);
                err = selftest_error(text);
            }
        }
        checkpoint *= 10;
    }
    gb_free(sparse);
    return err;
}

char *gb_hll_selftest(size_t max_bytes)
{
    uint8_t *dense = gb_malloc(GB_HLL_DENSE_SIZE);
    memset(dense, 0, GB_HLL_DENSE_SIZE);
    char *err = selftest_registers(dense + GB_HLL_HDR_SIZE);
    if (!err)
        err = selftest_estimates(dense, max_bytes);
    gb_free(dense);
    return err;
}
