/* engine/t_set: random operation sequences against a model that also
 * predicts the encoding (intset -> listpack -> hashtable, Redis 7.2 rules)
 * and the member order of the compact encodings; algebra; memory. */
#include "types_tutil.h"

#include "engine/ds/listpack.h"
#include "engine/ds/set.h"

#define MLEN 80

typedef struct ment {
    size_t len;
    char m[MLEN];
} ment;

/* The model: members in the object's order (insertion order for listpack,
 * ascending for intset; any order for hashtable), and the encoding. */
typedef struct mset {
    ment *e;
    size_t n, cap;
    gb_set_enc enc;
} mset;

static gb_slice ms(const ment *e) { return gb_slice_make(e->m, e->len); }

static bool is_int(gb_slice m, int64_t *v) { return gb_lp_str2int(m.ptr, m.len, v); }

static ssize_t mfind(const mset *s, gb_slice m)
{
    for (size_t i = 0; i < s->n; i++)
        if (gb_slice_eq(ms(&s->e[i]), m))
            return (ssize_t)i;
    return -1;
}

static void mpush(mset *s, gb_slice m, size_t pos)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->e = realloc(s->e, s->cap * sizeof *s->e);
    }
    memmove(&s->e[pos + 1], &s->e[pos], (s->n - pos) * sizeof *s->e);
    s->e[pos].len = m.len;
    if (m.len)
        memcpy(s->e[pos].m, m.ptr, m.len);
    s->n++;
}

static size_t digits(int64_t v)
{
    char b[24];
    return (size_t)snprintf(b, sizeof b, "%" PRId64, v);
}

/* Redis 7.2's setTypeAdd, on the model. */
static bool madd(mset *s, const gb_types_config *cfg, gb_slice m)
{
    if (mfind(s, m) >= 0)
        return false;
    int64_t v;
    if (s->enc == GB_SET_INTSET) {
        if (is_int(m, &v)) {
            size_t pos = 0;
            int64_t x;
            while (pos < s->n && is_int(ms(&s->e[pos]), &x) && x < v)
                pos++;
            mpush(s, m, pos);
            if (s->n > cfg->set_max_intset_entries)
                s->enc = GB_SET_HASHTABLE;
            return true;
        }
        size_t maxlen = 0;
        if (s->n) {
            int64_t lo, hi;
            is_int(ms(&s->e[0]), &lo);
            is_int(ms(&s->e[s->n - 1]), &hi);
            maxlen = digits(lo) > digits(hi) ? digits(lo) : digits(hi);
        }
        if (s->n < cfg->set_max_listpack_entries && m.len <= cfg->set_max_listpack_value &&
            maxlen <= cfg->set_max_listpack_value)
            s->enc = GB_SET_LISTPACK;
        else
            s->enc = GB_SET_HASHTABLE;
        mpush(s, m, s->n);
        return true;
    }
    if (s->enc == GB_SET_LISTPACK &&
        !(s->n < cfg->set_max_listpack_entries && m.len <= cfg->set_max_listpack_value))
        s->enc = GB_SET_HASHTABLE;
    mpush(s, m, s->n);
    return true;
}

static bool mremove(mset *s, gb_slice m)
{
    ssize_t at = mfind(s, m);
    if (at < 0)
        return false;
    memmove(&s->e[at], &s->e[at + 1], (s->n - (size_t)at - 1) * sizeof *s->e);
    s->n--;
    return true;
}

/* ---- collecting ---- */

typedef struct coll {
    ment *e;
    size_t n, cap;
} coll;

static void coll_emit(void *ctx, gb_slice m)
{
    coll *c = ctx;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->e = realloc(c->e, c->cap * sizeof *c->e);
    }
    TU_CHECK(m.len < MLEN, "member too long");
    c->e[c->n].len = m.len;
    if (m.len)
        memcpy(c->e[c->n].m, m.ptr, m.len);
    c->n++;
}

static bool contains(const coll *c, gb_slice m)
{
    for (size_t i = 0; i < c->n; i++)
        if (gb_slice_eq(ms(&c->e[i]), m))
            return true;
    return false;
}

