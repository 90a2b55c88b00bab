/*
 * The client side of the SBE protocol: what the ring client library
 * (include/goblin/ring_client.h, transport/ring/) needs to speak SBE.
 *
 * Requests: the gb_sbe_encode_* functions of sbe_codec.h (each returns the
 * message length, 0 if it does not fit; buf == NULL asks for the length).
 * Replies: gb_sbe_decode_reply() turns one reply message into a tree of
 * views that borrow the message bytes: no allocation, scalars need no node
 * array at all, arrays use the caller's.
 *
 * Independent of the engine: this file and sbe_codec.c need only libc and
 * include/goblin/slice.h (gb_slice), so the client library links them without
 * goblin_engine.
 */
#ifndef GB_TRANSPORT_SBE_CLIENT_H
#define GB_TRANSPORT_SBE_CLIENT_H

#include "transport/sbe/sbe_codec.h"

typedef struct gb_sbe_reply_view {
    uint8_t kind;     /* enum gb_sbe_kind */
    int64_t integer;  /* INTEGER: the value; ARRAY: element count, -1 for a null array */
    double dbl;       /* DOUBLE: the value */
    const char *ptr;  /* STATUS, ERROR, BULK: the bytes, in the message (not NUL-terminated) */
    size_t len;
    struct gb_sbe_reply_view *elems;  /* ARRAY: its nelems elements, contiguous */
    size_t nelems;
    struct gb_sbe_reply_view *parent; /* the enclosing array (NULL at the root) */
} gb_sbe_reply_view;

/*
 * Decodes one reply message (msg stays borrowed as long as the views are
 * used). *root receives the reply; array elements are placed in nodes.
 * *nnodes: in, how many nodes there are (nodes may be NULL with 0); out, how
 * many were used. An ArrayReply needs exactly as many nodes as it has items
 * (every element at every depth); scalar replies need none.
 *
 * Returns 0; GB_ERANGE when nodes are too few (*nnodes then says how many
 * are needed: call again); GB_EPROTO when the message is not a well-formed
 * reply of this schema (truncated, inconsistent counts, unknown kind or
 * template). Never reads outside [msg, msg + len).
 */
int gb_sbe_decode_reply(const uint8_t *msg, size_t len, gb_sbe_reply_view *root, gb_sbe_reply_view *nodes,
                        size_t *nnodes);

static inline bool gb_sbe_reply_is_error(const gb_sbe_reply_view *v) { return v->kind == GB_SBE_KIND_ERROR; }
static inline bool gb_sbe_reply_is_null_array(const gb_sbe_reply_view *v)
{
    return v->kind == GB_SBE_KIND_ARRAY && v->integer < 0;
}

#endif
