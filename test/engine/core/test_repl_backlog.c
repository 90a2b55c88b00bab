/* engine/core/replication/repl.c: the backlog ring (wrap-around, which offsets it can
 * serve, resizing keeps the newest bytes) checked against a plain copy of
 * the whole stream; and, through the engine, the stream a replica gets
 * (+FULLRESYNC, the RDB, SELECT before the first effect), PSYNC from an
 * offset inside and outside the backlog, and CONFIG SET repl-backlog-size. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine_harness.h"
#include "engine/base/mem.h"
#include "engine/core/request/blocking.h"
#include "engine/core/replication/repl.h"
#include "engine/persist/persist.h"

/* ---- the ring alone --------------------------------------------------------------- */

typedef struct collected {
    char buf[4096];
    size_t len;
} collected;

static void collect(void *ctx, const char *p, size_t n)
{
    collected *c = ctx;
    memcpy(c->buf + c->len, p, n);
    c->len += n;
}

/* Bytes copied out into a caller's buffer (larger than collected's). */
typedef struct span {
    char *p;
    size_t n;
} span;

static void span_collect(void *ctx, const char *p, size_t n)
{
    span *s = ctx;
    memcpy(s->p + s->n, p, n);
    s->n += n;
}

/* The ring holds exactly the stream's last min(size, total) bytes, from
 * the right offset, after appends of every length (wrapping many times,
 * and longer than the ring itself). */
static void test_wraparound_matches_stream(void **state)
{
    (void)state;
    char stream[4096];
    size_t total = 0;
    gb_repl_backlog b;
    gb_repl_backlog_init(&b, 37, 1);
    for (size_t step = 1; total + step < sizeof stream && step < 80; step += 3) {
        char chunk[128];
        for (size_t i = 0; i < step; i++)
            chunk[i] = (char)('a' + (total + i) % 26);
        memcpy(stream + total, chunk, step);
        total += step;
        gb_repl_backlog_append(&b, chunk, step);
        size_t held = total < 37 ? total : 37;
        assert_int_equal(b.histlen, held);
        assert_int_equal(b.offset, (int64_t)(total - held) + 1);
        collected got = {.len = 0};
        assert_int_equal(gb_repl_backlog_copy_from(&b, b.offset, collect, &got), held);
        assert_memory_equal(got.buf, stream + total - held, held);
    }
    gb_repl_backlog_free(&b);
}

/* Offsets served: from the first byte held to one past the last (nothing
 * to send); one before or two past are not. */
static void test_offset_in_range(void **state)
{
    (void)state;
    gb_repl_backlog b;
    gb_repl_backlog_init(&b, 10, 101);
    assert_true(gb_repl_backlog_covers(&b, 101)); /* empty: only the next byte */
    assert_false(gb_repl_backlog_covers(&b, 100));
    assert_false(gb_repl_backlog_covers(&b, 102));
    gb_repl_backlog_append(&b, "0123456789abcd", 14); /* offsets 101..114, 105.. kept */
    assert_int_equal(b.offset, 105);
    assert_false(gb_repl_backlog_covers(&b, 104));
    assert_true(gb_repl_backlog_covers(&b, 105));
    assert_true(gb_repl_backlog_covers(&b, 115));
    assert_false(gb_repl_backlog_covers(&b, 116));
    assert_false(gb_repl_backlog_covers(&b, -1));
    collected got = {.len = 0};
    assert_int_equal(gb_repl_backlog_copy_from(&b, 111, collect, &got), 4);
    assert_memory_equal(got.buf, "abcd", 4);
    got.len = 0;
    assert_int_equal(gb_repl_backlog_copy_from(&b, 115, collect, &got), 0);
    gb_repl_backlog_free(&b);
    gb_repl_backlog unused = {0};
    assert_false(gb_repl_backlog_covers(&unused, 0)); /* no backlog: nothing */
}

/* Shrinking keeps the newest bytes (offset moves up); growing keeps all
 * and appends continue in order. */
static void test_resize(void **state)
{
    (void)state;
    gb_repl_backlog b;
    gb_repl_backlog_init(&b, 8, 1);
    gb_repl_backlog_append(&b, "abcdefghijk", 11); /* holds defghijk from 4 */
    gb_repl_backlog_resize(&b, 5);
    assert_int_equal(b.size, 5);
    assert_int_equal(b.cap, 5);
    assert_int_equal(b.histlen, 5);
    assert_int_equal(b.offset, 7);
    collected got = {.len = 0};
    gb_repl_backlog_copy_from(&b, 7, collect, &got);
    assert_memory_equal(got.buf, "ghijk", 5);
    gb_repl_backlog_resize(&b, 20);
    gb_repl_backlog_append(&b, "LMN", 3);
    got.len = 0;
    assert_int_equal(gb_repl_backlog_copy_from(&b, 7, collect, &got), 8);
    assert_memory_equal(got.buf, "ghijkLMN", 8);
    gb_repl_backlog_free(&b);
}

