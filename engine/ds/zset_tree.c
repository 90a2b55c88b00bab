#include "engine/ds/zset_tree.h"

#include <stdio.h>

#include "engine/base/mem.h"

#define LCAP GB_ZSET_TREE_LEAF_CAP
#define ICAP GB_ZSET_TREE_INNER_CAP
/* A non-root node that falls below a third full after a delete borrows from
 * or merges with a sibling. A third (not a half) leaves room between the
 * merge and split points, so alternating insert/delete at a boundary does
 * not split and merge the same nodes over and over. */
#define LMIN (LCAP / 3)
#define IMIN (ICAP / 3)
/* An overflowing leaf spills into a sibling that has at least this many free
 * slots before it splits (B*-tree style: fuller leaves, fewer nodes). */
#define SPILL_MIN_FREE 4
/* Deepest possible tree: inner nodes keep >= IMIN children, so 2^64 entries
 * need far fewer levels than this. */
#define MAXH 48

typedef struct zhdr {
    uint16_t n;
    uint8_t leaf;
    uint8_t pad[5];
} zhdr;

typedef struct zleaf {
    zhdr h;
    struct zleaf *prev, *next;
    double score[LCAP];
    gb_zmember mem[LCAP];
} zleaf;

typedef struct zinner {
    zhdr h;
    double score[ICAP - 1];
    gb_zmember mem[ICAP - 1];
    void *child[ICAP];
    uint64_t cnt[ICAP];
} zinner;

#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(zleaf) == 1016, "leaf fills a 1 KiB malloc chunk");
_Static_assert(sizeof(zinner) == 1016, "inner node fills a 1 KiB malloc chunk");
#endif

/* The inner nodes on the way from the root to a leaf and the child index
 * taken at each. */
typedef struct zpath {
    int depth;
    zinner *node[MAXH];
    int idx[MAXH];
} zpath;

static inline bool is_leaf(const void *n) { return ((const zhdr *)n)->leaf != 0; }

static zleaf *leaf_new(gb_zset_tree *t)
{
    zleaf *l = gb_malloc(sizeof *l);
    memset(&l->h, 0, sizeof l->h);
    l->h.leaf = 1;
    l->prev = l->next = NULL;
    t->leaves++;
    return l;
}

static zinner *inner_new(gb_zset_tree *t)
{
    zinner *in = gb_malloc(sizeof *in);
    memset(&in->h, 0, sizeof in->h);
    t->inners++;
    return in;
}

static void leaf_free(gb_zset_tree *t, zleaf *l)
{
    t->leaves--;
    gb_free(l);
}

static void inner_free(gb_zset_tree *t, zinner *in)
{
    t->inners--;
    gb_free(in);
}

void gb_zset_tree_init(gb_zset_tree *t) { memset(t, 0, sizeof *t); }

size_t gb_zset_tree_bytes(const gb_zset_tree *t)
{
    return (size_t)t->leaves * sizeof(zleaf) + (size_t)t->inners * sizeof(zinner);
}

static void free_subtree(gb_zset_tree *t, void *n)
{
    if (is_leaf(n)) {
        leaf_free(t, n);
        return;
    }
    zinner *in = n;
    for (int i = 0; i < in->h.n; i++)
        free_subtree(t, in->child[i]);
    inner_free(t, in);
}

void gb_zset_tree_clear(gb_zset_tree *t, void (*fn)(double score, gb_zmember m, void *ctx), void *ctx)
{
    if (fn) {
        for (zleaf *l = t->first; l; l = l->next)
            for (int i = 0; i < l->h.n; i++)
                fn(l->score[i], l->mem[i], ctx);
    }
    if (t->root)
        free_subtree(t, t->root);
    gb_zset_tree_init(t);
}

/* ---- searching ---- */

static inline int key_cmp(double s1, gb_zmember m1, double s2, gb_slice k)
{
    if (s1 < s2)
        return -1;
    if (s1 > s2)
        return 1;
    return gb_slice_cmp(gb_zmember_slice(m1), k);
}

typedef struct zpred {
    gb_zset_tree_bound kind;
    double s;
    gb_slice m;
} zpred;

/* Whether the entry (s, m) lies before the bound. Entries are sorted so that
 * this holds for a prefix of them, for every kind. */
