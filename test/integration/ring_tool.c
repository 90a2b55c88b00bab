/*
 * ring_tool: a ring client process for the integration and chaos tests
 * (test/integration/test_rings.py). Every mode claims a slot on the given
 * Unix socket with the given protocol.
 *
 *   ring_tool SOCK PROTO script           commands on stdin, replies on stdout
 *   ring_tool SOCK PROTO hold SECONDS     claim, print "claimed <slot>", sleep
 *   ring_tool SOCK PROTO churn N          N times: claim, SET/GET/INCR, release
 *   ring_tool SOCK PROTO loop             PING/INCR forever (to be SIGKILLed)
 *   ring_tool SOCK PROTO acked KEY FILE   INCRBY KEY 1 until an error; after each
 *                                         reply, the value it acknowledged is
 *                                         written over FILE (the crash tests read
 *                                         it after killing the server)
 *   ring_tool SOCK PROTO scribble SECS SEED
 *                                         write random bytes over the whole slot
 *                                         (control block and both rings), then
 *                                         report whether the server dropped us
 *   ring_tool SOCK PROTO relay            RESP commands on stdin (any number, at any
 *                                         time), replies on stdout as they come:
 *                                         over a RESP ring the ring's bytes, over
 *                                         SBE each reply and push in RESP2 form (as
 *                                         script prints them); exits when stdin
 *                                         ends or the server closes the ring, so a
 *                                         test reads the ring like a socket
 *                                         (test_ring_differential.py)
 *   ring_tool SOCK PROTO typed            exercise every typed call, print results
 *   ring_tool SOCK PROTO calls            typed calls named on stdin, one a line
 *                                         ("get KEY", "set KEY VAL" ...: see
 *                                         mode_calls); prints "ok <result>" or
 *                                         "err <the server's words>" for each
 *   ring_tool SOCK PROTO xadd             one gb_ring_xadd per stdin line
 *                                         "KEY FLAGS ID_MS ID_SEQ MAXLEN MINID_MS MINID_SEQ
 *                                         LIMIT F V [F V ...]" (FLAGS: GB_RING_XADD_* as a
 *                                         number; words without spaces); prints each reply
 *                                         in RESP2 form ($id, $-1, -error)
 *   ring_tool SOCK PROTO victim           for each stdin line "N PAUSE_US": N times
 *                                         sleep PAUSE_US (the server parks), time one
 *                                         PING, check an INCRBY's value; print
 *                                         "ok <median_ns> <p90_ns> <max_ns>" or "wrong ..."
 *   ring_tool SOCK PROTO listen N CMD ARG...
 *                                         send CMD ARG... (SUBSCRIBE, PSUBSCRIBE ...),
 *                                         print its confirmations then "ready", then
 *                                         N pushes (gb_ring_next_message); then
 *                                         UNSUBSCRIBE and PUNSUBSCRIBE, their
 *                                         confirmations, and "quiet" if nothing else
 *                                         arrives within 300 ms. A line per push:
 *                                         "<kind> [pattern] <channel> <payload|count>"
 *   ring_tool SOCK PROTO publish N CHANNEL PAYLOAD
 *                                         N times gb_ring_publish; "receivers <n>" each
 *
 * script: each command is a line "<argc>" followed by argc lines
 * "<len>" + newline + <len> raw bytes + newline. Each reply is printed in
 * RESP2 form (doubles as shortest round-trip bulk strings, as the socket
 * path prints them), so the test can compare bytes with a socket's replies.
 * PROTO is "sbe" or "resp". With RING_USER and RING_PASSWORD in the
 * environment the claim is made as that user (AUTH before RING CLAIM).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "goblin/ring_client.h"
#include "goblin/ring_layout.h"
#include "engine/base/score.h"
#include "platform/shm_atomic.h"

/* A double as goblin-core's RESP2 writer prints it (a bulk string of
 * gb_score_format's shortest text), so a native double from SBE compares
 * byte for byte with a socket's reply. */
static void print_double(double d)
{
    char buf[GB_SCORE_BUF];
    size_t n = gb_score_format(d, buf);
    printf("$%zu\r\n%.*s\r\n", n, (int)n, buf);
}