static void check(const gb_set *s, const mset *md)
{
    TU_CHECK(gb_set_verify(s), "verify");
    TU_CHECK(gb_set_card(s) == md->n, "card %zu vs %zu", gb_set_card(s), md->n);
    TU_CHECK(gb_set_encoding(s) == md->enc, "encoding %s, model %d", gb_set_encoding_name(s), md->enc);
    coll c = {0};
    gb_set_members(s, coll_emit, &c);
    TU_CHECK(c.n == md->n, "members count");
    for (size_t i = 0; i < md->n; i++) {
        if (md->enc == GB_SET_HASHTABLE)
            TU_CHECK(contains(&c, ms(&md->e[i])), "member missing");
        else
            TU_CHECK(gb_slice_eq(ms(&c.e[i]), ms(&md->e[i])), "member %zu out of order: %.*s vs %.*s", i,
                     (int)c.e[i].len, c.e[i].m, (int)md->e[i].len, md->e[i].m);
    }
    free(c.e);
}

/* After an operation that may reorder or re-encode (SPOP's rebuild), take
 * the object's order as the model's (same members, checked). */
static void resync(const gb_set *s, mset *md)
{
    coll c = {0};
    gb_set_members(s, coll_emit, &c);
    TU_CHECK(c.n == md->n, "resync count");
    for (size_t i = 0; i < c.n; i++)
        TU_CHECK(mfind(md, ms(&c.e[i])) >= 0, "resync: unknown member");
    memcpy(md->e, c.e, c.n * sizeof *c.e);
    md->enc = gb_set_encoding(s);
    free(c.e);
}

static size_t rand_member(char *buf)
{
    switch (tu_rand(10)) {
    case 0:
        return (size_t)snprintf(buf, MLEN, "%" PRId64, (int64_t)gb_random_u64() >> tu_rand(63));
    case 1:
        return (size_t)snprintf(buf, MLEN, "%d", (int)tu_rand(70000) - 35000);
    case 2: {
        static const char *odd[] = {"01", "-0", "+1", " 1", "1 ", "0x1", "", "9223372036854775808", "-"};
        const char *o = odd[tu_rand(GB_ARRAY_LEN(odd))];
        memcpy(buf, o, strlen(o));
        return strlen(o);
    }
    case 3: {
        size_t n = 60 + (size_t)tu_rand(12);
        for (size_t i = 0; i < n; i++)
            buf[i] = (char)('a' + tu_rand(3));
        return n;
    }
    case 4:
    case 5:
        return (size_t)snprintf(buf, MLEN, "s%d", (int)tu_rand(40));
    default:
        return (size_t)snprintf(buf, MLEN, "%d", (int)tu_rand(60));
    }
}

static gb_set_enc create_enc(const gb_types_config *cfg, gb_slice first, size_t hint)
{
    int64_t v;
    if (is_int(first, &v) && hint <= cfg->set_max_intset_entries)
        return GB_SET_INTSET;
    if (hint <= cfg->set_max_listpack_entries)
        return GB_SET_LISTPACK;
    return GB_SET_HASHTABLE;
}

/* One key's lifecycle: created by SADD, deleted when empty. */
typedef struct key {
    gb_set *s;
    mset md;
} key;

static void key_sadd(key *k, const gb_types_config *cfg, size_t n, const gb_slice *m)
{
    if (!k->s) {
        k->s = gb_set_new_for(cfg, m[0], n);
        k->md.enc = create_enc(cfg, m[0], n);
        k->md.n = 0;
    }
    size_t want = 0;
    for (size_t i = 0; i < n; i++)
        want += madd(&k->md, cfg, m[i]);
    TU_CHECK(gb_set_add_many(k->s, cfg, n, m) == want, "sadd count");
}

static void key_maybe_delete(key *k)
{
    if (k->s && gb_set_card(k->s) == 0) {
        gb_set_free(k->s);
        k->s = NULL;
    }
}

