/*
 * Adaptive packed-memory array (PMA) list.
 *
 * References:
 *   M. A. Bender, H. Hu, "An adaptive packed-memory array", ACM TODS 32(4),
 *     2007: density thresholds per level of an implicit tree over segments;
 *     an insert into a full segment rebalances the smallest enclosing window
 *     within its threshold; the adaptive variant predicts where the next
 *     inserts land and leaves the gaps there (O(log N) amortized moves on
 *     sequential/hammer patterns instead of O(log^2 N)).
 *   D. De Leo, P. Boncz, "Packed Memory Arrays - Rewired", ICDE 2019:
 *     elements kept contiguous inside each segment with a per-segment
 *     cardinality, so scans run over dense runs and a position is found from
 *     counts alone.
 *
 * Layout:
 *
 *   slots   capacity = nseg * seg_slots slots of 16 bytes. Segment s owns
 *           slots [s*B, (s+1)*B) (B = seg_slots); its values are the run
 *           [s*B + off[s], s*B + off[s] + cnt(s)). Order of the list = order
 *           of segments, then order inside each run. Slots outside runs are
 *           garbage (gaps).
 *   off     u16 per segment: start of the run inside the segment.
 *   tree    u64[2*nseg]: the implicit tree as a segment-count tree;
 *           tree[nseg + s] = cnt(s), tree[i] = tree[2i] + tree[2i+1], root
 *           tree[1] = length. nseg is a power of two; B need not be (it lets
 *           capacity grow by ~1.5x instead of 2x). Node i at level l is a
 *           PMA window of 2^l segments, so a window's density is one load,
 *           and index -> (segment, rank) is a descent: O(log nseg).
 *
 *   slot (16 bytes):
 *     inline    b[0] = length 0..15        b[1..15] = value bytes
 *     external  b[0] = 0xFF  b[1..7] = length (56-bit little-endian)
 *               b[8..15] = pointer to a gb_malloc'd copy of the value
 *
 * Thresholds: upper density 1.0 at segments down to 0.85 at the root
 * (linear in the level). An insert into a full segment rebalances the lowest
 * window whose density would stay within its threshold; if none, the array
 * grows to density ~0.55. Deletions never rebalance locally (lower
 * thresholds are 0): a pop only clears slots; after each shrinking operation
 * one decision is made: below density 0.25 the array is rebuilt at ~0.55.
 *
 * Adaptivity: a predictor records insertion positions (decayed counts of
 * head pushes, tail pushes, and up to 8 middle hot spots). A rebalance or
 * resize splits every window's free space between its halves in proportion
 * to the predicted inserts (within the thresholds), and aligns each
 * segment's run away from the predicted side. Sequential pushes at one end
 * thus find empty segments waiting and cost O(1) amortized; pushes at both
 * ends get room at both; a hammered middle position gets gaps around it.
 *
 * Ends: head_seg/tail_seg name the first/last non-empty segment. A push
 * writes next to the run, or starts the neighbouring empty segment. A pop of
 * k values emits them and moves off/cnt: whole segments are cleared without
 * touching their slots, a partial one just moves its run boundary.
 */
#include "engine/ds/list_impl.h"
#include "engine/base/mem.h"

typedef struct pslot {
    unsigned char b[16];
} pslot;
_Static_assert(sizeof(pslot) == 16, "PMA slot is 16 bytes");

#define INLINE_MAX 15
#define EXT_TAG 0xFF

#define UPPER_LEAF 1.0
#define UPPER_ROOT 0.85
#define RESIZE_DENSITY 0.55
#define SHRINK_DENSITY 0.25
#define MIN_CAPACITY 32
#define MIN_SEG 16
#define MAX_SEG 128

#define SPOTS 8
/* A spot predicts once it has seen SPOT_MIN inserts and at least 1/SPOT_SHARE
 * of all recent ones, and SPOT_EXCESS times what uniformly random inserts
 * would put within its +-B radius (2B/len of them): weaker spots are noise,
 * and in a short list every insert is "near" some spot. */
#define SPOT_MIN 8
#define SPOT_SHARE 32
#define SPOT_EXCESS 8
#define DECAY_PERIOD 4096

typedef struct spot {
    size_t rank; /* list index the hot spot inserts before */
    uint32_t w;  /* decayed insert count; 0 = unused */
} spot;

typedef struct predictor {
    uint32_t head, tail; /* decayed insert counts at the ends */
    uint32_t total;      /* decayed count of all inserts */
    uint32_t since_decay;
    uint32_t active; /* spots with w > 0 */
    spot spots[SPOTS];
} predictor;

