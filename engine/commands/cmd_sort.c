/* SORT and SORT_RO: Redis 7.0's options, order, errors and STORE, around
 * the source reader of engine/types/t_sort.h.
 *
 * What decides the order, as Redis's sortCompare:
 *   numeric   the weights as doubles (strtod, as Redis), equal weights by
 *             the elements' bytes, so the order is total;
 *   ALPHA     the elements (or BY values) by strcoll (the server collates
 *             as the environment's LC_COLLATE says, like redis-server), or
 *             by their bytes with STORE; a missing BY value sorts first.
 * Two elements ALPHA calls equal (the same BY value, or both missing) end
 * where Redis's algorithm leaves them: glibc's qsort, a stable merge sort
 * (so does this file), or with BY and a LIMIT Redis's partial quicksort
 * (this file runs the same steps). A list is read in list order, as in
 * Redis, so its ties come out alike; a set or a sorted set is read in its
 * own iteration order, which is not Redis's, so only there can the order
 * of such ties differ. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/commands/cmd_util.h"
#include "engine/base/mem.h"
#include "engine/base/strbuf.h"
#include "engine/base/util.h"
#include "engine/core/acl/acl.h"
#include "engine/types/t_hash.h"
#include "engine/types/t_list.h"
#include "engine/types/t_sort.h"
#include "engine/types/t_string.h"

/* ---- patterns (BY and GET) ---- */

/* A BY or GET pattern taken apart once (Redis's lookupKeyByPattern): "#"
 * is the element itself; otherwise the first '*' takes the element, and a
 * "->field" after it reads that field of a hash instead of a string. */
typedef struct sort_pattern {
    bool self;       /* "#" */
    bool usable;     /* has a '*' (a pattern without one finds nothing) */
    gb_slice prefix; /* before the '*' */
    gb_slice suffix; /* after it, up to the "->" */
    gb_slice field;  /* after the "->"; len 0: a string key */
} sort_pattern;

static sort_pattern pattern_parse(gb_slice pat)
{
    sort_pattern p = {0};
    gb_slice text = gb_arg_text(pat);
    p.self = text.len == 1 && text.ptr[0] == '#';
    const char *star = memchr(text.ptr, '*', text.len);
    p.usable = star != NULL;
    if (p.self || !star)
        return p;
    size_t at = (size_t)(star - pat.ptr), end = pat.len;
    for (size_t i = at + 1; i + 2 < text.len; i++) {
        /* The first "->" followed by a byte that is not the terminator. */
        if (text.ptr[i] == '-' && text.ptr[i + 1] == '>') {
            p.field = gb_slice_make(pat.ptr + i + 2, pat.len - i - 2);
            end = i;
            break;
        }
    }
    p.prefix = gb_slice_make(pat.ptr, at);
    p.suffix = gb_slice_make(pat.ptr + at + 1, end - at - 1);
    return p;
}

/* Space for what a pattern lookup returns: the key it builds and an
 * integer rendered as text. */
typedef struct lookup_buf {
    gb_strbuf key;
    char num[32]; /* GB_INT_BUF for strings, GB_HASH_VALUE_BUF for hash fields */
} lookup_buf;

/* The value the pattern names for elem, borrowed until the next write;
 * false when there is none (a missing key or field, another type). */
static bool pattern_lookup(gb_db *db, const sort_pattern *p, gb_slice elem, lookup_buf *b, gb_slice *out)
{
    if (p->self) {
        *out = elem;
        return true;
    }
    if (!p->usable)
        return false;
    gb_strbuf_reset(&b->key);
    gb_strbuf_add(&b->key, p->prefix.ptr, p->prefix.len);
    gb_strbuf_add(&b->key, elem.ptr, elem.len);
    gb_strbuf_add(&b->key, p->suffix.ptr, p->suffix.len);
    gb_slice key = gb_slice_make(b->key.p ? b->key.p : "", b->key.len);
    gb_result r = p->field.len ? gb_hash_hget(db, key, p->field, out, b->num) : gb_string_get(db, key, out, b->num);
    return r == GB_R_OK;
}

/* ---- options ---- */

typedef struct sort_opts {
    bool desc, alpha, dontsort;
    int64_t limit_start, limit_count;
    const gb_slice *by;    /* NULL: none */
    const gb_slice *store; /* NULL: reply */
    sort_pattern *gets;
    int ngets;
} sort_opts;

/* Whether BY (with a real pattern) and GET may read keys named by the data:
 * not in cluster mode, and only for a user who may read every key (Redis
 * 7.0). */
