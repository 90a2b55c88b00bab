/* Hash slots (Redis's keyHashSlot) and redirection texts, without I/O. */
#include "transport/ring/client/ring_cluster_route.h"

#include <string.h>

#include "goblin/ring_cluster.h"

/* CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), as Redis's crc16.c;
 * computed bit by bit: keys are short and there is no table to build. */
uint16_t gb_rcl_crc16(const void *data, size_t len)
{
    const uint8_t *p = data;
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)(p[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

int gb_rcl_key_slot(const void *key, size_t klen)
{
    const char *k = key;
    const char *open = memchr(k, '{', klen);
    if (open) {
        size_t start = (size_t)(open - k) + 1;
        const char *close = memchr(k + start, '}', klen - start);
        /* "{}" hashes the whole key, as Redis does */
        if (close && close > k + start)
            return gb_rcl_crc16(k + start, (size_t)(close - (k + start))) & (GB_RING_CLUSTER_SLOTS - 1);
    }
    return gb_rcl_crc16(k, klen) & (GB_RING_CLUSTER_SLOTS - 1);
}

int gb_ring_cluster_key_slot(const void *key, size_t klen) { return gb_rcl_key_slot(key, klen); }

/* A decimal number of 1..5 digits (all a slot or a port needs) from
 * text[*pos..end), no sign; -1 when there is none. */
static int parse_small_number(const char *text, size_t len, size_t *pos)
{
    size_t i = *pos;
    int v = 0;
    while (i < len && i - *pos < 6 && text[i] >= '0' && text[i] <= '9')
        v = v * 10 + (text[i++] - '0');
    if (i == *pos || i - *pos > 5)
        return -1;
    *pos = i;
    return v;
}

/* A host name or address: visible ASCII, no spaces or control bytes. */
static bool plausible_host(const char *h, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (h[i] <= ' ' || h[i] >= 0x7f)
            return false;
    return true;
}

bool gb_rcl_split_address(const char *text, size_t len, char *host, size_t hostcap, int *port)
{
    const char *colon = NULL;
    for (size_t i = len; i > 0; i--)
        if (text[i - 1] == ':') {
            colon = text + i - 1;
            break;
        }
    if (!colon)
        return false;
    size_t hlen = (size_t)(colon - text);
    size_t pos = hlen + 1;
    int p = parse_small_number(text, len, &pos);
    if (p < 1 || p > 65535 || pos != len || hlen >= hostcap || !plausible_host(text, hlen))
        return false;
    memcpy(host, text, hlen);
    host[hlen] = '\0';
    *port = p;
    return true;
}

/* "<slot> <host>:<port>" after the word */
static bool parse_slot_and_address(const char *text, size_t len, size_t pos, gb_rcl_redirect *out)
{
    if (pos >= len || text[pos] != ' ')
        return false;
    pos++;
    int slot = parse_small_number(text, len, &pos);
    if (slot < 0 || slot >= GB_RING_CLUSTER_SLOTS || pos >= len || text[pos] != ' ')
        return false;
    pos++;
    out->slot = slot;
    return gb_rcl_split_address(text + pos, len - pos, out->host, sizeof out->host, &out->port);
}

static bool starts_with_word(const char *text, size_t len, const char *word)
{
    size_t wl = strlen(word);
    return len >= wl && memcmp(text, word, wl) == 0 && (len == wl || text[wl] == ' ');
}

gb_rcl_redirect_kind gb_rcl_parse_redirect(const char *text, size_t len, gb_rcl_redirect *out)
{
    memset(out, 0, sizeof *out);
    gb_rcl_redirect_kind kind = GB_RCL_NOT_REDIRECT;
    if (!text)
        return kind;
    if (starts_with_word(text, len, "TRYAGAIN"))
        kind = GB_RCL_TRYAGAIN;
    else if (starts_with_word(text, len, "MOVED") && parse_slot_and_address(text, len, 5, out))
        kind = GB_RCL_MOVED;
    else if (starts_with_word(text, len, "ASK") && parse_slot_and_address(text, len, 3, out))
        kind = GB_RCL_ASK;
    if (kind == GB_RCL_NOT_REDIRECT)
        memset(out, 0, sizeof *out);
    out->kind = kind;
    return kind;
}
