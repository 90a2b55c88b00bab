/* engine/base/splitargs.c: Redis's sdssplitargs rules (quotes, escapes, a
 * closing quote that must end the word, a NUL that ends the line) and
 * engine/base/strbuf.c's growth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/base/splitargs.h"
#include "engine/base/strbuf.h"

/* Splits and joins the words with '|' (or returns "ERR"). */
static const char *split(const char *line, size_t len)
{
    static char out[512];
    gb_slice *w;
    int n = gb_split_args(line, len, &w);
    if (n < 0) {
        assert_null(w);
        return "ERR";
    }
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (i)
            out[used++] = '|';
        memcpy(out + used, w[i].ptr, w[i].len);
        used += w[i].len;
        out[used] = '\0';
    }
    gb_split_args_free(w);
    return out;
}

#define S(lit) split(lit, sizeof(lit) - 1)

static void test_words(void **state)
{
    (void)state;
    assert_string_equal(S(""), "");
    assert_string_equal(S("   \t\n"), "");
    assert_string_equal(S("a b  c"), "a|b|c");
    assert_string_equal(S("  ~k* +get\t+set\r\n"), "~k*|+get|+set");
    /* \v and \f separate words only between words, as C's isspace */
    assert_string_equal(S("\va"), "a");
    assert_string_equal(S("a\vb"), "a\vb");
}

static void test_quotes(void **state)
{
    (void)state;
    assert_string_equal(S("\"a b\" c"), "a b|c");
    assert_string_equal(S("'a b' c"), "a b|c");
    assert_string_equal(S("\"\\x41\\n\\t\\\"\" x"), "A\n\t\"|x");
    assert_string_equal(S("\"\\xZZ\""), "xZZ");
    assert_string_equal(S("'it\\'s' 'a\\b'"), "it's|a\\b");
    assert_string_equal(S("ab\"cd\" e"), "abcd|e"); /* a quote may start mid-word */
    assert_string_equal(S("\"\""), "");
    assert_string_equal(S("\"\" x"), "|x");
    assert_string_equal(S("\"unterminated"), "ERR");
    assert_string_equal(S("'unterminated"), "ERR");
    assert_string_equal(S("\"a\"b"), "ERR");
    assert_string_equal(S("'a'b"), "ERR");
}

static void test_nul_ends_the_line(void **state)
{
    (void)state;
    assert_string_equal(split("a b\0c d", 7), "a|b");
}

/* Many words in a long line: the single block holds them all. */
static void test_bounds(void **state)
{
    (void)state;
    char line[2001];
    for (int i = 0; i < 2000; i++)
        line[i] = i % 2 ? ' ' : 'x';
    gb_slice *w;
    assert_int_equal(gb_split_args(line, 2000, &w), 1000);
    assert_int_equal(w[999].len, 1);
    gb_split_args_free(w);
}

static void test_strbuf(void **state)
{
    (void)state;
    gb_strbuf b = {0};
    assert_string_equal(gb_strbuf_cstr(&b), "");
    for (int i = 0; i < 1000; i++)
        gb_strbuf_printf(&b, "%d ", i);
    gb_strbuf_trim_last(&b, ' ');
    assert_int_equal(b.len, strlen(b.p));
    assert_memory_equal(b.p + b.len - 3, "999", 3);
    gb_strbuf_reset(&b);
    gb_strbuf_adds(&b, "x");
    gb_strbuf_addc(&b, 'y');
    assert_string_equal(gb_strbuf_cstr(&b), "xy");
    gb_strbuf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words),          cmocka_unit_test(test_quotes), cmocka_unit_test(test_nul_ends_the_line),
        cmocka_unit_test(test_bounds),         cmocka_unit_test(test_strbuf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