static void print_reply(const gb_reply *r)
{
    switch (r->kind) {
    case GB_REPLY_STATUS:
        printf("+%s\r\n", r->str);
        break;
    case GB_REPLY_ERROR:
        printf("-%s\r\n", r->str);
        break;
    case GB_REPLY_INTEGER:
        printf(":%lld\r\n", (long long)r->integer);
        break;
    case GB_REPLY_DOUBLE:
        print_double(r->dbl);
        break;
    case GB_REPLY_BULK:
        printf("$%zu\r\n", r->len);
        fwrite(r->str, 1, r->len, stdout);
        printf("\r\n");
        break;
    case GB_REPLY_NIL:
        printf("$-1\r\n");
        break;
    case GB_REPLY_NIL_ARRAY:
        printf("*-1\r\n");
        break;
    case GB_REPLY_ARRAY:
        printf("*%zu\r\n", r->nelem);
        for (size_t i = 0; i < r->nelem; i++)
            print_reply(&r->elem[i]);
        break;
    }
}

/* The claim's credentials: RING_USER / RING_PASSWORD, or none. */
static const gb_ring_client_options *claim_options(void)
{
    static gb_ring_client_options opt;
    opt.password = getenv("RING_PASSWORD");
    opt.username = getenv("RING_USER");
    return opt.password ? &opt : NULL;
}

static gb_ring_client *claim(const char *sock, const char *proto)
{
    gb_ring_client *rc;
    char err[256];
    gb_ring_proto p = !strcmp(proto, "sbe") ? GB_RING_SBE : GB_RING_RESP;
    int r = gb_ring_client_connect(sock, p, claim_options(), &rc, err, sizeof err);
    if (r != 0) {
        printf("claim failed: %s\n", err);
        fflush(stdout);
        return NULL;
    }
    if (!strcmp(proto, "resp3")) {
        /* A RESP ring that switched to RESP3: pushes arrive as '>' frames. */
        static const char *const hello[] = {"HELLO", "3"};
        gb_reply *reply = NULL;
        r = gb_ring_command(rc, 2, hello, NULL, &reply);
        if (r != 0 || reply->kind != GB_REPLY_ARRAY) {
            printf("HELLO 3 failed: %s\n", gb_ring_client_error(rc));
            fflush(stdout);
            gb_reply_free(reply);
            gb_ring_client_close(rc);
            return NULL;
        }
        gb_reply_free(reply);
    }
    return rc;
}

static int mode_script(gb_ring_client *rc)
{
    int argc;
    while (scanf("%d", &argc) == 1) {
        if (argc <= 0 || argc > 4096)
            return 2;
        char **argv = calloc((size_t)argc, sizeof *argv);
        size_t *lens = calloc((size_t)argc, sizeof *lens);
        for (int i = 0; i < argc; i++) {
            if (scanf("%zu", &lens[i]) != 1)
                return 2;
            getchar(); /* newline */
            argv[i] = malloc(lens[i] + 1);
            if (fread(argv[i], 1, lens[i], stdin) != lens[i])
                return 2;
        }
        gb_reply *reply;
        int r = gb_ring_command(rc, argc, (const char *const *)argv, lens, &reply);
        for (int i = 0; i < argc; i++)
            free(argv[i]);
        free(argv);
        free(lens);
        if (r != 0) {
            printf("!call failed: %s\n", gb_ring_client_error(rc));
            fflush(stdout);
            return 1;
        }
        print_reply(reply);
        fflush(stdout);
        gb_reply_free(reply);
    }
    return 0;
}

/* Counts up one key; FILE always holds the last value the server
 * acknowledged (or less, if we die between the reply and the write). */
static int mode_acked(gb_ring_client *rc, const char *key, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 2;
    printf("claimed %d\n", gb_ring_client_slot(rc));
    fflush(stdout);
    int64_t n;
    while (gb_ring_incrby(rc, key, strlen(key), 1, &n) == 0) {
        char line[32];
        int len = snprintf(line, sizeof line, "%020lld\n", (long long)n);
        if (pwrite(fd, line, (size_t)len, 0) != len)
            break;
    }
    close(fd);
    return 1;
}

