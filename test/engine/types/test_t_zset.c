/* The sorted-set type's typed key operations (engine/types/t_zset.h),
 * called directly on a db: results, what they stream, and the keyspace
 * afterwards. */
#include "types_capture.h"

#include <math.h>

#include "engine/types/t_list.h"
#include "engine/types/t_set.h"
#include "engine/types/t_zset.h"

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

/* key: a=1 b=2 c=3 */
static void zabc(gb_db *db, const char *key)
{
    gb_slice m[3] = {S("a"), S("b"), S("c")};
    double sc[3] = {1, 2, 3};
    gb_zadd_result r;
    assert_int_equal(gb_zset_zadd(db, S(key), 0, 3, sc, m, &r), GB_R_OK);
    assert_int_equal(r.added, 3);
}

static gb_zrange rank_range(int64_t start, int64_t stop, bool rev)
{
    gb_zrange r;
    memset(&r, 0, sizeof r);
    r.by = GB_ZRANGE_RANK;
    r.start = start;
    r.stop = stop;
    r.rev = rev;
    r.limit = -1;
    return r;
}

static gb_zrange score_range(double min, double max)
{
    gb_zrange r;
    memset(&r, 0, sizeof r);
    r.by = GB_ZRANGE_SCORE;
    r.score.min = min;
    r.score.max = max;
    r.limit = -1;
    return r;
}

static void test_zadd(void **state)
{
    fixture *f = *state;
    gb_slice m[2] = {S("a"), S("b")};
    double sc[2] = {1.5, 2};
    gb_zadd_result r;
    assert_int_equal(gb_zset_zadd(f->db, S("z"), GB_ZADD_XX, 2, sc, m, &r), GB_R_OK);
    assert_int_equal(key_type(f->db, "z"), -1); /* XX creates nothing */
    assert_int_equal(gb_zset_zadd(f->db, S("z"), GB_ZADD_NX | GB_ZADD_XX, 2, sc, m, &r), GB_R_SYNTAX);
    assert_int_equal(gb_zset_zadd(f->db, S("z"), 0, 2, sc, m, &r), GB_R_OK);
    assert_int_equal(r.added, 2);
    double nan_score = NAN;
    assert_int_equal(gb_zset_zadd(f->db, S("n"), 0, 1, &nan_score, m, &r), GB_R_NAN);
    assert_int_equal(key_type(f->db, "n"), -1); /* created for nothing: gone */
    double out;
    assert_int_equal(gb_zset_zscore(f->db, S("z"), S("a"), &out), GB_R_OK);
    assert_true(out == 1.5);
    assert_int_equal(gb_zset_zscore(f->db, S("z"), S("x"), &out), GB_R_NOTFOUND);
    assert_int_equal(gb_zset_zscore(f->db, S("none"), S("a"), &out), GB_R_NOTFOUND);
    put_list(f->db, "l");
    assert_int_equal(gb_zset_zadd(f->db, S("l"), 0, 1, sc, m, &r), GB_R_WRONGTYPE);
    assert_int_equal(gb_zset_zscore(f->db, S("l"), S("a"), &out), GB_R_WRONGTYPE);
}

