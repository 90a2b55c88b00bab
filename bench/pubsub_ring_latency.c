#define _POSIX_C_SOURCE 200809L
/*
 * pubsub_ring_latency: publish-to-receive latency of one PUBLISH delivered to
 * 1, 10 and 100 subscribers, over goblin-core's SBE rings and over Unix
 * sockets (goblin-core and redis-server started side by side), plus the
 * ring PING round trip of the same run.
 *
 * One client thread does everything, so both timestamps come from the same
 * clock and no second spinning thread shares the client CPU (the machine
 * this was written for has two): it stamps t0, sends the PUBLISH (over a
 * ring: the typed Publish template as a raw record, without waiting for its
 * reply), then reads the message from each subscriber in turn (rings:
 * gb_ring_next_message, spinning; sockets: a blocking read of one complete
 * push), stamps t1 when the last subscriber has it, and only then collects
 * the publisher's reply. The server writes every subscriber's message before
 * the publisher's reply, so nothing is waiting on the client. Reported:
 * t1 - t0 for the last subscriber (fan-out complete), and for the first.
 *
 * Rows are interleaved in rounds (every row once per round, redis-server's
 * rows in the same rounds) and the medians of the per-round p50s are shown.
 *
 *   build-release/pubsub_ring_latency [goblin-core] [--redis PATH] [--rounds R] [--samples N] [--csv]
 *   SERVER_CORE (default 1) and CLIENT_CORE (default 0) choose the CPUs; both
 *   servers are pinned to SERVER_CORE.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_common.h"
#include "goblin/ring_client.h"
#include "transport/sbe/sbe_codec.h"

#define MAX_ROUNDS 64
#define MAX_SUBS 100
static const int fanouts[] = {1, 10, 100};
#define NFAN 3

/* ---- rings ---- */

typedef struct ring_side {
    gb_ring_client *pub;
    gb_ring_client *subs[MAX_SUBS];
    uint8_t msg[256];
    size_t msg_len;
} ring_side;

static gb_ring_client *claim(const char *sock)
{
    gb_ring_client *rc;
    char err[256];
    if (gb_ring_client_connect(sock, GB_RING_SBE, NULL, &rc, err, sizeof err) != 0) {
        fprintf(stderr, "cannot claim an SBE ring: %s\n", err);
        return NULL;
    }
    return rc;
}

static int ring_setup(ring_side *r, const char *sock)
{
    if (!(r->pub = claim(sock)))
        return -1;
    for (int i = 0; i < MAX_SUBS; i++) {
        if (!(r->subs[i] = claim(sock)))
            return -1;
        /* channel "c<i/10>" style is not needed: subscriber i listens on
         * the fan-out channels it belongs to (f1: i < 1, f10: i < 10 ...). */
        const char *argv[4] = {"SUBSCRIBE", "f100", "f10", "f1"};
        int argc = i < 1 ? 4 : i < 10 ? 3 : 2;
        if (gb_ring_submit(r->subs[i], argc, argv, NULL) != 0)
            return -1;
        for (int k = 1; k < argc; k++) {
            gb_ring_message m;
            if (gb_ring_next_message(r->subs[i], &m, 5000000000ull) != 0)
                return -1;
            gb_ring_message_done(r->subs[i]);
        }
    }
    return 0;
}

/* One publish to the fan-out channel of n subscribers; first/last receive. */
static int ring_once(ring_side *r, int n, uint64_t *first, uint64_t *last)
{
    char ch[8];
    snprintf(ch, sizeof ch, "f%d", n);
    static const char payload[] = "0123456789abcdef0123456789abcdef"; /* 32 bytes */
    size_t len = gb_sbe_encode_publish(r->msg, sizeof r->msg, gb_slice_cstr(ch),
                                       gb_slice_make(payload, sizeof payload - 1));
    uint64_t t0 = gb_bench_now_ns();
    if (gb_ring_client_send(r->pub, r->msg, len) != 0)
        return -1;
    for (int i = 0; i < n; i++) {
        gb_ring_message m;
        if (gb_ring_next_message(r->subs[i], &m, 5000000000ull) != 0 || m.kind != GB_RING_MSG_MESSAGE)
            return -1;
        gb_ring_message_done(r->subs[i]);
        if (i == 0)
            *first = gb_bench_now_ns() - t0;
    }
    *last = gb_bench_now_ns() - t0;
    const void *rep;
    size_t rl;
    if (gb_ring_client_recv(r->pub, &rep, &rl, 5000000000ull) != 0)
        return -1;
    gb_ring_client_recv_done(r->pub);
    return 0;
}

