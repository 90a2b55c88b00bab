/* Bit primitives with Redis 7.0's rules (engine/base/bitops.h; Redis's
 * bitops.c is the reference for every edge: index normalisation, the masks
 * of a BIT range's first and last bytes, BITFIELD's overflow arithmetic). */
#include "engine/base/bitops.h"

#include "platform/popcount.h"

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

static inline void store64(unsigned char *p, uint64_t w) { memcpy(p, &w, sizeof w); }

uint64_t gb_bits_popcount(const unsigned char *p, size_t n) { return gb_popcount_bytes(p, n); }

static unsigned popcount8(unsigned char b) { return (unsigned)gb_popcount_bytes(&b, 1); }

/* A BIT range's edges: the bits of the first and last bytes that lie
 * outside [start, end] (bit indexes, start <= end). */
static unsigned char first_byte_outside(int64_t start) { return (unsigned char)(~((1u << (8 - (start & 7))) - 1) & 0xff); }
static unsigned char last_byte_outside(int64_t end) { return (unsigned char)((1u << (7 - (end & 7))) - 1); }

/* Redis's normalisation of a [start, end] range over totlen units. */
static void normalise_range(int64_t totlen, int64_t *start, int64_t *end)
{
    if (*start < 0)
        *start += totlen;
    if (*end < 0)
        *end += totlen;
    if (*start < 0)
        *start = 0;
    if (*end < 0)
        *end = 0;
    if (*end >= totlen)
        *end = totlen - 1;
}

/* A BIT range [*start, *end] (normalised) as the bytes holding it, and the
 * bits of its first and last byte that lie outside it. An empty range
 * stays empty. */
static void bits_to_bytes(int64_t *start, int64_t *end, unsigned char *first_out, unsigned char *last_out)
{
    if (*start > *end)
        return;
    *first_out = first_byte_outside(*start);
    *last_out = last_byte_outside(*end);
    *start >>= 3;
    *end >>= 3;
}

int64_t gb_bits_count_range(const unsigned char *p, size_t len, int64_t start, int64_t end, bool in_bits)
{
    if (start < 0 && end < 0 && start > end)
        return 0;
    int64_t totlen = in_bits ? (int64_t)len << 3 : (int64_t)len;
    normalise_range(totlen, &start, &end);
    unsigned char first_out = 0, last_out = 0;
    if (in_bits)
        bits_to_bytes(&start, &end, &first_out, &last_out);
    if (start > end)
        return 0;
    int64_t count = (int64_t)gb_popcount_bytes(p + start, (size_t)(end - start + 1));
    /* The edge bytes were counted whole: take off their bits outside. */
    if (first_out)
        count -= popcount8(p[start] & first_out);
    if (last_out)
        count -= popcount8(p[end] & last_out);
    return count;
}

int64_t gb_bits_first(const unsigned char *p, size_t n, int bit)
{
    const unsigned char skip = bit ? 0x00 : 0xff;
    const uint64_t skip_word = bit ? 0 : ~(uint64_t)0;
    size_t i = 0;
    /* Whole words of the value that is not sought: runs of 0 or 1 bits
     * (the common shape of a bitmap) go 32 bytes a step. */
    if (bit) {
        while (i + 32 <= n && (load64(p + i) | load64(p + i + 8) | load64(p + i + 16) | load64(p + i + 24)) == 0)
            i += 32;
    } else {
        while (i + 32 <= n && (load64(p + i) & load64(p + i + 8) & load64(p + i + 16) & load64(p + i + 24)) == skip_word)
            i += 32;
    }
    while (i + 8 <= n && load64(p + i) == skip_word)
        i += 8;
    while (i < n && p[i] == skip)
        i++;
    if (i == n)
        return bit ? -1 : (int64_t)n * 8;
    unsigned b = bit ? p[i] : (unsigned char)~p[i];
    return (int64_t)i * 8 + (__builtin_clz(b) - 24);
}

