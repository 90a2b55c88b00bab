/* The string type's typed key operations (engine/types/t_string.h), called
 * directly on a db: results, what they stream, and the keyspace afterwards
 * (values, encodings, TTLs, keys created and deleted). */
#include "types_capture.h"

#include "engine/base/mem.h"
#include "engine/base/score.h"
#include "engine/types/t_list.h"
#include "engine/types/t_string.h"

typedef struct fixture {
    harness *h;
    gb_db *db;
    capture cap;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->h = harness_new(NULL);
    f->db = &f->h->eng->dbs[0];
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    harness_free(f->h);
    free(f);
    return 0;
}

static void put_list(gb_db *db, const char *key)
{
    gb_slice v = S("x");
    int64_t len;
    assert_int_equal(gb_list_lpush(db, S(key), GB_LIST_HEAD, 1, &v, &len), GB_R_OK);
}

static void set(gb_db *db, const char *key, const char *val, int64_t expire_at)
{
    bool found;
    char *old;
    size_t oldlen;
    assert_int_equal(gb_string_set(db, S(key), S(val), 0, expire_at, &found, &old, &oldlen), GB_R_OK);
}

/* The value of key, "(nil)" when missing. */
static const char *value_of(fixture *f, const char *key)
{
    static char out[256];
    gb_slice v;
    char buf[GB_INT_BUF];
    if (gb_string_get(f->db, S(key), &v, buf) != GB_R_OK)
        return "(nil)";
    snprintf(out, sizeof out, "%.*s", (int)v.len, v.ptr);
    return out;
}

static int64_t expire_of(gb_db *db, const char *key)
{
    gb_kv *kv = gb_db_lookup_quiet(db, S(key));
    return kv ? gb_db_expire_of(kv) : -2;
}

static void test_set_get(void **state)
{
    fixture *f = *state;
    bool found = true;
    char *old = NULL;
    size_t oldlen;
    assert_int_equal(gb_string_set(f->db, S("k"), S("v1"), GB_SET_XX, -1, &found, &old, &oldlen), GB_R_SKIPPED);
    assert_int_equal(key_type(f->db, "k"), -1);
    assert_int_equal(gb_string_set(f->db, S("k"), S("v1"), GB_SET_GET, -1, &found, &old, &oldlen), GB_R_OK);
    assert_false(found);
    assert_int_equal(gb_string_set(f->db, S("k"), S("v2"), GB_SET_NX | GB_SET_GET, -1, &found, &old, &oldlen),
                     GB_R_SKIPPED);
    assert_true(found);
    assert_int_equal(oldlen, 2);
    assert_memory_equal(old, "v1", 2);
    gb_free(old);
    assert_string_equal(value_of(f, "k"), "v1");
    put_list(f->db, "l");
    assert_int_equal(gb_string_set(f->db, S("l"), S("v"), GB_SET_GET, -1, &found, &old, &oldlen), GB_R_WRONGTYPE);
    gb_slice v;
    char buf[GB_INT_BUF];
    assert_int_equal(gb_string_get(f->db, S("l"), &v, buf), GB_R_WRONGTYPE);
    assert_int_equal(gb_string_get(f->db, S("none"), &v, buf), GB_R_NOTFOUND);
    set(f->db, "l", "now a string", -1); /* SET replaces any type */
    assert_int_equal(key_type(f->db, "l"), GB_TYPE_STRING);
}

static void test_numbers(void **state)
{
    fixture *f = *state;
    int64_t n;
    assert_int_equal(gb_string_incrby(f->db, S("n"), 5, &n), GB_R_OK);
    assert_int_equal(n, 5);
    assert_int_equal(gb_string_incrby(f->db, S("n"), INT64_MAX, &n), GB_R_OVERFLOW);
    set(f->db, "s", "abc", -1);
    assert_int_equal(gb_string_incrby(f->db, S("s"), 1, &n), GB_R_NOTINT);
    char buf[GB_LONG_DOUBLE_BUF];
    size_t len;
    assert_int_equal(gb_string_incrbyfloat(f->db, S("n"), S("0.5"), buf, &len), GB_R_OK);
    assert_int_equal(len, 3);
    assert_memory_equal(buf, "5.5", 3);
    assert_int_equal(gb_string_incrbyfloat(f->db, S("s"), S("1"), buf, &len), GB_R_NOTFLOAT);
    assert_int_equal(gb_string_incrbyfloat(f->db, S("n"), S("x"), buf, &len), GB_R_NOTFLOAT);
    put_list(f->db, "l");
    assert_int_equal(gb_string_incrby(f->db, S("l"), 1, &n), GB_R_WRONGTYPE);
}

