#include "engine/persist/rdb_stream.h"

#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/ds/stream_cg.h"
#include "engine/persist/rdb_compact.h"
#include "engine/persist/rdb_object.h"

#define FLAG_DELETED 1
#define FLAG_SAMEFIELDS 2
#define NODE_MAX_ENTRIES 100
#define NODE_MAX_BYTES 4096
#define MAX_STRING ((size_t)1 << 32)

/* ---- reading ---------------------------------------------------------------------------------- */

/* A node's listpack elements, copied out so they can be walked by index. */
typedef struct elems {
    gb_rdb_elem *e;
    size_t n, cap, at;
} elems;

static bool collect(void *ctx, const gb_rdb_elem *e)
{
    elems *E = ctx;
    if (E->n == E->cap) {
        E->cap = E->cap ? E->cap * 2 : 64;
        E->e = gb_realloc(E->e, E->cap * sizeof *E->e);
    }
    E->e[E->n++] = *e; /* an integer's text is in e->num: next_str points there */
    return true;
}

/* The next element as an integer (an integer entry, or a string that is
 * one, as Redis's lpGetInteger accepts). */
static bool next_int(elems *E, int64_t *v)
{
    if (E->at >= E->n)
        return false;
    const gb_rdb_elem *e = &E->e[E->at++];
    if (e->is_int) {
        *v = e->ival;
        return true;
    }
    return gb_str2ll(e->ptr, e->len, v);
}

static bool next_str(elems *E, gb_slice *s)
{
    if (E->at >= E->n)
        return false;
    const gb_rdb_elem *e = &E->e[E->at++];
    *s = gb_slice_make(e->is_int ? e->num : e->ptr, e->len);
    return true;
}

typedef struct loader {
    gb_rdb_reader *r;
    gb_stream *s;
    const gb_stream_limits *lim;
    const char *why;
    gb_slice *fv; /* one entry's fields and values */
    size_t fv_cap;
    uint64_t appended;
} loader;

static bool bad(loader *L, const char *why)
{
    if (!L->why)
        L->why = why;
    return false;
}

static gb_slice *fv_room(loader *L, size_t n)
{
    if (n > L->fv_cap) {
        L->fv_cap = n;
        L->fv = gb_realloc(L->fv, n * sizeof *L->fv);
    }
    return L->fv;
}

/* One entry of a node (after the master entry); live ones are appended. */
static bool load_entry(loader *L, elems *E, gb_stream_id master, const gb_slice *mfields, int64_t nmaster,
                       uint64_t *live, uint64_t *deleted)
{
    int64_t flags, ms_diff, seq_diff, nf, lpcount;
    if (!next_int(E, &flags) || !next_int(E, &ms_diff) || !next_int(E, &seq_diff))
        return bad(L, "a truncated stream entry");
    if (flags & ~(int64_t)(FLAG_DELETED | FLAG_SAMEFIELDS))
        return bad(L, "a stream entry with unknown flags");
    gb_stream_id id = {master.ms + (uint64_t)ms_diff, master.seq + (uint64_t)seq_diff};
    bool same = flags & FLAG_SAMEFIELDS;
    if (same) {
        nf = nmaster;
    } else if (!next_int(E, &nf) || nf < 0 || (uint64_t)nf > (E->n - E->at) / 2) {
        return bad(L, "a stream entry with a bad field count");
    }
    gb_slice *fv = fv_room(L, (size_t)nf * 2 + 1);
    for (int64_t i = 0; i < nf; i++) {
        if (same)
            fv[2 * i] = mfields[i];
        else if (!next_str(E, &fv[2 * i]))
            return bad(L, "a truncated stream entry");
        if (!next_str(E, &fv[2 * i + 1]))
            return bad(L, "a truncated stream entry");
    }
    if (!next_int(E, &lpcount) || lpcount != (same ? nf + 3 : 2 * nf + 4))
        return bad(L, "a stream entry whose element count is wrong");
    if (flags & FLAG_DELETED) {
        (*deleted)++;
        return true;
    }
    if (nf == 0)
        return bad(L, "a stream entry without fields");
    gb_stream_id added;
    if (gb_stream_append(L->s, L->lim, fv, (size_t)nf, &id, true, 0, &added) != GB_STREAM_ADDED)
        return bad(L, "stream entries out of order");
    (*live)++;
    L->appended++;
    return true;
}

