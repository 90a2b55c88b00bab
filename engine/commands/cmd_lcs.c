/* LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]: Redis 7.0's
 * longest common subsequence of two strings, its replies (the string, its
 * length, or the matched ranges as a map), errors and memory bound.
 *
 * The table is Redis's: LCS(i, j), the length of the longest common
 * subsequence of a[0..i) and b[0..j), for every i and j, and the walk back
 * from its corner that picks the same subsequence and ranges Redis picks.
 * Its (alen+1)*(blen+1) cells are refused, as Redis refuses them, when
 * their 4-byte size exceeds proto-max-bulk-len; a table no entry of which
 * can reach 65536 (the shorter string below that) is kept in 2-byte cells,
 * half the memory traffic for the same values. */
#include "engine/commands/cmd_util.h"
#include "engine/base/mem.h"
#include "engine/types/t_string.h"

typedef struct lcs_opts {
    bool len, idx, withmatchlen;
    int64_t minmatchlen;
} lcs_opts;

/* Redis's option loop (after the type check, before anything else). */
static bool parse_lcs_options(gb_client *c, int argc, gb_slice *argv, lcs_opts *o)
{
    for (int j = 3; j < argc; j++) {
        gb_slice a = argv[j];
        if (gb_arg_is(a, "idx")) {
            o->idx = true;
        } else if (gb_arg_is(a, "len")) {
            o->len = true;
        } else if (gb_arg_is(a, "withmatchlen")) {
            o->withmatchlen = true;
        } else if (gb_arg_is(a, "minmatchlen") && j + 1 < argc) {
            if (!gb_arg_ll(c, argv[++j], &o->minmatchlen))
                return false;
            if (o->minmatchlen < 0)
                o->minmatchlen = 0;
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return false;
        }
    }
    if (o->len && o->idx) {
        gb_reply_error(c, "ERR If you want both the length and indexes, please just use IDX.");
        return false;
    }
    return true;
}

/* The table, in cells of 2 or 4 bytes, row i at i*(blen+1). */
typedef struct lcs_table {
    void *cells;
    bool narrow;
    size_t alen, blen;
} lcs_table;

static inline uint32_t cell(const lcs_table *t, size_t i, size_t j)
{
    size_t k = i * (t->blen + 1) + j;
    return t->narrow ? ((const uint16_t *)t->cells)[k] : ((const uint32_t *)t->cells)[k];
}

/* Fills the table row by row; one function per cell width so that the
 * inner loop has no width test. */
#define LCS_FILL(name, T)                                                                  \
    static void name(T *m, const unsigned char *a, size_t alen, const unsigned char *b, size_t blen) \
    {                                                                                      \
        size_t w = blen + 1;                                                               \
        memset(m, 0, w * sizeof *m);                                                       \
        for (size_t i = 1; i <= alen; i++) {                                               \
            T *row = m + i * w;                                                            \
            const T *up = row - w;                                                         \
            unsigned char ai = a[i - 1];                                                   \
            T left = 0;                                                                    \
            row[0] = 0;                                                                    \
            for (size_t j = 1; j <= blen; j++) {                                           \
                T v = ai == b[j - 1] ? (T)(up[j - 1] + 1) : (up[j] > left ? up[j] : left); \
                row[j] = v;                                                                \
                left = v;                                                                  \
            }                                                                              \
        }                                                                                  \
    }
LCS_FILL(fill_narrow, uint16_t)
LCS_FILL(fill_wide, uint32_t)
#undef LCS_FILL

/* One matched range, [astart, aend] in a and [bstart, ...] in b. */
static void reply_range(gb_client *c, const lcs_opts *o, uint32_t astart, uint32_t aend, uint32_t bstart,
                        uint32_t bend)
{
    gb_reply_array(c, 2 + o->withmatchlen);
    gb_reply_array(c, 2);
    gb_reply_int(c, astart);
    gb_reply_int(c, aend);
    gb_reply_array(c, 2);
    gb_reply_int(c, bstart);
    gb_reply_int(c, bend);
    if (o->withmatchlen)
        gb_reply_int(c, (int64_t)(aend - astart + 1));
}

/* Redis's walk back from the corner: fills out (the subsequence, when
 * given) and, with IDX, replies each range long enough as it closes;
 * returns how many it replied. */
