#include "engine/base/splitargs.h"

#include "engine/base/mem.h"
#include "engine/base/util.h"

/* C's isspace in the "C" locale: what sdssplitargs skips between words. */
static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

/* What ends an unquoted word (sdssplitargs's own list: not \v or \f). */
static bool ends_word(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\0'; }

static char escaped(char c)
{
    switch (c) {
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'b': return '\b';
    case 'a': return '\a';
    default: return c;
    }
}

/* Reads one word starting at line[*pos] (not a blank) into out; returns
 * its length, or -1 on a quoting error. Every byte read produces at most
 * one byte of output, so out needs no more room than the line. */
static long read_word(const char *line, size_t len, size_t *pos, char *out)
{
    size_t p = *pos, n = 0;
    char quote = 0;
#define AT(i) ((i) < len ? line[i] : '\0')
    for (;;) {
        char c = AT(p);
        if (quote == '"') {
            if (c == '\\' && AT(p + 1) == 'x' && gb_hex_digit(AT(p + 2)) >= 0 && gb_hex_digit(AT(p + 3)) >= 0) {
                out[n++] = (char)(gb_hex_digit(AT(p + 2)) * 16 + gb_hex_digit(AT(p + 3)));
                p += 4;
            } else if (c == '\\' && AT(p + 1)) {
                out[n++] = escaped(AT(p + 1));
                p += 2;
            } else if (c == '"') {
                if (AT(p + 1) && !is_blank(AT(p + 1)))
                    return -1;
                p++;
                break;
            } else if (!c) {
                return -1;
            } else {
                out[n++] = c;
                p++;
            }
        } else if (quote == '\'') {
            if (c == '\\' && AT(p + 1) == '\'') {
                out[n++] = '\'';
                p += 2;
            } else if (c == '\'') {
                if (AT(p + 1) && !is_blank(AT(p + 1)))
                    return -1;
                p++;
                break;
            } else if (!c) {
                return -1;
            } else {
                out[n++] = c;
                p++;
            }
        } else if (ends_word(c)) {
            if (c)
                p++;
            break;
        } else if (c == '"' || c == '\'') {
            quote = c; /* a quote may begin in the middle of a word, as in Redis */
            p++;
        } else {
            out[n++] = c;
            p++;
        }
    }
#undef AT
    *pos = p;
    return (long)n;
}

int gb_split_args(const char *line, size_t len, gb_slice **words)
{
    size_t end = 0;
    while (end < len && line[end])
        end++;
    /* At most one word per two bytes (a byte and a separator), and never
     * more output bytes than input bytes. */
    size_t maxwords = end / 2 + 1;
    gb_slice *w = gb_malloc(maxwords * sizeof *w + end + 1);
    char *store = (char *)(w + maxwords);
    size_t pos = 0, used = 0;
    int n = 0;
    for (;;) {
        while (pos < end && is_blank(line[pos]))
            pos++;
        if (pos >= end)
            break;
        long k = read_word(line, end, &pos, store + used);
        if (k < 0) {
            gb_free(w);
            *words = NULL;
            return -1;
        }
        w[n++] = gb_slice_make(store + used, (size_t)k);
        used += (size_t)k;
    }
    *words = w;
    return n;
}

void gb_split_args_free(gb_slice *words) { gb_free(words); }
