/*
 * gb_list: argument normalisation, representation switching and the
 * algorithms every representation shares (LPOS, LINSERT's pivot search,
 * LMOVE between lists). The representations live in list_compact.c,
 * list_segmented.c and list_pma.c behind engine/ds/list_impl.h.
 *
 * struct gb_list, 16 bytes:
 *   enc         1 B  gb_list_encoding in use
 *   large_impl  1 B  gb_list_impl to convert to when compact overflows
 *   compress    2 B  list-compress-depth copied at creation (Redis's 16-bit
 *                    quicklist field: larger settings act as 65535)
 *   fill        4 B  list-max-listpack-size copied at creation
 *   u           8 B  listpack pointer / gb_list_seg * / gb_list_pma *
 */
#include "engine/ds/list.h"

#include "engine/ds/list_impl.h"
#include "engine/base/mem.h"
#include "engine/base/util.h"

struct gb_list {
    uint8_t enc;
    uint8_t large_impl;
    uint16_t compress;
    int32_t fill;
    union {
        unsigned char *lp;
        gb_list_seg *seg;
        gb_list_pma *pma;
    } u;
};
_Static_assert(sizeof(struct gb_list) == 16, "gb_list is 16 bytes");

static inline gb_list_limit limit_of(const gb_list *l) { return gb_list_limit_from_fill(l->fill); }

gb_list *gb_list_new(const gb_list_config *cfg)
{
    static const gb_list_config def = GB_LIST_CONFIG_DEFAULT;
    if (!cfg)
        cfg = &def;
    gb_list *l = gb_malloc(sizeof(*l));
    l->enc = GB_LIST_ENC_COMPACT;
    l->large_impl = (uint8_t)cfg->large_impl;
    l->fill = cfg->max_listpack_size;
    l->compress = cfg->compress_depth < 0 ? 0
                  : cfg->compress_depth > UINT16_MAX ? UINT16_MAX
                                                     : (uint16_t)cfg->compress_depth;
    l->u.lp = gb_lp_new(0);
    return l;
}

static bool visit_push(void *ctx, size_t index, gb_slice v)
{
    (void)index;
    gb_list_push(ctx, GB_LIST_TAIL, &v, 1);
    return true;
}

gb_list *gb_list_from_listpack(const gb_list_config *cfg, unsigned char *lp, size_t size, const char **why)
{
    *why = !gb_lp_validate(lp, size) ? "a damaged listpack" : gb_lp_count(lp) == 0 ? "an empty list" : NULL;
    if (*why) {
        gb_lp_free(lp);
        return NULL;
    }
    gb_list *l = gb_list_new(cfg);
    gb_list_limit lim = limit_of(l);
    if (!gb_list_limit_exceeded(&lim, size, gb_lp_count(lp))) {
        gb_lp_free(l->u.lp);
        l->u.lp = lp;
        return l;
    }
    /* Bigger than this server keeps compact: the values go in one by one
     * and the list picks its representation as it grows. */
    gb_list tmp = {.enc = GB_LIST_ENC_COMPACT, .u.lp = lp};
    gb_list_range(&tmp, 0, -1, false, visit_push, l);
    gb_lp_free(lp);
    return l;
}

const unsigned char *gb_list_listpack(const gb_list *l) { return l->enc == GB_LIST_ENC_COMPACT ? l->u.lp : NULL; }

gb_list_config gb_list_config_of(const gb_list *l)
{
    gb_list_config cfg = {l->fill, (gb_list_impl)l->large_impl, l->compress};
    return cfg;
}

static void rep_free(gb_list *l)
{
    switch (l->enc) {
    case GB_LIST_ENC_COMPACT:
        gb_lp_free(l->u.lp);
        break;
    case GB_LIST_ENC_SEGMENTED:
        gb_list_seg_free(l->u.seg);
        break;
    default:
        gb_list_pma_free(l->u.pma);
    }
}

void gb_list_free(gb_list *l)
{
    if (!l)
        return;
    rep_free(l);
    gb_free(l);
}

size_t gb_list_len(const gb_list *l)
{
    switch (l->enc) {
    case GB_LIST_ENC_COMPACT:
        return gb_lp_count(l->u.lp);
    case GB_LIST_ENC_SEGMENTED:
        return gb_list_seg_len(l->u.seg);
    default:
        return gb_list_pma_len(l->u.pma);
    }
}

gb_list_encoding gb_list_encoding_of(const gb_list *l) { return (gb_list_encoding)l->enc; }

const char *gb_list_encoding_name(const gb_list *l)
{
    (void)l;
    return "quicklist";
}

const char *gb_list_representation_name(const gb_list *l)
{
    static const char *const names[] = {"listpack", "segmented", "pma"};
    return names[l->enc];
}

