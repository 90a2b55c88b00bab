/* RESP over the ring, client side: argv encoded as RESP multibulk into
 * request records; replies parsed from the stream of reply records. */
#include <stdlib.h>
#include <string.h>

#include "transport/ring/client/ring_client_internal.h"

int gb_rc_resp_submit(gb_ring_client *rc, int argc, const char *const *argv, const size_t *lens)
{
    if (rc->socket_link)
        return gb_rc_link_submit(rc, argc, argv, lens);
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

/* Copies len bytes into out->str, NUL-terminated. */
static bool copy_str(gb_reply *out, gb_reply_kind kind, const char *p, size_t len)
{
    out->kind = kind;
    out->len = len;
    out->str = malloc(len + 1);
    if (!out->str)
        return false;
    memcpy(out->str, p, len);
    out->str[len] = '\0';
    return true;
}

/* Parses one reply from buf[0..len): RESP2, and the RESP3 types a ring
 * that sent HELLO 3 receives, folded into the gb_reply kinds (maps as
 * arrays of 2n elements, sets and pushes as arrays, booleans as 1/0, big
 * numbers and verbatim strings as bulk strings). Returns bytes consumed, 0
 * if incomplete, or (size_t)-1 on malformed input or an allocation failure. */
static size_t parse_reply(const char *buf, size_t len, gb_reply *out, int depth)
{
    memset(out, 0, sizeof *out);
    if (len < 3)
        return 0;
    if (depth > 64)
        return (size_t)-1;
    const char *cr = memchr(buf, '\r', len);
    if (!cr || (size_t)(cr - buf) + 2 > len)
        return 0;
    size_t line = (size_t)(cr - buf);
    if (line == 0 || buf[line + 1] != '\n')
        return (size_t)-1;
    size_t pos = line + 2;
    char num[32];
    size_t nl = line - 1 < sizeof num - 1 ? line - 1 : sizeof num - 1;
    memcpy(num, buf + 1, nl);
    num[nl] = '\0';
    long long v = strtoll(num, NULL, 10);
    switch (buf[0]) {
    case '+':
    case '-':
    case '(':
        if (!copy_str(out, buf[0] == '+' ? GB_REPLY_STATUS : buf[0] == '-' ? GB_REPLY_ERROR : GB_REPLY_BULK, buf + 1,
                      line - 1))
            return (size_t)-1;
        return pos;
    case ':':
        out->kind = GB_REPLY_INTEGER;
        out->integer = v;
        return pos;
    case '#':
        out->kind = GB_REPLY_INTEGER;
        out->integer = buf[1] == 't';
        return pos;
    case ',':
        out->kind = GB_REPLY_DOUBLE;
        out->dbl = strtod(num, NULL);
        return pos;
    case '_':
        out->kind = GB_REPLY_NIL;
        return pos;
    case '$':
    case '=': {
        if (v < 0) {
            out->kind = GB_REPLY_NIL;
            return pos;
        }
        if (len - pos < (size_t)v + 2)
            return 0;
        size_t skip = buf[0] == '=' ? 4 : 0; /* a verbatim string's "txt:" */
        if ((size_t)v < skip || !copy_str(out, GB_REPLY_BULK, buf + pos + skip, (size_t)v - skip))
            return (size_t)-1;
        return pos + (size_t)v + 2;
    }
    case '*':
    case '>':
    case '~':
    case '%': {
        if (v < 0) {
            out->kind = GB_REPLY_NIL_ARRAY;
            return pos;
        }
        size_t n = buf[0] == '%' ? 2 * (size_t)v : (size_t)v;
        /* Every element takes at least 3 bytes: until they are all here,
         * the count allocates nothing. */
        if (n > (len - pos) / 3)
            return 0;
        out->kind = GB_REPLY_ARRAY;
        out->elem = calloc(n ? n : 1, sizeof *out->elem);
        if (!out->elem)
            return (size_t)-1;
        for (size_t i = 0; i < n; i++) {
            size_t used = parse_reply(buf + pos, len - pos, &out->elem[i], depth + 1);
            out->nelem = i + 1;
            if (used == 0 || used == (size_t)-1) {
                gb_rc_reply_clear(out);
                return used;
            }
            pos += used;
        }
        return pos;
    }
    default:
        return (size_t)-1;
    }
}

int gb_rc_resp_collect(gb_ring_client *rc, gb_reply **reply, uint64_t timeout_ns)
{
    gb_reply *r = calloc(1, sizeof *r);
    if (!r)
        return GB_ENOMEM;
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
        if (rc->socket_link) {
            int rv = gb_rc_link_read(rc, timeout_ns);
            if (rv != 0) {
                free(r);
                return rv;
            }
            continue;
        }
        const void *msg;
        size_t len;
        int rv = gb_ring_client_recv(rc, &msg, &len, timeout_ns);
        if (rv != 0) {
            free(r);
            return rv;
        }
        if (rc->slen + len > rc->scap) {
            size_t ncap = rc->scap ? rc->scap : 4096;
            while (ncap < rc->slen + len)
                ncap *= 2;
            char *grown = realloc(rc->stream, ncap);
            if (!grown) {
                free(r);
                gb_ring_client_recv_done(rc);
                gb_rc_fail(rc, "out of memory buffering a %zu-byte reply", rc->slen + len);
                return GB_ENOMEM;
            }
            rc->stream = grown;
            rc->scap = ncap;
        }
        memcpy(rc->stream + rc->slen, msg, len);
        rc->slen += len;
        gb_ring_client_recv_done(rc);
    }
}

