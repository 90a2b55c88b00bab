/* HyperLogLog commands (PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST):
 * Redis 7.0's replies, error texts and events around engine/types/t_hll.h
 * and the representation in engine/base/hll.h. */
#include "engine/commands/cmd_util.h"
#include "engine/base/hll.h"
#include "engine/base/mem.h"
#include "engine/base/strbuf.h"
#include "engine/core/request/propagate.h"
#include "engine/types/t_hll.h"

/* Redis's texts, which it sends with their own codes (not "ERR"). */
#define ERR_NOT_HLL "WRONGTYPE Key is not a valid HyperLogLog string value."
#define ERR_CORRUPT "INVALIDOBJ Corrupted HLL object detected"

static void reply_status(gb_client *c, gb_hll_status st)
{
    switch (st) {
    case GB_HLL_WRONGTYPE: gb_reply_result(c, GB_R_WRONGTYPE); break;
    case GB_HLL_NOT_HLL: gb_reply_error(c, ERR_NOT_HLL); break;
    case GB_HLL_CORRUPT: gb_reply_error(c, ERR_CORRUPT); break;
    case GB_HLL_NO_KEY: gb_reply_error(c, "ERR The specified key does not exist"); break;
    case GB_HLL_NOT_SPARSE: gb_reply_error(c, "ERR HLL encoding is not sparse"); break;
    case GB_HLL_OK: break;
    }
}

/* PFADD key [element ...] */
static void cmd_pfadd(gb_client *c, int argc, gb_slice *argv)
{
    bool updated;
    gb_hll_status st = gb_hll_add(c->db, argv[1], argv + 2, (size_t)(argc - 2), &updated);
    if (st != GB_HLL_OK) {
        reply_status(c, st);
        return;
    }
    if (updated)
        gb_notify_key(c, GB_NOTIFY_STRING, "pfadd", argv[1]);
    gb_reply_int(c, updated);
}

/* PFCOUNT key [key ...] */
static void cmd_pfcount(gb_client *c, int argc, gb_slice *argv)
{
    uint64_t card;
    gb_hll_status st;
    if (argc > 2) {
        st = gb_hll_count_union(c->db, argv + 1, (size_t)(argc - 1), &card);
    } else {
        bool cached_now;
        st = gb_hll_count_key(c->db, argv[1], &card, &cached_now);
        /* The cache lives in the string: Redis propagates the PFCOUNT
         * that wrote it, read-only command though it is. */
        if (st == GB_HLL_OK && cached_now)
            gb_propagate_command(c, argc, argv);
    }
    if (st != GB_HLL_OK)
        reply_status(c, st);
    else
        gb_reply_int(c, (int64_t)card);
}

/* PFMERGE destkey [sourcekey ...] */
static void cmd_pfmerge(gb_client *c, int argc, gb_slice *argv)
{
    gb_hll_status st = gb_hll_merge(c->db, argv + 1, (size_t)(argc - 1));
    if (st != GB_HLL_OK) {
        reply_status(c, st);
        return;
    }
    /* Redis's event for a merge: a mass PFADD. */
    gb_notify_key(c, GB_NOTIFY_STRING, "pfadd", argv[1]);
    gb_reply_ok(c);
}

static void decode_out(void *ctx, const char *p, size_t n) { gb_strbuf_add(ctx, p, n); }

static gb_hll_debug_op debug_op(gb_slice sub)
{
    static const char *const names[] = {"getreg", "decode", "encoding", "todense"};
    for (int i = 0; i < 4; i++)
        if (gb_slice_ieq(sub, names[i]))
            return (gb_hll_debug_op)i;
    return GB_HLL_DEBUG_UNKNOWN;
}

/* PFDEBUG GETREG|DECODE|ENCODING|TODENSE key */
static void cmd_pfdebug(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    gb_slice sub = gb_arg_cstring(argv[1]);
    gb_hll_debug_op op = debug_op(sub);
    gb_strbuf text = {0};
    gb_hll_debug_reply r = {.out = decode_out, .ctx = &text};
    if (op == GB_HLL_DEBUG_GETREG)
        r.registers = gb_malloc(GB_HLL_REGISTERS);
    gb_hll_status st = gb_hll_debug(c->db, argv[2], op, &r);
    if (st != GB_HLL_OK) {
        reply_status(c, st);
    } else if (op == GB_HLL_DEBUG_GETREG) {
        gb_reply_array(c, GB_HLL_REGISTERS);
        for (uint32_t i = 0; i < GB_HLL_REGISTERS; i++)
            gb_reply_int(c, r.registers[i]);
    } else if (op == GB_HLL_DEBUG_DECODE) {
        gb_reply_bulk(c, gb_strbuf_cstr(&text), text.len);
    } else if (op == GB_HLL_DEBUG_ENCODING) {
        gb_reply_status(c, r.encoding == GB_HLL_DENSE ? "dense" : "sparse");
    } else if (op == GB_HLL_DEBUG_TODENSE) {
        gb_reply_int(c, r.converted);
    } else {
        gb_reply_errorf(c, "ERR Unknown PFDEBUG subcommand '%.*s'", (int)sub.len, sub.ptr);
    }
    gb_free(r.registers);
    gb_strbuf_free(&text);
}

/* PFSELFTEST */
static void cmd_pfselftest(gb_client *c, int argc, gb_slice *argv)
{
    (void)argc;
    (void)argv;
    char *err = gb_hll_selftest((size_t)c->eng->cfg.hll_sparse_max_bytes);
    if (err)
        gb_reply_error(c, err);
    else
        gb_reply_ok(c);
    gb_free(err);
}

/* PFCOUNT's may-replicate (the cache it writes) is its own: Redis's
 * description has it but COMMAND INFO, the table's source, does not show it;
 * read-only scripts refuse it, CLIENT PAUSE WRITE holds it. */
GB_DEFINE_COMMANDS(hll,
    {"pfadd", cmd_pfadd},
    {"pfcount", cmd_pfcount, GB_CMD_MAY_REPLICATE},
    {"pfmerge", cmd_pfmerge},
    {"pfdebug", cmd_pfdebug},
    {"pfselftest", cmd_pfselftest});
