#include "engine/ds/rax.h"

#include <stdlib.h>

#include "engine/base/mem.h"

struct gb_rax_node {
    uint32_t iskey : 1;
    uint32_t iscompr : 1;
    uint32_t size : 30; /* children of a branch, bytes of a run */
    uint8_t data[];
};

_Static_assert(sizeof(gb_rax_node) == 4, "rax node header is 4 bytes");

/* A run longer than this continues in a second run below it. */
#define RUN_MAX ((1u << 30) - 1)

/* A branch that lost children gives its block's spare bytes back once they
 * reach this many: a realloc per removal (9 bytes a child) would mostly
 * leave the block as it is and still cost the call and its accounting. */
#define SHRINK_SLACK 64

/* ---- node layout ------------------------------------------------------------------ */

static size_t pad_for(size_t size) { return (sizeof(void *) - ((4 + size) % sizeof(void *))) % sizeof(void *); }
static size_t kids_of(const gb_rax_node *n) { return n->iscompr ? 1 : n->size; }

static size_t layout_len(bool compr, size_t size, bool iskey)
{
    return 4 + size + pad_for(size) + (compr ? 1 : size) * sizeof(void *) + (iskey ? sizeof(void *) : 0);
}

static gb_rax_node **kids(const gb_rax_node *n)
{
    return (gb_rax_node **)(uintptr_t)(n->data + n->size + pad_for(n->size));
}

static void **value_slot(const gb_rax_node *n) { return (void **)(kids(n) + kids_of(n)); }
static void *value_of(const gb_rax_node *n) { return n->iskey ? *value_slot(n) : NULL; }

/* A new node: chars are copied, `children` gives its child pointers
 * (compressed: one; branch: size; may be NULL to fill in later). */
static gb_rax_node *node_make(bool compr, const uint8_t *chars, size_t size, gb_rax_node *const *children, bool iskey,
                              void *value)
{
    gb_rax_node *n = gb_malloc(layout_len(compr, size, iskey));
    n->iskey = iskey;
    n->iscompr = compr;
    n->size = (uint32_t)size;
    if (size)
        memcpy(n->data, chars, size);
    if (children && kids_of(n))
        memcpy(kids(n), children, kids_of(n) * sizeof(gb_rax_node *));
    if (iskey)
        *value_slot(n) = value;
    return n;
}

static gb_rax_node *leaf_make(void) { return node_make(false, NULL, 0, NULL, false, NULL); }

/* n rebuilt as a key holding value (n freed). */
static gb_rax_node *with_key(gb_rax_node *n, void *value)
{
    gb_rax_node *m = node_make(n->iscompr, n->data, n->size, kids(n), true, value);
    gb_free(n);
    return m;
}

/* The child slot of branch n for byte c, or -1. Branch bytes are unique,
 * so an equality search finds it; memchr scans a 256-wide branch (a
 * stream's PEL has two levels of them) a vector at a time. */
static ptrdiff_t branch_find(const gb_rax_node *n, uint8_t c)
{
    const uint8_t *at = memchr(n->data, c, n->size);
    return at ? at - n->data : -1;
}

/* Branch n with one more child (byte c -> child), grown in place where
 * the allocator can (as Redis's raxAddChild: copying a 2 KB node of 256
 * children per insertion would cost more than the walk). *link_out is
 * the new child's slot in the returned node. */
static gb_rax_node *add_child(gb_rax_node *n, uint8_t c, gb_rax_node *child, gb_rax_node ***link_out)
{
    size_t size = n->size, pos = 0;
    while (pos < size && n->data[pos] < c)
        pos++;
    void *value = value_of(n);
    n = gb_realloc(n, layout_len(false, size + 1, n->iskey));
    /* From the top down, each region to a place at or after its old one:
     * the value, the children after pos, those before it, then the bytes. */
    gb_rax_node **from = kids(n);
    n->size = (uint32_t)(size + 1);
    gb_rax_node **to = kids(n);
    if (n->iskey)
        *value_slot(n) = value;
    memmove(to + pos + 1, from + pos, (size - pos) * sizeof *to);
    memmove(to, from, pos * sizeof *to);
    to[pos] = child;
    memmove(n->data + pos + 1, n->data + pos, size - pos);
    n->data[pos] = c;
    *link_out = &to[pos];
    return n;
}

/* parent without its child in slot pos (a run loses its only child and
 * becomes an empty branch, as in Redis). A branch shrinks in place (Redis
 * memmoves too) and reallocs once SHRINK_SLACK bytes are spare. Returns
 * the node, which may have moved. */