static void test_lookups(void **state)
{
    fixture *f = *state;
    int64_t n = -1, rank;
    double score;
    assert_int_equal(gb_zset_zcard(f->db, S("z"), &n), GB_R_OK);
    assert_int_equal(n, 0);
    zabc(f->db, "z");
    assert_int_equal(gb_zset_zcard(f->db, S("z"), &n), GB_R_OK);
    assert_int_equal(n, 3);
    gb_zrange sr = score_range(2, 10);
    assert_int_equal(gb_zset_zcount(f->db, S("z"), &sr.score, &n), GB_R_OK);
    assert_int_equal(n, 2);
    gb_zrange lr;
    assert_int_equal(gb_lex_parse_range(S("[b"), S("+"), &lr.lex), 0);
    assert_int_equal(gb_zset_zlexcount(f->db, S("z"), &lr.lex, &n), GB_R_OK);
    assert_int_equal(n, 2);
    assert_int_equal(gb_zset_zlexcount(f->db, S("none"), &lr.lex, &n), GB_R_OK);
    assert_int_equal(n, 0);
    assert_int_equal(gb_zset_zrank(f->db, S("z"), S("c"), false, &rank, &score), GB_R_OK);
    assert_int_equal(rank, 2);
    assert_true(score == 3);
    assert_int_equal(gb_zset_zrank(f->db, S("z"), S("c"), true, &rank, &score), GB_R_OK);
    assert_int_equal(rank, 0);
    assert_int_equal(gb_zset_zrank(f->db, S("z"), S("x"), false, &rank, &score), GB_R_NOTFOUND);
    assert_int_equal(gb_zset_zrank(f->db, S("none"), S("a"), false, &rank, &score), GB_R_NOTFOUND);
    gb_slice m[3] = {S("b"), S("x"), S("a")};
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_zset_zmscore(f->db, S("z"), 3, m, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=3 b:2 nil a:1");

    put_list(f->db, "l");
    assert_int_equal(gb_zset_zcard(f->db, S("l"), &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_zset_zcount(f->db, S("l"), &sr.score, &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_zset_zlexcount(f->db, S("l"), &lr.lex, &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_zset_zrank(f->db, S("l"), S("a"), false, &rank, &score), GB_R_WRONGTYPE);
    assert_int_equal(gb_zset_zmscore(f->db, S("l"), 1, m, &s), GB_R_WRONGTYPE);
}

static void test_ranges(void **state)
{
    fixture *f = *state;
    zabc(f->db, "z");
    size_t n;
    gb_zrange rr = rank_range(1, -1, false);
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_zset_zrange(f->db, S("z"), &rr, &s, &n), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=2 b:2 c:3");
    rr = rank_range(0, 0, true);
    s = cap_sink(&f->cap);
    assert_int_equal(gb_zset_zrange(f->db, S("z"), &rr, &s, &n), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=1 c:3");
    rr = rank_range(5, 9, false);
    s = cap_sink(&f->cap);
    assert_int_equal(gb_zset_zrange(f->db, S("z"), &rr, &s, &n), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=0");
    gb_zrange sr = score_range(2, 3);
    s = cap_sink(&f->cap);
    assert_int_equal(gb_zset_zrange(f->db, S("z"), &sr, &s, &n), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=? b:2 c:3");
    assert_int_equal(n, 2);
    sr.offset = 1;
    sr.limit = 5;
    s = cap_sink(&f->cap);
    assert_int_equal(gb_zset_zrange(f->db, S("z"), &sr, &s, &n), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=? c:3");
    assert_int_equal(gb_zset_zrange(f->db, S("none"), &sr, &s, &n), GB_R_NOTFOUND);

    int64_t card;
    put_list(f->db, "l");
    sr = score_range(1, 2);
    assert_int_equal(gb_zset_zrangestore(f->db, S("l"), S("z"), &sr, &card), GB_R_OK);
    assert_int_equal(card, 2);
    assert_int_equal(key_type(f->db, "l"), GB_TYPE_ZSET); /* replaced, whatever it held */
    assert_int_equal(gb_zset_zrangestore(f->db, S("l"), S("none"), &sr, &card), GB_R_OK);
    assert_int_equal(card, 0);
    assert_int_equal(key_type(f->db, "l"), -1); /* a missing source deletes dst */
    put_list(f->db, "l");
    assert_int_equal(gb_zset_zrangestore(f->db, S("d"), S("l"), &sr, &card), GB_R_WRONGTYPE);
    assert_int_equal(gb_zset_zrange(f->db, S("l"), &sr, &s, &n), GB_R_WRONGTYPE);
}

static void test_removal(void **state)
{
    fixture *f = *state;
    int64_t n;
    gb_slice m[2] = {S("a"), S("x")};
    assert_int_equal(gb_zset_zrem(f->db, S("z"), 2, m, &n), GB_R_OK);
    assert_int_equal(n, 0);
    zabc(f->db, "z");
    assert_int_equal(gb_zset_zrem(f->db, S("z"), 2, m, &n), GB_R_OK);
    assert_int_equal(n, 1);
    gb_zrange rr = rank_range(0, 0, false);
    assert_int_equal(gb_zset_zremrange(f->db, S("z"), &rr, &n), GB_R_OK);
    assert_int_equal(n, 1);
    gb_zrange sr = score_range(0, 10);
    assert_int_equal(gb_zset_zremrange(f->db, S("z"), &sr, &n), GB_R_OK);
    assert_int_equal(n, 1);
    assert_int_equal(key_type(f->db, "z"), -1); /* emptied: deleted */
    assert_int_equal(gb_zset_zremrange(f->db, S("z"), &sr, &n), GB_R_OK);
    assert_int_equal(n, 0);

    zabc(f->db, "z");
    gb_sink s = cap_sink(&f->cap);
    uint64_t dirty = f->h->eng->stats.dirty;
    assert_int_equal(gb_zset_zpopmin(f->db, S("z"), false, 0, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=0");
    assert_int_equal(f->h->eng->stats.dirty, dirty); /* count 0 changes nothing */
    s = cap_sink(&f->cap);
    assert_int_equal(gb_zset_zpopmin(f->db, S("z"), true, 2, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=2 c:3 b:2");
    assert_int_equal(gb_zset_zpopmin(f->db, S("none"), false, 1, &s), GB_R_NOTFOUND);

    gb_slice keys[3] = {S("none"), S("z"), S("l")};
    size_t which = 99;
    s = cap_sink(&f->cap);
    assert_int_equal(gb_zset_zmpop(f->db, 3, keys, false, 5, &s, &which), GB_R_OK);
    assert_int_equal(which, 1);
    assert_string_equal(f->cap.buf, "len=1 a:1");
    assert_int_equal(key_type(f->db, "z"), -1);
    assert_int_equal(gb_zset_zmpop(f->db, 2, keys, false, 5, &s, &which), GB_R_NOTFOUND);
    put_list(f->db, "l");
    assert_int_equal(gb_zset_zmpop(f->db, 3, keys, false, 5, &s, &which), GB_R_WRONGTYPE);
    assert_int_equal(gb_zset_zrem(f->db, S("l"), 1, m, &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_zset_zremrange(f->db, S("l"), &sr, &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_zset_zpopmin(f->db, S("l"), false, 1, &s), GB_R_WRONGTYPE);
}

static void test_random(void **state)
{
    fixture *f = *state;
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_zset_zrandmember(f->db, S("z"), 1, &s), GB_R_NOTFOUND);
    zabc(f->db, "z");
    assert_int_equal(gb_zset_zrandmember(f->db, S("z"), 9, &s), GB_R_OK);
    assert_int_equal(f->cap.elems, 3);
    s = cap_sink(&f->cap);
    assert_int_equal(gb_zset_zrandmember(f->db, S("z"), -4, &s), GB_R_OK);
    assert_int_equal(f->cap.elems, 4);
    s = cap_sink(&f->cap);
    assert_int_equal(gb_zset_zrandmember(f->db, S("z"), 0, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=0");
}

static void test_algebra(void **state)
{
    fixture *f = *state;
    zabc(f->db, "z");
    gb_slice m[2] = {S("b"), S("d")};
    int64_t n;
    assert_int_equal(gb_set_sadd(f->db, S("s"), 2, m, &n), GB_R_OK);
    put_list(f->db, "l");
    gb_slice zs[2] = {S("z"), S("s")}, zl[2] = {S("z"), S("l")}, znone[2] = {S("z"), S("none")};
    gb_zsetop_opts sum = {NULL, GB_ZAGG_SUM};
    gb_sink s = cap_sink(&f->cap);
    assert_int_equal(gb_zset_zunion(f->db, GB_ZSETOP_INTER, 2, zs, &sum, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=1 b:3"); /* a set's members score 1 */
    double w[2] = {2, 10};
    gb_zsetop_opts weighted = {w, GB_ZAGG_MAX};
    s = cap_sink(&f->cap);
    assert_int_equal(gb_zset_zunion(f->db, GB_ZSETOP_UNION, 2, zs, &weighted, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=4 a:2 c:6 b:10 d:10");
    s = cap_sink(&f->cap);
    assert_int_equal(gb_zset_zunion(f->db, GB_ZSETOP_DIFF, 2, znone, &sum, &s), GB_R_OK);
    assert_string_equal(f->cap.buf, "len=3 a:1 b:2 c:3");
    /* the keys' types come before the options */
    assert_int_equal(gb_zset_zunion(f->db, GB_ZSETOP_UNION, 2, zl, NULL, &s), GB_R_WRONGTYPE);
    assert_int_equal(gb_zset_zunion(f->db, GB_ZSETOP_UNION, 2, zs, NULL, &s), GB_R_BADARG);
    size_t limit = 0;
    assert_int_equal(gb_zset_zintercard(f->db, 2, zs, &limit, &n), GB_R_OK);
    assert_int_equal(n, 1);
    assert_int_equal(gb_zset_zintercard(f->db, 2, zl, NULL, &n), GB_R_WRONGTYPE);
    assert_int_equal(gb_zset_zintercard(f->db, 2, zs, NULL, &n), GB_R_BADARG);

    assert_int_equal(gb_zset_zunionstore(f->db, GB_ZSETOP_UNION, S("l"), 2, zs, &sum, &n), GB_R_OK);
    assert_int_equal(n, 4);
    assert_int_equal(key_type(f->db, "l"), GB_TYPE_ZSET);
    assert_int_equal(gb_zset_zunionstore(f->db, GB_ZSETOP_INTER, S("l"), 2, znone, &sum, &n), GB_R_OK);
    assert_int_equal(n, 0);
    assert_int_equal(key_type(f->db, "l"), -1); /* an empty result deletes dst */
    assert_int_equal(gb_zset_zunionstore(f->db, GB_ZSETOP_UNION, S("d"), 2, zs, NULL, &n), GB_R_BADARG);
    assert_int_equal(key_type(f->db, "d"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_zadd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lookups, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ranges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_removal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random, setup, teardown),
        cmocka_unit_test_setup_teardown(test_algebra, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