static inline bool before(const zpred *p, double s, gb_zmember m)
{
    switch (p->kind) {
    case GB_ZB_KEY_LT:
        return key_cmp(s, m, p->s, p->m) < 0;
    case GB_ZB_KEY_LE:
        return key_cmp(s, m, p->s, p->m) <= 0;
    case GB_ZB_SCORE_LT:
        return s < p->s;
    case GB_ZB_SCORE_LE:
        return s <= p->s;
    case GB_ZB_LEX_LT:
        return gb_slice_cmp(gb_zmember_slice(m), p->m) < 0;
    case GB_ZB_LEX_LE:
        return gb_slice_cmp(gb_zmember_slice(m), p->m) <= 0;
    }
    return false;
}

/* Binary search: how many of the n sorted entries lie before the bound.
 * Always inlined: where the bound's kind is a constant (descend_key, every
 * ZADD's and ZREM's way down the tree) the switch in before() folds away
 * instead of running at each step of the search (where a compiler did not
 * inline it, these steps were half of a ZADD's instructions). */
static inline __attribute__((always_inline)) int count_in(const double *sc, const gb_zmember *mm, int n,
                                                          const zpred *p)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (before(p, sc[mid], mm[mid]))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

uint64_t gb_zset_tree_count_before(const gb_zset_tree *t, gb_zset_tree_bound kind, double s, gb_slice m)
{
    if (!t->root)
        return 0;
    zpred p = {kind, s, m};
    uint64_t rank = 0;
    const void *n = t->root;
    while (!is_leaf(n)) {
        const zinner *in = n;
        int i = count_in(in->score, in->mem, in->h.n - 1, &p);
        for (int j = 0; j < i; j++)
            rank += in->cnt[j];
        n = in->child[i];
    }
    const zleaf *l = n;
    return rank + (uint64_t)count_in(l->score, l->mem, l->h.n, &p);
}

/* Whether (s, m) sorts after the last entry of a tree that is not empty
 * (whose last leaf has entries, as every leaf between operations). */
static inline bool after_last(const gb_zset_tree *t, double s, gb_slice m)
{
    const zleaf *l = t->last;
    return l->h.n > 0 && key_cmp(l->score[l->h.n - 1], l->mem[l->h.n - 1], s, m) < 0;
}

/* Finds where (s, m) is or would go: inner levels take the child whose
 * separator is <= the key (an existing key may be a separator: it then lives
 * in the right child), the leaf gives the first entry >= the key. With
 * `rightmost` (the caller found the key after every entry: after_last) the
 * same path is taken without comparing, since every separator is an entry:
 * scores that grow with time (timestamps, the usual sorted-set index)
 * always insert there. */
static zleaf *descend_key(const gb_zset_tree *t, double s, gb_slice m, bool rightmost, zpath *path, int *pos)
{
    zpred le = {GB_ZB_KEY_LE, s, m}, lt = {GB_ZB_KEY_LT, s, m};
    void *n = t->root;
    path->depth = 0;
    while (!is_leaf(n)) {
        zinner *in = n;
        int i = rightmost ? in->h.n - 1 : count_in(in->score, in->mem, in->h.n - 1, &le);
        path->node[path->depth] = in;
        path->idx[path->depth] = i;
        path->depth++;
        n = in->child[i];
    }
    zleaf *l = n;
    *pos = rightmost ? l->h.n : count_in(l->score, l->mem, l->h.n, &lt);
    return l;
}

/* rank < count. path may be NULL. */
static zleaf *descend_rank(const gb_zset_tree *t, uint64_t rank, zpath *path, int *pos)
{
    void *n = t->root;
    if (path)
        path->depth = 0;
    while (!is_leaf(n)) {
        zinner *in = n;
        int i = 0;
        while (rank >= in->cnt[i]) {
            rank -= in->cnt[i];
            i++;
        }
        if (path) {
            path->node[path->depth] = in;
            path->idx[path->depth] = i;
            path->depth++;
        }
        n = in->child[i];
    }
    *pos = (int)rank;
    return n;
}

/* ---- insertion ---- */