struct gb_list_pma {
    pslot *slots;
    uint16_t *off;
    uint64_t *tree;
    size_t nseg;   /* power of two */
    size_t B;      /* slots per segment */
    unsigned height; /* log2(nseg) */
    size_t n;
    size_t head_seg, tail_seg;
    size_t lp_bytes; /* upper bound of the values' listpack size */
    size_t ext_mem;  /* usable bytes of external value blocks */
    predictor pred;
    bool classic; /* adaptivity off: even splits (tests, benchmarks) */
    gb_list_pma_stats st;
};

/* ---- slots ---- */

static inline size_t slot_len(const pslot *s)
{
    if (s->b[0] != EXT_TAG)
        return s->b[0];
    size_t len = 0;
    for (int i = 7; i >= 1; i--)
        len = (len << 8) | s->b[i];
    return len;
}

static inline char *slot_ext_ptr(const pslot *s)
{
    char *p;
    memcpy(&p, s->b + 8, sizeof p);
    return p;
}

static inline gb_slice slot_get(const pslot *s)
{
    if (s->b[0] != EXT_TAG)
        return gb_slice_make((const char *)s->b + 1, s->b[0]);
    return gb_slice_make(slot_ext_ptr(s), slot_len(s));
}

/* Upper bound of a value's listpack entry size from its length alone (an
 * integer-looking string encodes smaller), so pushes and pops never parse. */
static inline size_t est_lp(size_t len)
{
    size_t e = len <= 63 ? 1 + len : len <= 4095 ? 2 + len : 5 + len;
    return e + (e <= 127 ? 1 : e < 16384 ? 2 : e < 2097152 ? 3 : e < 268435456 ? 4 : 5);
}

static void slot_make(gb_list_pma *p, pslot *d, gb_slice v)
{
    if (v.len <= INLINE_MAX) {
        d->b[0] = (unsigned char)v.len;
        if (v.len)
            memcpy(d->b + 1, v.ptr, v.len);
    } else {
        char *q = gb_malloc(v.len);
        memcpy(q, v.ptr, v.len);
        p->ext_mem += gb_mem_accounted(q);
        d->b[0] = EXT_TAG;
        uint64_t len = v.len;
        for (int i = 1; i <= 7; i++, len >>= 8)
            d->b[i] = (unsigned char)len;
        memcpy(d->b + 8, &q, sizeof q);
    }
    p->lp_bytes += est_lp(v.len);
}

static void slot_release(gb_list_pma *p, pslot *d)
{
    p->lp_bytes -= est_lp(slot_len(d));
    if (d->b[0] == EXT_TAG) {
        char *q = slot_ext_ptr(d);
        p->ext_mem -= gb_mem_accounted(q);
        gb_free(q);
    }
}

static inline bool slot_eq(const pslot *s, gb_slice v)
{
    if (s->b[0] != EXT_TAG)
        return s->b[0] == v.len && (v.len == 0 || memcmp(s->b + 1, v.ptr, v.len) == 0);
    return slot_len(s) == v.len && memcmp(slot_ext_ptr(s), v.ptr, v.len) == 0;
}

/* ---- geometry & the count tree ---- */

static inline uint64_t cnt(const gb_list_pma *p, size_t s) { return p->tree[p->nseg + s]; }
static inline pslot *seg_base(const gb_list_pma *p, size_t s) { return p->slots + s * p->B; }
static inline pslot *run(const gb_list_pma *p, size_t s) { return seg_base(p, s) + p->off[s]; }
static inline size_t capacity(const gb_list_pma *p) { return p->nseg * p->B; }

static inline void tree_add(gb_list_pma *p, size_t s, int64_t d)
{
    for (size_t i = p->nseg + s; i; i >>= 1)
        p->tree[i] += (uint64_t)d;
}

/* Segment holding list index idx (< n) and the rank inside its run. */
static size_t locate(const gb_list_pma *p, size_t idx, size_t *rank)
{
    size_t i = 1;
    uint64_t k = idx;
    while (i < p->nseg) {
        uint64_t left = p->tree[2 * i];
        if (k < left) {
            i = 2 * i;
        } else {
            k -= left;
            i = 2 * i + 1;
        }
    }
    *rank = (size_t)k;
    return i - p->nseg;
}

/* Values stored before segment s. */
static size_t prefix(const gb_list_pma *p, size_t s)
{
    size_t sum = 0;
    for (size_t i = p->nseg + s; i > 1; i >>= 1)
        if (i & 1)
            sum += p->tree[i - 1];
    return sum;
}

static void refresh_ends(gb_list_pma *p)
{
    size_t r;
    if (p->n == 0) {
        p->head_seg = p->tail_seg = p->nseg / 2;
        return;
    }
    p->head_seg = locate(p, 0, &r);
    p->tail_seg = locate(p, p->n - 1, &r);
}