static bool load_node(loader *L, gb_stream_id master, const uint8_t *lp, size_t lplen)
{
    elems E = {0};
    const char *why = NULL;
    bool ok = false;
    if (gb_rdb_listpack_each(lp, lplen, collect, &E, &why) < 0) {
        bad(L, why);
        goto done;
    }
    int64_t count, deleted, nmaster, zero;
    if (!next_int(&E, &count) || !next_int(&E, &deleted) || !next_int(&E, &nmaster) || count < 0 || deleted < 0 ||
        nmaster < 1 || (uint64_t)nmaster > E.n - E.at) {
        bad(L, "a stream node with a bad master entry");
        goto done;
    }
    gb_slice *mfields = gb_malloc((size_t)nmaster * sizeof *mfields);
    for (int64_t i = 0; i < nmaster; i++)
        next_str(&E, &mfields[i]);
    if (!next_int(&E, &zero) || zero != 0) {
        bad(L, "a stream node whose master entry is not terminated");
    } else {
        uint64_t live = 0, dead = 0;
        ok = true;
        while (ok && E.at < E.n)
            ok = load_entry(L, &E, master, mfields, nmaster, &live, &dead);
        if (ok && (live != (uint64_t)count || dead != (uint64_t)deleted))
            ok = bad(L, "a stream node whose counts disagree with its entries");
        if (ok && live + dead == 0)
            ok = bad(L, "an empty stream node");
    }
    gb_free(mfields);
done:
    gb_free(E.e);
    return ok;
}

static bool read_len(loader *L, uint64_t *v)
{
    bool enc;
    if (gb_rdb_read_len(L->r, v, &enc) != 0 || enc)
        return bad(L, "a truncated stream");
    return true;
}

static bool read_id(loader *L, gb_stream_id *id) { return read_len(L, &id->ms) && read_len(L, &id->seq); }

static bool read_raw_id(loader *L, gb_stream_id *id)
{
    if (L->r->len - L->r->pos < GB_STREAM_ID_KEY)
        return bad(L, "a truncated stream ID");
    *id = gb_stream_id_decode(L->r->p + L->r->pos);
    L->r->pos += GB_STREAM_ID_KEY;
    return true;
}

static bool read_ms(loader *L, int64_t *ms)
{
    if (L->r->len - L->r->pos < 8)
        return bad(L, "a truncated stream time");
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = u << 8 | L->r->p[L->r->pos + (size_t)i];
    L->r->pos += 8;
    *ms = (int64_t)u;
    return true;
}

static bool read_count(loader *L, uint64_t *n)
{
    if (!read_len(L, n))
        return false;
    if (*n > L->r->len - L->r->pos)
        return bad(L, "a count larger than the bytes that follow");
    return true;
}

static bool load_nodes(loader *L)
{
    uint64_t nodes;
    if (!read_count(L, &nodes))
        return false;
    for (uint64_t i = 0; i < nodes; i++) {
        char *key = NULL, *lp = NULL;
        size_t klen, lplen;
        bool ok = gb_rdb_read_string(L->r, MAX_STRING, &key, &klen) == 0 && klen == GB_STREAM_ID_KEY &&
                  gb_rdb_read_string(L->r, MAX_STRING, &lp, &lplen) == 0;
        if (!ok)
            bad(L, "a stream node that is not a master ID and a listpack");
        else
            ok = load_node(L, gb_stream_id_decode((const uint8_t *)key), (const uint8_t *)lp, lplen);
        gb_free(key);
        gb_free(lp);
        if (!ok)
            return false;
    }
    return true;
}