/* Inserts `right` as the child after path->idx[d] in path->node[d], with
 * separator (ss, sm) and the entry counts of the two halves; splits upward
 * as needed. d < 0 grows a new root. */
static void insert_child(gb_zset_tree *t, zpath *path, int d, void *right, double ss, gb_zmember sm,
                         uint64_t cl, uint64_t cr)
{
    if (d < 0) {
        zinner *root = inner_new(t);
        root->h.n = 2;
        root->child[0] = t->root;
        root->child[1] = right;
        root->cnt[0] = cl;
        root->cnt[1] = cr;
        root->score[0] = ss;
        root->mem[0] = sm;
        t->root = root;
        t->height++;
        return;
    }
    zinner *p = path->node[d];
    int i = path->idx[d], n = p->h.n;
    p->cnt[i] = cl;
    if (n < ICAP) {
        memmove(&p->child[i + 2], &p->child[i + 1], (size_t)(n - i - 1) * sizeof p->child[0]);
        memmove(&p->cnt[i + 2], &p->cnt[i + 1], (size_t)(n - i - 1) * sizeof p->cnt[0]);
        memmove(&p->score[i + 1], &p->score[i], (size_t)(n - 1 - i) * sizeof p->score[0]);
        memmove(&p->mem[i + 1], &p->mem[i], (size_t)(n - 1 - i) * sizeof p->mem[0]);
        p->child[i + 1] = right;
        p->cnt[i + 1] = cr;
        p->score[i] = ss;
        p->mem[i] = sm;
        p->h.n++;
        return;
    }
    /* Full: lay the ICAP + 1 children out in order, then halve. */
    void *ch[ICAP + 1];
    uint64_t cn[ICAP + 1];
    double sc[ICAP];
    gb_zmember mm[ICAP];
    for (int j = 0, k = 0; j < n; j++) {
        ch[k] = p->child[j];
        cn[k++] = p->cnt[j];
        if (j == i) {
            ch[k] = right;
            cn[k++] = cr;
        }
    }
    for (int j = 0, k = 0; j < n - 1 || k < ICAP; j++) {
        if (j == i) {
            sc[k] = ss;
            mm[k++] = sm;
        }
        if (j < n - 1) {
            sc[k] = p->score[j];
            mm[k++] = p->mem[j];
        }
    }
    int total = ICAP + 1, half = total / 2;
    zinner *q = inner_new(t);
    uint64_t suml = 0, sumr = 0;
    memcpy(p->child, ch, (size_t)half * sizeof ch[0]);
    memcpy(p->cnt, cn, (size_t)half * sizeof cn[0]);
    memcpy(p->score, sc, (size_t)(half - 1) * sizeof sc[0]);
    memcpy(p->mem, mm, (size_t)(half - 1) * sizeof mm[0]);
    p->h.n = (uint16_t)half;
    memcpy(q->child, ch + half, (size_t)(total - half) * sizeof ch[0]);
    memcpy(q->cnt, cn + half, (size_t)(total - half) * sizeof cn[0]);
    memcpy(q->score, sc + half, (size_t)(total - half - 1) * sizeof sc[0]);
    memcpy(q->mem, mm + half, (size_t)(total - half - 1) * sizeof mm[0]);
    q->h.n = (uint16_t)(total - half);
    for (int j = 0; j < half; j++)
        suml += cn[j];
    for (int j = half; j < total; j++)
        sumr += cn[j];
    insert_child(t, path, d - 1, q, sc[half - 1], mm[half - 1], suml, sumr);
}

static void leaf_set(zleaf *l, const double *sc, const gb_zmember *mm, int n)
{
    memcpy(l->score, sc, (size_t)n * sizeof sc[0]);
    memcpy(l->mem, mm, (size_t)n * sizeof mm[0]);
    l->h.n = (uint16_t)n;
}