static void run(const gb_types_config *cfg, size_t ops)
{
    key keys[2];
    memset(keys, 0, sizeof keys);
    char bufs[8][MLEN];
    bool seen[3] = {false, false, false};
    for (size_t op = 0; op < ops; op++) {
        key *k = &keys[tu_rand(2)];
        int what = (int)tu_rand(100);
        gb_slice m[8];
        size_t n = 1 + (size_t)tu_rand(tu_rand(10) == 0 ? 8 : 3);
        for (size_t i = 0; i < n; i++) {
            if (k->md.n && k->s && tu_rand(3) == 0) {
                const ment *e = &k->md.e[tu_rand(k->md.n)];
                memcpy(bufs[i], e->m, e->len);
                m[i] = gb_slice_make(bufs[i], e->len);
            } else {
                m[i] = gb_slice_make(bufs[i], rand_member(bufs[i]));
            }
        }
        if (what < 50) {
            key_sadd(k, cfg, n, m);
        } else if (!k->s) {
            continue;
        } else if (what < 65) {
            size_t want = 0;
            for (size_t i = 0; i < n; i++)
                want += mremove(&k->md, m[i]);
            TU_CHECK(gb_set_remove_many(k->s, n, m) == want, "srem count");
        } else if (what < 72) {
            size_t count = 1 + (size_t)tu_rand(k->md.n + 2);
            size_t want = count < k->md.n ? count : k->md.n;
            gb_set_enc before = k->md.enc;
            coll c = {0};
            TU_CHECK(gb_set_pop(k->s, cfg, count, coll_emit, &c) == want, "spop count");
            TU_CHECK(c.n == want, "spop emitted");
            for (size_t i = 0; i < c.n; i++) {
                TU_CHECK(mremove(&k->md, ms(&c.e[i])), "spop returned a non-member or a repeat");
                TU_CHECK(!gb_set_ismember(k->s, ms(&c.e[i])), "popped member still there");
            }
            free(c.e);
            if (k->md.n)
                resync(k->s, &k->md);
            /* The rebuild keeps intsets intsets and restarts the others as
             * listpacks (growing by the usual rules). */
            if (before == GB_SET_INTSET && k->md.n)
                TU_CHECK(k->md.enc == GB_SET_INTSET, "intset rebuilt as %d", k->md.enc);
        } else if (what < 80) {
            int64_t counts[] = {-3, 1, 2, (int64_t)k->md.n, (int64_t)k->md.n + 3, (int64_t)k->md.n / 2, 0};
            int64_t cnt = counts[tu_rand(GB_ARRAY_LEN(counts))];
            coll c = {0};
            gb_set_random(k->s, cnt, coll_emit, &c);
            size_t expect_n = cnt < 0 ? (size_t)-cnt : ((size_t)cnt < k->md.n ? (size_t)cnt : k->md.n);
            TU_CHECK(c.n == expect_n, "srandmember %" PRId64 ": %zu", cnt, c.n);
            for (size_t i = 0; i < c.n; i++) {
                TU_CHECK(mfind(&k->md, ms(&c.e[i])) >= 0, "srandmember non-member");
                if (cnt > 0)
                    for (size_t j = 0; j < i; j++)
                        TU_CHECK(!gb_slice_eq(ms(&c.e[i]), ms(&c.e[j])), "srandmember repeat");
            }
            free(c.e);
        } else if (what < 88) {
            key *dst = &keys[k == &keys[0] ? 1 : 0];
            if (tu_rand(5) == 0)
                dst = k;
            bool in_src = mfind(&k->md, m[0]) >= 0;
            if (dst == k) {
                TU_CHECK(gb_set_move(k->s, k->s, cfg, m[0]) == in_src, "smove to itself");
            } else if (!in_src) {
                if (dst->s)
                    TU_CHECK(!gb_set_move(k->s, dst->s, cfg, m[0]), "smove of a non-member");
            } else {
                if (!dst->s) {
                    dst->s = gb_set_new_for(cfg, m[0], 1);
                    dst->md.enc = create_enc(cfg, m[0], 1);
                    dst->md.n = 0;
                }
                TU_CHECK(gb_set_move(k->s, dst->s, cfg, m[0]), "smove");
                mremove(&k->md, m[0]);
                madd(&dst->md, cfg, m[0]);
                check(dst->s, &dst->md);
            }
        } else if (what < 94) {
            for (size_t i = 0; i < n; i++)
                TU_CHECK(gb_set_ismember(k->s, m[i]) == (mfind(&k->md, m[i]) >= 0), "ismember");
            coll c = {0};
            uint64_t cur = 0;
            do {
                cur = gb_set_scan(k->s, cur, coll_emit, &c);
            } while (cur);
            for (size_t i = 0; i < k->md.n; i++)
                TU_CHECK(contains(&c, ms(&k->md.e[i])), "sscan missed a member");
            free(c.e);
        } else {
            gb_set *c = gb_set_dup(k->s);
            check(c, &k->md);
            gb_set_free(k->s);
            k->s = c;
            if (k->md.enc == GB_SET_HASHTABLE)
                resync(k->s, &k->md);
        }
        for (int i = 0; i < 2; i++) {
            key_maybe_delete(&keys[i]); /* as the command layer deletes empty keys */
            if (keys[i].s) {
                check(keys[i].s, &keys[i].md);
                seen[keys[i].md.enc] = true;
            }
        }
    }
    for (int i = 0; i < 2; i++) {
        gb_set_free(keys[i].s);
        free(keys[i].md.e);
    }
    TU_CHECK(seen[GB_SET_HASHTABLE] || cfg->set_max_listpack_entries > 100, "never reached hashtable");
}