/* Most values a window of 2^level segments may hold. */
static size_t upper_count(const gb_list_pma *p, unsigned level)
{
    double t = p->height == 0 ? UPPER_ROOT
                              : UPPER_LEAF - (UPPER_LEAF - UPPER_ROOT) * level / p->height;
    return (size_t)(t * (double)(p->B << level));
}

/* Segment size and count for about `slots` slots: segments of ~2 log2(C)
 * slots (Theta(log N), Bender & Hu), a power-of-two number of them. */
static void geometry(size_t slots, size_t *nseg, size_t *B)
{
    if (slots < MIN_CAPACITY)
        slots = MIN_CAPACITY;
    unsigned lg = 0;
    while (((size_t)1 << lg) < slots)
        lg++;
    size_t b = 1;
    while (b < lg)
        b <<= 1;
    b *= 2;
    if (b < MIN_SEG)
        b = MIN_SEG;
    if (b > MAX_SEG)
        b = MAX_SEG;
    size_t ns = 1;
    while (ns * 2 * b <= slots)
        ns *= 2;
    *nseg = ns;
    *B = (slots + ns - 1) / ns;
}

static void alloc_arrays(gb_list_pma *p, size_t nseg, size_t B)
{
    p->nseg = nseg;
    p->B = B;
    p->height = 0;
    while (((size_t)1 << p->height) < nseg)
        p->height++;
    p->slots = gb_malloc(nseg * B * sizeof(pslot));
    p->off = gb_calloc(nseg, sizeof(uint16_t));
    p->tree = gb_calloc(2 * nseg, sizeof(uint64_t));
}

static void free_arrays(gb_list_pma *p)
{
    gb_free(p->slots);
    gb_free(p->off);
    gb_free(p->tree);
}

/* Recomputes the tree above segments [a, a + 2^level) and its ancestors. */
static void tree_rebuild_window(gb_list_pma *p, size_t a, unsigned level)
{
    size_t lo = p->nseg + a, hi = lo + ((size_t)1 << level);
    for (unsigned l = 0; l < level; l++) {
        lo >>= 1;
        hi >>= 1;
        for (size_t i = lo; i < hi; i++)
            p->tree[i] = p->tree[2 * i] + p->tree[2 * i + 1];
    }
    for (size_t i = lo >> 1; i; i >>= 1)
        p->tree[i] = p->tree[2 * i] + p->tree[2 * i + 1];
}

/* ---- predictor ---- */

static void pred_decay(predictor *pr)
{
    pr->head >>= 1;
    pr->tail >>= 1;
    pr->total >>= 1;
    pr->active = 0;
    for (int i = 0; i < SPOTS; i++) {
        pr->spots[i].w >>= 1;
        pr->active += pr->spots[i].w != 0;
    }
    pr->since_decay = 0;
}

/* Records an insertion before index k of a list of n values. */
static void pred_insert(gb_list_pma *p, size_t k)
{
    predictor *pr = &p->pred;
    if (++pr->since_decay >= DECAY_PERIOD)
        pred_decay(pr);
    pr->total++;
    if (pr->active) {
        for (int i = 0; i < SPOTS; i++)
            if (pr->spots[i].w && pr->spots[i].rank >= k)
                pr->spots[i].rank++;
    }
    if (k == p->n) {
        pr->tail++;
        return;
    }
    if (k == 0) {
        pr->head++;
        return;
    }
    int weakest = 0;
    for (int i = 0; i < SPOTS; i++) {
        spot *sp = &pr->spots[i];
        if (sp->w && (sp->rank > k ? sp->rank - k : k - sp->rank) <= p->B) {
            sp->w++;
            sp->rank = k;
            return;
        }
        if (sp->w < pr->spots[weakest].w)
            weakest = i;
    }
    if (pr->spots[weakest].w == 0)
        pr->active++;
    pr->spots[weakest].rank = k;
    pr->spots[weakest].w = 1;
}

/* Head pops shift the hot spots; they are forgotten when popped past. */
static void pred_popped_head(gb_list_pma *p, size_t k)
{
    predictor *pr = &p->pred;
    if (!pr->active)
        return;
    for (int i = 0; i < SPOTS; i++) {
        spot *sp = &pr->spots[i];
        if (!sp->w)
            continue;
        if (sp->rank < k) {
            sp->w = 0;
            pr->active--;
        } else {
            sp->rank -= k;
        }
    }
}

static void pred_forget_spots(gb_list_pma *p)
{
    memset(p->pred.spots, 0, sizeof p->pred.spots);
    p->pred.active = 0;
}

