/* The hash type's typed key operations (engine/types/t_hash.h) and the
 * collection scan (engine/types/tobj.h's gb_tobj_scan), called directly on
 * a db: results, what they stream, and the keyspace afterwards. */
#include "types_capture.h"

#include <float.h>


#include "engine/base/score.h" /* GB_LONG_DOUBLE_BUF */
#include "engine/types/t_hash.h"
#include "engine/types/t_list.h"

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

static void hset1(gb_db *db, const char *key, const char *field, const char *value)
{
    gb_slice fs = S(field), vs = S(value);
    int64_t added;
    assert_int_equal(gb_hash_hset(db, S(key), 1, &fs, &vs, &added), GB_R_OK);
}

static void test_writes(void **state)
{
    fixture *f = *state;
    gb_slice fs[2] = {S("f"), S("g")}, vs[2] = {S("1"), S("two")};
    int64_t n = -1;
    assert_int_equal(gb_hash_hset(f->db, S("h"), 0, fs, vs, &n), GB_R_OK); /* nothing: no key */
    assert_int_equal(key_type(f->db, "h"), -1);
    assert_int_equal(gb_hash_hset(f->db, S("h"), 2, fs, vs, &n), GB_R_OK);
    assert_int_equal(n, 2);
    assert_int_equal(key_type(f->db, "h"), GB_TYPE_HASH);
    assert_int_equal(gb_hash_hsetnx(f->db, S("h"), S("f"), S("9"), &n), GB_R_OK);
    assert_int_equal(n, 0);
    assert_int_equal(gb_hash_hsetnx(f->db, S("h2"), S("f"), S("9"), &n), GB_R_OK);
    assert_int_equal(n, 1);
    assert_int_equal(key_type(f->db, "h2"), GB_TYPE_HASH);

    assert_int_equal(gb_hash_hincrby(f->db, S("h"), S("f"), 41, &n), GB_R_OK);
    assert_int_equal(n, 42);
    assert_int_equal(gb_hash_hincrby(f->db, S("h"), S("g"), 1, &n), GB_R_NOTINT);
    assert_int_equal(gb_hash_hincrby(f->db, S("h"), S("f"), INT64_MAX, &n), GB_R_OVERFLOW);
    assert_int_equal(gb_hash_hincrby(f->db, S("new"), S("f"), 5, &n), GB_R_OK);
    assert_int_equal(key_type(f->db, "new"), GB_TYPE_HASH);

    char buf[GB_LONG_DOUBLE_BUF];
    size_t len;
    assert_int_equal(gb_hash_hincrbyfloat(f->db, S("h"), S("f"), 0.5L, buf, &len), GB_R_OK);
    assert_int_equal(len, 4);
    assert_memory_equal(buf, "42.5", 4);
    assert_int_equal(gb_hash_hincrbyfloat(f->db, S("h"), S("g"), 1, buf, &len), GB_R_NOTFLOAT);
    /* a sum past the largest long double (whatever its width: 80 bits on
     * x86, 64 on arm64 macOS) is Redis's "would produce NaN or Infinity" */
    char big[64];
    snprintf(big, sizeof big, "%.30Lg", LDBL_MAX * 0.75L);
    hset1(f->db, "h", "big", big);
    assert_int_equal(gb_hash_hincrbyfloat(f->db, S("h"), S("big"), LDBL_MAX * 0.75L, buf, &len), GB_R_NAN);

    gb_slice del[3] = {S("f"), S("nope"), S("g")};
    assert_int_equal(gb_hash_hdel(f->db, S("h"), 3, del, &n), GB_R_OK);
    assert_int_equal(n, 2);
    assert_int_equal(gb_hash_hdel(f->db, S("h"), 1, del, &n), GB_R_OK);
    assert_int_equal(n, 0);
    assert_int_equal(key_type(f->db, "h"), GB_TYPE_HASH);
    gb_slice last = S("big");
    assert_int_equal(gb_hash_hdel(f->db, S("h"), 1, &last, &n), GB_R_OK);
    assert_int_equal(n, 1);
    assert_int_equal(key_type(f->db, "h"), -1); /* emptied: deleted */
    assert_int_equal(gb_hash_hdel(f->db, S("h"), 1, &last, &n), GB_R_OK);
    assert_int_equal(n, 0);

    put_list(f->db, "l");
    assert_int_equal(gb_hash_hset(f->db, S("l"), 1, fs, vs, &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_hash_hset(f->db, S("l"), 0, fs, vs, &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_hash_hsetnx(f->db, S("l"), S("f"), S("v"), &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_hash_hdel(f->db, S("l"), 1, fs, &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_hash_hincrby(f->db, S("l"), S("f"), 1, &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_hash_hincrbyfloat(f->db, S("l"), S("f"), 1, buf, &len), GB_R_WRONGTYPE);
    assert_int_equal(key_type(f->db, "l"), GB_TYPE_LIST);
}

/* A failed increment changes nothing, for WATCH either. */
static void test_failed_increment(void **state)
{
    fixture *f = *state;
    int64_t n;
    assert_int_equal(gb_hash_hincrby(f->db, S("k"), S("f"), INT64_MAX, &n), GB_R_OK);
    uint64_t dirty = f->h->eng->stats.dirty;
    assert_int_equal(gb_hash_hincrby(f->db, S("k"), S("f"), 1, &n), GB_R_OVERFLOW);
    assert_int_equal(f->h->eng->stats.dirty, dirty);
    char buf[GB_HASH_VALUE_BUF];
    gb_slice v;
    assert_int_equal(gb_hash_hget(f->db, S("k"), S("f"), &v, buf), GB_R_OK);
    assert_int_equal(v.len, 19);
    assert_memory_equal(v.ptr, "9223372036854775807", 19);
}

static void test_reads(void **state)
{
    fixture *f = *state;
    char buf[GB_HASH_VALUE_BUF];
    gb_slice v;
    int64_t n = -1;
    assert_int_equal(gb_hash_hget(f->db, S("h"), S("f"), &v, buf), GB_R_NOTFOUND);
    assert_int_equal(gb_hash_hlen(f->db, S("h"), &n), GB_R_OK);
    assert_int_equal(n, 0);
    hset1(f->db, "h", "f", "12");
    hset1(f->db, "h", "g", "hello");
    assert_int_equal(gb_hash_hget(f->db, S("h"), S("f"), &v, buf), GB_R_OK);
    assert_int_equal(v.len, 2);
    assert_memory_equal(v.ptr, "12", 2);
    assert_int_equal(gb_hash_hget(f->db, S("h"), S("x"), &v, buf), GB_R_NOTFOUND);
    assert_int_equal(gb_hash_hlen(f->db, S("h"), &n), GB_R_OK);
    assert_int_equal(n, 2);
    assert_int_equal(gb_hash_hexists(f->db, S("h"), S("g"), &n), GB_R_OK);
    assert_int_equal(n, 1);
    assert_int_equal(gb_hash_hexists(f->db, S("h"), S("x"), &n), GB_R_OK);
    assert_int_equal(n, 0);
    assert_int_equal(gb_hash_hstrlen(f->db, S("h"), S("g"), &n), GB_R_OK);
    assert_int_equal(n, 5);

    gb_slice fields[3] = {S("g"), S("x"), S("f")};
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_hash_hmget(f->db, S("h"), 3, fields, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=3 hello nil 12");
    s = cap_sink(&f->cap);
    assert_int_equal(gb_hash_hmget(f->db, S("none"), 2, fields, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=2 nil nil");
    s = cap_sink(&f->cap);
    assert_int_equal(gb_hash_hgetall(f->db, S("h"), &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=2 f=12 g=hello");
    assert_int_equal(gb_hash_hgetall(f->db, S("none"), &s), GB_R_NOTFOUND);

    s = cap_sink(&f->cap);
    assert_int_equal(gb_hash_hrandfield(f->db, S("h"), 5, &s), GB_R_OK);
    assert_int_equal(f->cap.lens, 1);
    assert_int_equal(f->cap.elems, 2); /* min(count, fields), distinct */
    s = cap_sink(&f->cap);
    assert_int_equal(gb_hash_hrandfield(f->db, S("h"), -5, &s), GB_R_OK);
    assert_int_equal(f->cap.elems, 5); /* repeats allowed */
    s = cap_sink(&f->cap);
    assert_int_equal(gb_hash_hrandfield(f->db, S("h"), 0, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=0");
    assert_int_equal(gb_hash_hrandfield(f->db, S("none"), 1, &s), GB_R_NOTFOUND);

    put_list(f->db, "l");
    uint64_t hits = f->h->eng->stats.keyspace_hits;
    assert_int_equal(gb_hash_hget(f->db, S("l"), S("f"), &v, buf), GB_R_WRONGTYPE);
    assert_int_equal(f->h->eng->stats.keyspace_hits, hits + 1); /* a read: counted */
    assert_int_equal(gb_hash_hmget(f->db, S("l"), 1, fields, &s), GB_R_WRONGTYPE);
    assert_int_equal(gb_hash_hlen(f->db, S("l"), &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_hash_hexists(f->db, S("l"), S("f"), &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_hash_hstrlen(f->db, S("l"), S("f"), &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_hash_hgetall(f->db, S("l"), &s), GB_R_WRONGTYPE);
    assert_int_equal(gb_hash_hrandfield(f->db, S("l"), 1, &s), GB_R_WRONGTYPE);
}

static void test_scan(void **state)
{
    fixture *f = *state;
    hset1(f->db, "h", "a1", "x");
    hset1(f->db, "h", "b1", "y");
    hset1(f->db, "h", "a2", "z");
    gb_scan_opts all = {S(""), false, 10}, as = {S("a*"), true, 10};
    uint64_t next = 7;
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_tobj_scan(f->db, S("none"), GB_TYPE_HASH, 0, NULL, &s, &next), GB_R_NOTFOUND);
    assert_int_equal(next, 0);
    assert_int_equal(gb_tobj_scan(f->db, S("h"), GB_TYPE_HASH, 0, NULL, &s, &next), GB_R_BADARG);
    assert_int_equal(gb_tobj_scan(f->db, S("h"), GB_TYPE_SET, 0, &all, &s, &next), GB_R_WRONGTYPE);
    assert_int_equal(f->cap.len, 0);
    assert_int_equal(gb_tobj_scan(f->db, S("h"), GB_TYPE_HASH, 0, &all, &s, &next), GB_R_OK);
    assert_string_equal(f->cap.buf, "a1=x b1=y a2=z");
    assert_int_equal(next, 0);
    s = cap_sink(&f->cap);
    assert_int_equal(gb_tobj_scan(f->db, S("h"), GB_TYPE_HASH, 0, &as, &s, &next), GB_R_OK);
    assert_string_equal(f->cap.buf, "a1=x a2=z");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_increment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
