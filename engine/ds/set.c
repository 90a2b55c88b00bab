#include "engine/ds/set.h"

#include "engine/ds/htable.h"
#include "engine/ds/intset.h"
#include "engine/ds/listpack.h"
#include "engine/base/mem.h"
#include "engine/base/random.h"
#include "engine/ds/zset_tree.h" /* member key format: varint length + bytes */

/* SPOP: rebuild the survivors instead of popping one by one when
 * remaining * SPOP_MOVE_MUL <= count (Redis's SPOP_MOVE_STRATEGY_MUL). */
#define SPOP_MOVE_MUL 5
/* SRANDMEMBER: copy-and-subtract when count * SRAND_SUB_MUL > card. */
#define SRAND_SUB_MUL 3

/* ---- hashtable records ---- */

typedef struct srec {
    gb_hnode node;
    unsigned char key[]; /* varint length, bytes */
} srec;

typedef struct sbig {
    gb_htable ht;
    size_t rec_bytes; /* usable bytes of all records */
} sbig;

static inline gb_slice srec_member(const srec *r) { return gb_zmember_slice(r->key); }

static uint64_t srec_hash(const gb_hnode *n) { return gb_hash_slice(srec_member((const srec *)n)); }

static bool srec_eq(const gb_hnode *n, const void *key)
{
    return gb_slice_eq(srec_member((const srec *)n), *(const gb_slice *)key);
}

static const gb_htable_type srec_type = {srec_hash, srec_eq};

static sbig *sbig_new(void)
{
    sbig *b = gb_malloc(sizeof *b);
    gb_htable_init(&b->ht, &srec_type);
    b->rec_bytes = 0;
    return b;
}

static void free_rec(gb_hnode *n, void *ctx)
{
    (void)ctx;
    gb_free(n);
}

static void sbig_free(sbig *b)
{
    gb_htable_clear(&b->ht, free_rec, NULL);
    gb_free(b);
}

/* Adds m (hash h) if absent; true when added. */
static bool sbig_add(sbig *b, gb_slice m, uint64_t h)
{
    if (gb_htable_find(&b->ht, &m, h))
        return false;
    srec *r = gb_malloc(sizeof *r + gb_zmember_size(m.len) + m.len);
    gb_zmember_write(r->key, m);
    b->rec_bytes += gb_mem_accounted(r);
    gb_htable_insert(&b->ht, &r->node, h);
    return true;
}

static bool sbig_remove(sbig *b, gb_slice m)
{
    gb_hnode *n = gb_htable_remove(&b->ht, &m, gb_hash_slice(m));
    if (!n)
        return false;
    b->rec_bytes -= gb_mem_accounted(n);
    gb_free(n);
    gb_htable_maybe_shrink(&b->ht);
    return true;
}

/* ---- representation helpers ---- */

static inline bool as_int(gb_slice m, int64_t *v) { return gb_lp_str2int(m.ptr, m.len, v); }

static void rep_free(uint8_t enc, void *p)
{
    switch (enc) {
    case GB_SET_INTSET:
        gb_intset_free(p);
        break;
    case GB_SET_LISTPACK:
        gb_lp_free(p);
        break;
    default:
        sbig_free(p);
        break;
    }
}

gb_set *gb_set_new(void)
{
    gb_set *s = gb_malloc(sizeof *s);
    memset(s, 0, sizeof *s);
    s->enc = GB_SET_INTSET;
    s->p = gb_intset_new();
    return s;
}

gb_set *gb_set_new_for(const gb_types_config *cfg, gb_slice first, size_t size_hint)
{
    gb_set *s = gb_malloc(sizeof *s);
    memset(s, 0, sizeof *s);
    int64_t v;
    if (as_int(first, &v) && size_hint <= cfg->set_max_intset_entries) {
        s->enc = GB_SET_INTSET;
        s->p = gb_intset_new();
    } else if (size_hint <= cfg->set_max_listpack_entries) {
        s->enc = GB_SET_LISTPACK;
        s->p = gb_lp_new(0);
    } else {
        s->enc = GB_SET_HASHTABLE;
        sbig *b = sbig_new();
        gb_htable_reserve(&b->ht, size_hint); /* no growth on the way (a snapshot's set, SADD's members) */
        s->p = b;
    }
    return s;
}

static void to_hashtable(gb_set *s);
static void intset_to_listpack(gb_set *s);

