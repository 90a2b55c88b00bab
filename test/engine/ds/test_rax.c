/* engine/ds/rax.c: node counts equal to Redis 7.0's for the same keys
 * (XINFO STREAM radix-tree-nodes, measured on redis-server 7.0.15 with
 * stream-node-max-entries 1), then insert/find/remove/seek/iterate against
 * a sorted model with keys that are prefixes of each other, the empty key
 * and 16-byte IDs, checking the tree's shape after every step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "engine/base/mem.h"
#include "engine/base/random.h"
#include "engine/ds/rax.h"
#include "engine/ds/stream_id.h"

static void insert_id(gb_rax *r, uint64_t ms, uint64_t seq)
{
    uint8_t k[16];
    gb_stream_id_encode(k, gb_stream_id_make(ms, seq));
    assert_true(gb_rax_insert(r, k, 16, (void *)(uintptr_t)(ms + 1), NULL));
}

static void remove_id(gb_rax *r, uint64_t ms, uint64_t seq)
{
    uint8_t k[16];
    gb_stream_id_encode(k, gb_stream_id_make(ms, seq));
    assert_true(gb_rax_remove(r, k, 16, NULL));
}

static void test_node_counts_of_appends(void **state)
{
    (void)state;
    /* XADD s <i>-1 for i = 1..n, one entry per node. */
    static const struct { uint64_t n, nodes; } redis[] = {
        {1, 2}, {2, 6}, {3, 8}, {5, 12}, {10, 22}, {100, 202}, {255, 512}, {256, 515}, {257, 518}, {1000, 2006},
        {70000, 140278},
    };
    for (size_t t = 0; t < GB_ARRAY_LEN(redis); t++) {
        gb_rax r;
        gb_rax_init(&r);
        for (uint64_t i = 1; i <= redis[t].n; i++)
            insert_id(&r, i, 1);
        assert_int_equal(gb_rax_size(&r), redis[t].n);
        assert_int_equal(r.numnodes, redis[t].nodes);
        gb_rax_destroy(&r, NULL, NULL);
    }
}

static void test_node_counts_of_head_trims(void **state)
{
    (void)state;
    /* XADD s <i>-<i%3> for i = 1..3000, then XTRIM s MAXLEN m. */
    static const struct { uint64_t keep, nodes; } redis[] = {
        {2990, 5994}, {2500, 5013}, {1000, 2007}, {10, 22}, {1, 2},
    };
    gb_rax r;
    gb_rax_init(&r);
    for (uint64_t i = 1; i <= 3000; i++)
        insert_id(&r, i, i % 3);
    uint64_t first = 1;
    for (size_t t = 0; t < GB_ARRAY_LEN(redis); t++) {
        for (; 3000 - first + 1 > redis[t].keep; first++)
            remove_id(&r, first, first % 3);
        assert_int_equal(r.numnodes, redis[t].nodes);
    }
    gb_rax_destroy(&r, NULL, NULL);
}

static void test_node_counts_of_scattered_deletes(void **state)
{
    (void)state;
    /* 2000 IDs <i*7919 % 100003 + i*100003>-<i%5>, deleted in the order
     * (j*7+3) % 2000, 250 at a time. */
    static const uint64_t nodes[] = {3620, 3087, 2551, 2026, 1514, 1014, 513, 1};
    gb_rax r;
    gb_rax_init(&r);
    for (uint64_t i = 1; i <= 2000; i++)
        insert_id(&r, i * 7919 % 100003 + i * 100003, i % 5);
    for (int k = 0; k < 8; k++) {
        for (int j = k * 250; j < (k + 1) * 250; j++) {
            uint64_t i = (uint64_t)((j * 7 + 3) % 2000) + 1;
            remove_id(&r, i * 7919 % 100003 + i * 100003, i % 5);
        }
        assert_int_equal(r.numnodes, nodes[k]);
    }
    assert_int_equal(gb_rax_size(&r), 0);
    gb_rax_destroy(&r, NULL, NULL);
}

/* ---- the model ---- */

typedef struct mkey {
    uint8_t b[20];
    size_t len;
    uintptr_t value;
} mkey;

typedef struct model {
    mkey *v;
    size_t n;
} model;

static int key_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    size_t m = alen < blen ? alen : blen;
    int c = m ? memcmp(a, b, m) : 0;
    if (c)
        return c;
    return alen < blen ? -1 : alen > blen;
}