size_t gb_list_mem_usage(const gb_list *l)
{
    size_t m = gb_mem_accounted((void *)l);
    switch (l->enc) {
    case GB_LIST_ENC_COMPACT:
        return m + gb_mem_accounted(l->u.lp);
    case GB_LIST_ENC_SEGMENTED:
        return m + gb_list_seg_mem(l->u.seg);
    default:
        return m + gb_list_pma_mem(l->u.pma);
    }
}

size_t gb_list_compressed_segments(const gb_list *l)
{
    return l->enc == GB_LIST_ENC_SEGMENTED ? gb_list_seg_compressed(l->u.seg) : 0;
}

size_t gb_list_free_effort(const gb_list *l)
{
    switch (l->enc) {
    case GB_LIST_ENC_COMPACT:
        return 1;
    case GB_LIST_ENC_SEGMENTED:
        return gb_list_seg_leaves(l->u.seg);
    default:
        return gb_list_pma_len(l->u.pma);
    }
}

bool gb_list_verify(const gb_list *l)
{
    gb_list_limit lim = limit_of(l);
    switch (l->enc) {
    case GB_LIST_ENC_COMPACT:
        return gb_list_compact_verify(l->u.lp, &lim);
    case GB_LIST_ENC_SEGMENTED:
        return gb_list_seg_verify(l->u.seg);
    case GB_LIST_ENC_PMA:
        return gb_list_pma_verify(l->u.pma);
    default:
        fprintf(stderr, "list verify: unknown encoding %u\n", l->enc);
        return false;
    }
}

/* ---- representation switching ---- */

/* A list with list-compress-depth set goes segmented even on a pma server:
 * only segmented leaves are stored compressed (a PMA's fixed 16-byte slots
 * in one array leave nothing to shrink per segment; docs/lists.md). */
static void to_large(gb_list *l)
{
    unsigned char *lp = l->u.lp;
    if (l->large_impl == GB_LIST_PMA && l->compress == 0) {
        l->u.pma = gb_list_pma_from_listpack(lp);
        l->enc = GB_LIST_ENC_PMA;
    } else {
        l->u.seg = gb_list_seg_from_listpack(lp, limit_of(l), l->compress);
        l->enc = GB_LIST_ENC_SEGMENTED;
    }
    gb_lp_free(lp);
}

static bool append_to_lp(void *ctx, size_t index, gb_slice v)
{
    (void)index;
    unsigned char **lpp = ctx;
    *lpp = gb_lp_append(*lpp, v);
    return true;
}

/* Converts a large list back to compact once it is at most half the limit
 * (in entries and in listpack bytes), so a list hovering at the boundary
 * does not switch on every push and pop. Called after shrinking edits. */
static void maybe_compact(gb_list *l)
{
    if (l->enc == GB_LIST_ENC_COMPACT)
        return;
    gb_list_limit lim = limit_of(l);
    size_t n = gb_list_len(l);
    size_t bytes = GB_LP_HEADER_SIZE + 1 +
                   (l->enc == GB_LIST_ENC_SEGMENTED ? gb_list_seg_lp_bytes(l->u.seg)
                                                    : gb_list_pma_lp_bytes(l->u.pma));
    if (n != 0 && (n > lim.max_count / 2 || bytes > lim.max_bytes / 2))
        return;
    unsigned char *lp;
    if (l->enc == GB_LIST_ENC_SEGMENTED) {
        lp = gb_list_seg_to_listpack(l->u.seg);
    } else {
        lp = gb_lp_new(bytes);
        if (n)
            gb_list_pma_visit(l->u.pma, 0, n - 1, false, append_to_lp, &lp);
    }
    rep_free(l);
    l->u.lp = lp;
    l->enc = GB_LIST_ENC_COMPACT;
}

/* Whether a compact list stays compact after adding `add_bytes` of entries
 * in `add_count` entries (removing `del_bytes` first). */
static bool compact_room(const gb_list *l, size_t add_bytes, size_t add_count, size_t del_bytes)
{
    gb_list_limit lim = limit_of(l);
    size_t n = gb_lp_count(l->u.lp) + add_count;
    size_t bytes = gb_lp_bytes(l->u.lp) + add_bytes - del_bytes;
    return !gb_list_limit_exceeded(&lim, bytes, n);
}

/* ---- index normalisation ---- */

/* Maps a Redis index (negative from the tail) to 0..len-1; false if out. */
static bool norm_index(long long index, size_t len, size_t *out)
{
    if (index < 0)
        index += (long long)len;
    if (index < 0 || (unsigned long long)index >= len)
        return false;
    *out = (size_t)index;
    return true;
}

/* ---- ends ---- */