static gb_set *set_of(uint8_t enc, void *p)
{
    gb_set *s = gb_malloc(sizeof *s);
    memset(s, 0, sizeof *s);
    s->enc = enc;
    s->p = p;
    return s;
}

/* Whether any member of lp is longer than max bytes. */
static bool lp_has_longer(unsigned char *lp, size_t max)
{
    for (unsigned char *p = gb_lp_first(lp); p; p = gb_lp_next(lp, p)) {
        gb_lp_entry e;
        gb_lp_get(p, &e);
        if (!e.is_int && e.len > max)
            return true;
    }
    return false;
}

gb_set *gb_set_from_listpack(unsigned char *lp, size_t size, const gb_types_config *cfg, const char **why)
{
    if (!gb_lp_validate(lp, size))
        *why = "a damaged listpack";
    else if (gb_lp_count(lp) == 0)
        *why = "an empty set";
    else if (!gb_lp_keys_unique(lp, 1))
        *why = "a set listpack with a member twice";
    else
        *why = NULL;
    if (*why) {
        gb_lp_free(lp);
        return NULL;
    }
    gb_set *s = set_of(GB_SET_LISTPACK, lp);
    if (gb_lp_count(lp) > cfg->set_max_listpack_entries || lp_has_longer(lp, cfg->set_max_listpack_value))
        to_hashtable(s);
    return s;
}

gb_set *gb_set_from_intset(void *bytes, size_t size, const gb_types_config *cfg, const char **why)
{
    gb_intset *is = bytes;
    *why = NULL;
    if (size < sizeof *is || (is->width != 2 && is->width != 4 && is->width != 8) ||
        size != sizeof *is + (size_t)is->width * is->len)
        *why = "a damaged intset";
    else if (is->len == 0)
        *why = "an empty set";
    for (uint32_t i = 1; !*why && i < is->len; i++)
        if (gb_intset_get(is, i - 1) >= gb_intset_get(is, i))
            *why = "an intset out of order or with a member twice";
    if (*why) {
        gb_free(bytes);
        return NULL;
    }
    gb_set *s = set_of(GB_SET_INTSET, is);
    if (is->len > cfg->set_max_intset_entries) {
        intset_to_listpack(s);
        if (gb_lp_count(s->p) > cfg->set_max_listpack_entries)
            to_hashtable(s);
    }
    return s;
}

size_t gb_set_intset_bytes(const gb_set *s) { return gb_intset_bytes(s->p); }

void gb_set_release(gb_set *s)
{
    rep_free(s->enc, s->p);
    s->p = NULL;
}

bool gb_set_release_step(gb_set *s, uint64_t *cursor, size_t max_nodes)
{
    if (s->enc == GB_SET_HASHTABLE && !gb_htable_clear_step(&((sbig *)s->p)->ht, free_rec, NULL, cursor, max_nodes))
        return false;
    gb_set_release(s);
    return true;
}

void gb_set_free(gb_set *s)
{
    if (!s)
        return;
    gb_set_release(s);
    gb_free(s);
}

const char *gb_set_encoding_name(const gb_set *s)
{
    static const char *const names[] = {"intset", "listpack", "hashtable"};
    return names[s->enc];
}

size_t gb_set_card(const gb_set *s)
{
    switch (s->enc) {
    case GB_SET_INTSET:
        return gb_intset_len(s->p);
    case GB_SET_LISTPACK:
        return gb_lp_count(s->p);
    default:
        return gb_htable_size(&((const sbig *)s->p)->ht);
    }
}

size_t gb_set_payload_mem(const gb_set *s)
{
    size_t n = gb_mem_accounted(s->p);
    if (s->enc == GB_SET_HASHTABLE) {
        const sbig *b = s->p;
        n += b->rec_bytes + gb_htable_overhead_bytes(&b->ht);
    }
    return n;
}

/* Calls fn on each member (intsets rendered to text). */
typedef void (*each_fn)(void *ctx, gb_slice m);

static void each_member(const gb_set *s, each_fn fn, void *ctx)
{
    char buf[GB_LP_INT_BUF];
    switch (s->enc) {
    case GB_SET_INTSET: {
        const gb_intset *is = s->p;
        for (uint32_t i = 0; i < gb_intset_len(is); i++)
            fn(ctx, gb_slice_make(buf, gb_lp_int2str(gb_intset_get(is, i), buf)));
        break;
    }
    case GB_SET_LISTPACK: {
        unsigned char *lp = s->p;
        for (unsigned char *p = gb_lp_first(lp); p; p = gb_lp_next(lp, p))
            fn(ctx, gb_lp_get_slice(p, buf));
        break;
    }
    default: {
        sbig *b = s->p;
        gb_htable_iter it;
        gb_htable_iter_init(&it, &b->ht);
        for (gb_hnode *n; (n = gb_htable_iter_next(&it));)
            fn(ctx, srec_member((const srec *)n));
        gb_htable_iter_done(&it);
        break;
    }
    }
}