/* Index of the first key >= k. */
static size_t lower(const model *m, const uint8_t *k, size_t len)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (key_cmp(m->v[mid].b, m->v[mid].len, k, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void random_key(uint8_t *k, size_t *len)
{
    static const uint8_t alphabet[] = {'a', 'b', 'c', 0, 0xff};
    if (gb_random_u64() % 4 == 0) {
        gb_stream_id_encode(k, gb_stream_id_make(gb_random_u64() % 40, gb_random_u64() % 3));
        *len = 16;
        return;
    }
    *len = gb_random_u64() % 7;
    for (size_t i = 0; i < *len; i++)
        k[i] = alphabet[gb_random_u64() % sizeof alphabet];
}

static void check_shape(const gb_rax *r)
{
    const char *why = gb_rax_check(r);
    if (why)
        fail_msg("%s", why);
}

static void check_seek(const gb_rax *r, const model *m)
{
    uint8_t k[20];
    size_t len;
    random_key(k, &len);
    size_t i = lower(m, k, len);
    bool exact = i < m->n && key_cmp(m->v[i].b, m->v[i].len, k, len) == 0;
    gb_rax_iter it;
    gb_rax_iter_init(&it, r);
    static const enum gb_rax_seek ops[] = {GB_RAX_GE, GB_RAX_GT, GB_RAX_LE, GB_RAX_LT};
    for (size_t o = 0; o < GB_ARRAY_LEN(ops); o++) {
        long want;
        switch (ops[o]) {
        case GB_RAX_GE:
            want = (long)i;
            break;
        case GB_RAX_GT:
            want = (long)i + (exact ? 1 : 0);
            break;
        case GB_RAX_LE:
            want = exact ? (long)i : (long)i - 1;
            break;
        default:
            want = (long)i - 1;
            break;
        }
        bool found = gb_rax_seek(&it, ops[o], k, len);
        if (want < 0 || (size_t)want >= m->n) {
            assert_false(found);
            continue;
        }
        assert_true(found);
        assert_int_equal(it.key_len, m->v[want].len);
        if (it.key_len)
            assert_memory_equal(it.key, m->v[want].b, it.key_len);
        assert_int_equal((uintptr_t)it.value, m->v[want].value);
        /* One step each way from there agrees with the model too. */
        if (gb_rax_next(&it)) {
            assert_true((size_t)want + 1 < m->n);
            assert_int_equal(it.key_len, m->v[want + 1].len);
        } else {
            assert_int_equal((size_t)want + 1, m->n);
        }
    }
    gb_rax_iter_done(&it);
}

static void check_full_walks(const gb_rax *r, const model *m)
{
    gb_rax_iter it;
    gb_rax_iter_init(&it, r);
    size_t i = 0;
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it), i++) {
        assert_true(i < m->n);
        assert_int_equal(it.key_len, m->v[i].len);
        if (it.key_len)
            assert_memory_equal(it.key, m->v[i].b, it.key_len);
    }
    assert_int_equal(i, m->n);
    for (bool ok = gb_rax_seek(&it, GB_RAX_LAST, NULL, 0); ok; ok = gb_rax_prev(&it)) {
        assert_true(i > 0);
        i--;
        assert_int_equal(it.key_len, m->v[i].len);
        if (it.key_len)
            assert_memory_equal(it.key, m->v[i].b, it.key_len);
    }
    assert_int_equal(i, 0);
    gb_rax_iter_done(&it);
}