static gb_types_config cfg_with(size_t intset, size_t entries, size_t value)
{
    gb_types_config c;
    gb_types_config_defaults(&c);
    c.set_max_intset_entries = intset;
    c.set_max_listpack_entries = entries;
    c.set_max_listpack_value = value;
    return c;
}

static void test_model_default(void **state)
{
    (void)state;
    tu_reseed("default");
    gb_types_config c = cfg_with(512, 128, 64);
    run(&c, 3000);
}

static void test_model_tiny(void **state)
{
    (void)state;
    tu_reseed("tiny");
    size_t ints[] = {1, 2, 3, 40};
    size_t entries[] = {0, 1, 2, 3, 20};
    size_t values[] = {1, 4, 64};
    for (size_t a = 0; a < GB_ARRAY_LEN(ints); a++)
        for (size_t b = 0; b < GB_ARRAY_LEN(entries); b++)
            for (size_t v = 0; v < GB_ARRAY_LEN(values); v++) {
                gb_types_config c = cfg_with(ints[a], entries[b], values[v]);
                run(&c, 300);
            }
}

/* intset width upgrades seen through the set: int16 -> int32 -> int64. */
static void test_intset_upgrades(void **state)
{
    (void)state;
    gb_types_config cfg = cfg_with(512, 128, 64);
    gb_set *s = gb_set_new_for(&cfg, gb_slice_cstr("1"), 1);
    const char *vals[] = {
        "1", "-32768", "32767", "32768", "-2147483649", "9223372036854775807", "-9223372036854775808"};
    for (size_t i = 0; i < GB_ARRAY_LEN(vals); i++) {
        gb_set_add(s, &cfg, gb_slice_cstr(vals[i]));
        assert_int_equal(gb_set_encoding(s), GB_SET_INTSET);
        assert_true(gb_set_verify(s));
    }
    for (size_t i = 0; i < GB_ARRAY_LEN(vals); i++)
        assert_true(gb_set_ismember(s, gb_slice_cstr(vals[i])));
    assert_false(gb_set_ismember(s, gb_slice_cstr("01")));
    gb_set_add(s, &cfg, gb_slice_cstr("x"));
    assert_int_equal(gb_set_encoding(s), GB_SET_LISTPACK);
    gb_set_free(s);
}

/* ---- algebra: model driven by the objects' own member order ---- */

static void feed_union(void *ctx, gb_slice m)
{
    void **a = ctx;
    madd(a[0], a[1], m);
}