/* l is full and (score, m) goes at pos: spill into a sibling or split. */
static void leaf_overflow(gb_zset_tree *t, zpath *path, zleaf *l, int pos, double score, gb_zmember m)
{
    double sc[2 * LCAP + 1];
    gb_zmember mm[2 * LCAP + 1];
    zinner *p = path->depth ? path->node[path->depth - 1] : NULL;
    int pi = p ? path->idx[path->depth - 1] : 0;
    int total, split;

    /* Appending past the last entry or prepending before the first (e.g.
     * timestamps as scores): keep the old leaf full, start a new one. */
    bool append = l == t->last && pos == LCAP;
    bool prepend = l == t->first && pos == 0;

    if (!append && !prepend && p) {
        zleaf *sib = NULL;
        bool left = false;
        if (pi > 0 && LCAP - ((zleaf *)p->child[pi - 1])->h.n >= SPILL_MIN_FREE) {
            sib = p->child[pi - 1];
            left = true;
        } else if (pi < p->h.n - 1 && LCAP - ((zleaf *)p->child[pi + 1])->h.n >= SPILL_MIN_FREE) {
            sib = p->child[pi + 1];
        }
        if (sib) {
            zleaf *L = left ? sib : l, *R = left ? l : sib;
            int k = 0;
            if (left) {
                memcpy(sc, sib->score, (size_t)sib->h.n * sizeof sc[0]);
                memcpy(mm, sib->mem, (size_t)sib->h.n * sizeof mm[0]);
                k = sib->h.n;
            }
            memcpy(sc + k, l->score, (size_t)pos * sizeof sc[0]);
            memcpy(mm + k, l->mem, (size_t)pos * sizeof mm[0]);
            k += pos;
            sc[k] = score;
            mm[k++] = m;
            memcpy(sc + k, l->score + pos, (size_t)(LCAP - pos) * sizeof sc[0]);
            memcpy(mm + k, l->mem + pos, (size_t)(LCAP - pos) * sizeof mm[0]);
            k += LCAP - pos;
            if (!left) {
                memcpy(sc + k, sib->score, (size_t)sib->h.n * sizeof sc[0]);
                memcpy(mm + k, sib->mem, (size_t)sib->h.n * sizeof mm[0]);
                k += sib->h.n;
            }
            int nl = k / 2;
            leaf_set(L, sc, mm, nl);
            leaf_set(R, sc + nl, mm + nl, k - nl);
            int s = left ? pi - 1 : pi;
            p->score[s] = R->score[0];
            p->mem[s] = R->mem[0];
            p->cnt[s] = L->h.n;
            p->cnt[s + 1] = R->h.n;
            return;
        }
    }

    memcpy(sc, l->score, (size_t)pos * sizeof sc[0]);
    memcpy(mm, l->mem, (size_t)pos * sizeof mm[0]);
    sc[pos] = score;
    mm[pos] = m;
    memcpy(sc + pos + 1, l->score + pos, (size_t)(LCAP - pos) * sizeof sc[0]);
    memcpy(mm + pos + 1, l->mem + pos, (size_t)(LCAP - pos) * sizeof mm[0]);
    total = LCAP + 1;
    split = append ? LCAP : prepend ? 1 : total / 2;

    zleaf *r = leaf_new(t);
    leaf_set(l, sc, mm, split);
    leaf_set(r, sc + split, mm + split, total - split);
    r->prev = l;
    r->next = l->next;
    if (l->next)
        l->next->prev = r;
    else
        t->last = r;
    l->next = r;
    insert_child(t, path, path->depth - 1, r, r->score[0], r->mem[0], l->h.n, r->h.n);
}

void gb_zset_tree_insert(gb_zset_tree *t, double score, gb_zmember m)
{
    t->count++;
    if (!t->root) {
        zleaf *l = leaf_new(t);
        l->score[0] = score;
        l->mem[0] = m;
        l->h.n = 1;
        t->root = t->first = t->last = l;
        t->height = 1;
        return;
    }
    zpath path;
    int pos;
    gb_slice ms = gb_zmember_slice(m);
    zleaf *l = descend_key(t, score, ms, after_last(t, score, ms), &path, &pos);
    for (int d = 0; d < path.depth; d++)
        path.node[d]->cnt[path.idx[d]]++;
    /* pos == 0 only happens in the first leaf (any other leaf's first entry
     * is a separator <= the key), so no separator changes here. */
    if (l->h.n < LCAP) {
        int n = l->h.n;
        memmove(&l->score[pos + 1], &l->score[pos], (size_t)(n - pos) * sizeof l->score[0]);
        memmove(&l->mem[pos + 1], &l->mem[pos], (size_t)(n - pos) * sizeof l->mem[0]);
        l->score[pos] = score;
        l->mem[pos] = m;
        l->h.n++;
        return;
    }
    leaf_overflow(t, &path, l, pos, score, m);
}