/* ---- planning a redistribution ----
 *
 * Every window splits its free slots between its halves in proportion to
 * the inserts predicted for each: the head count if the half holds the list's
 * first value, the tail count if it holds the last, the significant hot
 * spots whose rank falls in it, and the unexplained rest of the recent
 * inserts spread uniformly over the array ("background"). Uniform inserts
 * thus give the classic even split, and one-sided patterns give all the
 * room to the side where the next inserts will land.
 */

typedef struct plan_ctx {
    const predictor *pr;
    size_t total;     /* list length after the operation */
    uint32_t *t;      /* per segment of the window: values */
    uint16_t *o;      /* per segment: run offset */
    size_t B;
    double bg_per_slot; /* background weight per slot of the array */
    const gb_list_pma *p;
} plan_ctx;

static inline bool spot_significant(const plan_ctx *c, const spot *sp)
{
    double w = sp->w, total = c->pr->total;
    return sp->w >= SPOT_MIN && w * SPOT_SHARE >= total &&
           w * (double)c->total >= SPOT_EXCESS * 2.0 * (double)c->B * total;
}

static double spot_weight(const plan_ctx *c, size_t lo, size_t hi)
{
    double w = 0;
    if (!c->pr->active)
        return 0;
    for (int i = 0; i < SPOTS; i++) {
        const spot *sp = &c->pr->spots[i];
        if (sp->rank >= lo && sp->rank < hi && spot_significant(c, sp))
            w += sp->w;
    }
    return w;
}

static void plan_init(plan_ctx *c, const gb_list_pma *p, size_t total, uint32_t *t, uint16_t *o)
{
    static const predictor none;
    c->pr = p->classic ? &none : &p->pred;
    c->total = total;
    c->t = t;
    c->o = o;
    c->B = p->B;
    c->p = p;
    double explained = (double)c->pr->head + (double)c->pr->tail + spot_weight(c, 0, SIZE_MAX);
    double bg = (double)c->pr->total - explained;
    c->bg_per_slot = bg > 0 ? bg / (double)capacity(p) : 0;
}

/* Distributes n values, the first of which has list index rank_lo, over the
 * 2^level segments starting at window-relative segment i. */
static void plan(const plan_ctx *c, unsigned level, size_t i, size_t n, size_t rank_lo)
{
    const predictor *pr = c->pr;
    bool has_head = rank_lo == 0;
    bool has_tail = rank_lo + n == c->total;
    double bg = c->bg_per_slot * (double)(c->B << level);
    if (level == 0) {
        double hw = has_head ? pr->head : 0, tw = has_tail ? pr->tail : 0;
        double mw = spot_weight(c, rank_lo, rank_lo + n + 1);
        size_t free_slots = c->B - n;
        c->t[i] = (uint32_t)n;
        /* the run goes away from where inserts are expected */
        if (hw > tw + mw + bg)
            c->o[i] = (uint16_t)free_slots;
        else if (tw > hw + mw + bg)
            c->o[i] = 0;
        else
            c->o[i] = (uint16_t)(free_slots / 2);
        return;
    }
    size_t cap_c = c->B << (level - 1);
    size_t mid = rank_lo + n / 2;
    double wl = (has_head ? pr->head : 0) + spot_weight(c, rank_lo, mid) + bg / 2;
    double wr = (has_tail ? pr->tail : 0) + spot_weight(c, mid, rank_lo + n + 1) + bg / 2;
    size_t free_slots = 2 * cap_c - n;
    size_t free_l = wl + wr > 0 ? (size_t)((double)free_slots * wl / (wl + wr)) : free_slots / 2;
    size_t nl = cap_c > free_l ? cap_c - free_l : 0;
    size_t u = upper_count(c->p, level - 1);
    size_t hard_lo = n > cap_c ? n - cap_c : 0, hard_hi = n < cap_c ? n : cap_c;
    size_t lo = n > u ? n - u : 0, hi = n < u ? n : u;
    if (lo < hard_lo)
        lo = hard_lo;
    if (hi > hard_hi)
        hi = hard_hi;
    if (lo > hi) {
        lo = hard_lo;
        hi = hard_hi;
    }
    if (nl < lo)
        nl = lo;
    if (nl > hi)
        nl = hi;
    plan(c, level - 1, i, nl, rank_lo);
    plan(c, level - 1, i + ((size_t)1 << (level - 1)), n - nl, rank_lo + nl);
}

/* ---- rebalance & resize ---- */

