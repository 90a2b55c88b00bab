#include "engine/ds/stream_cg.h"

#include "engine/base/mem.h"

/* ---- groups ------------------------------------------------------------------------------ */

gb_stream_cg *gb_stream_cg_create(gb_stream *s, gb_slice name, gb_stream_id last_id, int64_t entries_read)
{
    if (!s->groups) {
        s->groups = gb_malloc(sizeof *s->groups);
        gb_rax_init(s->groups);
    }
    if (gb_rax_find(s->groups, (const uint8_t *)name.ptr, name.len, NULL))
        return NULL;
    gb_stream_cg *cg = gb_malloc(sizeof *cg);
    cg->last_id = last_id;
    cg->entries_read = entries_read;
    gb_rax_init(&cg->pel);
    gb_rax_init(&cg->consumers);
    gb_rax_insert(s->groups, (const uint8_t *)name.ptr, name.len, cg, NULL);
    return cg;
}

gb_stream_cg *gb_stream_cg_lookup(const gb_stream *s, gb_slice name)
{
    void *cg = NULL;
    if (s->groups)
        gb_rax_find(s->groups, (const uint8_t *)name.ptr, name.len, &cg);
    return cg;
}

static void free_nack(void *v, void *ctx)
{
    (void)ctx;
    gb_free(v);
}

static void free_consumer(void *v, void *ctx)
{
    (void)ctx;
    gb_stream_consumer *c = v;
    gb_rax_destroy(&c->pel, NULL, NULL); /* the nacks belong to the group's PEL */
    gb_free(c);
}

static void free_cg(void *v, void *ctx)
{
    (void)ctx;
    gb_stream_cg *cg = v;
    gb_rax_destroy(&cg->pel, free_nack, NULL);
    gb_rax_destroy(&cg->consumers, free_consumer, NULL);
    gb_free(cg);
}

bool gb_stream_cg_destroy(gb_stream *s, gb_slice name)
{
    void *cg;
    if (!s->groups || !gb_rax_remove(s->groups, (const uint8_t *)name.ptr, name.len, &cg))
        return false;
    free_cg(cg, NULL);
    return true;
}

/* ---- consumers and pending entries ---------------------------------------------------------- */

gb_stream_consumer *gb_stream_consumer_lookup(const gb_stream_cg *cg, gb_slice name)
{
    void *c = NULL;
    gb_rax_find(&cg->consumers, (const uint8_t *)name.ptr, name.len, &c);
    return c;
}

gb_stream_consumer *gb_stream_consumer_create(gb_stream_cg *cg, gb_slice name, int64_t now_ms)
{
    if (gb_rax_find(&cg->consumers, (const uint8_t *)name.ptr, name.len, NULL))
        return NULL;
    gb_stream_consumer *c = gb_malloc(sizeof *c + name.len);
    c->seen_time = now_ms;
    gb_rax_init(&c->pel);
    c->name_len = (uint32_t)name.len;
    memcpy(c->name, name.ptr, name.len);
    gb_rax_insert(&cg->consumers, (const uint8_t *)name.ptr, name.len, c, NULL);
    return c;
}

uint64_t gb_stream_consumer_delete(gb_stream_cg *cg, gb_stream_consumer *c)
{
    uint64_t pending = gb_rax_size(&c->pel);
    gb_rax_iter it;
    gb_rax_iter_init(&it, &c->pel);
    for (bool ok = gb_rax_seek(&it, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&it)) {
        gb_rax_remove(&cg->pel, it.key, it.key_len, NULL);
        gb_free(it.value);
    }
    gb_rax_iter_done(&it);
    gb_rax_remove(&cg->consumers, (const uint8_t *)c->name, c->name_len, NULL);
    free_consumer(c, NULL);
    return pending;
}

