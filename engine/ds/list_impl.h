/*
 * Private contract between engine/ds/list.c and the three list representations
 * (list_compact.c, list_segmented.c, list_pma.c). Nothing outside those four
 * files includes it.
 *
 * list.c normalises every argument first: indexes reaching a representation
 * are in range (0 <= idx < len, or idx == len for an insertion at the end),
 * counts are clamped, and representation changes happen only in list.c.
 * Each representation offers the same verbs:
 *
 *   push(end, v)            one value at an end
 *   pop(end, count, emit)   count <= len values, emitted before release
 *   get(idx) / set(idx, v)
 *   visit(first, last, rev) inclusive index range, stops when visit says so
 *   insert_at(idx, v)       v becomes index idx (idx == len appends)
 *   remove(v, count)        LREM semantics
 *   trim(head, tail)        drop head values at the front, tail at the back
 *   rotate(from)            move the value at `from` to the other end
 *   lp_bytes()              bytes the values would take as listpack entries
 *                           (decides the conversion back to compact)
 *   mem()/verify()
 */
#ifndef GB_ENGINE_LIST_IMPL_H
#define GB_ENGINE_LIST_IMPL_H

#include <stdio.h>

#include "engine/ds/list.h"
#include "engine/ds/listpack.h"

/* Size limit derived from list-max-listpack-size, applied to a whole compact
 * list and to each segmented leaf (the way Redis applies `fill` to each
 * quicklist node). A block may exceed it only when it holds one value. */
typedef struct gb_list_limit {
    uint32_t max_count; /* entries */
    uint32_t max_bytes; /* listpack bytes incl. header and END */
} gb_list_limit;

/* Redis's SIZE_SAFETY_LIMIT: a count-limited node still stays under 8 KiB. */
#define GB_LIST_SAFETY_BYTES 8192u

static inline gb_list_limit gb_list_limit_from_fill(int fill)
{
    gb_list_limit lim;
    if (fill > 0) {
        lim.max_count = (uint32_t)fill;
        lim.max_bytes = GB_LIST_SAFETY_BYTES;
    } else if (fill == 0) {
        lim.max_count = 1;
        lim.max_bytes = GB_LIST_SAFETY_BYTES;
    } else {
        int level = fill < -5 ? 5 : -fill; /* 1..5 -> 4..64 KiB */
        lim.max_count = UINT32_MAX;
        lim.max_bytes = 4096u << (level - 1);
    }
    return lim;
}

static inline bool gb_list_limit_exceeded(const gb_list_limit *lim, size_t bytes, size_t count)
{
    return count > lim->max_count || bytes > lim->max_bytes;
}

/* Diagnostics for the verify functions. */
#define GB_LIST_CHECK(cond, ...)                                                                   \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "list verify: " __VA_ARGS__);                                          \
            fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__);                                     \
            return false;                                                                          \
        }                                                                                          \
    } while (0)

/* ---- compact: a bare listpack (list_compact.c) ---- */

void gb_list_compact_push(unsigned char **lpp, gb_list_end end, gb_slice v);
size_t gb_list_compact_pop(unsigned char **lpp, gb_list_end end, size_t count,
                           gb_list_emit_fn emit, void *ctx);
void gb_list_compact_get(unsigned char *lp, size_t idx, char *buf, gb_slice *out);
void gb_list_compact_set(unsigned char **lpp, size_t idx, gb_slice v);
size_t gb_list_compact_visit(unsigned char *lp, size_t first, size_t last, bool rev,
                             gb_list_visit_fn visit, void *ctx);
void gb_list_compact_insert_at(unsigned char **lpp, size_t idx, gb_slice v);
size_t gb_list_compact_remove(unsigned char **lpp, gb_slice v, long long count);
void gb_list_compact_trim(unsigned char **lpp, size_t head, size_t tail);
void gb_list_compact_rotate(unsigned char **lpp, gb_list_end from);
bool gb_list_compact_verify(const unsigned char *lp, const gb_list_limit *lim);

/* ---- segmented (list_segmented.c) ---- */

typedef struct gb_list_seg gb_list_seg;

gb_list_seg *gb_list_seg_new(gb_list_limit lim);
/* Builds a segmented list holding the entries of lp (copied raw), its
 * interior leaves compressed per list-compress-depth `depth` (0 = none). */
gb_list_seg *gb_list_seg_from_listpack(const unsigned char *lp, gb_list_limit lim,
                                       unsigned depth);
