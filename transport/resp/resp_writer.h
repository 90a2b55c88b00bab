/*
 * RESP reply writer: implements the engine's reply sink (engine/core/reply.h)
 * by appending protocol bytes to a growable output buffer. Sockets and RESP
 * rings both use it, so their replies are byte-for-byte identical.
 *
 * Two tables over the same buffer: RESP2 (a new client's) and RESP3, which
 * HELLO 3 switches to (c->rops = rops->resp3). RESP3 adds maps '%', sets
 * '~', doubles ',', the null '_', verbatim strings '=' and pushes '>'; the
 * other types are written alike.
 */
#ifndef GB_TRANSPORT_RESP_WRITER_H
#define GB_TRANSPORT_RESP_WRITER_H

#include "engine/core/reply.h"

typedef struct gb_outbuf {
    char *data;
    size_t len;
    size_t cap;
} gb_outbuf;

/* Reply ops whose ctx is a gb_outbuf *. */
extern const gb_reply_ops gb_resp2_reply_ops;
extern const gb_reply_ops gb_resp3_reply_ops;

void gb_outbuf_init(gb_outbuf *b);
void gb_outbuf_free(gb_outbuf *b);
/* Grows the buffer for gb_outbuf_reserve (aborts when memory runs out). */
char *gb_outbuf_grow(gb_outbuf *b, size_t n);
/* Makes room for n more bytes and returns where they go. Inline: it runs
 * several times per reply on the ring's hot path. */
static inline char *gb_outbuf_reserve(gb_outbuf *b, size_t n)
{
    if (__builtin_expect(b->len + n <= b->cap, 1))
        return b->data + b->len;
    return gb_outbuf_grow(b, n);
}
void gb_outbuf_append(gb_outbuf *b, const char *s, size_t n);
/* Drops the first n bytes (after a partial write). */
void gb_outbuf_consume(gb_outbuf *b, size_t n);

#endif
