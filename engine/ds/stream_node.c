#include "engine/ds/stream_node.h"

#include "engine/base/mem.h"
#include "engine/base/util.h"

#define HDR sizeof(gb_snode)
#define FORM_SHIFT 2
#define FORM_NEXT_SEQ 0u  /* P.ms, P.seq + 1 */
#define FORM_SEQ_DELTA 1u /* P.ms, P.seq + 2 + d */
#define FORM_NEW_MS 2u    /* P.ms + 1 + d, 0 */
#define FORM_ANY 3u       /* P.ms + 1 + d, seq */
/* Not a value of the form bits: flag bit 4 with form bits 0. The ID
 * follows whole (varint ms, varint seq) because it is not above P: XSETID
 * may move a stream's last ID below a deleted entry, and the next entry
 * then comes after that tombstone with a smaller ID, as in Redis, whose
 * listpack deltas from the master ID are signed. Live entries stay in
 * ascending order. */
#define FORM_WHOLE 4u
#define FLAG_ID_WHOLE 0x10u

/* The form an entry's flags byte names. */
static unsigned form_of(uint8_t flags) { return (flags & FLAG_ID_WHOLE) ? FORM_WHOLE : (flags >> FORM_SHIFT) & 3u; }

static uint8_t form_flags(unsigned form)
{
    return (uint8_t)(form == FORM_WHOLE ? FLAG_ID_WHOLE : form << FORM_SHIFT);
}

/* ---- varints and values ------------------------------------------------------------ */

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static uint8_t *varint_put(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Reads a varint from [p, end); NULL when it runs past end or over 64 bits. */
static const uint8_t *varint_get(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; p < end && shift < 64; shift += 7) {
        uint8_t b = *p++;
        if (shift == 63 && b > 1)
            return NULL;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return p;
        }
    }
    return NULL;
}

