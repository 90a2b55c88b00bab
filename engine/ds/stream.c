#include "engine/ds/stream.h"

#include "engine/base/mem.h"
#include "engine/ds/stream_cg.h"

_Static_assert(sizeof(gb_stream) == 96, "gb_stream is 96 bytes");

/* Entries replayed at a time when a node is walked backwards. */
#define CHUNK 64

/* ---- life cycle ------------------------------------------------------------------------ */

gb_stream *gb_stream_new(void)
{
    gb_stream *s = gb_malloc(sizeof *s);
    memset(s, 0, sizeof *s);
    gb_rax_init(&s->nodes);
    return s;
}

static void free_node(void *v, void *ctx)
{
    (void)ctx;
    gb_snode_free(v);
}

void gb_stream_free(gb_stream *s)
{
    gb_rax_destroy(&s->nodes, free_node, NULL);
    gb_stream_cg_free_all(s);
    gb_free(s);
}

bool gb_stream_free_step(gb_stream *s, uint64_t *cursor, size_t max_nodes)
{
    gb_rax_teardown *t = (gb_rax_teardown *)(uintptr_t)*cursor;
    if (!t) {
        t = gb_rax_teardown_new();
        gb_stream_cg_hand_over_all(s, t);
        gb_rax_teardown_add(t, &s->nodes, free_node);
        gb_free(s);
        *cursor = (uintptr_t)t;
    }
    return gb_rax_teardown_step(t, max_nodes);
}

gb_stream *gb_stream_dup(const gb_stream *s)
{
    gb_stream *d = gb_stream_new();
    gb_rax_iter it;
    gb_rax_iter_init(&it, &s->nodes);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it))
        gb_rax_insert(&d->nodes, it.key, it.key_len, gb_snode_dup(it.value), NULL);
    gb_rax_iter_done(&it);
    d->length = s->length;
    d->last_id = s->last_id;
    d->first_id = s->first_id;
    d->max_deleted = s->max_deleted;
    d->entries_added = s->entries_added;
    gb_stream_cg_dup_all(d, s);
    return d;
}

size_t gb_stream_mem(const gb_stream *s)
{
    size_t n = gb_mem_accounted((void *)s) + gb_rax_mem(&s->nodes);
    gb_rax_iter it;
    gb_rax_iter_init(&it, &s->nodes);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it))
        n += gb_mem_accounted(it.value);
    gb_rax_iter_done(&it);
    return n + gb_stream_cg_mem_all(s);
}

size_t gb_stream_free_effort(const gb_stream *s)
{
    return (size_t)(s->nodes.numnodes + gb_stream_cg_effort_all(s));
}

/* ---- adding ------------------------------------------------------------------------------ */

/* The ID XADD gives an entry: the clock's ms when it moved past the last
 * ID, else the last ID's successor (Redis's streamNextID). */
static gb_stream_id next_id(gb_stream_id last, uint64_t now_ms)
{
    if (now_ms > last.ms)
        return gb_stream_id_make(now_ms, 0);
    gb_stream_id id = last;
    gb_stream_id_incr(&id);
    return id;
}

/* Whether the tail node must be closed before an entry of elem_bytes
 * field and value bytes is appended (Redis 7.0's streamAppendItem). */
static bool tail_full(const gb_snode *n, const gb_stream_limits *lim, size_t elem_bytes)
{
    uint64_t max_bytes = lim->node_max_bytes;
    if (max_bytes == 0 || max_bytes > GB_STREAM_NODE_MAX_SIZE)
        max_bytes = GB_STREAM_NODE_MAX_SIZE;
    if (gb_snode_lp_bytes(n) + elem_bytes >= max_bytes)
        return true;
    return lim->node_max_entries && gb_snode_entries(n) >= lim->node_max_entries;
}

