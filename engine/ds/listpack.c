/*
 * listpack: see listpack.h for the block layout. This file holds the entry
 * encoding, which is byte-compatible with Redis's listpack entries:
 *
 *   tag byte      payload                  meaning                 entry bytes
 *   0xxxxxxx      -                        uint 0..127             1
 *   10LLLLLL      L bytes                  string, len <= 63       1 + len
 *   110xxxxx      1 byte                   int13 -4096..4095       2
 *   1110LLLL      1 byte len, then bytes   string, len <= 4095     2 + len
 *   11110000      u32 len, then bytes      string, len < 2^32      5 + len
 *   11110001      2 bytes                  int16                   3
 *   11110010      3 bytes                  int24                   4
 *   11110011      4 bytes                  int32                   5
 *   11110100      8 bytes                  int64                   9
 *   11111111      -                        END of the listpack     1
 *   0xF5..0xFE are invalid.
 *
 * Every entry is followed by its back-length: the size of tag+payload in 1 to
 * 5 bytes, 7 bits per byte. The byte nearest the next entry holds the low 7
 * bits; a set high bit means "one more byte to the left". Reading it from the
 * right gives the size of the previous entry, so the list walks backwards.
 *
 * The entry codec (gb_lp_encode, gb_lp_entry_bytes, gb_lp_prev_entry_bytes) is
 * also used by list_segmented.c, whose leaves store listpack entries without
 * the listpack header.
 */
#include "engine/ds/listpack.h"

#include "engine/base/mem.h"

#define LP_END 0xFF
#define LP_MIN_BYTES (GB_LP_HEADER_SIZE + 1)
/* total_bytes is a u32: a listpack never grows past 4 GiB - 1. */
#define LP_MAX_BYTES UINT32_MAX

/* ---- little-endian helpers (explicit shifts: no alignment or byte-order
 * assumptions about the host) ---- */

static inline uint32_t rd_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void wr_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static inline uint32_t lp_total(const unsigned char *lp) { return rd_u32(lp); }
static inline void lp_set_total(unsigned char *lp, size_t v) { wr_u32(lp, (uint32_t)v); }
static inline void lp_set_count(unsigned char *lp, uint32_t v) { wr_u32(lp + 4, v); }

/* ---- integers as text ---- */

size_t gb_lp_int2str(int64_t v, char *buf)
{
    char tmp[24];
    size_t n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t len = 0;
    if (v < 0)
        buf[len++] = '-';
    while (n)
        buf[len++] = tmp[--n];
    return len;
}

/* ---- back-length ---- */

static inline size_t backlen_size(size_t l)
{
    if (l <= 127)
        return 1;
    if (l < 16384)
        return 2;
    if (l < 2097152)
        return 3;
    if (l < 268435456)
        return 4;
    return 5;
}

/* Writes the back-length of l into dst (backlen_size(l) bytes). */
static inline void backlen_write(unsigned char *dst, size_t l)
{
    size_t n = backlen_size(l);
    for (size_t i = 0; i < n; i++) {
        /* byte n-1-i holds bits 7i..7i+6; all but the leftmost carry 0x80 */
        unsigned char b = (unsigned char)((l >> (7 * i)) & 127);
        if (i != n - 1)
            b |= 128;
        dst[n - 1 - i] = b;
    }
}

/* Reads the back-length whose last byte is at p; never looks before `lo`.
 * Returns false when it runs past lo or uses more than 5 bytes. */
static inline bool backlen_read(const unsigned char *p, const unsigned char *lo, size_t *len,
                                size_t *nbytes)
{
    uint64_t v = 0;
    unsigned shift = 0;
    size_t n = 0;
    for (;;) {
        if (p < lo || n == 5)
            return false;
        v |= (uint64_t)(*p & 127) << shift;
        n++;
        if (!(*p & 128))
            break;
        shift += 7;
        p--;
    }
    *len = (size_t)v;
    *nbytes = n;
    return true;
}

/* ---- entry codec ---- */

/* Bytes of tag+payload for the entry whose tag is p[0]; for strings reads the
 * length field. 0 for END and invalid tags. */
static inline size_t enc_size(const unsigned char *p)
{
    unsigned char t = p[0];
    if (t < 0x80)
        return 1;
    if (t < 0xC0)
        return 1 + (size_t)(t & 0x3F);
    if (t < 0xE0)
        return 2;
    if (t < 0xF0)
        return 2 + (((size_t)(t & 0x0F) << 8) | p[1]);
    switch (t) {
    case 0xF0:
        return 5 + (size_t)rd_u32(p + 1);
    case 0xF1:
        return 3;
    case 0xF2:
        return 4;
    case 0xF3:
        return 5;
    case 0xF4:
        return 9;
    default:
        return 0;
    }
}

