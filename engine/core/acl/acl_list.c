#include "engine/core/acl/acl_list.h"

#include "engine/base/mem.h"
#include "engine/base/util.h"

/* The index key: the string, and whether case counts. */
typedef struct list_key {
    gb_slice s;
    bool nocase;
} list_key;

static char lower(char c) { return (char)(c >= 'A' && c <= 'Z' ? c + 32 : c); }

/* A case-insensitive hash folds case first; strings longer than the stack
 * buffer are folded in chunks through the same seeded hash. */
static uint64_t hash_of(const char *p, size_t len, bool nocase)
{
    if (!nocase || len == 0)
        return gb_hash_bytes(p, len);
    uint64_t h = 0;
    char buf[256];
    while (len) {
        size_t k = len < sizeof buf ? len : sizeof buf;
        for (size_t i = 0; i < k; i++)
            buf[i] = lower(p[i]);
        h = h * 31 + gb_hash_bytes(buf, k);
        p += k;
        len -= k;
    }
    return h;
}

static bool same(const char *a, const char *b, size_t n, bool nocase)
{
    if (!nocase)
        return n == 0 || memcmp(a, b, n) == 0;
    for (size_t i = 0; i < n; i++)
        if (lower(a[i]) != lower(b[i]))
            return false;
    return true;
}

static uint64_t str_hash(const gb_hnode *n) { return ((const gb_acl_str *)n)->hash; }

static bool str_eq(const gb_hnode *n, const void *key)
{
    const gb_acl_str *s = (const gb_acl_str *)n;
    const list_key *k = key;
    return s->len == k->s.len && same(s->bytes, k->s.ptr, k->s.len, k->nocase);
}

static const gb_htable_type str_type = {str_hash, str_eq};

void gb_acl_list_init(gb_acl_list *l, bool nocase)
{
    memset(l, 0, sizeof *l);
    l->nocase = nocase;
    gb_htable_init(&l->index, &str_type);
}

static void free_str(gb_hnode *n, void *ctx)
{
    (void)ctx;
    gb_free(n);
}

void gb_acl_list_clear(gb_acl_list *l)
{
    gb_htable_clear(&l->index, free_str, NULL);
    gb_htable_init(&l->index, &str_type);
    gb_free(l->items);
    l->items = NULL;
    l->n = l->cap = l->holes = 0;
}

void gb_acl_list_free(gb_acl_list *l) { gb_acl_list_clear(l); }

gb_acl_str *gb_acl_list_find(gb_acl_list *l, gb_slice s)
{
    list_key k = {s, l->nocase};
    return (gb_acl_str *)gb_htable_find(&l->index, &k, hash_of(s.ptr, s.len, l->nocase));
}

/* Squeezes the holes out once they are half the slots: each removal pays
 * for at most one move later. */
static void compact(gb_acl_list *l)
{
    if (l->holes * 2 < l->n)
        return;
    uint32_t w = 0;
    for (uint32_t r = 0; r < l->n; r++)
        if (l->items[r]) {
            l->items[r]->pos = w;
            l->items[w++] = l->items[r];
        }
    l->n = w;
    l->holes = 0;
}

/* Sorts a pattern into the shapes gb_acl_str_glob compares directly. */
static void classify_glob(gb_acl_str *str)
{
    size_t special = 0; /* the first character a glob treats specially */
    while (special < str->len && !memchr("*?[\\", str->bytes[special], 4))
        special++;
    str->glob_prefix = (uint32_t)special;
    if (special == str->len) {
        str->glob_shape = GB_ACL_GLOB_LITERAL;
        return;
    }
    size_t i = special;
    while (i < str->len && str->bytes[i] == '*')
        i++;
    str->glob_shape = i == str->len ? GB_ACL_GLOB_PREFIX : GB_ACL_GLOB_ANY;
}

bool gb_acl_str_glob(const gb_acl_str *p, gb_slice s)
{
    switch (p->glob_shape) {
    case GB_ACL_GLOB_LITERAL:
        return s.len == p->len && (s.len == 0 || memcmp(p->bytes, s.ptr, s.len) == 0);
    case GB_ACL_GLOB_PREFIX:
        /* A star matches the empty rest, but nothing matches an empty string. */
        return s.len > 0 && s.len >= p->glob_prefix && memcmp(p->bytes, s.ptr, p->glob_prefix) == 0;
    default:
        return gb_glob_match(p->bytes, p->len, s.ptr, s.len, false);
    }
}

gb_acl_str *gb_acl_list_add(gb_acl_list *l, gb_slice s, uint8_t tag, bool *added)
{
    gb_acl_str *found = gb_acl_list_find(l, s);
    if (added)
        *added = !found;
    if (found)
        return found;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->items = gb_realloc(l->items, (size_t)l->cap * sizeof *l->items);
    }
    gb_acl_str *str = gb_malloc(sizeof *str + s.len + 1);
    str->hash = hash_of(s.ptr, s.len, l->nocase);
    str->pos = l->n;
    str->len = (uint32_t)s.len;
    str->tag = tag;
    if (s.len)
        memcpy(str->bytes, s.ptr, s.len);
    str->bytes[s.len] = '\0';
    classify_glob(str);
    gb_htable_insert(&l->index, &str->node, str->hash);
    l->items[l->n++] = str;
    return str;
}

bool gb_acl_list_remove(gb_acl_list *l, gb_slice s)
{
    list_key k = {s, l->nocase};
    gb_acl_str *str = (gb_acl_str *)gb_htable_remove(&l->index, &k, hash_of(s.ptr, s.len, l->nocase));
    if (!str)
        return false;
    l->items[str->pos] = NULL;
    l->holes++;
    gb_free(str);
    compact(l);
    return true;
}

void gb_acl_list_copy(gb_acl_list *dst, const gb_acl_list *src)
{
    gb_acl_list_clear(dst);
    dst->nocase = src->nocase;
    GB_ACL_LIST_EACH(src, s)
        gb_acl_list_add(dst, gb_slice_make(s->bytes, s->len), s->tag, NULL);
}
