#include "engine/ds/zset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/ds/htable.h"
#include "engine/ds/listpack.h"
#include "engine/base/mem.h"
#include "engine/base/random.h"
#include "engine/base/util.h"
#include "engine/ds/zset_tree.h"

/* ---- btree representation: records shared by the htable and the tree ---- */

typedef struct zrec {
    gb_hnode node;
    double score;
    unsigned char key[]; /* gb_zmember: varint length, bytes */
} zrec;

typedef struct zbig {
    gb_htable ht;
    gb_zset_tree tree;
    size_t rec_bytes; /* usable bytes of all records */
} zbig;

static inline zrec *rec_of(gb_zmember m) { return (zrec *)(void *)((uintptr_t)m - offsetof(zrec, key)); }
static inline gb_slice rec_member(const zrec *r) { return gb_zmember_slice(r->key); }

static uint64_t zrec_hash(const gb_hnode *n) { return gb_hash_slice(rec_member((const zrec *)n)); }

static bool zrec_eq(const gb_hnode *n, const void *key)
{
    return gb_slice_eq(rec_member((const zrec *)n), *(const gb_slice *)key);
}

static const gb_htable_type zrec_type = {zrec_hash, zrec_eq};

static zbig *big_new(void)
{
    zbig *b = gb_malloc(sizeof *b);
    gb_htable_init(&b->ht, &zrec_type);
    gb_zset_tree_init(&b->tree);
    b->rec_bytes = 0;
    return b;
}

static void free_rec_node(gb_hnode *n, void *ctx)
{
    (void)ctx;
    gb_free(n);
}

static void big_free(zbig *b)
{
    gb_zset_tree_clear(&b->tree, NULL, NULL);
    gb_htable_clear(&b->ht, free_rec_node, NULL);
    gb_free(b);
}

static zrec *rec_new(zbig *b, gb_slice m, double score)
{
    zrec *r = gb_malloc(sizeof *r + gb_zmember_size(m.len) + m.len);
    r->score = score;
    gb_zmember_write(r->key, m);
    b->rec_bytes += gb_mem_accounted(r);
    return r;
}

static zrec *big_find_h(zbig *b, gb_slice m, uint64_t h) { return (zrec *)gb_htable_find(&b->ht, &m, h); }
static zrec *big_find(zbig *b, gb_slice m) { return big_find_h(b, m, gb_hash_slice(m)); }

/* Adds a member known to be absent (h: its hash). */
static void big_insert_h(zbig *b, gb_slice m, double score, uint64_t h)
{
    zrec *r = rec_new(b, m, score);
    gb_htable_insert(&b->ht, &r->node, h);
    gb_zset_tree_insert(&b->tree, score, r->key);
}

static void big_insert(zbig *b, gb_slice m, double score) { big_insert_h(b, m, score, gb_hash_slice(m)); }

static bool big_delete(zbig *b, gb_slice m)
{
    zrec *r = (zrec *)gb_htable_remove(&b->ht, &m, gb_hash_slice(m));
    if (!r)
        return false;
    gb_zset_tree_delete(&b->tree, r->score, m);
    b->rec_bytes -= gb_mem_accounted(r);
    gb_free(r);
    return true;
}

/* gb_zset_tree_delete_range callback: the entry leaves the hash and is freed. */
static void big_drop_cb(double score, gb_zmember m, void *ctx)
{
    (void)score;
    zbig *b = ctx;
    gb_slice s = gb_zmember_slice(m);
    zrec *r = (zrec *)gb_htable_remove(&b->ht, &s, gb_hash_slice(s));
    b->rec_bytes -= gb_mem_accounted(r);
    gb_free(r);
}

static void big_delete_ranks(zbig *b, uint64_t rank, uint64_t count)
{
    gb_zset_tree_delete_range(&b->tree, rank, count, big_drop_cb, b);
    gb_htable_maybe_shrink(&b->ht);
}

/* ---- listpack representation ---- */

/* Scores: integral values that fit an int64 (not -0) as listpack integers,
 * anything else as the 8 IEEE-754 bytes (little-endian) in a string entry;
 * when those 8 bytes spell a canonical integer the listpack would store
 * them as one, so a marker byte makes the string 9 bytes long. */
static gb_slice score_encode(double d, char *buf)
{
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == (double)(int64_t)d &&
        !(d == 0 && signbit(d)))
        return gb_slice_make(buf, gb_lp_int2str((int64_t)d, buf));
    uint64_t u;
    memcpy(&u, &d, 8);
    for (int i = 0; i < 8; i++)
        buf[i] = (char)(u >> (8 * i));
    int64_t v;
    if (gb_lp_str2int(buf, 8, &v)) {
        buf[8] = 'x';
        return gb_slice_make(buf, 9);
    }
    return gb_slice_make(buf, 8);
}

static double score_decode(const unsigned char *p)
{
    gb_lp_entry e;
    gb_lp_get(p, &e);
    if (e.is_int)
        return (double)e.ival;
    uint64_t u = 0;
    for (int i = 0; i < 8; i++)
        u |= (uint64_t)(unsigned char)e.ptr[i] << (8 * i);
    double d;
    memcpy(&d, &u, 8);
    return d;
}

#define ZL_NEXT(lp, p) gb_lp_next((lp), gb_lp_next((lp), (p)))

/* The member entry of the pair holding m, or NULL; *score receives its score. */
static unsigned char *zl_find(unsigned char *lp, gb_slice m, double *score)
{
    unsigned char *p = gb_lp_find(lp, gb_lp_first(lp), m, 1);
    if (p && score)
        *score = score_decode(gb_lp_next(lp, p));
    return p;
}

static int pair_cmp(double s1, gb_slice m1, double s2, gb_slice m2)
{
    if (s1 < s2)
        return -1;
    if (s1 > s2)
        return 1;
    return gb_slice_cmp(m1, m2);
}

