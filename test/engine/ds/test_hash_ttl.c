/* engine/ds/hash_ttl: per-field deadlines against a model -- random sets,
 * clears, HSET overwrites, deletes and expiry passes on small (listpack)
 * and large (hash table) hashes; the index always names exactly the fields
 * with a deadline, earliest first; a listpack keeps Redis 7.4's listpackex
 * order (the model's `order`); dup and release keep memory balanced. */
#include "types_tutil.h"

#include "engine/base/mem.h"
#include "engine/ds/hash_ttl.h"

#define NF 300

static gb_slice field_of(int i, char *buf) { return gb_slice_make(buf, (size_t)snprintf(buf, 16, "f%d", i)); }

typedef struct model {
    bool present[NF];
    int64_t when[NF]; /* -1: no deadline */
    int order[NF];    /* the fields as a listpack holds them (Redis 7.4's rules) */
    int norder;
} model;

static void order_remove(model *m, int i)
{
    int k = 0;
    while (k < m->norder && m->order[k] != i)
        k++;
    if (k == m->norder)
        return;
    memmove(&m->order[k], &m->order[k + 1], (size_t)(m->norder - k - 1) * sizeof m->order[0]);
    m->norder--;
}

/* Redis's listpackExAddInternal: a field without a deadline goes last; one
 * with a deadline before the first field whose deadline is none or >= it. */
static void order_place(model *m, int i)
{
    order_remove(m, i);
    int k = 0;
    if (m->when[i] < 0)
        k = m->norder;
    while (k < m->norder && m->when[m->order[k]] >= 0 && m->when[m->order[k]] < m->when[i])
        k++;
    memmove(&m->order[k + 1], &m->order[k], (size_t)(m->norder - k) * sizeof m->order[0]);
    m->order[k] = i;
    m->norder++;
}

typedef struct order_walk {
    const model *m;
    int k;
} order_walk;

static void check_next_in_order(void *ctx, gb_slice field, gb_slice value)
{
    (void)value;
    order_walk *w = ctx;
    char buf[16];
    TU_CHECK(w->k < w->m->norder, "more fields than the model");
    gb_slice want = field_of(w->m->order[w->k++], buf);
    TU_CHECK(gb_slice_eq(field, want), "field %d of the listpack out of Redis's order", w->k - 1);
}


static void check_against(const gb_hash *h, const model *m)
{
    char buf[16];
    size_t n = 0, nttl = 0;
    int64_t min = -1;
    for (int i = 0; i < NF; i++) {
        gb_slice f = field_of(i, buf);
        TU_CHECK(gb_hash_exists(h, f) == m->present[i], "field %d presence", i);
        TU_CHECK(gb_hash_ttl_get(h, f) == (m->present[i] ? m->when[i] : -1), "field %d deadline", i);
        n += m->present[i];
        if (m->present[i] && m->when[i] >= 0) {
            nttl++;
            min = (min < 0 || m->when[i] < min) ? m->when[i] : min;
        }
    }
    TU_CHECK(gb_hash_len(h) == n, "length");
    TU_CHECK(gb_hash_ttl_count(h) == nttl, "deadline count");
    TU_CHECK(gb_hash_ttl_min(h) == min, "earliest deadline");
    TU_CHECK(gb_hash_verify(h), "structure");
    if (strncmp(gb_hash_encoding_name(h), "listpack", 8) == 0) {
        order_walk w = {m, 0};
        gb_hash_each(h, check_next_in_order, &w);
        TU_CHECK(w.k == m->norder, "fewer fields than the model");
    }
}

typedef struct gone_ctx {
    model *m;
    int64_t now;
    size_t n;
} gone_ctx;

static void on_gone(void *ctx, gb_slice field)
{
    gone_ctx *g = ctx;
    int i = 0;
    for (size_t k = 1; k < field.len; k++) /* (not NUL-terminated) */
        i = i * 10 + (field.ptr[k] - '0');
    TU_CHECK(g->m->present[i] && g->m->when[i] >= 0 && g->m->when[i] < g->now, "expired field %d not due", i);
    g->m->present[i] = false;
    order_remove(g->m, i);
    g->n++;
}

