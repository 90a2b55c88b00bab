/* engine/t_hash: random operation sequences against a model that also
 * predicts the encoding and the listpack's insertion order; HINCRBY and
 * HINCRBYFLOAT errors; memory per field. */
#include "types_tutil.h"

#include <math.h>

#include "engine/ds/listpack.h"
#include "engine/base/score.h"
#include "engine/ds/hash.h"

#define FLEN 512

typedef struct hent {
    size_t flen, vlen;
    char f[FLEN], v[FLEN];
} hent;

typedef struct hmodel {
    hent *e;
    size_t n, cap;
    bool big;
} hmodel;

static gb_slice fs(const hent *e) { return gb_slice_make(e->f, e->flen); }
static gb_slice vs(const hent *e) { return gb_slice_make(e->v, e->vlen); }

/* HINCRBYFLOAT's text as Redis writes it (ld2string, LD_STR_HUMAN):
 * "%.17Lf", the zeros after the '.' and a bare '.' dropped, "-0" as "0",
 * "inf"/"-inf". The model's own copy, not gb_format_long_double's. */
static size_t redis_ld_text(long double v, char *buf, size_t cap)
{
    if (isinf(v))
        return (size_t)snprintf(buf, cap, "%s", v > 0 ? "inf" : "-inf");
    int n = snprintf(buf, cap, "%.17Lf", v);
    if (n < 0 || (size_t)n + 1 > cap)
        return 0;
    size_t l = (size_t)n;
    if (strchr(buf, '.')) {
        while (buf[l - 1] == '0')
            l--;
        if (buf[l - 1] == '.')
            l--;
    }
    if (l == 2 && buf[0] == '-' && buf[1] == '0')
        buf[0] = '0', l = 1;
    buf[l] = '\0';
    return l;
}

static ssize_t hfind(const hmodel *h, gb_slice f)
{
    for (size_t i = 0; i < h->n; i++)
        if (gb_slice_eq(fs(&h->e[i]), f))
            return (ssize_t)i;
    return -1;
}

/* Redis's hashTypeSet on the model: converts first when the pair is too
 * long, after when there are too many fields. */
static bool hset(hmodel *h, const gb_types_config *cfg, gb_slice f, gb_slice v)
{
    if (f.len > cfg->hash_max_listpack_value || v.len > cfg->hash_max_listpack_value)
        h->big = true;
    ssize_t at = hfind(h, f);
    if (at >= 0) {
        h->e[at].vlen = v.len;
        memcpy(h->e[at].v, v.ptr, v.len);
        if (h->n > cfg->hash_max_listpack_entries) /* after a CONFIG SET lowered it */
            h->big = true;
        return false;
    }
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 64;
        h->e = realloc(h->e, h->cap * sizeof *h->e);
    }
    hent *e = &h->e[h->n++];
    e->flen = f.len;
    memcpy(e->f, f.ptr, f.len);
    e->vlen = v.len;
    memcpy(e->v, v.ptr, v.len);
    if (h->n > cfg->hash_max_listpack_entries)
        h->big = true;
    return true;
}

static bool hdel(hmodel *h, gb_slice f)
{
    ssize_t at = hfind(h, f);
    if (at < 0)
        return false;
    memmove(&h->e[at], &h->e[at + 1], (h->n - (size_t)at - 1) * sizeof *h->e);
    h->n--;
    return true;
}

typedef struct coll {
    hent *e;
    size_t n, cap;
} coll;

static void coll_emit(void *ctx, gb_slice f, gb_slice v)
{
    coll *c = ctx;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->e = realloc(c->e, c->cap * sizeof *c->e);
    }
    TU_CHECK(f.len < FLEN && v.len < FLEN, "field or value too long");
    hent *e = &c->e[c->n++];
    e->flen = f.len;
    memcpy(e->f, f.ptr, f.len);
    e->vlen = v.len;
    memcpy(e->v, v.ptr, v.len);
}

static ssize_t cfind(const coll *c, gb_slice f)
{
    for (size_t i = 0; i < c->n; i++)
        if (gb_slice_eq(fs(&c->e[i]), f))
            return (ssize_t)i;
    return -1;
}