static void rebalance(gb_list_pma *p, size_t a, unsigned level, size_t k, const pslot *ins)
{
    size_t W = (size_t)1 << level;
    size_t B = p->B;
    pslot *base = seg_base(p, a);
    size_t m = 0;
    /* 1. compact the window's runs to its left end (in order: safe) */
    for (size_t i = 0; i < W; i++) {
        size_t c = cnt(p, a + i);
        if (c && base + m != run(p, a + i))
            memmove(base + m, run(p, a + i), c * sizeof(pslot));
        m += c;
    }
    /* 2. open the hole for the new value */
    size_t rank_lo = prefix(p, a);
    size_t q = 0, n2 = m;
    if (ins) {
        q = k - rank_lo;
        memmove(base + q + 1, base + q, (m - q) * sizeof(pslot));
        base[q] = *ins;
        n2++;
    }
    /* 3. plan and spread from the right (targets never precede sources) */
    uint32_t *t = gb_malloc(W * (sizeof(uint32_t) + sizeof(uint16_t)));
    uint16_t *o = (uint16_t *)(t + W);
    plan_ctx c;
    plan_init(&c, p, p->n + (ins ? 1 : 0), t, o);
    plan(&c, level, 0, n2, rank_lo);
    size_t src = n2;
    for (size_t i = W; i-- > 0;) {
        src -= t[i];
        if (t[i] && src != i * B + o[i])
            memmove(base + i * B + o[i], base + src, t[i] * sizeof(pslot));
        p->off[a + i] = o[i];
        p->tree[p->nseg + a + i] = t[i];
    }
    gb_free(t);
    tree_rebuild_window(p, a, level);
    if (ins)
        p->n++;
    refresh_ends(p);
    p->st.rebalances++;
    p->st.moved += n2;
}

/* Rebuilds into a fresh array sized for density RESIZE_DENSITY, inserting
 * *ins before index k when ins is not NULL. */
static void resize(gb_list_pma *p, size_t k, const pslot *ins)
{
    size_t n2 = p->n + (ins ? 1 : 0);
    size_t nseg, B;
    geometry((size_t)((double)n2 / RESIZE_DENSITY) + 1, &nseg, &B);
    gb_list_pma old = *p;
    alloc_arrays(p, nseg, B);
    uint32_t *t = gb_malloc(nseg * (sizeof(uint32_t) + sizeof(uint16_t)));
    uint16_t *o = (uint16_t *)(t + nseg);
    plan_ctx c;
    plan_init(&c, p, n2, t, o);
    plan(&c, p->height, 0, n2, 0);
    /* stream the old runs, in order, into the new runs */
    size_t os = 0, oi = 0; /* old segment, position in its run */
    size_t rank = 0;
    for (size_t s = 0; s < nseg; s++) {
        pslot *dst = p->slots + s * B + o[s];
        size_t want = t[s];
        p->off[s] = o[s];
        p->tree[nseg + s] = want;
        while (want) {
            if (ins && rank == k) {
                *dst++ = *ins;
                want--;
                rank++;
                ins = NULL; /* placed */
                k = SIZE_MAX;
                continue;
            }
            while (oi == old.tree[old.nseg + os]) {
                os++;
                oi = 0;
            }
            size_t take = (size_t)old.tree[old.nseg + os] - oi;
            if (take > want)
                take = want;
            if (k != SIZE_MAX && ins && rank + take > k)
                take = k - rank;
            memcpy(dst, old.slots + os * old.B + old.off[os] + oi, take * sizeof(pslot));
            dst += take;
            oi += take;
            want -= take;
            rank += take;
        }
    }
    gb_free(t);
    for (size_t i = nseg - 1; i >= 1; i--)
        p->tree[i] = p->tree[2 * i] + p->tree[2 * i + 1];
    free_arrays(&old);
    p->n = n2;
    refresh_ends(p);
    p->st.resizes++;
    p->st.moved += n2;
}

/* The single shrink decision after an operation removed values. */
static void maybe_shrink(gb_list_pma *p)
{
    if (capacity(p) > MIN_CAPACITY * 2 &&
        (double)p->n < SHRINK_DENSITY * (double)capacity(p))
        resize(p, 0, NULL);
}

/* ---- insertion ---- */