static void run_model(size_t max_listpack)
{
    gb_types_config cfg = {.hash_max_listpack_entries = max_listpack, .hash_max_listpack_value = 64};
    size_t before = gb_mem_used();
    gb_hash *h = gb_hash_new();
    model m;
    memset(&m, 0, sizeof m);
    char buf[16];
    int64_t now = 1000;
    for (int step = 0; step < 20000; step++) {
        int i = (int)tu_rand(NF);
        gb_slice f = field_of(i, buf);
        switch (tu_rand(6)) {
        case 0: /* HSET: the value loses its deadline */
        case 1:
            gb_hash_set(h, &cfg, f, gb_slice_cstr("v"));
            if (!m.present[i] || m.when[i] >= 0) { /* new, or its deadline went: last */
                m.when[i] = -1;
                order_place(&m, i);
            }
            m.present[i] = true;
            break;
        case 2: /* HEXPIRE on an existing field */
            if (m.present[i]) {
                m.when[i] = now + (int64_t)tu_rand(500);
                gb_hash_ttl_set(h, f, m.when[i]);
                order_place(&m, i);
            }
            break;
        case 3: /* HPERSIST */
            TU_CHECK(gb_hash_ttl_clear(h, f) == (m.present[i] && m.when[i] >= 0), "clear %d", i);
            if (m.present[i] && m.when[i] >= 0) {
                m.when[i] = -1;
                order_place(&m, i);
            }
            break;
        case 4: /* HDEL */
            TU_CHECK(gb_hash_del(h, 1, &f) == (size_t)m.present[i], "del %d", i);
            m.present[i] = false;
            m.when[i] = -1;
            order_remove(&m, i);
            break;
        default: { /* time passes; an expiry pass of bounded size */
            now += (int64_t)tu_rand(50);
            gone_ctx g = {&m, now, 0};
            size_t due = gb_hash_ttl_expired_count(h, now), max = 1 + tu_rand(8), model_due = 0;
            for (int k = 0; k < NF; k++) /* past its millisecond, not in it */
                model_due += m.present[k] && m.when[k] >= 0 && m.when[k] < now;
            TU_CHECK(due == model_due, "due %zu, model %zu", due, model_due);
            TU_CHECK(gb_hash_ttl_expire(h, now, max, on_gone, &g) == (due < max ? due : max), "expire count");
            TU_CHECK(g.n == (due < max ? due : max), "callbacks");
            break;
        }
        }
        for (int k = 0; k < NF; k++)
            if (!m.present[k])
                m.when[k] = -1;
        if (step % 500 == 0) {
            check_against(h, &m);
            gb_hash *c = gb_hash_dup(h);
            check_against(c, &m);
            TU_CHECK(strcmp(gb_hash_encoding_name(c), gb_hash_encoding_name(h)) == 0, "dup encoding");
            gb_hash_free(c);
        }
    }
    check_against(h, &m);
    if (gb_hash_has_ttl_enc(h))
        TU_CHECK(strcmp(gb_hash_encoding_name(h), max_listpack >= NF ? "listpackex" : "hashtable") == 0,
                 "encoding %s", gb_hash_encoding_name(h));
    gb_hash_free(h);
    TU_CHECK(gb_mem_used() == before, "leak");
}

static void test_model_listpackex(void **state)
{
    (void)state;
    tu_reseed(__func__);
    run_model(1000);
}

static void test_model_hashtable(void **state)
{
    (void)state;
    tu_reseed(__func__);
    run_model(16);
}

/* A hash that never had a deadline keeps its plain encoding and size. */
static void test_plain_hash_untouched(void **state)
{
    (void)state;
    gb_types_config cfg = {.hash_max_listpack_entries = 128, .hash_max_listpack_value = 64};
    gb_hash *h = gb_hash_new();
    gb_hash_set(h, &cfg, gb_slice_cstr("a"), gb_slice_cstr("1"));
    size_t mem = gb_hash_payload_mem(h);
    TU_CHECK(!gb_hash_ttl_clear(h, gb_slice_cstr("a")) && gb_hash_ttl_get(h, gb_slice_cstr("a")) == -1, "no ttl");
    TU_CHECK(gb_hash_ttl_expire(h, INT64_MAX, 10, NULL, NULL) == 0, "nothing to expire");
    TU_CHECK(!gb_hash_has_ttl_enc(h) && gb_hash_payload_mem(h) == mem, "still plain");
    TU_CHECK(strcmp(gb_hash_encoding_name(h), "listpack") == 0, "listpack");
    gb_hash_ttl_set(h, gb_slice_cstr("a"), 5);
    TU_CHECK(strcmp(gb_hash_encoding_name(h), "listpackex") == 0 && gb_hash_payload_mem(h) > mem, "listpackex");
    gb_hash_free(h);
}

