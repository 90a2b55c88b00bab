/* The list type's typed key operations (engine/types/t_list.h), called
 * directly on a db: results, what they stream, and the keyspace afterwards
 * (keys created, deleted, left alone; WATCH's dirty counter; keyspace
 * hits and misses). */
#include "types_capture.h"

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

static void put_string(gb_db *db, const char *key)
{
    bool found;
    char *old;
    size_t oldlen;
    assert_int_equal(gb_string_set(db, S(key), S("x"), 0, -1, &found, &old, &oldlen), GB_R_OK);
}

static void push(gb_db *db, const char *key, const char *a, const char *b, const char *c)
{
    gb_slice v[3] = {S(a), S(b), S(c)};
    int64_t len;
    assert_int_equal(gb_list_lpush(db, S(key), GB_LIST_TAIL, 3, v, &len), GB_R_OK);
}

static void test_push(void **state)
{
    fixture *f = *state;
    gb_slice v[2] = {S("a"), S("b")};
    int64_t len = -1;
    uint64_t dirty = f->h->eng->stats.dirty;
    assert_int_equal(gb_list_lpushx(f->db, S("l"), GB_LIST_HEAD, 2, v, &len), GB_R_OK);
    assert_int_equal(len, 0);
    assert_int_equal(key_type(f->db, "l"), -1); /* PUSHX creates nothing */
    assert_int_equal(f->h->eng->stats.dirty, dirty);

    assert_int_equal(gb_list_lpush(f->db, S("l"), GB_LIST_HEAD, 2, v, &len), GB_R_OK);
    assert_int_equal(len, 2);
    assert_int_equal(key_type(f->db, "l"), GB_TYPE_LIST);
    assert_true(f->h->eng->stats.dirty > dirty);
    assert_int_equal(gb_list_lpushx(f->db, S("l"), GB_LIST_TAIL, 1, v, &len), GB_R_OK);
    assert_int_equal(len, 3);
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_list_lrange(f->db, S("l"), 0, -1, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=3 b a a"); /* LPUSH a b leaves b first */

    put_string(f->db, "s");
    assert_int_equal(gb_list_lpush(f->db, S("s"), GB_LIST_HEAD, 1, v, &len), GB_R_WRONGTYPE);
    assert_int_equal(gb_list_lpushx(f->db, S("s"), GB_LIST_HEAD, 1, v, &len), GB_R_WRONGTYPE);
    assert_int_equal(key_type(f->db, "s"), GB_TYPE_STRING);
}

static void test_pop(void **state)
{
    fixture *f = *state;
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_list_lpop(f->db, S("l"), GB_LIST_HEAD, 1, &s), GB_R_NOTFOUND);
    assert_int_equal(f->cap.len, 0);
    push(f->db, "l", "a", "b", "c");
    uint64_t dirty = f->h->eng->stats.dirty;
    assert_int_equal(gb_list_lpop(f->db, S("l"), GB_LIST_HEAD, 0, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=0"); /* count 0 changes nothing */
    assert_int_equal(f->h->eng->stats.dirty, dirty);
    s = cap_sink(&f->cap);
    assert_int_equal(gb_list_lpop(f->db, S("l"), GB_LIST_TAIL, 2, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=2 c b");
    assert_int_equal(key_type(f->db, "l"), GB_TYPE_LIST);
    s = cap_sink(&f->cap);
    assert_int_equal(gb_list_lpop(f->db, S("l"), GB_LIST_HEAD, 10, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=1 a");
    assert_int_equal(key_type(f->db, "l"), -1); /* emptied: deleted */
    put_string(f->db, "s");
    assert_int_equal(gb_list_lpop(f->db, S("s"), GB_LIST_HEAD, 1, &s), GB_R_WRONGTYPE);
}

static void test_lmpop(void **state)
{
    fixture *f = *state;
    gb_slice keys[3] = {S("none"), S("l2"), S("l3")};
    size_t which = 99;
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_list_lmpop(f->db, 3, keys, GB_LIST_HEAD, 1, &s, &which), GB_R_NOTFOUND);
    assert_int_equal(f->cap.len, 0);
    push(f->db, "l2", "a", "b", "c");
    push(f->db, "l3", "x", "y", "z");
    assert_int_equal(gb_list_lmpop(f->db, 3, keys, GB_LIST_HEAD, 2, &s, &which), GB_R_OK);
    assert_int_equal(which, 1);
    assert_string_equal(f->cap.buf, "len=2 a b");
    put_string(f->db, "none");
    s = cap_sink(&f->cap);
    assert_int_equal(gb_list_lmpop(f->db, 3, keys, GB_LIST_HEAD, 1, &s, &which), GB_R_WRONGTYPE);
    assert_int_equal(f->cap.len, 0);
    int64_t len;
    assert_int_equal(gb_list_llen(f->db, S("l2"), &len), GB_R_OK);
    assert_int_equal(len, 1);
}

static void test_lmove(void **state)
{
    fixture *f = *state;
    gb_sink s = cap_sink(&f->cap);
    bool src_found = true;
    assert_int_equal(gb_list_lmove(f->db, S("src"), S("dst"), GB_LIST_TAIL, GB_LIST_HEAD, &s, &src_found),
                     GB_R_NOTFOUND);
    assert_false(src_found);
    assert_int_equal(key_type(f->db, "dst"), -1);

    push(f->db, "src", "a", "b", "c");
    put_string(f->db, "str");
    /* a destination of another type: nothing moves */
    assert_int_equal(gb_list_lmove(f->db, S("src"), S("str"), GB_LIST_TAIL, GB_LIST_HEAD, &s, &src_found),
                     GB_R_WRONGTYPE);
    assert_true(src_found);
    assert_int_equal(f->cap.len, 0);
    /* a source of another type */
    assert_int_equal(gb_list_lmove(f->db, S("str"), S("src"), GB_LIST_TAIL, GB_LIST_HEAD, &s, &src_found),
                     GB_R_WRONGTYPE);
    assert_false(src_found);

    /* a missing destination is created */
    assert_int_equal(gb_list_lmove(f->db, S("src"), S("dst"), GB_LIST_TAIL, GB_LIST_HEAD, &s, NULL), GB_R_OK);
    assert_string_equal(f->cap.buf, "c");
    assert_int_equal(key_type(f->db, "dst"), GB_TYPE_LIST);
    /* rotation on one key */
    s = cap_sink(&f->cap);
    assert_int_equal(gb_list_lmove(f->db, S("src"), S("src"), GB_LIST_HEAD, GB_LIST_TAIL, &s, NULL), GB_R_OK);
    assert_string_equal(f->cap.buf, "a");
    /* the emptied source goes */
    assert_int_equal(gb_list_lmove(f->db, S("src"), S("dst"), GB_LIST_HEAD, GB_LIST_HEAD, &s, NULL), GB_R_OK);
    assert_int_equal(gb_list_lmove(f->db, S("src"), S("dst"), GB_LIST_HEAD, GB_LIST_HEAD, &s, NULL), GB_R_OK);
    assert_int_equal(key_type(f->db, "src"), -1);
    s = cap_sink(&f->cap);
    assert_int_equal(gb_list_lrange(f->db, S("dst"), 0, -1, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=3 a b c");
}

static void test_reads(void **state)
{
    fixture *f = *state;
    int64_t len = -1, idx = 1;
    uint64_t misses = f->h->eng->stats.keyspace_misses;
    assert_int_equal(gb_list_llen(f->db, S("l"), &len), GB_R_OK);
    assert_int_equal(len, 0);
    assert_int_equal(f->h->eng->stats.keyspace_misses, misses + 1); /* a read counts */
    char buf[GB_LIST_INT_BUF];
    gb_slice v;
    assert_int_equal(gb_list_lindex(f->db, S("l"), NULL, &v, buf), GB_R_NOTFOUND); /* the key before the index */
    push(f->db, "l", "a", "17", "a");
    assert_int_equal(gb_list_lindex(f->db, S("l"), NULL, &v, buf), GB_R_BADARG);
    assert_int_equal(gb_list_lindex(f->db, S("l"), &idx, &v, buf), GB_R_OK);
    assert_int_equal(v.len, 2);
    assert_memory_equal(v.ptr, "17", 2);
    idx = 3;
    assert_int_equal(gb_list_lindex(f->db, S("l"), &idx, &v, buf), GB_R_RANGE);
    idx = -3;
    assert_int_equal(gb_list_lindex(f->db, S("l"), &idx, &v, buf), GB_R_OK);
    assert_memory_equal(v.ptr, "a", 1);

    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_list_lrange(f->db, S("none"), 0, -1, &s), GB_R_NOTFOUND);
    assert_int_equal(gb_list_lrange(f->db, S("l"), 5, 9, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=0");
    s = cap_sink(&f->cap);
    assert_int_equal(gb_list_lrange(f->db, S("l"), -2, 10, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=2 17 a");

    size_t n;
    s = cap_sink(&f->cap);
    assert_int_equal(gb_list_lpos(f->db, S("l"), S("a"), 1, 0, 0, &s, &n), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=? #0 #2");
    assert_int_equal(n, 2);
    s = cap_sink(&f->cap);
    assert_int_equal(gb_list_lpos(f->db, S("l"), S("a"), -1, 1, 0, &s, &n), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=? #2");
    assert_int_equal(gb_list_lpos(f->db, S("none"), S("a"), 1, 0, 0, &s, &n), GB_R_NOTFOUND);

    put_string(f->db, "s");
    assert_int_equal(gb_list_llen(f->db, S("s"), &len), GB_R_WRONGTYPE);
    assert_int_equal(gb_list_lindex(f->db, S("s"), NULL, &v, buf), GB_R_WRONGTYPE);
    assert_int_equal(gb_list_lrange(f->db, S("s"), 0, -1, &s), GB_R_WRONGTYPE);
    assert_int_equal(gb_list_lpos(f->db, S("s"), S("a"), 1, 0, 0, &s, &n), GB_R_WRONGTYPE);
}

static void test_changes(void **state)
{
    fixture *f = *state;
    int64_t idx = 0, n;
    assert_int_equal(gb_list_lset(f->db, S("l"), &idx, S("v")), GB_R_NOTFOUND);
    assert_int_equal(key_type(f->db, "l"), -1);
    assert_int_equal(gb_list_ltrim(f->db, S("l"), 0, 1), GB_R_OK);
    assert_int_equal(gb_list_lrem(f->db, S("l"), 0, S("a"), &n), GB_R_OK);
    assert_int_equal(n, 0);
    assert_int_equal(gb_list_linsert(f->db, S("l"), true, S("a"), S("b"), &n), GB_R_OK);
    assert_int_equal(n, 0);
    assert_int_equal(key_type(f->db, "l"), -1);

    push(f->db, "l", "a", "b", "a");
    assert_int_equal(gb_list_lset(f->db, S("l"), NULL, S("v")), GB_R_BADARG);
    idx = 7;
    assert_int_equal(gb_list_lset(f->db, S("l"), &idx, S("v")), GB_R_RANGE);
    idx = -1;
    assert_int_equal(gb_list_lset(f->db, S("l"), &idx, S("z")), GB_R_OK);
    assert_int_equal(gb_list_linsert(f->db, S("l"), false, S("q"), S("v"), &n), GB_R_OK);
    assert_int_equal(n, -1); /* no pivot */
    assert_int_equal(gb_list_linsert(f->db, S("l"), false, S("z"), S("y"), &n), GB_R_OK);
    assert_int_equal(n, 4);
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_list_lrange(f->db, S("l"), 0, -1, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=4 a b y z");

    /* an LTRIM that removes nothing is no change */
    uint64_t dirty = f->h->eng->stats.dirty;
    assert_int_equal(gb_list_ltrim(f->db, S("l"), 0, -1), GB_R_OK);
    assert_int_equal(f->h->eng->stats.dirty, dirty);
    assert_int_equal(gb_list_ltrim(f->db, S("l"), 1, -1), GB_R_OK);
    assert_true(f->h->eng->stats.dirty > dirty);
    assert_int_equal(gb_list_lrem(f->db, S("l"), -5, S("y"), &n), GB_R_OK);
    assert_int_equal(n, 1);
    assert_int_equal(gb_list_ltrim(f->db, S("l"), 5, 1), GB_R_OK); /* empties it */
    assert_int_equal(key_type(f->db, "l"), -1);
    push(f->db, "l", "a", "a", "a");
    assert_int_equal(gb_list_lrem(f->db, S("l"), 0, S("a"), &n), GB_R_OK);
    assert_int_equal(n, 3);
    assert_int_equal(key_type(f->db, "l"), -1);

    put_string(f->db, "s");
    assert_int_equal(gb_list_lset(f->db, S("s"), NULL, S("v")), GB_R_WRONGTYPE);
    assert_int_equal(gb_list_ltrim(f->db, S("s"), 0, 1), GB_R_WRONGTYPE);
    assert_int_equal(gb_list_lrem(f->db, S("s"), 0, S("a"), &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_list_linsert(f->db, S("s"), true, S("a"), S("b"), &n), GB_R_WRONGTYPE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_push, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lmpop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lmove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
