/*
 * HyperLogLog strings read from outside (engine/base/hll.h, and the PF
 * commands over them in engine/types/t_hll.c): a client may SET any bytes
 * under a key and PFADD/PFCOUNT/PFMERGE/PFDEBUG them, RESTORE or a
 * replica's stream may bring them.
 *
 * Input: [limit selector] [element seed] the string. The limit selector
 * picks hll-sparse-max-bytes (0, 40, 300, 3000, 20000). The string is
 * checked two ways:
 *
 *   - the codec alone, on exactly-sized heap copies (the sanitizers see a
 *     read past them): the readers agree on validity (merge vs count),
 *     DECODE's text stays proportional to the string, and a sparse write
 *     into a valid string leaves a valid one holding the old registers
 *     with the one raised, within the limit unless it said PROMOTE;
 *   - the server's commands on it, through the gate: PFCOUNT's answer is
 *     the codec's estimate (or INVALIDOBJ exactly when the codec says
 *     invalid), the key is still a valid HLL after any PFADD or PFMERGE
 *     that succeeded, and its estimate after them is what the registers
 *     merged by hand give.
 */
#include "fuzz_util.h"

#include "engine/base/hll.h"

/* ---- a reply sink that keeps the last integer and error ---------------------------------- */

typedef struct last_reply {
    int64_t integer;
    bool error;
    bool invalidobj;
} last_reply;

static void lr_error(void *ctx, const char *s, size_t n)
{
    last_reply *r = ctx;
    r->error = true;
    r->invalidobj = n >= 10 && memcmp(s, "INVALIDOBJ", 10) == 0;
}
static void lr_integer(void *ctx, int64_t v) { ((last_reply *)ctx)->integer = v; }

static gb_engine *eng;
static gb_client *client;
static last_reply reply;

static void init(void)
{
    if (eng)
        return;
    eng = fuzz_engine_new(NULL, NULL);
    static gb_reply_ops ops;
    ops = fuzz_discard_ops;
    ops.error = lr_error;
    ops.integer = lr_integer;
    client = gb_client_new(eng, &ops, &reply, NULL, NULL, GB_CLIENT_AUTHED);
}

static void run(int argc, gb_slice *argv)
{
    reply = (last_reply){.integer = -1};
    gb_gate_execute(client, argc, argv);
}

static void run_cstr(const char *a, const char *b, const char *c)
{
    gb_slice argv[3] = {gb_slice_cstr(a), gb_slice_cstr(b), c ? gb_slice_cstr(c) : gb_slice_cstr("")};
    run(c ? 3 : 2, argv);
}

static gb_slice key_value(const char *key)
{
    gb_kv *kv = gb_db_lookup_quiet(&eng->dbs[0], gb_slice_cstr(key));
    FUZZ_CHECK(kv && kv->type == GB_TYPE_STRING, "key %s is gone", key);
    char buf[GB_INT_BUF];
    gb_slice v = gb_kv_string(kv, buf);
    FUZZ_CHECK(kv->enc != GB_ENC_INT, "an integer where a HLL was written");
    return v;
}

/* ---- the codec ---------------------------------------------------------------------------- */

static void count_text(void *ctx, const char *p, size_t n)
{
    (void)p;
    *(size_t *)ctx += n;
}

/* Whether the last opcode of a sparse string is an XZERO cut by its end:
 * the writer splits it as Redis does, which leaves a cut opcode again, and
 * the string may stop covering 16384 registers (docs/hyperloglog.md). */
static bool ends_in_cut_xzero(const uint8_t *s, size_t len)
{
    size_t i = GB_HLL_HDR_SIZE;
    while (i < len) {
        if ((s[i] & 0xc0) == 0x40) {
            if (i + 1 == len)
                return true;
            i += 2;
        } else {
            i++;
        }
    }
    return false;
}

static void check_codec(const uint8_t *data, size_t len, size_t max_bytes, uint64_t seed)
{
    uint8_t *s = fuzz_dup(data, len);
    if (!gb_hll_valid_header(s, len)) {
        free(s);
        return;
    }
    static uint8_t raw[GB_HLL_REGISTERS], after[GB_HLL_REGISTERS];
    memset(raw, 0, sizeof raw);
    bool invalid = false, merged = gb_hll_merge_raw(s, len, raw);
    uint64_t card = gb_hll_count(s, len, &invalid);
    FUZZ_CHECK(merged == !invalid, "merge says %d, count says invalid %d", merged, invalid);
    if (merged)
        FUZZ_CHECK(card == gb_hll_count_raw(raw), "estimate %llu vs raw %llu", (unsigned long long)card,
                   (unsigned long long)gb_hll_count_raw(raw));
    if (gb_hll_encoding(s) == GB_HLL_SPARSE) {
        size_t text = 0;
        gb_hll_sparse_decode(s, len, count_text, &text);
        FUZZ_CHECK(text <= (len - GB_HLL_HDR_SIZE) * 12, "DECODE wrote %zu bytes for %zu", text, len);
        uint8_t *w = malloc(len + GB_HLL_SPARSE_SLACK);
        memcpy(w, s, len);
        size_t wlen = len;
        uint32_t index = (uint32_t)(seed % GB_HLL_REGISTERS);
        uint8_t count = (uint8_t)(1 + (seed >> 16) % 40);
        gb_hll_set_result r = gb_hll_sparse_set(w, &wlen, index, count, max_bytes);
        FUZZ_CHECK(wlen <= len + 3, "the writer grew %zu to %zu", len, wlen);
        if (merged && r != GB_HLL_SET_PROMOTE && !ends_in_cut_xzero(s, len)) {
            FUZZ_CHECK(r != GB_HLL_SET_INVALID, "a valid string refused");
            FUZZ_CHECK(wlen <= len || wlen <= max_bytes, "grew past the limit");
            memset(after, 0, sizeof after);
            FUZZ_CHECK(gb_hll_merge_raw(w, wlen, after), "the writer broke a valid string");
            if (raw[index] < count)
                raw[index] = count;
            FUZZ_CHECK(memcmp(raw, after, sizeof raw) == 0, "registers differ after the write");
        }
        free(w);
    }
    free(s);
}