static gb_rax_node *remove_child(gb_rax_node *parent, size_t pos)
{
    if (parent->iscompr) {
        gb_rax_node *m = node_make(false, NULL, 0, NULL, parent->iskey, value_of(parent));
        gb_free(parent);
        return m;
    }
    size_t size = parent->size;
    gb_rax_node **from = kids(parent);
    void *value = value_of(parent);
    /* From the bottom up, each region to a place at or before its old one:
     * the bytes (before the children move over the last of them), the
     * children before pos, those after it, then the value. */
    memmove(parent->data + pos, parent->data + pos + 1, size - pos - 1);
    parent->size = (uint32_t)(size - 1);
    gb_rax_node **to = kids(parent);
    if (to != from) /* 7 times in 8 the padding absorbs the lost byte */
        memmove(to, from, pos * sizeof *to);
    memmove(to + pos, from + pos + 1, (size - pos - 1) * sizeof *to);
    if (parent->iskey)
        *value_slot(parent) = value;
    size_t len = layout_len(false, size - 1, parent->iskey);
    if (gb_mem_usable(parent) - len < SHRINK_SLACK)
        return parent;
    return gb_realloc(parent, len);
}

/* ---- a stack of nodes (the path of a walk) ------------------------------------------- */

/* Each frame is a node and, on a walk's path, the child slot taken below
 * it: a removal finds the link to rebuild without scanning a branch of up
 * to 256 children for the pointer (Redis's raxFindParentLink does). */
typedef struct node_stack {
    gb_rax_frame *v;
    size_t n, cap;
    gb_rax_frame small[32];
} node_stack;

static void stack_init(node_stack *s)
{
    s->v = s->small;
    s->n = 0;
    s->cap = GB_ARRAY_LEN(s->small);
}

static void stack_push_step(node_stack *s, gb_rax_node *n, size_t child)
{
    if (s->n == s->cap) {
        size_t cap = s->cap * 2;
        gb_rax_frame *v = gb_malloc(cap * sizeof *v);
        memcpy(v, s->v, s->n * sizeof *v);
        if (s->v != s->small)
            gb_free(s->v);
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n].node = n;
    s->v[s->n].child = (uint32_t)child;
    s->n++;
}

static void stack_push(node_stack *s, gb_rax_node *n) { stack_push_step(s, n, 0); }

/* The top frame, removed; {NULL, 0} when empty. */
static gb_rax_frame stack_pop_frame(node_stack *s)
{
    gb_rax_frame none = {NULL, 0};
    return s->n ? s->v[--s->n] : none;
}

static gb_rax_node *stack_pop(node_stack *s) { return stack_pop_frame(s).node; }

/* The top frame, left there; {NULL, 0} when empty. */
static gb_rax_frame stack_top(const node_stack *s)
{
    gb_rax_frame none = {NULL, 0};
    return s->n ? s->v[s->n - 1] : none;
}

static void stack_done(node_stack *s)
{
    if (s->v != s->small)
        gb_free(s->v);
}

/* ---- the tree ---------------------------------------------------------------------------- */

void gb_rax_init(gb_rax *r)
{
    r->head = leaf_make();
    r->numele = 0;
    r->numnodes = 1;
}

void gb_rax_destroy(gb_rax *r, void (*free_value)(void *value, void *ctx), void *ctx)
{
    node_stack s;
    stack_init(&s);
    stack_push(&s, r->head);
    for (gb_rax_node *n; (n = stack_pop(&s));) {
        for (size_t i = 0; i < kids_of(n); i++)
            stack_push(&s, kids(n)[i]);
        if (n->iskey && free_value)
            free_value(value_of(n), ctx);
        gb_free(n);
    }
    stack_done(&s);
    r->head = NULL;
    r->numele = r->numnodes = 0;
}

/* ---- teardown a slice at a time ----------------------------------------------------------- */

#define TEARDOWN_FNS 4

/* The nodes still to free are the roots of disjoint subtrees, on a stack
 * as gb_rax_destroy keeps them; a frame's child field says which of fns
 * frees the values below it. */
struct gb_rax_teardown {
    node_stack pending;
    void (*fns[TEARDOWN_FNS])(void *value, void *ctx);
    unsigned nfns;
};

gb_rax_teardown *gb_rax_teardown_new(void)
{
    gb_rax_teardown *t = gb_calloc(1, sizeof *t);
    stack_init(&t->pending); /* points into t, which never moves */
    return t;
}