static unsigned char *zl_insert(unsigned char *lp, gb_slice m, double score)
{
    char sbuf[GB_LP_INT_BUF], mbuf[GB_LP_INT_BUF];
    gb_slice enc = score_encode(score, sbuf);
    for (unsigned char *p = gb_lp_first(lp); p; p = ZL_NEXT(lp, p)) {
        double s = score_decode(gb_lp_next(lp, p));
        if (pair_cmp(s, gb_lp_get_slice(p, mbuf), score, m) > 0) {
            unsigned char *np;
            lp = gb_lp_insert(lp, p, false, m, &np);
            return gb_lp_insert(lp, np, true, enc, NULL);
        }
    }
    lp = gb_lp_append(lp, m);
    return gb_lp_append(lp, enc);
}

static unsigned char *zl_delete(unsigned char *lp, unsigned char *p)
{
    unsigned char *next;
    lp = gb_lp_delete(lp, p, &next);
    return gb_lp_delete(lp, next, NULL);
}

/* ---- object ---- */

gb_zset *gb_zset_new(const gb_types_config *cfg, size_t size_hint, size_t maxlen_hint)
{
    gb_zset *z = gb_malloc(sizeof *z);
    memset(z, 0, sizeof *z);
    if (size_hint <= cfg->zset_max_listpack_entries && maxlen_hint <= cfg->zset_max_listpack_value) {
        z->enc = GB_ZSET_LISTPACK;
        z->p = gb_lp_new(0);
    } else {
        z->enc = GB_ZSET_BTREE;
        zbig *b = big_new();
        gb_htable_reserve(&b->ht, size_hint); /* no growth on the way */
        z->p = b;
    }
    return z;
}

void gb_zset_release(gb_zset *z)
{
    if (z->enc == GB_ZSET_LISTPACK)
        gb_lp_free(z->p);
    else
        big_free(z->p);
    z->p = NULL;
}

bool gb_zset_release_step(gb_zset *z, uint64_t *cursor, size_t max_nodes)
{
    if (z->enc != GB_ZSET_LISTPACK) {
        zbig *b = z->p;
        /* The tree holds no record of its own, only pointers into them: its
         * nodes (a few per hundred members) go in the first call. */
        gb_zset_tree_clear(&b->tree, NULL, NULL);
        if (!gb_htable_clear_step(&b->ht, free_rec_node, NULL, cursor, max_nodes))
            return false;
    }
    gb_zset_release(z);
    return true;
}

void gb_zset_free(gb_zset *z)
{
    if (!z)
        return;
    gb_zset_release(z);
    gb_free(z);
}

const char *gb_zset_encoding_name(const gb_zset *z)
{
    return z->enc == GB_ZSET_LISTPACK ? "listpack" : "btree";
}

size_t gb_zset_card(const gb_zset *z)
{
    if (z->enc == GB_ZSET_LISTPACK)
        return gb_lp_count(z->p) / 2;
    return (size_t)gb_zset_tree_count(&((const zbig *)z->p)->tree);
}

size_t gb_zset_payload_mem(const gb_zset *z)
{
    size_t n = gb_mem_accounted(z->p);
    if (z->enc == GB_ZSET_BTREE) {
        const zbig *b = z->p;
        n += b->rec_bytes + gb_htable_overhead_bytes(&b->ht) + gb_zset_tree_bytes(&b->tree);
    }
    return n;
}

static void to_btree(gb_zset *z)
{
    unsigned char *lp = z->p;
    zbig *b = big_new();
    char buf[GB_LP_INT_BUF];
    for (unsigned char *p = gb_lp_first(lp); p; p = ZL_NEXT(lp, p))
        big_insert(b, gb_lp_get_slice(p, buf), score_decode(gb_lp_next(lp, p)));
    gb_lp_free(lp);
    z->enc = GB_ZSET_BTREE;
    z->p = b;
}

/* A score entry as score_encode writes it: an integer, or the 8 bytes of a
 * double (9 with the marker). */
static bool score_entry_ok(const unsigned char *p, double *out)
{
    gb_lp_entry e;
    gb_lp_get(p, &e);
    if (!e.is_int && e.len != 8 && !(e.len == 9 && e.ptr[8] == 'x'))
        return false;
    *out = score_decode(p);
    return !isnan(*out);
}

gb_zset *gb_zset_from_listpack(unsigned char *lp, size_t size, const gb_types_config *cfg, const char **why)
{
    *why = NULL;
    uint32_t n = 0;
    if (!gb_lp_validate(lp, size))
        *why = "a damaged listpack";
    else if ((n = gb_lp_count(lp)) == 0 || n % 2)
        *why = "a sorted-set listpack without member, score pairs";
    size_t maxlen = 0;
    double prev_s = 0;
    gb_slice prev_m = {0};
    char pbuf[GB_LP_INT_BUF], mbuf[GB_LP_INT_BUF];
    for (unsigned char *p = *why ? NULL : gb_lp_first(lp); p && !*why; p = ZL_NEXT(lp, p)) {
        double s;
        if (!score_entry_ok(gb_lp_next(lp, p), &s)) {
            *why = "a sorted-set listpack with a score that is not one";
            break;
        }
        gb_slice m = gb_lp_get_slice(p, mbuf);
        if (prev_m.ptr && pair_cmp(prev_s, prev_m, s, m) >= 0)
            *why = "a sorted-set listpack out of order";
        maxlen = GB_MAX(maxlen, m.len);
        /* keep the previous member's bytes: mbuf is reused */
        memcpy(pbuf, mbuf, sizeof pbuf);
        prev_m = m.ptr == mbuf ? gb_slice_make(pbuf, m.len) : m;
        prev_s = s;
    }
    if (!*why && !gb_lp_keys_unique(lp, 2))
        *why = "a sorted-set listpack with a member twice";
    if (*why) {
        gb_lp_free(lp);
        return NULL;
    }
    gb_zset *z = gb_malloc(sizeof *z);
    memset(z, 0, sizeof *z);
    z->enc = GB_ZSET_LISTPACK;
    z->p = lp;
    if (n / 2 > cfg->zset_max_listpack_entries || maxlen > cfg->zset_max_listpack_value)
        to_btree(z);
    return z;
}

