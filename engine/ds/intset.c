#include "engine/ds/intset.h"

#include "engine/base/mem.h"
#include "engine/base/random.h"

uint8_t gb_intset_width_for(int64_t v)
{
    if (v >= INT16_MIN && v <= INT16_MAX)
        return 2;
    if (v >= INT32_MIN && v <= INT32_MAX)
        return 4;
    return 8;
}

static inline int64_t get_w(const unsigned char *data, uint8_t w, uint32_t i)
{
    switch (w) {
    case 2: {
        int16_t x;
        memcpy(&x, data + (size_t)i * 2, 2);
        return x;
    }
    case 4: {
        int32_t x;
        memcpy(&x, data + (size_t)i * 4, 4);
        return x;
    }
    default: {
        int64_t x;
        memcpy(&x, data + (size_t)i * 8, 8);
        return x;
    }
    }
}

static inline void set_w(unsigned char *data, uint8_t w, uint32_t i, int64_t v)
{
    switch (w) {
    case 2: {
        int16_t x = (int16_t)v;
        memcpy(data + (size_t)i * 2, &x, 2);
        break;
    }
    case 4: {
        int32_t x = (int32_t)v;
        memcpy(data + (size_t)i * 4, &x, 4);
        break;
    }
    default:
        memcpy(data + (size_t)i * 8, &v, 8);
        break;
    }
}

gb_intset *gb_intset_new(void)
{
    gb_intset *is = gb_malloc(sizeof *is);
    is->width = 2;
    memset(is->pad, 0, sizeof is->pad);
    is->len = 0;
    return is;
}

void gb_intset_free(gb_intset *is) { gb_free(is); }

size_t gb_intset_bytes(const gb_intset *is) { return sizeof *is + (size_t)is->width * is->len; }

gb_intset *gb_intset_dup(const gb_intset *is)
{
    size_t n = gb_intset_bytes(is);
    gb_intset *c = gb_malloc(n);
    memcpy(c, is, n);
    return c;
}

int64_t gb_intset_get(const gb_intset *is, uint32_t pos) { return get_w(is->data, is->width, pos); }

/* Binary search: true and *pos = index if found, else false and *pos = the
 * insertion point. */
static bool search(const gb_intset *is, int64_t v, uint32_t *pos)
{
    uint32_t lo = 0, hi = is->len;
    if (hi == 0) {
        *pos = 0;
        return false;
    }
    /* The common append/prepend cases skip the search. */
    if (v > get_w(is->data, is->width, hi - 1)) {
        *pos = hi;
        return false;
    }
    if (v < get_w(is->data, is->width, 0)) {
        *pos = 0;
        return false;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int64_t x = get_w(is->data, is->width, mid);
        if (x < v) {
            lo = mid + 1;
        } else if (x > v) {
            hi = mid;
        } else {
            *pos = mid;
            return true;
        }
    }
    *pos = lo;
    return false;
}

bool gb_intset_find(const gb_intset *is, int64_t v)
{
    uint32_t pos;
    return gb_intset_width_for(v) <= is->width && search(is, v, &pos);
}

static gb_intset *resize(gb_intset *is, uint32_t len)
{
    return gb_realloc(is, sizeof *is + (size_t)is->width * len);
}

/* Widens every element to the width of v and appends/prepends v: a value
 * that needs a wider type is beyond every current element, so it goes first
 * (negative) or last (positive). */
static gb_intset *upgrade_and_add(gb_intset *is, int64_t v)
{
    uint8_t old = is->width;
    uint32_t len = is->len;
    bool prepend = v < 0;
    is->width = gb_intset_width_for(v);
    is = resize(is, len + 1);
    /* Back to front, so wider writes never clobber unread narrower ones. */
    for (uint32_t i = len; i-- > 0;)
        set_w(is->data, is->width, i + (prepend ? 1 : 0), get_w(is->data, old, i));
    set_w(is->data, is->width, prepend ? 0 : len, v);
    is->len = len + 1;
    return is;
}

gb_intset *gb_intset_add(gb_intset *is, int64_t v, bool *added)
{
    if (added)
        *added = false;
    if (gb_intset_width_for(v) > is->width) {
        if (added)
            *added = true;
        return upgrade_and_add(is, v);
    }
    uint32_t pos;
    if (search(is, v, &pos))
        return is;
    is = resize(is, is->len + 1);
    size_t w = is->width;
    if (pos < is->len)
        memmove(is->data + (pos + 1) * w, is->data + pos * w, (is->len - pos) * w);
    set_w(is->data, is->width, pos, v);
    is->len++;
    if (added)
        *added = true;
    return is;
}

gb_intset *gb_intset_remove(gb_intset *is, int64_t v, bool *removed)
{
    uint32_t pos;
    if (removed)
        *removed = false;
    if (gb_intset_width_for(v) > is->width || !search(is, v, &pos))
        return is;
    size_t w = is->width;
    if (pos + 1 < is->len)
        memmove(is->data + pos * w, is->data + (pos + 1) * w, (is->len - pos - 1) * w);
    is->len--;
    if (removed)
        *removed = true;
    return resize(is, is->len);
}

int64_t gb_intset_random(const gb_intset *is)
{
    return get_w(is->data, is->width, (uint32_t)gb_random_below(is->len));
}

bool gb_intset_verify(const gb_intset *is)
{
    if (is->width != 2 && is->width != 4 && is->width != 8)
        return false;
    for (uint32_t i = 0; i < is->len; i++) {
        int64_t x = get_w(is->data, is->width, i);
        if (gb_intset_width_for(x) > is->width)
            return false;
        if (i > 0 && get_w(is->data, is->width, i - 1) >= x)
            return false;
    }
    return true;
}