/* The first bit equal to bit in one byte whose outside bits were forced to
 * the other value. */
static int64_t first_in_byte(unsigned char b, unsigned char outside, int bit)
{
    unsigned char v = bit ? (unsigned char)(b & ~outside) : (unsigned char)(b | outside);
    return gb_bits_first(&v, 1, bit);
}

int64_t gb_bits_pos_range(const unsigned char *p, size_t len, int bit, int64_t start, int64_t end, bool end_given,
                          bool in_bits)
{
    int64_t totlen = (int64_t)len;
    if (!end_given)
        end = in_bits ? (totlen << 3) + 7 : totlen - 1;
    if (in_bits)
        totlen <<= 3;
    normalise_range(totlen, &start, &end);
    unsigned char first_out = 0, last_out = 0;
    if (in_bits)
        bits_to_bytes(&start, &end, &first_out, &last_out);
    if (start > end)
        return -1; /* an empty range holds neither a 0 nor a 1 */

    /* As Redis: the first byte (if partial), the whole bytes, the last byte
     * (if partial); pos is relative to start and bytes what is left. */
    int64_t bytes = end - start + 1, pos = -1;
    if (first_out) {
        unsigned char outside = first_out;
        if (last_out && bytes == 1)
            outside |= last_out;
        pos = first_in_byte(p[start], outside, bit);
        if (bytes == 1 || (pos != -1 && pos != 8))
            goto result;
        start++;
        bytes--;
    }
    int64_t whole = bytes - (last_out ? 1 : 0);
    if (whole > 0) {
        pos = gb_bits_first(p + start, (size_t)whole, bit);
        if (bytes == whole || (pos != -1 && pos != whole << 3))
            goto result;
        start += whole;
        bytes -= whole;
    }
    pos = first_in_byte(p[end], last_out, bit);
result:
    /* A 0 sought in an explicit range and found only past its end: none. */
    if (end_given && bit == 0 && pos == bytes << 3)
        return -1;
    if (pos != -1)
        pos += start << 3;
    return pos;
}

/* ---- BITOP ------------------------------------------------------------------------------ */

/* d[0..n) = a op b, and d op= b, a word at a time (the compiler widens
 * these loops to the vector registers the build's ISA has). */
static void op2(gb_bitop op, unsigned char *d, const unsigned char *a, const unsigned char *b, size_t n)
{
    size_t j = 0;
    switch (op) {
    case GB_BITOP_AND:
        for (; j + 8 <= n; j += 8)
            store64(d + j, load64(a + j) & load64(b + j));
        for (; j < n; j++)
            d[j] = a[j] & b[j];
        break;
    case GB_BITOP_OR:
        for (; j + 8 <= n; j += 8)
            store64(d + j, load64(a + j) | load64(b + j));
        for (; j < n; j++)
            d[j] = a[j] | b[j];
        break;
    case GB_BITOP_XOR:
        for (; j + 8 <= n; j += 8)
            store64(d + j, load64(a + j) ^ load64(b + j));
        for (; j < n; j++)
            d[j] = a[j] ^ b[j];
        break;
    case GB_BITOP_NOT:
        for (; j + 8 <= n; j += 8)
            store64(d + j, ~load64(a + j));
        for (; j < n; j++)
            d[j] = (unsigned char)~a[j];
        break;
    }
}