/* Claims, waiting while the pool is exhausted (other churners hold it). */
static gb_ring_client *claim_retry(const char *sock, const char *proto)
{
    gb_ring_proto p = !strcmp(proto, "sbe") ? GB_RING_SBE : GB_RING_RESP;
    char err[256];
    for (int tries = 0; tries < 20000; tries++) {
        gb_ring_client *rc;
        if (gb_ring_client_connect(sock, p, claim_options(), &rc, err, sizeof err) == 0)
            return rc;
        if (!strstr(err, "exhausted") && !strstr(err, "busy"))
            break;
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    printf("claim failed: %s\n", err);
    return NULL;
}

static int mode_churn(const char *sock, const char *proto, int n)
{
    for (int i = 0; i < n; i++) {
        gb_ring_client *rc = claim_retry(sock, proto);
        if (!rc)
            return 1;
        char key[32], val[32], got[32];
        int kl = snprintf(key, sizeof key, "churn:%d:%d", (int)getpid(), i);
        int vl = snprintf(val, sizeof val, "v%d", i);
        int64_t len = 0, v = 0;
        if (gb_ring_set(rc, key, (size_t)kl, val, (size_t)vl, 0) || gb_ring_get(rc, key, (size_t)kl, got, sizeof got, &len) ||
            len != vl || memcmp(got, val, (size_t)vl) != 0 || gb_ring_incrby(rc, "churn:counter", 13, 1, &v)) {
            printf("churn %d failed: %s\n", i, gb_ring_client_error(rc));
            gb_ring_client_close(rc);
            return 1;
        }
        gb_ring_client_close(rc);
    }
    printf("churn ok\n");
    return 0;
}

static void poke_server(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
        char buf[64];
        if (write(fd, "PING\r\n", 6) == 6 && read(fd, buf, sizeof buf) < 0)
            buf[0] = 0;
    }
    if (fd >= 0)
        close(fd);
}

static int mode_scribble(gb_ring_client *rc, const char *sock_path, double seconds, unsigned seed)
{
    size_t size;
    unsigned char *mem = gb_ring_client_memory(rc, &size);
    gb_ring_header hc; /* taken before the header itself gets scribbled on */
    memcpy(&hc, mem, sizeof hc);
    srand(seed);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long writes = 0;
    for (;;) {
        /* Mostly small random writes anywhere, sometimes plausible headers. */
        size_t off = ((size_t)rand() * 2654435761u) % size;
        if (rand() % 4 == 0 && off + 8 <= size) {
            uint64_t w = ((uint64_t)(unsigned)rand() << 32) | (unsigned)(rand() % 5000);
            memcpy(mem + (off & ~(size_t)7), &w, 8);
        } else {
            mem[off] = (unsigned char)rand();
        }
        writes++;
        if ((writes & 1023) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 > seconds)
                break;
        }
    }
    /* Then a record the server cannot miss: a header with the right stamp for
     * the first request position (nothing was sent yet) and an impossible
     * length. The server must drop this slot, not read past its ring. */
    if (hc.req_offset + GB_RING_RECORD_HEADER <= size) {
        gb_ring_record_header *rec = (gb_ring_record_header *)(void *)(mem + hc.req_offset);
        gb_shm_store_relaxed_u32(&rec->len, 0xfffffff0u);
        gb_shm_store_release_u64(&rec->stamp, gb_ring_stamp(0, hc.stamp_key)); /* the length before the stamp */
        gb_shm_fence_full();
    }
    /* The server may be parked in its event loop; any socket activity makes
     * it look at the rings again (we deliberately do not use the wake
     * descriptor: a hostile client need not be polite). */
    poke_server(sock_path);
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    /* A request now: the server has dropped us (EOF on the control socket) or,
     * if the scribbling happened to look empty, still answers. Either way it
     * must stay alive (the test checks on other connections). */
    gb_reply *reply = NULL;
    const char *argv[] = {"PING"};
    int r = gb_ring_command(rc, 1, argv, NULL, &reply);
    printf("scribbled %lu writes; after: %s\n", writes, r == 0 ? "answered" : gb_ring_client_error(rc));
    if (reply)
        gb_reply_free(reply);
    return 0;
}