enum gb_stream_add_result gb_stream_append(gb_stream *s, const gb_stream_limits *lim, const gb_slice *fv,
                                           size_t nfields, const gb_stream_id *use_id, bool seq_given,
                                           uint64_t now_ms, gb_stream_id *added)
{
    gb_stream_id id;
    if (!use_id) {
        id = next_id(s->last_id, now_ms);
    } else if (seq_given || s->last_id.ms != use_id->ms) {
        id = *use_id;
    } else {
        /* "<ms>-*" with the last ID's ms: the next sequence, if any.
         * redis-server 7.0 answers "Elements are too large to be stored"
         * when there is none (its append fails with a code other than
         * the too-small one), so this is reported as too large. */
        if (s->last_id.seq == UINT64_MAX)
            return GB_STREAM_TOO_LARGE;
        id = s->last_id;
        id.seq++;
    }
    /* Automatic IDs can wrap at the very last ID: refused the same way. */
    if (gb_stream_id_cmp(id, s->last_id) <= 0)
        return GB_STREAM_ID_TOO_SMALL;
    size_t elem_bytes = 0;
    for (size_t i = 0; i < 2 * nfields; i++)
        elem_bytes += fv[i].len;
    if (elem_bytes > GB_STREAM_NODE_MAX_SIZE)
        return GB_STREAM_TOO_LARGE;

    gb_rax_iter it;
    gb_rax_iter_init(&it, &s->nodes);
    gb_snode *tail = gb_rax_seek(&it, GB_RAX_LAST, NULL, 0) ? it.value : NULL;
    uint8_t key[GB_STREAM_ID_KEY];
    if (tail && tail_full(tail, lim, elem_bytes)) {
        gb_snode *shrunk = gb_snode_shrink(tail);
        if (shrunk != tail)
            gb_rax_insert(&s->nodes, it.key, it.key_len, shrunk, NULL);
        tail = NULL;
    }
    if (!tail) {
        gb_stream_id_encode(key, id);
        gb_rax_insert(&s->nodes, key, sizeof key, gb_snode_new(id, fv, nfields), NULL);
    } else {
        gb_stream_id master = gb_stream_id_decode(it.key);
        gb_snode *grown = gb_snode_append(tail, master, id, fv, nfields);
        if (grown != tail)
            gb_rax_insert(&s->nodes, it.key, it.key_len, grown, NULL);
    }
    gb_rax_iter_done(&it);
    s->length++;
    s->entries_added++;
    s->last_id = id;
    if (s->length == 1)
        s->first_id = id;
    *added = id;
    return GB_STREAM_ADDED;
}

/* ---- iteration ----------------------------------------------------------------------------- */

static bool enter_node(gb_stream_iter *it);

void gb_stream_iter_start(gb_stream_iter *it, const gb_stream *s, const gb_stream_id *start, const gb_stream_id *end,
                          bool rev)
{
    memset(it, 0, sizeof *it);
    it->s = s;
    it->start = start ? *start : gb_stream_id_make(0, 0);
    it->end = end ? *end : gb_stream_id_make(UINT64_MAX, UINT64_MAX);
    it->rev = rev;
    gb_rax_iter_init(&it->ri, &s->nodes);
    uint8_t key[GB_STREAM_ID_KEY];
    if (!rev) {
        /* The node that may hold start, or the first one. */
        gb_stream_id_encode(key, it->start);
        if (!gb_rax_seek(&it->ri, GB_RAX_LE, key, sizeof key))
            gb_rax_seek(&it->ri, GB_RAX_FIRST, NULL, 0);
    } else {
        /* The node that may hold end, or the last one: a node's key is
         * its first entry's ID, and entries below it can follow a
         * tombstone (gb_stream_iter_next), as Redis's iterator allows. */
        gb_stream_id_encode(key, it->end);
        if (!gb_rax_seek(&it->ri, GB_RAX_LE, key, sizeof key))
            gb_rax_seek(&it->ri, GB_RAX_LAST, NULL, 0);
    }
    if (!it->ri.eof)
        enter_node(it);
}

/* Replays chunk `mark` of the current node into it->chunk. */
static void load_chunk(gb_stream_iter *it)
{
    gb_snode_cursor c = it->marks[it->mark];
    it->nchunk = 0;
    while (it->nchunk < CHUNK && gb_snode_cursor_next(&c))
        it->chunk[it->nchunk++] = c;
    it->ci = it->nchunk;
}

/* Prepares the node the radix iterator stands on. */
static bool enter_node(gb_stream_iter *it)
{
    gb_stream_id master = gb_stream_id_decode(it->ri.key);
    gb_snode_cursor_init(&it->cur, it->ri.value, master);
    it->in_node = true;
    if (!it->rev)
        return true;
    /* Backwards: one forward pass notes where each chunk starts. */
    if (!it->chunk)
        it->chunk = gb_malloc(CHUNK * sizeof *it->chunk);
    it->nmarks = 0;
    gb_snode_cursor c = it->cur;
    for (uint64_t i = 0;; i++) {
        if (i % CHUNK == 0) {
            if (it->nmarks == it->marks_cap) {
                it->marks_cap = it->marks_cap ? it->marks_cap * 2 : 4;
                it->marks = gb_realloc(it->marks, it->marks_cap * sizeof *it->marks);
            }
            it->marks[it->nmarks++] = c;
        }
        if (!gb_snode_cursor_next(&c))
            break;
    }
    it->mark = it->nmarks - 1;
    load_chunk(it);
    return true;
}