/* Reads a varint this module wrote (or one validated already). */
static const uint8_t *varint_read(const uint8_t *p, uint64_t *v)
{
    uint64_t r = 0;
    unsigned shift = 0;
    uint8_t b;
    do {
        b = *p++;
        r |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    *v = r;
    return p;
}

/* The tag of a value (see stream_node.h) and the bytes it takes. */
static size_t value_tag(gb_slice s, uint64_t *tag)
{
    int64_t v;
    const int64_t lim = INT64_C(1) << 61;
    if (s.len <= 20 && gb_str2ll(s.ptr, s.len, &v) && v >= -lim && v < lim) {
        uint64_t zz = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
        *tag = (zz << 1) | 1u;
        return varint_len(*tag);
    }
    *tag = (uint64_t)s.len << 1;
    return varint_len(*tag) + s.len;
}

static uint8_t *value_put(uint8_t *p, gb_slice s)
{
    uint64_t tag;
    value_tag(s, &tag);
    p = varint_put(p, tag);
    if (!(tag & 1u)) {
        memcpy(p, s.ptr, s.len);
        p += s.len;
    }
    return p;
}

/* Decodes a value at p (trusted: bytes this module wrote, or validated). */
static const uint8_t *value_get(const uint8_t *p, gb_slice *out, char *buf)
{
    uint64_t tag;
    p = varint_read(p, &tag);
    if (tag & 1u) {
        uint64_t zz = tag >> 1;
        int64_t v = (int64_t)(zz >> 1) ^ -(int64_t)(zz & 1u);
        *out = gb_slice_make(buf, gb_ll2str(buf, v));
        return p;
    }
    *out = gb_slice_make((const char *)p, (size_t)(tag >> 1));
    return p + (tag >> 1);
}

/* ---- Redis's listpack sizes (the node-boundary rule) ----------------------------------- */

static size_t lp_backlen_size(size_t l)
{
    if (l <= 127)
        return 1;
    if (l < 16383)
        return 2;
    if (l < 2097151)
        return 3;
    if (l < 268435455)
        return 4;
    return 5;
}

size_t gb_lp_redis_int_size(int64_t v)
{
    size_t enc;
    if (v >= 0 && v <= 127)
        enc = 1;
    else if (v >= -4096 && v <= 4095)
        enc = 2;
    else if (v >= -32768 && v <= 32767)
        enc = 3;
    else if (v >= -8388608 && v <= 8388607)
        enc = 4;
    else if (v >= INT32_MIN && v <= INT32_MAX)
        enc = 5;
    else
        enc = 9;
    return enc + lp_backlen_size(enc);
}

size_t gb_lp_redis_str_size(gb_slice s)
{
    int64_t v;
    if (s.len <= 20 && gb_str2ll(s.ptr, s.len, &v))
        return gb_lp_redis_int_size(v);
    size_t enc = s.len < 64 ? 1 + s.len : s.len < 4096 ? 2 + s.len : 5 + s.len;
    return enc + lp_backlen_size(enc);
}

size_t gb_snode_lp_bytes(const gb_snode *n)
{
    /* 6-byte header, 1-byte terminator, the two counters, the rest. */
    return 7 + gb_lp_redis_int_size(n->live) + gb_lp_redis_int_size(n->deleted) + n->lp_rest;
}

/* The listpack bytes of one entry as Redis appends it. */
static size_t lp_entry_size(gb_stream_id master, gb_stream_id id, bool same, const gb_slice *fv, size_t nfields)
{
    size_t n = gb_lp_redis_int_size(same ? GB_SNODE_SAMEFIELDS : 0);
    n += gb_lp_redis_int_size((int64_t)(id.ms - master.ms));
    n += gb_lp_redis_int_size((int64_t)(id.seq - master.seq));
    if (!same)
        n += gb_lp_redis_int_size((int64_t)nfields);
    for (size_t i = 0; i < nfields; i++) {
        if (!same)
            n += gb_lp_redis_str_size(fv[2 * i]);
        n += gb_lp_redis_str_size(fv[2 * i + 1]);
    }
    int64_t count = (int64_t)nfields + 3 + (same ? 0 : (int64_t)nfields + 1);
    return n + gb_lp_redis_int_size(count);
}

static size_t lp_master_size(const gb_slice *fv, size_t nfields)
{
    size_t n = gb_lp_redis_int_size((int64_t)nfields) + gb_lp_redis_int_size(0);
    for (size_t i = 0; i < nfields; i++)
        n += gb_lp_redis_str_size(fv[2 * i]);
    return n;
}

/* ---- entries ------------------------------------------------------------------------------ */

static unsigned id_form(gb_stream_id prev, gb_stream_id id, uint64_t *a, uint64_t *b)
{
    if (gb_stream_id_cmp(id, prev) <= 0) {
        *a = id.ms;
        *b = id.seq;
        return FORM_WHOLE;
    }
    if (id.ms == prev.ms) {
        if (id.seq == prev.seq + 1)
            return FORM_NEXT_SEQ;
        *a = id.seq - prev.seq - 2;
        return FORM_SEQ_DELTA;
    }
    *a = id.ms - prev.ms - 1;
    if (id.seq == 0)
        return FORM_NEW_MS;
    *b = id.seq;
    return FORM_ANY;
}

static size_t id_bytes(unsigned form, uint64_t a, uint64_t b)
{
    switch (form) {
    case FORM_SEQ_DELTA:
    case FORM_NEW_MS:
        return varint_len(a);
    case FORM_ANY:
    case FORM_WHOLE:
        return varint_len(a) + varint_len(b);
    default:
        return 0;
    }
}

/* Whether fv's field names are the master list's, in order. */
static bool same_fields(const gb_snode *n, const gb_slice *fv, size_t nfields)
{
    const uint8_t *p = n->data;
    uint64_t mn;
    p = varint_read(p, &mn);
    if (mn != nfields)
        return false;
    char buf[GB_SNODE_INT_BUF];
    for (size_t i = 0; i < nfields; i++) {
        gb_slice f;
        p = value_get(p, &f, buf);
        if (!gb_slice_eq(f, fv[2 * i]))
            return false;
    }
    return true;
}

/* Writes an entry at p; returns the end. first: the node's first entry. */
static uint8_t *entry_put(uint8_t *p, gb_stream_id prev, gb_stream_id id, bool first, bool same, const gb_slice *fv,
                          size_t nfields)
{
    uint64_t a = 0, b = 0;
    unsigned form = first ? FORM_NEXT_SEQ : id_form(prev, id, &a, &b);
    *p++ = (uint8_t)((same ? GB_SNODE_SAMEFIELDS : 0) | form_flags(form));
    if (form != FORM_NEXT_SEQ)
        p = varint_put(p, a);
    if (form == FORM_ANY || form == FORM_WHOLE)
        p = varint_put(p, b);
    if (!same)
        p = varint_put(p, nfields);
    for (size_t i = 0; i < nfields; i++) {
        if (!same)
            p = value_put(p, fv[2 * i]);
        p = value_put(p, fv[2 * i + 1]);
    }
    return p;
}

static size_t entry_size(gb_stream_id prev, gb_stream_id id, bool first, bool same, const gb_slice *fv, size_t nfields)
{
    uint64_t a = 0, b = 0, tag;
    size_t n = 1;
    if (!first) {
        unsigned form = id_form(prev, id, &a, &b);
        n += id_bytes(form, a, b);
    }
    if (!same)
        n += varint_len(nfields);
    for (size_t i = 0; i < nfields; i++) {
        if (!same)
            n += value_tag(fv[2 * i], &tag);
        n += value_tag(fv[2 * i + 1], &tag);
    }
    return n;
}

gb_snode *gb_snode_new(gb_stream_id id, const gb_slice *fv, size_t nfields)
{
    uint64_t tag;
    size_t master = varint_len(nfields);
    for (size_t i = 0; i < nfields; i++)
        master += value_tag(fv[2 * i], &tag);
    size_t need = HDR + master + entry_size(id, id, true, true, fv, nfields);
    gb_snode *n = gb_malloc(need);
    uint8_t *p = varint_put(n->data, nfields);
    for (size_t i = 0; i < nfields; i++)
        p = value_put(p, fv[2 * i]);
    p = entry_put(p, id, id, true, true, fv, nfields);
    n->used = (uint32_t)(p - (uint8_t *)n);
    n->live = 1;
    n->deleted = 0;
    n->lp_rest = (uint32_t)(lp_master_size(fv, nfields) + lp_entry_size(id, id, true, fv, nfields));
    n->last_ms = id.ms;
    n->last_seq = id.seq;
    return n;
}

gb_snode *gb_snode_append(gb_snode *n, gb_stream_id master, gb_stream_id id, const gb_slice *fv, size_t nfields)
{
    bool same = same_fields(n, fv, nfields);
    gb_stream_id prev = gb_snode_last(n);
    size_t esize = entry_size(prev, id, false, same, fv, nfields);
    size_t need = (size_t)n->used + esize;
    if (need > gb_mem_usable(n)) {
        /* Grow by half again: appends are amortised; the stream shrinks
         * the node once it is full. */
        n = gb_realloc(n, GB_MAX(need, (size_t)n->used + n->used / 2));
    }
    entry_put((uint8_t *)n + n->used, prev, id, false, same, fv, nfields);
    n->used = (uint32_t)need;
    n->live++;
    n->lp_rest += (uint32_t)lp_entry_size(master, id, same, fv, nfields);
    n->last_ms = id.ms;
    n->last_seq = id.seq;
    return n;
}

gb_snode *gb_snode_shrink(gb_snode *n) { return gb_realloc(n, n->used); }

void gb_snode_free(gb_snode *n) { gb_free(n); }

gb_snode *gb_snode_dup(const gb_snode *n)
{
    gb_snode *m = gb_malloc(n->used);
    memcpy(m, n, n->used);
    return m;
}

/* ---- reading ------------------------------------------------------------------------------ */

void gb_snode_cursor_init(gb_snode_cursor *c, const gb_snode *n, gb_stream_id master)
{
    const uint8_t *base = (const uint8_t *)n;
    const uint8_t *p = n->data;
    uint64_t mn;
    p = varint_read(p, &mn);
    c->node = n;
    c->master = master;
    c->master_n = (uint32_t)mn;
    c->master_at = (uint32_t)(p - base);
    char buf[GB_SNODE_INT_BUF];
    for (uint64_t i = 0; i < mn; i++) {
        gb_slice f;
        p = value_get(p, &f, buf);
    }
    c->pos = (uint32_t)(p - base);
    c->index = 0;
}

static const uint8_t *values_skip(const uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t tag;
        p = varint_read(p, &tag);
        if (!(tag & 1u))
            p += tag >> 1;
    }
    return p;
}