static int hent_cmp(const void *a, const void *b) { return gb_slice_cmp(fs(a), fs(b)); }

static void check(const gb_hash *h, const hmodel *md)
{
    TU_CHECK(gb_hash_verify(h), "verify");
    TU_CHECK(gb_hash_len(h) == md->n, "len %zu vs %zu", gb_hash_len(h), md->n);
    TU_CHECK(gb_hash_encoding(h) == (md->big ? GB_HASH_HASHTABLE : GB_HASH_LISTPACK), "encoding %s, model %s",
             gb_hash_encoding_name(h), md->big ? "hashtable" : "listpack");
    coll c = {0};
    gb_hash_each(h, coll_emit, &c);
    TU_CHECK(c.n == md->n, "each count");
    /* listpack: insertion order; hashtable: any order (compare sorted) */
    const hent *want = md->e;
    hent *sorted = NULL;
    if (md->big && md->n) {
        sorted = malloc(md->n * sizeof *sorted);
        memcpy(sorted, md->e, md->n * sizeof *sorted);
        qsort(sorted, md->n, sizeof *sorted, hent_cmp);
        qsort(c.e, c.n, sizeof *c.e, hent_cmp);
        want = sorted;
    }
    for (size_t i = 0; i < md->n; i++) {
        TU_CHECK(gb_slice_eq(fs(&c.e[i]), fs(&want[i])), "field %zu", i);
        TU_CHECK(gb_slice_eq(vs(&c.e[i]), vs(&want[i])), "value of %.*s: %.*s vs %.*s", (int)want[i].flen,
                 want[i].f, (int)c.e[i].vlen, c.e[i].v, (int)want[i].vlen, want[i].v);
    }
    free(sorted);
    free(c.e);
}

static size_t rand_field(char *buf, uint64_t universe) { return tu_member(buf, FLEN, universe, 66); }

static size_t rand_value(char *buf)
{
    switch (tu_rand(8)) {
    case 0:
        return (size_t)snprintf(buf, FLEN, "%" PRId64, (int64_t)gb_random_u64() >> tu_rand(64));
    case 1:
        return (size_t)snprintf(buf, FLEN, "%d.%d", (int)tu_rand(100), (int)tu_rand(100));
    case 2: {
        size_t n = 60 + (size_t)tu_rand(10);
        memset(buf, 'v', n);
        return n;
    }
    case 3:
        return 0;
    case 4:
        return (size_t)snprintf(buf, FLEN, "%s", tu_rand(2) ? "9223372036854775807" : "-9223372036854775808");
    default:
        return (size_t)snprintf(buf, FLEN, "%d", (int)tu_rand(1000) - 500);
    }
}