void gb_rax_teardown_add(gb_rax_teardown *t, gb_rax *r, void (*free_value)(void *value, void *ctx))
{
    unsigned f = 0;
    while (f < t->nfns && t->fns[f] != free_value)
        f++;
    if (f == t->nfns) {
        if (f == TEARDOWN_FNS)
            abort(); /* a caller's mistake: see rax.h */
        t->fns[t->nfns++] = free_value;
    }
    if (r->head)
        stack_push_step(&t->pending, r->head, f);
    r->head = NULL;
    r->numele = r->numnodes = 0;
}

bool gb_rax_teardown_step(gb_rax_teardown *t, size_t max_nodes)
{
    for (size_t freed = 0; t->pending.n && (freed < max_nodes || freed == 0); freed++) {
        gb_rax_frame f = stack_pop_frame(&t->pending);
        for (size_t i = 0; i < kids_of(f.node); i++)
            stack_push_step(&t->pending, kids(f.node)[i], f.child);
        if (f.node->iskey && t->fns[f.child])
            t->fns[f.child](value_of(f.node), NULL);
        gb_free(f.node);
    }
    if (t->pending.n)
        return false;
    stack_done(&t->pending);
    gb_free(t);
    return true;
}

size_t gb_rax_mem(const gb_rax *r)
{
    size_t bytes = 0;
    node_stack s;
    stack_init(&s);
    stack_push(&s, r->head);
    for (gb_rax_node *n; (n = stack_pop(&s));) {
        for (size_t i = 0; i < kids_of(n); i++)
            stack_push(&s, kids(n)[i]);
        bytes += gb_mem_accounted(n);
    }
    stack_done(&s);
    return bytes;
}

const char *gb_rax_check(const gb_rax *r)
{
    uint64_t nodes = 0, keys = 0;
    const char *why = NULL;
    node_stack s;
    stack_init(&s);
    stack_push(&s, r->head);
    for (gb_rax_node *n; (n = stack_pop(&s)) && !why;) {
        nodes++;
        keys += n->iskey;
        if (n->iscompr && n->size < 2)
            why = "a run shorter than two bytes";
        else if (!n->iscompr)
            for (size_t i = 1; i < n->size; i++)
                if (n->data[i - 1] >= n->data[i])
                    why = "branch bytes out of order";
        if (n->size == 0 && !n->iskey && n != r->head)
            why = "a childless node that holds no key";
        for (size_t i = 0; i < kids_of(n); i++)
            stack_push(&s, kids(n)[i]);
    }
    stack_done(&s);
    if (!why && nodes != r->numnodes)
        why = "numnodes differs from the nodes in the tree";
    if (!why && keys != r->numele)
        why = "numele differs from the keys in the tree";
    return why;
}

/* Follows key from the head as far as the tree matches it. Returns the
 * bytes matched; *stop is the node reached, *link the slot pointing at it,
 * *split how far into *stop's run the match went when it is compressed
 * (0 otherwise). The nodes passed are pushed on path when given, each with
 * the child slot taken. */
static size_t walk(const gb_rax *r, const uint8_t *s, size_t len, gb_rax_node **stop, gb_rax_node ***link, size_t *split,
                   node_stack *path)
{
    gb_rax_node *h = r->head;
    gb_rax_node **lnk = (gb_rax_node **)&r->head;
    size_t i = 0, j = 0;
    while (h->size && i < len) {
        if (h->iscompr) {
            for (j = 0; j < h->size && i < len; j++, i++)
                if (h->data[j] != s[i])
                    break;
            if (j != h->size)
                break;
        } else {
            ptrdiff_t at = branch_find(h, s[i]);
            if (at < 0)
                break;
            j = (size_t)at;
            i++;
        }
        if (path)
            stack_push_step(path, h, h->iscompr ? 0 : j);
        lnk = h->iscompr ? &kids(h)[0] : &kids(h)[j];
        h = *lnk;
        j = 0;
    }
    *stop = h;
    if (link)
        *link = lnk;
    if (split)
        *split = h->iscompr ? j : 0;
    return i;
}

bool gb_rax_find(const gb_rax *r, const uint8_t *key, size_t len, void **value)
{
    gb_rax_node *h;
    size_t split;
    size_t i = walk(r, key, len, &h, NULL, &split, NULL);
    if (i != len || (h->iscompr && split != 0) || !h->iskey)
        return false;
    if (value)
        *value = value_of(h);
    return true;
}

