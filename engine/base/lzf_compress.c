/*
 * LZF compression in liblzf's format (engine/base/lzf.h describes it), as
 * Redis uses for quicklist nodes: a greedy single-pass matcher over a hash
 * of the next three bytes. Output is what gb_lzf_decompress (and liblzf's
 * lzf_decompress) reads back.
 */
#include "engine/base/lzf.h"

#include <string.h>

#define HASH_BITS 13
#define MAX_LITERAL 32           /* a literal run's control byte holds len - 1 */
#define MAX_OFFSET (1u << 13)    /* 13 offset bits, stored as offset - 1 */
#define MAX_MATCH (2 + 7 + 255)  /* long form: 7 + extra byte, plus 2 */

static inline uint32_t hash3(const unsigned char *p)
{
    uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
    return (v * 2654435761u) >> (32 - HASH_BITS);
}

/* Writes in[from, to) as literal runs; false when out is full. */
static bool put_literals(const unsigned char *in, size_t from, size_t to, unsigned char **op,
                         const unsigned char *out_end)
{
    while (from < to) {
        size_t n = to - from < MAX_LITERAL ? to - from : MAX_LITERAL;
        if ((size_t)(out_end - *op) < n + 1)
            return false;
        *(*op)++ = (unsigned char)(n - 1);
        memcpy(*op, in + from, n);
        *op += n;
        from += n;
    }
    return true;
}

/* Writes a back-reference of len bytes, `back` bytes behind the output end. */
static bool put_match(size_t len, size_t back, unsigned char **op, const unsigned char *out_end)
{
    size_t off = back - 1, l = len - 2;
    if ((size_t)(out_end - *op) < (l < 7 ? 2u : 3u))
        return false;
    if (l < 7) {
        *(*op)++ = (unsigned char)(l << 5 | off >> 8);
    } else {
        *(*op)++ = (unsigned char)(7u << 5 | off >> 8);
        *(*op)++ = (unsigned char)(l - 7);
    }
    *(*op)++ = (unsigned char)(off & 0xff);
    return true;
}

size_t gb_lzf_compress(const void *in_v, size_t in_len, void *out_v, size_t out_cap)
{
    const unsigned char *in = in_v;
    unsigned char *op = out_v;
    const unsigned char *out_end = op + out_cap;
    uint32_t table[1u << HASH_BITS]; /* position + 1 of the last sighting; 0 = none */
    memset(table, 0, sizeof table);
    size_t ip = 0, lit = 0;
    while (ip + 2 < in_len) {
        uint32_t h = hash3(in + ip);
        size_t ref = table[h];
        table[h] = (uint32_t)(ip + 1);
        if (ref == 0 || ip - (ref - 1) > MAX_OFFSET || memcmp(in + ref - 1, in + ip, 3) != 0) {
            ip++;
            continue;
        }
        ref--;
        size_t max = in_len - ip < MAX_MATCH ? in_len - ip : MAX_MATCH;
        size_t len = 3;
        while (len < max && in[ref + len] == in[ip + len])
            len++;
        if (!put_literals(in, lit, ip, &op, out_end) || !put_match(len, ip - ref, &op, out_end))
            return 0;
        /* the match's last positions seed the table for what follows */
        for (size_t k = ip + len - 2; k < ip + len && k + 2 < in_len; k++)
            table[hash3(in + k)] = (uint32_t)(k + 1);
        ip += len;
        lit = ip;
    }
    if (!put_literals(in, lit, in_len, &op, out_end))
        return 0;
    return (size_t)(op - (unsigned char *)out_v);
}