/* A large size costs what the stream filled: the ring starts small and
 * grows (unwrapped, bytes in order) until it reaches its size, then wraps. */
static void test_grows_to_its_size(void **state)
{
    (void)state;
    enum { SIZE = 100000, TOTAL = 250000 };
    static char stream[TOTAL];
    gb_repl_backlog b;
    gb_repl_backlog_init(&b, SIZE, 1);
    assert_true(b.cap < SIZE);
    size_t total = 0;
    for (size_t step = 1; total < TOTAL; step = step * 3 % 9973 + 1) {
        size_t n = GB_MIN(step, (size_t)TOTAL - total);
        for (size_t i = 0; i < n; i++)
            stream[total + i] = (char)(total + i);
        gb_repl_backlog_append(&b, stream + total, n);
        total += n;
        assert_true(b.cap >= GB_MIN(total, (size_t)SIZE));
        assert_true(b.cap <= SIZE);
    }
    assert_int_equal(b.cap, SIZE);
    assert_int_equal(b.histlen, SIZE);
    assert_int_equal(b.offset, TOTAL - SIZE + 1);
    static char whole[SIZE];
    span got = {whole, 0};
    gb_repl_backlog_copy_from(&b, b.offset, span_collect, &got);
    assert_int_equal(got.n, SIZE);
    assert_memory_equal(whole, stream + TOTAL - SIZE, SIZE);
    gb_repl_backlog_free(&b);
}

/* What the ring holds is the stream's tail after every append while it
 * grows, also when an append fills its capacity exactly: the next append
 * grows the ring, and its bytes go after the history, not over its
 * oldest bytes (which a PSYNC from before that point would then have got
 * as garbage). */
static void test_growth_after_an_exact_fill(void **state)
{
    (void)state;
    enum { SIZE = 100000, TOTAL = 150000 };
    static char stream[TOTAL];
    static char whole[SIZE];
    for (size_t i = 0; i < TOTAL; i++)
        stream[i] = (char)(i * 7 + i / 251);
    /* Appends that end exactly on every capacity the ring passes through
     * (16 KB, 32 KB, 64 KB from BACKLOG_FIRST_CAP), then odd sizes. */
    size_t cuts[] = {23, 16384, 16394, 32768, 32795, 65536, 65537, 99999, 100000, 100001, TOTAL};
    gb_repl_backlog b;
    gb_repl_backlog_init(&b, SIZE, 1);
    size_t total = 0;
    for (size_t k = 0; k < GB_ARRAY_LEN(cuts); k++) {
        gb_repl_backlog_append(&b, stream + total, cuts[k] - total);
        total = cuts[k];
        size_t held = GB_MIN(total, (size_t)SIZE);
        assert_int_equal(b.histlen, held);
        assert_int_equal(b.offset, (int64_t)(total - held + 1));
        span got = {whole, 0};
        assert_int_equal(gb_repl_backlog_copy_from(&b, b.offset, span_collect, &got), held);
        assert_memory_equal(whole, stream + total - held, held);
    }
    gb_repl_backlog_free(&b);
}

/* ---- through the engine: a replica client ------------------------------------------ */

typedef struct replica_sink {
    char buf[1 << 16];
    size_t len;
} replica_sink;

static replica_sink sink;

static void r_write_raw(gb_client *c, const char *p, size_t n)
{
    (void)c;
    assert_true(sink.len + n <= sizeof sink.buf);
    memcpy(sink.buf + sink.len, p, n);
    sink.len += n;
}
static void r_flush(gb_client *c) { (void)c; }
static void r_close(gb_client *c) { (void)c; }
static void r_describe(const gb_client *c, gb_client_desc *d)
{
    (void)c;
    snprintf(d->addr, sizeof d->addr, "10.0.0.9:4242");
}
static const gb_client_hooks replica_hooks = {r_flush, r_close, r_describe, NULL, r_write_raw};

static gb_client *replica_client(harness *h, harness_out *out)
{
    return gb_client_new(h->eng, &harness_ops, out, &replica_hooks, NULL, GB_CLIENT_AUTHED);
}

static void exec_on(gb_client *c, int argc, const char **words)
{
    gb_slice argv[8];
    for (int i = 0; i < argc; i++)
        argv[i] = gb_slice_cstr(words[i]);
    gb_gate_execute(c, argc, argv);
}

