/*
 * The small blocks of one Lua interpreter (docs/scripting.md, "Memory").
 *
 * A script run allocates and frees a dozen small objects (the KEYS and ARGV
 * tables and their arrays, each argument string, the tables that carry
 * replies), and Lua's collector frees them in bursts of many runs' worth.
 * glibc's malloc serves such churn from a per-thread cache of 7 blocks per
 * size, which each burst overflows, so most calls took its slower paths:
 * ~6% of the server's CPU for EVALSHA at pipeline 1 (perf,
 * docs/benchmarks.md, "Scripts"). Here a block of up to GB_LUA_SMALL_MAX
 * bytes is a pop from, or a push onto, a free list of its size class.
 *
 * Layout: chunks of GB_LUA_CHUNK_BYTES at addresses that are multiples of
 * GB_LUA_CHUNK_BYTES, from the engine's allocator (so INFO's used_memory
 * and maxmemory see them), each serving one size class (multiples of
 * GB_LUA_CLASS_BYTES): a header (gb_lua_chunk), then blocks of that size.
 * A block's chunk is its address rounded down. A chunk hands out its freed
 * blocks first (linked through their first word), then its never-used
 * ones in address order. Each class keeps the chunks that have a block to
 * give in a list; a chunk whose blocks have all come back goes back to the
 * engine at once, unless it is the only one its class has to give (kept,
 * so that a run that frees and takes one block does not free and allocate
 * a chunk each time). Lua passes a block's size whenever it frees or
 * resizes it, so blocks carry no header: a size of at most
 * GB_LUA_SMALL_MAX means the block is this heap's (script_vm.c keeps that
 * true).
 */
#ifndef GB_ENGINE_SCRIPT_HEAP_H
#define GB_ENGINE_SCRIPT_HEAP_H

#include "engine/base/common.h"

#define GB_LUA_CLASS_BYTES 16
#define GB_LUA_SMALL_MAX 256
#define GB_LUA_CLASSES (GB_LUA_SMALL_MAX / GB_LUA_CLASS_BYTES)
#define GB_LUA_CHUNK_BYTES (16 * 1024)

typedef struct gb_lua_chunk gb_lua_chunk;

typedef struct gb_lua_heap {
    gb_lua_chunk *giving[GB_LUA_CLASSES]; /* each class's chunks with a block to give */
    gb_lua_chunk *all;                    /* every chunk (to release them when the interpreter closes) */
    size_t nchunks;
} gb_lua_heap;

void gb_lua_heap_init(gb_lua_heap *h);

/* A block of `size` bytes (1..GB_LUA_SMALL_MAX). When the heap needs a new
 * chunk and the engine cannot give one: NULL if may_fail, else the engine's
 * out-of-memory abort. */
void *gb_lua_heap_alloc(gb_lua_heap *h, size_t size, bool may_fail);

/* Gives back a block gb_lua_heap_alloc returned (its chunk knows its size). */
void gb_lua_heap_free(gb_lua_heap *h, void *p);

/* Whether sizes a and b share a class (a block of one serves the other). */
static inline bool gb_lua_heap_same_class(size_t a, size_t b)
{
    return (a - 1) / GB_LUA_CLASS_BYTES == (b - 1) / GB_LUA_CLASS_BYTES;
}

/* Releases every chunk (the interpreter has closed). */
void gb_lua_heap_release(gb_lua_heap *h);

/* Bytes held in chunks (in use or free). */
size_t gb_lua_heap_chunk_bytes(const gb_lua_heap *h);

#endif