static void add_to_big(void *ctx, gb_slice m) { sbig_add(ctx, m, gb_hash_slice(m)); }

static void to_hashtable(gb_set *s)
{
    sbig *b = sbig_new();
    each_member(s, add_to_big, b);
    rep_free(s->enc, s->p);
    s->enc = GB_SET_HASHTABLE;
    s->p = b;
}

static void intset_to_listpack(gb_set *s)
{
    const gb_intset *is = s->p;
    unsigned char *lp = gb_lp_new(0);
    for (uint32_t i = 0; i < gb_intset_len(is); i++)
        lp = gb_lp_append_int(lp, gb_intset_get(is, i));
    gb_intset_free(s->p);
    s->enc = GB_SET_LISTPACK;
    s->p = lp;
}

static size_t digits10(int64_t v)
{
    char buf[GB_LP_INT_BUF];
    return gb_lp_int2str(v, buf);
}

bool gb_set_add(gb_set *s, const gb_types_config *cfg, gb_slice m)
{
    int64_t v;
    switch (s->enc) {
    case GB_SET_INTSET:
        if (as_int(m, &v)) {
            bool added;
            s->p = gb_intset_add(s->p, v, &added);
            if (added && gb_intset_len(s->p) > cfg->set_max_intset_entries)
                to_hashtable(s);
            return added;
        } else {
            /* A string joins: listpack if everything fits, else hashtable. */
            const gb_intset *is = s->p;
            uint32_t n = gb_intset_len(is);
            size_t maxlen = 0;
            if (n) {
                size_t a = digits10(gb_intset_get(is, 0)), b = digits10(gb_intset_get(is, n - 1));
                maxlen = a > b ? a : b;
            }
            if (n < cfg->set_max_listpack_entries && m.len <= cfg->set_max_listpack_value &&
                maxlen <= cfg->set_max_listpack_value &&
                (size_t)n * (maxlen + 2) + m.len + 16 <= GB_TYPES_LISTPACK_MAX_BYTES) {
                intset_to_listpack(s);
                s->p = gb_lp_append(s->p, m);
            } else {
                to_hashtable(s);
                sbig_add(s->p, m, gb_hash_slice(m));
            }
            return true;
        }
    case GB_SET_LISTPACK: {
        unsigned char *lp = s->p;
        if (gb_lp_find(lp, gb_lp_first(lp), m, 0))
            return false;
        if (gb_lp_count(lp) < cfg->set_max_listpack_entries && m.len <= cfg->set_max_listpack_value &&
            gb_lp_bytes(lp) + gb_lp_entry_size(m) <= GB_TYPES_LISTPACK_MAX_BYTES) {
            s->p = gb_lp_append(lp, m);
        } else {
            to_hashtable(s);
            sbig_add(s->p, m, gb_hash_slice(m));
        }
        return true;
    }
    default:
        return sbig_add(s->p, m, gb_hash_slice(m));
    }
}

size_t gb_set_add_many(gb_set *s, const gb_types_config *cfg, size_t n, const gb_slice *m)
{
    size_t added = 0;
    for (size_t i = 0; i < n; i++)
        added += gb_set_add(s, cfg, m[i]);
    return added;
}

bool gb_set_remove(gb_set *s, gb_slice m)
{
    int64_t v;
    switch (s->enc) {
    case GB_SET_INTSET: {
        bool removed = false;
        if (as_int(m, &v))
            s->p = gb_intset_remove(s->p, v, &removed);
        return removed;
    }
    case GB_SET_LISTPACK: {
        unsigned char *lp = s->p;
        unsigned char *p = gb_lp_find(lp, gb_lp_first(lp), m, 0);
        if (!p)
            return false;
        s->p = gb_lp_delete(lp, p, NULL);
        return true;
    }
    default:
        return sbig_remove(s->p, m);
    }
}