static void to_listpack(gb_zset *z)
{
    zbig *b = z->p;
    unsigned char *lp = gb_lp_new(0);
    char buf[GB_LP_INT_BUF];
    gb_zset_tree_iter it;
    gb_zset_tree_seek(&b->tree, 0, &it);
    double s;
    gb_zmember m;
    while (gb_zset_tree_next(&it, &s, &m)) {
        lp = gb_lp_append(lp, gb_zmember_slice(m));
        lp = gb_lp_append(lp, score_encode(s, buf));
    }
    big_free(b);
    z->enc = GB_ZSET_LISTPACK;
    z->p = lp;
}

void gb_zset_convert_if_fits(gb_zset *z, const gb_types_config *cfg)
{
    if (z->enc != GB_ZSET_BTREE)
        return;
    zbig *b = z->p;
    if (gb_zset_tree_count(&b->tree) > cfg->zset_max_listpack_entries)
        return;
    size_t total = 0;
    gb_zset_tree_iter it;
    gb_zset_tree_seek(&b->tree, 0, &it);
    double s;
    gb_zmember m;
    while (gb_zset_tree_next(&it, &s, &m)) {
        size_t len = gb_zmember_slice(m).len;
        if (len > cfg->zset_max_listpack_value)
            return;
        total += len + 16;
    }
    if (total > GB_TYPES_LISTPACK_MAX_BYTES)
        return;
    to_listpack(z);
}

gb_zset *gb_zset_dup(const gb_zset *z)
{
    gb_zset *c = gb_malloc(sizeof *c);
    memset(c, 0, sizeof *c);
    c->enc = z->enc;
    if (z->enc == GB_ZSET_LISTPACK) {
        size_t n = gb_lp_bytes(z->p);
        c->p = gb_malloc(n);
        memcpy(c->p, z->p, n);
        return c;
    }
    const zbig *b = z->p;
    zbig *nb = big_new();
    gb_zset_tree_iter it;
    gb_zset_tree_seek(&b->tree, 0, &it);
    double s;
    gb_zmember m;
    while (gb_zset_tree_next(&it, &s, &m))
        big_insert(nb, gb_zmember_slice(m), s);
    c->p = nb;
    return c;
}

/* ---- ZADD ---- */

#define OUT_NOP 1
#define OUT_ADDED 2
#define OUT_UPDATED 4

/* ZADD's rules for a member that already has score cur, the same for both
 * encodings: NX keeps it, INCR adds to it, LT/GT keep it unless the new
 * score is lower/higher. Returns 1 when the score becomes *score (which may
 * equal cur), 0 when nothing changes, GB_ERANGE when INCR makes a NaN. */
static int existing_member_score(int flags, double cur, double *score)
{
    if (flags & GB_ZADD_NX)
        return 0;
    if (flags & GB_ZADD_INCR) {
        *score += cur;
        if (isnan(*score))
            return GB_ERANGE;
    }
    if (((flags & GB_ZADD_LT) && *score >= cur) || ((flags & GB_ZADD_GT) && *score <= cur))
        return 0;
    return 1;
}

/* Redis's zsetAdd for one pair. */
static int add_one(gb_zset *z, const gb_types_config *cfg, int flags, double score, gb_slice m, int *out,
                   double *newscore)
{
    double cur;
    *out = 0;
    if (isnan(score))
        return GB_ERANGE;
    if (z->enc == GB_ZSET_LISTPACK) {
        unsigned char *lp = z->p;
        unsigned char *p = zl_find(lp, m, &cur);
        if (p) {
            int rc = existing_member_score(flags, cur, &score);
            if (rc <= 0) {
                *out = rc == 0 ? OUT_NOP : 0;
                return rc;
            }
            *newscore = score;
            if (score != cur) {
                lp = zl_delete(lp, p);
                z->p = zl_insert(lp, m, score);
                *out = OUT_UPDATED;
            }
            return 0;
        }
        if (flags & GB_ZADD_XX) {
            *out = OUT_NOP;
            return 0;
        }
        if (gb_lp_count(lp) / 2 + 1 > cfg->zset_max_listpack_entries ||
            m.len > cfg->zset_max_listpack_value ||
            gb_lp_bytes(lp) + m.len + 32 > GB_TYPES_LISTPACK_MAX_BYTES) {
            to_btree(z);
        } else {
            z->p = zl_insert(lp, m, score);
            *newscore = score;
            *out = OUT_ADDED;
            return 0;
        }
    }
    zbig *b = z->p;
    uint64_t h = gb_hash_slice(m);
    zrec *r = big_find_h(b, m, h);
    if (r) {
        cur = r->score;
        int rc = existing_member_score(flags, cur, &score);
        if (rc <= 0) {
            *out = rc == 0 ? OUT_NOP : 0;
            return rc;
        }
        *newscore = score;
        if (score != cur) {
            gb_zset_tree_update(&b->tree, cur, r->key, score);
            r->score = score;
            *out = OUT_UPDATED;
        }
        return 0;
    }
    if (flags & GB_ZADD_XX) {
        *out = OUT_NOP;
        return 0;
    }
    big_insert_h(b, m, score, h);
    *newscore = score;
    *out = OUT_ADDED;
    return 0;
}