/* ---- sockets ---- */

typedef struct sock_side {
    gb_resp_conn pub;
    gb_resp_conn subs[MAX_SUBS];
} sock_side;

static int sock_setup(sock_side *s, const char *path)
{
    if (gb_resp_connect_unix(&s->pub, path) != 0)
        return -1;
    for (int i = 0; i < MAX_SUBS; i++) {
        if (gb_resp_connect_unix(&s->subs[i], path) != 0)
            return -1;
        const char *argv[4] = {"SUBSCRIBE", "f100", "f10", "f1"};
        int argc = i < 1 ? 4 : i < 10 ? 3 : 2;
        char req[128];
        size_t n = gb_resp_encode(req, sizeof req, argc, argv, NULL);
        if (gb_resp_send(&s->subs[i], req, n) != 0 || gb_resp_read_replies(&s->subs[i], (size_t)argc - 1, NULL) != 0)
            return -1;
    }
    return 0;
}

static int sock_once(sock_side *s, int n, uint64_t *first, uint64_t *last)
{
    char ch[8];
    snprintf(ch, sizeof ch, "f%d", n);
    const char *argv[3] = {"PUBLISH", ch, "0123456789abcdef0123456789abcdef"};
    char req[128];
    size_t len = gb_resp_encode(req, sizeof req, 3, argv, NULL);
    uint64_t t0 = gb_bench_now_ns();
    if (gb_resp_send(&s->pub, req, len) != 0)
        return -1;
    for (int i = 0; i < n; i++) {
        if (gb_resp_read_replies(&s->subs[i], 1, NULL) != 0)
            return -1;
        if (i == 0)
            *first = gb_bench_now_ns() - t0;
    }
    *last = gb_bench_now_ns() - t0;
    return gb_resp_read_replies(&s->pub, 1, NULL);
}

/* ---- servers ---- */

typedef struct launch {
    const char *goblin, *redis;
    int cpu, rc;
    gb_bench_server gsrv, rsrv;
} launch;

static void *launch_servers(void *arg)
{
    launch *l = arg;
    gb_bench_pin(l->cpu, "server launcher");
    const char *extra[] = {"--rings", "128", "--ring-size", "65536", "--ring-spin-us", "2000", NULL};
    l->rc = -1;
    if (gb_bench_server_start(&l->gsrv, l->goblin, l->cpu, extra) != 0)
        return NULL;
    if (gb_bench_server_start(&l->rsrv, l->redis, -1, NULL) != 0) {
        gb_bench_server_stop(&l->gsrv);
        return NULL;
    }
    l->rc = 0;
    return NULL;
}

/* ---- rows ---- */

enum { ROW_RING, ROW_GOBLIN_UDS, ROW_REDIS_UDS, NKIND };
static const char *const kind_names[NKIND] = {"ring (SBE)", "goblin unix socket", "redis unix socket"};