static void run(const gb_types_config *cfg, size_t ops, uint64_t universe)
{
    gb_hash *h = gb_hash_new();
    hmodel md = {0};
    char fb[4][FLEN], vb[4][FLEN];
    bool was_big = false;
    for (size_t op = 0; op < ops; op++) {
        int what = (int)tu_rand(100);
        gb_slice f = gb_slice_make(fb[0], rand_field(fb[0], universe));
        if (md.n && tu_rand(2)) {
            const hent *e = &md.e[tu_rand(md.n)];
            memcpy(fb[0], e->f, e->flen);
            f.len = e->flen;
        }
        ssize_t at = hfind(&md, f);
        if (what < 35) {
            size_t n = 1 + (size_t)tu_rand(3);
            gb_slice fields[3], values[3];
            fields[0] = f;
            for (size_t i = 0; i < n; i++) {
                if (i)
                    fields[i] = gb_slice_make(fb[i], rand_field(fb[i], universe));
                values[i] = gb_slice_make(vb[i], rand_value(vb[i]));
            }
            /* HSET's up-front check: any argument too long converts first. */
            for (size_t i = 0; i < n; i++)
                if (fields[i].len > cfg->hash_max_listpack_value ||
                    values[i].len > cfg->hash_max_listpack_value)
                    md.big = true;
            size_t want = 0;
            for (size_t i = 0; i < n; i++)
                want += hset(&md, cfg, fields[i], values[i]);
            TU_CHECK(gb_hash_set_many(h, cfg, n, fields, values) == want, "hset count");
        } else if (what < 42) {
            gb_slice v = gb_slice_make(vb[0], rand_value(vb[0]));
            bool want = at < 0;
            if (want)
                hset(&md, cfg, f, v);
            TU_CHECK(gb_hash_setnx(h, cfg, f, v) == want, "hsetnx");
        } else if (what < 55) {
            size_t n = 1 + (size_t)tu_rand(3);
            gb_slice fields[3];
            fields[0] = f;
            for (size_t i = 1; i < n; i++)
                fields[i] = gb_slice_make(fb[i], rand_field(fb[i], universe));
            size_t want = 0;
            for (size_t i = 0; i < n; i++)
                want += hdel(&md, fields[i]);
            TU_CHECK(gb_hash_del(h, n, fields) == want, "hdel count");
        } else if (what < 68) {
            int64_t incr = tu_rand(4) ? (int64_t)tu_rand(200) - 100 : (int64_t)gb_random_u64();
            int64_t cur = 0, out = 0;
            int want = 0;
            if (at >= 0 && !gb_lp_str2int(md.e[at].v, md.e[at].vlen, &cur))
                want = GB_EINVAL;
            else if ((incr < 0 && cur < 0 && incr < INT64_MIN - cur) ||
                     (incr > 0 && cur > 0 && incr > INT64_MAX - cur))
                want = GB_ERANGE;
            int rc = gb_hash_incrby(h, cfg, f, incr, &out);
            TU_CHECK(rc == want, "hincrby rc %d vs %d", rc, want);
            if (rc == 0) {
                TU_CHECK(out == cur + incr, "hincrby result");
                char nb[24];
                hset(&md, cfg, f, gb_slice_make(nb, (size_t)snprintf(nb, sizeof nb, "%" PRId64, out)));
            }
        } else if (what < 76) {
            static const long double incrs[] = {0.1L, -5, 1.5L, 1e300L, -1e300L, 3, 0};
            long double incr = incrs[tu_rand(GB_ARRAY_LEN(incrs))];
            long double cur = 0;
            int want = 0;
            if (at >= 0 && gb_parse_long_double(vs(&md.e[at]), &cur) != 0)
                want = GB_EINVAL;
            else if (!isfinite(cur + incr))
                want = GB_ERANGE;
            char out[GB_LONG_DOUBLE_BUF], expect[GB_LONG_DOUBLE_BUF];
            size_t outlen = 0;
            int rc = gb_hash_incrbyfloat(h, cfg, f, incr, out, &outlen);
            TU_CHECK(rc == want, "hincrbyfloat rc %d vs %d", rc, want);
            if (rc == 0) {
                size_t el = redis_ld_text(cur + incr, expect, sizeof expect);
                TU_CHECK(el == outlen && memcmp(out, expect, el) == 0, "hincrbyfloat text");
                TU_CHECK(outlen < FLEN, "hincrbyfloat result of %zu bytes", outlen);
                hset(&md, cfg, f, gb_slice_make(out, outlen));
            }
        } else if (what < 86) {
            gb_slice v;
            char buf[GB_HASH_VALUE_BUF];
            bool got = gb_hash_get(h, f, &v, buf);
            TU_CHECK(got == (at >= 0), "hget presence");
            if (got)
                TU_CHECK(gb_slice_eq(v, vs(&md.e[at])), "hget value");
            TU_CHECK(gb_hash_exists(h, f) == (at >= 0), "hexists");
            TU_CHECK(gb_hash_strlen(h, f) == (at >= 0 ? md.e[at].vlen : 0), "hstrlen");
        } else if (what < 93) {
            int64_t counts[] = {-4, 1, 2, (int64_t)md.n, (int64_t)md.n + 3, (int64_t)md.n / 2, 0};
            int64_t cnt = counts[tu_rand(GB_ARRAY_LEN(counts))];
            coll c = {0};
            gb_hash_random(h, cnt, coll_emit, &c);
            size_t expect_n = md.n == 0 ? 0
                              : cnt < 0 ? (size_t)-cnt
                                        : ((size_t)cnt < md.n ? (size_t)cnt : md.n);
            TU_CHECK(c.n == expect_n, "hrandfield %" PRId64 ": %zu", cnt, c.n);
            for (size_t i = 0; i < c.n; i++) {
                ssize_t k = hfind(&md, fs(&c.e[i]));
                TU_CHECK(k >= 0 && gb_slice_eq(vs(&c.e[i]), vs(&md.e[k])), "hrandfield pair");
                if (cnt > 0)
                    for (size_t j = 0; j < i; j++)
                        TU_CHECK(!gb_slice_eq(fs(&c.e[i]), fs(&c.e[j])), "hrandfield repeat");
            }
            free(c.e);
        } else if (what < 97) {
            coll c = {0};
            uint64_t cur = 0;
            do {
                cur = gb_hash_scan(h, cur, coll_emit, &c);
            } while (cur);
            for (size_t i = 0; i < md.n; i++)
                TU_CHECK(cfind(&c, fs(&md.e[i])) >= 0, "hscan missed a field");
            free(c.e);
        } else {
            gb_hash *c = gb_hash_dup(h);
            check(c, &md);
            gb_hash_free(h);
            h = c;
        }
        check(h, &md);
        was_big |= md.big;
        if (md.n == 0) { /* the key is deleted; a later HSET creates it again */
            gb_hash_free(h);
            h = gb_hash_new();
            md.big = false;
        }
    }
    TU_CHECK(was_big, "never converted");
    gb_hash_free(h);
    free(md.e);
}

