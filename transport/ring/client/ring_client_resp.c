/* RESP over the ring, client side: argv encoded as RESP multibulk into
 * request records; replies parsed from the stream of reply records. */
#include <stdlib.h>
#include <string.h>

#include "transport/ring/client/ring_client_internal.h"

int gb_rc_resp_submit(gb_ring_client *rc, int argc, const char *const *argv, const size_t *lens)
{
    size_t need = 32;
    for (int i = 0; i < argc; i++)
        need += (lens ? lens[i] : strlen(argv[i])) + 32;
    if (need > rc->wr.max_payload) {
        gb_rc_fail(rc, "command of ~%zu bytes exceeds the ring's limit of %u", need, rc->wr.max_payload);
        return GB_ERANGE;
    }
    uint8_t *dst;
    int r = gb_rc_send_begin(rc, need, &dst);
    if (r != 0)
        return r;
    /* Encode straight into the ring record, then publish its true length. */
    size_t n = gb_rc_resp_encode((char *)dst, need, argc, argv, lens);
    gb_rc_send_commit(rc, n);
    return 0;
}

/* Parses one RESP2 reply from buf[0..len). Returns bytes consumed, 0 if
 * incomplete, or (size_t)-1 on malformed input. */
static size_t parse_reply(const char *buf, size_t len, gb_reply *out, int depth)
{
    if (len < 3 || depth > 64)
        return len < 3 ? 0 : (size_t)-1;
    const char *cr = memchr(buf, '\r', len);
    if (!cr || (size_t)(cr - buf) + 2 > len)
        return 0;
    size_t line = (size_t)(cr - buf);
    size_t pos = line + 2;
    memset(out, 0, sizeof *out);
    char num[32];
    size_t nl = line - 1 < sizeof num - 1 ? line - 1 : sizeof num - 1;
    memcpy(num, buf + 1, nl);
    num[nl] = '\0';
    long long v = strtoll(num, NULL, 10);
    switch (buf[0]) {
    case '+':
    case '-':
        out->kind = buf[0] == '+' ? GB_REPLY_STATUS : GB_REPLY_ERROR;
        out->len = line - 1;
        out->str = malloc(out->len + 1);
        memcpy(out->str, buf + 1, out->len);
        out->str[out->len] = '\0';
        return pos;
    case ':':
        out->kind = GB_REPLY_INTEGER;
        out->integer = v;
        return pos;
    case '$':
        if (v < 0) {
            out->kind = GB_REPLY_NIL;
            return pos;
        }
        if (len - pos < (size_t)v + 2)
            return 0;
        out->kind = GB_REPLY_BULK;
        out->len = (size_t)v;
        out->str = malloc(out->len + 1);
        memcpy(out->str, buf + pos, out->len);
        out->str[out->len] = '\0';
        return pos + (size_t)v + 2;
    case '*':
        if (v < 0) {
            out->kind = GB_REPLY_NIL_ARRAY;
            return pos;
        }
        out->kind = GB_REPLY_ARRAY;
        out->nelem = (size_t)v;
        out->elem = calloc(out->nelem ? out->nelem : 1, sizeof *out->elem);
        for (size_t i = 0; i < out->nelem; i++) {
            size_t n = parse_reply(buf + pos, len - pos, &out->elem[i], depth + 1);
            if (n == 0 || n == (size_t)-1) {
                gb_rc_reply_clear(out);
                return n;
            }
            pos += n;
        }
        return pos;
    default:
        return (size_t)-1;
    }
}

int gb_rc_resp_collect(gb_ring_client *rc, gb_reply **reply)
{
    gb_reply *r = calloc(1, sizeof *r);
    for (;;) {
        if (rc->slen) {
            size_t n = parse_reply(rc->stream, rc->slen, r, 0);
            if (n == (size_t)-1) {
                free(r);
                gb_rc_fail(rc, "malformed RESP reply from the server");
                return GB_EPROTO;
            }
            if (n > 0) {
                memmove(rc->stream, rc->stream + n, rc->slen - n);
                rc->slen -= n;
                *reply = r;
                return 0;
            }
        }
        const void *msg;
        size_t len;
        int rv = gb_ring_client_recv(rc, &msg, &len, UINT64_MAX);
        if (rv != 0) {
            free(r);
            return rv;
        }
        if (rc->slen + len > rc->scap) {
            size_t ncap = rc->scap ? rc->scap : 4096;
            while (ncap < rc->slen + len)
                ncap *= 2;
            rc->stream = realloc(rc->stream, ncap);
            rc->scap = ncap;
        }
        memcpy(rc->stream + rc->slen, msg, len);
        rc->slen += len;
        gb_ring_client_recv_done(rc);
    }
}