static uint32_t walk_back(gb_client *c, const lcs_opts *o, const lcs_table *t, const unsigned char *a,
                          const unsigned char *b, char *out)
{
    uint32_t alen = (uint32_t)t->alen, idx = cell(t, t->alen, t->blen), ranges = 0;
    uint32_t astart = alen, aend = 0, bstart = 0, bend = 0; /* astart == alen: no open range */
    uint32_t i = alen, j = (uint32_t)t->blen;
    while (i > 0 && j > 0) {
        bool emit = false;
        if (a[i - 1] == b[j - 1]) {
            out[idx - 1] = (char)a[i - 1];
            if (astart == alen) {
                astart = aend = i - 1;
                bstart = bend = j - 1;
            } else if (astart == i && bstart == j) {
                astart--; /* the range grows backwards */
                bstart--;
            } else {
                emit = true;
            }
            if (astart == 0 || bstart == 0)
                emit = true; /* the walk is about to end */
            idx--;
            i--;
            j--;
        } else {
            if (cell(t, i - 1, j) > cell(t, i, j - 1))
                i--;
            else
                j--;
            emit = astart != alen;
        }
        if (emit) {
            uint32_t match_len = aend - astart + 1;
            if (o->idx && (o->minmatchlen == 0 || match_len >= o->minmatchlen)) {
                reply_range(c, o, astart, aend, bstart, bend);
                ranges++;
            }
            astart = alen;
        }
    }
    return ranges;
}

static void lcs_reply(gb_client *c, const lcs_opts *o, gb_slice sa, gb_slice sb)
{
    size_t alen = sa.len, blen = sb.len;
    if (alen >= UINT32_MAX - 1 || blen >= UINT32_MAX - 1) {
        gb_reply_error(c, "ERR String too long for LCS");
        return;
    }
    /* Redis's bound, on its 4-byte cells whatever width is used here. */
    uint64_t cells = (uint64_t)(alen + 1) * (blen + 1);
    if (cells > (uint64_t)c->eng->cfg.proto_max_bulk_len / 4) { /* cells * 4 can wrap */
        gb_reply_error(c, "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
        return;
    }
    lcs_table t = {.narrow = GB_MIN(alen, blen) < 65536, .alen = alen, .blen = blen};
    t.cells = gb_try_malloc((size_t)cells * (t.narrow ? 2 : 4));
    char *out = t.cells ? gb_try_malloc(GB_MIN(alen, blen) + 1) : NULL;
    if (!out) {
        gb_free(t.cells);
        gb_reply_error(c, "ERR Insufficient memory, failed allocating transient memory for LCS");
        return;
    }
    const unsigned char *a = (const unsigned char *)sa.ptr, *b = (const unsigned char *)sb.ptr;
    if (t.narrow)
        fill_narrow(t.cells, a, alen, b, blen);
    else
        fill_wide(t.cells, a, alen, b, blen);
    uint32_t total = cell(&t, alen, blen);
    if (o->idx) {
        gb_reply_map(c, 2);
        gb_reply_cstr(c, "matches");
        size_t handle = gb_reply_array_deferred(c);
        uint32_t ranges = walk_back(c, o, &t, a, b, out);
        /* closed before its sibling: a script's reply converter builds
         * nested tables and needs the deferred one done first */
        gb_reply_set_deferred(c, handle, ranges);
        gb_reply_cstr(c, "len");
        gb_reply_int(c, total);
    } else if (o->len) {
        gb_reply_int(c, total);
    } else {
        walk_back(c, o, &t, a, b, out);
        gb_reply_bulk(c, out, total);
    }
    gb_free(out);
    gb_free(t.cells);
}

/* A key's string for LCS: its text ("" when missing); false when it holds
 * another type. */
static bool lcs_string(gb_client *c, gb_slice key, gb_slice *out, char *buf)
{
    gb_result r = gb_string_get(c->db, key, out, buf);
    if (r == GB_R_NOTFOUND)
        *out = gb_slice_make("", 0);
    return r == GB_R_OK || r == GB_R_NOTFOUND;
}

static void cmd_lcs(gb_client *c, int argc, gb_slice *argv)
{
    char abuf[GB_INT_BUF], bbuf[GB_INT_BUF];
    gb_slice a, b;
    /* Both keys are looked up (and counted) before the type check. */
    bool a_ok = lcs_string(c, argv[1], &a, abuf);
    bool b_ok = lcs_string(c, argv[2], &b, bbuf);
    if (!a_ok || !b_ok) {
        gb_reply_error(c, "ERR The specified keys must contain string values");
        return;
    }
    lcs_opts o = {0};
    if (parse_lcs_options(c, argc, argv, &o))
        lcs_reply(c, &o, a, b);
}

GB_DEFINE_COMMANDS(lcs,
    {"lcs", cmd_lcs});