/* Inserts *v (an owned slot) so that it becomes index k. */
static void insert_slot(gb_list_pma *p, size_t k, const pslot *v)
{
    size_t B = p->B;
    pred_insert(p, k);
    if (p->n == 0) {
        /* first value: where the predictor expects the next ones to grow */
        static const predictor none;
        const predictor *pr = p->classic ? &none : &p->pred;
        size_t s = pr->head > pr->tail ? p->nseg - 1 : pr->tail > pr->head ? 0 : p->nseg / 2;
        p->off[s] = (uint16_t)(pr->head > pr->tail ? B - 1 : pr->tail > pr->head ? 0 : B / 2);
        *run(p, s) = *v;
        tree_add(p, s, 1);
        p->n = 1;
        p->head_seg = p->tail_seg = s;
        return;
    }
    size_t s, r;
    if (k == p->n) {
        s = p->tail_seg;
        r = (size_t)cnt(p, s);
        if (p->off[s] + r < B) {
            run(p, s)[r] = *v;
        } else if (s + 1 < p->nseg) {
            s++;
            p->off[s] = 0;
            seg_base(p, s)[0] = *v;
            p->tail_seg = s;
        } else if (p->off[s] > 0) {
            pslot *rp = run(p, s);
            memmove(rp - 1, rp, r * sizeof(pslot));
            p->off[s]--;
            rp[r - 1] = *v;
        } else {
            goto full;
        }
        tree_add(p, s, 1);
        p->n++;
        return;
    }
    if (k == 0) {
        s = p->head_seg;
        r = 0;
        size_t c = (size_t)cnt(p, s);
        if (p->off[s] > 0) {
            p->off[s]--;
            run(p, s)[0] = *v;
        } else if (s > 0) {
            s--;
            p->off[s] = (uint16_t)(B - 1);
            seg_base(p, s)[B - 1] = *v;
            p->head_seg = s;
        } else if (c < B) {
            pslot *rp = run(p, s);
            memmove(rp + 1, rp, c * sizeof(pslot));
            rp[0] = *v;
        } else {
            goto full;
        }
        tree_add(p, s, 1);
        p->n++;
        return;
    }
    s = locate(p, k, &r);
    {
        size_t c = (size_t)cnt(p, s);
        if (c < B) {
            pslot *rp = run(p, s);
            size_t back = B - p->off[s] - c;
            if (p->off[s] > 0 && (r <= c - r || back == 0)) {
                memmove(rp - 1, rp, r * sizeof(pslot));
                p->off[s]--;
                rp[r - 1] = *v;
            } else {
                memmove(rp + r + 1, rp + r, (c - r) * sizeof(pslot));
                rp[r] = *v;
            }
            tree_add(p, s, 1);
            p->n++;
            return;
        }
    }
full:
    /* segment s is full: the smallest enclosing window within its threshold */
    for (unsigned l = 1; l <= p->height; l++) {
        size_t node = (p->nseg + s) >> l;
        if (p->tree[node] + 1 <= upper_count(p, l)) {
            rebalance(p, (node << l) - p->nseg, l, k, v);
            return;
        }
    }
    resize(p, k, v);
}

/* ---- public verbs ---- */

gb_list_pma *gb_list_pma_new(void)
{
    gb_list_pma *p = gb_malloc(sizeof(*p));
    memset(p, 0, sizeof(*p));
    size_t nseg, B;
    geometry(MIN_CAPACITY, &nseg, &B);
    alloc_arrays(p, nseg, B);
    refresh_ends(p);
    return p;
}

void gb_list_pma_free(gb_list_pma *p)
{
    if (!p)
        return;
    for (size_t s = 0; s < p->nseg; s++) {
        size_t c = (size_t)cnt(p, s);
        pslot *rp = run(p, s);
        for (size_t j = 0; j < c; j++)
            if (rp[j].b[0] == EXT_TAG)
                gb_free(slot_ext_ptr(&rp[j]));
    }
    free_arrays(p);
    gb_free(p);
}

size_t gb_list_pma_len(const gb_list_pma *p) { return p->n; }
size_t gb_list_pma_lp_bytes(const gb_list_pma *p) { return p->lp_bytes; }

size_t gb_list_pma_mem(const gb_list_pma *p)
{
    return gb_mem_accounted((void *)p) + gb_mem_accounted(p->slots) + gb_mem_accounted(p->off) +
           gb_mem_accounted(p->tree) + p->ext_mem;
}

void gb_list_pma_set_adaptive(gb_list_pma *p, bool on) { p->classic = !on; }

void gb_list_pma_get_stats(const gb_list_pma *p, gb_list_pma_stats *out)
{
    *out = p->st;
    out->capacity = capacity(p);
    out->segment_slots = p->B;
}

gb_list_pma *gb_list_pma_from_listpack(const unsigned char *lp)
{
    gb_list_pma *p = gb_list_pma_new();
    char buf[GB_LP_INT_BUF];
    const unsigned char *e = lp + GB_LP_HEADER_SIZE;
    for (uint32_t i = gb_lp_count(lp); i > 0; i--) {
        gb_list_pma_push(p, GB_LIST_TAIL, gb_lp_get_slice(e, buf));
        e += gb_lp_entry_bytes(e);
    }
    /* the build order says nothing about how the list will be used */
    memset(&p->pred, 0, sizeof p->pred);
    return p;
}