size_t gb_lp_entry_bytes(const unsigned char *p)
{
    size_t e = enc_size(p);
    return e + backlen_size(e);
}

size_t gb_lp_prev_entry_bytes(const unsigned char *end)
{
    size_t l = 0, n = 0;
    /* Trusted data: a back-length is at most 5 bytes, the lower bound only
     * matters for gb_lp_validate. */
    backlen_read(end - 1, end - 5, &l, &n);
    return l + n;
}

static size_t int_enc_size(int64_t v)
{
    if (v >= 0 && v <= 127)
        return 1;
    if (v >= -4096 && v <= 4095)
        return 2;
    if (v >= INT16_MIN && v <= INT16_MAX)
        return 3;
    if (v >= -8388608 && v <= 8388607)
        return 4;
    if (v >= INT32_MIN && v <= INT32_MAX)
        return 5;
    return 9;
}

static void int_encode(unsigned char *dst, int64_t v, size_t es)
{
    uint64_t u = (uint64_t)v;
    switch (es) {
    case 1:
        dst[0] = (unsigned char)v;
        break;
    case 2:
        dst[0] = (unsigned char)(0xC0 | ((u >> 8) & 0x1F));
        dst[1] = (unsigned char)u;
        break;
    default: {
        static const unsigned char tags[] = {0, 0, 0, 0xF1, 0xF2, 0xF3, 0, 0, 0, 0xF4};
        dst[0] = tags[es];
        for (size_t i = 0; i + 1 < es; i++)
            dst[1 + i] = (unsigned char)(u >> (8 * i));
    }
    }
}

static size_t str_enc_size(size_t len)
{
    if (len <= 63)
        return 1 + len;
    if (len <= 4095)
        return 2 + len;
    return 5 + len;
}

size_t gb_lp_encode(unsigned char *dst, gb_slice s)
{
    int64_t v;
    size_t es;
    bool is_int = gb_lp_str2int(s.ptr, s.len, &v);
    es = is_int ? int_enc_size(v) : str_enc_size(s.len);
    size_t total = es + backlen_size(es);
    if (!dst)
        return total;
    if (is_int) {
        int_encode(dst, v, es);
    } else if (s.len <= 63) {
        dst[0] = (unsigned char)(0x80 | s.len);
        if (s.len)
            memcpy(dst + 1, s.ptr, s.len);
    } else if (s.len <= 4095) {
        dst[0] = (unsigned char)(0xE0 | (s.len >> 8));
        dst[1] = (unsigned char)s.len;
        memcpy(dst + 2, s.ptr, s.len);
    } else {
        dst[0] = 0xF0;
        wr_u32(dst + 1, (uint32_t)s.len);
        memcpy(dst + 5, s.ptr, s.len);
    }
    backlen_write(dst + es, es);
    return total;
}

size_t gb_lp_entry_size(gb_slice s) { return gb_lp_encode(NULL, s); }

static int64_t sign_extend(uint64_t u, unsigned bits)
{
    uint64_t m = (uint64_t)1 << (bits - 1);
    u &= (m << 1) - 1;
    return (int64_t)((u ^ m) - m);
}

void gb_lp_get(const unsigned char *p, gb_lp_entry *out)
{
    unsigned char t = p[0];
    out->is_int = true;
    out->ptr = NULL;
    out->len = 0;
    if (t < 0x80) {
        out->ival = t;
        return;
    }
    if (t < 0xC0) {
        out->is_int = false;
        out->ptr = (const char *)p + 1;
        out->len = t & 0x3F;
        return;
    }
    if (t < 0xE0) {
        out->ival = sign_extend(((uint64_t)(t & 0x1F) << 8) | p[1], 13);
        return;
    }
    if (t < 0xF0) {
        out->is_int = false;
        out->ptr = (const char *)p + 2;
        out->len = ((size_t)(t & 0x0F) << 8) | p[1];
        return;
    }
    if (t == 0xF0) {
        out->is_int = false;
        out->ptr = (const char *)p + 5;
        out->len = rd_u32(p + 1);
        return;
    }
    unsigned nb = t == 0xF1 ? 2 : t == 0xF2 ? 3 : t == 0xF3 ? 4 : 8;
    uint64_t u = 0;
    for (unsigned i = 0; i < nb; i++)
        u |= (uint64_t)p[1 + i] << (8 * i);
    out->ival = nb == 8 ? (int64_t)u : sign_extend(u, nb * 8);
}