int gb_zset_add_many(gb_zset *z, const gb_types_config *cfg, int flags, size_t n, const double *scores,
                     const gb_slice *members, gb_zadd_result *res)
{
    bool nx = flags & GB_ZADD_NX, xx = flags & GB_ZADD_XX, gt = flags & GB_ZADD_GT, lt = flags & GB_ZADD_LT;
    memset(res, 0, sizeof *res);
    if ((nx && xx) || (gt && nx) || (lt && nx) || (gt && lt) || ((flags & GB_ZADD_INCR) && n != 1))
        return GB_EINVAL;
    for (size_t i = 0; i < n; i++) {
        int out;
        double ns = 0;
        int rc = add_one(z, cfg, flags, scores[i], members[i], &out, &ns);
        if (rc)
            return rc;
        if (out & OUT_ADDED)
            res->added++;
        if (out & OUT_UPDATED)
            res->updated++;
        if (!(out & OUT_NOP)) {
            res->processed++;
            res->score = ns;
        }
    }
    return 0;
}

int gb_zset_incrby(gb_zset *z, const gb_types_config *cfg, gb_slice member, double incr, double *out)
{
    gb_zadd_result r;
    int rc = gb_zset_add_many(z, cfg, GB_ZADD_INCR, 1, &incr, &member, &r);
    if (rc == 0)
        *out = r.score;
    return rc;
}

/* ---- lookups ---- */

bool gb_zset_score(const gb_zset *z, gb_slice member, double *score)
{
    if (z->enc == GB_ZSET_LISTPACK)
        return zl_find(z->p, member, score) != NULL;
    zrec *r = big_find(z->p, member);
    if (!r)
        return false;
    *score = r->score;
    return true;
}

bool gb_zset_rank(const gb_zset *z, gb_slice member, bool reverse, size_t *rank, double *score)
{
    size_t card = gb_zset_card(z), idx = 0;
    double s = 0;
    if (z->enc == GB_ZSET_LISTPACK) {
        unsigned char *lp = z->p;
        unsigned char *p = gb_lp_first(lp);
        gb_lp_key key;
        gb_lp_key_init(&key, member);
        for (; p; p = ZL_NEXT(lp, p), idx++)
            if (gb_lp_key_eq(p, &key))
                break;
        if (!p)
            return false;
        s = score_decode(gb_lp_next(lp, p));
    } else {
        zbig *b = z->p;
        zrec *r = big_find(b, member);
        if (!r)
            return false;
        s = r->score;
        idx = (size_t)gb_zset_tree_count_before(&b->tree, GB_ZB_KEY_LT, s, member);
    }
    *rank = reverse ? card - 1 - idx : idx;
    if (score)
        *score = s;
    return true;
}

/* A uniform cursor over either representation, by rank, both directions. */
typedef struct zcur {
    const gb_zset *z;
    unsigned char *p;     /* listpack: member entry */
    gb_zset_tree_iter it; /* btree */
    bool valid;
    double score;
    gb_slice member;
    char buf[GB_LP_INT_BUF];
} zcur;

static void cur_load(zcur *c)
{
    if (c->z->enc == GB_ZSET_LISTPACK) {
        c->valid = c->p != NULL;
        if (c->valid) {
            c->member = gb_lp_get_slice(c->p, c->buf);
            c->score = score_decode(gb_lp_next(c->z->p, c->p));
        }
        return;
    }
    gb_zset_tree_iter peek = c->it;
    gb_zmember m;
    c->valid = gb_zset_tree_next(&peek, &c->score, &m);
    if (c->valid)
        c->member = gb_zmember_slice(m);
}

static void cur_seek(zcur *c, const gb_zset *z, size_t rank)
{
    c->z = z;
    if (z->enc == GB_ZSET_LISTPACK)
        c->p = gb_lp_seek(z->p, (long)(rank * 2));
    else
        gb_zset_tree_seek(&((const zbig *)z->p)->tree, rank, &c->it);
    cur_load(c);
}

static void cur_step(zcur *c, bool reverse)
{
    if (c->z->enc == GB_ZSET_LISTPACK) {
        unsigned char *lp = c->z->p;
        if (reverse) {
            unsigned char *q = gb_lp_prev(lp, c->p);
            c->p = q ? gb_lp_prev(lp, q) : NULL;
        } else {
            c->p = ZL_NEXT(lp, c->p);
        }
    } else {
        double s;
        gb_zmember m;
        if (reverse)
            gb_zset_tree_prev(&c->it, &s, &m);
        else
            gb_zset_tree_next(&c->it, &s, &m);
    }
    cur_load(c);
}

/* Ranks [first, end) of the entries inside a score range. */
static void score_ranks(const gb_zset *z, const gb_score_range *r, size_t *first, size_t *end)
{
    if (z->enc == GB_ZSET_LISTPACK) {
        unsigned char *lp = z->p;
        size_t i = 0, a = SIZE_MAX, e = 0;
        for (unsigned char *p = gb_lp_first(lp); p; p = ZL_NEXT(lp, p), i++) {
            double s = score_decode(gb_lp_next(lp, p));
            if (a == SIZE_MAX && gb_score_gte_min(s, r))
                a = i;
            if (gb_score_lte_max(s, r))
                e = i + 1;
        }
        *first = a == SIZE_MAX ? i : a;
        *end = e;
        return;
    }
    const gb_zset_tree *t = &((const zbig *)z->p)->tree;
    gb_slice none = gb_slice_make(NULL, 0);
    *first = (size_t)gb_zset_tree_count_before(t, r->minex ? GB_ZB_SCORE_LE : GB_ZB_SCORE_LT, r->min, none);
    *end = (size_t)gb_zset_tree_count_before(t, r->maxex ? GB_ZB_SCORE_LT : GB_ZB_SCORE_LE, r->max, none);
}

size_t gb_zset_count(const gb_zset *z, const gb_score_range *r)
{
    if (gb_score_range_empty(r))
        return 0;
    size_t a, e;
    score_ranks(z, r, &a, &e);
    return e > a ? e - a : 0;
}

