/*
 * Reply decoding for SBE clients: one message into a tree of borrowed views.
 * Only libc and the codec: the client library links this without the engine.
 */
#include "transport/sbe/sbe_client.h"

static void view_clear(gb_sbe_reply_view *v, uint8_t kind)
{
    memset(v, 0, sizeof *v);
    v->kind = kind;
}

/* A reply whose body is one var-data field (status, error, bulk). */
static int decode_text(gb_sbe_cursor *c, gb_sbe_reply_view *root, uint8_t kind)
{
    gb_slice s;
    if (!gb_sbe_take_var(c, &s))
        return GB_EPROTO;
    view_clear(root, kind);
    root->ptr = s.ptr;
    root->len = s.len;
    return 0;
}

/*
 * ArrayReply: the items are the tree in pre-order. Each array's elements get
 * a contiguous run of nodes, reserved when the array itself is met, so
 * `elems` can be indexed; while an array is being filled its `len` counts the
 * elements placed so far (arrays have no bytes), and `parent` leads back up
 * when it is full. No recursion, no depth limit, one pass.
 */
static __attribute__((noinline)) int decode_array(gb_sbe_cursor *c, const uint8_t *block, gb_sbe_reply_view *root,
                                                  gb_sbe_reply_view *nodes, size_t *nnodes)
{
    int64_t length = gb_sbe_get_i64(block + GB_SBE_ARRAY_REPLY_LENGTH_OFFSET);
    gb_sbe_group g;
    if (!gb_sbe_take_group(c, true, GB_SBE_ARRAY_ITEM_BLOCK_LENGTH, 1, &g))
        return GB_EPROTO;
    size_t n = g.count;
    if (length < -1 || (length <= 0 && n) || (length >= 0 && (uint64_t)length > n))
        return GB_EPROTO;
    size_t cap = *nnodes;
    if (cap < n || (n && !nodes)) {
        *nnodes = n;
        return GB_ERANGE;
    }
    view_clear(root, GB_SBE_KIND_ARRAY);
    root->integer = length;
    if (length <= 0) {
        *nnodes = 0;
        return 0;
    }
    root->elems = nodes;
    root->nelems = (size_t)length;
    size_t next = (size_t)length; /* nodes reserved so far */
    gb_sbe_reply_view *cur = root;
    for (size_t i = 0; i < n; i++) {
        while (cur && cur->len == cur->nelems) {
            gb_sbe_reply_view *up = cur->parent;
            cur->len = 0;
            cur = up;
        }
        if (!cur)
            return GB_EPROTO; /* more items than the arrays hold */
        const uint8_t *blk;
        gb_slice bytes;
        if (!gb_sbe_take(c, g.block_length, &blk) || !gb_sbe_take_var(c, &bytes))
            return GB_EPROTO;
        uint8_t kind = blk[GB_SBE_ARRAY_ITEM_KIND_OFFSET];
        if (kind < GB_SBE_KIND_STATUS || kind > GB_SBE_KIND_ARRAY)
            return GB_EPROTO;
        gb_sbe_reply_view *v = &cur->elems[cur->len++];
        view_clear(v, kind);
        v->parent = cur;
        v->integer = gb_sbe_get_i64(blk + GB_SBE_ARRAY_ITEM_INTEGER_OFFSET);
        v->dbl = gb_sbe_get_f64(blk + GB_SBE_ARRAY_ITEM_DBL_OFFSET);
        switch (kind) {
        case GB_SBE_KIND_STATUS:
        case GB_SBE_KIND_ERROR:
        case GB_SBE_KIND_BULK:
            v->ptr = bytes.ptr;
            v->len = bytes.len;
            break;
        case GB_SBE_KIND_ARRAY:
            if (v->integer < -1)
                return GB_EPROTO;
            if (v->integer > 0) {
                if ((uint64_t)v->integer > n - next)
                    return GB_EPROTO; /* claims more elements than there are items */
                v->elems = nodes + next;
                v->nelems = (size_t)v->integer;
                next += v->nelems;
                cur = v;
            }
            break;
        default:
            break;
        }
    }
    /* Every array must be full: fewer items than the counts promise is malformed. */
    for (; cur; cur = cur->parent) {
        if (cur->len != cur->nelems)
            return GB_EPROTO;
        cur->len = 0;
    }
    root->parent = NULL;
    *nnodes = n;
    return 0;
}

/* A scalar reply's root block, at least min bytes; *nnodes (when given)
 * is 0 once it is taken. */
static inline bool take_scalar_root(gb_sbe_cursor *c, const gb_sbe_header *h, unsigned min, const uint8_t **block,
                                    size_t *nnodes)
{
    if (h->block_length < min || !gb_sbe_take(c, h->block_length, block))
        return false;
    if (nnodes)
        *nnodes = 0;
    return true;
}

/* One switch, each template checking its own root block, and arrays in a
 * function of their own: a scalar reply (every reply of the ring's
 * request/reply calls) is decoded without the array decoder's frame. */
int gb_sbe_decode_reply(const uint8_t *msg, size_t len, gb_sbe_reply_view *root, gb_sbe_reply_view *nodes,
                        size_t *nnodes)
{
    gb_sbe_header h;
    if (!msg || !gb_sbe_read_header(msg, len, &h) || h.schema_id != GB_SBE_SCHEMA_ID)
        return GB_EPROTO;
    gb_sbe_cursor c = {msg + GB_SBE_HEADER_SIZE, msg + len};
    const uint8_t *block;
    switch (h.template_id) {
    case GB_SBE_STATUS_REPLY:
        return take_scalar_root(&c, &h, 0, &block, nnodes) ? decode_text(&c, root, GB_SBE_KIND_STATUS) : GB_EPROTO;
    case GB_SBE_ERROR_REPLY:
        return take_scalar_root(&c, &h, 0, &block, nnodes) ? decode_text(&c, root, GB_SBE_KIND_ERROR) : GB_EPROTO;
    case GB_SBE_BULK_REPLY:
        return take_scalar_root(&c, &h, 0, &block, nnodes) ? decode_text(&c, root, GB_SBE_KIND_BULK) : GB_EPROTO;
    case GB_SBE_NIL_REPLY:
        if (!take_scalar_root(&c, &h, 0, &block, nnodes))
            return GB_EPROTO;
        view_clear(root, GB_SBE_KIND_NIL);
        return 0;
    case GB_SBE_INTEGER_REPLY:
        if (!take_scalar_root(&c, &h, 8, &block, nnodes))
            return GB_EPROTO;
        view_clear(root, GB_SBE_KIND_INTEGER);
        root->integer = gb_sbe_get_i64(block + GB_SBE_INTEGER_REPLY_VALUE_OFFSET);
        return 0;
    case GB_SBE_DOUBLE_REPLY:
        if (!take_scalar_root(&c, &h, 8, &block, nnodes))
            return GB_EPROTO;
        view_clear(root, GB_SBE_KIND_DOUBLE);
        root->dbl = gb_sbe_get_f64(block + GB_SBE_DOUBLE_REPLY_VALUE_OFFSET);
        return 0;
    case GB_SBE_ARRAY_REPLY: {
        size_t zero = 0;
        if (h.block_length < 8 || !gb_sbe_take(&c, h.block_length, &block))
            return GB_EPROTO;
        return decode_array(&c, block, root, nodes, nnodes ? nnodes : &zero);
    }
    default:
        return GB_EPROTO;
    }
}
