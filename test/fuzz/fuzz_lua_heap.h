/*
 * A Lua state's allocator for the harnesses that make their own bare
 * interpreters (fuzz_lualib.c, fuzz_luastdlib.c): the C heap, capped at
 * FUZZ_LUA_HEAP_CAP per state, so that an input asking a library for a
 * huge string or table gets Lua's "not enough memory" instead of taking
 * the fuzzer's memory.
 */
#ifndef GB_TEST_FUZZ_LUA_HEAP_H
#define GB_TEST_FUZZ_LUA_HEAP_H

#include <stdlib.h>

#define FUZZ_LUA_HEAP_CAP (64u << 20)

typedef struct fuzz_lua_heap {
    size_t used;
} fuzz_lua_heap;

/* lua_Alloc; ud is the state's fuzz_lua_heap. */
static inline void *fuzz_lua_heap_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    fuzz_lua_heap *h = ud;
    if (nsize == 0) {
        free(ptr);
        h->used -= osize;
        return NULL;
    }
    if (nsize > osize && h->used + (nsize - osize) > FUZZ_LUA_HEAP_CAP)
        return NULL;
    void *q = realloc(ptr, nsize);
    if (q)
        h->used = h->used - osize + nsize;
    return q;
}

#endif