/* Lexicographic ranges follow Redis's walks, which assume all scores are
 * equal: the first entry is the first (from the low end) that is >= min and
 * must also be <= max; the last is the first from the high end that is
 * <= max and must also be >= min. The btree finds them by binary search
 * over members (what Redis's skiplist descent does). */
static bool lex_first(const gb_zset *z, const gb_lex_range *r, size_t *rank)
{
    size_t card = gb_zset_card(z), i = 0;
    if (card == 0 || gb_lex_range_empty(r))
        return false;
    if (z->enc == GB_ZSET_LISTPACK) {
        unsigned char *lp = z->p;
        char buf[GB_LP_INT_BUF];
        unsigned char *last = gb_lp_prev(lp, gb_lp_last(lp));
        if (!gb_lex_gte_min(gb_lp_get_slice(last, buf), r) ||
            !gb_lex_lte_max(gb_lp_get_slice(gb_lp_first(lp), buf), r))
            return false;
        for (unsigned char *p = gb_lp_first(lp); p; p = ZL_NEXT(lp, p), i++) {
            gb_slice m = gb_lp_get_slice(p, buf);
            if (gb_lex_gte_min(m, r)) {
                *rank = i;
                return gb_lex_lte_max(m, r);
            }
        }
        return false;
    }
    const gb_zset_tree *t = &((const zbig *)z->p)->tree;
    uint64_t k = r->min.inf < 0 ? 0
                 : r->min.inf > 0
                     ? card
                     : gb_zset_tree_count_before(t, r->min.ex ? GB_ZB_LEX_LE : GB_ZB_LEX_LT, 0, r->min.s);
    if (k >= card)
        return false;
    zcur c;
    cur_seek(&c, z, (size_t)k);
    *rank = (size_t)k;
    return gb_lex_lte_max(c.member, r);
}

static bool lex_last(const gb_zset *z, const gb_lex_range *r, size_t *rank)
{
    size_t card = gb_zset_card(z);
    if (card == 0 || gb_lex_range_empty(r))
        return false;
    if (z->enc == GB_ZSET_LISTPACK) {
        unsigned char *lp = z->p;
        char buf[GB_LP_INT_BUF];
        unsigned char *last = gb_lp_prev(lp, gb_lp_last(lp));
        if (!gb_lex_gte_min(gb_lp_get_slice(last, buf), r) ||
            !gb_lex_lte_max(gb_lp_get_slice(gb_lp_first(lp), buf), r))
            return false;
        size_t i = card - 1;
        for (unsigned char *p = last; p;) {
            gb_slice m = gb_lp_get_slice(p, buf);
            if (gb_lex_lte_max(m, r)) {
                *rank = i;
                return gb_lex_gte_min(m, r);
            }
            unsigned char *q = gb_lp_prev(lp, p);
            p = q ? gb_lp_prev(lp, q) : NULL;
            i--;
        }
        return false;
    }
    const gb_zset_tree *t = &((const zbig *)z->p)->tree;
    uint64_t k = r->max.inf > 0 ? card
                 : r->max.inf < 0
                     ? 0
                     : gb_zset_tree_count_before(t, r->max.ex ? GB_ZB_LEX_LT : GB_ZB_LEX_LE, 0, r->max.s);
    if (k == 0)
        return false;
    zcur c;
    cur_seek(&c, z, (size_t)(k - 1));
    *rank = (size_t)(k - 1);
    return gb_lex_gte_min(c.member, r);
}

size_t gb_zset_lexcount(const gb_zset *z, const gb_lex_range *r)
{
    size_t first, last;
    if (!lex_first(z, r, &first))
        return 0;
    if (z->enc == GB_ZSET_LISTPACK) {
        /* Redis counts forward from the first while <= max. */
        size_t n = 0;
        zcur c;
        for (cur_seek(&c, z, first); c.valid && gb_lex_lte_max(c.member, r); cur_step(&c, false))
            n++;
        return n;
    }
    if (!lex_last(z, r, &last))
        return gb_zset_card(z) - first;
    return last >= first ? last - first + 1 : 0;
}

/* ---- ranges ---- */

size_t gb_zset_range_rank(const gb_zset *z, int64_t start, int64_t stop, bool reverse, gb_zset_emit_fn emit,
                          void *ctx)
{
    size_t card = gb_zset_card(z), a, b;
    if (!gb_index_range(start, stop, card, &a, &b))
        return 0;
    size_t n = b - a + 1;
    zcur c;
    cur_seek(&c, z, reverse ? card - 1 - a : a);
    for (size_t i = 0; i < n && c.valid; i++) {
        emit(ctx, c.member, c.score);
        cur_step(&c, reverse);
    }
    return n;
}

/* Emits from rank `from` walking in `reverse` direction, skipping offset,
 * at most limit (< 0: all), while in_range holds. */
typedef bool (*in_range_fn)(const zcur *c, const void *range, bool reverse);

static size_t walk(const gb_zset *z, size_t from, bool reverse, int64_t offset, int64_t limit,
                   in_range_fn in_range, const void *range, gb_zset_emit_fn emit, void *ctx)
{
    if (offset < 0 || limit == 0)
        return 0;
    zcur c;
    cur_seek(&c, z, from);
    while (c.valid && offset-- > 0)
        cur_step(&c, reverse);
    size_t n = 0;
    while (c.valid && (limit < 0 || (int64_t)n < limit)) {
        if (!in_range(&c, range, reverse))
            break;
        emit(ctx, c.member, c.score);
        n++;
        cur_step(&c, reverse);
    }
    return n;
}

static bool score_in(const zcur *c, const void *range, bool reverse)
{
    const gb_score_range *r = range;
    return reverse ? gb_score_gte_min(c->score, r) : gb_score_lte_max(c->score, r);
}