gb_slice gb_lp_get_slice(const unsigned char *p, char *buf)
{
    gb_lp_entry e;
    gb_lp_get(p, &e);
    if (!e.is_int)
        return gb_slice_make(e.ptr, e.len);
    return gb_slice_make(buf, gb_lp_int2str(e.ival, buf));
}

gb_slice gb_lp_get_slice_skip(const unsigned char *p, char *buf, unsigned stride, unsigned char **next)
{
    gb_slice s;
    size_t es;
    if (p[0] >= 0x80 && p[0] < 0xC0) { /* a string of up to 63 bytes: most keys */
        es = 1 + (size_t)(p[0] & 0x3F);
        s = gb_slice_make((const char *)p + 1, es - 1);
    } else {
        s = gb_lp_get_slice(p, buf);
        es = enc_size(p);
    }
    const unsigned char *q = p + es + backlen_size(es);
    for (unsigned i = 1; i < stride && *q != LP_END; i++) {
        es = enc_size(q);
        q += es + backlen_size(es);
    }
    *next = *q == LP_END ? NULL : (unsigned char *)q;
    return s;
}

void gb_lp_key_init(gb_lp_key *k, gb_slice s)
{
    k->s = s;
    k->is_int = gb_lp_str2int(s.ptr, s.len, &k->v);
}

bool gb_lp_key_eq(const unsigned char *p, const gb_lp_key *k)
{
    unsigned char t = p[0];
    /* strings: the length is checked before touching the bytes */
    if (t >= 0x80 && t < 0xC0) {
        size_t len = t & 0x3F;
        return !k->is_int && len == k->s.len && (len == 0 || memcmp(p + 1, k->s.ptr, len) == 0);
    }
    gb_lp_entry e;
    gb_lp_get(p, &e);
    if (e.is_int)
        return k->is_int && e.ival == k->v;
    return !k->is_int && gb_slice_eq(gb_slice_make(e.ptr, e.len), k->s);
}

bool gb_lp_eq(const unsigned char *p, gb_slice s)
{
    gb_lp_key k;
    gb_lp_key_init(&k, s);
    return gb_lp_key_eq(p, &k);
}

/* ---- block management ---- */

/* Allocation size for a block that must hold `need` bytes: rounded up to a
 * quarter-power-of-two class (at most 25% slack), so a listpack grown one
 * entry at a time is copied O(1) times per byte, like jemalloc's classes. */
static size_t size_class(size_t need)
{
    if (need <= 64)
        return (need + 15) & ~(size_t)15;
    size_t p = 64;
    while (p < need / 2)
        p <<= 1;
    /* need is in (p, 2p]: classes p + k*p/4 */
    size_t step = p / 4;
    return (need + step - 1) / step * step;
}

unsigned char *gb_lp_new(size_t capacity_hint)
{
    size_t cap = capacity_hint < LP_MIN_BYTES ? LP_MIN_BYTES : capacity_hint;
    unsigned char *lp = gb_malloc(cap);
    lp_set_total(lp, LP_MIN_BYTES);
    lp_set_count(lp, 0);
    lp[GB_LP_HEADER_SIZE] = LP_END;
    return lp;
}

void gb_lp_free(unsigned char *lp) { gb_free(lp); }
size_t gb_lp_bytes(const unsigned char *lp) { return lp_total(lp); }
uint32_t gb_lp_count(const unsigned char *lp) { return rd_u32(lp + 4); }

/* Makes room for `need` total bytes; may move the block. */
static unsigned char *lp_reserve(unsigned char *lp, size_t need)
{
    if (need <= gb_mem_usable(lp))
        return lp;
    return gb_realloc(lp, size_class(need));
}

/* Gives back memory after a shrink when the slack is large. */
static unsigned char *lp_shrink(unsigned char *lp)
{
    size_t total = lp_total(lp);
    size_t usable = gb_mem_usable(lp);
    if (usable > 256 && usable > total + total / 2)
        return gb_realloc(lp, size_class(total));
    return lp;
}

/* ---- navigation ---- */

unsigned char *gb_lp_first(unsigned char *lp)
{
    unsigned char *p = lp + GB_LP_HEADER_SIZE;
    return *p == LP_END ? NULL : p;
}

unsigned char *gb_lp_last(unsigned char *lp)
{
    unsigned char *end = lp + lp_total(lp) - 1;
    if (end == lp + GB_LP_HEADER_SIZE)
        return NULL;
    return end - gb_lp_prev_entry_bytes(end);
}

unsigned char *gb_lp_next(unsigned char *lp, unsigned char *p)
{
    (void)lp;
    p += gb_lp_entry_bytes(p);
    return *p == LP_END ? NULL : p;
}

