/*
 * An ordered set of byte strings: a selector's key and channel patterns, a
 * user's password hashes, the first arguments a rule allows.
 *
 * Order is insertion order (ACL LIST prints rules in the order given), and
 * a string is added once (Redis refuses duplicates silently). Lookups go
 * through a hash index, so a rule list of a million patterns costs a
 * million steps, not a million squared: ACL SETUSER and the aclfile are
 * input like any other. Removal leaves a hole that the next compaction
 * fills, so removing many strings one by one stays linear too.
 *
 * Each string carries a small tag (a key pattern's read/write permission).
 */
#ifndef GB_ENGINE_ACL_LIST_H
#define GB_ENGINE_ACL_LIST_H

#include "engine/ds/htable.h"

typedef struct gb_acl_str {
    gb_hnode node;
    uint64_t hash; /* as the list hashes it (case folded in a nocase list) */
    uint32_t pos;  /* slot in items */
    uint32_t len;
    uint8_t tag;
    /* As a glob pattern (gb_acl_str_glob): GB_ACL_GLOB_*; glob_prefix is
     * the literal part of a GB_ACL_GLOB_PREFIX pattern ("key:" of "key:*"). */
    uint8_t glob_shape;
    uint32_t glob_prefix;
    char bytes[]; /* len bytes and a NUL, for C-string printing */
} gb_acl_str;

enum {
    GB_ACL_GLOB_ANY,     /* needs the general matcher */
    GB_ACL_GLOB_LITERAL, /* no special character: equality */
    GB_ACL_GLOB_PREFIX,  /* a literal prefix and trailing stars only */
};

/* Whether s matches p as Redis's stringmatchlen (case-sensitive) would:
 * the literal and prefix shapes (most ACL key and channel patterns) by
 * comparing bytes, the others with gb_glob_match. */
bool gb_acl_str_glob(const gb_acl_str *p, gb_slice s);

typedef struct gb_acl_list {
    gb_acl_str **items; /* insertion order; NULL where a string was removed */
    uint32_t n, cap;    /* slots used (holes included), allocated */
    uint32_t holes;
    bool nocase;        /* strings equal ignoring ASCII case are the same (first arguments) */
    gb_htable index;
} gb_acl_list;

void gb_acl_list_init(gb_acl_list *l, bool nocase);
void gb_acl_list_free(gb_acl_list *l);
void gb_acl_list_clear(gb_acl_list *l);
/* dst becomes a copy of src (dst initialised, possibly not empty). */
void gb_acl_list_copy(gb_acl_list *dst, const gb_acl_list *src);
static inline uint32_t gb_acl_list_count(const gb_acl_list *l) { return l->n - l->holes; }

gb_acl_str *gb_acl_list_find(gb_acl_list *l, gb_slice s);
/* Adds s with tag unless present; returns the string (new or existing). */
gb_acl_str *gb_acl_list_add(gb_acl_list *l, gb_slice s, uint8_t tag, bool *added);
/* Removes s; false if it was not there. */
bool gb_acl_list_remove(gb_acl_list *l, gb_slice s);

/* for (gb_acl_str *s; ...) over the strings in order */
#define GB_ACL_LIST_EACH(l, var)                                                  \
    for (uint32_t var##_i = 0; var##_i < (l)->n; var##_i++)                       \
        for (gb_acl_str *var = (l)->items[var##_i]; var; var = NULL)

#endif
