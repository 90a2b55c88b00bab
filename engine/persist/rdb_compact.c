#include "engine/persist/rdb_compact.h"

#include "engine/base/util.h"

/* ---- shared helpers ------------------------------------------------------------------------ */

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static int64_t le_signed(const uint8_t *p, int width)
{
    uint64_t u = 0;
    for (int i = width - 1; i >= 0; i--)
        u = u << 8 | p[i];
    if (width < 8 && (u >> (width * 8 - 1)) & 1) /* sign-extend */
        u |= ~(uint64_t)0 << (width * 8);
    return (int64_t)u;
}

static void set_int(gb_rdb_elem *e, int64_t v)
{
    e->is_int = true;
    e->ival = v;
    e->len = gb_ll2str(e->num, v);
    e->ptr = e->num;
}

static void set_str(gb_rdb_elem *e, const uint8_t *p, size_t n)
{
    e->is_int = false;
    e->ptr = (const char *)p;
    e->len = n;
}

/* Hands one element to emit (a string, or an integer when s is NULL);
 * false, with *why, when emit refused it. */
static bool hand_out(gb_rdb_elem_fn emit, void *ctx, const uint8_t *s, size_t n, int64_t ival, const char *what,
                     const char **why)
{
    gb_rdb_elem e;
    if (s)
        set_str(&e, s, n);
    else
        set_int(&e, ival);
    if (emit(ctx, &e))
        return true;
    if (!*why)
        *why = what;
    return false;
}

/* A walk is done twice: first to check (emit NULL), then to hand entries
 * out, so a blob damaged near its end builds nothing. */
typedef int64_t (*walk_fn)(const uint8_t *p, size_t len, gb_rdb_elem_fn emit, void *ctx, const char **why);

static int64_t check_then_emit(walk_fn walk, const uint8_t *p, size_t len, gb_rdb_elem_fn emit, void *ctx,
                               const char **why)
{
    *why = NULL;
    int64_t n = walk(p, len, NULL, NULL, why);
    if (n < 0 || !emit)
        return n;
    return walk(p, len, emit, ctx, why);
}

#define FAIL(msg)      \
    do {               \
        *why = (msg);  \
        return -1;     \
    } while (0)

/* ---- listpack ------------------------------------------------------------------------------ */

/* Bytes the back-length of an entry of n bytes takes. */
static size_t lp_backlen_size(size_t n)
{
    /* Redis's lpEncodeBacklen thresholds, exactly (16383 takes 3 bytes). */
    return n <= 127 ? 1 : n < 16383 ? 2 : n < 2097151 ? 3 : n < 268435455 ? 4 : 5;
}

/* Decodes the back-length stored in the bytes ending at end (inclusive). */
static bool lp_backlen_read(const uint8_t *start, const uint8_t *end, uint64_t *v)
{
    uint64_t val = 0;
    int shift = 0;
    const uint8_t *q = end;
    for (int i = 0; i < 5; i++, q--) {
        if (q < start)
            return false;
        val |= (uint64_t)(*q & 127) << shift;
        if (!(*q & 128)) {
            *v = val;
            return true;
        }
        shift += 7;
    }
    return false;
}