bool gb_snode_cursor_next(gb_snode_cursor *c)
{
    const uint8_t *base = (const uint8_t *)c->node;
    if (c->pos >= c->node->used)
        return false;
    const uint8_t *p = base + c->pos;
    gb_snode_entry *e = &c->e;
    e->at = c->pos;
    e->flags = *p++;
    uint64_t a = 0, b = 0;
    if (c->index == 0) {
        e->id = c->master;
    } else {
        switch (form_of(e->flags)) {
        case FORM_NEXT_SEQ:
            e->id.seq++;
            break;
        case FORM_WHOLE:
            p = varint_read(p, &a);
            p = varint_read(p, &b);
            e->id = gb_stream_id_make(a, b);
            break;
        case FORM_SEQ_DELTA:
            p = varint_read(p, &a);
            e->id.seq += a + 2;
            break;
        case FORM_NEW_MS:
            p = varint_read(p, &a);
            e->id.ms += a + 1;
            e->id.seq = 0;
            break;
        default:
            p = varint_read(p, &a);
            p = varint_read(p, &b);
            e->id.ms += a + 1;
            e->id.seq = b;
            break;
        }
    }
    uint64_t nf = c->master_n;
    if (!(e->flags & GB_SNODE_SAMEFIELDS))
        p = varint_read(p, &nf);
    e->nfields = (uint32_t)nf;
    e->fields = (uint32_t)(p - base);
    p = values_skip(p, (e->flags & GB_SNODE_SAMEFIELDS) ? nf : 2 * nf);
    c->pos = (uint32_t)(p - base);
    c->index++;
    return true;
}