gb_stream_nack *gb_stream_nack_new(gb_stream_consumer *consumer, int64_t now_ms)
{
    gb_stream_nack *n = gb_malloc(sizeof *n);
    n->delivery_time = now_ms;
    n->delivery_count = 1;
    n->consumer = consumer;
    return n;
}

void gb_stream_nack_free(gb_stream_nack *n) { gb_free(n); }

bool gb_stream_nack_remove(gb_stream_cg *cg, gb_stream_id id)
{
    uint8_t k[GB_STREAM_ID_KEY];
    gb_stream_id_encode(k, id);
    void *v;
    if (!gb_rax_remove(&cg->pel, k, sizeof k, &v))
        return false;
    gb_stream_nack *nack = v;
    if (nack->consumer)
        gb_rax_remove(&nack->consumer->pel, k, sizeof k, NULL);
    gb_free(nack);
    return true;
}

/* ---- all groups ------------------------------------------------------------------------------- */

void gb_stream_cg_hand_over_all(gb_stream *s, gb_rax_teardown *t)
{
    if (!s->groups)
        return;
    gb_rax_iter gi;
    gb_rax_iter_init(&gi, s->groups);
    for (bool ok = gb_rax_seek(&gi, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&gi)) {
        gb_stream_cg *cg = gi.value;
        gb_rax_iter ci;
        gb_rax_iter_init(&ci, &cg->consumers);
        for (bool more = gb_rax_seek(&ci, GB_RAX_FIRST, NULL, 0); more; more = gb_rax_next(&ci))
            gb_rax_teardown_add(t, &((gb_stream_consumer *)ci.value)->pel, NULL); /* the group's nacks */
        gb_rax_iter_done(&ci);
        gb_rax_teardown_add(t, &cg->pel, free_nack);
    }
    gb_rax_iter_done(&gi);
    gb_stream_cg_free_all(s); /* groups and consumers, their lists now empty */
}

void gb_stream_cg_free_all(gb_stream *s)
{
    if (!s->groups)
        return;
    gb_rax_destroy(s->groups, free_cg, NULL);
    gb_free(s->groups);
    s->groups = NULL;
}

/* The consumers of src with their PELs pointing at dst's copies of the
 * pending entries. */
static void dup_consumers(gb_stream_cg *dst, const gb_stream_cg *src)
{
    gb_rax_iter ci;
    gb_rax_iter_init(&ci, &src->consumers);
    for (bool ok = gb_rax_seek(&ci, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&ci)) {
        const gb_stream_consumer *c = ci.value;
        gb_stream_consumer *d = gb_stream_consumer_create(dst, gb_stream_consumer_name(c), c->seen_time);
        gb_rax_iter pi;
        gb_rax_iter_init(&pi, &c->pel);
        for (bool more = gb_rax_seek(&pi, GB_RAX_FIRST, NULL, 0); more; more = gb_rax_next(&pi)) {
            void *nack = NULL;
            gb_rax_find(&dst->pel, pi.key, pi.key_len, &nack);
            ((gb_stream_nack *)nack)->consumer = d;
            gb_rax_insert(&d->pel, pi.key, pi.key_len, nack, NULL);
        }
        gb_rax_iter_done(&pi);
    }
    gb_rax_iter_done(&ci);
}

void gb_stream_cg_dup_all(gb_stream *dst, const gb_stream *src)
{
    if (!src->groups)
        return;
    gb_rax_iter gi;
    gb_rax_iter_init(&gi, src->groups);
    for (bool ok = gb_rax_seek(&gi, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&gi)) {
        const gb_stream_cg *cg = gi.value;
        gb_stream_cg *d = gb_stream_cg_create(dst, gb_slice_make((const char *)gi.key, gi.key_len), cg->last_id,
                                              cg->entries_read);
        gb_rax_iter pi;
        gb_rax_iter_init(&pi, &cg->pel);
        for (bool more = gb_rax_seek(&pi, GB_RAX_FIRST, NULL, 0); more; more = gb_rax_next(&pi)) {
            const gb_stream_nack *n = pi.value;
            gb_stream_nack *copy = gb_stream_nack_new(NULL, n->delivery_time);
            copy->delivery_count = n->delivery_count;
            gb_rax_insert(&d->pel, pi.key, pi.key_len, copy, NULL);
        }
        gb_rax_iter_done(&pi);
        dup_consumers(d, cg);
    }
    gb_rax_iter_done(&gi);
}

