/* engine/ds/stream_node.c: random nodes against a plain model (IDs in every
 * delta form, entries with and without the master's fields, values that are
 * and are not canonical integers, binary and long strings), deletion
 * counters, the listpack size Redis would give the same entries (summed
 * here entry by entry with the listpack module's own encoder), the snapshot
 * form read back, and that damaged bytes are refused or read back as a node
 * that walks safely. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/base/mem.h"
#include "engine/base/random.h"
#include "engine/ds/listpack.h"
#include "engine/ds/stream_node.h"

#define MAXF 6
#define MAXE 300

typedef struct model_entry {
    gb_stream_id id;
    size_t n;
    gb_slice fv[2 * MAXF];
    bool deleted;
} model_entry;

typedef struct model {
    model_entry e[MAXE];
    size_t n;
} model;

static const char *const words[] = {"f", "name", "1", "", "-7", "007", "-0", "+1", "123456789",
                                    "2305843009213693951", "2305843009213693952", "-2305843009213693952",
                                    "9223372036854775807", "-9223372036854775808", "9223372036854775808",
                                    "hello", "\x00\xff", "v1", "3.5", " 1"};
static char longbuf[5000];
/* Numbers made for the model's entries, alive until the next build. */
static char numbers[2 * MAXE * MAXF][32];
static size_t nnumbers;

static gb_slice random_value(void)
{
    uint64_t r = gb_random_below(30);
    if (r < GB_ARRAY_LEN(words))
        return gb_slice_make(words[r], r == 16 ? 2 : strlen(words[r]));
    if (r < 25) { /* a number of any size, sometimes out of the int64 range */
        char *b = numbers[nnumbers++];
        int64_t v = (int64_t)gb_random_u64() >> gb_random_below(64);
        int len = snprintf(b, 32, "%lld", (long long)(gb_random_below(2) ? v : -v));
        return gb_slice_make(b, (size_t)len);
    }
    /* 63, 64, 4095, 4096 bytes: the listpack string size classes' edges */
    static const size_t lens[] = {63, 64, 100, 4095, 4096};
    return gb_slice_make(longbuf, lens[gb_random_below(GB_ARRAY_LEN(lens))]);
}

/* The next ID after prev, in one of the node's four delta forms (gaps
 * small and large). */
static gb_stream_id next_id(gb_stream_id prev)
{
    switch (gb_random_below(4)) {
    case 0:
        return gb_stream_id_make(prev.ms, prev.seq + 1);
    case 1:
        return gb_stream_id_make(prev.ms, prev.seq + 2 + gb_random_below(gb_random_below(2) ? 100 : 1u << 30));
    case 2:
        return gb_stream_id_make(prev.ms + 1 + gb_random_below(gb_random_below(2) ? 10 : 1ull << 40), 0);
    default:
        return gb_stream_id_make(prev.ms + 1 + gb_random_below(1000), gb_random_below(2) ? gb_random_u64() : 5);
    }
}

static void random_entry(model_entry *e, const model_entry *master, gb_stream_id id)
{
    e->id = id;
    e->deleted = false;
    if (master && gb_random_below(3)) { /* the master's fields, often */
        e->n = master->n;
        for (size_t i = 0; i < e->n; i++) {
            e->fv[2 * i] = master->fv[2 * i];
            e->fv[2 * i + 1] = random_value();
        }
        if (gb_random_below(4) == 0 && e->n > 1) /* same names, another order: not the same fields */
        {
            gb_slice t = e->fv[0];
            e->fv[0] = e->fv[2];
            e->fv[2] = t;
        }
        return;
    }
    e->n = 1 + gb_random_below(MAXF);
    for (size_t i = 0; i < 2 * e->n; i++)
        e->fv[i] = random_value();
}

/* The listpack Redis 7.0 builds for the model's entries: count, deleted,
 * master field count, master fields, 0; then per entry flags, ms and seq
 * deltas from the master, [field count], fields/values, the entry's
 * element count. */