/* ---- deletion ---- */

/* Removes child j (j >= 1) and the separator before it. */
static void remove_child(zinner *p, int j)
{
    int n = p->h.n;
    memmove(&p->child[j], &p->child[j + 1], (size_t)(n - j - 1) * sizeof p->child[0]);
    memmove(&p->cnt[j], &p->cnt[j + 1], (size_t)(n - j - 1) * sizeof p->cnt[0]);
    memmove(&p->score[j - 1], &p->score[j], (size_t)(n - 1 - j) * sizeof p->score[0]);
    memmove(&p->mem[j - 1], &p->mem[j], (size_t)(n - 1 - j) * sizeof p->mem[0]);
    p->h.n--;
}

/* After l's first entry changed, the separator naming the smallest entry of
 * the subtree l starts (in the nearest ancestor entered through a child
 * other than the first) must name the new one. When l is empty its subtree
 * now starts at the next leaf; if l was a whole subtree by itself, the merge
 * that follows removes that separator. */
static void fix_first(zpath *path, zleaf *l)
{
    const zleaf *src = l->h.n ? l : l->next;
    if (!src)
        return;
    for (int d = path->depth - 1; d >= 0; d--) {
        if (path->idx[d] > 0) {
            path->node[d]->score[path->idx[d] - 1] = src->score[0];
            path->node[d]->mem[path->idx[d] - 1] = src->mem[0];
            return;
        }
    }
}

/* path->node[d] lost a child: collapse the root, or refill / merge. */
static void inner_fix(gb_zset_tree *t, zpath *path, int d)
{
    zinner *in = path->node[d];
    if (d == 0) {
        if (in->h.n == 1) {
            t->root = in->child[0];
            t->height--;
            inner_free(t, in);
        }
        return;
    }
    if (in->h.n >= IMIN)
        return;
    zinner *p = path->node[d - 1];
    int pi = path->idx[d - 1];
    int s = pi > 0 ? pi - 1 : 0;
    zinner *L = p->child[s], *R = p->child[s + 1];
    int ln = L->h.n, rn = R->h.n;
    if (ln + rn <= ICAP) {
        L->score[ln - 1] = p->score[s];
        L->mem[ln - 1] = p->mem[s];
        memcpy(&L->score[ln], R->score, (size_t)(rn - 1) * sizeof R->score[0]);
        memcpy(&L->mem[ln], R->mem, (size_t)(rn - 1) * sizeof R->mem[0]);
        memcpy(&L->child[ln], R->child, (size_t)rn * sizeof R->child[0]);
        memcpy(&L->cnt[ln], R->cnt, (size_t)rn * sizeof R->cnt[0]);
        L->h.n = (uint16_t)(ln + rn);
        p->cnt[s] += p->cnt[s + 1];
        remove_child(p, s + 1);
        inner_free(t, R);
        inner_fix(t, path, d - 1);
        return;
    }
    int nl = (ln + rn) / 2;
    uint64_t moved = 0;
    if (ln > nl) {
        /* L's last k children go to the front of R, through the parent. */
        int k = ln - nl;
        memmove(&R->child[k], &R->child[0], (size_t)rn * sizeof R->child[0]);
        memmove(&R->cnt[k], &R->cnt[0], (size_t)rn * sizeof R->cnt[0]);
        memmove(&R->score[k], &R->score[0], (size_t)(rn - 1) * sizeof R->score[0]);
        memmove(&R->mem[k], &R->mem[0], (size_t)(rn - 1) * sizeof R->mem[0]);
        memcpy(&R->child[0], &L->child[nl], (size_t)k * sizeof R->child[0]);
        memcpy(&R->cnt[0], &L->cnt[nl], (size_t)k * sizeof R->cnt[0]);
        memcpy(&R->score[0], &L->score[nl], (size_t)(k - 1) * sizeof R->score[0]);
        memcpy(&R->mem[0], &L->mem[nl], (size_t)(k - 1) * sizeof R->mem[0]);
        R->score[k - 1] = p->score[s];
        R->mem[k - 1] = p->mem[s];
        p->score[s] = L->score[nl - 1];
        p->mem[s] = L->mem[nl - 1];
        for (int j = 0; j < k; j++)
            moved += R->cnt[j];
        L->h.n = (uint16_t)nl;
        R->h.n = (uint16_t)(rn + k);
        p->cnt[s] -= moved;
        p->cnt[s + 1] += moved;
    } else {
        /* R's first k children go to the end of L, through the parent. */
        int k = nl - ln;
        L->score[ln - 1] = p->score[s];
        L->mem[ln - 1] = p->mem[s];
        memcpy(&L->child[ln], &R->child[0], (size_t)k * sizeof R->child[0]);
        memcpy(&L->cnt[ln], &R->cnt[0], (size_t)k * sizeof R->cnt[0]);
        memcpy(&L->score[ln], &R->score[0], (size_t)(k - 1) * sizeof R->score[0]);
        memcpy(&L->mem[ln], &R->mem[0], (size_t)(k - 1) * sizeof R->mem[0]);
        p->score[s] = R->score[k - 1];
        p->mem[s] = R->mem[k - 1];
        for (int j = 0; j < k; j++)
            moved += R->cnt[j];
        memmove(&R->child[0], &R->child[k], (size_t)(rn - k) * sizeof R->child[0]);
        memmove(&R->cnt[0], &R->cnt[k], (size_t)(rn - k) * sizeof R->cnt[0]);
        memmove(&R->score[0], &R->score[k], (size_t)(rn - 1 - k) * sizeof R->score[0]);
        memmove(&R->mem[0], &R->mem[k], (size_t)(rn - 1 - k) * sizeof R->mem[0]);
        L->h.n = (uint16_t)(ln + k);
        R->h.n = (uint16_t)(rn - k);
        p->cnt[s] += moved;
        p->cnt[s + 1] -= moved;
    }
}