static void no_sync_delay(gb_settings *s) { s->repl_diskless_sync_delay = 0; }

/* An engine with the persistence service (gb_engine_new makes it), which
 * makes full syncs in the background (engine/persist/repl_fsync.h),
 * starting them at once; freed with repl_harness_free. */
static harness *repl_harness(void)
{
    harness *h = harness_new(no_sync_delay);
    assert_non_null(gb_persist_of(h->eng)); /* gb_engine_new made it */
    return h;
}

static void repl_harness_free(harness *h)
{
    gb_persist_free(gb_persist_of(h->eng));
    harness_free(h);
}

/* PSYNC from a replica that takes a diskless RDB, the background work it
 * starts run to its end, and the replica's first ACK. */
static void psync(harness *h, gb_client *r, harness_out *out, const char *replid, const char *offset)
{
    exec_on(r, 3, (const char *[]){"REPLCONF", "capa", "eof"});
    out->len = 0; /* its +OK: replies stop at PSYNC */
    exec_on(r, 3, (const char *[]){"PSYNC", replid, offset});
    while (gb_engine_background_step(h->eng, UINT64_MAX) != GB_BG_IDLE)
        ;
    /* The replica loaded the RDB: the stream starts on its first ACK. */
    exec_on(r, 3, (const char *[]){"REPLCONF", "ACK", "0"});
}

static const char *find(const char *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(hay + i, needle, k) == 0)
            return hay + i;
    return NULL;
}

static void test_full_then_stream_then_partial(void **state)
{
    (void)state;
    harness *h = repl_harness();
    run(h, "SET before 1");
    harness_out rout = {.len = 0};
    gb_client *r = replica_client(h, &rout);
    sink.len = 0;
    psync(h, r, &rout, "?", "-1");
    char expect[128];
    snprintf(expect, sizeof expect, "+FULLRESYNC %s 0\r\n$", gb_repl_id(h->eng));
    assert_memory_equal(sink.buf, expect, strlen(expect));
    assert_non_null(find(sink.buf, sink.len, "REDIS0010"));
    assert_int_equal(rout.len, 0); /* no reply beside the stream */
    size_t after_rdb = sink.len;
    /* Nothing the replica sends gets a reply, whatever it asks; its ACKs
     * are taken even while clients are paused. */
    exec_on(r, 3, (const char *[]){"CLIENT", "REPLY", "ON"});
    exec_on(r, 2, (const char *[]){"HELLO", "3"});
    exec_on(r, 1, (const char *[]){"PING"});
    gb_pause_start(h->eng, GB_PAUSE_ALL, UINT64_MAX);
    exec_on(r, 3, (const char *[]){"REPLCONF", "ACK", "0"});
    assert_false(r->flags & GB_CLIENT_BLOCKED);
    gb_pause_lift(h->eng);
    assert_int_equal(rout.len, 0);
    assert_int_equal(sink.len, after_rdb);
    run(h, "SET k v");
    static const char first[] = "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
    assert_int_equal(sink.len - after_rdb, sizeof first - 1);
    assert_memory_equal(sink.buf + after_rdb, first, sizeof first - 1);
    assert_int_equal(gb_repl_offset(h->eng), (int64_t)(sizeof first - 1));

    /* The link drops; a new connection continues from offset 24 (after
     * the SELECT): the SET comes again, alone. */
    gb_client_free(r);
    sink.len = 0;
    r = replica_client(h, &rout);
    exec_on(r, 5, (const char *[]){"REPLCONF", "capa", "eof", "capa", "psync2"});
    exec_on(r, 3, (const char *[]){"PSYNC", gb_repl_id(h->eng), "24"});
    /* it said capa psync2: the ID follows +CONTINUE (a bare one otherwise) */
    snprintf(expect, sizeof expect, "+CONTINUE %s\r\n%s", gb_repl_id(h->eng), first + 23);
    assert_int_equal(sink.len, strlen(expect));
    assert_memory_equal(sink.buf, expect, sink.len);
    gb_client_free(r);

    /* Outside the backlog or another history: a full sync. */
    const char *bad[][2] = {{"*", "0"}, {"*", "9999"}, {"0123456789012345678901234567890123456789", "1"}};
    for (size_t i = 0; i < 3; i++) {
        sink.len = 0;
        r = replica_client(h, &rout);
        psync(h, r, &rout, strcmp(bad[i][0], "*") ? bad[i][0] : gb_repl_id(h->eng), bad[i][1]);
        assert_memory_equal(sink.buf, "+FULLRESYNC ", 12);
        gb_client_free(r);
    }
    repl_harness_free(h);
}