void gb_bits_op(gb_bitop op, unsigned char *dst, size_t maxlen, const unsigned char *const *src, const size_t *len,
                size_t n)
{
    if (op == GB_BITOP_NOT || n == 1) {
        if (op == GB_BITOP_NOT)
            op2(op, dst, src[0], NULL, len[0]);
        else if (len[0])
            memcpy(dst, src[0], len[0]);
        memset(dst + len[0], 0, maxlen - len[0]); /* NOT: maxlen is len[0] */
        return;
    }
    /* The first two sources together (no copy of the first), then each
     * further source over what the others made. Past a source's end it
     * reads as zeros: AND clears the rest, OR and XOR keep it. */
    size_t common = GB_MIN(len[0], len[1]);
    op2(op, dst, src[0], src[1], common);
    size_t longer = len[0] > len[1] ? 0 : 1;
    if (op == GB_BITOP_AND)
        memset(dst + common, 0, maxlen - common);
    else {
        if (len[longer] > common)
            memcpy(dst + common, src[longer] + common, len[longer] - common);
        memset(dst + len[longer], 0, maxlen - len[longer]);
    }
    for (size_t i = 2; i < n; i++) {
        op2(op, dst, dst, src[i], len[i]);
        if (op == GB_BITOP_AND && len[i] < maxlen)
            memset(dst + len[i], 0, maxlen - len[i]);
    }
}

/* ---- BITFIELD --------------------------------------------------------------------------- */

uint64_t gb_bits_get_unsigned(const unsigned char *p, uint64_t offset, unsigned bits)
{
    uint64_t value = 0;
    for (unsigned j = 0; j < bits; j++, offset++) {
        unsigned bitval = (p[offset >> 3] >> (7 - (offset & 7))) & 1u;
        value = (value << 1) | bitval;
    }
    return value;
}

int64_t gb_bits_get_signed(const unsigned char *p, uint64_t offset, unsigned bits)
{
    uint64_t u = gb_bits_get_unsigned(p, offset, bits);
    /* Two's complement: a set top bit extends over the higher bits. */
    if (bits < 64 && (u & ((uint64_t)1 << (bits - 1))))
        u |= ~(uint64_t)0 << bits;
    return (int64_t)u;
}

void gb_bits_set(unsigned char *p, uint64_t offset, unsigned bits, uint64_t value)
{
    for (unsigned j = 0; j < bits; j++, offset++) {
        unsigned bitval = (value >> (bits - 1 - j)) & 1u;
        unsigned shift = 7 - (unsigned)(offset & 7);
        unsigned char *b = &p[offset >> 3];
        *b = (unsigned char)((*b & ~(1u << shift)) | (bitval << shift));
    }
}

int gb_bits_overflow_unsigned(uint64_t value, int64_t incr, unsigned bits, gb_bf_overflow ow, uint64_t *limit)
{
    uint64_t max = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    int64_t maxincr = (int64_t)(max - value);
    int64_t minincr = (int64_t)(0 - value);
    int dir;
    if (value > max || (incr > 0 && incr > maxincr))
        dir = 1;
    else if (incr < 0 && incr < minincr)
        dir = -1;
    else
        return 0;
    if (ow == GB_BF_WRAP) /* the sum, its bits above the width dropped */
        *limit = (value + (uint64_t)incr) & ~(~(uint64_t)0 << bits);
    else if (ow == GB_BF_SAT)
        *limit = dir > 0 ? max : 0;
    return ow == GB_BF_WRAP ? 1 : dir;
}

int gb_bits_overflow_signed(int64_t value, int64_t incr, unsigned bits, gb_bf_overflow ow, int64_t *limit)
{
    int64_t max = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
    int64_t min = -max - 1;
    /* Redis's differences, wrapped as its unsigned arithmetic does. */
    int64_t maxincr = (int64_t)((uint64_t)max - (uint64_t)value);
    int64_t minincr = (int64_t)((uint64_t)min - (uint64_t)value);
    int dir;
    if (value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr))
        dir = 1;
    else if (value < min || (bits != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr))
        dir = -1;
    else
        return 0;
    if (ow == GB_BF_WRAP) {
        uint64_t c = (uint64_t)value + (uint64_t)incr;
        if (bits < 64) {
            uint64_t mask = ~(uint64_t)0 << bits;
            c = (c & ((uint64_t)1 << (bits - 1))) ? c | mask : c & ~mask;
        }
        *limit = (int64_t)c;
    } else if (ow == GB_BF_SAT) {
        *limit = dir > 0 ? max : min;
    }
    return ow == GB_BF_WRAP ? 1 : dir;
}