static int64_t lp_walk(const uint8_t *p, size_t len, gb_rdb_elem_fn emit, void *ctx, const char **why)
{
    if (len < 7)
        FAIL("a listpack shorter than its header");
    if (le32(p) != len)
        FAIL("a listpack whose header length is not its size");
    uint16_t declared = le16(p + 4);
    size_t pos = 6;
    int64_t count = 0;
    for (;;) {
        if (pos >= len)
            FAIL("a listpack with no end byte");
        uint8_t b = p[pos];
        if (b == 0xFF)
            break;
        size_t avail = len - pos;
        size_t hdr, slen = 0;
        int64_t ival = 0;
        bool is_int = true;
        if ((b & 0x80) == 0) {
            hdr = 1;
            ival = b & 0x7F;
        } else if ((b & 0xC0) == 0x80) {
            hdr = 1;
            slen = b & 0x3F;
            is_int = false;
        } else if ((b & 0xE0) == 0xC0) {
            if (avail < 2)
                FAIL("a truncated listpack entry");
            hdr = 2;
            uint64_t u = (uint64_t)(b & 0x1F) << 8 | p[pos + 1];
            ival = u >= 1u << 12 ? (int64_t)u - (1 << 13) : (int64_t)u;
        } else if ((b & 0xF0) == 0xE0) {
            if (avail < 2)
                FAIL("a truncated listpack entry");
            hdr = 2;
            slen = (size_t)(b & 0x0F) << 8 | p[pos + 1];
            is_int = false;
        } else if (b == 0xF0) {
            if (avail < 5)
                FAIL("a truncated listpack entry");
            hdr = 5;
            slen = le32(p + pos + 1);
            is_int = false;
        } else if (b >= 0xF1 && b <= 0xF4) {
            static const int widths[] = {2, 3, 4, 8};
            int w = widths[b - 0xF1];
            if (avail < (size_t)w + 1)
                FAIL("a truncated listpack entry");
            hdr = 1 + (size_t)w;
            ival = le_signed(p + pos + 1, w);
        } else {
            FAIL("a listpack entry of an unknown encoding");
        }
        if (!is_int && slen > avail - hdr)
            FAIL("a listpack string longer than the listpack");
        size_t body = hdr + (is_int ? 0 : slen);
        size_t blen = lp_backlen_size(body);
        if (body + blen > avail)
            FAIL("a truncated listpack entry");
        uint64_t back;
        if (!lp_backlen_read(p + pos + body, p + pos + body + blen - 1, &back) || back != body)
            FAIL("a listpack entry whose back-length is wrong");
        if (emit && !hand_out(emit, ctx, is_int ? NULL : p + pos + hdr, slen, ival,
                              "a listpack element the value cannot hold", why))
            return -1;
        pos += body + blen;
        count++;
    }
    if (pos + 1 != len)
        FAIL("bytes after a listpack's end byte");
    if (declared != 65535 && declared != count)
        FAIL("a listpack whose count is not its number of entries");
    return count;
}

int64_t gb_rdb_listpack_each(const uint8_t *p, size_t len, gb_rdb_elem_fn emit, void *ctx, const char **why)
{
    return check_then_emit(lp_walk, p, len, emit, ctx, why);
}

/* ---- ziplist ------------------------------------------------------------------------------- */

static int64_t zl_walk(const uint8_t *p, size_t len, gb_rdb_elem_fn emit, void *ctx, const char **why)
{
    if (len < 11)
        FAIL("a ziplist shorter than its header");
    if (le32(p) != len)
        FAIL("a ziplist whose header length is not its size");
    uint32_t tail = le32(p + 4);
    uint16_t declared = le16(p + 8);
    size_t pos = 10, prev_size = 0, last = 0;
    int64_t count = 0;
    for (;;) {
        if (pos >= len)
            FAIL("a ziplist with no end byte");
        if (p[pos] == 0xFF)
            break;
        size_t start = pos, avail = len - pos;
        size_t prevlen, plen;
        if (p[pos] < 254) {
            prevlen = p[pos];
            plen = 1;
        } else if (p[pos] == 254) {
            if (avail < 5)
                FAIL("a truncated ziplist entry");
            prevlen = le32(p + pos + 1);
            plen = 5;
        } else {
            FAIL("a ziplist entry of an unknown encoding");
        }
        if (prevlen != prev_size)
            FAIL("a ziplist entry whose previous length is wrong");
        pos += plen;
        avail -= plen;
        if (avail < 1)
            FAIL("a truncated ziplist entry");
        uint8_t b = p[pos];
        size_t hdr, slen = 0;
        int64_t ival = 0;
        bool is_int = true;
        switch (b >> 6) {
        case 0:
            hdr = 1;
            slen = b & 0x3F;
            is_int = false;
            break;
        case 1:
            if (avail < 2)
                FAIL("a truncated ziplist entry");
            hdr = 2;
            slen = (size_t)(b & 0x3F) << 8 | p[pos + 1];
            is_int = false;
            break;
        case 2:
            if (b != 0x80 || avail < 5)
                FAIL("a ziplist entry of an unknown encoding");
            hdr = 5;
            slen = (size_t)p[pos + 1] << 24 | (size_t)p[pos + 2] << 16 | (size_t)p[pos + 3] << 8 | p[pos + 4];
            is_int = false;
            break;
        default: {
            int w = b == 0xC0 ? 2 : b == 0xD0 ? 4 : b == 0xE0 ? 8 : b == 0xF0 ? 3 : b == 0xFE ? 1 : 0;
            if (w) {
                if (avail < (size_t)w + 1)
                    FAIL("a truncated ziplist entry");
                hdr = 1 + (size_t)w;
                ival = le_signed(p + pos + 1, w);
            } else if (b >= 0xF1 && b <= 0xFD) {
                hdr = 1;
                ival = (b & 0x0F) - 1;
            } else {
                FAIL("a ziplist entry of an unknown encoding");
            }
        }
        }
        if (!is_int && slen > avail - hdr)
            FAIL("a ziplist string longer than the ziplist");
        if (emit && !hand_out(emit, ctx, is_int ? NULL : p + pos + hdr, slen, ival,
                              "a ziplist element the value cannot hold", why))
            return -1;
        pos += hdr + (is_int ? 0 : slen);
        prev_size = pos - start;
        last = start;
        count++;
    }
    if (pos + 1 != len)
        FAIL("bytes after a ziplist's end byte");
    if (tail != (count ? last : 10))
        FAIL("a ziplist whose tail offset is wrong");
    if (declared != 65535 && declared != count)
        FAIL("a ziplist whose count is not its number of entries");
    return count;
}