size_t gb_set_remove_many(gb_set *s, size_t n, const gb_slice *m)
{
    size_t removed = 0;
    for (size_t i = 0; i < n; i++)
        removed += gb_set_remove(s, m[i]);
    return removed;
}

bool gb_set_ismember(const gb_set *s, gb_slice m)
{
    int64_t v;
    switch (s->enc) {
    case GB_SET_INTSET:
        return as_int(m, &v) && gb_intset_find(s->p, v);
    case GB_SET_LISTPACK: {
        unsigned char *lp = s->p;
        return gb_lp_find(lp, gb_lp_first(lp), m, 0) != NULL;
    }
    default: {
        sbig *b = s->p;
        return gb_htable_find(&b->ht, &m, gb_hash_slice(m)) != NULL;
    }
    }
}

void gb_set_members(const gb_set *s, gb_set_emit_fn emit, void *ctx) { each_member(s, emit, ctx); }

/* ---- copies ---- */

gb_set *gb_set_dup(const gb_set *s)
{
    gb_set *c = gb_malloc(sizeof *c);
    memset(c, 0, sizeof *c);
    c->enc = s->enc;
    switch (s->enc) {
    case GB_SET_INTSET:
        c->p = gb_intset_dup(s->p);
        break;
    case GB_SET_LISTPACK: {
        size_t n = gb_lp_bytes(s->p);
        c->p = gb_malloc(n);
        memcpy(c->p, s->p, n);
        break;
    }
    default: {
        sbig *b = sbig_new();
        each_member(s, add_to_big, b);
        c->p = b;
        break;
    }
    }
    return c;
}

/* ---- random members ---- */

/* A random member, rendered into buf (GB_LP_INT_BUF bytes) for intsets. */
static gb_slice random_member(const gb_set *s, char *buf)
{
    switch (s->enc) {
    case GB_SET_INTSET:
        return gb_slice_make(buf, gb_lp_int2str(gb_intset_random(s->p), buf));
    case GB_SET_LISTPACK: {
        unsigned char *lp = s->p;
        return gb_lp_get_slice(gb_lp_seek(lp, (long)gb_random_below(gb_lp_count(lp))), buf);
    }
    default: {
        sbig *b = s->p;
        return srec_member((const srec *)gb_htable_random(&b->ht));
    }
    }
}

/* Members as an array of slices (compact encodings only need buf space for
 * rendered integers: ints holds them). */
typedef struct member_array {
    gb_slice *m;
    char (*ints)[GB_LP_INT_BUF];
    size_t n;
} member_array;

static void collect(void *ctx, gb_slice m)
{
    member_array *a = ctx;
    a->m[a->n++] = m;
}

static void collect_ints(member_array *a, const gb_set *s)
{
    const gb_intset *is = s->p;
    for (uint32_t i = 0; i < gb_intset_len(is); i++) {
        size_t len = gb_lp_int2str(gb_intset_get(is, i), a->ints[i]);
        a->m[a->n++] = gb_slice_make(a->ints[i], len);
    }
}

static void array_of(const gb_set *s, member_array *a)
{
    size_t n = gb_set_card(s);
    a->m = gb_malloc((n ? n : 1) * sizeof *a->m);
    a->ints = NULL;
    a->n = 0;
    if (s->enc == GB_SET_INTSET) {
        a->ints = gb_malloc((n ? n : 1) * sizeof *a->ints);
        collect_ints(a, s);
    } else if (s->enc == GB_SET_LISTPACK) {
        /* Integer entries render into a buffer of their own each. */
        unsigned char *lp = s->p;
        a->ints = gb_malloc((n ? n : 1) * sizeof *a->ints);
        for (unsigned char *p = gb_lp_first(lp); p; p = gb_lp_next(lp, p), a->n++)
            a->m[a->n] = gb_lp_get_slice(p, a->ints[a->n]);
    } else {
        each_member(s, collect, a);
    }
}

static void array_free(member_array *a)
{
    gb_free(a->m);
    gb_free(a->ints);
}

/* A record's member to emit (SRANDMEMBER's sampling from the table). */
typedef struct member_emit {
    gb_set_emit_fn emit;
    void *ctx;
} member_emit;

static void emit_record(gb_hnode *n, void *ctx)
{
    member_emit *me = ctx;
    me->emit(me->ctx, srec_member((const srec *)n));
}