/* The non-root leaf l at the end of path is under-full: merge it with a
 * sibling or even the two out. */
static void leaf_fix(gb_zset_tree *t, zpath *path, zleaf *l)
{
    int d = path->depth - 1;
    zinner *p = path->node[d];
    int pi = path->idx[d];
    int s = pi > 0 ? pi - 1 : 0;
    zleaf *L = pi > 0 ? p->child[pi - 1] : l;
    zleaf *R = pi > 0 ? l : p->child[1];
    int ln = L->h.n, rn = R->h.n;
    if (ln + rn <= LCAP) {
        memcpy(&L->score[ln], R->score, (size_t)rn * sizeof R->score[0]);
        memcpy(&L->mem[ln], R->mem, (size_t)rn * sizeof R->mem[0]);
        L->h.n = (uint16_t)(ln + rn);
        L->next = R->next;
        if (R->next)
            R->next->prev = L;
        else
            t->last = L;
        p->cnt[s] += p->cnt[s + 1];
        remove_child(p, s + 1);
        leaf_free(t, R);
        inner_fix(t, path, d);
        return;
    }
    int nl = (ln + rn) / 2;
    if (ln > nl) {
        int k = ln - nl;
        memmove(&R->score[k], R->score, (size_t)rn * sizeof R->score[0]);
        memmove(&R->mem[k], R->mem, (size_t)rn * sizeof R->mem[0]);
        memcpy(R->score, &L->score[nl], (size_t)k * sizeof R->score[0]);
        memcpy(R->mem, &L->mem[nl], (size_t)k * sizeof R->mem[0]);
    } else {
        int k = nl - ln;
        memcpy(&L->score[ln], R->score, (size_t)k * sizeof R->score[0]);
        memcpy(&L->mem[ln], R->mem, (size_t)k * sizeof R->mem[0]);
        memmove(R->score, &R->score[k], (size_t)(rn - k) * sizeof R->score[0]);
        memmove(R->mem, &R->mem[k], (size_t)(rn - k) * sizeof R->mem[0]);
    }
    L->h.n = (uint16_t)nl;
    R->h.n = (uint16_t)(ln + rn - nl);
    p->score[s] = R->score[0];
    p->mem[s] = R->mem[0];
    p->cnt[s] = L->h.n;
    p->cnt[s + 1] = R->h.n;
}