/* The key ends inside run h, at split (0 < split < size): the run is cut
 * there and the second half carries the key. */
static void split_run_at_key(gb_rax *r, gb_rax_node *h, gb_rax_node **link, size_t split, void *value)
{
    gb_rax_node *next = kids(h)[0];
    size_t postlen = h->size - split;
    gb_rax_node *postfix = node_make(postlen > 1, h->data + split, postlen, &next, true, value);
    gb_rax_node *trimmed = node_make(split > 1, h->data, split, &postfix, h->iskey, value_of(h));
    *link = trimmed;
    gb_free(h);
    r->numnodes++;
    r->numele++;
}

/* The key diverges from run h at split: the run becomes [head part] ->
 * branch(one child: the run's byte at split) -> [tail part] -> its child.
 * Returns the branch, the node the rest of the key hangs from; *link is
 * updated to the branch's slot. */
static gb_rax_node *split_run_at_mismatch(gb_rax *r, gb_rax_node *h, gb_rax_node ***link, size_t split)
{
    gb_rax_node *next = kids(h)[0];
    size_t postlen = h->size - split - 1;
    gb_rax_node *postfix = next;
    if (postlen) {
        postfix = node_make(postlen > 1, h->data + split + 1, postlen, &next, false, NULL);
        r->numnodes++;
    }
    gb_rax_node *branch;
    if (split == 0) {
        /* The branch takes h's place, and its key. */
        branch = node_make(false, h->data, 1, &postfix, h->iskey, value_of(h));
        **link = branch;
    } else {
        branch = node_make(false, h->data + split, 1, &postfix, false, NULL);
        r->numnodes++;
        gb_rax_node *trimmed = node_make(split > 1, h->data, split, &branch, h->iskey, value_of(h));
        **link = trimmed;
        *link = &kids(trimmed)[0];
    }
    gb_free(h);
    return branch;
}

static bool insert_generic(gb_rax *r, const uint8_t *s, size_t len, void *value, void **old, bool overwrite)
{
    gb_rax_node *h, **link;
    size_t split;
    size_t i = walk(r, s, len, &h, &link, &split, NULL);

    if (i == len && (!h->iscompr || split == 0)) {
        if (h->iskey) {
            if (old)
                *old = value_of(h);
            if (overwrite)
                *value_slot(h) = value;
            return false;
        }
        *link = with_key(h, value);
        r->numele++;
        return true;
    }
    if (h->iscompr && i == len) {
        split_run_at_key(r, h, link, split, value);
        return true;
    }
    if (h->iscompr)
        h = split_run_at_mismatch(r, h, &link, split);

    /* The rest of the key hangs below h: a run when h is a bare leaf and
     * more than one byte remains, else one branch byte at a time. */
    while (i < len) {
        gb_rax_node *child = leaf_make();
        if (h->size == 0 && len - i > 1) {
            size_t run = GB_MIN(len - i, (size_t)RUN_MAX);
            gb_rax_node *n = node_make(true, s + i, run, &child, h->iskey, value_of(h));
            gb_free(h);
            *link = n;
            link = &kids(n)[0];
            i += run;
        } else {
            gb_rax_node **child_link;
            *link = add_child(h, s[i], child, &child_link);
            link = child_link;
            i++;
        }
        r->numnodes++;
        h = child;
    }
    *link = with_key(h, value);
    r->numele++;
    return true;
}

bool gb_rax_insert(gb_rax *r, const uint8_t *key, size_t len, void *value, void **old)
{
    return insert_generic(r, key, len, value, old, true);
}

bool gb_rax_try_insert(gb_rax *r, const uint8_t *key, size_t len, void *value, void **existing)
{
    return insert_generic(r, key, len, value, existing, false);
}

/* The slot a path frame went down through (no node: the head's link). */
static gb_rax_node **link_of(gb_rax *r, gb_rax_frame f) { return f.node ? &kids(f.node)[f.child] : &r->head; }

static bool single_child_non_key(const gb_rax_node *n) { return !n->iskey && (n->iscompr || n->size == 1); }

/* After a removal left h with one child and no key: merges the longest
 * chain of single-child non-key nodes through h into one run (Redis's
 * recompression; path holds h's ancestors). */