static bool load_metadata(loader *L, int rdbtype)
{
    uint64_t length;
    gb_stream_id last, first = {0, 0}, max_deleted = {0, 0};
    uint64_t entries_added;
    if (!read_len(L, &length) || !read_id(L, &last))
        return false;
    gb_stream *s = L->s;
    if (rdbtype != GB_RDB_TYPE_STREAM_LISTPACKS) {
        if (!read_id(L, &first) || !read_id(L, &max_deleted) || !read_len(L, &entries_added))
            return false;
    } else { /* Redis 6: what Redis 7 derives on load */
        gb_stream_edge_id(s, true, &first);
        entries_added = length;
    }
    if (length != L->appended)
        return bad(L, "a stream whose length is not its live entries");
    if (gb_stream_id_cmp(last, s->last_id) < 0)
        return bad(L, "a stream whose last ID is below an entry");
    gb_stream_id first_live;
    if (gb_stream_edge_id(s, true, &first_live) ? gb_stream_id_cmp(first, first_live) != 0
                                                 : !gb_stream_id_is_zero(first))
        return bad(L, "a stream whose first ID is not its first entry");
    if (entries_added < length)
        return bad(L, "a stream that added fewer entries than it holds");
    s->last_id = last;
    s->first_id = first;
    s->max_deleted = max_deleted;
    s->entries_added = entries_added;
    return true;
}

static bool load_consumer(loader *L, gb_stream_cg *cg, int rdbtype, uint64_t *owned)
{
    char *name;
    size_t nlen;
    int64_t seen, active;
    uint64_t n;
    if (gb_rdb_read_string(L->r, MAX_STRING, &name, &nlen) != 0)
        return bad(L, "a truncated consumer");
    bool ok = read_ms(L, &seen) && (rdbtype != GB_RDB_TYPE_STREAM_LISTPACKS_3 || read_ms(L, &active));
    gb_stream_consumer *c = ok ? gb_stream_consumer_create(cg, gb_slice_make(name, nlen), seen) : NULL;
    gb_free(name);
    if (!ok)
        return false;
    if (!c)
        return bad(L, "a consumer twice in its group");
    if (!read_count(L, &n))
        return false;
    for (uint64_t i = 0; i < n; i++) {
        gb_stream_id id;
        if (!read_raw_id(L, &id))
            return false;
        const char *why = gb_stream_consumer_load_pending(cg, c, id);
        if (why)
            return bad(L, why);
        (*owned)++;
    }
    return true;
}

static bool load_group(loader *L, int rdbtype)
{
    char *name;
    size_t nlen;
    gb_stream_id last;
    uint64_t entries_read = (uint64_t)GB_STREAM_ENTRIES_READ_UNKNOWN, npel, nconsumers, owned = 0;
    if (gb_rdb_read_string(L->r, MAX_STRING, &name, &nlen) != 0)
        return bad(L, "a truncated consumer group");
    bool ok = read_id(L, &last);
    if (ok && rdbtype == GB_RDB_TYPE_STREAM_LISTPACKS) /* Redis 6 kept no counter: estimated, as Redis 7 does */
        entries_read = (uint64_t)gb_stream_estimate_distance(L->s, last);
    else if (ok)
        ok = read_len(L, &entries_read);
    /* Any 64 bits: a counter that wrapped (t_stream.c, advance_group) is
     * saved as it is, and Redis loads it as it is. */
    gb_stream_cg *cg = ok ? gb_stream_cg_create(L->s, gb_slice_make(name, nlen), last, (int64_t)entries_read) : NULL;
    gb_free(name);
    if (!ok)
        return false;
    if (!cg)
        return bad(L, "a consumer group twice");
    if (!read_count(L, &npel))
        return false;
    gb_stream_id prev = {0, 0};
    for (uint64_t i = 0; i < npel; i++) {
        gb_stream_id id;
        int64_t time;
        uint64_t count;
        if (!read_raw_id(L, &id) || !read_ms(L, &time) || !read_len(L, &count))
            return false;
        const char *why = gb_stream_cg_load_pending(cg, id, prev, i == 0, time, count);
        if (why)
            return bad(L, why);
        prev = id;
    }
    if (!read_count(L, &nconsumers))
        return false;
    for (uint64_t i = 0; i < nconsumers; i++)
        if (!load_consumer(L, cg, rdbtype, &owned))
            return false;
    if (owned != gb_rax_size(&cg->pel))
        return bad(L, "a pending entry no consumer owns");
    return true;
}

