/* DEBUG DIGEST and DIGEST-VALUE (engine/commands/debug_digest.c) and the
 * SHA-1 under them (engine/script/sha1.c): FIPS 180 test vectors, digests
 * redis-server 7.0.15 gave for the same commands, and the same digest
 * whichever encoding a value has. test/integration/test_differential.py
 * and its siblings compare the digest with a live redis-server after
 * every random stream. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine_harness.h"
#include "engine/script/sha1.h"

static void sha1_hex_of(const void *p, size_t n, char out[41])
{
    uint8_t d[20];
    gb_sha1(p, n, d);
    gb_sha1_to_hex(d, out);
}

static void test_sha1_vectors(void **state)
{
    (void)state;
    char hex[41];
    sha1_hex_of("", 0, hex);
    assert_string_equal(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    sha1_hex_of("abc", 3, hex);
    assert_string_equal(hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
    /* 56 bytes: the length no longer fits the first padding block */
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha1_hex_of(two, strlen(two), hex);
    assert_string_equal(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    char *million = malloc(1000000);
    memset(million, 'a', 1000000);
    sha1_hex_of(million, 1000000, hex);
    assert_string_equal(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    gb_sha1_hex(million, 1000000, hex);
    assert_string_equal(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    free(million);
}

static void debug_on(gb_settings *s) { s->enable_debug_command = GB_PROTECTED_YES; }

/* Every listpack/intset threshold at 0: each value in its big encoding. */
static void debug_on_big_encodings(gb_settings *s)
{
    debug_on(s);
    s->hash_max_listpack_entries = 0;
    s->set_max_intset_entries = 0;
    s->set_max_listpack_entries = 0;
    s->zset_max_listpack_entries = 0;
}

static const char *const DATASET[] = {
    "SET s hello", "RPUSH l a 1 b", "ZADD z 1.5 m 0.1 n", "HSET h f v n 42", "SADD st x 7", "XADD x 1-1 f v",
    "SET e v EX 1000",
};

static void load(harness *h)
{
    for (size_t i = 0; i < sizeof DATASET / sizeof DATASET[0]; i++)
        assert_true(run(h, DATASET[i])[0] != '-');
}

/* What redis-server 7.0.15 answered after the same commands. */
static void test_digests_as_redis(void **state)
{
    (void)state;
    harness *h = harness_new(debug_on);
    assert_string_equal(run(h, "DEBUG DIGEST"), "+0000000000000000000000000000000000000000");
    assert_string_equal(run(h, "SET s hello"), "+OK");
    assert_string_equal(run(h, "DEBUG DIGEST"), "+a500c6b54937da22f2ac1167da1da852479c7339");
    load(h);
    assert_string_equal(run(h, "DEBUG DIGEST-VALUE s l z h st x e nokey"),
                        "*8 +36b23a1456b2dce2c3ed252c456761301dba8060 +d5f44352f6226abea9252dad248ef5de0d964396 "
                        "+56aefd71afb0522fef8daa67986cff8b8561fa6e +c9bfe8cee47511ea0f1e13d7eb852ba9d3a95784 "
                        "+3364c7ba1a04940bf28a8b80e71f1fb78caa464e +2ed9a7a81688084b1f7eae33456ef7727d357031 "
                        "+311b17018163335616e089f6b951c82c477335ac +0000000000000000000000000000000000000000");
    assert_string_equal(run(h, "DEBUG DIGEST"), "+408eba22b6de4425d57eb2f068437958a0015780");
    assert_string_equal(run(h, "DEBUG DIGEST-VALUE"), "*0");
    /* the same keys in another database are another dataset */
    assert_string_equal(run(h, "SWAPDB 0 1"), "+OK");
    assert_string_not_equal(run(h, "DEBUG DIGEST"), "+408eba22b6de4425d57eb2f068437958a0015780");
    harness_free(h);
}

/* A value's digest is of what it holds: listpacks, intsets, hash tables
 * and B-trees give the same; an expiry counts, its time does not. */
static void test_digest_ignores_encoding_and_expiry_time(void **state)
{
    (void)state;
    harness *small = harness_new(debug_on), *big = harness_new(debug_on_big_encodings);
    load(small);
    load(big);
    assert_string_equal(run(small, "OBJECT ENCODING h"), "$listpack");
    assert_string_equal(run(big, "OBJECT ENCODING h"), "$hashtable");
    char want[64];
    snprintf(want, sizeof want, "%s", run(small, "DEBUG DIGEST"));
    assert_string_equal(run(big, "DEBUG DIGEST"), want);
    assert_string_equal(run(big, "EXPIRE e 5000"), ":1");
    assert_string_equal(run(big, "DEBUG DIGEST"), want);
    assert_string_equal(run(big, "PERSIST e"), ":1");
    assert_string_not_equal(run(big, "DEBUG DIGEST"), want);
    harness_free(small);
    harness_free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha1_vectors),
        cmocka_unit_test(test_digests_as_redis),
        cmocka_unit_test(test_digest_ignores_encoding_and_expiry_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