int64_t gb_rdb_ziplist_each(const uint8_t *p, size_t len, gb_rdb_elem_fn emit, void *ctx, const char **why)
{
    return check_then_emit(zl_walk, p, len, emit, ctx, why);
}

/* ---- intset -------------------------------------------------------------------------------- */

static int64_t is_walk(const uint8_t *p, size_t len, gb_rdb_elem_fn emit, void *ctx, const char **why)
{
    if (len < 8)
        FAIL("an intset shorter than its header");
    uint32_t width = le32(p), n = le32(p + 4);
    if (width != 2 && width != 4 && width != 8)
        FAIL("an intset of an unknown width");
    if ((uint64_t)n * width != len - 8)
        FAIL("an intset whose count is not its size");
    if (n == 0)
        FAIL("an empty intset");
    int64_t prev = 0;
    for (uint32_t i = 0; i < n; i++) {
        int64_t v = le_signed(p + 8 + (size_t)i * width, (int)width);
        if (i && v <= prev)
            FAIL("an intset out of order");
        prev = v;
        if (emit && !hand_out(emit, ctx, NULL, 0, v, "an intset element the value cannot hold", why))
            return -1;
    }
    return n;
}

int64_t gb_rdb_intset_each(const uint8_t *p, size_t len, gb_rdb_elem_fn emit, void *ctx, const char **why)
{
    return check_then_emit(is_walk, p, len, emit, ctx, why);
}

/* ---- zipmap -------------------------------------------------------------------------------- */

static bool zm_len(const uint8_t *p, size_t len, size_t *pos, size_t *out)
{
    if (*pos >= len)
        return false;
    if (p[*pos] < 254) {
        *out = p[(*pos)++];
        return true;
    }
    if (p[*pos] != 254 || len - *pos < 5)
        return false;
    *out = le32(p + *pos + 1);
    *pos += 5;
    return true;
}

static int64_t zm_walk(const uint8_t *p, size_t len, gb_rdb_elem_fn emit, void *ctx, const char **why)
{
    if (len < 2)
        FAIL("a zipmap shorter than its header");
    uint8_t declared = p[0];
    size_t pos = 1;
    int64_t pairs = 0;
    for (;;) {
        if (pos >= len)
            FAIL("a zipmap with no end byte");
        if (p[pos] == 0xFF)
            break;
        size_t klen, vlen;
        if (!zm_len(p, len, &pos, &klen) || klen > len - pos)
            FAIL("a truncated zipmap entry");
        const uint8_t *k = p + pos;
        pos += klen;
        if (!zm_len(p, len, &pos, &vlen) || pos >= len)
            FAIL("a truncated zipmap entry");
        size_t free_bytes = p[pos++];
        if (vlen > len - pos || free_bytes > len - pos - vlen)
            FAIL("a truncated zipmap entry");
        const uint8_t *v = p + pos;
        pos += vlen + free_bytes;
        if (emit && !(hand_out(emit, ctx, k, klen, 0, "a zipmap element the value cannot hold", why) &&
                      hand_out(emit, ctx, v, vlen, 0, "a zipmap element the value cannot hold", why)))
            return -1;
        pairs++;
    }
    if (pos + 1 != len)
        FAIL("bytes after a zipmap's end byte");
    if (declared < 254 && declared != pairs)
        FAIL("a zipmap whose count is not its number of entries");
    return pairs * 2;
}