static bool lex_in(const zcur *c, const void *range, bool reverse)
{
    const gb_lex_range *r = range;
    return reverse ? gb_lex_gte_min(c->member, r) : gb_lex_lte_max(c->member, r);
}

size_t gb_zset_range_score(const gb_zset *z, const gb_score_range *r, bool reverse, int64_t offset,
                           int64_t limit, gb_zset_emit_fn emit, void *ctx)
{
    if (gb_score_range_empty(r))
        return 0;
    size_t a, e;
    score_ranks(z, r, &a, &e);
    if (e <= a)
        return 0;
    return walk(z, reverse ? e - 1 : a, reverse, offset, limit, score_in, r, emit, ctx);
}

size_t gb_zset_range_lex(const gb_zset *z, const gb_lex_range *r, bool reverse, int64_t offset, int64_t limit,
                         gb_zset_emit_fn emit, void *ctx)
{
    size_t from;
    if (!(reverse ? lex_last(z, r, &from) : lex_first(z, r, &from)))
        return 0;
    return walk(z, from, reverse, offset, limit, lex_in, r, emit, ctx);
}

void gb_zset_scan_scores(const gb_zset *z, double min, double max_excl, gb_zset_want_fn want, gb_zset_emit_fn emit,
                         void *ctx)
{
    if (z->enc == GB_ZSET_LISTPACK) {
        unsigned char *lp = z->p;
        char buf[GB_LP_INT_BUF];
        for (unsigned char *p = gb_lp_first(lp); p; p = ZL_NEXT(lp, p)) {
            double s = score_decode(gb_lp_next(lp, p));
            if (s < min)
                continue;
            if (!(s < max_excl))
                return;
            int w = want(ctx, s);
            if (w == GB_ZSCAN_STOP)
                return;
            if (w == GB_ZSCAN_EMIT)
                emit(ctx, gb_lp_get_slice(p, buf), s);
        }
        return;
    }
    /* One descent to the first entry, then one step per entry; a member's
     * record is touched only for the entries emitted. */
    const gb_zset_tree *t = &((const zbig *)z->p)->tree;
    uint64_t first = gb_zset_tree_count_before(t, GB_ZB_SCORE_LT, min, gb_slice_make(NULL, 0));
    gb_zset_tree_iter it;
    if (!gb_zset_tree_seek(t, first, &it))
        return;
    double s;
    gb_zmember m;
    while (gb_zset_tree_next(&it, &s, &m) && s < max_excl) {
        int w = want(ctx, s);
        if (w == GB_ZSCAN_STOP)
            return;
        if (w == GB_ZSCAN_EMIT)
            emit(ctx, gb_zmember_slice(m), s);
    }
}

/* ---- removal ---- */

size_t gb_zset_remove(gb_zset *z, size_t n, const gb_slice *members)
{
    size_t removed = 0;
    for (size_t i = 0; i < n; i++) {
        if (z->enc == GB_ZSET_LISTPACK) {
            unsigned char *p = zl_find(z->p, members[i], NULL);
            if (p) {
                z->p = zl_delete(z->p, p);
                removed++;
            }
        } else if (big_delete(z->p, members[i])) {
            removed++;
        }
    }
    if (removed && z->enc == GB_ZSET_BTREE)
        gb_htable_maybe_shrink(&((zbig *)z->p)->ht);
    return removed;
}

static void delete_ranks(gb_zset *z, size_t rank, size_t count)
{
    if (count == 0)
        return;
    if (z->enc == GB_ZSET_LISTPACK)
        z->p = gb_lp_delete_range(z->p, (long)(rank * 2), (unsigned long)count * 2);
    else
        big_delete_ranks(z->p, rank, count);
}

size_t gb_zset_remrange_rank(gb_zset *z, int64_t start, int64_t stop)
{
    size_t a, b;
    if (!gb_index_range(start, stop, gb_zset_card(z), &a, &b))
        return 0;
    delete_ranks(z, a, b - a + 1);
    return b - a + 1;
}

size_t gb_zset_remrange_score(gb_zset *z, const gb_score_range *r)
{
    if (gb_score_range_empty(r))
        return 0;
    size_t a, e;
    score_ranks(z, r, &a, &e);
    if (e <= a)
        return 0;
    delete_ranks(z, a, e - a);
    return e - a;
}

static void count_emit(void *ctx, gb_slice m, double s)
{
    (void)m;
    (void)s;
    (*(size_t *)ctx)++;
}

size_t gb_zset_remrange_lex(gb_zset *z, const gb_lex_range *r)
{
    size_t first;
    if (!lex_first(z, r, &first))
        return 0;
    size_t n = 0;
    walk(z, first, false, 0, -1, lex_in, r, count_emit, &n);
    delete_ranks(z, first, n);
    return n;
}

size_t gb_zset_pop(gb_zset *z, bool max, size_t count, gb_zset_emit_fn emit, void *ctx)
{
    size_t card = gb_zset_card(z);
    if (count > card)
        count = card;
    if (count == 0)
        return 0;
    zcur c;
    cur_seek(&c, z, max ? card - 1 : 0);
    for (size_t i = 0; i < count; i++) {
        emit(ctx, c.member, c.score);
        cur_step(&c, max);
    }
    delete_ranks(z, max ? card - count : 0, count);
    return count;
}

/* ---- random and scan ---- */