static void test_against_model(void **state)
{
    (void)state;
    gb_random_seed(42);
    for (int round = 0; round < 20; round++) {
        gb_rax r;
        gb_rax_init(&r);
        model m = {calloc(4096, sizeof(mkey)), 0};
        for (int step = 0; step < 1500; step++) {
            uint8_t k[20];
            size_t len;
            random_key(k, &len);
            size_t i = lower(&m, k, len);
            bool present = i < m.n && key_cmp(m.v[i].b, m.v[i].len, k, len) == 0;
            uintptr_t value = (uintptr_t)gb_random_u64() | 1;
            unsigned op = (unsigned)(gb_random_u64() % (round % 2 ? 3 : 5));
            if (op == 0 || op >= 3) {
                void *old = NULL;
                bool added = gb_rax_insert(&r, k, len, (void *)value, &old);
                assert_int_equal(added, !present);
                if (present) {
                    assert_int_equal((uintptr_t)old, m.v[i].value);
                    m.v[i].value = value;
                } else {
                    memmove(&m.v[i + 1], &m.v[i], (m.n - i) * sizeof(mkey));
                    memcpy(m.v[i].b, k, len);
                    m.v[i].len = len;
                    m.v[i].value = value;
                    m.n++;
                }
            } else if (op == 1) {
                void *old = NULL;
                bool removed = gb_rax_remove(&r, k, len, &old);
                assert_int_equal(removed, present);
                if (present) {
                    assert_int_equal((uintptr_t)old, m.v[i].value);
                    memmove(&m.v[i], &m.v[i + 1], (m.n - i - 1) * sizeof(mkey));
                    m.n--;
                }
            } else {
                void *v = NULL;
                bool added = gb_rax_try_insert(&r, k, len, (void *)value, &v);
                assert_int_equal(added, !present);
                if (present) {
                    assert_int_equal((uintptr_t)v, m.v[i].value);
                } else {
                    memmove(&m.v[i + 1], &m.v[i], (m.n - i) * sizeof(mkey));
                    memcpy(m.v[i].b, k, len);
                    m.v[i].len = len;
                    m.v[i].value = value;
                    m.n++;
                }
            }
            assert_int_equal(gb_rax_size(&r), m.n);
            void *found = NULL;
            random_key(k, &len);
            i = lower(&m, k, len);
            present = i < m.n && key_cmp(m.v[i].b, m.v[i].len, k, len) == 0;
            assert_int_equal(gb_rax_find(&r, k, len, &found), present);
            if (present)
                assert_int_equal((uintptr_t)found, m.v[i].value);
            check_seek(&r, &m);
            if (step % 100 == 0) {
                check_full_walks(&r, &m);
                check_shape(&r);
            }
        }
        /* Removing everything leaves the bare head. */
        while (m.n) {
            m.n--;
            assert_true(gb_rax_remove(&r, m.v[m.n].b, m.v[m.n].len, NULL));
        }
        assert_int_equal(r.numnodes, 1);
        gb_rax_destroy(&r, NULL, NULL);
        free(m.v);
    }
}

/* Branches of every width up to 256 children, some of them keys
 * themselves: children are added and removed in place (the value slot and
 * the child pointers move as the padding changes), so after every step
 * each key must still find its own value. */
static void check_wide(const gb_rax *r, const bool *present)
{
    for (unsigned k = 0; k < 2 * 256; k++) {
        uint8_t key[2] = {(uint8_t)(k >> 8 ? 0x7f : 0x40), (uint8_t)k};
        void *v = NULL;
        assert_int_equal(gb_rax_find(r, key, 2, &v), present[k]);
        if (present[k])
            assert_int_equal((uintptr_t)v, k + 1);
    }
    void *v = NULL;
    assert_true(gb_rax_find(r, (const uint8_t *)"\x7f", 1, &v));
    assert_int_equal((uintptr_t)v, 0x7f);
    check_shape(r);
}