void gb_set_random(const gb_set *s, int64_t count, gb_set_emit_fn emit, void *ctx)
{
    size_t size = gb_set_card(s);
    char buf[GB_LP_INT_BUF];
    if (count == 0 || size == 0)
        return;
    if (count < 0 || count == 1) {
        uint64_t k = count < 0 ? (uint64_t)0 - (uint64_t)count : 1;
        while (k--)
            emit(ctx, random_member(s, buf));
        return;
    }
    if ((uint64_t)count >= size) {
        each_member(s, emit, ctx);
        return;
    }
    if (s->enc == GB_SET_HASHTABLE && (uint64_t)count * 3 <= size) {
        /* A few distinct members of many: drawn from the table, no copy. */
        member_emit me = {emit, ctx};
        gb_htable_sample_distinct(&((sbig *)s->p)->ht, (uint64_t)count, emit_record, &me);
        return;
    }
    /* count distinct members out of size: pick positions. */
    member_array a;
    array_of(s, &a);
    uint64_t *idx = gb_malloc((size_t)count * sizeof *idx);
    gb_sample_distinct(size, (uint64_t)count, idx);
    for (int64_t i = 0; i < count; i++)
        emit(ctx, a.m[idx[i]]);
    gb_free(idx);
    array_free(&a);
}

/* SPOP's copy of a member about to be removed (its bytes die with it);
 * the buffer grows as needed and is reused. */
typedef struct member_copy {
    char *p;
    size_t cap;
} member_copy;

static gb_slice copy_member(member_copy *c, gb_slice m)
{
    if (m.len > c->cap) {
        c->cap = m.len * 2;
        gb_free(c->p);
        c->p = gb_malloc(c->cap);
    }
    if (m.len)
        memcpy(c->p, m.ptr, m.len);
    m.ptr = c->p;
    return m;
}

size_t gb_set_pop(gb_set *s, const gb_types_config *cfg, size_t count, gb_set_emit_fn emit, void *ctx)
{
    size_t size = gb_set_card(s);
    if (count == 0 || size == 0)
        return 0;
    if (count >= size) {
        each_member(s, emit, ctx);
        rep_free(s->enc, s->p);
        s->enc = GB_SET_INTSET;
        s->p = gb_intset_new();
        return size;
    }
    size_t remaining = size - count;
    char buf[GB_LP_INT_BUF];
    if (remaining * SPOP_MOVE_MUL > count) {
        member_copy copy = {NULL, 0};
        for (size_t i = 0; i < count; i++) {
            gb_slice m = copy_member(&copy, random_member(s, buf));
            emit(ctx, m);
            gb_set_remove(s, m);
        }
        gb_free(copy.p);
        return count;
    }
    /* Most members go: move the few survivors to a fresh object (intset
     * stays intset, listpack and hashtable restart as listpack and grow by
     * the usual rules), then emit what is left in the old one. */
    gb_set fresh = {.enc = s->enc == GB_SET_INTSET ? GB_SET_INTSET : GB_SET_LISTPACK};
    fresh.p = fresh.enc == GB_SET_INTSET ? (void *)gb_intset_new() : (void *)gb_lp_new(0);
    member_copy copy = {NULL, 0};
    for (size_t i = 0; i < remaining; i++) {
        gb_slice m = copy_member(&copy, random_member(s, buf));
        gb_set_add(&fresh, cfg, m);
        gb_set_remove(s, m);
    }
    gb_free(copy.p);
    each_member(s, emit, ctx);
    rep_free(s->enc, s->p);
    s->enc = fresh.enc;
    s->p = fresh.p;
    return count;
}

bool gb_set_move(gb_set *src, gb_set *dst, const gb_types_config *cfg, gb_slice m)
{
    if (src == dst)
        return gb_set_ismember(src, m);
    if (!gb_set_remove(src, m))
        return false;
    gb_set_add(dst, cfg, m);
    return true;
}

typedef struct scan_ctx {
    gb_set_emit_fn emit;
    void *ctx;
} scan_ctx;

static void scan_one(gb_hnode *n, void *ctx)
{
    scan_ctx *sc = ctx;
    sc->emit(sc->ctx, srec_member((const srec *)n));
}

uint64_t gb_set_scan(gb_set *s, uint64_t cursor, gb_set_emit_fn emit, void *ctx)
{
    if (s->enc != GB_SET_HASHTABLE) {
        each_member(s, emit, ctx);
        return 0;
    }
    sbig *b = s->p;
    scan_ctx sc = {emit, ctx};
    return gb_htable_scan(&b->ht, cursor, scan_one, &sc);
}