void gb_zset_random(const gb_zset *z, int64_t count, gb_zset_emit_fn emit, void *ctx)
{
    size_t card = gb_zset_card(z);
    if (count == 0 || card == 0)
        return;
    if (count > 0 && (uint64_t)count >= card) {
        gb_zset_range_rank(z, 0, -1, false, emit, ctx);
        return;
    }
    uint64_t k = count < 0 ? (uint64_t)0 - (uint64_t)count : (uint64_t)count;
    uint64_t *idx = NULL;
    if (count > 0) {
        idx = gb_malloc((size_t)k * sizeof *idx);
        gb_sample_distinct(card, k, idx);
    }
    /* Compact sets: decode once into arrays; btree sets: select by rank. */
    gb_slice *ms = NULL;
    double *ss = NULL;
    char(*ints)[GB_LP_INT_BUF] = NULL;
    if (z->enc == GB_ZSET_LISTPACK) {
        unsigned char *lp = z->p;
        ms = gb_malloc(card * sizeof *ms);
        ss = gb_malloc(card * sizeof *ss);
        ints = gb_malloc(card * sizeof *ints);
        size_t i = 0;
        for (unsigned char *p = gb_lp_first(lp); p; p = ZL_NEXT(lp, p), i++) {
            ms[i] = gb_lp_get_slice(p, ints[i]);
            ss[i] = score_decode(gb_lp_next(lp, p));
        }
    }
    for (uint64_t i = 0; i < k; i++) {
        size_t r = idx ? (size_t)idx[i] : (size_t)gb_random_below(card);
        if (ms) {
            emit(ctx, ms[r], ss[r]);
        } else {
            zcur c;
            cur_seek(&c, z, r);
            emit(ctx, c.member, c.score);
        }
    }
    gb_free(idx);
    gb_free(ms);
    gb_free(ss);
    gb_free(ints);
}

typedef struct scan_ctx {
    gb_zset_emit_fn emit;
    void *ctx;
} scan_ctx;

static void scan_one(gb_hnode *n, void *ctx)
{
    scan_ctx *sc = ctx;
    const zrec *r = (const zrec *)n;
    sc->emit(sc->ctx, rec_member(r), r->score);
}

uint64_t gb_zset_scan(gb_zset *z, uint64_t cursor, gb_zset_emit_fn emit, void *ctx)
{
    if (z->enc == GB_ZSET_LISTPACK) {
        gb_zset_range_rank(z, 0, -1, false, emit, ctx);
        return 0;
    }
    scan_ctx sc = {emit, ctx};
    return gb_htable_scan(&((zbig *)z->p)->ht, cursor, scan_one, &sc);
}

/* ---- algebra ---- */

static size_t src_card(const gb_zsrc *s)
{
    if (s->zset)
        return gb_zset_card(s->zset);
    if (s->set)
        return gb_set_card(s->set);
    return 0;
}

static bool src_find(const gb_zsrc *s, gb_slice m, double *score)
{
    if (s->zset)
        return gb_zset_score(s->zset, m, score);
    if (s->set && gb_set_ismember(s->set, m)) {
        *score = 1.0;
        return true;
    }
    return false;
}

typedef struct src_iter_ctx {
    void (*fn)(void *ctx, gb_slice m, double s);
    void *ctx;
} src_iter_ctx;

static void set_member_one(void *ctx, gb_slice m)
{
    src_iter_ctx *ic = ctx;
    ic->fn(ic->ctx, m, 1.0);
}

static void src_each(const gb_zsrc *s, void (*fn)(void *ctx, gb_slice m, double sc), void *ctx)
{
    if (s->zset) {
        gb_zset_range_rank(s->zset, 0, -1, false, fn, ctx);
    } else if (s->set) {
        src_iter_ctx ic = {fn, ctx};
        gb_set_members(s->set, set_member_one, &ic);
    }
}

static inline void aggregate(double *target, double v, gb_zagg agg)
{
    if (agg == GB_ZAGG_SUM) {
        *target += v;
        if (isnan(*target)) /* inf + -inf */
            *target = 0.0;
    } else if (agg == GB_ZAGG_MIN) {
        *target = v < *target ? v : *target;
    } else {
        *target = v > *target ? v : *target;
    }
}

/* Stable sort of the inputs by size, smallest first (Redis's qsort on
 * equal sizes keeps argument order with glibc's merge sort). */
