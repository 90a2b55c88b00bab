/* engine/base/sha256.c: the FIPS 180-4 / NIST example vectors, one-shot and
 * fed in every split, and the hex form Redis stores for passwords. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/base/sha256.h"

static void hex_of(const void *data, size_t n, char out[GB_SHA256_HEX + 1]) { gb_sha256_hex(data, n, out); }

static void test_nist_vectors(void **state)
{
    (void)state;
    static const struct {
        const char *msg, *digest;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrst"
         "nopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    char hex[GB_SHA256_HEX + 1];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        hex_of(v[i].msg, strlen(v[i].msg), hex);
        assert_string_equal(hex, v[i].digest);
    }
}

/* One million 'a': many blocks through update, as one call and in pieces. */
static void test_million_a(void **state)
{
    (void)state;
    size_t n = 1000000;
    char *a = malloc(n);
    memset(a, 'a', n);
    char hex[GB_SHA256_HEX + 1];
    hex_of(a, n, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    gb_sha256 s;
    gb_sha256_init(&s);
    for (size_t off = 0, step = 1; off < n; off += step, step = step % 97 + 1)
        gb_sha256_update(&s, a + off, off + step > n ? n - off : step);
    uint8_t d[GB_SHA256_DIGEST];
    gb_sha256_final(&s, d);
    assert_int_equal(d[0], 0xcd);
    assert_int_equal(d[31], 0xd0);
    free(a);
}

/* Every split of a message across two updates gives the one-shot digest:
 * the padding boundary cases (55, 56, 63, 64 bytes) included. */
static void test_splits(void **state)
{
    (void)state;
    char msg[130];
    for (size_t i = 0; i < sizeof msg; i++)
        msg[i] = (char)('A' + i % 26);
    for (size_t len = 0; len <= sizeof msg; len++) {
        uint8_t whole[GB_SHA256_DIGEST], parts[GB_SHA256_DIGEST];
        gb_sha256 s;
        gb_sha256_init(&s);
        gb_sha256_update(&s, msg, len);
        gb_sha256_final(&s, whole);
        for (size_t cut = 0; cut <= len; cut += 7) {
            gb_sha256_init(&s);
            gb_sha256_update(&s, msg, cut);
            gb_sha256_update(&s, msg + cut, len - cut);
            gb_sha256_final(&s, parts);
            assert_memory_equal(whole, parts, sizeof whole);
        }
    }
}

/* Redis's ACL GETUSER shows this hash for the password "p". */
static void test_redis_password_hash(void **state)
{
    (void)state;
    char hex[GB_SHA256_HEX + 1];
    hex_of("p", 1, hex);
    assert_string_equal(hex, "148de9c5a7a44d19e56cd9ae1a554bf67847afb0c58f6e12fa29ac7ddfca9940");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nist_vectors),
        cmocka_unit_test(test_million_a),
        cmocka_unit_test(test_splits),
        cmocka_unit_test(test_redis_password_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