size_t gb_list_push(gb_list *l, gb_list_end end, const gb_slice *vals, size_t n)
{
    if (l->enc == GB_LIST_ENC_COMPACT) {
        size_t add = 0;
        for (size_t i = 0; i < n; i++)
            add += gb_lp_encode(NULL, vals[i]);
        if (compact_room(l, add, n, 0)) {
            for (size_t i = 0; i < n; i++)
                gb_list_compact_push(&l->u.lp, end, vals[i]);
            return gb_lp_count(l->u.lp);
        }
        to_large(l);
    }
    if (l->enc == GB_LIST_ENC_SEGMENTED) {
        for (size_t i = 0; i < n; i++)
            gb_list_seg_push(l->u.seg, end, vals[i]);
        return gb_list_seg_len(l->u.seg);
    }
    for (size_t i = 0; i < n; i++)
        gb_list_pma_push(l->u.pma, end, vals[i]);
    return gb_list_pma_len(l->u.pma);
}

size_t gb_list_pop(gb_list *l, gb_list_end end, size_t count, gb_list_emit_fn emit, void *ctx)
{
    size_t done;
    switch (l->enc) {
    case GB_LIST_ENC_COMPACT:
        return gb_list_compact_pop(&l->u.lp, end, count, emit, ctx);
    case GB_LIST_ENC_SEGMENTED:
        done = gb_list_seg_pop(l->u.seg, end, count, emit, ctx);
        break;
    default:
        done = gb_list_pma_pop(l->u.pma, end, count, emit, ctx);
    }
    maybe_compact(l);
    return done;
}

static void rotate(gb_list *l, gb_list_end from)
{
    switch (l->enc) {
    case GB_LIST_ENC_COMPACT:
        gb_list_compact_rotate(&l->u.lp, from);
        break;
    case GB_LIST_ENC_SEGMENTED:
        gb_list_seg_rotate(l->u.seg, from);
        break;
    default:
        gb_list_pma_rotate(l->u.pma, from);
    }
}

static void emit_end(gb_list *l, gb_list_end end, gb_list_emit_fn emit, void *ctx)
{
    char buf[GB_LIST_INT_BUF];
    gb_slice v;
    if (emit && gb_list_index(l, end == GB_LIST_HEAD ? 0 : -1, buf, &v))
        emit(ctx, v);
}

bool gb_list_move(gb_list *src, gb_list_end from, gb_list *dst, gb_list_end to,
                  gb_list_emit_fn emit, void *ctx)
{
    if (gb_list_len(src) == 0)
        return false;
    if (src == dst) {
        if (from != to)
            rotate(src, from);
        emit_end(src, to, emit, ctx);
        return true;
    }
    /* The value is read in place from src, copied once into dst, then
     * dropped from src: no temporary. */
    char buf[GB_LIST_INT_BUF];
    gb_slice v;
    gb_list_index(src, from == GB_LIST_HEAD ? 0 : -1, buf, &v);
    gb_list_push(dst, to, &v, 1);
    gb_list_pop(src, from, 1, NULL, NULL);
    emit_end(dst, to, emit, ctx);
    return true;
}

/* ---- by index ---- */

bool gb_list_index(gb_list *l, long long index, char buf[GB_LIST_INT_BUF], gb_slice *out)
{
    size_t i;
    if (!norm_index(index, gb_list_len(l), &i))
        return false;
    switch (l->enc) {
    case GB_LIST_ENC_COMPACT:
        gb_list_compact_get(l->u.lp, i, buf, out);
        break;
    case GB_LIST_ENC_SEGMENTED:
        gb_list_seg_get(l->u.seg, i, buf, out);
        break;
    default:
        gb_list_pma_get(l->u.pma, i, out);
    }
    return true;
}

bool gb_list_set(gb_list *l, long long index, gb_slice v)
{
    size_t i;
    if (!norm_index(index, gb_list_len(l), &i))
        return false;
    if (l->enc == GB_LIST_ENC_COMPACT) {
        unsigned char *p = gb_lp_seek(l->u.lp, (long)i);
        if (compact_room(l, gb_lp_encode(NULL, v), 0, gb_lp_entry_bytes(p))) {
            gb_list_compact_set(&l->u.lp, i, v);
            return true;
        }
        to_large(l);
    }
    if (l->enc == GB_LIST_ENC_SEGMENTED)
        gb_list_seg_set(l->u.seg, i, v);
    else
        gb_list_pma_set(l->u.pma, i, v);
    /* a smaller value may bring a large list under the limit */
    maybe_compact(l);
    return true;
}

static size_t visit(gb_list *l, size_t first, size_t last, bool rev, gb_list_visit_fn fn,
                    void *ctx)
{
    switch (l->enc) {
    case GB_LIST_ENC_COMPACT:
        return gb_list_compact_visit(l->u.lp, first, last, rev, fn, ctx);
    case GB_LIST_ENC_SEGMENTED:
        return gb_list_seg_visit(l->u.seg, first, last, rev, fn, ctx);
    default:
        return gb_list_pma_visit(l->u.pma, first, last, rev, fn, ctx);
    }
}