static void test_getdel_getex(void **state)
{
    fixture *f = *state;
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_string_getdel(f->db, S("k"), &s), GB_R_NOTFOUND);
    set(f->db, "k", "v", -1);
    assert_int_equal(gb_string_getdel(f->db, S("k"), &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "v");
    assert_int_equal(key_type(f->db, "k"), -1);

    gb_expiry_change ch;
    int64_t when = -1;
    s = cap_sink(&f->cap);
    assert_int_equal(gb_string_getex(f->db, S("k"), NULL, false, &s, &ch), GB_R_NOTFOUND); /* key first */
    set(f->db, "k", "v", -1);
    assert_int_equal(gb_string_getex(f->db, S("k"), NULL, false, &s, &ch), GB_R_BADARG);
    assert_int_equal(f->cap.len, 0);
    assert_int_equal(gb_string_getex(f->db, S("k"), &when, true, &s, &ch), GB_R_OK);
    assert_int_equal(ch, GB_EXPIRY_NONE); /* PERSIST of a key without TTL */
    int64_t later = f->h->eng->now_ms + 100000;
    s = cap_sink(&f->cap);
    assert_int_equal(gb_string_getex(f->db, S("k"), &later, false, &s, &ch), GB_R_OK);
    assert_string_equal(f->cap.buf, "v");
    assert_int_equal(ch, GB_EXPIRY_SET);
    assert_int_equal(expire_of(f->db, "k"), later);
    assert_int_equal(gb_string_getex(f->db, S("k"), &when, true, &s, &ch), GB_R_OK);
    assert_int_equal(ch, GB_EXPIRY_PERSISTED);
    assert_int_equal(expire_of(f->db, "k"), -1);
    int64_t past = 1;
    assert_int_equal(gb_string_getex(f->db, S("k"), &past, false, &s, &ch), GB_R_OK);
    assert_int_equal(ch, GB_EXPIRY_DELETED);
    assert_int_equal(key_type(f->db, "k"), -1);
    put_list(f->db, "l");
    assert_int_equal(gb_string_getex(f->db, S("l"), NULL, false, &s, &ch), GB_R_WRONGTYPE);
    assert_int_equal(gb_string_getdel(f->db, S("l"), &s), GB_R_WRONGTYPE);
    assert_int_equal(key_type(f->db, "l"), GB_TYPE_LIST);
}

static void test_multi(void **state)
{
    fixture *f = *state;
    gb_slice kv[4] = {S("a"), S("1"), S("b"), S("2")};
    bool done;
    assert_int_equal(gb_string_mset(f->db, 2, kv, true, &done), GB_R_OK);
    assert_true(done);
    gb_slice kv2[4] = {S("c"), S("3"), S("a"), S("x")};
    assert_int_equal(gb_string_mset(f->db, 2, kv2, true, &done), GB_R_OK);
    assert_false(done); /* a exists: nothing set */
    assert_int_equal(key_type(f->db, "c"), -1);
    set(f->db, "t", "old", f->h->eng->now_ms + 100000);
    gb_slice kv3[2] = {S("t"), S("new")};
    assert_int_equal(gb_string_mset(f->db, 1, kv3, false, &done), GB_R_OK);
    assert_true(done);
    assert_int_equal(expire_of(f->db, "t"), -1); /* MSET clears the TTL */
    put_list(f->db, "l");
    gb_slice keys[4] = {S("a"), S("none"), S("l"), S("t")};
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_string_mget(f->db, 4, keys, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=4 1 nil nil new");
}

static void test_ranges(void **state)
{
    fixture *f = *state;
    gb_slice v;
    char buf[GB_INT_BUF];
    assert_int_equal(gb_string_getrange(f->db, S("k"), 0, -1, &v, buf), GB_R_NOTFOUND);
    assert_int_equal(v.len, 0);
    set(f->db, "k", "Hello World", -1);
    assert_int_equal(gb_string_getrange(f->db, S("k"), -5, -1, &v, buf), GB_R_OK);
    assert_int_equal(v.len, 5);
    assert_memory_equal(v.ptr, "World", 5);
    assert_int_equal(gb_string_getrange(f->db, S("k"), 5, 2, &v, buf), GB_R_OK);
    assert_int_equal(v.len, 0);
    assert_int_equal(gb_string_getrange(f->db, S("k"), -1, -5, &v, buf), GB_R_OK);
    assert_int_equal(v.len, 0);
    set(f->db, "i", "12345", -1); /* the integer encoding: rendered into buf */
    assert_int_equal(gb_string_getrange(f->db, S("i"), 1, 2, &v, buf), GB_R_OK);
    assert_int_equal(v.len, 2);
    assert_memory_equal(v.ptr, "23", 2);

    size_t n;
    assert_int_equal(gb_string_setrange(f->db, S("new"), 0, S(""), 100, &n), GB_R_OK);
    assert_int_equal(n, 0);
    assert_int_equal(key_type(f->db, "new"), -1); /* nothing written: no key */
    assert_int_equal(gb_string_setrange(f->db, S("new"), -1, S("x"), 100, &n), GB_R_RANGE);
    assert_int_equal(gb_string_setrange(f->db, S("new"), 200, S("x"), 100, &n), GB_R_TOOBIG);
    assert_int_equal(gb_string_setrange(f->db, S("new"), 2, S("x"), 100, &n), GB_R_OK);
    assert_int_equal(n, 3);
    assert_int_equal(gb_string_append(f->db, S("new"), S("yz"), 100, &n), GB_R_OK);
    assert_int_equal(n, 5);
    assert_int_equal(gb_string_strlen(f->db, S("new"), &n), GB_R_OK);
    assert_int_equal(n, 5);
    assert_int_equal(gb_string_append(f->db, S("new"), S("12345678"), 10, &n), GB_R_TOOBIG);
    put_list(f->db, "l");
    assert_int_equal(gb_string_getrange(f->db, S("l"), 0, 1, &v, buf), GB_R_WRONGTYPE);
    assert_int_equal(gb_string_append(f->db, S("l"), S("x"), 100, &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_string_strlen(f->db, S("l"), &n), GB_R_WRONGTYPE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_set_get, setup, teardown),
        cmocka_unit_test_setup_teardown(test_numbers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_getdel_getex, setup, teardown),
        cmocka_unit_test_setup_teardown(test_multi, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ranges, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
