/*
 * A model of engine/ds/stream.c shared by its unit test
 * (test_stream_model.c, seeded random steps) and its fuzz harness
 * (test/fuzz/fuzz_stream.c, steps chosen by the input): XADD (explicit IDs
 * in every delta form, and automatic ones), XDEL of live, deleted and
 * unknown IDs, XSETID (often below a deleted last entry, the move that lets
 * a later entry's ID fall below a tombstone), exact and approximate XTRIM,
 * with tiny node limits so that streams span many nodes. After each step
 * every view of the stream must agree with the model: the length, the
 * whole stream forwards and backwards, random ranges both ways (bounds on
 * live entries, on tombstones and anywhere), entry lookups, the edge IDs,
 * and every node's snapshot bytes read back.
 *
 * The model is the sorted list of live IDs: live entries are in ID order
 * whatever XSETID did (it never goes below the last live entry); deleted
 * ones are not.
 *
 * The includer defines MODEL_BELOW(n) (a choice in [0, n), n > 0) and
 * MODEL_CHECK(cond, fmt, ...) (fails the run when cond is false) first.
 * One includer per program: the model is file-scope state.
 */
#ifndef GB_TEST_STREAM_MODEL_H
#define GB_TEST_STREAM_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "engine/ds/stream.h"

#define MAXLIVE 4096

typedef struct model {
    gb_stream_id live[MAXLIVE]; /* ascending */
    size_t n;
    gb_stream_id gone[MAXLIVE]; /* some IDs deleted or trimmed, for lookups */
    size_t ngone;
} model;

static model m;
static gb_stream *s;
static gb_stream_limits lim;
static const gb_slice fv[] = {{"f", 1}, {"v", 1}, {"name", 4}, {"12345", 5}};

static void remember_gone(gb_stream_id id)
{
    m.gone[m.ngone < MAXLIVE ? m.ngone++ : MODEL_BELOW(MAXLIVE)] = id;
}

/* (One choice per statement: the order in which a compiler evaluates a
 * call's arguments is unspecified, and a fuzz input must replay the same
 * steps whatever built it.) */
static gb_stream_id random_id_near(gb_stream_id base)
{
    gb_stream_id id;
    switch (MODEL_BELOW(5)) {
    case 0:
        return gb_stream_id_make(base.ms, base.seq + 1);
    case 1:
        return gb_stream_id_make(base.ms, base.seq + 2 + MODEL_BELOW(50));
    case 2:
        return gb_stream_id_make(base.ms + 1 + MODEL_BELOW(20), 0);
    case 3:
        id.ms = base.ms + 1 + MODEL_BELOW(20);
        id.seq = MODEL_BELOW(5);
        return id;
    default:
        id.ms = base.ms + MODEL_BELOW(3);
        id.seq = MODEL_BELOW(100);
        return id;
    }
}

/* Any ID worth asking about: live, deleted, or made up near them. */
static gb_stream_id probe_id(void)
{
    uint64_t r = MODEL_BELOW(10);
    if (r < 4 && m.n)
        return m.live[MODEL_BELOW(m.n)];
    if (r < 7 && m.ngone)
        return m.gone[MODEL_BELOW(m.ngone)];
    gb_stream_id base = m.n ? m.live[MODEL_BELOW(m.n)] : s->last_id;
    gb_stream_id id;
    id.ms = base.ms + MODEL_BELOW(3);
    id.seq = MODEL_BELOW(60);
    if (MODEL_BELOW(2) && id.ms > 2)
        id.ms -= 2;
    return id;
}