static size_t lp_size(const model *m)
{
    size_t live = 0, deleted = 0;
    for (size_t i = 0; i < m->n; i++)
        m->e[i].deleted ? deleted++ : live++;
    char num[32];
#define INT(v) gb_lp_entry_size(gb_slice_make(num, (size_t)snprintf(num, sizeof num, "%lld", (long long)(v))))
    const model_entry *master = &m->e[0];
    size_t bytes = 7 + INT(live) + INT(deleted) + INT(master->n) + INT(0);
    for (size_t i = 0; i < master->n; i++)
        bytes += gb_lp_entry_size(master->fv[2 * i]);
    for (size_t k = 0; k < m->n; k++) {
        const model_entry *e = &m->e[k];
        bool same = e->n == master->n;
        for (size_t i = 0; same && i < e->n; i++)
            same = gb_slice_eq(e->fv[2 * i], master->fv[2 * i]);
        bytes += INT((same ? 2 : 0) | (e->deleted ? 1 : 0));
        bytes += INT((int64_t)(e->id.ms - master->id.ms)) + INT((int64_t)(e->id.seq - master->id.seq));
        if (!same)
            bytes += INT(e->n);
        for (size_t i = 0; i < e->n; i++) {
            if (!same)
                bytes += gb_lp_entry_size(e->fv[2 * i]);
            bytes += gb_lp_entry_size(e->fv[2 * i + 1]);
        }
        bytes += INT(e->n + 3 + (same ? 0 : e->n + 1));
    }
#undef INT
    return bytes;
}

/* Walks n and compares every entry with the model. */
static void check(const gb_snode *n, const model *m)
{
    gb_snode_cursor c;
    gb_snode_cursor_init(&c, n, m->e[0].id);
    size_t k = 0, live = 0;
    while (gb_snode_cursor_next(&c)) {
        assert_true(k < m->n);
        const model_entry *e = &m->e[k];
        assert_int_equal(c.e.id.ms, e->id.ms);
        assert_int_equal(c.e.id.seq, e->id.seq);
        assert_int_equal((c.e.flags & GB_SNODE_DELETED) != 0, e->deleted);
        assert_int_equal(c.e.nfields, e->n);
        gb_snode_pairs pp;
        gb_snode_pairs_init(&pp, &c);
        gb_slice f, v;
        for (size_t i = 0; i < e->n; i++) {
            assert_true(gb_snode_pairs_next(&pp, &f, &v));
            assert_true(gb_slice_eq(f, e->fv[2 * i]));
            assert_true(gb_slice_eq(v, e->fv[2 * i + 1]));
        }
        assert_false(gb_snode_pairs_next(&pp, &f, &v));
        live += !e->deleted;
        k++;
    }
    assert_int_equal(k, m->n);
    assert_int_equal(n->live, live);
    assert_int_equal(n->deleted, m->n - live);
    assert_int_equal(gb_snode_last(n).ms, m->e[m->n - 1].id.ms);
    assert_int_equal(gb_snode_last(n).seq, m->e[m->n - 1].id.seq);
    assert_int_equal(gb_snode_lp_bytes(n), lp_size(m));
}

static gb_snode *build(model *m, size_t count)
{
    nnumbers = 0;
    gb_stream_id id = gb_stream_id_make(gb_random_below(1u << 20), gb_random_below(3));
    random_entry(&m->e[0], NULL, id);
    gb_snode *n = gb_snode_new(id, m->e[0].fv, m->e[0].n);
    m->n = 1;
    while (m->n < count) {
        id = next_id(id);
        model_entry *e = &m->e[m->n++];
        random_entry(e, &m->e[0], id);
        n = gb_snode_append(n, m->e[0].id, id, e->fv, e->n);
    }
    return n;
}

/* Deletes the entries the model marks, through cursors as the stream does. */
static void delete_some(gb_snode *n, model *m)
{
    gb_snode_cursor c;
    gb_snode_cursor_init(&c, n, m->e[0].id);
    for (size_t k = 0; gb_snode_cursor_next(&c); k++) {
        if (gb_random_below(3) == 0) {
            gb_snode_delete(n, &c.e);
            m->e[k].deleted = true;
        }
    }
}

static void test_random_nodes_against_the_model(void **state)
{
    (void)state;
    static model m;
    for (int round = 0; round < 300; round++) {
        gb_snode *n = build(&m, 1 + gb_random_below(round % 10 == 0 ? MAXE : 20));
        check(n, &m);
        gb_snode *d = gb_snode_dup(n);
        delete_some(n, &m);
        check(n, &m);
        n = gb_snode_shrink(n);
        check(n, &m);
        gb_snode_free(n);
        for (size_t i = 0; i < m.n; i++)
            m.e[i].deleted = false;
        check(d, &m); /* the copy kept its own bytes */
        gb_snode_free(d);
    }
}

static void test_snapshot_bytes_read_back(void **state)
{
    (void)state;
    static model m;
    for (int round = 0; round < 200; round++) {
        gb_snode *n = build(&m, 1 + gb_random_below(40));
        delete_some(n, &m);
        const char *why = NULL;
        gb_snode *back = gb_snode_from_bytes(n->data, n->used - sizeof(gb_snode), m.e[0].id, &why);
        assert_non_null(back);
        check(back, &m);
        assert_int_equal(back->used, n->used);
        assert_memory_equal(back->data, n->data, n->used - sizeof(gb_snode));
        gb_snode_free(back);
        gb_snode_free(n);
    }
}