/* The push words Redis sends, in gb_ring_message_kind's order. */
static const struct {
    const char *word;
    gb_ring_message_kind kind;
} push_words[] = {
    {"message", GB_RING_MSG_MESSAGE},         {"pmessage", GB_RING_MSG_PMESSAGE},
    {"smessage", GB_RING_MSG_SMESSAGE},       {"subscribe", GB_RING_MSG_SUBSCRIBE},
    {"unsubscribe", GB_RING_MSG_UNSUBSCRIBE}, {"psubscribe", GB_RING_MSG_PSUBSCRIBE},
    {"punsubscribe", GB_RING_MSG_PUNSUBSCRIBE}, {"ssubscribe", GB_RING_MSG_SSUBSCRIBE},
    {"sunsubscribe", GB_RING_MSG_SUNSUBSCRIBE},
};

/* Reads a pub/sub push ([word, ...] in RESP2, a '>' push in RESP3) into m;
 * its strings point into the parsed tree, kept in rc->message until
 * gb_ring_message_done. */
int gb_rc_resp_next_message(gb_ring_client *rc, gb_ring_message *m, uint64_t timeout_ns)
{
    gb_reply *r;
    int rv = gb_rc_resp_collect(rc, &r, timeout_ns);
    if (rv != 0)
        return rv;
    memset(m, 0, sizeof *m);
    int kind = 0;
    if (r->kind == GB_REPLY_ARRAY && r->nelem >= 3 && r->elem[0].kind == GB_REPLY_BULK)
        for (size_t i = 0; i < sizeof push_words / sizeof push_words[0]; i++)
            if (strcmp(r->elem[0].str, push_words[i].word) == 0)
                kind = push_words[i].kind;
    const gb_reply *e = r->kind == GB_REPLY_ARRAY ? r->elem : NULL;
    bool ok = false;
    if (kind == GB_RING_MSG_PMESSAGE) {
        ok = r->nelem == 4 && e[1].kind == GB_REPLY_BULK && e[2].kind == GB_REPLY_BULK && e[3].kind == GB_REPLY_BULK;
        if (ok) {
            m->pattern = e[1].str;
            m->pattern_len = e[1].len;
            e++;
        }
    } else if (kind == GB_RING_MSG_MESSAGE || kind == GB_RING_MSG_SMESSAGE) {
        ok = r->nelem == 3 && e[1].kind == GB_REPLY_BULK && e[2].kind == GB_REPLY_BULK;
    } else if (kind != 0) {
        ok = r->nelem == 3 && (e[1].kind == GB_REPLY_BULK || e[1].kind == GB_REPLY_NIL) &&
             e[2].kind == GB_REPLY_INTEGER;
        if (ok) {
            m->count = e[2].integer;
            if (e[1].kind == GB_REPLY_BULK) {
                m->channel = e[1].str;
                m->channel_len = e[1].len;
            }
        }
    }
    if (!ok) {
        gb_reply_free(r);
        gb_rc_fail(rc, "the next reply is not a pub/sub push (a request is still outstanding?)");
        return GB_EPROTO;
    }
    m->kind = (gb_ring_message_kind)kind;
    if (kind <= GB_RING_MSG_SMESSAGE) {
        m->channel = e[1].str;
        m->channel_len = e[1].len;
        m->payload = e[2].str;
        m->payload_len = e[2].len;
    }
    gb_reply_free(rc->message);
    rc->message = r;
    return 0;
}
