/*
 * rax: a radix tree of byte-string keys, each holding a pointer.
 *
 * Streams use it for their index of entry nodes (keys are 16-byte
 * big-endian entry IDs, so key order is ID order), for the pending-entries
 * lists of consumer groups and consumers (same keys), and for the groups
 * and consumers by name.
 *
 * It is built like Redis's rax.c (the design is published there), because
 * XINFO STREAM reports the tree's node count ("radix-tree-nodes") and a
 * client comparing servers sees it: the same keys inserted and removed in
 * the same order give the same number of nodes here as in Redis 7.0.
 *
 * A node holds either
 *   - a branch: `size` children, one byte each, in byte order; or
 *   - a compressed run: `size` >= 2 bytes leading to exactly one child.
 * A node "is a key" when the bytes on the path to it (not its own) form a
 * stored key; it then carries the value. Leaves are key nodes without
 * children. Insertion splits runs where a new key diverges; removal frees
 * nodes left without keys below them and re-merges a chain of single-child
 * nodes into one run (Redis's rules, including where it does not merge).
 *
 * Node layout, one allocation:
 *
 *   offset      size         field
 *   0           4            bits 0: is-key, 1: compressed, 2..31: size
 *   4           size         the bytes (branch: one per child, sorted)
 *   4+size      0..7         padding to pointer alignment
 *   ...         8 x kids     child pointers (kids = compressed ? 1 : size)
 *   ...         8            the value, when is-key
 *
 * An empty tree is one node (the head: not a key, no children). Every walk
 * is iterative and iterators keep their path on a heap stack, so a long or
 * adversarial key set cannot overflow the C stack.
 */
#ifndef GB_ENGINE_DS_RAX_H
#define GB_ENGINE_DS_RAX_H

#include "engine/base/common.h"

typedef struct gb_rax_node gb_rax_node;

typedef struct gb_rax {
    gb_rax_node *head;
    uint64_t numele;   /* keys stored */
    uint64_t numnodes; /* nodes allocated, head included (XINFO radix-tree-nodes) */
} gb_rax;

void gb_rax_init(gb_rax *r);
/* Frees every node, calling free_value (when not NULL) on each value. The
 * tree must be initialised again before reuse. */
void gb_rax_destroy(gb_rax *r, void (*free_value)(void *value, void *ctx), void *ctx);

/* A teardown frees whole trees a few nodes per step: a big value freed by
 * the engine between events (engine/core/memory/sliced_free.h) instead of
 * in one gb_rax_destroy. */
typedef struct gb_rax_teardown gb_rax_teardown;
gb_rax_teardown *gb_rax_teardown_new(void);
/* Hands r's nodes to t; each value will go to free_value (NULL: values
 * are kept, when another tree owns them). r is left empty: gb_rax_destroy
 * of it does nothing, gb_rax_init makes it usable. A teardown takes trees
 * with up to 4 different free_value functions. */
void gb_rax_teardown_add(gb_rax_teardown *t, gb_rax *r, void (*free_value)(void *value, void *ctx));
/* Frees about max_nodes nodes, at least one; true once none is left, when
 * t itself is freed too. */
bool gb_rax_teardown_step(gb_rax_teardown *t, size_t max_nodes);

/* Adds key -> value, or replaces the value of an existing key (its previous
 * value in *old when old is not NULL). Returns true when the key is new. */
bool gb_rax_insert(gb_rax *r, const uint8_t *key, size_t len, void *value, void **old);
/* Adds key -> value only when the key is new; otherwise changes nothing and
 * returns false with the present value in *existing (when not NULL). */
bool gb_rax_try_insert(gb_rax *r, const uint8_t *key, size_t len, void *value, void **existing);
bool gb_rax_find(const gb_rax *r, const uint8_t *key, size_t len, void **value);
/* Removes key; false when absent. Its value goes to *old when not NULL. */
bool gb_rax_remove(gb_rax *r, const uint8_t *key, size_t len, void **old);

/* Walks the whole tree checking its shape: node and key counts equal to
 * numnodes and numele, runs of at least two bytes, branch bytes in order,
 * no childless node but the head that is not a key. NULL when sound, else
 * what is wrong (tests). */
const char *gb_rax_check(const gb_rax *r);

static inline uint64_t gb_rax_size(const gb_rax *r) { return r->numele; }
/* Bytes the nodes take (gb_mem_accounted), walking the whole tree. */
size_t gb_rax_mem(const gb_rax *r);

/* ---- ordered iteration ----
 *
 * An iterator is positioned on a key (it->key, it->key_len, it->value) or
 * at the end (it->eof). Any change to the tree invalidates it: seek again
 * (with the key saved) after inserting or removing. */

enum gb_rax_seek {
    GB_RAX_FIRST, /* the smallest key */
    GB_RAX_LAST,  /* the largest key */
    GB_RAX_GE,    /* the smallest key >= the given one */
    GB_RAX_GT,
    GB_RAX_LE,    /* the largest key <= the given one */
    GB_RAX_LT,
};

typedef struct gb_rax_frame {
    gb_rax_node *node;
    uint32_t child; /* the child taken below node (0 for a compressed run) */
} gb_rax_frame;

typedef struct gb_rax_iter {
    const gb_rax *rax;
    gb_rax_node *node; /* the key node it stands on */
    uint8_t *key;
    size_t key_len, key_cap;
    void *value;
    bool eof;
    gb_rax_frame *stack; /* the path from the head to node's parent */
    size_t depth, stack_cap;
    uint8_t key_small[64];
    gb_rax_frame stack_small[24];
} gb_rax_iter;

void gb_rax_iter_init(gb_rax_iter *it, const gb_rax *r);
void gb_rax_iter_done(gb_rax_iter *it);
/* Positions the iterator; returns !it->eof. key/len are ignored for
 * GB_RAX_FIRST and GB_RAX_LAST. */
bool gb_rax_seek(gb_rax_iter *it, enum gb_rax_seek op, const uint8_t *key, size_t len);
/* Moves to the next (previous) key; false, and eof, past the end. */
bool gb_rax_next(gb_rax_iter *it);
bool gb_rax_prev(gb_rax_iter *it);

#endif