static gb_zsrc *sorted_srcs(const gb_zsrc *src, size_t n)
{
    gb_zsrc *v = gb_malloc((n ? n : 1) * sizeof *v);
    memcpy(v, src, n * sizeof *v);
    for (size_t i = 1; i < n; i++) {
        gb_zsrc x = v[i];
        size_t cx = src_card(&x), j = i;
        while (j > 0 && src_card(&v[j - 1]) > cx) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
    return v;
}

/* The accumulator: a btree-representation struct whose htable collects
 * member -> score; the tree is filled once, at the end. */
typedef struct acc {
    zbig *b;
    size_t maxlen;
    gb_zagg agg;
    double weight;
    const gb_zsrc *src;
    size_t n;
    size_t limit, count;
    bool stop;
} acc;

static void acc_put(acc *a, gb_slice m, double score)
{
    zrec *r = rec_new(a->b, m, score);
    gb_htable_insert(&a->b->ht, &r->node, gb_hash_slice(m));
    if (m.len > a->maxlen)
        a->maxlen = m.len;
}

static void union_one(void *ctx, gb_slice m, double s)
{
    acc *a = ctx;
    double score = a->weight * s;
    if (isnan(score))
        score = 0;
    zrec *r = big_find(a->b, m);
    if (r)
        aggregate(&r->score, score, a->agg);
    else
        acc_put(a, m, score);
}

static int rec_cmp(const void *x, const void *y)
{
    const zrec *a = *(zrec *const *)x, *b = *(zrec *const *)y;
    return pair_cmp(a->score, rec_member(a), b->score, rec_member(b));
}

/* Turns the accumulated records into the result object. */
static gb_zset *acc_finish(acc *a, const gb_types_config *cfg)
{
    zbig *b = a->b;
    size_t n = gb_htable_size(&b->ht);
    zrec **v = gb_malloc((n ? n : 1) * sizeof *v);
    size_t i = 0;
    gb_htable_iter it;
    gb_htable_iter_init(&it, &b->ht);
    for (gb_hnode *h; (h = gb_htable_iter_next(&it));)
        v[i++] = (zrec *)h;
    gb_htable_iter_done(&it);
    qsort(v, n, sizeof *v, rec_cmp);
    gb_zset *z = gb_malloc(sizeof *z);
    memset(z, 0, sizeof *z);
    if (n <= cfg->zset_max_listpack_entries && a->maxlen <= cfg->zset_max_listpack_value) {
        unsigned char *lp = gb_lp_new(0);
        char buf[GB_LP_INT_BUF];
        for (i = 0; i < n; i++) {
            lp = gb_lp_append(lp, rec_member(v[i]));
            lp = gb_lp_append(lp, score_encode(v[i]->score, buf));
        }
        big_free(b);
        z->enc = GB_ZSET_LISTPACK;
        z->p = lp;
    } else {
        for (i = 0; i < n; i++)
            gb_zset_tree_insert(&b->tree, v[i]->score, v[i]->key);
        z->enc = GB_ZSET_BTREE;
        z->p = b;
    }
    gb_free(v);
    return z;
}

gb_zset *gb_zset_union(const gb_zsrc *src, size_t n, gb_zagg agg, const gb_types_config *cfg)
{
    gb_zsrc *v = sorted_srcs(src, n);
    acc a = {.b = big_new(), .agg = agg};
    for (size_t i = 0; i < n; i++) {
        if (src_card(&v[i]) == 0)
            continue;
        a.weight = v[i].weight;
        src_each(&v[i], union_one, &a);
    }
    gb_free(v);
    return acc_finish(&a, cfg);
}

static void inter_one(void *ctx, gb_slice m, double s)
{
    acc *a = ctx;
    if (a->stop)
        return;
    double score = a->src[0].weight * s, value;
    if (isnan(score))
        score = 0;
    for (size_t j = 1; j < a->n; j++) {
        if (!src_find(&a->src[j], m, &value))
            return;
        value *= a->src[j].weight;
        aggregate(&score, value, a->agg);
    }
    a->count++;
    if (a->b)
        acc_put(a, m, score);
    if (a->limit && a->count >= a->limit)
        a->stop = true;
}

gb_zset *gb_zset_inter(const gb_zsrc *src, size_t n, gb_zagg agg, const gb_types_config *cfg)
{
    gb_zsrc *v = sorted_srcs(src, n);
    acc a = {.b = big_new(), .agg = agg, .src = v, .n = n};
    if (n && src_card(&v[0]) > 0)
        src_each(&v[0], inter_one, &a);
    gb_free(v);
    return acc_finish(&a, cfg);
}

size_t gb_zset_intercard(const gb_zsrc *src, size_t n, size_t limit)
{
    gb_zsrc *v = sorted_srcs(src, n);
    acc a = {.agg = GB_ZAGG_SUM, .src = v, .n = n, .limit = limit};
    if (n && src_card(&v[0]) > 0)
        src_each(&v[0], inter_one, &a);
    gb_free(v);
    return a.count;
}

static void diff_one(void *ctx, gb_slice m, double s)
{
    acc *a = ctx;
    double dummy;
    for (size_t j = 1; j < a->n; j++)
        if (src_find(&a->src[j], m, &dummy))
            return;
    acc_put(a, m, s);
}

gb_zset *gb_zset_diff(const gb_zsrc *src, size_t n, const gb_types_config *cfg)
{
    acc a = {.b = big_new(), .src = src, .n = n};
    if (n && src_card(&src[0]) > 0)
        src_each(&src[0], diff_one, &a);
    return acc_finish(&a, cfg);
}

/* ---- verification ---- */

static bool vfail(char *why, size_t whylen, const char *msg)
{
    if (why && whylen)
        snprintf(why, whylen, "%s", msg);
    return false;
}

bool gb_zset_verify(const gb_zset *z, char *why, size_t whylen)
{
    if (z->enc == GB_ZSET_LISTPACK) {
        unsigned char *lp = z->p;
        if (!gb_lp_validate(lp, gb_lp_bytes(lp)))
            return vfail(why, whylen, "listpack invalid");
        if (gb_lp_count(lp) % 2)
            return vfail(why, whylen, "odd listpack entry count");
        char b1[GB_LP_INT_BUF], b2[GB_LP_INT_BUF];
        unsigned char *prev = NULL;
        for (unsigned char *p = gb_lp_first(lp); p; p = ZL_NEXT(lp, p)) {
            double s = score_decode(gb_lp_next(lp, p));
            if (isnan(s))
                return vfail(why, whylen, "NaN score");
            if (prev && pair_cmp(score_decode(gb_lp_next(lp, prev)), gb_lp_get_slice(prev, b1), s,
                                 gb_lp_get_slice(p, b2)) >= 0)
                return vfail(why, whylen, "listpack pairs out of order");
            unsigned char *q = ZL_NEXT(lp, p);
            if (q && gb_lp_find(lp, q, gb_lp_get_slice(p, b1), 1))
                return vfail(why, whylen, "duplicate member in listpack");
            prev = p;
        }
        return true;
    }
    zbig *b = z->p;
    if (!gb_zset_tree_verify(&b->tree, why, whylen))
        return false;
    if (gb_htable_size(&b->ht) != gb_zset_tree_count(&b->tree))
        return vfail(why, whylen, "hash and tree sizes differ");
    gb_zset_tree_iter it;
    gb_zset_tree_seek(&b->tree, 0, &it);
    double s;
    gb_zmember m;
    while (gb_zset_tree_next(&it, &s, &m)) {
        zrec *r = big_find(b, gb_zmember_slice(m));
        if (r != rec_of(m))
            return vfail(why, whylen, "tree entry not in the hash");
        if (memcmp(&r->score, &s, sizeof s) != 0)
            return vfail(why, whylen, "record score differs from tree score");
    }
    return true;
}
