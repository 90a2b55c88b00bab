/* The set type's typed key operations (engine/types/t_set.h), called
 * directly on a db: results, what they stream, and the keyspace afterwards. */
#include "types_capture.h"

#include "engine/types/t_list.h"
#include "engine/types/t_set.h"

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

static void sadd3(gb_db *db, const char *key, const char *a, const char *b, const char *c)
{
    gb_slice m[3] = {S(a), S(b), S(c)};
    int64_t n;
    assert_int_equal(gb_set_sadd(db, S(key), 3, m, &n), GB_R_OK);
}

static void test_add_remove(void **state)
{
    fixture *f = *state;
    gb_slice m[3] = {S("1"), S("2"), S("1")};
    int64_t n = -1;
    assert_int_equal(gb_set_sadd(f->db, S("s"), 0, m, &n), GB_R_OK); /* nothing: no key */
    assert_int_equal(key_type(f->db, "s"), -1);
    assert_int_equal(gb_set_sadd(f->db, S("s"), 3, m, &n), GB_R_OK);
    assert_int_equal(n, 2);
    assert_int_equal(key_type(f->db, "s"), GB_TYPE_SET);
    uint64_t dirty = f->h->eng->stats.dirty;
    assert_int_equal(gb_set_sadd(f->db, S("s"), 1, m, &n), GB_R_OK);
    assert_int_equal(n, 0);
    assert_int_equal(f->h->eng->stats.dirty, dirty); /* nothing new: no change */
    assert_int_equal(gb_set_scard(f->db, S("s"), &n), GB_R_OK);
    assert_int_equal(n, 2);
    gb_slice gone[2] = {S("1"), S("9")};
    assert_int_equal(gb_set_srem(f->db, S("s"), 2, gone, &n), GB_R_OK);
    assert_int_equal(n, 1);
    assert_int_equal(gb_set_srem(f->db, S("none"), 2, gone, &n), GB_R_OK);
    assert_int_equal(n, 0);
    assert_int_equal(gb_set_srem(f->db, S("s"), 3, m, &n), GB_R_OK);
    assert_int_equal(n, 1);
    assert_int_equal(key_type(f->db, "s"), -1); /* emptied: deleted */

    put_list(f->db, "l");
    assert_int_equal(gb_set_sadd(f->db, S("l"), 1, m, &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_set_sadd(f->db, S("l"), 0, m, &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_set_srem(f->db, S("l"), 1, m, &n), GB_R_WRONGTYPE);
    assert_int_equal(key_type(f->db, "l"), GB_TYPE_LIST);
}

static void test_smove(void **state)
{
    fixture *f = *state;
    int64_t moved = -1;
    put_list(f->db, "l");
    /* a missing source answers 0 before the destination's type is looked at */
    assert_int_equal(gb_set_smove(f->db, S("src"), S("l"), S("a"), &moved, NULL), GB_R_OK);
    assert_int_equal(moved, 0);
    sadd3(f->db, "src", "a", "b", "c");
    assert_int_equal(gb_set_smove(f->db, S("src"), S("l"), S("a"), &moved, NULL), GB_R_WRONGTYPE);
    assert_int_equal(gb_set_smove(f->db, S("l"), S("src"), S("a"), &moved, NULL), GB_R_WRONGTYPE);
    assert_int_equal(gb_set_smove(f->db, S("src"), S("src"), S("a"), &moved, NULL), GB_R_OK);
    assert_int_equal(moved, 1); /* one key: membership */
    assert_int_equal(gb_set_smove(f->db, S("src"), S("dst"), S("z"), &moved, NULL), GB_R_OK);
    assert_int_equal(moved, 0);
    assert_int_equal(key_type(f->db, "dst"), -1);
    assert_int_equal(gb_set_smove(f->db, S("src"), S("dst"), S("a"), &moved, NULL), GB_R_OK);
    assert_int_equal(moved, 1);
    assert_int_equal(key_type(f->db, "dst"), GB_TYPE_SET); /* created */
    assert_int_equal(gb_set_smove(f->db, S("src"), S("dst"), S("b"), &moved, NULL), GB_R_OK);
    assert_int_equal(gb_set_smove(f->db, S("src"), S("dst"), S("c"), &moved, NULL), GB_R_OK);
    assert_int_equal(key_type(f->db, "src"), -1); /* emptied: deleted */
    int64_t n;
    assert_int_equal(gb_set_scard(f->db, S("dst"), &n), GB_R_OK);
    assert_int_equal(n, 3);
}

static void test_spop(void **state)
{
    fixture *f = *state;
    size_t card = 99;
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_set_spop(f->db, S("s"), 1, &s, &card), GB_R_NOTFOUND);
    assert_int_equal(card, 0);
    sadd3(f->db, "s", "a", "b", "c");
    uint64_t dirty = f->h->eng->stats.dirty;
    assert_int_equal(gb_set_spop(f->db, S("s"), 0, &s, &card), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=0");
    assert_int_equal(card, 3);
    assert_int_equal(f->h->eng->stats.dirty, dirty); /* count 0 changes nothing */
    s = cap_sink(&f->cap);
    assert_int_equal(gb_set_spop(f->db, S("s"), 2, &s, &card), GB_R_OK);
    assert_int_equal(f->cap.elems, 2);
    assert_int_equal(card, 3);
    int64_t n;
    assert_int_equal(gb_set_scard(f->db, S("s"), &n), GB_R_OK);
    assert_int_equal(n, 1);
    s = cap_sink(&f->cap);
    assert_int_equal(gb_set_spop(f->db, S("s"), 5, &s, &card), GB_R_OK);
    assert_int_equal(f->cap.elems, 1);
    assert_int_equal(key_type(f->db, "s"), -1);
    put_list(f->db, "l");
    assert_int_equal(gb_set_spop(f->db, S("l"), 1, &s, &card), GB_R_WRONGTYPE);
}

static void test_reads(void **state)
{
    fixture *f = *state;
    int64_t n = -1;
    assert_int_equal(gb_set_sismember(f->db, S("s"), S("a"), &n), GB_R_OK);
    assert_int_equal(n, 0);
    sadd3(f->db, "s", "a", "b", "c");
    assert_int_equal(gb_set_sismember(f->db, S("s"), S("a"), &n), GB_R_OK);
    assert_int_equal(n, 1);
    gb_slice m[3] = {S("c"), S("x"), S("a")};
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_set_smismember(f->db, S("s"), 3, m, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=3 c nil a");
    s = cap_sink(&f->cap);
    assert_int_equal(gb_set_smismember(f->db, S("none"), 1, m, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=1 nil");
    s = cap_sink(&f->cap);
    assert_int_equal(gb_set_srandmember(f->db, S("s"), 10, &s), GB_R_OK);
    assert_int_equal(f->cap.elems, 3);
    s = cap_sink(&f->cap);
    assert_int_equal(gb_set_srandmember(f->db, S("s"), -7, &s), GB_R_OK);
    assert_int_equal(f->cap.elems, 7);
    s = cap_sink(&f->cap);
    assert_int_equal(gb_set_srandmember(f->db, S("s"), 0, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=0");
    assert_int_equal(gb_set_srandmember(f->db, S("none"), 1, &s), GB_R_NOTFOUND);

    put_list(f->db, "l");
    assert_int_equal(gb_set_sismember(f->db, S("l"), S("a"), &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_set_scard(f->db, S("l"), &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_set_smismember(f->db, S("l"), 1, m, &s), GB_R_WRONGTYPE);
    assert_int_equal(gb_set_srandmember(f->db, S("l"), 1, &s), GB_R_WRONGTYPE);
}

static void test_algebra(void **state)
{
    fixture *f = *state;
    sadd3(f->db, "a", "1", "2", "3");
    sadd3(f->db, "b", "2", "3", "4");
    put_list(f->db, "l");
    gb_slice ab[2] = {S("a"), S("b")}, anone[2] = {S("a"), S("none")}, nonel[2] = {S("none"), S("l")};
    gb_slice aa[2] = {S("a"), S("a")};
    size_t n;
    int64_t card;
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_set_sinter(f->db, 2, ab, &s, &n), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=? 2 3");
    assert_int_equal(n, 2);
    s = cap_sink(&f->cap);
    assert_int_equal(gb_set_sinter(f->db, 2, aa, &s, &n), GB_R_OK);
    assert_int_equal(n, 3);
    s = cap_sink(&f->cap);
    assert_int_equal(gb_set_sinter(f->db, 2, anone, &s, &n), GB_R_NOTFOUND);
    assert_int_equal(f->cap.len, 0);
    /* a missing key before a key of another type: still WRONGTYPE */
    assert_int_equal(gb_set_sinter(f->db, 2, nonel, &s, &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_set_sintercard(f->db, 2, ab, 0, &card), GB_R_OK);
    assert_int_equal(card, 2);
    assert_int_equal(gb_set_sintercard(f->db, 2, ab, 1, &card), GB_R_OK);
    assert_int_equal(card, 1);
    assert_int_equal(gb_set_sintercard(f->db, 2, anone, 0, &card), GB_R_OK);
    assert_int_equal(card, 0);
    assert_int_equal(gb_set_sintercard(f->db, 2, nonel, 0, &card), GB_R_WRONGTYPE);

    s = cap_sink(&f->cap);
    assert_int_equal(gb_set_sunion(f->db, 2, anone, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=3 1 2 3");
    s = cap_sink(&f->cap);
    assert_int_equal(gb_set_sdiff(f->db, 2, ab, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=1 1");
    assert_int_equal(gb_set_sunion(f->db, 2, nonel, &s), GB_R_WRONGTYPE);

    /* STORE: the result replaces any type; an empty result deletes dst */
    assert_int_equal(gb_set_sunionstore(f->db, S("l"), 2, ab, &card), GB_R_OK);
    assert_int_equal(card, 4);
    assert_int_equal(key_type(f->db, "l"), GB_TYPE_SET);
    assert_int_equal(gb_set_sinterstore(f->db, S("l"), 2, anone, &card), GB_R_OK);
    assert_int_equal(card, 0);
    assert_int_equal(key_type(f->db, "l"), -1);
    assert_int_equal(gb_set_sinterstore(f->db, S("i"), 2, ab, &card), GB_R_OK);
    assert_int_equal(card, 2);
    assert_int_equal(gb_set_sdiffstore(f->db, S("i"), 2, aa, &card), GB_R_OK);
    assert_int_equal(card, 0);
    assert_int_equal(key_type(f->db, "i"), -1);
    put_list(f->db, "l");
    assert_int_equal(gb_set_sdiffstore(f->db, S("d"), 2, nonel, &card), GB_R_WRONGTYPE);
    assert_int_equal(key_type(f->db, "d"), -1);
}

static void test_scan(void **state)
{
    fixture *f = *state;
    sadd3(f->db, "s", "1", "2", "3");
    gb_scan_opts all = {S(""), false, 10};
    uint64_t next;
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_tobj_scan(f->db, S("s"), GB_TYPE_SET, 0, &all, &s, &next), GB_R_OK);
    assert_string_equal(f->cap.buf, "1 2 3");
    assert_int_equal(next, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_add_remove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_smove, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_algebra, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
