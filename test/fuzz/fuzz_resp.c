/*
 * Fuzz harness: the RESP2 request parser (transport/resp/resp_parser.h),
 * multibulk and inline, over arbitrary bytes and arbitrary read
 * boundaries, with and without the unauthenticated limits and with a small
 * proto-max-bulk-len.
 *
 * Input: [flags u8][max_bulk u8][chunk seed u16][the byte stream a client sends]
 *   flags bit 0: unauthenticated (10 arguments, 16 KiB bulks)
 *   flags bit 1: max_bulk is the second byte (0..255) instead of 512 MB
 *
 * The stream is parsed three times, as a connection does (parse, take the
 * request, compact the buffer, parse again):
 *   whole    all bytes in one buffer: the parser's fast paths;
 *   chunked  the same bytes arriving in reads of 1..128 bytes cut by the
 *            seed: the paths that resume a partial request;
 *   lenient  whole, without the limits.
 * Whole and chunked must give the same requests, byte for byte, and end
 * the same way (the same error text, or waiting for more); the limits may
 * only cut the lenient transcript short, never change a request. Every
 * buffer the parser sees is an exact-size heap copy, so a read past the
 * end is an ASan report. Requests are not executed: what the engine does
 * with an argument vector is fuzzed by fuzz_sbe (Generic) and fuzz_aof
 * (replay), through the same command gate; here that would cost a hundred
 * times the parse and find nothing about the parser.
 */
#include "fuzz_util.h"

#include <stdarg.h>

#include "transport/resp/resp_parser.h"

/* Beyond this the 64 KiB inline limit makes the result depend on where
 * reads end (as in Redis): whole and chunked may then differ. */
#define MAX_STREAM (60 * 1024)

/* What a parse produced: each request as "<argc>:" then "<len>:<bytes>" per
 * argument, then how it ended. */
typedef struct transcript {
    char *s;
    size_t len, cap;
    int requests;
} transcript;

static void tr_put(transcript *t, const void *p, size_t n)
{
    if (t->len + n > t->cap) {
        size_t cap = t->cap ? t->cap : 1024;
        while (cap < t->len + n)
            cap *= 2;
        t->s = realloc(t->s, cap);
        FUZZ_CHECK(t->s != NULL, "out of memory");
        t->cap = cap;
    }
    memcpy(t->s + t->len, p, n);
    t->len += n;
}