unsigned char *gb_lp_prev(unsigned char *lp, unsigned char *p)
{
    if (p == lp + GB_LP_HEADER_SIZE)
        return NULL;
    return p - gb_lp_prev_entry_bytes(p);
}

unsigned char *gb_lp_seek(unsigned char *lp, long index)
{
    long n = (long)gb_lp_count(lp);
    if (index < 0)
        index += n;
    if (index < 0 || index >= n)
        return NULL;
    if (index <= n / 2) {
        unsigned char *p = lp + GB_LP_HEADER_SIZE;
        while (index--)
            p += gb_lp_entry_bytes(p);
        return p;
    }
    unsigned char *p = lp + lp_total(lp) - 1;
    for (long i = n; i > index; i--)
        p -= gb_lp_prev_entry_bytes(p);
    return p;
}

/* ---- mutation ---- */

/* Replaces `old_bytes` bytes at offset `off` with an encoded entry of `s`
 * (old_bytes may be 0: insertion). `count_delta` adjusts the entry count. */
static unsigned char *lp_splice(unsigned char *lp, size_t off, size_t old_bytes, gb_slice s,
                                long count_delta)
{
    size_t total = lp_total(lp);
    size_t nb = gb_lp_encode(NULL, s);
    size_t new_total = total - old_bytes + nb;
    if (nb > old_bytes)
        lp = lp_reserve(lp, new_total);
    if (nb != old_bytes)
        memmove(lp + off + nb, lp + off + old_bytes, total - off - old_bytes);
    gb_lp_encode(lp + off, s);
    lp_set_total(lp, new_total);
    lp_set_count(lp, (uint32_t)((long)gb_lp_count(lp) + count_delta));
    if (nb < old_bytes)
        lp = lp_shrink(lp);
    return lp;
}

unsigned char *gb_lp_append(unsigned char *lp, gb_slice s)
{
    return lp_splice(lp, lp_total(lp) - 1, 0, s, 1);
}

unsigned char *gb_lp_prepend(unsigned char *lp, gb_slice s)
{
    return lp_splice(lp, GB_LP_HEADER_SIZE, 0, s, 1);
}

unsigned char *gb_lp_append_int(unsigned char *lp, int64_t v)
{
    char buf[GB_LP_INT_BUF];
    return gb_lp_append(lp, gb_slice_make(buf, gb_lp_int2str(v, buf)));
}

unsigned char *gb_lp_insert(unsigned char *lp, unsigned char *p, bool after, gb_slice s,
                            unsigned char **newp)
{
    /* p == NULL (or the END byte) means "at the end". */
    size_t off;
    if (!p || *p == LP_END)
        off = lp_total(lp) - 1;
    else
        off = (size_t)(p - lp) + (after ? gb_lp_entry_bytes(p) : 0);
    lp = lp_splice(lp, off, 0, s, 1);
    if (newp)
        *newp = lp + off;
    return lp;
}

unsigned char *gb_lp_replace(unsigned char *lp, unsigned char **p, gb_slice s)
{
    size_t off = (size_t)(*p - lp);
    lp = lp_splice(lp, off, gb_lp_entry_bytes(*p), s, 0);
    *p = lp + off;
    return lp;
}

/* Removes the bytes [off, off+len) holding `n` entries. */
static unsigned char *lp_cut(unsigned char *lp, size_t off, size_t len, uint32_t n)
{
    size_t total = lp_total(lp);
    memmove(lp + off, lp + off + len, total - off - len);
    lp_set_total(lp, total - len);
    lp_set_count(lp, gb_lp_count(lp) - n);
    return lp_shrink(lp);
}

unsigned char *gb_lp_delete(unsigned char *lp, unsigned char *p, unsigned char **next)
{
    size_t off = (size_t)(p - lp);
    lp = lp_cut(lp, off, gb_lp_entry_bytes(p), 1);
    if (next)
        *next = lp[off] == LP_END ? NULL : lp + off;
    return lp;
}

unsigned char *gb_lp_delete_range(unsigned char *lp, long index, unsigned long count)
{
    long n = (long)gb_lp_count(lp);
    if (index < 0)
        index += n;
    if (index < 0 || index >= n || count == 0)
        return lp;
    if (count > (unsigned long)(n - index))
        count = (unsigned long)(n - index);
    unsigned char *first = gb_lp_seek(lp, index);
    unsigned char *p = first;
    if ((long)count == n - index) {
        p = lp + lp_total(lp) - 1; /* through the end: no walk needed */
    } else {
        for (unsigned long i = 0; i < count; i++)
            p += gb_lp_entry_bytes(p);
    }
    return lp_cut(lp, (size_t)(first - lp), (size_t)(p - first), (uint32_t)count);
}