static bool next_node(gb_stream_iter *it)
{
    it->in_node = false;
    bool ok = it->rev ? gb_rax_prev(&it->ri) : gb_rax_next(&it->ri);
    return ok && enter_node(it);
}

/* The next entry of the current node in the iteration's direction. */
static const gb_snode_cursor *node_step(gb_stream_iter *it)
{
    if (!it->rev)
        return gb_snode_cursor_next(&it->cur) ? &it->cur : NULL;
    while (it->ci == 0) {
        if (it->mark == 0)
            return NULL;
        it->mark--;
        load_chunk(it);
    }
    return &it->chunk[--it->ci];
}

bool gb_stream_iter_next(gb_stream_iter *it, gb_stream_id *id, uint32_t *nfields)
{
    while (it->in_node) {
        const gb_snode_cursor *c;
        while ((c = node_step(it)) != NULL) {
            const gb_snode_entry *e = &c->e;
            /* Only live entries are in ID order: XSETID may move the last
             * ID below a deleted entry, so a tombstone may stand above a
             * later live one. A tombstone never ends the range. */
            if (e->flags & GB_SNODE_DELETED)
                continue;
            bool before = gb_stream_id_cmp(e->id, it->start) < 0;
            bool after = gb_stream_id_cmp(e->id, it->end) > 0;
            if (it->rev ? before : after)
                return false; /* past the range */
            if (it->rev ? after : before)
                continue;
            it->at = c;
            *id = e->id;
            *nfields = e->nfields;
            return true;
        }
        if (!next_node(it))
            return false;
    }
    return false;
}

void gb_stream_iter_pairs(const gb_stream_iter *it, gb_snode_pairs *pp) { gb_snode_pairs_init(pp, it->at); }

void gb_stream_iter_done(gb_stream_iter *it)
{
    gb_rax_iter_done(&it->ri);
    gb_free(it->marks);
    gb_free(it->chunk);
}

bool gb_stream_entry_exists(const gb_stream *s, gb_stream_id id)
{
    gb_stream_iter it;
    gb_stream_iter_start(&it, s, &id, &id, false);
    gb_stream_id got;
    uint32_t nf;
    bool found = gb_stream_iter_next(&it, &got, &nf);
    gb_stream_iter_done(&it);
    return found;
}

bool gb_stream_edge_id(const gb_stream *s, bool first, gb_stream_id *id)
{
    gb_stream_iter it;
    gb_stream_iter_start(&it, s, NULL, NULL, !first);
    uint32_t nf;
    bool found = gb_stream_iter_next(&it, id, &nf);
    gb_stream_iter_done(&it);
    return found;
}

gb_stream_id gb_stream_first_node_id(const gb_stream *s)
{
    gb_rax_iter it;
    gb_rax_iter_init(&it, &s->nodes);
    gb_stream_id id = gb_stream_id_make(UINT64_MAX, UINT64_MAX);
    if (gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0))
        id = gb_stream_id_decode(it.key);
    gb_rax_iter_done(&it);
    return id;
}

/* ---- removing ------------------------------------------------------------------------------- */

bool gb_stream_delete(gb_stream *s, gb_stream_id id)
{
    /* Found as a range of one: an entry can sit in a node whose key is
     * above it (after a tombstone, see gb_stream_iter_next). */
    gb_stream_iter it;
    gb_stream_iter_start(&it, s, &id, &id, false);
    gb_stream_id got;
    uint32_t nf;
    bool found = gb_stream_iter_next(&it, &got, &nf);
    if (found) {
        gb_snode *n = it.ri.value;
        if (n->live == 1) {
            /* Its last live entry: the whole node goes. */
            uint8_t key[GB_STREAM_ID_KEY];
            memcpy(key, it.ri.key, sizeof key);
            gb_rax_remove(&s->nodes, key, sizeof key, NULL);
            gb_snode_free(n);
        } else {
            gb_snode_delete(n, &it.at->e);
        }
        s->length--;
    }
    gb_stream_iter_done(&it);
    return found;
}