/* A new listpack with every entry (copied raw). */
unsigned char *gb_list_seg_to_listpack(gb_list_seg *s);
/* list-compress-depth: the `depth` leaves at each end stay plain, the
 * interior ones are LZF-compressed (Redis's quicklist rules); 0 = off. */
void gb_list_seg_set_compress_depth(gb_list_seg *s, unsigned depth);
/* Leaves stored compressed right now (tests, DEBUG OBJECT). */
size_t gb_list_seg_compressed(const gb_list_seg *s);
/* Compressions tried and inflations done since creation (tests: the ends
 * pay only for what the depth requires). */
void gb_list_seg_compress_work(const gb_list_seg *s, size_t *deflates, size_t *inflates);
void gb_list_seg_free(gb_list_seg *s);
size_t gb_list_seg_len(const gb_list_seg *s);
size_t gb_list_seg_lp_bytes(const gb_list_seg *s);
void gb_list_seg_push(gb_list_seg *s, gb_list_end end, gb_slice v);
size_t gb_list_seg_pop(gb_list_seg *s, gb_list_end end, size_t count, gb_list_emit_fn emit,
                       void *ctx);
void gb_list_seg_get(gb_list_seg *s, size_t idx, char *buf, gb_slice *out);
void gb_list_seg_set(gb_list_seg *s, size_t idx, gb_slice v);
size_t gb_list_seg_visit(gb_list_seg *s, size_t first, size_t last, bool rev,
                         gb_list_visit_fn visit, void *ctx);
void gb_list_seg_insert_at(gb_list_seg *s, size_t idx, gb_slice v);
size_t gb_list_seg_remove(gb_list_seg *s, gb_slice v, long long count);
void gb_list_seg_trim(gb_list_seg *s, size_t head, size_t tail);
void gb_list_seg_rotate(gb_list_seg *s, gb_list_end from);
size_t gb_list_seg_mem(const gb_list_seg *s);
bool gb_list_seg_verify(const gb_list_seg *s);
/* Leaves currently in use (tests and docs). */
size_t gb_list_seg_leaves(const gb_list_seg *s);

/* ---- adaptive PMA (list_pma.c) ---- */

typedef struct gb_list_pma gb_list_pma;

gb_list_pma *gb_list_pma_new(void);
/* Builds a PMA list holding the entries of lp (no insertion prediction). */
gb_list_pma *gb_list_pma_from_listpack(const unsigned char *lp);
void gb_list_pma_free(gb_list_pma *p);
size_t gb_list_pma_len(const gb_list_pma *p);
size_t gb_list_pma_lp_bytes(const gb_list_pma *p);
void gb_list_pma_push(gb_list_pma *p, gb_list_end end, gb_slice v);
size_t gb_list_pma_pop(gb_list_pma *p, gb_list_end end, size_t count, gb_list_emit_fn emit,
                       void *ctx);
void gb_list_pma_get(gb_list_pma *p, size_t idx, gb_slice *out);
void gb_list_pma_set(gb_list_pma *p, size_t idx, gb_slice v);
size_t gb_list_pma_visit(gb_list_pma *p, size_t first, size_t last, bool rev,
                         gb_list_visit_fn visit, void *ctx);
void gb_list_pma_insert_at(gb_list_pma *p, size_t idx, gb_slice v);
size_t gb_list_pma_remove(gb_list_pma *p, gb_slice v, long long count);
void gb_list_pma_trim(gb_list_pma *p, size_t head, size_t tail);
void gb_list_pma_rotate(gb_list_pma *p, gb_list_end from);
size_t gb_list_pma_mem(const gb_list_pma *p);
bool gb_list_pma_verify(const gb_list_pma *p);

/* Counters of the PMA's work, for tests and the benchmark (not hot). */
typedef struct gb_list_pma_stats {
    size_t capacity;      /* slots */
    size_t segment_slots; /* slots per segment */
    size_t rebalances;    /* window rebalances since creation */
    size_t resizes;       /* grow/shrink rebuilds since creation */
    size_t moved;         /* slots moved by rebalances and resizes */
} gb_list_pma_stats;
void gb_list_pma_get_stats(const gb_list_pma *p, gb_list_pma_stats *out);
/* Turns the insertion predictor off (the classic, evenly spread PMA) or on
 * (default), to measure what adaptivity buys. */
void gb_list_pma_set_adaptive(gb_list_pma *p, bool on);

#endif