/* ---- algebra ---- */

/* Stable insertion sort of set pointers by cardinality (NULL = 0). */
static void sort_by_card(const gb_set **v, size_t n, bool descending)
{
    for (size_t i = 1; i < n; i++) {
        const gb_set *x = v[i];
        size_t cx = x ? gb_set_card(x) : 0;
        size_t j = i;
        while (j > 0) {
            size_t cy = v[j - 1] ? gb_set_card(v[j - 1]) : 0;
            if (descending ? cy >= cx : cy <= cx)
                break;
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

typedef struct inter_ctx {
    const gb_set **sets;
    size_t n, limit, count;
    gb_set_emit_fn emit;
    void *ctx;
    bool stop;
} inter_ctx;

static void inter_one(void *ctx, gb_slice m)
{
    inter_ctx *ic = ctx;
    if (ic->stop)
        return;
    for (size_t j = 1; j < ic->n; j++) {
        if (ic->sets[j] == ic->sets[0])
            continue;
        if (!gb_set_ismember(ic->sets[j], m))
            return;
    }
    ic->count++;
    if (ic->emit)
        ic->emit(ic->ctx, m);
    if (ic->limit && ic->count >= ic->limit)
        ic->stop = true;
}

size_t gb_set_inter(const gb_set *const *sets, size_t n, size_t limit, gb_set_emit_fn emit, void *ctx)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!sets[i])
            return 0;
    const gb_set **v = gb_malloc(n * sizeof *v);
    memcpy(v, sets, n * sizeof *v);
    sort_by_card(v, n, false);
    inter_ctx ic = {v, n, limit, 0, emit, ctx, false};
    each_member(v[0], inter_one, &ic);
    gb_free(v);
    return ic.count;
}

typedef struct add_ctx {
    gb_set *dst;
    const gb_types_config *cfg;
    const gb_set *const *others;
    const gb_set *first;
    size_t n;
} add_ctx;

static void union_one(void *ctx, gb_slice m)
{
    add_ctx *ac = ctx;
    gb_set_add(ac->dst, ac->cfg, m);
}

gb_set *gb_set_union(const gb_set *const *sets, size_t n, const gb_types_config *cfg)
{
    gb_set *dst = gb_set_new();
    add_ctx ac = {dst, cfg, NULL, NULL, 0};
    for (size_t i = 0; i < n; i++)
        if (sets[i])
            each_member(sets[i], union_one, &ac);
    return dst;
}

static void diff_one(void *ctx, gb_slice m)
{
    add_ctx *ac = ctx;
    for (size_t j = 0; j < ac->n; j++) {
        const gb_set *o = ac->others[j];
        if (!o)
            continue;
        if (o == ac->first || gb_set_ismember(o, m))
            return;
    }
    gb_set_add(ac->dst, ac->cfg, m);
}

gb_set *gb_set_diff(const gb_set *const *sets, size_t n, const gb_types_config *cfg)
{
    gb_set *dst = gb_set_new();
    if (n == 0 || !sets[0])
        return dst;
    add_ctx ac = {dst, cfg, sets + 1, sets[0], n - 1};
    each_member(sets[0], diff_one, &ac);
    return dst;
}

/* ---- verification ---- */

static void count_one(gb_hnode *n, void *ctx)
{
    (void)n;
    (*(size_t *)ctx)++;
}

bool gb_set_verify(const gb_set *s)
{
    switch (s->enc) {
    case GB_SET_INTSET:
        return gb_intset_verify(s->p);
    case GB_SET_LISTPACK: {
        unsigned char *lp = s->p;
        if (!gb_lp_validate(lp, gb_lp_bytes(lp)))
            return false;
        char buf[GB_LP_INT_BUF];
        for (unsigned char *p = gb_lp_first(lp); p; p = gb_lp_next(lp, p)) {
            unsigned char *q = gb_lp_next(lp, p);
            if (q && gb_lp_find(lp, q, gb_lp_get_slice(p, buf), 0))
                return false;
        }
        return true;
    }
    default: {
        sbig *b = s->p;
        size_t n = 0;
        uint64_t cur = 0;
        /* A full scan visits every record at least once; with no rehash in
         * progress exactly once. */
        if (gb_htable_is_rehashing(&b->ht))
            return true;
        do {
            cur = gb_htable_scan(&b->ht, cur, count_one, &n);
        } while (cur);
        return n == gb_htable_size(&b->ht);
    }
    }
}
