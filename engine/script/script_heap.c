#include "engine/script/script_heap.h"

#include <stdint.h>
#include <string.h>

#include "engine/base/mem.h"

/* A chunk's header, at the start of its GB_LUA_CHUNK_BYTES; its blocks follow. */
struct gb_lua_chunk {
    gb_lua_chunk *prev, *next;         /* in its class's giving list, while it is there */
    gb_lua_chunk *all_prev, *all_next; /* in the heap's list of every chunk */
    void *freed;                       /* blocks given back, linked through their first word */
    char *fresh;                       /* its next never-used block */
    char *end;                         /* the end of its last block */
    uint32_t cls;                      /* its blocks are class_size(cls) bytes */
    uint32_t used;                     /* blocks handed out and not given back */
    bool giving;                       /* in its class's giving list */
};
/* Blocks start 16-byte aligned, as malloc's do (Lua keeps doubles and pointers in them). */
#define CHUNK_HEADER ((sizeof(gb_lua_chunk) + 15) & ~(size_t)15)

static inline unsigned class_of(size_t size) { return (unsigned)((size - 1) / GB_LUA_CLASS_BYTES); }
static inline size_t class_size(unsigned c) { return (size_t)(c + 1) * GB_LUA_CLASS_BYTES; }
static inline gb_lua_chunk *chunk_of(void *block)
{
    return (gb_lua_chunk *)((uintptr_t)block & ~(uintptr_t)(GB_LUA_CHUNK_BYTES - 1));
}

void gb_lua_heap_init(gb_lua_heap *h) { memset(h, 0, sizeof *h); }

static void start_giving(gb_lua_heap *h, gb_lua_chunk *k)
{
    k->prev = NULL;
    k->next = h->giving[k->cls];
    if (k->next)
        k->next->prev = k;
    h->giving[k->cls] = k;
    k->giving = true;
}

static void stop_giving(gb_lua_heap *h, gb_lua_chunk *k)
{
    if (k->prev)
        k->prev->next = k->next;
    else
        h->giving[k->cls] = k->next;
    if (k->next)
        k->next->prev = k->prev;
    k->giving = false;
}

static gb_lua_chunk *new_chunk(gb_lua_heap *h, unsigned c, bool may_fail)
{
    gb_lua_chunk *k = may_fail ? gb_try_sized_aligned_alloc(GB_LUA_CHUNK_BYTES, GB_LUA_CHUNK_BYTES)
                               : gb_sized_aligned_alloc(GB_LUA_CHUNK_BYTES, GB_LUA_CHUNK_BYTES);
    if (!k)
        return NULL;
    k->freed = NULL;
    k->fresh = (char *)k + CHUNK_HEADER;
    k->end = k->fresh + (GB_LUA_CHUNK_BYTES - CHUNK_HEADER) / class_size(c) * class_size(c);
    k->cls = c;
    k->used = 0;
    k->all_prev = NULL;
    k->all_next = h->all;
    if (h->all)
        h->all->all_prev = k;
    h->all = k;
    h->nchunks++;
    start_giving(h, k);
    return k;
}

static void release_chunk(gb_lua_heap *h, gb_lua_chunk *k)
{
    if (k->giving)
        stop_giving(h, k);
    if (k->all_prev)
        k->all_prev->all_next = k->all_next;
    else
        h->all = k->all_next;
    if (k->all_next)
        k->all_next->all_prev = k->all_prev;
    h->nchunks--;
    gb_sized_free(k, GB_LUA_CHUNK_BYTES);
}

void *gb_lua_heap_alloc(gb_lua_heap *h, size_t size, bool may_fail)
{
    unsigned c = class_of(size);
    gb_lua_chunk *k = h->giving[c];
    if (GB_UNLIKELY(!k) && !(k = new_chunk(h, c, may_fail)))
        return NULL;
    void *p = k->freed;
    if (p) {
        k->freed = *(void **)p;
    } else {
        p = k->fresh;
        k->fresh += class_size(c);
    }
    k->used++;
    if (!k->freed && k->fresh == k->end)
        stop_giving(h, k);
    return p;
}

void gb_lua_heap_free(gb_lua_heap *h, void *p)
{
    gb_lua_chunk *k = chunk_of(p);
    *(void **)p = k->freed;
    k->freed = p;
    k->used--;
    if (!k->giving)
        start_giving(h, k);
    /* Empty: back to the engine, unless its class would have none to give. */
    if (k->used == 0 && (k->prev || k->next))
        release_chunk(h, k);
}

void gb_lua_heap_release(gb_lua_heap *h)
{
    while (h->all)
        release_chunk(h, h->all);
}

size_t gb_lua_heap_chunk_bytes(const gb_lua_heap *h) { return h->nchunks * (size_t)GB_LUA_CHUNK_BYTES; }