/* ---- the commands ------------------------------------------------------------------------- */

static void check_commands(const uint8_t *data, size_t len, uint64_t seed)
{
    gb_slice set[3] = {gb_slice_cstr("SET"), gb_slice_cstr("k"), gb_slice_make((const char *)data, len)};
    run(3, set);
    bool header = gb_hll_valid_header(data, len);
    bool invalid = false;
    uint64_t expect = header ? gb_hll_count(data, len, &invalid) : 0;
    bool cached = header && gb_hll_cache_valid(data);
    run_cstr("PFCOUNT", "k", NULL);
    if (!header)
        FUZZ_CHECK(reply.error && !reply.invalidobj, "a non-HLL string counted");
    else if (cached)
        FUZZ_CHECK(!reply.error && (uint64_t)reply.integer == gb_hll_cache_get(data), "the cache was not read");
    else if (invalid)
        FUZZ_CHECK(reply.invalidobj, "a corrupt HLL counted");
    else
        FUZZ_CHECK(!reply.error && (uint64_t)reply.integer == expect, "PFCOUNT %lld, codec %llu",
                   (long long)reply.integer, (unsigned long long)expect);

    char e1[24], e2[24];
    snprintf(e1, sizeof e1, "e%llu", (unsigned long long)seed);
    snprintf(e2, sizeof e2, "f%llu", (unsigned long long)(seed * 2654435761u));
    gb_slice add[4] = {gb_slice_cstr("PFADD"), gb_slice_cstr("k"), gb_slice_cstr(e1), gb_slice_cstr(e2)};
    run(4, add);
    bool added = !reply.error;
    run_cstr("PFADD", "o", "x");
    gb_slice merge[3] = {gb_slice_cstr("PFMERGE"), gb_slice_cstr("m"), gb_slice_cstr("k")};
    run(3, merge);
    bool merged = !reply.error;
    run_cstr("PFDEBUG", "DECODE", "k");
    run_cstr("PFDEBUG", (seed & 1) ? "TODENSE" : "GETREG", "k");
    gb_slice count2[3] = {gb_slice_cstr("PFCOUNT"), gb_slice_cstr("k"), gb_slice_cstr("o")};
    run(3, count2);
    if (added) {
        gb_slice v = key_value("k");
        FUZZ_CHECK(gb_hll_valid_header((const uint8_t *)v.ptr, v.len), "PFADD left no HLL header");
    }
    if (merged) {
        gb_slice v = key_value("m");
        FUZZ_CHECK(gb_hll_valid_header((const uint8_t *)v.ptr, v.len), "PFMERGE left no HLL header");
        bool bad = false;
        static uint8_t raw[GB_HLL_REGISTERS];
        memset(raw, 0, sizeof raw);
        FUZZ_CHECK(gb_hll_merge_raw((const uint8_t *)v.ptr, v.len, raw), "PFMERGE wrote an invalid HLL");
        uint64_t direct = gb_hll_count((const uint8_t *)v.ptr, v.len, &bad);
        run_cstr("PFCOUNT", "m", NULL);
        FUZZ_CHECK(!reply.error && (uint64_t)reply.integer == direct, "PFCOUNT of the merge");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const limits[] = {"0", "40", "300", "3000", "20000"};
    static const size_t limit_bytes[] = {0, 40, 300, 3000, 20000};
    if (size < 2)
        return 0;
    init();
    fuzz_engine_reset(eng);
    unsigned sel = data[0] % 5;
    uint64_t seed = data[1];
    char err[128];
    FUZZ_CHECK(gb_config_set(&eng->cfg, "hll-sparse-max-bytes", limits[sel], true, err, sizeof err) == 0, "%s", err);
    data += 2;
    size -= 2;
    check_codec(data, size, limit_bytes[sel], seed * 0x9e3779b97f4a7c15ull);
    check_commands(data, size, seed);
    return 0;
}