unsigned char *gb_lp_find(unsigned char *lp, unsigned char *p, gb_slice s, unsigned skip)
{
    (void)lp;
    if (!p)
        return NULL;
    gb_lp_key k;
    gb_lp_key_init(&k, s);
    unsigned skipped = 0; /* compare p, then every (skip+1)-th entry */
    while (*p != LP_END) {
        if (skipped == 0) {
            if (gb_lp_key_eq(p, &k))
                return p;
            skipped = skip;
        } else {
            skipped--;
        }
        p += gb_lp_entry_bytes(p);
    }
    return NULL;
}

unsigned char *gb_lp_trim_range(unsigned char *lp, size_t head, size_t tail)
{
    size_t n = gb_lp_count(lp);
    if (head + tail >= n) {
        lp_set_total(lp, LP_MIN_BYTES);
        lp_set_count(lp, 0);
        lp[GB_LP_HEADER_SIZE] = LP_END;
        return lp_shrink(lp);
    }
    if (tail)
        lp = gb_lp_delete_range(lp, (long)(n - tail), tail);
    if (head)
        lp = gb_lp_delete_range(lp, 0, head);
    return lp;
}

unsigned char *gb_lp_append_raw(unsigned char *lp, const unsigned char *entries, size_t bytes,
                                uint32_t n)
{
    size_t total = lp_total(lp);
    lp = lp_reserve(lp, total + bytes);
    memcpy(lp + total - 1, entries, bytes);
    lp[total - 1 + bytes] = LP_END;
    lp_set_total(lp, total + bytes);
    lp_set_count(lp, gb_lp_count(lp) + n);
    return lp;
}

/* ---- validation ---- */

bool gb_lp_validate(const unsigned char *lp, size_t size)
{
    if (!lp || size < LP_MIN_BYTES || size > LP_MAX_BYTES)
        return false;
    if (lp_total(lp) != size || lp[size - 1] != LP_END)
        return false;
    uint32_t count = gb_lp_count(lp);
    const unsigned char *p = lp + GB_LP_HEADER_SIZE;
    const unsigned char *end = lp + size - 1; /* the END byte */
    uint64_t seen = 0;
    while (p < end) {
        size_t avail = (size_t)(end - p);
        unsigned char t = p[0];
        size_t es;
        if (t < 0xC0) {
            /* The entries of nearly every small collection: a 7-bit integer
             * or a string of up to 63 bytes. Checked in line, as the general
             * path below would (a snapshot's load checks every entry of
             * every listpack it reads: this loop was 6% of a load): with
             * es <= 64 the back-length is the one byte es, and only a string
             * that starts like a number can be one gb_lp_encode would have
             * stored as an integer. */
            es = t < 0x80 ? 1 : 1 + (size_t)(t & 0x3F);
            if (es >= avail || p[es] != es)
                return false;
            int64_t v;
            if (t >= 0x80 && es > 1 && (p[1] == '-' || (p[1] >= '0' && p[1] <= '9')) &&
                gb_lp_str2int((const char *)p + 1, es - 1, &v))
                return false;
            p += es + 1;
            seen++;
            continue;
        }
        /* the length field of a string must itself be inside the block */
        if (t >= 0xE0 && t < 0xF0 && avail < 2)
            return false;
        if (t == 0xF0 && avail < 5)
            return false;
        if (t == 0xF0) {
            uint64_t e64 = 5 + (uint64_t)rd_u32(p + 1);
            if (e64 > avail)
                return false;
            es = (size_t)e64;
        } else {
            es = enc_size(p);
            if (es == 0 || es > avail)
                return false;
        }
        size_t bl = backlen_size(es);
        if (bl > avail - es)
            return false;
        size_t got = 0, gotn = 0;
        if (!backlen_read(p + es + bl - 1, p + es, &got, &gotn) || got != es || gotn != bl)
            return false;
        /* A string entry never holds what gb_lp_encode stores as an integer:
         * lookups rely on it (gb_lp_key_eq compares an integer-like key with
         * integer entries only), so a crafted block with "5" as a string
         * would list a member that no lookup finds and that can be added a
         * second time. */
        if (t >= 0x80 && (t < 0xC0 || (t >= 0xE0 && t <= 0xF0))) {
            gb_lp_entry e;
            int64_t v;
            gb_lp_get(p, &e);
            if (gb_lp_str2int(e.ptr, e.len, &v))
                return false;
        }
        p += es + bl;
        seen++;
    }
    return p == end && seen == count;
}
