#include "engine/commands/cmd_collection.h"

#include "engine/base/score.h"
#include "engine/commands/cmd_util.h"
#include "engine/base/mem.h"
#include "engine/core/memory/client_memory.h"
#include "engine/core/request/reply.h"
#include "engine/base/util.h"
#include "platform/daemon.h"

/* ---- HSCAN / SSCAN / ZSCAN ------------------------------------------------------------ */

/* Parses [MATCH pattern] [COUNT n] from argv[first..]; returns the error
 * to reply (once the key has been checked, as Redis does), or NULL. */
static const char *parse_scan_opts(int argc, gb_slice *argv, int first, gb_scan_opts *o)
{
    o->count = 10;
    o->use_pattern = false;
    o->pattern = gb_slice_make("", 0);
    for (int i = first; i < argc; i += 2) {
        bool more = i + 1 < argc;
        if (gb_slice_ieq(argv[i], "count") && more) {
            if (!gb_slice2ll(argv[i + 1], &o->count))
                return GB_ERR_NOT_INT;
            if (o->count < 1)
                return GB_ERR_SYNTAX;
        } else if (gb_slice_ieq(argv[i], "match") && more) {
            o->pattern = argv[i + 1];
            o->use_pattern = !(o->pattern.len == 1 && o->pattern.ptr[0] == '*');
        } else {
            return GB_ERR_SYNTAX;
        }
    }
    return NULL;
}

/* Copies of the elements a scan streams (borrowed only during each
 * callback), replied at the end as [cursor, [item, ...]]: the cursor comes
 * first but is known last. */
typedef struct scan_buf {
    char *bytes;
    size_t nbytes, capbytes;
    struct scan_item {
        size_t off, len;   /* the field/member */
        size_t voff, vlen; /* hash value */
        double score;      /* zset score */
    } *items;
    size_t n, cap;
} scan_buf;

static size_t buf_put(scan_buf *b, gb_slice s)
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

static void buf_add(scan_buf *b, gb_slice member, gb_slice value, double score)
{
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

static void buf_pair(void *ctx, gb_slice field, gb_slice value) { buf_add(ctx, field, value, 0); }
static void buf_member(void *ctx, gb_slice member) { buf_add(ctx, member, gb_slice_make("", 0), 0); }
static void buf_scored(void *ctx, gb_slice member, double score) { buf_add(ctx, member, gb_slice_make("", 0), score); }

/* Replies [cursor, [...]] and frees the buffer (hash and zset elements are
 * two items each). */
static void scan_buf_reply(gb_client *c, scan_buf *b, uint64_t cursor, enum gb_type t)
{
    char cbuf[24], sbuf[GB_SCORE_BUF];
    gb_reply_array(c, 2);
    gb_reply_bulk(c, cbuf, gb_ull2str(cbuf, cursor));
    gb_reply_array(c, (int64_t)(t == GB_TYPE_SET ? b->n : b->n * 2));
    for (size_t i = 0; i < b->n; i++) {
        const struct scan_item *it = &b->items[i];
        gb_reply_bulk(c, b->bytes + it->off, it->len);
        if (t == GB_TYPE_HASH)
            gb_reply_bulk(c, b->bytes + it->voff, it->vlen);
        else if (t == GB_TYPE_ZSET) /* a bulk string in RESP3 too, as Redis's ZSCAN */
            gb_reply_bulk(c, sbuf, gb_score_format(it->score, sbuf));
    }
    gb_free(b->bytes);
    gb_free(b->items);
}

void gb_types_scan(gb_client *c, int argc, gb_slice *argv, enum gb_type t)
{
    uint64_t cursor;
    if (!gb_parse_scan_cursor(c, argv[2], &cursor))
        return;
    gb_scan_opts so;
    const char *err = parse_scan_opts(argc, argv, 3, &so);
    scan_buf b;
    memset(&b, 0, sizeof b);
    gb_sink sink = {.value = buf_member, .pair = buf_pair, .scored = buf_scored, .ctx = &b};
    uint64_t next;
    gb_result r = gb_tobj_scan(c->db, argv[1], t, cursor, err ? NULL : &so, &sink, &next);
    if (r == GB_R_OK) {
        scan_buf_reply(c, &b, next, t);
    } else if (r == GB_R_NOTFOUND) { /* a missing key: ["0", []] */
        gb_reply_array(c, 2);
        gb_reply_bulk(c, "0", 1);
        gb_reply_array(c, 0);
    } else if (r == GB_R_BADARG) {
        gb_reply_error(c, err);
    } else {
        gb_reply_result(c, r);
    }
}

/* ---- random counts ------------------------------------------------------------------- */

bool gb_types_random_count(gb_client *c, gb_slice arg, int64_t *out)
{
    return gb_arg_ll_within(c, arg, -INT64_MAX, INT64_MAX, out);
}

bool gb_types_reply_fits(gb_client *c, uint64_t n, unsigned per_element, uint64_t element_bytes)
{
    if (c->flags & GB_CLIENT_SCRIPT) {
        /* The reply becomes one Lua table, a 16-byte slot per element in
         * one block, which the interpreter may not grow past
         * proto-max-bulk-len (engine/script/script_vm.c): refused before
         * the first element instead of after millions. */
        uint64_t slots = (uint64_t)c->eng->cfg.proto_max_bulk_len / 16;
        if (n <= slots / per_element)
            return true;
        gb_reply_error(c, "ERR the reply is too large for a script (more elements than proto-max-bulk-len allows "
                          "a Lua table)");
        return false;
    }
    /* Each element at least an empty bulk string ("$0\r\n\r\n"). */
    uint64_t min = 6u * per_element;
    uint64_t bytes = n > UINT64_MAX / min ? UINT64_MAX : n * min;
    if (gb_client_reply_over_limit(c, bytes))
        return false;
    /* The reply as the value holds its elements, whatever the limit (none
     * with Redis's `normal 0 0 0`, or one the smallest elements pass): no
     * machine builds a reply larger than its memory, and no client waits
     * while it is tried. The machine is asked only past 64 MB. */
    uint64_t each = GB_MAX(element_bytes, 1);
    if (n > ((uint64_t)64 << 20) / each) {
        uint64_t machine = gb_plat_total_system_memory();
        if (machine && n > machine / each) {
            gb_reply_error(c, "ERR the reply would take more memory than this machine has (lower the count)");
            return false;
        }
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