static void test_algebra(void **state)
{
    (void)state;
    tu_reseed("algebra");
    for (int round = 0; round < 500; round++) {
        gb_types_config cfg = round % 2 ? cfg_with(512, 128, 64) : cfg_with(6, 4, 3);
        size_t n = 1 + (size_t)tu_rand(4);
        gb_set *sets[4];
        char buf[MLEN];
        for (size_t i = 0; i < n; i++) {
            if (tu_rand(8) == 0) {
                sets[i] = NULL;
                continue;
            }
            if (i > 0 && tu_rand(8) == 0) {
                sets[i] = sets[i - 1];
                continue;
            }
            sets[i] = gb_set_new();
            size_t k = (size_t)tu_rand(round % 2 ? 150 : 10);
            for (size_t j = 0; j < k; j++)
                gb_set_add(sets[i], &cfg, gb_slice_make(buf, rand_member(buf)));
        }
        const gb_set *const *cs = (const gb_set *const *)sets;

        /* union / diff: replay the adds on the model in the same order */
        mset um = {.enc = GB_SET_INTSET}, dm = {.enc = GB_SET_INTSET};
        void *uctx[2] = {&um, &cfg};
        for (size_t i = 0; i < n; i++)
            if (sets[i])
                gb_set_members(sets[i], feed_union, uctx);
        coll first = {0};
        if (sets[0])
            gb_set_members(sets[0], coll_emit, &first);
        for (size_t j = 0; j < first.n; j++) {
            bool out = false;
            for (size_t i = 1; i < n && !out; i++)
                out = sets[i] && (sets[i] == sets[0] || gb_set_ismember(sets[i], ms(&first.e[j])));
            if (!out)
                madd(&dm, &cfg, ms(&first.e[j]));
        }
        gb_set *u = gb_set_union(cs, n, &cfg), *d = gb_set_diff(cs, n, &cfg);
        check(u, &um);
        check(d, &dm);
        gb_set_free(u);
        gb_set_free(d);

        /* inter: the smallest input's order (stable by size) */
        coll want = {0}, got = {0};
        bool any_null = false, hashed_first = false;
        for (size_t i = 0; i < n; i++)
            any_null |= sets[i] == NULL;
        if (!any_null) {
            size_t small = 0;
            for (size_t i = 1; i < n; i++)
                if (gb_set_card(sets[i]) < gb_set_card(sets[small]))
                    small = i;
            coll sm = {0};
            hashed_first = gb_set_encoding(sets[small]) == GB_SET_HASHTABLE;
            gb_set_members(sets[small], coll_emit, &sm);
            for (size_t j = 0; j < sm.n; j++) {
                bool all = true;
                for (size_t i = 0; i < n && all; i++)
                    all = gb_set_ismember(sets[i], ms(&sm.e[j]));
                if (all)
                    coll_emit(&want, ms(&sm.e[j]));
            }
            free(sm.e);
        }
        size_t limit = tu_rand(3) == 0 ? 1 + (size_t)tu_rand(3) : 0;
        size_t cnt = gb_set_inter(cs, n, 0, coll_emit, &got);
        TU_CHECK(cnt == want.n && got.n == want.n, "sinter size %zu vs %zu", cnt, want.n);
        /* Hashtable iteration order moves with incremental rehashing (a
         * lookup migrates buckets), so only compact inputs fix the order. */
        for (size_t j = 0; j < want.n; j++)
            TU_CHECK(hashed_first ? contains(&got, ms(&want.e[j]))
                                  : gb_slice_eq(ms(&got.e[j]), ms(&want.e[j])),
                     "sinter order at %zu", j);
        size_t lim_want = limit && want.n > limit ? limit : want.n;
        TU_CHECK(gb_set_inter(cs, n, limit, NULL, NULL) == lim_want, "sintercard limit");

        free(want.e);
        free(got.e);
        free(first.e);
        free(um.e);
        free(dm.e);
        for (size_t i = 0; i < n; i++) {
            bool dup = false;
            for (size_t j = 0; j < i; j++)
                dup |= sets[j] == sets[i];
            if (!dup)
                gb_set_free(sets[i]);
        }
    }
}

/* ---- memory per member ---- */

static void test_memory(void **state)
{
    (void)state;
    gb_types_config cfg;
    gb_types_config_defaults(&cfg);
    char buf[32];
    const size_t big_n = 1000000;
    size_t before = gb_mem_used();
    gb_set *s = gb_set_new_for(&cfg, gb_slice_cstr("member:0"), 1);
    for (size_t i = 0; i < big_n; i++)
        gb_set_add(s, &cfg, gb_slice_make(buf, (size_t)snprintf(buf, sizeof buf, "member:%zu", i)));
    size_t used = gb_mem_used() - before;
    print_message("set 1M members (\"member:N\"): %.1f bytes/member (%s)\n", (double)used / (double)big_n,
                  gb_set_encoding_name(s));
    gb_set_free(s);
    TU_CHECK(gb_mem_used() == before, "leak");

    const size_t small_n = 100000;
    gb_set **v = malloc(small_n * sizeof *v);
    before = gb_mem_used();
    for (size_t k = 0; k < small_n; k++) {
        v[k] = gb_set_new_for(&cfg, gb_slice_cstr("member:0"), 10);
        for (int i = 0; i < 10; i++)
            gb_set_add(v[k], &cfg, gb_slice_make(buf, (size_t)snprintf(buf, sizeof buf, "member:%d", i)));
    }
    used = gb_mem_used() - before;
    print_message("100k sets x 10 members: %.1f bytes/member incl. the 16-byte object header (%s)\n",
                  (double)used / (double)(small_n * 10), gb_set_encoding_name(v[0]));
    for (size_t k = 0; k < small_n; k++)
        gb_set_free(v[k]);
    free(v);
    TU_CHECK(gb_mem_used() == before, "leak");
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_default),   cmocka_unit_test(test_model_tiny),
        cmocka_unit_test(test_intset_upgrades), cmocka_unit_test(test_algebra),
        cmocka_unit_test(test_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