/* Removes entries [pos, pos + k) of the leaf at the end of path. */
static void remove_entries(gb_zset_tree *t, zpath *path, zleaf *l, int pos, int k)
{
    for (int d = 0; d < path->depth; d++)
        path->node[d]->cnt[path->idx[d]] -= (uint64_t)k;
    t->count -= (uint64_t)k;
    int n = l->h.n;
    memmove(&l->score[pos], &l->score[pos + k], (size_t)(n - pos - k) * sizeof l->score[0]);
    memmove(&l->mem[pos], &l->mem[pos + k], (size_t)(n - pos - k) * sizeof l->mem[0]);
    l->h.n = (uint16_t)(n - k);
    if (pos == 0)
        fix_first(path, l);
    if (path->depth == 0) {
        if (l->h.n == 0) {
            leaf_free(t, l);
            t->root = t->first = t->last = NULL;
            t->height = 0;
        }
        return;
    }
    if (l->h.n < LMIN)
        leaf_fix(t, path, l);
}

gb_zmember gb_zset_tree_delete(gb_zset_tree *t, double score, gb_slice member)
{
    if (!t->root)
        return NULL;
    zpath path;
    int pos;
    zleaf *l = descend_key(t, score, member, false, &path, &pos);
    if (pos >= l->h.n || l->score[pos] != score || !gb_slice_eq(gb_zmember_slice(l->mem[pos]), member))
        return NULL;
    gb_zmember m = l->mem[pos];
    remove_entries(t, &path, l, pos, 1);
    return m;
}

void gb_zset_tree_delete_range(gb_zset_tree *t, uint64_t rank, uint64_t count,
                               void (*fn)(double score, gb_zmember m, void *ctx), void *ctx)
{
    if (rank >= t->count)
        return;
    if (count > t->count - rank)
        count = t->count - rank;
    if (rank == 0 && count == t->count) {
        gb_zset_tree_clear(t, fn, ctx);
        return;
    }
    while (count > 0) {
        zpath path;
        int pos;
        zleaf *l = descend_rank(t, rank, &path, &pos);
        int k = l->h.n - pos;
        if ((uint64_t)k > count)
            k = (int)count;
        if (fn)
            for (int i = pos; i < pos + k; i++)
                fn(l->score[i], l->mem[i], ctx);
        remove_entries(t, &path, l, pos, k);
        count -= (uint64_t)k;
    }
}

void gb_zset_tree_update(gb_zset_tree *t, double old_score, gb_zmember m, double new_score)
{
    gb_slice ms = gb_zmember_slice(m);
    zpath path;
    int pos;
    zleaf *l = descend_key(t, old_score, ms, false, &path, &pos);
    if (pos >= l->h.n || l->mem[pos] != m)
        return; /* not in the tree: a caller bug, nothing to do */
    /* In place when the new key still sorts between its neighbours. */
    const zleaf *pl = pos > 0 ? l : l->prev, *nl = pos + 1 < l->h.n ? l : l->next;
    int pp = pos > 0 ? pos - 1 : (pl ? pl->h.n - 1 : 0);
    int np = pos + 1 < l->h.n ? pos + 1 : 0;
    bool ok = (!pl || key_cmp(pl->score[pp], pl->mem[pp], new_score, ms) < 0) &&
              (!nl || key_cmp(nl->score[np], nl->mem[np], new_score, ms) > 0);
    if (ok) {
        l->score[pos] = new_score;
        if (pos == 0)
            fix_first(&path, l);
        return;
    }
    remove_entries(t, &path, l, pos, 1);
    gb_zset_tree_insert(t, new_score, m);
}

/* ---- iteration ---- */

bool gb_zset_tree_seek(const gb_zset_tree *t, uint64_t rank, gb_zset_tree_iter *it)
{
    if (rank >= t->count) {
        it->leaf = NULL;
        it->idx = 0;
        return false;
    }
    it->leaf = descend_rank(t, rank, NULL, &it->idx);
    return true;
}

