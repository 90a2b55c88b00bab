/*
 * Compact list representation: the whole list is one listpack
 * (engine/ds/listpack.h). Small by construction (list.c converts past
 * list-max-listpack-size), so O(n) walks and one memmove per mutation are
 * cheaper than any pointer structure at this size.
 */
#include "engine/ds/list_impl.h"
#include "engine/base/mem.h"

void gb_list_compact_push(unsigned char **lpp, gb_list_end end, gb_slice v)
{
    *lpp = end == GB_LIST_HEAD ? gb_lp_prepend(*lpp, v) : gb_lp_append(*lpp, v);
}

size_t gb_list_compact_pop(unsigned char **lpp, gb_list_end end, size_t count,
                           gb_list_emit_fn emit, void *ctx)
{
    unsigned char *lp = *lpp;
    size_t n = gb_lp_count(lp);
    if (count > n)
        count = n;
    if (count == 0)
        return 0;
    if (emit) {
        char buf[GB_LP_INT_BUF];
        unsigned char *p = end == GB_LIST_HEAD ? gb_lp_first(lp) : gb_lp_last(lp);
        for (size_t i = 0; i < count; i++) {
            emit(ctx, gb_lp_get_slice(p, buf));
            p = end == GB_LIST_HEAD ? gb_lp_next(lp, p) : gb_lp_prev(lp, p);
        }
    }
    /* one range deletion: a single memmove of what remains */
    *lpp = end == GB_LIST_HEAD ? gb_lp_trim_range(lp, count, 0) : gb_lp_trim_range(lp, 0, count);
    return count;
}

void gb_list_compact_get(unsigned char *lp, size_t idx, char *buf, gb_slice *out)
{
    *out = gb_lp_get_slice(gb_lp_seek(lp, (long)idx), buf);
}

void gb_list_compact_set(unsigned char **lpp, size_t idx, gb_slice v)
{
    unsigned char *p = gb_lp_seek(*lpp, (long)idx);
    *lpp = gb_lp_replace(*lpp, &p, v);
}

size_t gb_list_compact_visit(unsigned char *lp, size_t first, size_t last, bool rev,
                             gb_list_visit_fn visit, void *ctx)
{
    char buf[GB_LP_INT_BUF];
    size_t done = 0;
    if (!rev) {
        unsigned char *p = gb_lp_seek(lp, (long)first);
        for (size_t i = first; i <= last; i++, p = gb_lp_next(lp, p)) {
            done++;
            if (!visit(ctx, i, gb_lp_get_slice(p, buf)))
                break;
        }
    } else {
        unsigned char *p = gb_lp_seek(lp, (long)last);
        for (size_t i = last + 1; i-- > first; p = gb_lp_prev(lp, p)) {
            done++;
            if (!visit(ctx, i, gb_lp_get_slice(p, buf)))
                break;
        }
    }
    return done;
}

void gb_list_compact_insert_at(unsigned char **lpp, size_t idx, gb_slice v)
{
    unsigned char *p = gb_lp_seek(*lpp, (long)idx); /* NULL at idx == len: append */
    *lpp = gb_lp_insert(*lpp, p, false, v, NULL);
}

size_t gb_list_compact_remove(unsigned char **lpp, gb_slice v, long long count)
{
    unsigned char *lp = *lpp;
    size_t removed = 0;
    size_t limit = count == 0 ? SIZE_MAX : (count < 0 ? (size_t)0 - (size_t)count : (size_t)count); /* no signed negation: count may be LLONG_MIN */
    if (count >= 0) {
        unsigned char *p = gb_lp_first(lp);
        while (p && removed < limit) {
            p = gb_lp_find(lp, p, v, 0);
            if (!p)
                break;
            lp = gb_lp_delete(lp, p, &p);
            removed++;
        }
    } else {
        unsigned char *p = gb_lp_last(lp);
        while (p && removed < limit) {
            if (gb_lp_eq(p, v)) {
                unsigned char *prev = gb_lp_prev(lp, p);
                size_t off = prev ? (size_t)(prev - lp) : 0;
                lp = gb_lp_delete(lp, p, NULL);
                p = prev ? lp + off : NULL;
                removed++;
            } else {
                p = gb_lp_prev(lp, p);
            }
        }
    }
    *lpp = lp;
    return removed;
}

void gb_list_compact_trim(unsigned char **lpp, size_t head, size_t tail)
{
    *lpp = gb_lp_trim_range(*lpp, head, tail);
}

void gb_list_compact_rotate(unsigned char **lpp, gb_list_end from)
{
    unsigned char *lp = *lpp;
    if (gb_lp_count(lp) < 2)
        return;
    /* Both directions copy the moving entry inside the block itself: grow by
     * its size, shift, copy, cut. No temporary buffer, one memmove. */
    size_t total = gb_lp_bytes(lp);
    if (from == GB_LIST_HEAD) {
        size_t e = gb_lp_entry_bytes(lp + GB_LP_HEADER_SIZE);
        unsigned char *q = gb_mem_usable(lp) >= total + e ? lp : gb_realloc(lp, total + e);
        /* [H][E][rest][END] -> [H][E][rest][E][END] -> [H][rest][E][END] */
        memcpy(q + total - 1, q + GB_LP_HEADER_SIZE, e);
        memmove(q + GB_LP_HEADER_SIZE, q + GB_LP_HEADER_SIZE + e, total - 1 - GB_LP_HEADER_SIZE);
        q[total - 1] = 0xFF;
        *lpp = q;
        return;
    }
    unsigned char *end = lp + total - 1;
    size_t e = gb_lp_prev_entry_bytes(end);
    size_t t = total - 1 - e; /* offset of the tail entry */
    unsigned char *q = gb_mem_usable(lp) >= total + e ? lp : gb_realloc(lp, total + e);
    /* [H][rest][T][END] -> [H][gap][rest][T] -> [H][T][rest][END] */
    memmove(q + GB_LP_HEADER_SIZE + e, q + GB_LP_HEADER_SIZE, t + e - GB_LP_HEADER_SIZE);
    memcpy(q + GB_LP_HEADER_SIZE, q + t + e, e);
    q[total - 1] = 0xFF;
    *lpp = q;
}

bool gb_list_compact_verify(const unsigned char *lp, const gb_list_limit *lim)
{
    GB_LIST_CHECK(lp != NULL, "compact list without a listpack");
    GB_LIST_CHECK(gb_lp_validate(lp, gb_lp_bytes(lp)), "listpack fails validation");
    size_t n = gb_lp_count(lp);
    GB_LIST_CHECK(!gb_list_limit_exceeded(lim, gb_lp_bytes(lp), n),
                  "compact list over list-max-listpack-size: %zu entries, %zu bytes", n,
                  gb_lp_bytes(lp));
    return true;
}