static void tr_printf(transcript *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tr_printf(transcript *t, const char *fmt, ...)
{
    char b[320];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    tr_put(t, b, (size_t)n < sizeof b ? (size_t)n : sizeof b - 1);
}

typedef struct limits {
    bool unauth;
    int64_t max_bulk;
} limits;

/* Parses the requests buf[0..len) holds (an exact-size copy the parser may
 * write into: inline requests are unescaped in place). Records each one;
 * returns how many bytes they took, or -1 after a protocol error. */
static long parse_buffer(gb_resp_parser *p, const uint8_t *bytes, size_t len, transcript *t)
{
    uint8_t *buf = fuzz_dup(bytes, len);
    size_t pos = 0;
    long rc = 0;
    while (pos < len) {
        size_t consumed = 0;
        char err[256];
        int st = gb_resp_parse(p, (char *)buf + pos, len - pos, &consumed, err, sizeof err);
        if (st == GB_RESP_ERROR) {
            FUZZ_CHECK(strncmp(err, "ERR Protocol error: ", 20) == 0, "error text '%s'", err);
            tr_printf(t, "error:%s", err);
            rc = -1;
            break;
        }
        if (st == GB_RESP_NEED_MORE) {
            size_t want = gb_resp_bytes_wanted(p);
            FUZZ_CHECK(want == 0 || want > len - pos, "wants %zu bytes but has %zu", want, len - pos);
            break;
        }
        FUZZ_CHECK(st == GB_RESP_COMMAND, "status %d", st);
        FUZZ_CHECK(consumed > 0 && consumed <= len - pos, "consumed %zu of %zu", consumed, len - pos);
        FUZZ_CHECK(p->argc >= 0, "argc %d", p->argc);
        tr_printf(t, "%d:", p->argc);
        for (int i = 0; i < p->argc; i++) {
            const gb_resp_arg *a = &p->args[i];
            FUZZ_CHECK(a->off <= consumed && a->len <= consumed - a->off, "argument %d at %zu+%zu of %zu", i, a->off,
                       a->len, consumed);
            /* A multibulk argument is the client's bytes untouched. */
            if (p->kind == 1)
                FUZZ_CHECK(memcmp(buf + pos + a->off, bytes + pos + a->off, a->len) == 0, "argument %d altered", i);
            tr_printf(t, "%zu:", a->len);
            tr_put(t, buf + pos + a->off, a->len);
        }
        t->requests++;
        gb_resp_parser_reset(p);
        pos += consumed;
    }
    free(buf);
    return rc < 0 ? -1 : (long)pos;
}

static void parse_whole(const uint8_t *s, size_t n, limits lim, transcript *t)
{
    gb_resp_parser p;
    gb_resp_parser_init(&p, lim.max_bulk);
    p.unauthenticated = lim.unauth;
    if (parse_buffer(&p, s, n, t) >= 0)
        tr_printf(t, "end");
    gb_resp_parser_free(&p);
}

static void parse_chunked(const uint8_t *s, size_t n, limits lim, uint32_t seed, transcript *t)
{
    gb_resp_parser p;
    gb_resp_parser_init(&p, lim.max_bulk);
    p.unauthenticated = lim.unauth;
    uint8_t *pending = malloc(n ? n : 1); /* received, not yet taken by a request */
    size_t have = 0, fed = 0;
    uint32_t x = seed * 2654435761u + 1;
    bool failed = false;
    while (fed < n) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5; /* xorshift32 */
        size_t k = 1 + (x >> 8) % (1u << (x % 8));
        if (k > n - fed)
            k = n - fed;
        memcpy(pending + have, s + fed, k);
        have += k;
        fed += k;
        long took = parse_buffer(&p, pending, have, t);
        if (took < 0) {
            failed = true;
            break;
        }
        memmove(pending, pending + took, have - (size_t)took);
        have -= (size_t)took;
    }
    if (!failed)
        tr_printf(t, "end");
    free(pending);
    gb_resp_parser_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    uint8_t flags = fuzz_u8(&in), small = fuzz_u8(&in);
    uint16_t seed = fuzz_u16(&in);
    if (in.left > MAX_STREAM)
        return 0;
    limits lim = {.unauth = flags & 1, .max_bulk = (flags & 2) ? small : 512LL * 1024 * 1024};
    limits none = {.unauth = false, .max_bulk = 512LL * 1024 * 1024};

    transcript whole = {0}, chunked = {0}, lenient = {0};
    parse_whole(in.p, in.left, lim, &whole);
    parse_chunked(in.p, in.left, lim, seed, &chunked);
    parse_whole(in.p, in.left, none, &lenient);

    FUZZ_CHECK(whole.len == chunked.len && (whole.len == 0 || memcmp(whole.s, chunked.s, whole.len) == 0),
               "whole and chunked parses differ:\n  whole:   %.*s\n  chunked: %.*s", (int)GB_MIN(whole.len, 400),
               whole.s, (int)GB_MIN(chunked.len, 400), chunked.s);
    /* The limits only stop a stream earlier: every request parsed under
     * them is the request parsed without them. */
    FUZZ_CHECK(whole.requests <= lenient.requests, "limits added requests");
    if (whole.requests > 0) {
        const char *end = whole.s;
        for (int i = 0; i < whole.requests; i++) {
            /* skip request i: "<argc>:" then argc x "<len>:<bytes>" */
            long argc = strtol(end, (char **)&end, 10);
            end++;
            for (long a = 0; a < argc; a++) {
                size_t l = strtoul(end, (char **)&end, 10);
                end += 1 + l;
            }
        }
        size_t prefix = (size_t)(end - whole.s);
        FUZZ_CHECK(prefix <= lenient.len && memcmp(whole.s, lenient.s, prefix) == 0,
                   "a request parsed differently under the limits");
    }
    free(whole.s);
    free(chunked.s);
    free(lenient.s);
    return 0;
}