/* Walks whatever a damaged record became: the walk stays inside the
 * node and finds the entries its counters say. */
static void walk_all(const gb_snode *n, gb_stream_id master)
{
    gb_snode_cursor c;
    gb_snode_cursor_init(&c, n, master);
    uint64_t k = 0;
    gb_stream_id prev = master;
    while (gb_snode_cursor_next(&c)) {
        if (k)
            assert_true(gb_stream_id_cmp(c.e.id, prev) > 0);
        prev = c.e.id;
        gb_snode_pairs pp;
        gb_snode_pairs_init(&pp, &c);
        gb_slice f, v;
        uint32_t pairs = 0;
        while (gb_snode_pairs_next(&pp, &f, &v)) {
            assert_true(f.len < n->used && v.len < n->used);
            pairs++;
        }
        assert_int_equal(pairs, c.e.nfields);
        k++;
    }
    assert_int_equal(k, gb_snode_entries(n));
}

static void test_damaged_bytes_refused_or_safe(void **state)
{
    (void)state;
    static model m;
    size_t refused = 0, tried = 0;
    for (int round = 0; round < 60; round++) {
        gb_snode *n = build(&m, 1 + gb_random_below(12));
        delete_some(n, &m);
        size_t len = n->used - sizeof(gb_snode);
        uint8_t *copy = gb_malloc(len + 1);
        const char *why;
        for (size_t cut = 0; cut < len; cut++) { /* every truncation */
            memcpy(copy, n->data, cut);
            gb_snode *b = gb_snode_from_bytes(copy, cut, m.e[0].id, &why);
            tried++;
            if (!b) {
                assert_non_null(why);
                refused++;
                continue;
            }
            walk_all(b, m.e[0].id);
            gb_snode_free(b);
        }
        for (int flip = 0; flip < 200; flip++) { /* random bytes changed */
            memcpy(copy, n->data, len);
            for (uint64_t j = 1 + gb_random_below(3); j; j--)
                copy[gb_random_below(len)] = (uint8_t)gb_random_u64();
            gb_snode *b = gb_snode_from_bytes(copy, len, m.e[0].id, &why);
            tried++;
            if (!b) {
                refused++;
                continue;
            }
            walk_all(b, m.e[0].id);
            gb_snode_free(b);
        }
        /* IDs that would pass the largest ID are refused. */
        gb_snode *b = gb_snode_from_bytes(n->data, len, gb_stream_id_make(UINT64_MAX, UINT64_MAX), &why);
        if (m.n > 1)
            assert_null(b);
        else
            gb_snode_free(b);
        gb_free(copy);
        gb_snode_free(n);
    }
    assert_true(refused > tried / 4); /* most damage is seen */
}

static void test_lp_size_classes(void **state)
{
    (void)state;
    /* Redis's listpack sizes (encoding plus back-length) at each class edge. */
    static const struct { int64_t v; size_t bytes; } ints[] = {
        {0, 2}, {127, 2}, {128, 3}, {-1, 3}, {-4096, 3}, {4095, 3}, {4096, 4}, {-32768, 4},
        {32768, 5}, {8388607, 5}, {8388608, 6}, {INT32_MIN, 6}, {(int64_t)INT32_MAX + 1, 10}, {INT64_MIN, 10},
    };
    for (size_t i = 0; i < GB_ARRAY_LEN(ints); i++)
        assert_int_equal(gb_lp_redis_int_size(ints[i].v), ints[i].bytes);
    static const struct { size_t len, bytes; } strs[] = {{0, 2}, {1, 3}, {63, 65}, {64, 67}, {125, 128},
                                                         {126, 130}, {4095, 4099}, {4096, 4103}};
    for (size_t i = 0; i < GB_ARRAY_LEN(strs); i++) {
        gb_slice s = gb_slice_make(longbuf, strs[i].len);
        assert_int_equal(gb_lp_redis_str_size(s), strs[i].bytes);
        assert_int_equal(gb_lp_redis_str_size(s), gb_lp_entry_size(s));
    }
}

int main(void)
{
    memset(longbuf, 'x', sizeof longbuf);
    gb_random_seed(17);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lp_size_classes),
        cmocka_unit_test(test_random_nodes_against_the_model),
        cmocka_unit_test(test_snapshot_bytes_read_back),
        cmocka_unit_test(test_damaged_bytes_refused_or_safe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