int64_t gb_rdb_zipmap_each(const uint8_t *p, size_t len, gb_rdb_elem_fn emit, void *ctx, const char **why)
{
    return check_then_emit(zm_walk, p, len, emit, ctx, why);
}

/* ---- writing a listpack -------------------------------------------------------------------- */

static void lp_put_backlen(gb_strbuf *b, size_t n)
{
    uint8_t buf[5];
    size_t k = lp_backlen_size(n);
    /* Most significant group first in memory; the last byte has no
     * continuation bit (it is read first, walking backwards). */
    for (size_t i = 0; i < k; i++) {
        size_t shift = 7 * (k - 1 - i);
        buf[i] = (uint8_t)((n >> shift) & 127);
        if (i > 0)
            buf[i] |= 128;
    }
    gb_strbuf_add(b, buf, k);
}

void gb_rdb_listpack_begin(gb_strbuf *b, size_t *start)
{
    *start = b->len;
    static const uint8_t hdr[6] = {0};
    gb_strbuf_add(b, hdr, sizeof hdr);
}

void gb_rdb_listpack_add_int(gb_strbuf *b, int64_t v)
{
    uint8_t buf[9];
    size_t n;
    if (v >= 0 && v <= 127) {
        buf[0] = (uint8_t)v;
        n = 1;
    } else if (v >= -4096 && v <= 4095) {
        uint64_t u = (uint64_t)v & 0x1FFF;
        buf[0] = (uint8_t)(0xC0 | (u >> 8));
        buf[1] = (uint8_t)(u & 0xFF);
        n = 2;
    } else {
        int w = (v >= -32768 && v <= 32767) ? 2 : (v >= -8388608 && v <= 8388607) ? 3
                : (v >= INT32_MIN && v <= INT32_MAX) ? 4 : 8;
        buf[0] = (uint8_t)(w == 2 ? 0xF1 : w == 3 ? 0xF2 : w == 4 ? 0xF3 : 0xF4);
        uint64_t u = (uint64_t)v;
        for (int i = 0; i < w; i++)
            buf[1 + i] = (uint8_t)(u >> (8 * i));
        n = 1 + (size_t)w;
    }
    gb_strbuf_add(b, buf, n);
    lp_put_backlen(b, n);
}

void gb_rdb_listpack_add(gb_strbuf *b, gb_slice s)
{
    int64_t v;
    if (s.len <= 20 && gb_str2ll(s.ptr, s.len, &v)) {
        gb_rdb_listpack_add_int(b, v);
        return;
    }
    uint8_t hdr[5];
    size_t h;
    if (s.len < 64) {
        hdr[0] = (uint8_t)(0x80 | s.len);
        h = 1;
    } else if (s.len < 4096) {
        hdr[0] = (uint8_t)(0xE0 | (s.len >> 8));
        hdr[1] = (uint8_t)(s.len & 0xFF);
        h = 2;
    } else {
        hdr[0] = 0xF0;
        for (int i = 0; i < 4; i++)
            hdr[1 + i] = (uint8_t)((uint64_t)s.len >> (8 * i));
        h = 5;
    }
    gb_strbuf_add(b, hdr, h);
    gb_strbuf_add(b, s.ptr, s.len);
    lp_put_backlen(b, h + s.len);
}

void gb_rdb_listpack_end(gb_strbuf *b, size_t start, size_t count)
{
    gb_strbuf_addc(b, (char)0xFF);
    size_t total = b->len - start;
    uint8_t *h = (uint8_t *)b->p + start;
    for (int i = 0; i < 4; i++)
        h[i] = (uint8_t)((uint64_t)total >> (8 * i));
    uint16_t c = count < 65535 ? (uint16_t)count : 65535;
    h[4] = (uint8_t)(c & 0xFF);
    h[5] = (uint8_t)(c >> 8);
}
