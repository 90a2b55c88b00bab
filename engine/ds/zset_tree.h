/*
 * zset_tree: an order-statistic B+tree of (score, member) entries, the
 * ordered half of a large sorted set (engine/ds/zset.c keeps the other half,
 * member -> score, in an htable).
 *
 * Entries are ordered by score, then by member bytes (memcmp, shorter
 * first), exactly Redis's skiplist order. Inner nodes keep, for each child,
 * the number of entries under it, so rank lookups (ZRANK), select by rank
 * (ZRANGE 1000 1010) and range counts (ZCOUNT, ZLEXCOUNT) are all
 * O(log n); insert and delete are O(log n) plus a memmove inside one leaf.
 *
 * The tree does not own member bytes. An entry stores the score and a
 * pointer to a *member key*: a varint length (LEB128, 1 byte below 128)
 * followed by the bytes. t_zset points it into the member's hash record,
 * so each member's bytes exist once. Separators in inner nodes are copies
 * of (score, pointer) of the first entry of the subtree to their right; the
 * tree keeps them exact through every insert, delete and rebalance, so a
 * separator never points at freed memory.
 *
 * Node layouts (64-bit; both 1,016 bytes, so each fills one 1 KiB malloc
 * chunk with its 8-byte header; see docs/types.md for the choice):
 *
 *   leaf                       offset  size
 *     n (entries)              0       2
 *     leaf flag = 1            2       1
 *     (pad)                    3       5
 *     prev, next leaf          8       16
 *     score[62]                24      496    doubles, searched first
 *     member[62]               520     496    member key pointers
 *
 *   inner
 *     n (children)             0       2
 *     leaf flag = 0            2       1
 *     (pad)                    3       5
 *     sep_score[31]            8       248
 *     sep_member[31]           256     248
 *     child[32]                504     256
 *     count[32]                760     256    entries under each child
 *
 * Scores and member pointers sit in separate arrays so a search touches
 * only the score lines until scores tie.
 */
#ifndef GB_ENGINE_ZSET_TREE_H
#define GB_ENGINE_ZSET_TREE_H

#include "engine/base/common.h"

#define GB_ZSET_TREE_LEAF_CAP 62
#define GB_ZSET_TREE_INNER_CAP 32

/* A member key: varint length, then the bytes. */
typedef const unsigned char *gb_zmember;

/* Bytes gb_zmember_write needs for s. */
static inline size_t gb_zmember_size(size_t len)
{
    size_t n = 1;
    while (len >= 0x80) {
        len >>= 7;
        n++;
    }
    return n;
}

static inline size_t gb_zmember_write(unsigned char *dst, gb_slice s)
{
    size_t len = s.len, n = 0;
    while (len >= 0x80) {
        dst[n++] = (unsigned char)(len | 0x80);
        len >>= 7;
    }
    dst[n++] = (unsigned char)len;
    if (s.len)
        memcpy(dst + n, s.ptr, s.len);
    return n + s.len;
}

static inline gb_slice gb_zmember_slice(gb_zmember m)
{
    size_t len = m[0];
    if (GB_LIKELY(len < 0x80))
        return gb_slice_make((const char *)m + 1, len);
    len &= 0x7f;
    unsigned shift = 7;
    size_t i = 1;
    for (;;) {
        unsigned char b = m[i++];
        len |= (size_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
        shift += 7;
    }
    return gb_slice_make((const char *)m + i, len);
}

typedef struct gb_zset_tree {
    void *root;      /* NULL when empty */
    void *first;     /* leftmost leaf */
    void *last;      /* rightmost leaf */
    uint64_t count;  /* entries */
    uint32_t height; /* 0 empty, 1 = the root is a leaf */
    uint32_t leaves;
    uint32_t inners;
} gb_zset_tree;

void gb_zset_tree_init(gb_zset_tree *t);
/* Frees every node; calls fn (may be NULL) on each entry first, in order. */
void gb_zset_tree_clear(gb_zset_tree *t, void (*fn)(double score, gb_zmember m, void *ctx), void *ctx);

static inline uint64_t gb_zset_tree_count(const gb_zset_tree *t) { return t->count; }
/* Bytes held by the nodes (not the member keys). */
size_t gb_zset_tree_bytes(const gb_zset_tree *t);

/* Inserts (score, m); the caller guarantees the member is not in the tree.
 * score must not be NaN. */
void gb_zset_tree_insert(gb_zset_tree *t, double score, gb_zmember m);
/* Removes the entry (score, member); returns its member key pointer (for the
 * caller to free) or NULL when absent. */
gb_zmember gb_zset_tree_delete(gb_zset_tree *t, double score, gb_slice member);
/* Changes the score of an existing entry (in place when the order allows). */
void gb_zset_tree_update(gb_zset_tree *t, double old_score, gb_zmember m, double new_score);

/* Counting: the number of entries before a bound. */
typedef enum gb_zset_tree_bound {
    GB_ZB_KEY_LT,   /* (score, member) <  (s, m): the rank of (s, m) */
    GB_ZB_KEY_LE,   /* (score, member) <= (s, m) */
    GB_ZB_SCORE_LT, /* score <  s */
    GB_ZB_SCORE_LE, /* score <= s */
    GB_ZB_LEX_LT,   /* member <  m (meaningful when all scores are equal) */
    GB_ZB_LEX_LE,   /* member <= m */
} gb_zset_tree_bound;

uint64_t gb_zset_tree_count_before(const gb_zset_tree *t, gb_zset_tree_bound kind, double s, gb_slice m);

/* A position for walking entries in either direction. */
typedef struct gb_zset_tree_iter {
    const void *leaf;
    int idx;
} gb_zset_tree_iter;

/* Positions it at rank (0-based); false (and an exhausted iterator) when
 * rank >= count. */
bool gb_zset_tree_seek(const gb_zset_tree *t, uint64_t rank, gb_zset_tree_iter *it);
/* Reads the entry under it and moves forward (next) or backward (prev);
 * false when the iterator is exhausted. */
bool gb_zset_tree_next(gb_zset_tree_iter *it, double *score, gb_zmember *m);
bool gb_zset_tree_prev(gb_zset_tree_iter *it, double *score, gb_zmember *m);

/* Removes count entries starting at rank, calling fn on each (in order)
 * before the tree forgets it. O(count + (count / leaf size) * log n). */
void gb_zset_tree_delete_range(gb_zset_tree *t, uint64_t rank, uint64_t count,
                               void (*fn)(double score, gb_zmember m, void *ctx), void *ctx);

/* Full structural check (orders, counts, separators, links, fill bounds,
 * uniform height). Returns true when sound; on failure writes a reason. */
bool gb_zset_tree_verify(const gb_zset_tree *t, char *why, size_t whylen);

#endif