static size_t lower_bound(gb_stream_id id)
{
    size_t lo = 0, hi = m.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (gb_stream_id_cmp(m.live[mid], id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool model_has(gb_stream_id id)
{
    size_t i = lower_bound(id);
    return i < m.n && gb_stream_id_cmp(m.live[i], id) == 0;
}

/* ---- the steps ---- */

static void step_xadd(void)
{
    gb_stream_id id, added = {0, 0}, last = s->last_id;
    enum gb_stream_add_result r;
    if (MODEL_BELOW(8) == 0) {
        uint64_t now = s->last_id.ms + MODEL_BELOW(3);
        r = gb_stream_append(s, &lim, fv, 2, NULL, false, now, &added);
        id = added;
    } else {
        id = random_id_near(s->last_id);
        r = gb_stream_append(s, &lim, fv, 1 + MODEL_BELOW(2), &id, true, 0, &added);
    }
    if (gb_stream_id_cmp(id, last) <= 0 && r == GB_STREAM_ID_TOO_SMALL)
        return;
    MODEL_CHECK(r == GB_STREAM_ADDED, "XADD refused: %d", (int)r);
    MODEL_CHECK(gb_stream_id_cmp(added, id) == 0, "XADD gave another ID");
    MODEL_CHECK(m.n == 0 || gb_stream_id_cmp(added, m.live[m.n - 1]) > 0, "added below the last live entry");
    if (m.n < MAXLIVE)
        m.live[m.n++] = added;
    else
        MODEL_CHECK(gb_stream_delete(s, added), "a new entry not deleted"); /* keep the model bounded */
}

static void step_xdel(void)
{
    /* Often the last entry: that is what leaves a tombstone on top. */
    gb_stream_id id = (m.n && MODEL_BELOW(2)) ? m.live[m.n - 1] : probe_id();
    bool had = model_has(id);
    MODEL_CHECK(gb_stream_delete(s, id) == had, "XDEL of a %s entry", had ? "live" : "missing");
    if (had) {
        size_t i = lower_bound(id);
        memmove(&m.live[i], &m.live[i + 1], (m.n - i - 1) * sizeof m.live[0]);
        m.n--;
        remember_gone(id);
        if (gb_stream_id_cmp(id, s->max_deleted) > 0)
            s->max_deleted = id;
        if (m.n)
            s->first_id = m.live[0];
    }
}

/* XSETID's rule (engine/commands/cmd_stream.c): not below the last live
 * entry; anything on an empty stream. */
static gb_stream_id last_node_key(void)
{
    gb_rax_iter ri;
    gb_rax_iter_init(&ri, &s->nodes);
    gb_stream_id key = gb_stream_id_make(0, 0);
    if (gb_rax_seek(&ri, GB_RAX_LAST, NULL, 0))
        key = gb_stream_id_decode(ri.key);
    gb_rax_iter_done(&ri);
    return key;
}

/* Not below the last node's key either: on a stream whose newest node
 * holds only deleted entries (exact trimming leaves such nodes), XSETID
 * below that node's key and enough XADDs start a node keyed below it,
 * which sorts first, and redis-server 7.0 itself then lists entries out
 * of order and misses some by ID (XADD z 87-0, XADD z 89-0, XDEL z 89-0,
 * XTRIM z MINID 89-0, XSETID z 3-0, four XADDs with stream-node-max-entries
 * 4: XRANGE z - + gives 5-84 5-85 3-1 5-83, XRANGE z 3-1 3-1 nothing).
 * goblin-core keeps Redis's layout, so it answers the same
 * (test_streams_hardening.py compares that sequence with redis-server);
 * the model, which keeps live entries in order, stays out of it. */
static void step_xsetid(void)
{
    gb_stream_id floor = m.n ? m.live[m.n - 1] : gb_stream_id_make(0, 0);
    gb_stream_id key = last_node_key();
    if (gb_stream_id_cmp(key, floor) > 0)
        floor = key;
    gb_stream_id id = floor;
    if (MODEL_BELOW(4) && gb_stream_id_cmp(s->last_id, floor) > 0) {
        /* somewhere between the last live entry and the last ID */
        uint64_t span = s->last_id.ms - floor.ms;
        id.ms = floor.ms + MODEL_BELOW(span + 1);
        id.seq = id.ms == floor.ms ? floor.seq + MODEL_BELOW(3) : MODEL_BELOW(3);
    } else if (!m.n && !gb_rax_size(&s->nodes) && MODEL_BELOW(2)) {
        id.ms = MODEL_BELOW(s->last_id.ms + 1);
        id.seq = MODEL_BELOW(3);
    } else {
        id.ms += MODEL_BELOW(4);
    }
    s->last_id = id;
}

static void step_xtrim(void)
{
    gb_stream_trim t = {.approx = MODEL_BELOW(2)};
    t.limit = MODEL_BELOW(3) ? 0 : 1 + MODEL_BELOW(10);
    if (!t.approx)
        t.limit = 0;
    if (MODEL_BELOW(2)) {
        t.strategy = GB_TRIM_MAXLEN;
        t.maxlen = m.n ? MODEL_BELOW(m.n + 2) : 0;
    } else {
        t.strategy = GB_TRIM_MINID;
        t.minid = probe_id();
    }
    size_t before = m.n;
    int64_t removed = gb_stream_trim_apply(s, &t);
    MODEL_CHECK(removed >= 0 && (uint64_t)removed <= m.n, "XTRIM removed %lld of %zu", (long long)removed, m.n);
    /* Trimming removes the oldest live entries. */
    for (int64_t i = 0; i < removed; i++) {
        MODEL_CHECK(!gb_stream_entry_exists(s, m.live[i]), "a trimmed entry still there");
        if (t.strategy == GB_TRIM_MINID)
            MODEL_CHECK(gb_stream_id_cmp(m.live[i], t.minid) < 0, "MINID trimmed an entry not below it");
        remember_gone(m.live[i]);
    }
    memmove(&m.live[0], &m.live[removed], (m.n - (size_t)removed) * sizeof m.live[0]);
    m.n -= (size_t)removed;
    if (t.strategy == GB_TRIM_MAXLEN) {
        MODEL_CHECK(m.n >= t.maxlen || removed == 0, "MAXLEN trimmed below its length");
        if (!t.approx)
            MODEL_CHECK(m.n == (before < t.maxlen ? before : t.maxlen), "exact MAXLEN left %zu", m.n);
    }
    if (m.n)
        s->first_id = m.live[0];
}

/* ---- the views ---- */

static void check_range(gb_stream_id lo, gb_stream_id hi, bool rev)
{
    size_t i = lower_bound(lo), end = lower_bound(hi);
    if (end < m.n && gb_stream_id_cmp(m.live[end], hi) == 0)
        end++;
    if (gb_stream_id_cmp(lo, hi) > 0)
        end = i;
    gb_stream_iter it;
    gb_stream_iter_start(&it, s, &lo, &hi, rev);
    gb_stream_id id;
    uint32_t nf;
    size_t k = rev ? end : i;
    while (gb_stream_iter_next(&it, &id, &nf)) {
        if (rev) {
            MODEL_CHECK(k > i, "more entries backwards than the model has");
            k--;
        } else {
            MODEL_CHECK(k < end, "more entries forwards than the model has");
        }
        MODEL_CHECK(gb_stream_id_cmp(id, m.live[k]) == 0,
                    "range %llu-%llu..%llu-%llu %s: got %llu-%llu, model %llu-%llu", (unsigned long long)lo.ms,
                    (unsigned long long)lo.seq, (unsigned long long)hi.ms, (unsigned long long)hi.seq,
                    rev ? "backwards" : "forwards", (unsigned long long)id.ms, (unsigned long long)id.seq,
                    (unsigned long long)m.live[k].ms, (unsigned long long)m.live[k].seq);
        MODEL_CHECK(nf >= 1 && nf <= 2, "an entry of %u fields", nf);
        if (!rev)
            k++;
    }
    gb_stream_iter_done(&it);
    MODEL_CHECK(k == (rev ? i : end), "the range ended early");
}

static void check_nodes_read_back(void)
{
    gb_rax_iter ri;
    gb_rax_iter_init(&ri, &s->nodes);
    for (bool ok = gb_rax_seek(&ri, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&ri)) {
        const gb_snode *n = ri.value;
        const char *why = NULL;
        gb_snode *back = gb_snode_from_bytes(n->data, n->used - sizeof *n, gb_stream_id_decode(ri.key), &why);
        MODEL_CHECK(back, "a node's snapshot bytes are refused: %s", why);
        MODEL_CHECK(memcmp(back, n, n->used) == 0, "a node read back differs");
        gb_snode_free(back);
    }
    gb_rax_iter_done(&ri);
}

static void check_views(void)
{
    MODEL_CHECK(s->length == m.n, "length %llu, model %zu", (unsigned long long)s->length, m.n);
    gb_stream_id zero = gb_stream_id_make(0, 0), top = gb_stream_id_make(UINT64_MAX, UINT64_MAX);
    check_range(zero, top, false);
    check_range(zero, top, true);
    for (int i = 0; i < 4; i++) {
        gb_stream_id a = probe_id(), b = probe_id();
        if (gb_stream_id_cmp(a, b) > 0 && MODEL_BELOW(4)) {
            gb_stream_id t = a;
            a = b;
            b = t;
        }
        check_range(a, b, MODEL_BELOW(2));
        check_range(a, a, MODEL_BELOW(2));
    }
    for (int i = 0; i < 4; i++) {
        gb_stream_id id = probe_id();
        MODEL_CHECK(gb_stream_entry_exists(s, id) == model_has(id), "lookup of %llu-%llu", (unsigned long long)id.ms,
                    (unsigned long long)id.seq);
    }
    gb_stream_id edge;
    MODEL_CHECK(gb_stream_edge_id(s, true, &edge) == (m.n > 0), "first entry");
    if (m.n)
        MODEL_CHECK(gb_stream_id_cmp(edge, m.live[0]) == 0, "the first entry differs");
    MODEL_CHECK(gb_stream_edge_id(s, false, &edge) == (m.n > 0), "last entry");
    if (m.n)
        MODEL_CHECK(gb_stream_id_cmp(edge, m.live[m.n - 1]) == 0, "the last entry differs");
    check_nodes_read_back();
}


/* A fresh stream and model with node limits chosen by MODEL_BELOW. */
static void model_begin(void)
{
    memset(&m, 0, sizeof m);
    s = gb_stream_new();
    lim.node_max_entries = 2 + MODEL_BELOW(6);
    lim.node_max_bytes = MODEL_BELOW(2) ? 0 : 60 + MODEL_BELOW(200);
}

/* One step chosen by MODEL_BELOW, then every view checked. */
static void model_step(void)
{
    uint64_t r = MODEL_BELOW(100);
    if (r < 45)
        step_xadd();
    else if (r < 75)
        step_xdel();
    else if (r < 92)
        step_xsetid();
    else
        step_xtrim();
    check_views();
}

static void model_end(void)
{
    gb_stream_free(s);
    s = NULL;
}

#endif
