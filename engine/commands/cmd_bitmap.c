/* Bitmap commands (SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD,
 * BITFIELD_RO): Redis 7.0's argument rules, error texts, replies and
 * events around engine/types/t_bitmap.h. Each handler checks in Redis's
 * order, since that order decides which error a bad request gets (BITCOUNT
 * and BITPOS look the key up before parsing their range). */
#include "engine/commands/cmd_util.h"
#include "engine/base/bitops.h"
#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/types/t_bitmap.h"
#include "engine/types/t_string.h"

#define ERR_BIT_OFFSET "ERR bit offset is not an integer or out of range"
#define ERR_BIT_VALUE "ERR bit is not an integer or out of range"
#define ERR_BITFIELD_TYPE "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."

static bool arg_is(gb_slice arg, const char *word) { return gb_slice_ieq(gb_arg_cstring(arg), word); }

/* Redis's getBitOffsetFromArgument: a bit offset below proto-max-bulk-len
 * bytes (any for the log or the primary: gb_client_must_obey); with bits > 0 (BITFIELD) "#N" means N * bits, multiplied with
 * Redis's wrap-around. */
static bool parse_bit_offset(gb_client *c, gb_slice arg, unsigned bits, uint64_t *out)
{
    bool hash = bits > 0 && arg.len > 0 && arg.ptr[0] == '#';
    int64_t v;
    if (!gb_str2ll(arg.ptr + hash, arg.len - hash, &v)) {
        gb_reply_error(c, ERR_BIT_OFFSET);
        return false;
    }
    if (hash)
        v = (int64_t)((uint64_t)v * bits);
    if (v < 0 || (!gb_client_must_obey(c) && (uint64_t)(v >> 3) >= (uint64_t)c->eng->cfg.proto_max_bulk_len)) {
        gb_reply_error(c, ERR_BIT_OFFSET);
        return false;
    }
    *out = (uint64_t)v;
    return true;
}

static void cmd_getbit(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    uint64_t offset;
    if (!parse_bit_offset(c, argv[2], 0, &offset))
        return;
    int bit;
    gb_result r = gb_bitmap_getbit(c->db, argv[1], offset, &bit);
    gb_reply_int_result(c, r, bit);
}

static void cmd_setbit(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    uint64_t offset;
    int64_t on;
    if (!parse_bit_offset(c, argv[2], 0, &offset))
        return;
    if (!gb_slice2ll(argv[3], &on) || (on & ~1)) {
        gb_reply_error(c, ERR_BIT_VALUE);
        return;
    }
    int old;
    bool changed;
    gb_result r = gb_bitmap_setbit(c->db, argv[1], offset, (int)on, &old, &changed);
    gb_reply_int_result(c, r, old);
    if (r == GB_R_OK && changed)
        gb_notify_key(c, GB_NOTIFY_STRING, "setbit", argv[1]);
}

/* The BYTE|BIT argument of BITCOUNT and BITPOS. */
static bool parse_index_unit(gb_client *c, gb_slice arg, bool *in_bits)
{
    if (arg_is(arg, "bit"))
        *in_bits = true;
    else if (arg_is(arg, "byte"))
        *in_bits = false;
    else {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return false;
    }
    return true;
}

/* BITCOUNT key [start end [BYTE|BIT]] */
static void cmd_bitcount(gb_client *c, int argc, gb_slice *argv)
{
    gb_slice v;
    char buf[GB_INT_BUF];
    gb_result r = gb_string_get(c->db, argv[1], &v, buf);
    if (r == GB_R_NOTFOUND) {
        gb_reply_int(c, 0);
        return;
    }
    if (r != GB_R_OK) {
        gb_reply_result(c, r);
        return;
    }
    const unsigned char *p = (const unsigned char *)v.ptr;
    if (argc == 2) {
        gb_reply_int(c, (int64_t)gb_bits_popcount(p, v.len));
        return;
    }
    if (argc != 4 && argc != 5) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    int64_t start, end;
    bool in_bits = false;
    if (!gb_arg_ll(c, argv[2], &start) || !gb_arg_ll(c, argv[3], &end))
        return;
    if (start < 0 && end < 0 && start > end) { /* before the unit is read, as Redis */
        gb_reply_int(c, 0);
        return;
    }
    if (argc == 5 && !parse_index_unit(c, argv[4], &in_bits))
        return;
    gb_reply_int(c, gb_bits_count_range(p, v.len, start, end, in_bits));
}