size_t gb_list_range(gb_list *l, long long start, long long stop, bool reverse,
                     gb_list_visit_fn fn, void *ctx)
{
    size_t first, last;
    if (!gb_index_range(start, stop, gb_list_len(l), &first, &last))
        return 0;
    return visit(l, first, last, reverse, fn, ctx);
}

size_t gb_list_range_len(const gb_list *l, long long start, long long stop)
{
    size_t first, last;
    if (!gb_index_range(start, stop, gb_list_len(l), &first, &last))
        return 0;
    return last - first + 1;
}

/* ---- edits ---- */

void gb_list_trim(gb_list *l, long long start, long long stop)
{
    size_t len = gb_list_len(l), first, last, head, tail;
    if (gb_index_range(start, stop, len, &first, &last)) {
        head = first;
        tail = len - 1 - last;
    } else {
        head = len;
        tail = 0;
    }
    if (head == 0 && tail == 0)
        return;
    switch (l->enc) {
    case GB_LIST_ENC_COMPACT:
        gb_list_compact_trim(&l->u.lp, head, tail);
        return;
    case GB_LIST_ENC_SEGMENTED:
        gb_list_seg_trim(l->u.seg, head, tail);
        break;
    default:
        gb_list_pma_trim(l->u.pma, head, tail);
    }
    maybe_compact(l);
}

size_t gb_list_remove(gb_list *l, gb_slice v, long long count)
{
    size_t done;
    switch (l->enc) {
    case GB_LIST_ENC_COMPACT:
        return gb_list_compact_remove(&l->u.lp, v, count);
    case GB_LIST_ENC_SEGMENTED:
        done = gb_list_seg_remove(l->u.seg, v, count);
        break;
    default:
        done = gb_list_pma_remove(l->u.pma, v, count);
    }
    if (done)
        maybe_compact(l);
    return done;
}

/* Scan state shared by LINSERT's pivot search and LPOS. */
typedef struct find_ctx {
    gb_slice v;
    size_t skip;     /* matches still to skip (LPOS RANK) */
    size_t want;     /* matches still to report; SIZE_MAX = all */
    size_t budget;   /* comparisons left (LPOS MAXLEN); SIZE_MAX = all */
    size_t found;    /* matches reported */
    size_t last_idx; /* index of the last reported match */
    gb_list_pos_fn report;
    void *ctx;
} find_ctx;

static bool find_visit(void *vctx, size_t index, gb_slice v)
{
    find_ctx *f = vctx;
    if (gb_slice_eq(v, f->v)) {
        if (f->skip) {
            f->skip--;
        } else {
            f->found++;
            f->last_idx = index;
            if (f->report)
                f->report(f->ctx, index);
            if (--f->want == 0)
                return false;
        }
    }
    return --f->budget != 0;
}

long long gb_list_insert(gb_list *l, bool after, gb_slice pivot, gb_slice v)
{
    size_t len = gb_list_len(l);
    if (len == 0)
        return -1;
    find_ctx f = {pivot, 0, 1, SIZE_MAX, 0, 0, NULL, NULL};
    visit(l, 0, len - 1, false, find_visit, &f);
    if (!f.found)
        return -1;
    size_t at = f.last_idx + (after ? 1 : 0);
    if (l->enc == GB_LIST_ENC_COMPACT) {
        if (compact_room(l, gb_lp_encode(NULL, v), 1, 0)) {
            gb_list_compact_insert_at(&l->u.lp, at, v);
            return (long long)gb_lp_count(l->u.lp);
        }
        to_large(l);
    }
    if (l->enc == GB_LIST_ENC_SEGMENTED)
        gb_list_seg_insert_at(l->u.seg, at, v);
    else
        gb_list_pma_insert_at(l->u.pma, at, v);
    return (long long)gb_list_len(l);
}

size_t gb_list_pos(gb_list *l, gb_slice v, long long rank, size_t count, size_t maxlen,
                   gb_list_pos_fn found, void *ctx)
{
    size_t len = gb_list_len(l);
    if (len == 0 || rank == 0)
        return 0;
    unsigned long long skip = rank > 0 ? (unsigned long long)rank - 1
                                       : (unsigned long long)(-(rank + 1));
    find_ctx f = {v, skip > SIZE_MAX ? SIZE_MAX : (size_t)skip, count ? count : SIZE_MAX,
                  maxlen ? maxlen : SIZE_MAX, 0, 0, found, ctx};
    visit(l, 0, len - 1, rank < 0, find_visit, &f);
    return f.found;
}