static void recompress(gb_rax *r, gb_rax_node *h, node_stack *path)
{
    gb_rax_frame parent;
    for (;;) {
        parent = stack_pop_frame(path);
        if (!parent.node || !single_child_non_key(parent.node))
            break;
        h = parent.node;
    }
    gb_rax_node *start = h;
    size_t runlen = h->size;
    int nodes = 1;
    while (h->size != 0) {
        h = kids(h)[kids_of(h) - 1];
        if (!single_child_non_key(h) || runlen + h->size > RUN_MAX)
            break;
        nodes++;
        runlen += h->size;
    }
    if (nodes < 2)
        return;
    gb_rax_node *run = gb_malloc(layout_len(true, runlen, false));
    run->iskey = 0;
    run->iscompr = 1;
    run->size = (uint32_t)runlen;
    size_t at = 0;
    h = start;
    for (int k = 0; k < nodes; k++) {
        memcpy(run->data + at, h->data, h->size);
        at += h->size;
        gb_rax_node *next = kids(h)[kids_of(h) - 1];
        gb_free(h);
        r->numnodes--;
        h = next;
    }
    kids(run)[0] = h;
    r->numnodes++;
    *link_of(r, parent) = run;
}

bool gb_rax_remove(gb_rax *r, const uint8_t *key, size_t len, void **old)
{
    node_stack path;
    stack_init(&path);
    gb_rax_node *h;
    size_t split;
    size_t i = walk(r, key, len, &h, NULL, &split, &path);
    if (i != len || (h->iscompr && split != 0) || !h->iskey) {
        stack_done(&path);
        return false;
    }
    if (old)
        *old = value_of(h);
    r->numele--;

    bool try_compress = false;
    if (h->size == 0) {
        /* Free the leaf and every node above it left with nothing below. */
        bool freed = false;
        size_t slot = 0; /* of the freed child in h */
        if (h == r->head)
            h->iskey = 0; /* the empty key, held by the head itself */
        while (h != r->head) {
            gb_free(h);
            freed = true;
            r->numnodes--;
            gb_rax_frame f = stack_pop_frame(&path);
            h = f.node;
            slot = f.child;
            if (h->iskey || (!h->iscompr && h->size != 1))
                break;
        }
        if (freed) {
            gb_rax_node **plink = link_of(r, stack_top(&path));
            gb_rax_node *n = remove_child(h, slot);
            *plink = n;
            if (n->size == 1 && !n->iskey) {
                try_compress = true;
                h = n;
            }
        }
    } else {
        /* A key with children: it stops being a key (the value slot stays
         * as slack until the node is rebuilt). */
        h->iskey = 0;
        if (h->size == 1)
            try_compress = true;
    }
    if (try_compress)
        recompress(r, h, &path);
    stack_done(&path);
    return true;
}

/* ---- iteration ---------------------------------------------------------------------------- */

void gb_rax_iter_init(gb_rax_iter *it, const gb_rax *r)
{
    memset(it, 0, sizeof *it);
    it->rax = r;
    it->key = it->key_small;
    it->key_cap = sizeof it->key_small;
    it->stack = it->stack_small;
    it->stack_cap = GB_ARRAY_LEN(it->stack_small);
    it->eof = true;
}

void gb_rax_iter_done(gb_rax_iter *it)
{
    if (it->key != it->key_small)
        gb_free(it->key);
    if (it->stack != it->stack_small)
        gb_free(it->stack);
}

static void key_append(gb_rax_iter *it, const uint8_t *s, size_t n)
{
    if (it->key_len + n > it->key_cap) {
        size_t cap = GB_MAX(it->key_cap * 2, it->key_len + n);
        uint8_t *k = gb_malloc(cap);
        memcpy(k, it->key, it->key_len);
        if (it->key != it->key_small)
            gb_free(it->key);
        it->key = k;
        it->key_cap = cap;
    }
    memcpy(it->key + it->key_len, s, n);
    it->key_len += n;
}

/* Goes down from n into its child'th child, recording the step. */
static gb_rax_node *step_down(gb_rax_iter *it, gb_rax_node *n, uint32_t child)
{
    if (it->depth == it->stack_cap) {
        size_t cap = it->stack_cap * 2;
        gb_rax_frame *s = gb_malloc(cap * sizeof *s);
        memcpy(s, it->stack, it->depth * sizeof *s);
        if (it->stack != it->stack_small)
            gb_free(it->stack);
        it->stack = s;
        it->stack_cap = cap;
    }
    it->stack[it->depth].node = n;
    it->stack[it->depth].child = child;
    it->depth++;
    if (n->iscompr)
        key_append(it, n->data, n->size);
    else
        key_append(it, &n->data[child], 1);
    return kids(n)[child];
}