/* BITPOS key bit [start [end [BYTE|BIT]]] */
static void cmd_bitpos(gb_client *c, int argc, gb_slice *argv)
{
    int64_t bit;
    if (!gb_arg_ll(c, argv[2], &bit))
        return;
    if (bit != 0 && bit != 1) {
        gb_reply_error(c, "ERR The bit argument must be 1 or 0.");
        return;
    }
    gb_slice v;
    char buf[GB_INT_BUF];
    gb_result r = gb_string_get(c->db, argv[1], &v, buf);
    if (r == GB_R_NOTFOUND) { /* an endless run of zeros */
        gb_reply_int(c, bit ? -1 : 0);
        return;
    }
    if (r != GB_R_OK) {
        gb_reply_result(c, r);
        return;
    }
    int64_t start = 0, end = 0;
    bool in_bits = false;
    if (argc > 6) {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    if (argc >= 4 && !gb_arg_ll(c, argv[3], &start))
        return;
    if (argc == 6 && !parse_index_unit(c, argv[5], &in_bits))
        return;
    if (argc >= 5 && !gb_arg_ll(c, argv[4], &end))
        return;
    gb_reply_int(c, gb_bits_pos_range((const unsigned char *)v.ptr, v.len, (int)bit, start, end, argc >= 5, in_bits));
}

/* BITOP AND|OR|XOR|NOT destkey key [key ...] */
static void cmd_bitop(gb_client *c, int argc, gb_slice *argv)
{
    gb_bitop op;
    if (arg_is(argv[1], "and"))
        op = GB_BITOP_AND;
    else if (arg_is(argv[1], "or"))
        op = GB_BITOP_OR;
    else if (arg_is(argv[1], "xor"))
        op = GB_BITOP_XOR;
    else if (arg_is(argv[1], "not"))
        op = GB_BITOP_NOT;
    else {
        gb_reply_error(c, GB_ERR_SYNTAX);
        return;
    }
    if (op == GB_BITOP_NOT && argc != 4) {
        gb_reply_error(c, "ERR BITOP NOT must be called with a single source key.");
        return;
    }
    size_t len;
    bool deleted;
    gb_result r = gb_bitmap_bitop(c->db, op, argv[2], argv + 3, (size_t)(argc - 3), &len, &deleted);
    if (r != GB_R_OK) {
        gb_reply_result(c, r);
        return;
    }
    if (len)
        gb_notify_key(c, GB_NOTIFY_STRING, "set", argv[2]);
    else if (deleted)
        gb_notify_key(c, GB_NOTIFY_GENERIC, "del", argv[2]);
    gb_reply_int(c, (int64_t)len);
}

/* Redis's getBitfieldTypeFromArgument: i1..i64 or u1..u63 (the digits read
 * as a C string, up to a NUL byte). */
static bool parse_bitfield_type(gb_client *c, gb_slice arg, bool *is_signed, unsigned *bits)
{
    gb_slice t = gb_arg_cstring(arg);
    int64_t n;
    if (t.len == 0 || (t.ptr[0] != 'i' && t.ptr[0] != 'u') || !gb_str2ll(t.ptr + 1, t.len - 1, &n) || n < 1 ||
        n > (t.ptr[0] == 'i' ? 64 : 63)) {
        gb_reply_error(c, ERR_BITFIELD_TYPE);
        return false;
    }
    *is_signed = t.ptr[0] == 'i';
    *bits = (unsigned)n;
    return true;
}

/* BITFIELD's operations, parsed all before any runs (an error anywhere
 * leaves the key alone). Returns the count, or -1 after replying an error. */
static int64_t parse_bitfield_ops(gb_client *c, int argc, gb_slice *argv, gb_bitfield_op *ops)
{
    gb_bf_overflow ow = GB_BF_WRAP;
    int64_t n = 0;
    for (int j = 2; j < argc; j++) {
        int rest = argc - j - 1;
        gb_bf_kind kind;
        if (arg_is(argv[j], "get") && rest >= 2)
            kind = GB_BF_GET;
        else if (arg_is(argv[j], "set") && rest >= 3)
            kind = GB_BF_SET;
        else if (arg_is(argv[j], "incrby") && rest >= 3)
            kind = GB_BF_INCRBY;
        else if (arg_is(argv[j], "overflow") && rest >= 1) {
            gb_slice w = argv[++j];
            if (arg_is(w, "wrap"))
                ow = GB_BF_WRAP;
            else if (arg_is(w, "sat"))
                ow = GB_BF_SAT;
            else if (arg_is(w, "fail"))
                ow = GB_BF_FAIL;
            else {
                gb_reply_error(c, "ERR Invalid OVERFLOW type specified");
                return -1;
            }
            continue;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return -1;
        }
        gb_bitfield_op *op = &ops[n];
        unsigned bits;
        if (!parse_bitfield_type(c, argv[j + 1], &op->is_signed, &bits) ||
            !parse_bit_offset(c, argv[j + 2], bits, &op->offset))
            return -1;
        op->value = 0;
        if (kind != GB_BF_GET && !gb_arg_ll(c, argv[j + 3], &op->value))
            return -1;
        op->kind = (uint8_t)kind;
        op->overflow = (uint8_t)ow;
        op->bits = (uint8_t)bits;
        n++;
        j += kind == GB_BF_GET ? 2 : 3;
    }
    return n;
}

static void bitfield_generic(gb_client *c, int argc, gb_slice *argv, bool readonly_cmd)
{
    /* Each operation takes at least three arguments. */
    gb_bitfield_op *ops = gb_malloc((size_t)(argc / 3 + 1) * sizeof *ops);
    gb_bitfield_reply *out = NULL;
    int64_t n = parse_bitfield_ops(c, argc, argv, ops);
    if (n < 0)
        goto done;
    if (readonly_cmd) {
        for (int64_t i = 0; i < n; i++) {
            if (ops[i].kind != GB_BF_GET) {
                /* Redis checks a read-only key's type first only when every
                 * operation is a GET: a write fails here before the lookup. */
                gb_reply_error(c, "ERR BITFIELD_RO only supports the GET subcommand");
                goto done;
            }
        }
    }
    out = gb_malloc((size_t)(n + 1) * sizeof *out);
    size_t changes;
    gb_result r = gb_bitmap_bitfield(c->db, argv[1], ops, (size_t)n, out, &changes);
    if (r != GB_R_OK) {
        gb_reply_result(c, r);
        goto done;
    }
    gb_reply_array(c, n);
    for (int64_t i = 0; i < n; i++) {
        if (out[i].nil)
            gb_reply_nil(c);
        else
            gb_reply_int(c, out[i].value);
    }
    if (changes)
        gb_notify_key(c, GB_NOTIFY_STRING, "setbit", argv[1]);
done:
    gb_free(out);
    gb_free(ops);
}

static void cmd_bitfield(gb_client *c, int argc, gb_slice *argv) { bitfield_generic(c, argc, argv, false); }

static void cmd_bitfield_ro(gb_client *c, int argc, gb_slice *argv) { bitfield_generic(c, argc, argv, true); }

/* Arity, flags and keys come from Redis's description of each command
 * (engine/core/request/command_meta_table.c): SETBIT, BITOP and BITFIELD are
 * write + denyoom there, so the gate refuses them over maxmemory. */
GB_DEFINE_COMMANDS(bitmap,
    {"setbit", cmd_setbit},
    {"getbit", cmd_getbit},
    {"bitcount", cmd_bitcount},
    {"bitpos", cmd_bitpos},
    {"bitop", cmd_bitop},
    {"bitfield", cmd_bitfield},
    {"bitfield_ro", cmd_bitfield_ro});