static void test_wide_branches(void **state)
{
    (void)state;
    size_t before = gb_mem_used();
    gb_random_seed(7);
    unsigned order[2 * 256];
    bool present[2 * 256] = {false};
    for (unsigned i = 0; i < GB_ARRAY_LEN(order); i++)
        order[i] = i;
    for (unsigned i = GB_ARRAY_LEN(order) - 1; i > 0; i--) {
        unsigned j = (unsigned)(gb_random_u64() % (i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    gb_rax r;
    gb_rax_init(&r);
    /* "\x7f" is a key whose node is the branch of the keys "\x7f<c>". */
    assert_true(gb_rax_insert(&r, (const uint8_t *)"\x7f", 1, (void *)(uintptr_t)0x7f, NULL));
    for (unsigned i = 0; i < GB_ARRAY_LEN(order); i++) {
        unsigned k = order[i];
        uint8_t key[2] = {(uint8_t)(k >> 8 ? 0x7f : 0x40), (uint8_t)k};
        assert_true(gb_rax_insert(&r, key, 2, (void *)(uintptr_t)(k + 1), NULL));
        present[k] = true;
        if (i % 37 == 0)
            check_wide(&r, present);
    }
    check_wide(&r, present);
    for (unsigned i = 0; i < GB_ARRAY_LEN(order); i++) {
        unsigned k = order[(i * 211) % GB_ARRAY_LEN(order)];
        uint8_t key[2] = {(uint8_t)(k >> 8 ? 0x7f : 0x40), (uint8_t)k};
        void *old = NULL;
        assert_true(gb_rax_remove(&r, key, 2, &old));
        assert_int_equal((uintptr_t)old, k + 1);
        present[k] = false;
        if (i % 37 == 0)
            check_wide(&r, present);
    }
    check_wide(&r, present);
    assert_int_equal(gb_rax_size(&r), 1);
    gb_rax_destroy(&r, NULL, NULL);
    assert_int_equal(gb_mem_used(), before);
}

static void free_counted(void *v, void *ctx)
{
    (void)v;
    (*(int *)ctx)++;
}

static void test_long_keys_and_destroy(void **state)
{
    (void)state;
    size_t before = gb_mem_used();
    gb_rax r;
    gb_rax_init(&r);
    /* "a", "aa", ... : a chain 3000 keys deep; destroy must not recurse. */
    uint8_t *k = malloc(3000);
    memset(k, 'a', 3000);
    for (size_t len = 1; len <= 3000; len++)
        assert_true(gb_rax_insert(&r, k, len, k, NULL));
    assert_int_equal(gb_rax_size(&r), 3000);
    gb_rax_iter it;
    gb_rax_iter_init(&it, &r);
    assert_true(gb_rax_seek(&it, GB_RAX_LAST, NULL, 0));
    assert_int_equal(it.key_len, 3000);
    assert_true(gb_rax_seek(&it, GB_RAX_LT, k, 1500));
    assert_int_equal(it.key_len, 1499);
    gb_rax_iter_done(&it);
    int freed = 0;
    gb_rax_destroy(&r, free_counted, &freed);
    assert_int_equal(freed, 3000);
    assert_int_equal(gb_mem_used(), before);
    free(k);
}

/* gb_rax_teardown: three trees (values freed by two different functions,
 * and one whose values are kept) freed 7 nodes a step: every node and every
 * owned value freed once (the memory count returns to where it was; ASan
 * would see a double free), the kept values untouched, each step but the
 * last short of done, and a step asked for 0 nodes still progresses. */
static int freed_a, freed_b;
static void free_a(void *v, void *ctx)
{
    (void)ctx;
    freed_a++;
    gb_free(v);
}
static void free_b(void *v, void *ctx)
{
    (void)ctx;
    freed_b++;
    gb_free(v);
}

static void test_teardown_in_steps(void **state)
{
    (void)state;
    size_t base = gb_mem_used();
    gb_rax a, b, kept;
    gb_rax_init(&a);
    gb_rax_init(&b);
    gb_rax_init(&kept);
    static int shared[1];
    uint64_t nodes = 0;
    for (uint64_t i = 0; i < 3000; i++) {
        uint8_t k[16];
        gb_stream_id_encode(k, gb_stream_id_make(i * 7919 % 100003, i & 3));
        assert_true(gb_rax_insert(&a, k, 16, gb_malloc(8), NULL));
        assert_true(gb_rax_insert(&kept, k, 16, shared, NULL));
        char name[32];
        int n = snprintf(name, sizeof name, "consumer-%llu", (unsigned long long)i);
        assert_true(gb_rax_insert(&b, (const uint8_t *)name, (size_t)n, gb_malloc(24), NULL));
    }
    nodes = a.numnodes + b.numnodes + kept.numnodes;
    gb_rax_teardown *t = gb_rax_teardown_new();
    freed_a = freed_b = 0;
    gb_rax_teardown_add(t, &a, free_a);
    gb_rax_teardown_add(t, &kept, NULL);
    gb_rax_teardown_add(t, &b, free_b);
    assert_null(a.head);
    assert_int_equal(gb_rax_size(&b), 0);
    gb_rax_destroy(&a, free_a, NULL); /* handed over: nothing left to free here */
    assert_int_equal(freed_a, 0);
    assert_false(gb_rax_teardown_step(t, 0));
    uint64_t steps = 1;
    while (!gb_rax_teardown_step(t, 7))
        steps++;
    assert_int_equal(freed_a, 3000);
    assert_int_equal(freed_b, 3000);
    assert_true(steps >= (nodes - 1) / 7);
    assert_true(steps <= nodes / 7 + 2);
    assert_int_equal(gb_mem_used(), base);
    /* an empty tree (its head alone) is done at the first step */
    gb_rax empty;
    gb_rax_init(&empty);
    t = gb_rax_teardown_new();
    gb_rax_teardown_add(t, &empty, NULL);
    assert_true(gb_rax_teardown_step(t, 1));
    assert_int_equal(gb_mem_used(), base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_counts_of_appends),
        cmocka_unit_test(test_node_counts_of_head_trims),
        cmocka_unit_test(test_node_counts_of_scattered_deletes),
        cmocka_unit_test(test_against_model),
        cmocka_unit_test(test_wide_branches),
        cmocka_unit_test(test_long_keys_and_destroy),
        cmocka_unit_test(test_teardown_in_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