gb_stream *gb_rdb_stream_read(gb_rdb_reader *r, int rdbtype, const gb_stream_limits *lim, const char **why)
{
    loader L = {.r = r, .s = gb_stream_new(), .lim = lim};
    uint64_t ngroups = 0;
    bool ok = load_nodes(&L) && load_metadata(&L, rdbtype) && read_count(&L, &ngroups);
    for (uint64_t i = 0; ok && i < ngroups; i++)
        ok = load_group(&L, rdbtype);
    gb_free(L.fv);
    *why = L.why ? L.why : "a truncated stream";
    if (ok)
        return L.s;
    gb_stream_free(L.s);
    return NULL;
}

/* ---- writing ---------------------------------------------------------------------------------- */

static void put_ms(gb_strbuf *b, int64_t ms)
{
    uint8_t buf[8];
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)((uint64_t)ms >> (8 * i));
    gb_strbuf_add(b, buf, sizeof buf);
}

static void put_id(gb_strbuf *b, gb_stream_id id)
{
    gb_rdb_write_len(b, id.ms);
    gb_rdb_write_len(b, id.seq);
}

/* One entry's fields and values, copied out of the iterator. */
typedef struct entry {
    gb_stream_id id;
    uint32_t nf;
    gb_strbuf fv;   /* the pairs, each as u32 length + bytes */
} entry;

/* Builds the listpack of one node from entries [0, n) of ents. */
static void write_node(gb_strbuf *out, entry *ents, size_t n)
{
    gb_strbuf lp = {0};
    size_t start, nelems = 0;
    gb_slice *master = gb_malloc(ents[0].nf * sizeof *master);
    const char *p = ents[0].fv.p;
    for (uint32_t i = 0; i < ents[0].nf; i++) {
        uint32_t fl, vl;
        memcpy(&fl, p, 4);
        master[i] = gb_slice_make(p + 4, fl);
        p += 4 + fl;
        memcpy(&vl, p, 4);
        p += 4 + vl;
    }
    gb_rdb_listpack_begin(&lp, &start);
    gb_rdb_listpack_add_int(&lp, (int64_t)n);
    gb_rdb_listpack_add_int(&lp, 0);
    gb_rdb_listpack_add_int(&lp, ents[0].nf);
    for (uint32_t i = 0; i < ents[0].nf; i++)
        gb_rdb_listpack_add(&lp, master[i]);
    gb_rdb_listpack_add_int(&lp, 0);
    nelems = 4 + ents[0].nf;
    gb_stream_id mid = ents[0].id;
    for (size_t k = 0; k < n; k++) {
        entry *e = &ents[k];
        gb_slice *f = gb_malloc((size_t)e->nf * 2 * sizeof *f + 1);
        p = e->fv.p;
        for (uint32_t i = 0; i < 2 * e->nf; i++) {
            uint32_t l;
            memcpy(&l, p, 4);
            f[i] = gb_slice_make(p + 4, l);
            p += 4 + l;
        }
        bool same = e->nf == ents[0].nf;
        for (uint32_t i = 0; same && i < e->nf; i++)
            same = gb_slice_eq(f[2 * i], master[i]);
        gb_rdb_listpack_add_int(&lp, same ? FLAG_SAMEFIELDS : 0);
        gb_rdb_listpack_add_int(&lp, (int64_t)(e->id.ms - mid.ms));
        gb_rdb_listpack_add_int(&lp, (int64_t)(e->id.seq - mid.seq));
        if (!same)
            gb_rdb_listpack_add_int(&lp, e->nf);
        for (uint32_t i = 0; i < e->nf; i++) {
            if (!same)
                gb_rdb_listpack_add(&lp, f[2 * i]);
            gb_rdb_listpack_add(&lp, f[2 * i + 1]);
        }
        int64_t lpcount = same ? (int64_t)e->nf + 3 : 2 * (int64_t)e->nf + 4;
        gb_rdb_listpack_add_int(&lp, lpcount);
        nelems += (size_t)lpcount + 1;
        gb_free(f);
    }
    gb_rdb_listpack_end(&lp, start, nelems);
    uint8_t key[GB_STREAM_ID_KEY]; /* the node's key: its master ID */
    gb_stream_id_encode(key, mid);
    gb_rdb_write_string(out, key, sizeof key);
    gb_rdb_write_string(out, lp.p, lp.len);
    gb_strbuf_free(&lp);
    gb_free(master);
}

