#include "engine/commands/cmd_collection.h"

#include <stdlib.h>

#include "engine/core/blocking.h"
#include "engine/commands/cmd_util.h"
#include "engine/base/mem.h"
#include "engine/core/reply.h"
#include "engine/base/util.h"

bool gb_tobj_lookup_or_reply(gb_client *c, gb_slice key, enum gb_type t, bool write, gb_tobj *o, bool *wrong)
{
    int r = gb_tobj_lookup(c->db, key, t, write, o);
    *wrong = r < 0;
    if (*wrong)
        gb_reply_error(c, GB_ERR_WRONGTYPE);
    return r > 0;
}

/* ---- HSCAN / SSCAN / ZSCAN ------------------------------------------------------------ */

/* Parsed [MATCH pattern] [COUNT n]. */
typedef struct scan_opts {
    gb_slice pat;
    bool use_pat;
    int64_t count;
} scan_opts;

/* Parses argv[first..]; replies the error and returns false on bad input. */
static bool parse_scan_opts(gb_client *c, int argc, gb_slice *argv, int first, scan_opts *o)
{
    o->count = 10;
    o->use_pat = false;
    o->pat = gb_slice_make("", 0);
    for (int i = first; i < argc; i += 2) {
        bool more = i + 1 < argc;
        if (gb_slice_ieq(argv[i], "count") && more) {
            if (!gb_arg_ll(c, argv[i + 1], &o->count))
                return false;
            if (o->count < 1) {
                gb_reply_error(c, GB_ERR_SYNTAX);
                return false;
            }
        } else if (gb_slice_ieq(argv[i], "match") && more) {
            o->pat = argv[i + 1];
            o->use_pat = !(o->pat.len == 1 && o->pat.ptr[0] == '*');
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

/* Items collected by a scan batch: copies of the bytes (the type objects
 * hand them out only during a callback), then one reply
 * [cursor, [item, ...]] built from them. */
struct gb_scan_buf {
    const scan_opts *opts;
    char *bytes;
    size_t nbytes, capbytes;
    struct scan_item {
        size_t off, len;   /* the field/member */
        size_t voff, vlen; /* hash value */
        double score;      /* zset score */
    } *items;
    size_t n, cap;
};

static size_t buf_put(gb_scan_buf *b, gb_slice s)
{
    if (b->nbytes + s.len > b->capbytes) {
        size_t cap = b->capbytes ? b->capbytes : 256;
        while (cap < b->nbytes + s.len)
            cap *= 2;
        b->bytes = gb_realloc(b->bytes, cap);
        b->capbytes = cap;
    }
    size_t off = b->nbytes;
    if (s.len)
        memcpy(b->bytes + off, s.ptr, s.len);
    b->nbytes += s.len;
    return off;
}

void gb_scan_buf_add(gb_scan_buf *b, gb_slice member, gb_slice value, double score)
{
    if (b->opts->use_pat && !gb_glob_match(b->opts->pat.ptr, b->opts->pat.len, member.ptr, member.len, false))
        return;
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->items = gb_realloc(b->items, b->cap * sizeof *b->items);
    }
    struct scan_item *it = &b->items[b->n++];
    it->off = buf_put(b, member);
    it->len = member.len;
    it->voff = buf_put(b, value);
    it->vlen = value.len;
    it->score = score;
}

/* How many reply items so far (hash and zset elements count twice, as in
 * Redis's COUNT accounting). */
static size_t scan_buf_items(const gb_scan_buf *b, enum gb_type t)
{
    return t == GB_TYPE_SET ? b->n : b->n * 2;
}

/* Replies [cursor, [...]] and frees the buffer. */
static void scan_buf_reply(gb_client *c, gb_scan_buf *b, uint64_t cursor, enum gb_type t)
{
    char cbuf[24];
    gb_reply_array(c, 2);
    gb_reply_bulk(c, cbuf, gb_ull2str(cbuf, cursor));
    gb_reply_array(c, (int64_t)scan_buf_items(b, t));
    for (size_t i = 0; i < b->n; i++) {
        const struct scan_item *it = &b->items[i];
        gb_reply_bulk(c, b->bytes + it->off, it->len);
        if (t == GB_TYPE_HASH)
            gb_reply_bulk(c, b->bytes + it->voff, it->vlen);
        else if (t == GB_TYPE_ZSET)
            gb_reply_double(c, it->score);
    }
    gb_free(b->bytes);
    gb_free(b->items);
}

void gb_types_scan(gb_client *c, int argc, gb_slice *argv, enum gb_type t, gb_types_scan_fn scan)
{
    uint64_t cursor;
    if (!gb_parse_scan_cursor(c, argv[2], &cursor))
        return;
    bool wrong;
    gb_tobj o;
    if (!gb_tobj_lookup_or_reply(c, argv[1], t, false, &o, &wrong)) {
        if (!wrong) { /* a missing key: ["0", []] */
            gb_reply_array(c, 2);
            gb_reply_bulk(c, "0", 1);
            gb_reply_array(c, 0);
        }
        return;
    }
    scan_opts so;
    if (!parse_scan_opts(c, argc, argv, 3, &so))
        return;
    gb_scan_buf b;
    memset(&b, 0, sizeof b);
    b.opts = &so;
    int64_t budget = so.count * 10;
    do {
        cursor = scan(&o.o, cursor, &b);
    } while (cursor && budget-- > 0 && scan_buf_items(&b, t) < (size_t)so.count);
    scan_buf_reply(c, &b, cursor, t);
}

/* ---- random counts ------------------------------------------------------------------- */

bool gb_types_random_count(gb_client *c, gb_slice arg, int64_t *out)
{
    if (!gb_arg_ll(c, arg, out))
        return false;
    if (*out == INT64_MIN) {
        gb_reply_error(c, "ERR value is out of range, value must between -9223372036854775807 and "
                          "9223372036854775807");
        return false;
    }
    return true;
}

bool gb_types_random_pairs_ok(gb_client *c, int64_t count)
{
    if (count < -INT64_MAX / 2 || count > INT64_MAX / 2) {
        gb_reply_error(c, "ERR value is out of range");
        return false;
    }
    return true;
}
