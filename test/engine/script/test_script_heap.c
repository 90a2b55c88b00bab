/*
 * The Lua interpreter's small-block heap (engine/script/script_heap.c)
 * against a model: random allocations and frees of every size class, each
 * block filled with its own pattern and checked when freed (two blocks
 * sharing memory would overwrite each other's); chunks whose blocks are all
 * free go back to the engine; a chunk the engine refuses is a NULL when the
 * caller may fail, and the heap stays usable.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/base/mem.h"
#include "engine/base/random.h"
#include "engine/script/script_heap.h"

typedef struct live_block {
    unsigned char *p;
    size_t size;
    unsigned char fill;
} live_block;

/* The engine's generator, seeded in main: the same sequence every run. */
static uint64_t next_random(void) { return gb_random_u64(); }

static void check_and_free(gb_lua_heap *h, live_block *b)
{
    for (size_t i = 0; i < b->size; i++)
        if (b->p[i] != b->fill)
            fail_msg("block of %zu bytes changed at byte %zu: %u, not %u", b->size, i, b->p[i], b->fill);
    gb_lua_heap_free(h, b->p);
}

static void test_blocks_never_overlap(void **state)
{
    (void)state;
    gb_lua_heap h;
    gb_lua_heap_init(&h);
    enum { SLOTS = 20000, STEPS = 400000 };
    live_block *live = calloc(SLOTS, sizeof *live);
    for (int step = 0; step < STEPS; step++) {
        live_block *b = &live[next_random() % SLOTS];
        if (b->p) {
            check_and_free(&h, b);
            b->p = NULL;
        } else {
            b->size = 1 + next_random() % GB_LUA_SMALL_MAX;
            b->fill = (unsigned char)next_random();
            b->p = gb_lua_heap_alloc(&h, b->size, false);
            assert_non_null(b->p);
            assert_true(((uintptr_t)b->p & 15) == 0); /* Lua stores doubles and pointers in them */
            memset(b->p, b->fill, b->size);
        }
    }
    for (int i = 0; i < SLOTS; i++)
        if (live[i].p)
            check_and_free(&h, &live[i]);
    free(live);
    gb_lua_heap_release(&h);
    assert_int_equal(gb_lua_heap_chunk_bytes(&h), 0);
}

static void test_emptied_chunks_go_back(void **state)
{
    (void)state;
    size_t before = gb_mem_used();
    gb_lua_heap h;
    gb_lua_heap_init(&h);
    /* 16 MB of 32-byte blocks (the size of a Lua string of a few bytes),
     * with a survivor every 4000 blocks, then everything else freed. */
    enum { N = 16 * 1024 * 1024 / 32 };
    void **p = malloc(N * sizeof *p);
    for (int i = 0; i < N; i++)
        p[i] = gb_lua_heap_alloc(&h, 32, false);
    size_t full = gb_lua_heap_chunk_bytes(&h);
    assert_true(full >= (size_t)N * 32);
    assert_true(gb_mem_used() >= before + full);
    for (int i = 0; i < N; i++)
        if (i % 4000 != 0)
            gb_lua_heap_free(&h, p[i]);
    /* A survivor pins its chunk (each is in a chunk of its own: 4000
     * blocks apart); every other chunk went back but one kept to give. */
    size_t survivors = (N + 3999) / 4000;
    assert_true(gb_lua_heap_chunk_bytes(&h) <= (survivors + 1) * (size_t)GB_LUA_CHUNK_BYTES);
    assert_true(gb_lua_heap_chunk_bytes(&h) < full / 2);
    /* The survivors are intact and the heap still serves every class. */
    for (int i = 0; i < N; i += 4000)
        gb_lua_heap_free(&h, p[i]);
    for (size_t size = 1; size <= GB_LUA_SMALL_MAX; size += 7)
        gb_lua_heap_free(&h, gb_lua_heap_alloc(&h, size, false));
    free(p);
    gb_lua_heap_release(&h);
    assert_int_equal(gb_mem_used(), before);
}

static void test_refused_chunk_is_null(void **state)
{
    (void)state;
    gb_lua_heap h;
    gb_lua_heap_init(&h);
    void *a = gb_lua_heap_alloc(&h, 100, true); /* the class has a chunk now */
    assert_non_null(a);
    gb_mem_fault_arm(1, true);
    assert_null(gb_lua_heap_alloc(&h, 200, true)); /* another class needs a chunk: refused */
    void *b = gb_lua_heap_alloc(&h, 100, true);    /* carved from the chunk it has */
    gb_mem_fault_disarm();
    assert_non_null(b);
    assert_ptr_not_equal(a, b);
    void *c = gb_lua_heap_alloc(&h, 200, true);
    assert_non_null(c);
    gb_lua_heap_free(&h, a);
    gb_lua_heap_free(&h, b);
    gb_lua_heap_free(&h, c);
    gb_lua_heap_release(&h);
}

static void test_same_class(void **state)
{
    (void)state;
    assert_true(gb_lua_heap_same_class(1, 16));
    assert_false(gb_lua_heap_same_class(16, 17));
    assert_true(gb_lua_heap_same_class(241, 256));
}

int main(void)
{
    gb_random_seed(0x243f6a8885a308d3ull);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks_never_overlap),
        cmocka_unit_test(test_emptied_chunks_go_back),
        cmocka_unit_test(test_refused_chunk_is_null),
        cmocka_unit_test(test_same_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