void gb_snode_pairs_init(gb_snode_pairs *pp, const gb_snode_cursor *c)
{
    const uint8_t *base = (const uint8_t *)c->node;
    pp->same = (c->e.flags & GB_SNODE_SAMEFIELDS) != 0;
    pp->mp = base + c->master_at;
    pp->p = base + c->e.fields;
    pp->left = c->e.nfields;
}

bool gb_snode_pairs_next(gb_snode_pairs *pp, gb_slice *field, gb_slice *value)
{
    if (!pp->left)
        return false;
    pp->left--;
    if (pp->same)
        pp->mp = value_get(pp->mp, field, pp->fbuf);
    else
        pp->p = value_get(pp->p, field, pp->fbuf);
    pp->p = value_get(pp->p, value, pp->vbuf);
    return true;
}

void gb_snode_delete(gb_snode *n, const gb_snode_entry *e)
{
    uint8_t *flags = (uint8_t *)n + e->at;
    *flags |= GB_SNODE_DELETED;
    n->live--;
    n->deleted++;
}

/* ---- untrusted bytes ------------------------------------------------------------------------ */

/* The form bits and the same-fields bit are all a flags byte may hold
 * besides the deleted bit. */
#define FLAGS_KNOWN (GB_SNODE_DELETED | GB_SNODE_SAMEFIELDS | (3u << FORM_SHIFT) | FLAG_ID_WHOLE)

typedef struct checker {
    const uint8_t *p, *end;
    uint64_t master_n;
    gb_stream_id master_id, id;
    gb_stream_id last_live; /* valid once live > 0 */
    uint64_t entries, live;
    uint64_t lp_rest;
    const char *why;
} checker;

static bool bad(checker *k, const char *why)
{
    k->why = why;
    return false;
}

/* The next ID from the form bits; false on a malformed or overflowing one. */
static bool check_id(checker *k, uint8_t flags)
{
    uint64_t a = 0, b = 0;
    gb_stream_id prev = k->id;
    if (k->entries == 0) {
        if (form_of(flags) != FORM_NEXT_SEQ)
            return bad(k, "a stream node whose first entry is not its key");
        k->id = k->master_id;
        return true;
    }
    switch (form_of(flags)) {
    case FORM_WHOLE:
        if ((flags >> FORM_SHIFT) & 3u)
            return bad(k, "a stream entry with unknown flags");
        if (!(k->p = varint_get(k->p, k->end, &a)) || !(k->p = varint_get(k->p, k->end, &b)))
            return bad(k, "a truncated stream entry ID");
        k->id = gb_stream_id_make(a, b);
        if (gb_stream_id_cmp(k->id, prev) > 0)
            return bad(k, "a stream entry ID given whole above the previous one");
        return true;
    case FORM_NEXT_SEQ:
        if (prev.seq == UINT64_MAX)
            return bad(k, "a stream entry ID past the last possible one");
        k->id.seq++;
        return true;
    case FORM_SEQ_DELTA:
        if (!(k->p = varint_get(k->p, k->end, &a)))
            return bad(k, "a truncated stream entry ID");
        if (a > UINT64_MAX - 2 || prev.seq > UINT64_MAX - 2 - a)
            return bad(k, "a stream entry ID past the last possible one");
        k->id.seq += a + 2;
        return true;
    default:
        if (!(k->p = varint_get(k->p, k->end, &a)))
            return bad(k, "a truncated stream entry ID");
        if (((flags >> FORM_SHIFT) & 3u) == FORM_ANY && !(k->p = varint_get(k->p, k->end, &b)))
            return bad(k, "a truncated stream entry ID");
        if (a == UINT64_MAX || prev.ms > UINT64_MAX - 1 - a)
            return bad(k, "a stream entry ID past the last possible one");
        k->id.ms += a + 1;
        k->id.seq = b;
        return true;
    }
}