size_t gb_stream_cg_mem_all(const gb_stream *s)
{
    if (!s->groups)
        return 0;
    size_t n = gb_mem_accounted(s->groups) + gb_rax_mem(s->groups);
    gb_rax_iter gi;
    gb_rax_iter_init(&gi, s->groups);
    for (bool ok = gb_rax_seek(&gi, GB_RAX_FIRST, NULL, 0); ok; ok = gb_rax_next(&gi)) {
        const gb_stream_cg *cg = gi.value;
        n += gb_mem_accounted(gi.value) + gb_rax_mem(&cg->pel) + gb_rax_mem(&cg->consumers);
        gb_rax_iter pi;
        gb_rax_iter_init(&pi, &cg->pel);
        for (bool more = gb_rax_seek(&pi, GB_RAX_FIRST, NULL, 0); more; more = gb_rax_next(&pi))
            n += gb_mem_accounted(pi.value);
        gb_rax_iter_done(&pi);
        gb_rax_iter ci;
        gb_rax_iter_init(&ci, &cg->consumers);
        for (bool more = gb_rax_seek(&ci, GB_RAX_FIRST, NULL, 0); more; more = gb_rax_next(&ci)) {
            const gb_stream_consumer *c = ci.value;
            n += gb_mem_accounted(ci.value) + gb_rax_mem(&c->pel);
        }
        gb_rax_iter_done(&ci);
    }
    gb_rax_iter_done(&gi);
    return n;
}

/* Redis 7.0's estimate: groups * (1 + the first group's pending entries),
 * one group looked at whatever their number. */
size_t gb_stream_cg_effort_all(const gb_stream *s)
{
    uint64_t groups = gb_stream_groups_count(s);
    if (groups == 0)
        return 0;
    gb_rax_iter gi;
    gb_rax_iter_init(&gi, s->groups);
    uint64_t first_pel = 0;
    if (gb_rax_seek(&gi, GB_RAX_FIRST, NULL, 0))
        first_pel = gb_rax_size(&((const gb_stream_cg *)gi.value)->pel);
    gb_rax_iter_done(&gi);
    return (size_t)(groups * (1 + first_pel));
}

const char *gb_stream_cg_load_pending(gb_stream_cg *cg, gb_stream_id id, gb_stream_id prev, bool first,
                                      int64_t delivery_time, uint64_t delivery_count)
{
    if (!first && gb_stream_id_cmp(id, prev) <= 0)
        return "a pending list out of order";
    uint8_t key[GB_STREAM_ID_KEY];
    gb_stream_id_encode(key, id);
    gb_stream_nack *nack = gb_stream_nack_new(NULL, delivery_time);
    nack->delivery_count = delivery_count;
    gb_rax_insert(&cg->pel, key, sizeof key, nack, NULL);
    return NULL;
}

const char *gb_stream_consumer_load_pending(gb_stream_cg *cg, gb_stream_consumer *c, gb_stream_id id)
{
    uint8_t key[GB_STREAM_ID_KEY];
    gb_stream_id_encode(key, id);
    void *v;
    if (!gb_rax_find(&cg->pel, key, sizeof key, &v))
        return "a consumer's pending entry missing from its group's list";
    gb_stream_nack *nack = v;
    if (nack->consumer)
        return "a pending entry owned twice";
    nack->consumer = c;
    gb_rax_insert(&c->pel, key, sizeof key, nack, NULL);
    return NULL;
}