/* The live entries, grouped into nodes as Redis would group them. */
static void write_nodes(gb_strbuf *b, const gb_stream *s)
{
    gb_strbuf nodes = {0};
    size_t nnodes = 0, n = 0, cap = 0, bytes = 0;
    entry *ents = NULL;
    gb_stream_iter it;
    gb_stream_iter_start(&it, s, NULL, NULL, false);
    gb_stream_id id;
    uint32_t nf;
    for (;;) {
        bool more = gb_stream_iter_next(&it, &id, &nf);
        if (n && (!more || n == NODE_MAX_ENTRIES || bytes >= NODE_MAX_BYTES)) {
            write_node(&nodes, ents, n);
            nnodes++;
            for (size_t k = 0; k < n; k++)
                gb_strbuf_free(&ents[k].fv);
            n = 0;
            bytes = 0;
        }
        if (!more)
            break;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            ents = gb_realloc(ents, cap * sizeof *ents);
        }
        entry *e = &ents[n++];
        *e = (entry){.id = id, .nf = nf};
        gb_snode_pairs pp;
        gb_stream_iter_pairs(&it, &pp);
        gb_slice f, v;
        while (gb_snode_pairs_next(&pp, &f, &v)) {
            uint32_t fl = (uint32_t)f.len, vl = (uint32_t)v.len;
            gb_strbuf_add(&e->fv, &fl, 4);
            gb_strbuf_add(&e->fv, f.ptr, f.len);
            gb_strbuf_add(&e->fv, &vl, 4);
            gb_strbuf_add(&e->fv, v.ptr, v.len);
            bytes += f.len + v.len + 4;
        }
    }
    gb_stream_iter_done(&it);
    gb_free(ents);
    gb_rdb_write_len(b, nnodes);
    if (nodes.len)
        gb_strbuf_add(b, nodes.p, nodes.len);
    gb_strbuf_free(&nodes);
}

static void write_pel_ids(gb_strbuf *b, const gb_rax *pel)
{
    gb_rdb_write_len(b, gb_rax_size(pel));
    gb_rax_iter it;
    gb_rax_iter_init(&it, pel);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it))
        gb_strbuf_add(b, it.key, GB_STREAM_ID_KEY);
    gb_rax_iter_done(&it);
}

static void write_group(gb_strbuf *b, gb_slice name, const gb_stream_cg *cg)
{
    gb_rdb_write_string(b, name.ptr, name.len);
    put_id(b, cg->last_id);
    gb_rdb_write_len(b, (uint64_t)cg->entries_read);
    gb_rdb_write_len(b, gb_rax_size(&cg->pel));
    gb_rax_iter it;
    gb_rax_iter_init(&it, &cg->pel);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it)) {
        const gb_stream_nack *nack = it.value;
        gb_strbuf_add(b, it.key, GB_STREAM_ID_KEY);
        put_ms(b, nack->delivery_time);
        gb_rdb_write_len(b, nack->delivery_count);
    }
    gb_rax_iter_done(&it);
    gb_rdb_write_len(b, gb_rax_size(&cg->consumers));
    gb_rax_iter_init(&it, &cg->consumers);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it)) {
        const gb_stream_consumer *c = it.value;
        gb_rdb_write_string(b, c->name, c->name_len);
        put_ms(b, c->seen_time);
        write_pel_ids(b, &c->pel);
    }
    gb_rax_iter_done(&it);
}

void gb_rdb_stream_write(gb_strbuf *b, const gb_stream *s)
{
    write_nodes(b, s);
    gb_rdb_write_len(b, s->length);
    put_id(b, s->last_id);
    put_id(b, s->first_id);
    put_id(b, s->max_deleted);
    gb_rdb_write_len(b, s->entries_added);
    gb_rdb_write_len(b, gb_stream_groups_count(s));
    if (!s->groups)
        return;
    gb_rax_iter it;
    gb_rax_iter_init(&it, s->groups);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it))
        write_group(b, gb_slice_make((const char *)it.key, it.key_len), it.value);
    gb_rax_iter_done(&it);
}