int main(int argc, char **argv)
{
    const char *server = "build-release/goblin-core", *redis = "/usr/bin/redis-server";
    int rounds = 10, samples = 2000, csv = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--redis") && i + 1 < argc)
            redis = argv[++i];
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--samples") && i + 1 < argc)
            samples = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv"))
            csv = 1;
        else if (argv[i][0] != '-')
            server = argv[i];
        else {
            fprintf(stderr, "usage: %s [goblin-core] [--redis PATH] [--rounds R] [--samples N] [--csv]\n", argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || samples < 10) {
        fprintf(stderr, "--rounds must be 1..%d and --samples at least 10\n", MAX_ROUNDS);
        return 2;
    }
    int scpu = gb_bench_env_int("SERVER_CORE", 1), ccpu = gb_bench_env_int("CLIENT_CORE", 0);
    /* redis-server has no --cpu: started (forked) from a thread pinned to
     * the server CPU, it inherits that affinity; this thread stays free to
     * pin itself to the client CPU. */
    launch l = {.goblin = server, .redis = redis, .cpu = scpu, .rc = -1};
    pthread_t t;
    if (pthread_create(&t, NULL, launch_servers, &l) != 0 || pthread_join(t, NULL) != 0 || l.rc != 0)
        return 1;
    gb_bench_server gsrv = l.gsrv, rsrv = l.rsrv;
    gb_bench_pin(ccpu, "client");
    static ring_side ring;
    static sock_side gs, rs;
    if (ring_setup(&ring, gsrv.sock) != 0 || sock_setup(&gs, gsrv.sock) != 0 || sock_setup(&rs, rsrv.sock) != 0) {
        fprintf(stderr, "setup failed\n");
        gb_bench_server_stop(&gsrv);
        gb_bench_server_stop(&rsrv);
        return 1;
    }

    gb_hist *win_first = gb_hist_new(), *win_last = gb_hist_new(), *all_last[NKIND][NFAN], *ping_all = gb_hist_new();
    for (int k = 0; k < NKIND; k++)
        for (int f = 0; f < NFAN; f++)
            all_last[k][f] = gb_hist_new();
    static double p50_first[NKIND][NFAN][MAX_ROUNDS], p50_last[NKIND][NFAN][MAX_ROUNDS], p99_last[NKIND][NFAN][MAX_ROUNDS],
        ping_p50[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        gb_hist_reset(win_last);
        for (int i = 0; i < samples; i++) {
            uint64_t t0 = gb_bench_now_ns();
            if (gb_ring_ping(ring.pub) != 0)
                return 1;
            gb_hist_add(win_last, gb_bench_now_ns() - t0);
        }
        ping_p50[r] = (double)gb_hist_quantile(win_last, 0.5);
        gb_hist_merge(ping_all, win_last);
        for (int f = 0; f < NFAN; f++) {
            int n = fanouts[f];
            /* fewer samples for wide fan-out: each costs n reads */
            int count = n == 1 ? samples : n == 10 ? samples / 2 : samples / 10;
            for (int k = 0; k < NKIND; k++) {
                /* goblin-core spins on its rings for ring-spin-us after the
                 * last request: let it park so it does not take the shared
                 * server CPU from redis-server's row. */
                if (k == ROW_REDIS_UDS)
                    gb_bench_sleep_ms(10);
                gb_hist_reset(win_first);
                gb_hist_reset(win_last);
                for (int i = 0; i < count; i++) {
                    uint64_t first, last;
                    int rc = k == ROW_RING        ? ring_once(&ring, n, &first, &last)
                             : k == ROW_GOBLIN_UDS ? sock_once(&gs, n, &first, &last)
                                                   : sock_once(&rs, n, &first, &last);
                    if (rc != 0) {
                        fprintf(stderr, "%s fan-out %d failed\n", kind_names[k], n);
                        return 1;
                    }
                    gb_hist_add(win_first, first);
                    gb_hist_add(win_last, last);
                }
                p50_first[k][f][r] = (double)gb_hist_quantile(win_first, 0.5);
                p50_last[k][f][r] = (double)gb_hist_quantile(win_last, 0.5);
                p99_last[k][f][r] = (double)gb_hist_quantile(win_last, 0.99);
                gb_hist_merge(all_last[k][f], win_last);
            }
        }
    }
    gb_bench_server_stop(&gsrv);
    gb_bench_server_stop(&rsrv);

    double ping = gb_bench_median(ping_p50, rounds);
    if (csv) {
        printf("transport,subscribers,p50_first_ns,p50_last_ns,p99_last_ns\n");
        printf("ring PING,0,%.0f,%.0f,%.0f\n", ping, ping, (double)gb_hist_quantile(ping_all, 0.99));
        for (int f = 0; f < NFAN; f++)
            for (int k = 0; k < NKIND; k++)
                printf("%s,%d,%.0f,%.0f,%.0f\n", kind_names[k], fanouts[f], gb_bench_median(p50_first[k][f], rounds),
                       gb_bench_median(p50_last[k][f], rounds), gb_bench_median(p99_last[k][f], rounds));
        return 0;
    }
    printf("Publish-to-receive, 32-byte payload; server(s) on CPU %d, one client thread on CPU %d;\n", scpu, ccpu);
    printf("%d interleaved rounds, medians of per-round quantiles\n\n", rounds);
    printf("ring PING round trip: p50 %.0f ns\n\n", ping);
    printf("%-20s %5s %12s %12s %12s %12s\n", "transport", "subs", "first p50", "last p50", "last p99", "vs redis");
    for (int f = 0; f < NFAN; f++)
        for (int k = 0; k < NKIND; k++) {
            double last = gb_bench_median(p50_last[k][f], rounds), redis_last = gb_bench_median(p50_last[ROW_REDIS_UDS][f], rounds);
            printf("%-20s %5d %9.0f ns %9.0f ns %9.0f ns %11.1fx\n", kind_names[k], fanouts[f],
                   gb_bench_median(p50_first[k][f], rounds), last, gb_bench_median(p99_last[k][f], rounds), redis_last / last);
        }
    printf("\nring delivery p50 (1 subscriber) / ring PING p50: %.2fx\n", gb_bench_median(p50_first[ROW_RING][0], rounds) / ping);
    return 0;
}
