#include "transport/resp/resp_parser.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/core/request/client.h"
#include "engine/core/request/gate.h"
#include "engine/base/mem.h"
#include "engine/base/util.h"

#define INITIAL_ARGS 8
/* The argument array grows by doubling but never ahead of arguments that
 * actually arrived, so "*2147483647\r\n" costs nothing. */

void gb_resp_parser_init(gb_resp_parser *p, int64_t max_bulk)
{
    memset(p, 0, sizeof *p);
    p->bulk_len = -1;
    p->max_bulk = max_bulk;
}

void gb_resp_parser_free(gb_resp_parser *p)
{
    gb_free(p->args);
    p->args = NULL;
    p->cap = 0;
}

void gb_resp_parser_reset(gb_resp_parser *p)
{
    p->kind = 0;
    p->pos = 0;
    p->remaining = 0;
    p->bulk_len = -1;
    p->argc = 0;
    p->args_bytes = 0;
}

static inline bool push_arg(gb_resp_parser *p, size_t off, size_t len)
{
    if (__builtin_expect(p->argc == p->cap, 0)) {
        int ncap = p->cap ? p->cap * 2 : INITIAL_ARGS;
        gb_resp_arg *n = gb_try_realloc(p->args, (size_t)ncap * sizeof *n);
        if (!n) {
            p->oom = true;
            return false;
        }
        p->args = n;
        p->cap = ncap;
    }
    p->args[p->argc].off = off;
    p->args[p->argc].len = len;
    p->argc++;
    p->args_bytes += len;
    return true;
}

static int fail(char *err, size_t errlen, const char *msg)
{
    snprintf(err, errlen, "ERR Protocol error: %s", msg);
    return GB_RESP_ERROR;
}

/* sdssplitargs's two notions of space: isspace() between words and after
 * a closing quote, but only these four inside a word (so "GET a\fb" is one
 * argument, as in Redis). A line never holds a NUL (parse_inline). */