static int mode_typed(gb_ring_client *rc)
{
    int64_t n = 0, len = 0;
    char buf[64];
    double score = 0;
    int found = 0;
#define CHECK(call)                                                                   \
    do {                                                                              \
        int _r = (call);                                                              \
        if (_r != 0) {                                                                \
            printf("FAIL %s: %s\n", #call, gb_ring_client_error(rc));                 \
            return 1;                                                                 \
        }                                                                             \
    } while (0)
    CHECK(gb_ring_ping(rc));
    CHECK(gb_ring_set(rc, "t:s", 3, "hello", 5, 0));
    CHECK(gb_ring_get(rc, "t:s", 3, buf, sizeof buf, &len));
    printf("get %.*s %lld\n", (int)len, buf, (long long)len);
    CHECK(gb_ring_get(rc, "t:missing", 9, buf, sizeof buf, &len));
    printf("get-missing %lld\n", (long long)len);
    CHECK(gb_ring_set(rc, "t:ttl", 5, "x", 1, 100000));
    CHECK(gb_ring_incrby(rc, "t:n", 3, 5, &n));
    printf("incrby %lld\n", (long long)n);
    CHECK(gb_ring_del(rc, "t:s", 3, &n));
    printf("del %lld\n", (long long)n);
    const void *f[] = {"f1", "f2"};
    size_t fl[] = {2, 2};
    const void *v[] = {"v1", "v2"};
    size_t vl[] = {2, 2};
    CHECK(gb_ring_hset(rc, "t:h", 3, 2, f, fl, v, vl, &n));
    printf("hset %lld\n", (long long)n);
    CHECK(gb_ring_hget(rc, "t:h", 3, "f2", 2, buf, sizeof buf, &len));
    printf("hget %.*s\n", (int)len, buf);
    double sc[] = {1.5, -2.25};
    const void *m[] = {"a", "b"};
    size_t ml[] = {1, 1};
    CHECK(gb_ring_zadd(rc, "t:z", 3, 0, 2, sc, m, ml, &n, NULL));
    printf("zadd %lld\n", (long long)n);
    double inc = 0.5;
    CHECK(gb_ring_zadd(rc, "t:z", 3, GB_RING_ZADD_INCR, 1, &inc, m, ml, &n, &score));
    printf("zadd-incr %lld %.17g\n", (long long)n, score);
    CHECK(gb_ring_zscore(rc, "t:z", 3, "b", 1, &score, &found));
    printf("zscore %d %.17g\n", found, score);
    const void *lv[] = {"x", "y", "z"};
    size_t lvl[] = {1, 1, 1};
    CHECK(gb_ring_lpush(rc, "t:l", 3, 3, lv, lvl, &n));
    printf("lpush %lld\n", (long long)n);
    CHECK(gb_ring_rpop(rc, "t:l", 3, buf, sizeof buf, &len));
    printf("rpop %.*s\n", (int)len, buf);
    const void *bk[] = {"t:empty", "t:l"};
    size_t bkl[] = {7, 3};
    gb_reply *reply;
    CHECK(gb_ring_blpop(rc, 2, bk, bkl, 0.1, &reply));
    print_reply(reply);
    gb_reply_free(reply);
    CHECK(gb_ring_blpop(rc, 1, bk, bkl, 0.05, &reply));
    print_reply(reply);
    gb_reply_free(reply);
    printf("typed ok\n");
    return 0;
}

/* One typed call per stdin line: "ping", "get K", "set K V", "del K",
 * "incrby K N", "hset K F V", "hget K F", "zadd K SCORE M", "zscore K M",
 * "lpush K V", "rpop K", "blpop K SECONDS", "xadd K ID F" (ID "*" or
 * "<ms>-<seq>", value "v") (words without spaces). Over
 * SBE each is its template, over RESP its command: the test checks both
 * are admitted and refused alike. Prints "ok <result>" or "err <words>";
 * stops after a failure that is not the server's error reply (the ring is
 * gone). */
static int mode_calls(gb_ring_client *rc)
{
    char line[1024];
    while (fgets(line, sizeof line, stdin)) {
        char op[32] = "", a[256] = "", b[256] = "", c[256] = "";
        if (sscanf(line, "%31s %255s %255s %255s", op, a, b, c) < 1)
            continue;
        size_t al = strlen(a), bl = strlen(b), cl = strlen(c);
        char buf[256];
        int64_t n = 0, len = 0;
        double score = 0;
        int found = 0, r;
        gb_reply *reply = NULL;
        const void *pb[1] = {b}, *pc[1] = {c}, *pa[1] = {a};
        size_t lb[1] = {bl}, lc[1] = {cl}, la[1] = {al};
        if (!strcmp(op, "ping"))
            r = gb_ring_ping(rc);
        else if (!strcmp(op, "get"))
            r = gb_ring_get(rc, a, al, buf, sizeof buf, &len);
        else if (!strcmp(op, "set"))
            r = gb_ring_set(rc, a, al, b, bl, 0);
        else if (!strcmp(op, "del"))
            r = gb_ring_del(rc, a, al, &n);
        else if (!strcmp(op, "incrby"))
            r = gb_ring_incrby(rc, a, al, atoll(b), &n);
        else if (!strcmp(op, "hset"))
            r = gb_ring_hset(rc, a, al, 1, pb, lb, pc, lc, &n);
        else if (!strcmp(op, "hget"))
            r = gb_ring_hget(rc, a, al, b, bl, buf, sizeof buf, &len);
        else if (!strcmp(op, "zadd")) {
            score = atof(b);
            r = gb_ring_zadd(rc, a, al, 0, 1, &score, pc, lc, &n, NULL);
        } else if (!strcmp(op, "zscore"))
            r = gb_ring_zscore(rc, a, al, b, bl, &score, &found);
        else if (!strcmp(op, "lpush"))
            r = gb_ring_lpush(rc, a, al, 1, pb, lb, &n);
        else if (!strcmp(op, "rpop"))
            r = gb_ring_rpop(rc, a, al, buf, sizeof buf, &len);
        else if (!strcmp(op, "blpop"))
            r = gb_ring_blpop(rc, 1, pa, la, atof(b), &reply);
        else if (!strcmp(op, "xadd")) { /* xadd K ID F: ID "*" or "<ms>-<seq>", the value "v" */
            unsigned long long ms = 0, seq = 0;
            gb_ring_xadd_opts o = {.flags = GB_RING_XADD_AUTO_ID};
            if (strcmp(b, "*") && sscanf(b, "%llu-%llu", &ms, &seq) == 2)
                o = (gb_ring_xadd_opts){.id_ms = ms, .id_seq = seq};
            const void *xv[1] = {"v"};
            size_t xvl[1] = {1};
            r = gb_ring_xadd(rc, a, al, &o, 1, pc, lc, xv, xvl, buf, sizeof buf, &len);
        }
        else {
            printf("unknown call %s\n", op);
            return 2;
        }
        if (r != 0) {
            printf("err %s\n", gb_ring_client_error(rc));
            fflush(stdout);
            if (r != GB_EPROTO)
                return 1;
            continue;
        }
        if (!strcmp(op, "get") || !strcmp(op, "hget") || !strcmp(op, "rpop") || !strcmp(op, "xadd"))
            printf("ok %.*s\n", len < 0 ? 3 : (int)(len < (int64_t)sizeof buf ? len : (int64_t)sizeof buf),
                   len < 0 ? "nil" : buf);
        else if (!strcmp(op, "zscore"))
            printf("ok %d %.17g\n", found, score);
        else if (reply) {
            printf("ok ");
            print_reply(reply);
            printf("\n");
            gb_reply_free(reply);
        } else
            printf("ok %lld\n", (long long)n);
        fflush(stdout);
    }
    return 0;
}

/* One typed XADD per line (see the top of this file): the reply as the
 * socket would send its bytes, so the test compares them with RESP XADD's. */
static int mode_xadd(gb_ring_client *rc)
{
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        char *words[128];
        size_t nw = 0;
        for (char *save = NULL, *w = strtok_r(line, " \n", &save); w && nw < 128; w = strtok_r(NULL, " \n", &save))
            words[nw++] = w;
        if (nw < 8 || (nw - 8) % 2) {
            printf("bad line\n");
            return 2;
        }
        gb_ring_xadd_opts o = {.flags = atoi(words[1]),
                               .id_ms = strtoull(words[2], NULL, 10),
                               .id_seq = strtoull(words[3], NULL, 10),
                               .maxlen = strtoll(words[4], NULL, 10),
                               .minid_ms = strtoull(words[5], NULL, 10),
                               .minid_seq = strtoull(words[6], NULL, 10),
                               .limit = strtoll(words[7], NULL, 10)};
        size_t n = (nw - 8) / 2;
        const void *f[60], *v[60];
        size_t fl[60], vl[60];
        for (size_t i = 0; i < n; i++) {
            f[i] = words[8 + 2 * i];
            fl[i] = strlen(words[8 + 2 * i]);
            v[i] = words[9 + 2 * i];
            vl[i] = strlen(words[9 + 2 * i]);
        }
        char id[GB_RING_XADD_ID_MAX];
        int64_t idlen = 0;
        int r = gb_ring_xadd(rc, words[0], strlen(words[0]), &o, n, f, fl, v, vl, id, sizeof id, &idlen);
        if (r == GB_EPROTO)
            printf("-%s\r\n", gb_ring_client_error(rc));
        else if (r != 0) {
            printf("failed %d %s\n", r, gb_ring_client_error(rc));
            return 1;
        } else if (idlen < 0)
            printf("$-1\r\n");
        else
            printf("$%lld\r\n%.*s\r\n", (long long)idlen, (int)idlen, id);
        fflush(stdout);
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The isolation test's well-behaved client: a PING after an idle pause
 * (long enough for the server to park, so the request must wake it through
 * this slot's wake descriptor), then an INCRBY whose value proves that every
 * request of ours ran exactly once. */
static int mode_victim(gb_ring_client *rc)
{
    char key[32];
    size_t klen = (size_t)snprintf(key, sizeof key, "victim:%d", (int)getpid());
    int64_t expect = 0;
    unsigned n, pause_us;
    while (scanf("%u %u", &n, &pause_us) == 2) {
        if (n == 0 || n > 100000)
            return 2;
        uint64_t *lat = calloc(n, sizeof *lat);
        const char *wrong = NULL;
        for (unsigned i = 0; i < n && !wrong; i++) {
            struct timespec ts = {(time_t)(pause_us / 1000000u), (long)(pause_us % 1000000u) * 1000};
            nanosleep(&ts, NULL);
            uint64_t t0 = mono_ns();
            if (gb_ring_ping(rc) != 0) {
                wrong = "ping failed";
                break;
            }
            lat[i] = mono_ns() - t0;
            int64_t v = 0;
            if (gb_ring_incrby(rc, key, klen, 1, &v) != 0)
                wrong = "incrby failed";
            else if (v != ++expect)
                wrong = "incrby returned the wrong value";
        }
        if (wrong) {
            printf("wrong %s: %s\n", wrong, gb_ring_client_error(rc));
            fflush(stdout);
            free(lat);
            return 1;
        }
        qsort(lat, n, sizeof *lat, cmp_u64);
        printf("ok %llu %llu %llu\n", (unsigned long long)lat[n / 2], (unsigned long long)lat[n * 9 / 10],
               (unsigned long long)lat[n - 1]);
        fflush(stdout);
        free(lat);
    }
    return 0;
}

static const char *const push_words[] = {
    [GB_RING_MSG_MESSAGE] = "message",         [GB_RING_MSG_PMESSAGE] = "pmessage",
    [GB_RING_MSG_SMESSAGE] = "smessage",       [GB_RING_MSG_SUBSCRIBE] = "subscribe",
    [GB_RING_MSG_UNSUBSCRIBE] = "unsubscribe", [GB_RING_MSG_PSUBSCRIBE] = "psubscribe",
    [GB_RING_MSG_PUNSUBSCRIBE] = "punsubscribe", [GB_RING_MSG_SSUBSCRIBE] = "ssubscribe",
    [GB_RING_MSG_SUNSUBSCRIBE] = "sunsubscribe",
};

/* Reads one push and prints it; returns its kind, or the error code. */
static int print_push(gb_ring_client *rc, uint64_t timeout_ns, int64_t *count)
{
    gb_ring_message m;
    int r = gb_ring_next_message(rc, &m, timeout_ns);
    if (r != 0)
        return r;
    printf("%s", push_words[m.kind]);
    if (m.pattern)
        printf(" %.*s", (int)m.pattern_len, m.pattern);
    if (m.channel)
        printf(" %.*s", (int)m.channel_len, m.channel);
    else
        printf(" (nil)");
    if (m.kind >= GB_RING_MSG_SUBSCRIBE)
        printf(" %lld\n", (long long)m.count);
    else
        printf(" %.*s\n", (int)m.payload_len, m.payload);
    if (count)
        *count = m.count;
    int kind = (int)m.kind;
    gb_ring_message_done(rc);
    return kind;
}

/* How long the relay waits for replies before it looks at stdin again:
 * the delay a request may wait, not a limit on replies. */
#define RELAY_WAIT_NS (500ull * 1000)

#define LISTEN_TIMEOUT_NS (30ull * 1000 * 1000 * 1000)

static int mode_listen(gb_ring_client *rc, int n, int argc, char **argv)
{
    if (gb_ring_submit(rc, argc, (const char *const *)argv, NULL) != 0)
        return 1;
    for (int i = 1; i < argc; i++)
        if (print_push(rc, LISTEN_TIMEOUT_NS, NULL) < 0)
            return 1;
    printf("ready\n");
    fflush(stdout);
    for (int i = 0; i < n; i++) {
        int r = print_push(rc, LISTEN_TIMEOUT_NS, NULL);
        if (r < 0) {
            printf("error %s\n", gb_ring_client_error(rc));
            return 1;
        }
        fflush(stdout);
    }
    static const char *const unsub[] = {"UNSUBSCRIBE"}, *const punsub[] = {"PUNSUBSCRIBE"};
    if (gb_ring_submit(rc, 1, unsub, NULL) != 0 || gb_ring_submit(rc, 1, punsub, NULL) != 0)
        return 1;
    /* Confirmations until PUNSUBSCRIBE's last one (count 0). */
    for (;;) {
        int64_t count = -1;
        int r = print_push(rc, LISTEN_TIMEOUT_NS, &count);
        if (r < 0)
            return 1;
        if (r == GB_RING_MSG_PUNSUBSCRIBE && count == 0)
            break;
    }
    int r = print_push(rc, 300ull * 1000 * 1000, NULL);
    if (r == GB_ETIMEDOUT)
        printf("quiet\n");
    return r == GB_ETIMEDOUT ? 0 : 1;
}

static int mode_publish(gb_ring_client *rc, int n, const char *channel, const char *payload)
{
    for (int i = 0; i < n; i++) {
        int64_t receivers;
        if (gb_ring_publish(rc, channel, strlen(channel), payload, strlen(payload), &receivers) != 0) {
            printf("err %s\n", gb_ring_client_error(rc));
            return 1;
        }
        printf("receivers %lld\n", (long long)receivers);
    }
    return 0;
}

/* ---- relay: a ring as a byte stream (the differential tests) ---------------------------- */

typedef struct relay_buf {
    char *data;
    size_t len, cap;
} relay_buf;

static int relay_append(relay_buf *b, const char *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + n)
            cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown)
            return -1;
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static void relay_consume(relay_buf *b, size_t n)
{
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

/* A decimal after a type byte, up to CRLF: its value and the position
 * after the CRLF (0: incomplete, -1: not a number line of that type). */
static long long relay_number(const relay_buf *b, size_t pos, char type, size_t *next)
{
    if (pos >= b->len)
        return 0;
    if (b->data[pos] != type)
        return -1;
    const char *cr = memchr(b->data + pos, '\r', b->len - pos);
    if (!cr || (size_t)(cr - b->data) + 1 >= b->len)
        return 0;
    char *end;
    long long v = strtoll(b->data + pos + 1, &end, 10);
    if (end != cr || cr[1] != '\n' || v < 0 || v > (1LL << 32))
        return -1;
    *next = (size_t)(cr - b->data) + 2;
    return v;
}

/* One RESP multibulk command at the start of b (what a test client
 * sends): argc and argument views into b; returns the bytes it takes, 0
 * while incomplete, -1 when malformed. */
static long relay_command(const relay_buf *b, int *argc, const char **argv, size_t *lens, int max)
{
    size_t pos = 0;
    long long n = relay_number(b, 0, '*', &pos);
    if (n < 0 || (n == 0 && pos)) /* not a multibulk, or "*0" */
        return -1;
    if (n == 0)
        return 0;
    if (n > max)
        return -1;
    for (long long i = 0; i < n; i++) {
        size_t data = 0;
        long long len = relay_number(b, pos, '$', &data);
        if (len < 0)
            return -1;
        if (data == 0 || b->len - data < (size_t)len + 2)
            return 0;
        argv[i] = b->data + data;
        lens[i] = (size_t)len;
        pos = data + (size_t)len + 2;
    }
    *argc = (int)n;
    return (long)pos;
}

/* Sends what stdin brought: over RESP the bytes as they are (records of
 * at most the ring's limit), over SBE each complete command as a Generic
 * request. Returns 0, or -1 when the ring or the input failed. */
static int relay_requests(gb_ring_client *rc, relay_buf *in)
{
    if (gb_ring_client_protocol(rc) == GB_RING_RESP) {
        size_t max = gb_ring_client_max_message(rc), off = 0;
        while (off < in->len) {
            size_t n = in->len - off < max ? in->len - off : max;
            if (gb_ring_client_send(rc, in->data + off, n) != 0)
                return -1;
            off += n;
        }
        in->len = 0;
        return 0;
    }
    enum { MAX_ARGS = 65536 };
    static const char *argv[MAX_ARGS];
    static size_t lens[MAX_ARGS];
    for (;;) {
        int argc = 0;
        long used = relay_command(in, &argc, argv, lens, MAX_ARGS);
        if (used < 0) {
            fprintf(stderr, "relay: malformed request on stdin\n");
            return -1;
        }
        if (used == 0)
            return 0;
        if (gb_ring_submit(rc, argc, argv, lens) != 0)
            return -1;
        relay_consume(in, (size_t)used);
    }
}

/* Writes every reply record that arrives within timeout_ns to stdout: over
 * RESP its bytes, over SBE the reply (or push) in RESP2 form. Returns 0, 1
 * when the server closed the ring, -1 on another failure. */
static int relay_replies(gb_ring_client *rc, uint64_t timeout_ns)
{
    const void *msg;
    size_t len;
    int r;
    while ((r = gb_ring_client_recv(rc, &msg, &len, timeout_ns)) == 0) {
        timeout_ns = 0;
        if (gb_ring_client_protocol(rc) == GB_RING_RESP) {
            fwrite(msg, 1, len, stdout);
            gb_ring_client_recv_done(rc);
            continue;
        }
        gb_reply *reply; /* the record is still there: collect decodes it */
        if (gb_ring_collect(rc, &reply) != 0)
            return -1;
        print_reply(reply);
        gb_reply_free(reply);
    }
    fflush(stdout);
    return r == GB_ETIMEDOUT ? 0 : r == GB_ECLOSED ? 1 : -1;
}

/* stdin: RESP commands, any number at a time; stdout: the replies, as they
 * come, in RESP form (see the top of this file). Ends at EOF on stdin, or
 * when the server closes the ring (QUIT, CLIENT KILL, a violation). */
static int mode_relay(gb_ring_client *rc)
{
    relay_buf in = {0};
    char chunk[65536];
    int rcode = 0;
    for (;;) {
        struct pollfd p = {0, POLLIN, 0};
        if (poll(&p, 1, 0) > 0) {
            ssize_t n = read(0, chunk, sizeof chunk);
            if (n <= 0)
                break;
            if (relay_append(&in, chunk, (size_t)n) != 0 || relay_requests(rc, &in) != 0) {
                rcode = 1;
                break;
            }
        }
        int r = relay_replies(rc, RELAY_WAIT_NS);
        if (r != 0) {
            rcode = r < 0;
            if (r < 0)
                fprintf(stderr, "relay: %s\n", gb_ring_client_error(rc));
            break;
        }
    }
    free(in.data);
    return rcode;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: ring_tool SOCK sbe|resp|resp3 MODE [args]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    const char *sock = argv[1], *proto = argv[2], *mode = argv[3];
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    if (!strcmp(mode, "churn"))
        return mode_churn(sock, proto, argc > 4 ? atoi(argv[4]) : 10);
    /* A relay waits for a slot: the differential tests claim one per
     * command, faster than a loaded machine may refill released slots
     * (docs/ring-protocol.md, "Claim churn"). */
    gb_ring_client *rc = !strcmp(mode, "relay") ? claim_retry(sock, proto) : claim(sock, proto);
    if (!rc)
        return 1;
    int rcode = 0;
    if (!strcmp(mode, "script")) {
        rcode = mode_script(rc);
    } else if (!strcmp(mode, "hold")) {
        printf("claimed %d\n", gb_ring_client_slot(rc));
        fflush(stdout);
        sleep((unsigned)(argc > 4 ? atoi(argv[4]) : 5));
    } else if (!strcmp(mode, "loop")) {
        printf("looping\n");
        fflush(stdout);
        for (int64_t n = 0;; n++) {
            if (gb_ring_ping(rc) || gb_ring_incrby(rc, "loop:counter", 12, 1, &n))
                break;
        }
        rcode = 1;
    } else if (!strcmp(mode, "acked") && argc > 5) {
        rcode = mode_acked(rc, argv[4], argv[5]);
    } else if (!strcmp(mode, "scribble")) {
        rcode = mode_scribble(rc, sock, argc > 4 ? atof(argv[4]) : 1.0, argc > 5 ? (unsigned)atoi(argv[5]) : 1);
    } else if (!strcmp(mode, "relay")) {
        rcode = mode_relay(rc);
    } else if (!strcmp(mode, "typed")) {
        rcode = mode_typed(rc);
    } else if (!strcmp(mode, "calls")) {
        rcode = mode_calls(rc);
    } else if (!strcmp(mode, "xadd")) {
        rcode = mode_xadd(rc);
    } else if (!strcmp(mode, "listen") && argc > 5) {
        rcode = mode_listen(rc, atoi(argv[4]), argc - 5, argv + 5);
    } else if (!strcmp(mode, "publish") && argc > 6) {
        rcode = mode_publish(rc, atoi(argv[4]), argv[5], argv[6]);
    } else if (!strcmp(mode, "victim")) {
        printf("claimed %d\n", gb_ring_client_slot(rc));
        fflush(stdout);
        rcode = mode_victim(rc);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        rcode = 2;
    }
    fflush(stdout);
    gb_ring_client_close(rc);
    return rcode;
}