void gb_list_pma_push(gb_list_pma *p, gb_list_end end, gb_slice v)
{
    pslot sl;
    slot_make(p, &sl, v);
    insert_slot(p, end == GB_LIST_HEAD ? 0 : p->n, &sl);
}

void gb_list_pma_insert_at(gb_list_pma *p, size_t idx, gb_slice v)
{
    pslot sl;
    slot_make(p, &sl, v);
    insert_slot(p, idx, &sl);
}

/* Removes k values at an end; each is emitted (if emit) and released unless
 * keep != NULL, which receives the single removed slot (rotation). */
static void take_end(gb_list_pma *p, gb_list_end end, size_t k, gb_list_emit_fn emit, void *ctx,
                     pslot *keep)
{
    size_t left = k;
    while (left) {
        size_t s = end == GB_LIST_HEAD ? p->head_seg : p->tail_seg;
        size_t c = (size_t)cnt(p, s);
        size_t take = left < c ? left : c;
        pslot *rp = run(p, s);
        pslot *first = end == GB_LIST_HEAD ? rp : rp + c - take;
        if (keep) {
            *keep = *first;
        } else if (end == GB_LIST_HEAD) {
            for (size_t j = 0; j < take; j++) {
                if (emit)
                    emit(ctx, slot_get(&first[j]));
                slot_release(p, &first[j]);
            }
        } else {
            for (size_t j = take; j-- > 0;) {
                if (emit)
                    emit(ctx, slot_get(&first[j]));
                slot_release(p, &first[j]);
            }
        }
        if (end == GB_LIST_HEAD)
            p->off[s] = (uint16_t)(p->off[s] + take);
        tree_add(p, s, -(int64_t)take);
        p->n -= take;
        left -= take;
        if (take == c && p->n) {
            /* the segment is cleared; step to the next non-empty one */
            if (end == GB_LIST_HEAD) {
                while (cnt(p, ++s) == 0)
                    ;
                p->head_seg = s;
            } else {
                while (cnt(p, --s) == 0)
                    ;
                p->tail_seg = s;
            }
        }
    }
    if (p->n == 0)
        refresh_ends(p);
    if (end == GB_LIST_HEAD)
        pred_popped_head(p, k);
}

size_t gb_list_pma_pop(gb_list_pma *p, gb_list_end end, size_t count, gb_list_emit_fn emit,
                       void *ctx)
{
    if (count > p->n)
        count = p->n;
    if (count == 0)
        return 0;
    take_end(p, end, count, emit, ctx, NULL);
    maybe_shrink(p);
    return count;
}

void gb_list_pma_trim(gb_list_pma *p, size_t head, size_t tail)
{
    if (head > p->n)
        head = p->n;
    if (head)
        take_end(p, GB_LIST_HEAD, head, NULL, NULL, NULL);
    if (tail > p->n)
        tail = p->n;
    if (tail)
        take_end(p, GB_LIST_TAIL, tail, NULL, NULL, NULL);
    pred_forget_spots(p);
    maybe_shrink(p);
}

void gb_list_pma_rotate(gb_list_pma *p, gb_list_end from)
{
    if (p->n < 2)
        return;
    /* the slot itself changes ends: an external value keeps its block */
    pslot sl;
    take_end(p, from, 1, NULL, NULL, &sl);
    insert_slot(p, from == GB_LIST_HEAD ? p->n : 0, &sl);
}

void gb_list_pma_get(gb_list_pma *p, size_t idx, gb_slice *out)
{
    size_t s, r;
    if (idx == 0) {
        s = p->head_seg;
        r = 0;
    } else if (idx == p->n - 1) {
        s = p->tail_seg;
        r = (size_t)cnt(p, s) - 1;
    } else {
        s = locate(p, idx, &r);
    }
    *out = slot_get(&run(p, s)[r]);
}

void gb_list_pma_set(gb_list_pma *p, size_t idx, gb_slice v)
{
    size_t r, s = locate(p, idx, &r);
    pslot *d = &run(p, s)[r];
    slot_release(p, d);
    slot_make(p, d, v);
}

size_t gb_list_pma_visit(gb_list_pma *p, size_t first, size_t last, bool rev,
                         gb_list_visit_fn visit, void *ctx)
{
    size_t done = 0, r;
    if (!rev) {
        size_t s = locate(p, first, &r);
        for (size_t i = first; i <= last;) {
            size_t c = (size_t)cnt(p, s);
            pslot *rp = run(p, s);
            for (; r < c && i <= last; r++, i++) {
                done++;
                if (!visit(ctx, i, slot_get(&rp[r])))
                    return done;
            }
            s++;
            r = 0;
        }
    } else {
        size_t s = locate(p, last, &r);
        for (size_t i = last + 1; i > first;) {
            pslot *rp = run(p, s);
            for (size_t j = r + 1; j-- > 0 && i > first;) {
                i--;
                done++;
                if (!visit(ctx, i, slot_get(&rp[j])))
                    return done;
            }
            if (i == first)
                break;
            while (cnt(p, --s) == 0)
                ;
            r = (size_t)cnt(p, s) - 1;
        }
    }
    return done;
}