static inline bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
static inline bool ends_word(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Whether the quote at line[i] may close a word: followed by a blank or the end. */
static bool quote_closes_word(const char *line, size_t i, size_t len)
{
    return i + 1 >= len || is_blank(line[i + 1]);
}

/*
 * Splits an inline request line in place, Redis's sdssplitargs rules:
 * blank-separated words; "double quotes" with \n \r \t \b \a \\ \" and
 * \xHH escapes; 'single quotes' with \' ; a closing quote must be followed by
 * a blank or the end. Decoded words are written back into the line (never
 * longer than their source). Returns false on unbalanced quotes, or when
 * the argument array cannot grow (p->oom set).
 */
static bool split_inline(gb_resp_parser *p, char *line, size_t len, size_t base)
{
    size_t i = 0;
    for (;;) {
        while (i < len && is_blank(line[i]))
            i++;
        if (i >= len)
            return true;
        size_t out = i, start = i;
        bool inq = false, insq = false, done = false;
        while (!done) {
            if (inq) {
                if (i >= len)
                    return false;
                if (line[i] == '\\' && i + 3 < len && line[i + 1] == 'x' && gb_hex_digit(line[i + 2]) >= 0 &&
                    gb_hex_digit(line[i + 3]) >= 0) {
                    line[out++] = (char)(gb_hex_digit(line[i + 2]) * 16 + gb_hex_digit(line[i + 3]));
                    i += 4;
                } else if (line[i] == '\\' && i + 1 < len) {
                    char c = line[i + 1];
                    line[out++] = c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c == 'b' ? '\b' : c == 'a' ? '\a' : c;
                    i += 2;
                } else if (line[i] == '"') {
                    if (!quote_closes_word(line, i, len))
                        return false;
                    i++;
                    done = true;
                } else {
                    line[out++] = line[i++];
                }
            } else if (insq) {
                if (i >= len)
                    return false;
                if (line[i] == '\\' && i + 1 < len && line[i + 1] == '\'') {
                    line[out++] = '\'';
                    i += 2;
                } else if (line[i] == '\'') {
                    if (!quote_closes_word(line, i, len))
                        return false;
                    i++;
                    done = true;
                } else {
                    line[out++] = line[i++];
                }
            } else {
                if (i >= len || ends_word(line[i])) {
                    done = true;
                } else if (line[i] == '"') {
                    inq = true;
                    i++;
                } else if (line[i] == '\'') {
                    insq = true;
                    i++;
                } else {
                    line[out++] = line[i++];
                }
            }
        }
        if (!push_arg(p, base + start, out - start))
            return false;
    }
}

static int parse_inline(gb_resp_parser *p, char *buf, size_t len, size_t *consumed, char *err, size_t errlen)
{
    /* Redis finds the end of an inline request with strchr, which stops at
     * a NUL: a NUL before the newline means no line yet (until the 64 KiB
     * limit says the request is too big). Matched here byte for byte. */
    char *nl = memchr(buf, '\n', len);
    if (nl && memchr(buf, '\0', (size_t)(nl - buf)))
        nl = NULL;
    if (!nl) {
        if (len > GB_RESP_INLINE_MAX)
            return fail(err, errlen, "too big inline request");
        return GB_RESP_NEED_MORE;
    }
    /* Like Redis (processInlineBuffer) the 64 KiB limit applies only while
     * no newline has arrived: a complete line of any length is a request
     * (the query buffer limit still bounds it). */
    size_t linelen = (size_t)(nl - buf);
    size_t end = linelen;
    if (end > 0 && buf[end - 1] == '\r')
        end--;
    p->argc = 0;
    p->args_bytes = 0;
    if (!split_inline(p, buf, end, 0))
        return fail(err, errlen, p->oom ? "out of memory" : "unbalanced quotes in request");
    if (p->unauthenticated && p->argc > GB_RESP_UNAUTH_MAX_ARGS)
        return fail(err, errlen, "unauthenticated multibulk length");
    *consumed = linelen + 1;
    return GB_RESP_COMMAND;
}

/* The general case of read_header (below): like Redis it looks for '\r'
 * and needs one more byte after; a long header that does end in '\r' is
 * simply not a valid number. */
__attribute__((noinline)) static int read_header_slow(const char *buf, size_t len, size_t pos, int64_t *v, bool *ok,
                                                      size_t *next)
{
    const char *cr = memchr(buf + pos, '\r', len - pos);
    if (!cr)
        return (len - pos > GB_RESP_INLINE_MAX) ? -1 : 0;
    size_t crpos = (size_t)(cr - buf);
    if (crpos + 1 >= len) /* wait for the '\n' */
        return 0;
    *ok = gb_str2ll(buf + pos + 1, crpos - pos - 1, v);
    *next = crpos + 2;
    return 1;
}

/* Reads a "<prefix><integer>\r\n" header at buf[pos]. Returns 1 with *v and
 * *next set, 0 if the line is incomplete, -1 if too long (no '\r' within the
 * inline limit).
 *
 * Inline fast path for what clients send: 1-17 digits without a leading
 * zero (or a lone "0") followed by "\r" and one more byte. That is exactly
 * the case where the general path's first '\r' ends a string gb_str2ll
 * accepts, so the result is the same, without memchr and the general
 * conversion on every argument. */
static inline __attribute__((always_inline)) int read_header(const char *buf, size_t len, size_t pos, int64_t *v,
                                                             bool *ok, size_t *next)
{
    size_t i = pos + 1, end = len - pos > 19 ? pos + 19 : len; /* <= 18 digits: no overflow */
    if (i < end && buf[i] >= '1' && buf[i] <= '9') {
        uint64_t n = 0;
        while (i < end && buf[i] >= '0' && buf[i] <= '9')
            n = n * 10 + (uint64_t)(buf[i++] - '0');
        if (i < end && buf[i] == '\r' && i + 1 < len) {
            *v = (int64_t)n;
            *ok = true;
            *next = i + 2;
            return 1;
        }
    } else if (i + 2 < len && buf[i] == '0' && buf[i + 1] == '\r') {
        *v = 0;
        *ok = true;
        *next = i + 3;
        return 1;
    }
    return read_header_slow(buf, len, pos, v, ok, next);
}

/* One whole argument as clients send it: "$", 1-9 digits without a
 * leading zero, "\r" and one more byte, then the data and two more bytes,
 * all in the buffer, the length at most limit. Returns the length, with
 * *data set to where the argument starts; -1 for anything else, which the
 * general path in gb_resp_parse then handles with its partial-input rules
 * and error texts. It accepts exactly what that path accepts for these
 * inputs (like it and Redis, it skips the two bytes after each '\r'
 * unread). */
static inline __attribute__((always_inline)) int64_t fast_arg(const char *buf, size_t len, size_t pos, int64_t limit,
                                                              size_t *data)
{
    if (len - pos < 4 || buf[pos] != '$')
        return -1;
    size_t i = pos + 1;
    unsigned d = (unsigned char)buf[i] - '0';
    if (d - 1 > 8) /* not 1-9 */
        return -1;
    uint64_t n = d;
    size_t stop = len - pos > 10 ? pos + 10 : len; /* at most 9 digits */
    while (++i < stop && (d = (unsigned char)buf[i] - '0') < 10)
        n = n * 10 + d;
    if (i + 1 >= len || buf[i] != '\r' || (int64_t)n > limit)
        return -1;
    size_t start = i + 2;
    if (len - start < n + 2)
        return -1;
    *data = start;
    return (int64_t)n;
}

int gb_resp_parse(gb_resp_parser *p, char *buf, size_t len, size_t *consumed, char *err, size_t errlen)
{
    if (len == 0)
        return GB_RESP_NEED_MORE;
    if (p->kind == 0)
        p->kind = buf[0] == '*' ? 1 : 2;
    if (p->kind == 2)
        return parse_inline(p, buf, len, consumed, err, errlen);

    if (p->pos == 0) {
        int64_t n;
        bool ok;
        size_t next;
        int h = read_header(buf, len, 0, &n, &ok, &next);
        if (h < 0)
            return fail(err, errlen, "too big mbulk count string");
        if (h == 0)
            return GB_RESP_NEED_MORE;
        if (!ok || n > INT32_MAX)
            return fail(err, errlen, "invalid multibulk length");
        if (n > GB_RESP_UNAUTH_MAX_ARGS && p->unauthenticated)
            return fail(err, errlen, "unauthenticated multibulk length");
        p->pos = next;
        p->argc = 0;
    p->args_bytes = 0;
        if (n <= 0) {
            *consumed = next;
            return GB_RESP_COMMAND;
        }
        p->remaining = n;
        p->bulk_len = -1;
    }

    /* The parser's state lives in locals inside the loop (the compiler
     * cannot keep p->... in registers across the calls) and is stored back
     * whenever the request is incomplete. */
    size_t pos = p->pos;
    int64_t bulk_len = p->bulk_len, remaining = p->remaining;
    /* fast_arg's single bound: every length above it gets one of the two
     * errors below, which the general path tells apart */
    int64_t fast_limit =
        p->unauthenticated && p->max_bulk > GB_RESP_UNAUTH_MAX_BULK ? GB_RESP_UNAUTH_MAX_BULK : p->max_bulk;
    int rc = GB_RESP_COMMAND;
    while (remaining > 0) {
        if (bulk_len < 0) {
            size_t data;
            int64_t n = fast_arg(buf, len, pos, fast_limit, &data);
            if (n >= 0) {
                if (!push_arg(p, data, (size_t)n))
                    return fail(err, errlen, "out of memory");
                pos = data + (size_t)n + 2;
                remaining--;
                continue;
            }
            if (pos >= len) {
                rc = GB_RESP_NEED_MORE;
                break;
            }
            bool ok;
            size_t next;
            int h = read_header(buf, len, pos, &n, &ok, &next);
            if (h < 0)
                return fail(err, errlen, "too big bulk count string");
            if (h == 0) {
                rc = GB_RESP_NEED_MORE;
                break;
            }
            if (buf[pos] != '$') {
                char msg[64];
                snprintf(msg, sizeof msg, "expected '$', got '%c'", buf[pos]);
                return fail(err, errlen, msg);
            }
            if (!ok || n < 0 || n > p->max_bulk)
                return fail(err, errlen, "invalid bulk length");
            if (n > GB_RESP_UNAUTH_MAX_BULK && p->unauthenticated)
                return fail(err, errlen, "unauthenticated bulk length");
            bulk_len = n;
            pos = next;
        }
        if (len - pos < (size_t)bulk_len + 2) {
            rc = GB_RESP_NEED_MORE;
            break;
        }
        if (!push_arg(p, pos, (size_t)bulk_len))
            return fail(err, errlen, "out of memory");
        pos += (size_t)bulk_len + 2;
        bulk_len = -1;
        remaining--;
    }
    p->pos = pos;
    p->bulk_len = bulk_len;
    p->remaining = remaining;
    if (rc == GB_RESP_COMMAND)
        *consumed = pos;
    return rc;
}

void gb_resp_args_to_slices(const gb_resp_parser *p, const char *buf, gb_slice *argv)
{
    for (int i = 0; i < p->argc; i++)
        argv[i] = gb_slice_make(buf + p->args[i].off, p->args[i].len);
}

bool gb_resp_execute(const gb_resp_parser *p, const char *buf, gb_client *c)
{
    if (p->argc == 0)
        return true;
    gb_slice stack_argv[GB_RESP_STACK_ARGS];
    gb_slice *argv = p->argc <= GB_RESP_STACK_ARGS ? stack_argv : gb_try_malloc((size_t)p->argc * sizeof *argv);
    if (!argv)
        return false;
    gb_resp_args_to_slices(p, buf, argv);
    gb_gate_execute(c, p->argc, argv);
    if (argv != stack_argv)
        gb_free(argv);
    return true;
}

size_t gb_resp_args_bytes(const gb_resp_parser *p) { return p->args_bytes; }

size_t gb_resp_bytes_wanted(const gb_resp_parser *p)
{
    if (p->kind == 1 && p->bulk_len >= 0)
        return p->pos + (size_t)p->bulk_len + 2;
    return 0;
}