static bool may_read_any_key(gb_client *c, int argc, gb_slice *argv, const char *option)
{
    /* In cluster mode the keys a pattern names may live on other nodes. */
    if (c->eng->cluster) {
        gb_reply_errorf(c, "ERR %s option of SORT denied in Cluster mode.", option);
        return false;
    }
    /* The command by its name: last_cmd is EXEC's inside a transaction. */
    const gb_command *self = gb_command_lookup(c->eng, argv[0]);
    if (!self || gb_acl_unrestricted_keys(c, self, argc, argv, GB_KS_ACCESS))
        return true;
    gb_reply_errorf(c, "ERR %s option of SORT denied due to insufficient ACL permissions.", option);
    return false;
}

/* Redis's option loop: left to right, the last ASC/DESC wins; an error
 * stops it (replied). */
static bool parse_options(gb_client *c, int argc, gb_slice *argv, bool readonly, sort_opts *o)
{
    for (int j = 2; j < argc; j++) {
        int left = argc - j - 1;
        gb_slice a = argv[j];
        if (gb_arg_is(a, "asc")) {
            o->desc = false;
        } else if (gb_arg_is(a, "desc")) {
            o->desc = true;
        } else if (gb_arg_is(a, "alpha")) {
            o->alpha = true;
        } else if (gb_arg_is(a, "limit") && left >= 2) {
            if (!gb_arg_ll(c, argv[j + 1], &o->limit_start) || !gb_arg_ll(c, argv[j + 2], &o->limit_count))
                return false;
            j += 2;
        } else if (!readonly && gb_arg_is(a, "store") && left >= 1) {
            o->store = &argv[++j];
        } else if (gb_arg_is(a, "by") && left >= 1) {
            o->by = &argv[++j];
            /* A constant BY means no sorting and no weight lookups. */
            o->dontsort = memchr(gb_arg_text(*o->by).ptr, '*', gb_arg_text(*o->by).len) == NULL;
            if (!o->dontsort && !may_read_any_key(c, argc, argv, "BY"))
                return false;
        } else if (gb_arg_is(a, "get") && left >= 1) {
            if (!may_read_any_key(c, argc, argv, "GET"))
                return false;
            o->gets[o->ngets++] = pattern_parse(argv[++j]);
        } else {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

/* ---- the elements ---- */

typedef struct sort_item {
    gb_slice elem;  /* NUL-terminated (strcoll), in the arena */
    double score;   /* numeric sort */
    gb_slice cmp;   /* ALPHA BY: the BY value, NUL-terminated; ptr NULL when missing */
} sort_item;

/* The elements read from the source. Their bytes go into one arena; the
 * items hold offsets until loading ends (the arena moves as it grows). */
typedef struct sort_vec {
    sort_item *items;
    size_t n, cap;
    gb_strbuf arena;
} sort_vec;

static size_t arena_add(gb_strbuf *a, gb_slice v)
{
    size_t off = a->len;
    gb_strbuf_add(a, v.ptr, v.len);
    gb_strbuf_addc(a, '\0');
    return off;
}

static void vec_add(void *ctx, gb_slice v)
{
    sort_vec *vec = ctx;
    if (vec->n == vec->cap) {
        vec->cap = vec->cap ? vec->cap * 2 : 16;
        vec->items = gb_realloc(vec->items, vec->cap * sizeof *vec->items);
    }
    sort_item *it = &vec->items[vec->n++];
    size_t off = arena_add(&vec->arena, v);
    it->elem = gb_slice_make((const char *)(uintptr_t)off, v.len);
    it->score = 0;
    it->cmp = gb_slice_make(NULL, 0);
}

/* Offsets into the arena become pointers (a NULL cmp stays NULL: offsets
 * are stored plus one). */
static void vec_resolve(sort_vec *vec)
{
    for (size_t i = 0; i < vec->n; i++) {
        sort_item *it = &vec->items[i];
        it->elem.ptr = vec->arena.p + (uintptr_t)it->elem.ptr;
        if (it->cmp.ptr)
            it->cmp.ptr = vec->arena.p + (uintptr_t)it->cmp.ptr - 1;
    }
}

static gb_slice vec_elem(const sort_vec *vec, size_t i)
{
    return gb_slice_make(vec->arena.p + (uintptr_t)vec->items[i].elem.ptr, vec->items[i].elem.len);
}

/* An integer weight (Redis keeps such values as integers and converts
 * them without strtod): the same double strtod gives, correctly rounded
 * either way, without its cost. */
static bool integer_weight(const char *s, size_t len, double *out)
{
    int64_t v;
    if (!gb_str2ll(s, len, &v))
        return false;
    *out = (double)v;
    return true;
}

/* Redis's weight parse: strtod over the text up to its first NUL, which
 * must end there, neither overflowing nor underflowing nor NaN; the empty
 * string is 0. text is NUL-terminated at text[len] or earlier. */
static bool parse_weight_text(const char *text, size_t len, double *out)
{
    if (integer_weight(text, len, out))
        return true;
    char *end;
    errno = 0;
    *out = strtod(text, &end);
    return *end == '\0' && errno != ERANGE && !isnan(*out);
}

/* A weight read from another key: its text NUL-terminated in scratch. */
static bool parse_weight(gb_slice v, gb_strbuf *scratch, double *out)
{
    if (integer_weight(v.ptr, v.len, out))
        return true;
    gb_slice text = gb_arg_text(v);
    gb_strbuf_reset(scratch);
    gb_strbuf_add(scratch, text.ptr, text.len);
    return parse_weight_text(gb_strbuf_cstr(scratch), text.len, out);
}

/* The weights (or ALPHA BY values) of every element. Returns false when a
 * weight is not a number (the caller then errs, sorting nothing). */
static bool load_weights(gb_db *db, const sort_opts *o, const sort_pattern *by, sort_vec *vec)
{
    if (o->alpha && !by)
        return true; /* ALPHA compares the elements themselves */
    lookup_buf lb = {0};
    gb_strbuf scratch = {0};
    bool ok = true;
    for (size_t i = 0; i < vec->n; i++) {
        gb_slice elem = vec_elem(vec, i), w = elem;
        if (!by && !o->alpha) { /* the element itself, NUL-terminated in the arena */
            ok &= parse_weight_text(elem.ptr, elem.len, &vec->items[i].score);
            continue;
        }
        if (by && !pattern_lookup(db, by, elem, &lb, &w))
            continue;
        if (o->alpha) /* w is in the database, never in the arena it grows */
            vec->items[i].cmp = gb_slice_make((const char *)(uintptr_t)(arena_add(&vec->arena, w) + 1), w.len);
        else if (!parse_weight(w, &scratch, &vec->items[i].score))
            ok = false;
    }
    gb_strbuf_free(&lb.key);
    gb_strbuf_free(&scratch);
    return ok;
}

/* ---- sorting ---- */

typedef struct sort_order {
    bool alpha, by, binary, desc;
} sort_order;

/* What the sort moves: the item, with a numeric sort's weight beside it so
 * that most comparisons read nothing else. */
typedef struct sort_key {
    double score;
    sort_item *it;
} sort_key;

static int sign(int v) { return (v > 0) - (v < 0); }

/* ALPHA: the BY values (a missing one first) or the elements. */
static int compare_alpha(const sort_item *a, const sort_item *b, const sort_order *k)
{
    if (k->by) {
        if (!a->cmp.ptr || !b->cmp.ptr)
            return a->cmp.ptr == b->cmp.ptr ? 0 : !a->cmp.ptr ? -1 : 1;
        return k->binary ? gb_slice_cmp(a->cmp, b->cmp) : sign(strcoll(a->cmp.ptr, b->cmp.ptr));
    }
    return k->binary ? gb_slice_cmp(a->elem, b->elem) : sign(strcoll(a->elem.ptr, b->elem.ptr));
}

static inline int compare_keys(const sort_key *a, const sort_key *b, const sort_order *k)
{
    int cmp = !k->alpha ? (a->score > b->score   ? 1
                           : a->score < b->score ? -1
                                                 : sign(gb_slice_cmp(a->it->elem, b->it->elem)))
                        : compare_alpha(a->it, b->it, k);
    return k->desc ? -cmp : cmp;
}

/* A stable merge sort (ties keep their reading order, as glibc's qsort). */
static void merge_sort(sort_key *v, sort_key *tmp, size_t n, const sort_order *k)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    merge_sort(v, tmp, h, k);
    merge_sort(v + h, tmp, n - h, k);
    if (compare_keys(&v[h - 1], &v[h], k) <= 0)
        return; /* already in order (a sorted or nearly sorted input) */
    memcpy(tmp, v, h * sizeof *v);
    size_t i = 0, j = h, o = 0;
    while (i < h && j < n)
        v[o++] = compare_keys(&v[j], &tmp[i], k) < 0 ? v[j++] : tmp[i++];
    while (i < h)
        v[o++] = tmp[i++];
}

/* Restores the max-heap v[0..n) below position i. */
static void sift_down(sort_key *v, size_t n, size_t i, const sort_order *k)
{
    for (;;) {
        size_t big = i, l = 2 * i + 1, r = l + 1;
        if (l < n && compare_keys(&v[l], &v[big], k) > 0)
            big = l;
        if (r < n && compare_keys(&v[r], &v[big], k) > 0)
            big = r;
        if (big == i)
            return;
        sort_key t = v[i];
        v[i] = v[big];
        v[big] = t;
        i = big;
    }
}

/* The first m of n in order, sorted, in v[0..m): the m smallest kept in a
 * max-heap while the rest stream past, then sorted. Only for an order
 * with no ties between different elements (numeric), where any algorithm
 * gives the same result. */
static void partial_sort(sort_key *v, sort_key *tmp, size_t n, size_t m, const sort_order *k)
{
    for (size_t i = m / 2; i-- > 0;)
        sift_down(v, m, i, k);
    for (size_t i = m; i < n; i++) {
        if (compare_keys(&v[i], &v[0], k) < 0) {
            sort_key t = v[0];
            v[0] = v[i];
            v[i] = t;
            sift_down(v, m, 0, k);
        }
    }
    merge_sort(v, tmp, m, k);
}

/* ---- Redis's partial quicksort (SORT ... BY ... LIMIT) ----
 *
 * Where an order has ties between different elements (ALPHA BY: equal or
 * missing BY values), which of them comes first is the algorithm's
 * choice; Redis makes it with its pqsort (Bentley and McIlroy's quicksort
 * that leaves alone the partitions outside the LIMIT window) when BY and a
 * LIMIT are given. This is the same algorithm, step for step, so a list
 * (read in the same order as Redis reads it) comes out the same. It
 * differs in two ways that do not change the result: it recurses into the
 * smaller partition and loops on the other (the partitions are disjoint,
 * so the order they are sorted in does not matter), and a partition that
 * needs more than 4 log2(n) + 16 levels (inputs built to make quicksort
 * quadratic) is merge-sorted instead. */

static void swap_keys(sort_key *a, sort_key *b)
{
    sort_key t = *a;
    *a = *b;
    *b = t;
}

static void swap_runs(sort_key *a, sort_key *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        swap_keys(a + i, b + i);
}

static sort_key *median3(sort_key *a, sort_key *b, sort_key *c, const sort_order *k)
{
    return compare_keys(a, b, k) < 0 ? (compare_keys(b, c, k) < 0 ? b : compare_keys(a, c, k) < 0 ? c : a)
                                     : (compare_keys(b, c, k) > 0 ? b : compare_keys(a, c, k) < 0 ? a : c);
}

typedef struct pq_window {
    const sort_key *lo, *hi; /* the first and last positions wanted */
    const sort_order *k;
    sort_key *tmp;           /* for the merge-sort fallback */
} pq_window;

static bool pq_wanted(const pq_window *w, const sort_key *a, size_t n)
{
    return !(w->hi < a || w->lo > a + n - 1);
}

static void pq_insertion(sort_key *a, size_t n, const sort_order *k)
{
    for (sort_key *pm = a + 1; pm < a + n; pm++)
        for (sort_key *pl = pm; pl > a && compare_keys(pl - 1, pl, k) > 0; pl--)
            swap_keys(pl, pl - 1);
}

/* Bentley-McIlroy's pivot: the middle, the median of three, or for more
 * than 40 elements the median of three medians. */
static sort_key *pq_pivot(sort_key *a, size_t n, const sort_order *k)
{
    sort_key *pm = a + n / 2;
    if (n > 7) {
        sort_key *pl = a, *pn = a + n - 1;
        if (n > 40) {
            size_t d = n / 8;
            pl = median3(pl, pl + d, pl + 2 * d, k);
            pm = median3(pm - d, pm, pm + d, k);
            pn = median3(pn - 2 * d, pn - d, pn, k);
        }
        pm = median3(pl, pm, pn, k);
    }
    return pm;
}

static void pq_sort(const pq_window *w, sort_key *a, size_t n, int budget)
{
    const sort_order *k = w->k;
    for (;;) {
        if (n < 7) {
            pq_insertion(a, n, k);
            return;
        }
        if (budget-- <= 0) {
            merge_sort(a, w->tmp, n, k);
            return;
        }
        swap_keys(a, pq_pivot(a, n, k));
        /* Three-way partition: elements equal to the pivot gather at both
         * ends, then move to the middle. */
        sort_key *pa = a + 1, *pb = a + 1, *pc = a + n - 1, *pd = a + n - 1;
        for (;;) {
            int r;
            while (pb <= pc && (r = compare_keys(pb, a, k)) <= 0) {
                if (r == 0)
                    swap_keys(pa++, pb);
                pb++;
            }
            while (pb <= pc && (r = compare_keys(pc, a, k)) >= 0) {
                if (r == 0)
                    swap_keys(pc, pd--);
                pc--;
            }
            if (pb > pc)
                break;
            swap_keys(pb++, pc--);
        }
        sort_key *pn = a + n;
        size_t r = GB_MIN((size_t)(pa - a), (size_t)(pb - pa));
        swap_runs(a, pb - r, r);
        r = GB_MIN((size_t)(pd - pc), (size_t)(pn - pd - 1));
        swap_runs(pb, pn - r, r);
        size_t nl = (size_t)(pb - pa), nr = (size_t)(pd - pc);
        sort_key *left = a, *right = pn - nr;
        bool want_l = nl > 1 && pq_wanted(w, left, nl), want_r = nr > 1 && pq_wanted(w, right, nr);
        if (want_l && want_r && nl < nr) {
            pq_sort(w, left, nl, budget);
            want_l = false;
        } else if (want_l && want_r) {
            pq_sort(w, right, nr, budget);
            want_r = false;
        }
        if (want_l) {
            n = nl;
        } else if (want_r) {
            a = right;
            n = nr;
        } else {
            return;
        }
    }
}

/* Puts v in SORT's order, at least at positions start..end (a LIMIT's
 * window): the order Redis's own algorithm gives wherever ties are
 * possible (stable merge sort; its partial quicksort for BY with a LIMIT),
 * a bounded heap where the order is total and the window small. */
static void sort_keys(sort_key *v, size_t n, int64_t start, int64_t end, const sort_order *k)
{
    if (end < start || end < 0)
        return; /* nothing will be output */
    sort_key *tmp = gb_malloc((n / 2 + 1) * sizeof *tmp);
    size_t m = (size_t)end + 1;
    bool window = start != 0 || (size_t)end != n - 1;
    if (!k->alpha && m <= n / 2) {
        partial_sort(v, tmp, n, m, k);
    } else if (k->alpha && k->by && window) {
        int depth = 0;
        for (size_t x = n; x > 1; x >>= 1)
            depth += 4;
        pq_window w = {v + start, v + end, k, tmp};
        pq_sort(&w, v, n, depth + 16);
    } else {
        merge_sort(v, tmp, n, k);
    }
    gb_free(tmp);
}

/* ---- output ---- */

static void reply_sorted(gb_client *c, const sort_opts *o, const sort_key *v, int64_t start, int64_t end)
{
    int64_t count = end - start + 1;
    gb_reply_array(c, o->ngets ? o->ngets * count : count);
    lookup_buf lb = {0};
    for (int64_t j = start; j <= end; j++) {
        if (!o->ngets)
            gb_reply_slice(c, v[j].it->elem);
        for (int g = 0; g < o->ngets; g++) {
            gb_slice val;
            if (pattern_lookup(c->db, &o->gets[g], v[j].it->elem, &lb, &val))
                gb_reply_slice(c, val);
            else
                gb_reply_nil(c);
        }
    }
    gb_strbuf_free(&lb.key);
}

/* STORE: the result as a new list (GET values, "" where missing), or the
 * destination deleted when it is empty. The list is built aside and set
 * at the end: GET patterns still see the destination's old value. */
static void store_sorted(gb_client *c, const sort_opts *o, const sort_key *v, int64_t start, int64_t end)
{
    gb_list_config cfg = gb_list_config_for(c->eng);
    gb_list *l = gb_list_new(&cfg);
    lookup_buf lb = {0};
    for (int64_t j = start; j <= end; j++) {
        if (!o->ngets)
            gb_list_push(l, GB_LIST_TAIL, &v[j].it->elem, 1);
        for (int g = 0; g < o->ngets; g++) {
            gb_slice val;
            if (!pattern_lookup(c->db, &o->gets[g], v[j].it->elem, &lb, &val))
                val = gb_slice_make("", 0);
            gb_list_push(l, GB_LIST_TAIL, &val, 1);
        }
    }
    gb_strbuf_free(&lb.key);
    size_t n = gb_list_len(l);
    gb_slice dst = *o->store;
    if (n) {
        gb_db_set_object(c->db, dst, GB_TYPE_LIST, l);
        gb_engine_key_modified(c->db, dst); /* one change... */
        c->eng->stats.dirty += n - 1;       /* ...Redis counts one per element */
        gb_notify_key(c, GB_NOTIFY_LIST, "sortstore", dst);
    } else {
        gb_list_free(l);
        if (gb_db_delete(c->db, dst)) {
            gb_engine_key_modified(c->db, dst);
            gb_notify_key(c, GB_NOTIFY_GENERIC, "del", dst);
        }
    }
    gb_reply_int(c, (int64_t)n);
}

/* ---- the command ---- */

/* Redis's LIMIT arithmetic: [*start, *end] within len elements (empty when
 * *end < *start). */
static void limit_range(const sort_opts *o, int64_t len, int64_t *start, int64_t *end)
{
    int64_t count = GB_MIN(GB_MAX(o->limit_count, -1), len);
    *start = GB_MIN(GB_MAX(o->limit_start, 0), len);
    *end = count < 0 ? len - 1 : *start + count - 1;
    if (*start >= len) {
        *start = len - 1;
        *end = len - 2;
    }
    if (*end >= len)
        *end = len - 1;
}

/* Reads the source into vec: only [start, end] of a list or sorted set
 * kept in its own order (then re-based to start at 0), else everything. */
static void load_source(const gb_sort_source *src, const sort_opts *o, int64_t *start, int64_t *end, sort_vec *vec)
{
    if (src->type != GB_TYPE_SET && o->dontsort) {
        if (*end >= *start)
            gb_sort_source_emit(src, (size_t)*start, (size_t)*end, o->desc, vec_add, vec);
        *end -= *start;
        *start = 0;
    } else if (src->len) {
        gb_sort_source_emit(src, 0, src->len - 1, false, vec_add, vec);
    }
}

static void sort_generic(gb_client *c, int argc, gb_slice *argv, bool readonly)
{
    sort_opts o = {.limit_count = -1};
    o.gets = gb_malloc((size_t)argc * sizeof *o.gets);
    sort_vec vec = {0};
    sort_key *order = NULL;
    if (!parse_options(c, argc, argv, readonly, &o))
        goto done;
    gb_sort_source src = {.type = GB_TYPE_LIST, .len = 0};
    gb_result r = gb_sort_source_find(c->db, argv[1], &src);
    if (r == GB_R_WRONGTYPE) {
        gb_reply_result(c, r);
        goto done;
    }
    if (r == GB_R_NOTFOUND)
        src.len = 0;
    /* An unsorted set would come out in hash order: STORE and scripts get
     * it sorted, so replicas and the log see the same result. */
    if (o.dontsort && src.type == GB_TYPE_SET && (o.store || (c->flags & GB_CLIENT_SCRIPT))) {
        o.dontsort = false;
        o.alpha = true;
        o.by = NULL;
    }
    int64_t start, end;
    limit_range(&o, (int64_t)src.len, &start, &end);
    if (r == GB_R_OK)
        load_source(&src, &o, &start, &end, &vec);
    sort_pattern by = o.by && !o.dontsort ? pattern_parse(*o.by) : (sort_pattern){0};
    bool weights_ok = o.dontsort || load_weights(c->db, &o, o.by ? &by : NULL, &vec);
    vec_resolve(&vec);
    order = gb_malloc((vec.n + 1) * sizeof *order);
    for (size_t i = 0; i < vec.n; i++)
        order[i] = (sort_key){vec.items[i].score, &vec.items[i]};
    if (!o.dontsort && weights_ok) {
        sort_order k = {o.alpha, o.by != NULL, o.store != NULL, o.desc};
        sort_keys(order, vec.n, start, end, &k);
    }
    if (!weights_ok)
        gb_reply_error(c, "ERR One or more scores can't be converted into double");
    else if (o.store)
        store_sorted(c, &o, order, start, end);
    else
        reply_sorted(c, &o, order, start, end);
done:
    gb_free(order);
    gb_free(vec.items);
    gb_strbuf_free(&vec.arena);
    gb_free(o.gets);
}

static void cmd_sort(gb_client *c, int argc, gb_slice *argv) { sort_generic(c, argc, argv, false); }

static void cmd_sort_ro(gb_client *c, int argc, gb_slice *argv) { sort_generic(c, argc, argv, true); }

GB_DEFINE_COMMANDS(sort,
    {"sort", cmd_sort},
    {"sort_ro", cmd_sort_ro});