/* Whether trimming may remove node n (master ID master) whole. */
static bool node_removable(const gb_stream *s, const gb_snode *n, const gb_stream_trim *t)
{
    if (t->strategy == GB_TRIM_MAXLEN)
        return s->length - n->live >= t->maxlen;
    /* Its last entry, deleted or not, below minid. */
    return gb_stream_id_cmp(gb_snode_last(n), t->minid) < 0;
}

/* Flags entries of n from its oldest until the strategy is met; returns
 * how many live ones it flagged. */
static int64_t trim_within(gb_stream *s, gb_snode *n, gb_stream_id master, const gb_stream_trim *t)
{
    int64_t flagged = 0;
    gb_snode_cursor c;
    gb_snode_cursor_init(&c, n, master);
    while (gb_snode_cursor_next(&c)) {
        bool stop = t->strategy == GB_TRIM_MAXLEN ? s->length <= t->maxlen
                                                  : gb_stream_id_cmp(c.e.id, t->minid) >= 0;
        if (stop)
            break;
        if (!(c.e.flags & GB_SNODE_DELETED)) {
            gb_snode_delete(n, &c.e);
            flagged++;
            s->length--;
        }
    }
    return flagged;
}

int64_t gb_stream_trim_apply(gb_stream *s, const gb_stream_trim *t)
{
    if (t->strategy == GB_TRIM_NONE)
        return 0;
    int64_t deleted = 0;
    gb_rax_iter ri;
    gb_rax_iter_init(&ri, &s->nodes);
    for (bool ok = gb_rax_seek(&ri, GB_RAX_FIRST, NULL, 0); ok;) {
        if (t->strategy == GB_TRIM_MAXLEN && s->length <= t->maxlen)
            break;
        gb_snode *n = ri.value;
        int64_t entries = n->live;
        if (t->limit && deleted + entries > t->limit)
            break;
        if (node_removable(s, n, t)) {
            uint8_t key[GB_STREAM_ID_KEY];
            memcpy(key, ri.key, sizeof key);
            gb_rax_remove(&s->nodes, key, sizeof key, NULL);
            gb_snode_free(n);
            s->length -= (uint64_t)entries;
            deleted += entries;
            ok = gb_rax_seek(&ri, GB_RAX_GE, key, sizeof key);
            continue;
        }
        if (t->approx)
            break;
        /* Enough to remove inside this node: flag, then stop. A node
         * emptied this way stays, as in Redis, until an XDEL or a
         * whole-node trim takes it. */
        deleted += trim_within(s, n, gb_stream_id_decode(ri.key), t);
        break;
    }
    gb_rax_iter_done(&ri);
    if (s->length == 0)
        s->first_id = gb_stream_id_make(0, 0);
    else if (deleted)
        gb_stream_edge_id(s, true, &s->first_id);
    return deleted;
}

/* ---- consumer-group counters ------------------------------------------------------------------ */

bool gb_stream_range_has_tombstones(const gb_stream *s, const gb_stream_id *start, const gb_stream_id *end)
{
    if (!s->length || gb_stream_id_is_zero(s->max_deleted))
        return false;
    if (gb_stream_id_cmp(s->first_id, s->max_deleted) > 0)
        return false; /* the latest deletion is before the first entry */
    gb_stream_id lo = start ? *start : gb_stream_id_make(0, 0);
    gb_stream_id hi = end ? *end : gb_stream_id_make(UINT64_MAX, UINT64_MAX);
    return gb_stream_id_cmp(lo, s->max_deleted) <= 0 && gb_stream_id_cmp(s->max_deleted, hi) <= 0;
}

int64_t gb_stream_estimate_distance(const gb_stream *s, gb_stream_id id)
{
    if (!s->entries_added)
        return 0; /* a stream never written to */
    if (!s->length && gb_stream_id_cmp(id, s->last_id) < 1)
        return (int64_t)s->entries_added;
    int cmp_last = gb_stream_id_cmp(id, s->last_id);
    if (cmp_last == 0)
        return (int64_t)s->entries_added;
    if (cmp_last > 0)
        return GB_STREAM_ENTRIES_READ_UNKNOWN; /* a future ID */
    int cmp_first = gb_stream_id_cmp(id, s->first_id);
    if (gb_stream_id_is_zero(s->max_deleted) || gb_stream_id_cmp(s->max_deleted, s->first_id) < 0) {
        /* No deletion ahead of the first entry. */
        if (cmp_first < 0)
            return (int64_t)(s->entries_added - s->length);
        if (cmp_first == 0)
            return (int64_t)(s->entries_added - s->length + 1);
    }
    return GB_STREAM_ENTRIES_READ_UNKNOWN;
}
