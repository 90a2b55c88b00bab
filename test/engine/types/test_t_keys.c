/* The keyspace's typed operations (engine/types/t_keys.h), called directly
 * on a db: results, what they stream, and the keyspace afterwards. */
#include "types_capture.h"

#include "engine/types/t_keys.h"
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

static void set(gb_db *db, const char *key, const char *val, int64_t expire_at)
{
    bool found;
    char *old;
    size_t oldlen;
    assert_int_equal(gb_string_set(db, S(key), S(val), 0, expire_at, &found, &old, &oldlen), GB_R_OK);
}

static void put_list(gb_db *db, const char *key)
{
    gb_slice v = S("x");
    int64_t len;
    assert_int_equal(gb_list_lpush(db, S(key), GB_LIST_HEAD, 1, &v, &len), GB_R_OK);
}

static int64_t expire_of(gb_db *db, const char *key)
{
    gb_kv *kv = gb_db_lookup_quiet(db, S(key));
    return kv ? gb_db_expire_of(kv) : -2;
}

static void test_del_exists_type(void **state)
{
    fixture *f = *state;
    set(f->db, "a", "1", -1);
    put_list(f->db, "l");
    gb_slice keys[4] = {S("a"), S("none"), S("l"), S("a")};
    int64_t n;
    uint64_t misses = f->h->eng->stats.keyspace_misses;
    assert_int_equal(gb_keys_exists(f->db, 4, keys, &n), GB_R_OK);
    assert_int_equal(n, 3); /* a key named twice counts twice */
    assert_int_equal(f->h->eng->stats.keyspace_misses, misses + 1);
    const char *name;
    assert_int_equal(gb_keys_type(f->db, S("l"), &name), GB_R_OK);
    assert_string_equal(name, "list");
    assert_int_equal(gb_keys_type(f->db, S("none"), &name), GB_R_NOTFOUND);
    assert_string_equal(name, "none");
    assert_int_equal(gb_keys_del(f->db, 4, keys, false, &n), GB_R_OK);
    assert_int_equal(n, 2);
    assert_int_equal(key_type(f->db, "a"), -1);
    assert_int_equal(key_type(f->db, "l"), -1);
}