static gb_types_config cfg_with(size_t entries, size_t value)
{
    gb_types_config c;
    gb_types_config_defaults(&c);
    c.hash_max_listpack_entries = entries;
    c.hash_max_listpack_value = value;
    return c;
}

static void test_model_default(void **state)
{
    (void)state;
    tu_reseed("default");
    gb_types_config c = cfg_with(128, 64);
    run(&c, 5000, 300);
}

static void test_model_tiny(void **state)
{
    (void)state;
    tu_reseed("tiny");
    size_t entries[] = {0, 1, 2, 3, 8};
    size_t values[] = {0, 2, 5, 64};
    for (size_t i = 0; i < GB_ARRAY_LEN(entries); i++)
        for (size_t j = 0; j < GB_ARRAY_LEN(values); j++) {
            gb_types_config c = cfg_with(entries[i], values[j]);
            run(&c, 400, 10);
        }
}

/* Overwriting values of every size keeps a record's bytes consistent
 * (in-place writes, growth, shrink). */
static void test_value_rewrites(void **state)
{
    (void)state;
    tu_reseed("rewrite");
    gb_types_config cfg = cfg_with(0, 0);
    gb_hash *h = gb_hash_new();
    char val[300], fbuf[16];
    for (int i = 0; i < 3000; i++) {
        size_t fl = (size_t)snprintf(fbuf, sizeof fbuf, "f%d", (int)tu_rand(20));
        size_t vl = (size_t)tu_rand(tu_rand(4) ? 40 : 300);
        memset(val, 'a' + (int)tu_rand(26), vl);
        gb_hash_set(h, &cfg, gb_slice_make(fbuf, fl), gb_slice_make(val, vl));
        gb_slice got;
        char buf[GB_HASH_VALUE_BUF];
        assert_true(gb_hash_get(h, gb_slice_make(fbuf, fl), &got, buf));
        assert_true(gb_slice_eq(got, gb_slice_make(val, vl)));
        /* setting a field to its own current value */
        gb_hash_set(h, &cfg, gb_slice_make(fbuf, fl), got);
        assert_true(gb_hash_get(h, gb_slice_make(fbuf, fl), &got, buf));
        assert_true(gb_slice_eq(got, gb_slice_make(val, vl)));
        assert_true(gb_hash_verify(h));
    }
    gb_hash_free(h);
}

