/* engine/ds/hash_ttl: per-field deadlines against a model -- random sets,
 * clears, HSET overwrites, deletes and expiry passes on small (listpack)
 * and large (hash table) hashes; the index always names exactly the fields
 * with a deadline, earliest first; dup and release keep memory balanced. */
#include "types_tutil.h"

#include "engine/base/mem.h"
#include "engine/ds/hash_ttl.h"

#define NF 300

typedef struct model {
    bool present[NF];
    int64_t when[NF]; /* -1: no deadline */
} model;

static gb_slice field_of(int i, char *buf) { return gb_slice_make(buf, (size_t)snprintf(buf, 16, "f%d", i)); }

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
    TU_CHECK(g->m->present[i] && g->m->when[i] >= 0 && g->m->when[i] <= g->now, "expired field %d not due", i);
    g->m->present[i] = false;
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
            m.present[i] = true;
            m.when[i] = -1;
            break;
        case 2: /* HEXPIRE on an existing field */
            if (m.present[i]) {
                m.when[i] = now + (int64_t)tu_rand(500);
                gb_hash_ttl_set(h, f, m.when[i]);
            }
            break;
        case 3: /* HPERSIST */
            TU_CHECK(gb_hash_ttl_clear(h, f) == (m.present[i] && m.when[i] >= 0), "clear %d", i);
            m.when[i] = -1;
            break;
        case 4: /* HDEL */
            TU_CHECK(gb_hash_del(h, 1, &f) == (size_t)m.present[i], "del %d", i);
            m.present[i] = false;
            m.when[i] = -1;
            break;
        default: { /* time passes; an expiry pass of bounded size */
            now += (int64_t)tu_rand(50);
            gone_ctx g = {&m, now, 0};
            size_t due = gb_hash_ttl_expired_count(h, now), max = 1 + tu_rand(8);
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

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_listpackex),
        cmocka_unit_test(test_model_hashtable),
        cmocka_unit_test(test_plain_hash_untouched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