static void test_iteration(void **state)
{
    fixture *f = *state;
    set(f->db, "k1", "v", -1);
    set(f->db, "k2", "v", -1);
    put_list(f->db, "list");
    set(f->db, "gone", "v", 1); /* expired, not yet reclaimed */
    size_t n;
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_keys_keys(f->db, S("k*"), &s, &n), GB_R_OK);
    assert_int_equal(n, 2);
    assert_int_equal(f->cap.lens, 1);
    s = cap_sink(&f->cap);
    assert_int_equal(gb_keys_keys(f->db, S("*"), &s, &n), GB_R_OK);
    assert_int_equal(n, 3); /* the expired key is skipped */

    gb_keys_scan_opts all = {S(""), false, 100, -1};
    uint64_t next = 9;
    s = cap_sink(&f->cap);
    assert_int_equal(gb_keys_scan(f->db, 0, &all, &s, &next, &n), GB_R_OK);
    assert_int_equal(next, 0);
    assert_int_equal(n, 3);
    gb_keys_scan_opts lists = {S(""), false, 100, GB_TYPE_LIST};
    s = cap_sink(&f->cap);
    assert_int_equal(gb_keys_scan(f->db, 0, &lists, &s, &next, &n), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=? list");
    gb_keys_scan_opts nothing = {S(""), false, 100, GB_TYPE_COUNT};
    assert_int_equal(gb_keys_scan(f->db, 0, &nothing, &s, &next, &n), GB_R_OK);
    assert_int_equal(n, 0);
    gb_keys_scan_opts k2 = {S("*2"), true, 100, -1};
    s = cap_sink(&f->cap);
    assert_int_equal(gb_keys_scan(f->db, 0, &k2, &s, &next, &n), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=? k2");

    gb_slice key;
    assert_int_equal(gb_keys_randomkey(f->db, &key), GB_R_OK);
    assert_true(key.len >= 2);
    gb_keys_flushdb(f->db, false);
    assert_int_equal(gb_db_size(f->db), 0);
    assert_int_equal(gb_keys_randomkey(f->db, &key), GB_R_NOTFOUND);
}

static void test_rename_move_copy(void **state)
{
    fixture *f = *state;
    gb_db *db1 = &f->h->eng->dbs[1];
    int64_t n;
    assert_int_equal(gb_keys_rename(f->db, S("a"), S("b"), false, &n), GB_R_NOTFOUND);
    int64_t later = f->h->eng->now_ms + 100000;
    set(f->db, "a", "1", later);
    assert_int_equal(gb_keys_rename(f->db, S("a"), S("a"), true, &n), GB_R_OK);
    assert_int_equal(n, 0);
    put_list(f->db, "l");
    assert_int_equal(gb_keys_rename(f->db, S("a"), S("l"), true, &n), GB_R_OK);
    assert_int_equal(n, 0); /* RENAMENX onto an existing key */
    assert_int_equal(gb_keys_rename(f->db, S("a"), S("l"), false, &n), GB_R_OK);
    assert_int_equal(n, 1);
    assert_int_equal(key_type(f->db, "a"), -1);
    assert_int_equal(key_type(f->db, "l"), GB_TYPE_STRING);
    assert_int_equal(expire_of(f->db, "l"), later); /* the TTL goes along */

    assert_int_equal(gb_keys_move(f->db, S("none"), db1, &n), GB_R_OK);
    assert_int_equal(n, 0);
    set(db1, "l", "there", -1);
    assert_int_equal(gb_keys_move(f->db, S("l"), db1, &n), GB_R_OK);
    assert_int_equal(n, 0); /* exists in the destination */
    set(f->db, "m", "v", -1);
    assert_int_equal(gb_keys_move(f->db, S("m"), db1, &n), GB_R_OK);
    assert_int_equal(n, 1);
    assert_int_equal(key_type(f->db, "m"), -1);
    assert_int_equal(key_type(db1, "m"), GB_TYPE_STRING);

    assert_int_equal(gb_keys_copy(f->db, S("none"), f->db, S("c"), false, &n), GB_R_OK);
    assert_int_equal(n, 0);
    assert_int_equal(gb_keys_copy(f->db, S("l"), db1, S("m"), false, &n), GB_R_OK);
    assert_int_equal(n, 0); /* exists, no REPLACE */
    assert_int_equal(gb_keys_copy(f->db, S("l"), db1, S("m"), true, &n), GB_R_OK);
    assert_int_equal(n, 1);
    assert_int_equal(expire_of(db1, "m"), later);
    assert_int_equal(key_type(f->db, "l"), GB_TYPE_STRING); /* the source stays */
}

static void test_expiry(void **state)
{
    fixture *f = *state;
    gb_expiry_change ch;
    int64_t now = f->h->eng->now_ms, at, left, n;
    assert_int_equal(gb_keys_expire(f->db, S("k"), now + 1000, 0, &ch), GB_R_OK);
    assert_int_equal(ch, GB_EXPIRY_NONE); /* missing */
    assert_int_equal(gb_keys_ttl(f->db, S("k"), &at, &left), GB_R_NOTFOUND);
    set(f->db, "k", "v", -1);
    assert_int_equal(gb_keys_ttl(f->db, S("k"), &at, &left), GB_R_OK);
    assert_int_equal(at, -1);
    assert_int_equal(gb_keys_expire(f->db, S("k"), now + 1000, GB_EXPIRE_XX, &ch), GB_R_OK);
    assert_int_equal(ch, GB_EXPIRY_NONE);
    assert_int_equal(gb_keys_expire(f->db, S("k"), now + 1000, GB_EXPIRE_GT, &ch), GB_R_OK);
    assert_int_equal(ch, GB_EXPIRY_NONE); /* no TTL is infinite */
    assert_int_equal(gb_keys_expire(f->db, S("k"), now + 1000, GB_EXPIRE_NX, &ch), GB_R_OK);
    assert_int_equal(ch, GB_EXPIRY_SET);
    assert_int_equal(gb_keys_ttl(f->db, S("k"), &at, &left), GB_R_OK);
    assert_int_equal(at, now + 1000);
    assert_int_equal(left, 1000);
    assert_int_equal(gb_keys_expire(f->db, S("k"), now + 2000, GB_EXPIRE_LT, &ch), GB_R_OK);
    assert_int_equal(ch, GB_EXPIRY_NONE);
    assert_int_equal(gb_keys_persist(f->db, S("k"), &n), GB_R_OK);
    assert_int_equal(n, 1);
    assert_int_equal(gb_keys_persist(f->db, S("k"), &n), GB_R_OK);
    assert_int_equal(n, 0);
    assert_int_equal(gb_keys_expire(f->db, S("k"), now, 0, &ch), GB_R_OK);
    assert_int_equal(ch, GB_EXPIRY_DELETED); /* a time not in the future */
    assert_int_equal(key_type(f->db, "k"), -1);
}

static void test_object_and_dbs(void **state)
{
    fixture *f = *state;
    gb_object_info info;
    assert_int_equal(gb_keys_object(f->db, S("k"), &info), GB_R_NOTFOUND);
    set(f->db, "k", "123", -1);
    assert_int_equal(gb_keys_object(f->db, S("k"), &info), GB_R_OK);
    assert_string_equal(info.encoding, "int");
    set(f->db, "k", "abc", -1);
    assert_int_equal(gb_keys_object(f->db, S("k"), &info), GB_R_OK);
    assert_string_equal(info.encoding, "embstr");
    put_list(f->db, "l");
    assert_int_equal(gb_keys_object(f->db, S("l"), &info), GB_R_OK);
    assert_string_equal(info.encoding, "quicklist"); /* Redis 7.0's word for any list */
    assert_string_equal(info.representation, "listpack");
    assert_int_equal(gb_keys_object(f->db, S("k"), &info), GB_R_OK);
    assert_null(info.representation);

    gb_db *db1 = &f->h->eng->dbs[1];
    uint64_t dirty = f->h->eng->stats.dirty;
    assert_int_equal(gb_keys_swapdb(f->db, f->db), GB_R_OK);
    assert_int_equal(f->h->eng->stats.dirty, dirty + 1); /* one db: no change, counted (and logged) as Redis does */
    assert_int_equal(gb_keys_swapdb(f->db, db1), GB_R_OK);
    assert_int_equal(gb_db_size(f->db), 0);
    assert_int_equal(gb_db_size(db1), 2);
    assert_true(f->h->eng->stats.dirty > dirty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_del_exists_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_iteration, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rename_move_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expiry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_object_and_dbs, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