static void test_incr_edges(void **state)
{
    (void)state;
    gb_types_config cfg = cfg_with(128, 64);
    gb_hash *h = gb_hash_new();
    int64_t out;
    gb_slice f = gb_slice_cstr("n");
    assert_int_equal(gb_hash_incrby(h, &cfg, f, INT64_MAX, &out), 0);
    assert_int_equal(gb_hash_incrby(h, &cfg, f, 1, &out), GB_ERANGE);
    assert_int_equal(gb_hash_incrby(h, &cfg, f, INT64_MIN, &out), 0);
    assert_int_equal(out, -1);
    gb_hash_set(h, &cfg, f, gb_slice_cstr(" 1"));
    assert_int_equal(gb_hash_incrby(h, &cfg, f, 1, &out), GB_EINVAL);
    gb_hash_set(h, &cfg, f, gb_slice_cstr("10.50"));
    char buf[GB_LONG_DOUBLE_BUF];
    size_t n;
    assert_int_equal(gb_hash_incrbyfloat(h, &cfg, f, 0.1L, buf, &n), 0);
    assert_string_equal(buf, "10.6");
    assert_int_equal(gb_hash_incrbyfloat(h, &cfg, f, -5, buf, &n), 0);
    assert_string_equal(buf, "5.6");
    gb_hash_set(h, &cfg, f, gb_slice_cstr("abc"));
    assert_int_equal(gb_hash_incrbyfloat(h, &cfg, f, 1, buf, &n), GB_EINVAL);
    gb_hash_set(h, &cfg, f, gb_slice_cstr("1e308"));
    assert_int_equal(gb_hash_incrbyfloat(h, &cfg, f, 1e308L, buf, &n), 0); /* long double: no overflow */
    gb_slice v;
    char vb[GB_HASH_VALUE_BUF];
    assert_true(gb_hash_get(h, f, &v, vb) && v.len > 300);
    assert_int_equal(gb_hash_encoding(h), GB_HASH_HASHTABLE); /* the value outgrew the listpack */
    gb_hash_free(h);
}

static void test_memory(void **state)
{
    (void)state;
    gb_types_config cfg;
    gb_types_config_defaults(&cfg);
    char fbuf[32], vbuf[32];
    const size_t big_n = 1000000;
    size_t before = gb_mem_used();
    gb_hash *h = gb_hash_new();
    for (size_t i = 0; i < big_n; i++)
        gb_hash_set(h, &cfg, gb_slice_make(fbuf, (size_t)snprintf(fbuf, sizeof fbuf, "field:%zu", i)),
                    gb_slice_make(vbuf, (size_t)snprintf(vbuf, sizeof vbuf, "value:%zu", i)));
    size_t used = gb_mem_used() - before;
    print_message("hash 1M fields (\"field:N\" = \"value:N\"): %.1f bytes/field (%s)\n",
                  (double)used / (double)big_n, gb_hash_encoding_name(h));
    gb_hash_free(h);
    TU_CHECK(gb_mem_used() == before, "leak");

    const size_t small_n = 100000;
    gb_hash **v = malloc(small_n * sizeof *v);
    before = gb_mem_used();
    for (size_t k = 0; k < small_n; k++) {
        v[k] = gb_hash_new();
        for (int i = 0; i < 10; i++)
            gb_hash_set(v[k], &cfg, gb_slice_make(fbuf, (size_t)snprintf(fbuf, sizeof fbuf, "field:%d", i)),
                        gb_slice_make(vbuf, (size_t)snprintf(vbuf, sizeof vbuf, "value:%d", i)));
    }
    used = gb_mem_used() - before;
    print_message("100k hashes x 10 fields: %.1f bytes/field incl. the 16-byte object header (%s)\n",
                  (double)used / (double)(small_n * 10), gb_hash_encoding_name(v[0]));
    for (size_t k = 0; k < small_n; k++)
        gb_hash_free(v[k]);
    free(v);
    TU_CHECK(gb_mem_used() == before, "leak");
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_default),  cmocka_unit_test(test_model_tiny),
        cmocka_unit_test(test_value_rewrites), cmocka_unit_test(test_incr_edges),
        cmocka_unit_test(test_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