bool gb_zset_tree_next(gb_zset_tree_iter *it, double *score, gb_zmember *m)
{
    const zleaf *l = it->leaf;
    if (!l)
        return false;
    *score = l->score[it->idx];
    *m = l->mem[it->idx];
    if (++it->idx >= l->h.n) {
        it->leaf = l->next;
        it->idx = 0;
    }
    return true;
}

bool gb_zset_tree_prev(gb_zset_tree_iter *it, double *score, gb_zmember *m)
{
    const zleaf *l = it->leaf;
    if (!l)
        return false;
    *score = l->score[it->idx];
    *m = l->mem[it->idx];
    if (--it->idx < 0) {
        it->leaf = l->prev;
        it->idx = l->prev ? l->prev->h.n - 1 : 0;
    }
    return true;
}

/* ---- verification ---- */

typedef struct vstate {
    const gb_zset_tree *t;
    const zleaf *prev_leaf;
    bool have_last;
    double last_s;
    gb_zmember last_m;
    uint32_t leaves, inners;
    char *why;
    size_t whylen;
} vstate;

static bool vfail(vstate *v, const char *msg)
{
    if (v->why && v->whylen)
        snprintf(v->why, v->whylen, "%s", msg);
    return false;
}

static void first_entry(const void *n, double *s, gb_zmember *m)
{
    while (!is_leaf(n))
        n = ((const zinner *)n)->child[0];
    *s = ((const zleaf *)n)->score[0];
    *m = ((const zleaf *)n)->mem[0];
}

static bool verify_node(vstate *v, const void *n, uint32_t depth, uint64_t *count)
{
    bool root = depth == 1;
    if (is_leaf(n)) {
        const zleaf *l = n;
        v->leaves++;
        if (depth != v->t->height)
            return vfail(v, "leaves at different depths");
        if (l->h.n < 1 || l->h.n > LCAP)
            return vfail(v, "leaf entry count out of bounds");
        if (l->prev != v->prev_leaf)
            return vfail(v, "leaf prev link wrong");
        if (v->prev_leaf && v->prev_leaf->next != l)
            return vfail(v, "leaf next link wrong");
        if (!v->prev_leaf && v->t->first != l)
            return vfail(v, "first leaf pointer wrong");
        for (int i = 0; i < l->h.n; i++) {
            if (l->score[i] != l->score[i])
                return vfail(v, "NaN score");
            if (v->have_last && key_cmp(v->last_s, v->last_m, l->score[i], gb_zmember_slice(l->mem[i])) >= 0)
                return vfail(v, "entries out of order");
            v->have_last = true;
            v->last_s = l->score[i];
            v->last_m = l->mem[i];
        }
        v->prev_leaf = l;
        *count = l->h.n;
        return true;
    }
    const zinner *in = n;
    v->inners++;
    if (in->h.n > ICAP || in->h.n < 2 || (!root && in->h.n < IMIN))
        return vfail(v, "inner child count out of bounds");
    uint64_t total = 0;
    for (int i = 0; i < in->h.n; i++) {
        if (i > 0) {
            double s;
            gb_zmember m;
            first_entry(in->child[i], &s, &m);
            if (memcmp(&s, &in->score[i - 1], sizeof s) != 0 || m != in->mem[i - 1])
                return vfail(v, "separator is not the first entry of its subtree");
        }
        uint64_t c;
        if (!verify_node(v, in->child[i], depth + 1, &c))
            return false;
        if (c != in->cnt[i])
            return vfail(v, "child count wrong");
        total += c;
    }
    *count = total;
    return true;
}

bool gb_zset_tree_verify(const gb_zset_tree *t, char *why, size_t whylen)
{
    vstate v = {.t = t, .why = why, .whylen = whylen};
    if (!t->root) {
        if (t->count || t->height || t->first || t->last || t->leaves || t->inners)
            return vfail(&v, "empty tree with stale fields");
        return true;
    }
    uint64_t c;
    if (!verify_node(&v, t->root, 1, &c))
        return false;
    if (c != t->count)
        return vfail(&v, "tree count wrong");
    if (v.prev_leaf != t->last || ((const zleaf *)t->last)->next)
        return vfail(&v, "last leaf pointer wrong");
    if (v.leaves != t->leaves || v.inners != t->inners)
        return vfail(&v, "node counters wrong");
    return true;
}
