/*
 * RESP reply writer: implements the engine's reply sink (engine/core/request/reply.h)
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

#include "engine/core/request/reply.h"

/*
 * Out of memory: growth is fallible (gb_try_realloc). When it fails the
 * buffer is marked `oom`, the reply being written is lost and every later
 * write is dropped (cap is pulled down to len, so the inline fast path of
 * gb_outbuf_reserve sends them all to gb_outbuf_grow, which refuses). The
 * transport that owns the buffer checks gb_outbuf_oom() after executing and
 * closes that one client: its reply stream has a hole and can never be
 * sent.
 */
typedef struct gb_outbuf {
    char *data;
    size_t len;
    size_t cap;
    bool oom; /* growth failed: the contents are incomplete */
} gb_outbuf;

/* Reply ops whose ctx is a gb_outbuf *. */
extern const gb_reply_ops gb_resp2_reply_ops;
extern const gb_reply_ops gb_resp3_reply_ops;

void gb_outbuf_init(gb_outbuf *b);
void gb_outbuf_free(gb_outbuf *b);
/* Grows the buffer for gb_outbuf_reserve; NULL (and b marked oom) when
 * memory runs out or b is already marked. */
char *gb_outbuf_grow(gb_outbuf *b, size_t n);
/* Makes room for n more bytes and returns where they go, or NULL when
 * memory ran out (then write nothing). Inline: it runs several times per
 * reply on the ring's hot path. */
static inline char *gb_outbuf_reserve(gb_outbuf *b, size_t n)
{
    if (__builtin_expect(b->len + n <= b->cap, 1))
        return b->data + b->len;
    return gb_outbuf_grow(b, n);
}
/* Appends n bytes (dropped when memory runs out: see oom). */
void gb_outbuf_append(gb_outbuf *b, const char *s, size_t n);
static inline bool gb_outbuf_oom(const gb_outbuf *b) { return b->oom; }
/* Drops the first n bytes (after a partial write). */
void gb_outbuf_consume(gb_outbuf *b, size_t n);
/* Gives back the room beyond cap bytes (never below what it holds); false,
 * with nothing changed, when the smaller block cannot be had. */
bool gb_outbuf_shrink(gb_outbuf *b, size_t cap);

#endif