static gb_rax_frame step_up(gb_rax_iter *it)
{
    gb_rax_frame f = it->stack[--it->depth];
    it->key_len -= f.node->iscompr ? f.node->size : 1;
    return f;
}

static bool land(gb_rax_iter *it, gb_rax_node *n)
{
    it->node = n;
    it->value = value_of(n);
    it->eof = false;
    return true;
}

static bool at_end(gb_rax_iter *it)
{
    it->eof = true;
    it->node = NULL;
    it->value = NULL;
    return false;
}

/* The smallest key in n's subtree (n's own key first). */
static bool descend_first(gb_rax_iter *it, gb_rax_node *n)
{
    while (!n->iskey) {
        if (n->size == 0)
            return at_end(it); /* only the empty head */
        n = step_down(it, n, 0);
    }
    return land(it, n);
}

/* The largest key in n's subtree: the deepest last child. */
static bool descend_last(gb_rax_iter *it, gb_rax_node *n)
{
    while (n->size != 0)
        n = step_down(it, n, (uint32_t)(kids_of(n) - 1));
    return n->iskey ? land(it, n) : at_end(it);
}

/* The first key after every key of the subtree the iterator is in. */
static bool climb_next(gb_rax_iter *it)
{
    while (it->depth) {
        gb_rax_frame f = step_up(it);
        if (!f.node->iscompr && f.child + 1 < f.node->size)
            return descend_first(it, step_down(it, f.node, f.child + 1));
    }
    return at_end(it);
}

bool gb_rax_next(gb_rax_iter *it)
{
    if (it->eof)
        return false;
    gb_rax_node *n = it->node;
    if (n->size != 0)
        return descend_first(it, step_down(it, n, 0));
    return climb_next(it);
}

bool gb_rax_prev(gb_rax_iter *it)
{
    if (it->eof)
        return false;
    while (it->depth) {
        gb_rax_frame f = step_up(it);
        if (!f.node->iscompr && f.child > 0)
            return descend_last(it, step_down(it, f.node, f.child - 1));
        if (f.node->iskey)
            return land(it, f.node);
    }
    return at_end(it);
}

static void reset(gb_rax_iter *it)
{
    it->depth = 0;
    it->key_len = 0;
}

/* The smallest key >= s. */
static bool seek_ge(gb_rax_iter *it, const uint8_t *s, size_t len)
{
    gb_rax_node *n = it->rax->head;
    size_t d = 0;
    for (;;) {
        if (d == len)
            return descend_first(it, n);
        /* n's own key is a proper prefix of s: smaller, passed over. */
        if (n->iscompr) {
            size_t k = 0;
            while (k < n->size && d + k < len && n->data[k] == s[d + k])
                k++;
            if (k == n->size) {
                n = step_down(it, n, 0);
                d += k;
                continue;
            }
            if (d + k == len || n->data[k] > s[d + k])
                return descend_first(it, step_down(it, n, 0));
            return climb_next(it); /* the whole run sorts before s */
        }
        uint32_t j = 0;
        while (j < n->size && n->data[j] < s[d])
            j++;
        if (j == n->size)
            return climb_next(it);
        bool exact = n->data[j] == s[d];
        n = step_down(it, n, j);
        if (!exact)
            return descend_first(it, n);
        d++;
    }
}

static bool key_is(const gb_rax_iter *it, const uint8_t *s, size_t len)
{
    return it->key_len == len && (len == 0 || memcmp(it->key, s, len) == 0);
}

bool gb_rax_seek(gb_rax_iter *it, enum gb_rax_seek op, const uint8_t *key, size_t len)
{
    reset(it);
    switch (op) {
    case GB_RAX_FIRST:
        return descend_first(it, it->rax->head);
    case GB_RAX_LAST:
        return descend_last(it, it->rax->head);
    case GB_RAX_GE:
        return seek_ge(it, key, len);
    case GB_RAX_GT:
        if (seek_ge(it, key, len) && key_is(it, key, len))
            return gb_rax_next(it);
        return !it->eof;
    case GB_RAX_LE:
    case GB_RAX_LT:
        if (!seek_ge(it, key, len)) {
            reset(it);
            return descend_last(it, it->rax->head);
        }
        if (op == GB_RAX_LE && key_is(it, key, len))
            return true;
        return gb_rax_prev(it);
    }
    return at_end(it);
}
