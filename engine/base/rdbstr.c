#include "engine/base/rdbstr.h"

#include <stdio.h>
#include <string.h>

#include "engine/base/lzf.h"
#include "engine/base/mem.h"

int gb_rdb_read_byte(gb_rdb_reader *r) { return r->pos < r->len ? r->p[r->pos++] : -1; }

static bool take(gb_rdb_reader *r, size_t n, const uint8_t **at)
{
    if (n > r->len - r->pos)
        return false;
    *at = r->p + r->pos;
    r->pos += n;
    return true;
}

static uint64_t be_get(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

int gb_rdb_read_len(gb_rdb_reader *r, uint64_t *len, bool *encoded)
{
    int c = gb_rdb_read_byte(r);
    const uint8_t *b;
    *encoded = false;
    if (c < 0)
        return -1;
    switch (c >> 6) {
    case 0:
        *len = (uint64_t)(c & 0x3f);
        return 0;
    case 1:
        if (!take(r, 1, &b))
            return -1;
        *len = (uint64_t)(c & 0x3f) << 8 | b[0];
        return 0;
    case 3:
        *encoded = true;
        *len = (uint64_t)(c & 0x3f);
        return 0;
    default:
        if ((c != 0x80 && c != 0x81) || !take(r, c == 0x80 ? 4 : 8, &b))
            return -1;
        *len = be_get(b, c == 0x80 ? 4 : 8);
        return 0;
    }
}

static int read_int(gb_rdb_reader *r, int width, char **out, size_t *out_len)
{
    const uint8_t *b;
    if (!take(r, (size_t)width, &b))
        return -1;
    uint32_t u = 0;
    for (int i = width - 1; i >= 0; i--)
        u = u << 8 | b[i];
    int64_t v = width == 1 ? (int8_t)u : width == 2 ? (int16_t)u : (int32_t)u;
    char text[24];
    int n = snprintf(text, sizeof text, "%lld", (long long)v);
    *out = gb_memdup(text, (size_t)n);
    *out_len = (size_t)n;
    return 0;
}

static int read_lzf(gb_rdb_reader *r, size_t max, char **out, size_t *out_len)
{
    uint64_t clen, len;
    bool enc;
    const uint8_t *block;
    if (gb_rdb_read_len(r, &clen, &enc) || enc || gb_rdb_read_len(r, &len, &enc) || enc)
        return -1;
    if (clen > r->len - r->pos || !take(r, (size_t)clen, &block))
        return -1;
    /* Redis compares the decompressor's output length with the declared
     * one, and liblzf reports a failure as 0 bytes: a declared length of 0
     * is the empty string whatever the block holds. */
    if (len == 0) {
        *out = gb_memdup("", 0);
        *out_len = 0;
        return 0;
    }
    /* Allocate only what the block can expand to. */
    if (len > max || len / GB_LZF_MAX_RATIO > clen)
        return -1;
    char *buf = gb_malloc((size_t)len + 1);
    if (gb_lzf_decompress(block, (size_t)clen, buf, (size_t)len) != (int64_t)len) {
        gb_free(buf);
        return -1;
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = (size_t)len;
    return 0;
}

int gb_rdb_read_string(gb_rdb_reader *r, size_t max, char **out, size_t *out_len)
{
    gb_rdb_str s;
    if (gb_rdb_read_str(r, max, &s) != 0)
        return -1;
    *out = s.owned ? s.owned : gb_memdup(s.ptr, s.len);
    *out_len = s.len;
    return 0;
}

int gb_rdb_read_str(gb_rdb_reader *r, size_t max, gb_rdb_str *s)
{
    uint64_t len;
    bool enc;
    const uint8_t *b;
    char **out = &s->owned;
    size_t *out_len = &s->len;
    s->owned = NULL;
    if (gb_rdb_read_len(r, &len, &enc))
        return -1;
    if (enc) {
        int rc;
        switch (len) {
        case GB_RDB_ENC_INT8:
            rc = read_int(r, 1, out, out_len);
            break;
        case GB_RDB_ENC_INT16:
            rc = read_int(r, 2, out, out_len);
            break;
        case GB_RDB_ENC_INT32:
            rc = read_int(r, 4, out, out_len);
            break;
        case GB_RDB_ENC_LZF:
            rc = read_lzf(r, max, out, out_len);
            break;
        default:
            return -1;
        }
        s->ptr = s->owned;
        return rc;
    }
    if (len > max || len > r->len - r->pos || !take(r, (size_t)len, &b))
        return -1;
    s->ptr = (const char *)b;
    s->len = (size_t)len;
    return 0;
}

void gb_rdb_str_free(gb_rdb_str *s)
{
    gb_free(s->owned);
    s->owned = NULL;
}

void gb_rdb_write_len(gb_strbuf *b, uint64_t len)
{
    uint8_t buf[9];
    size_t n;
    if (len < (1u << 6)) {
        buf[0] = (uint8_t)len;
        n = 1;
    } else if (len < (1u << 14)) {
        buf[0] = (uint8_t)(0x40 | len >> 8);
        buf[1] = (uint8_t)len;
        n = 2;
    } else {
        int w = len <= UINT32_MAX ? 4 : 8;
        buf[0] = w == 4 ? 0x80 : 0x81;
        for (int i = 0; i < w; i++)
            buf[1 + i] = (uint8_t)(len >> (8 * (w - 1 - i)));
        n = 1 + (size_t)w;
    }
    gb_strbuf_add(b, buf, n);
}

void gb_rdb_write_string(gb_strbuf *b, const void *s, size_t n)
{
    gb_rdb_write_len(b, n);
    gb_strbuf_add(b, s, n);
}