size_t gb_list_pma_remove(gb_list_pma *p, gb_slice v, long long count)
{
    size_t limit = count == 0 ? SIZE_MAX : (count < 0 ? (size_t)0 - (size_t)count : (size_t)count); /* no signed negation: count may be LLONG_MIN */
    size_t removed = 0;
    if (p->n == 0)
        return 0;
    if (count >= 0) {
        for (size_t s = p->head_seg; s <= p->tail_seg && removed < limit; s++) {
            size_t c = (size_t)cnt(p, s), w = 0;
            pslot *rp = run(p, s);
            for (size_t j = 0; j < c; j++) {
                if (removed < limit && slot_eq(&rp[j], v)) {
                    slot_release(p, &rp[j]);
                    removed++;
                } else {
                    rp[w++] = rp[j];
                }
            }
            if (w != c)
                tree_add(p, s, -(int64_t)(c - w));
        }
    } else {
        for (size_t s = p->tail_seg + 1; s-- > p->head_seg && removed < limit;) {
            size_t c = (size_t)cnt(p, s), w = c;
            pslot *rp = run(p, s);
            for (size_t j = c; j-- > 0;) {
                if (removed < limit && slot_eq(&rp[j], v)) {
                    slot_release(p, &rp[j]);
                    removed++;
                } else {
                    rp[--w] = rp[j];
                }
            }
            if (w) {
                /* the kept values now end the run */
                p->off[s] = (uint16_t)(p->off[s] + w);
                tree_add(p, s, -(int64_t)w);
            }
        }
    }
    if (!removed)
        return 0;
    p->n -= removed;
    refresh_ends(p);
    pred_forget_spots(p);
    maybe_shrink(p);
    return removed;
}

/* ---- self-check ---- */

bool gb_list_pma_verify(const gb_list_pma *p)
{
    GB_LIST_CHECK(p->nseg && (p->nseg & (p->nseg - 1)) == 0, "nseg %zu not a power of two",
                  p->nseg);
    GB_LIST_CHECK(((size_t)1 << p->height) == p->nseg, "height mismatch");
    GB_LIST_CHECK(p->B >= 1 && p->B <= UINT16_MAX, "segment size %zu", p->B);
    GB_LIST_CHECK(capacity(p) * sizeof(pslot) <= gb_mem_usable(p->slots), "slots block too small");
    for (size_t i = p->nseg - 1; i >= 1; i--)
        GB_LIST_CHECK(p->tree[i] == p->tree[2 * i] + p->tree[2 * i + 1], "tree node %zu", i);
    GB_LIST_CHECK(p->tree[1] == p->n, "root %llu, n %zu", (unsigned long long)p->tree[1], p->n);
    size_t lp = 0, ext = 0, first = SIZE_MAX, last = 0;
    for (size_t s = 0; s < p->nseg; s++) {
        size_t c = (size_t)cnt(p, s);
        GB_LIST_CHECK(p->off[s] + c <= p->B, "segment %zu run past its end", s);
        if (c) {
            if (first == SIZE_MAX)
                first = s;
            last = s;
        }
        const pslot *rp = run(p, s);
        for (size_t j = 0; j < c; j++) {
            unsigned char tag = rp[j].b[0];
            GB_LIST_CHECK(tag <= INLINE_MAX || tag == EXT_TAG, "segment %zu slot %zu tag %u", s,
                          j, tag);
            if (tag == EXT_TAG) {
                GB_LIST_CHECK(slot_len(&rp[j]) > INLINE_MAX, "short external value");
                GB_LIST_CHECK(slot_ext_ptr(&rp[j]) != NULL, "null external pointer");
                ext += gb_mem_accounted(slot_ext_ptr(&rp[j]));
            }
            lp += est_lp(slot_len(&rp[j]));
        }
    }
    if (p->n) {
        GB_LIST_CHECK(first == p->head_seg, "head_seg %zu, first non-empty %zu", p->head_seg,
                      first);
        GB_LIST_CHECK(last == p->tail_seg, "tail_seg %zu, last non-empty %zu", p->tail_seg, last);
    }
    GB_LIST_CHECK(lp == p->lp_bytes, "lp_bytes %zu, values need %zu", p->lp_bytes, lp);
    GB_LIST_CHECK(ext == p->ext_mem, "ext_mem %zu, blocks hold %zu", p->ext_mem, ext);
    return true;
}