static void append_field(void *ctx, gb_slice field, gb_slice value)
{
    (void)value;
    strncat(ctx, field.ptr, field.len);
}

/* A loader gives each field its deadline in the file's order; a field goes
 * after those with an equal or earlier deadline, so equal deadlines keep
 * the file's order (what Redis's order saved loads as it was). */
static void test_loaded_order(void **state)
{
    (void)state;
    gb_types_config cfg = {.hash_max_listpack_entries = 128, .hash_max_listpack_value = 64};
    size_t before = gb_mem_used();
    gb_hash *h = gb_hash_new();
    const char *names[] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++)
        gb_hash_set(h, &cfg, gb_slice_cstr(names[i]), gb_slice_cstr(i == 2 ? "12345" : "v"));
    gb_hash_ttl_load(h, gb_slice_cstr("a"), 5);
    gb_hash_ttl_load(h, gb_slice_cstr("c"), 5);
    gb_hash_ttl_load(h, gb_slice_cstr("e"), 3);
    char got[8] = "";
    gb_hash_each(h, append_field, got);
    TU_CHECK(strcmp(got, "eacbd") == 0, "order after the load: %s", got);
    char buf[GB_HASH_VALUE_BUF];
    gb_slice v;
    TU_CHECK(gb_hash_get(h, gb_slice_cstr("c"), &v, buf) && gb_slice_eq(v, gb_slice_cstr("12345")), "value kept");
    /* then the command rules: a deadline equal to others goes before them */
    gb_hash_ttl_set(h, gb_slice_cstr("d"), 5);
    got[0] = 0;
    gb_hash_each(h, append_field, got);
    TU_CHECK(strcmp(got, "edacb") == 0, "order after HEXPIRE: %s", got);
    TU_CHECK(gb_hash_verify(h), "structure");
    gb_hash_free(h);
    TU_CHECK(gb_mem_used() == before, "leak");
}

/* Growing past the listpack's limits keeps every deadline: by a long value
 * written with its deadline kept (HINCRBYFLOAT, HSETEX KEEPTTL), or by a
 * field too many. HSET then drops the one it writes. */
static void test_conversion_keeps_deadlines(void **state)
{
    (void)state;
    gb_types_config cfg = {.hash_max_listpack_entries = 8, .hash_max_listpack_value = 16};
    size_t before = gb_mem_used();
    for (int how = 0; how < 2; how++) {
        gb_hash *h = gb_hash_new();
        char buf[16];
        for (int i = 0; i < 8; i++) {
            gb_hash_set(h, &cfg, field_of(i, buf), gb_slice_cstr("v"));
            if (i % 2)
                gb_hash_ttl_set(h, field_of(i, buf), 1000 - i);
        }
        TU_CHECK(strcmp(gb_hash_encoding_name(h), "listpackex") == 0, "listpackex");
        if (how == 0)
            gb_hash_set_keep_ttl(h, &cfg, field_of(3, buf), gb_slice_cstr("a value longer than sixteen"));
        else
            gb_hash_set(h, &cfg, field_of(8, buf), gb_slice_cstr("v"));
        TU_CHECK(strcmp(gb_hash_encoding_name(h), "hashtable") == 0, "converted (%d)", how);
        for (int i = 0; i < 9; i++)
            TU_CHECK(gb_hash_ttl_get(h, field_of(i, buf)) == (i % 2 && i < 8 ? 1000 - i : -1), "deadline %d", i);
        TU_CHECK(gb_hash_ttl_count(h) == 4 && gb_hash_ttl_min(h) == 993 && gb_hash_verify(h), "index");
        gb_hash_set(h, &cfg, field_of(7, buf), gb_slice_cstr("w"));
        TU_CHECK(gb_hash_ttl_get(h, field_of(7, buf)) == -1 && gb_hash_ttl_min(h) == 995, "HSET drops it");
        TU_CHECK(gb_hash_verify(h), "structure");
        gb_hash_free(h);
    }
    TU_CHECK(gb_mem_used() == before, "leak");
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_listpackex),
        cmocka_unit_test(test_model_hashtable),
        cmocka_unit_test(test_plain_hash_untouched),
        cmocka_unit_test(test_loaded_order),
        cmocka_unit_test(test_conversion_keeps_deadlines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