static const char *info_field(harness *h, const char *name, char *out, size_t cap);

/* Following a primary: our own effects are not streamed, the primary's
 * bytes fed in are (sub-replicas get its stream exactly, offsets agree);
 * WAIT is refused and min-replicas-to-write does not apply, as on a Redis
 * replica. */
static void test_following_proxies_the_primary(void **state)
{
    (void)state;
    harness *h = repl_harness();
    harness_out rout = {.len = 0};
    gb_client *r = replica_client(h, &rout);
    psync(h, r, &rout, "?", "-1");
    gb_repl_set_following(h->eng, true);
    gb_repl_adopt(h->eng, "0123456789012345678901234567890123456789", 1000);
    sink.len = 0;
    run(h, "SET k v");
    assert_int_equal(sink.len, 0);
    static const char from_primary[] = "*1\r\n$4\r\nPING\r\n";
    gb_repl_feed_stream(h->eng, from_primary, sizeof from_primary - 1);
    assert_int_equal(sink.len, sizeof from_primary - 1);
    assert_int_equal(gb_repl_offset(h->eng), 1000 + (int64_t)sizeof from_primary - 1);
    assert_string_equal(gb_repl_id(h->eng), "0123456789012345678901234567890123456789");
    assert_string_equal(run(h, "WAIT 1 0"),
                        "-ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if "
                        "a replica is configured to be writable (which is not the default) writes to replicas are "
                        "just local and are not propagated.");
    run(h, "CONFIG SET min-replicas-to-write 5");
    assert_string_equal(run(h, "SET k2 v"), "+OK");
    char first[64];
    assert_string_equal(info_field(h, "repl_backlog_first_byte_offset:", first, sizeof first), "1001");
    /* Promoted: the old history stays valid up to here, ours streams again. */
    gb_repl_set_following(h->eng, false);
    gb_repl_shift_replid(h->eng);
    char v[64];
    assert_string_equal(info_field(h, "master_replid2:", v, sizeof v), "0123456789012345678901234567890123456789");
    assert_int_equal(atoll(info_field(h, "second_repl_offset:", v, sizeof v)), 1000 + 14 + 1);
    assert_string_equal(run(h, "SET k3 v"), "-NOREPLICAS Not enough good replicas to write.");
    run(h, "CONFIG SET min-replicas-to-write 0");
    sink.len = 0;
    run(h, "SET k3 v");
    assert_non_null(find(sink.buf, sink.len, "SELECT"));
    gb_client_free(r);
    repl_harness_free(h);
}

static const char *info_field(harness *h, const char *name, char *out, size_t cap)
{
    const char *t = run(h, "INFO replication");
    const char *p = strstr(t, name);
    assert_non_null(p);
    p += strlen(name);
    size_t n = strcspn(p, "\r\n");
    snprintf(out, cap, "%.*s", (int)n, p);
    return out;
}

/* CONFIG SET repl-backlog-size: INFO shows it (raised to 16 KiB, Redis's
 * least) and the ring takes it at the next cron tick, keeping the newest
 * bytes. */
static void test_config_set_resizes(void **state)
{
    (void)state;
    harness *h = repl_harness();
    harness_out rout = {.len = 0};
    gb_client *r = replica_client(h, &rout);
    psync(h, r, &rout, "?", "-1");
    char v[64];
    assert_string_equal(info_field(h, "repl_backlog_active:", v, sizeof v), "1");
    for (int i = 0; i < 1000; i++) /* 33 KB of stream */
        run(h, "SET key value");
    assert_string_equal(run(h, "CONFIG SET repl-backlog-size 16"), "+OK");
    gb_engine_cron(h->eng);
    assert_string_equal(info_field(h, "repl_backlog_size:", v, sizeof v), "16384");
    assert_string_equal(info_field(h, "repl_backlog_histlen:", v, sizeof v), "16384");
    char off[64];
    info_field(h, "master_repl_offset:", off, sizeof off);
    assert_int_equal(atoll(info_field(h, "repl_backlog_first_byte_offset:", v, sizeof v)), atoll(off) - 16383);
    gb_client_free(r);
    repl_harness_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wraparound_matches_stream),
        cmocka_unit_test(test_offset_in_range),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_grows_to_its_size),
        cmocka_unit_test(test_growth_after_an_exact_fill),
        cmocka_unit_test(test_full_then_stream_then_partial),
        cmocka_unit_test(test_config_set_resizes),
        cmocka_unit_test(test_following_proxies_the_primary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