/* One value, bounds-checked; integers come back as their text (in buf). */
static bool check_value(checker *k, gb_slice *s, char *buf)
{
    uint64_t tag;
    if (!(k->p = varint_get(k->p, k->end, &tag)))
        return bad(k, "a truncated stream value");
    if (tag & 1u) {
        uint64_t zz = tag >> 1;
        if (zz >> 62)
            return bad(k, "a stream integer beyond the stored range");
        int64_t v = (int64_t)(zz >> 1) ^ -(int64_t)(zz & 1u);
        *s = gb_slice_make(buf, gb_ll2str(buf, v));
        return true;
    }
    uint64_t len = tag >> 1;
    if (len > (uint64_t)(k->end - k->p))
        return bad(k, "a stream value running past its node");
    *s = gb_slice_make((const char *)k->p, (size_t)len);
    k->p += len;
    return true;
}

static bool check_entry(checker *k)
{
    uint8_t flags = *k->p++;
    if (flags & ~FLAGS_KNOWN)
        return bad(k, "a stream entry with unknown flags");
    if (!check_id(k, flags))
        return false;
    if (!(flags & GB_SNODE_DELETED)) {
        /* The iterator relies on live entries ascending. */
        if (k->live && gb_stream_id_cmp(k->id, k->last_live) <= 0)
            return bad(k, "stream entries out of order");
        k->last_live = k->id;
    }
    bool same = (flags & GB_SNODE_SAMEFIELDS) != 0;
    uint64_t nf = k->master_n;
    if (!same && !(k->p = varint_get(k->p, k->end, &nf)))
        return bad(k, "a truncated stream entry");
    if (nf == 0 || nf > (uint64_t)(k->end - k->p))
        return bad(k, "a stream entry with an impossible field count");
    size_t lp = gb_lp_redis_int_size(same ? GB_SNODE_SAMEFIELDS : 0) +
                gb_lp_redis_int_size((int64_t)(k->id.ms - k->master_id.ms)) +
                gb_lp_redis_int_size((int64_t)(k->id.seq - k->master_id.seq));
    if (!same)
        lp += gb_lp_redis_int_size((int64_t)nf);
    char buf[GB_SNODE_INT_BUF];
    for (uint64_t i = 0; i < nf; i++) {
        gb_slice s;
        if (!same) {
            if (!check_value(k, &s, buf))
                return false;
            lp += gb_lp_redis_str_size(s);
        }
        if (!check_value(k, &s, buf))
            return false;
        lp += gb_lp_redis_str_size(s);
    }
    lp += gb_lp_redis_int_size((int64_t)(nf + 3 + (same ? 0 : nf + 1)));
    k->lp_rest += lp;
    k->entries++;
    if (!(flags & GB_SNODE_DELETED))
        k->live++;
    return true;
}

static bool check_master(checker *k)
{
    if (!(k->p = varint_get(k->p, k->end, &k->master_n)) || k->master_n > (uint64_t)(k->end - k->p))
        return bad(k, "a stream node with a malformed field list");
    k->lp_rest = gb_lp_redis_int_size((int64_t)k->master_n) + gb_lp_redis_int_size(0);
    char buf[GB_SNODE_INT_BUF];
    for (uint64_t i = 0; i < k->master_n; i++) {
        gb_slice s;
        if (!check_value(k, &s, buf))
            return false;
        k->lp_rest += gb_lp_redis_str_size(s);
    }
    return true;
}

gb_snode *gb_snode_from_bytes(const uint8_t *bytes, size_t len, gb_stream_id master, const char **why)
{
    if (len > UINT32_MAX - HDR) {
        *why = "a stream node too large";
        return NULL;
    }
    checker k = {.p = bytes, .end = bytes + len, .master_id = master};
    bool ok = check_master(&k);
    while (ok && k.p < k.end)
        ok = check_entry(&k);
    if (ok && k.entries == 0)
        ok = bad(&k, "an empty stream node");
    if (ok && (k.entries > UINT32_MAX || k.lp_rest > UINT32_MAX))
        ok = bad(&k, "a stream node too large");
    if (!ok) {
        *why = k.why;
        return NULL;
    }
    gb_snode *n = gb_malloc(HDR + len);
    memcpy(n->data, bytes, len);
    n->used = (uint32_t)(HDR + len);
    n->live = (uint32_t)k.live;
    n->deleted = (uint32_t)(k.entries - k.live);
    n->lp_rest = (uint32_t)k.lp_rest;
    n->last_ms = k.id.ms;
    n->last_seq = k.id.seq;
    return n;
}
