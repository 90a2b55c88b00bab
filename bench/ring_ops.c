#include "ring_ops.h"

#include <stdio.h>
#include <string.h>

#include "platform/clock.h"

const char *const bench_op_names[OP_COUNT] = {"PING", "GET", "SET", "ZADD1", "ZADD10", "HSET1", "HSET10"};

#define NKEYS 1000
#define WARMUP 20000

/* Names are fixed-width so every request has the same size. */
static char names[NKEYS][16];
static const char value16[] = "vvvvvvvvvvvvvvvv";
static bool names_ready;

static void init_names(void)
{
    if (names_ready)
        return;
    for (int i = 0; i < NKEYS; i++)
        snprintf(names[i], sizeof names[i], "m:%08d", i);
    names_ready = true;
}

static size_t name_len(void) { return 10; }

/* ---- ring ---------------------------------------------------------------- */

int bench_ring_once(gb_ring_client *rc, bench_op op, uint64_t i)
{
    const void *m[10];
    size_t ml[10];
    double sc[10];
    int64_t out;
    switch (op) {
    case OP_PING:
        return gb_ring_ping(rc);
    case OP_GET: {
        char buf[64];
        return gb_ring_get(rc, names[i % NKEYS], name_len(), buf, sizeof buf, &out);
    }
    case OP_SET:
        return gb_ring_set(rc, names[i % NKEYS], name_len(), value16, 16, 0);
    case OP_ZADD1:
    case OP_ZADD10: {
        size_t n = op == OP_ZADD1 ? 1 : 10;
        for (size_t j = 0; j < n; j++) {
            m[j] = names[(i * n + j) % NKEYS];
            ml[j] = name_len();
            sc[j] = (double)(i + j) * 0.5;
        }
        return gb_ring_zadd(rc, "bench:z", 7, 0, n, sc, m, ml, &out, NULL);
    }
    case OP_HSET1:
    case OP_HSET10: {
        size_t n = op == OP_HSET1 ? 1 : 10;
        const void *v[10];
        size_t vl[10];
        for (size_t j = 0; j < n; j++) {
            m[j] = names[(i * n + j) % NKEYS];
            ml[j] = name_len();
            v[j] = value16;
            vl[j] = 16;
        }
        return gb_ring_hset(rc, "bench:h", 7, n, m, ml, v, vl, &out);
    }
    default:
        return -1;
    }
}

int bench_ring_prepare(gb_ring_client *rc)
{
    init_names();
    for (uint64_t i = 0; i < NKEYS; i++) {
        if (bench_ring_once(rc, OP_SET, i) || bench_ring_once(rc, OP_ZADD1, i) || bench_ring_once(rc, OP_HSET1, i))
            return -1;
    }
    return 0;
}

int bench_ring_run(gb_ring_client *rc, bench_op op, double seconds, gb_hist *h)
{
    init_names(); /* a run need not follow a prepare in the same process (ring_rtt_as) */
    double npc = gb_bench_ns_per_cycle();
    for (uint64_t i = 0; i < WARMUP; i++)
        if (bench_ring_once(rc, op, i))
            return -1;
    uint64_t end = gb_clock_mono_ns() + (uint64_t)(seconds * 1e9);
    for (uint64_t i = 0;; i++) {
        uint64_t t0 = gb_cycles_now();
        if (bench_ring_once(rc, op, i))
            return -1;
        uint64_t t1 = gb_cycles_now();
        gb_hist_add(h, (uint64_t)((double)(t1 - t0) * npc));
        if ((i & 255) == 0 && gb_clock_mono_ns() > end)
            break;
    }
    return 0;
}

/* ---- socket ---------------------------------------------------------------- */

int bench_sock_once(gb_resp_conn *c, bench_op op, uint64_t i)
{
    char req[2048];
    size_t len;
    const char *argv[24];
    size_t lens[24];
    char nums[10][32];
    int argc = 0;
    switch (op) {
    case OP_PING:
        argv[argc] = "PING", lens[argc++] = 4;
        break;
    case OP_GET:
        argv[argc] = "GET", lens[argc++] = 3;
        argv[argc] = names[i % NKEYS], lens[argc++] = name_len();
        break;
    case OP_SET:
        argv[argc] = "SET", lens[argc++] = 3;
        argv[argc] = names[i % NKEYS], lens[argc++] = name_len();
        argv[argc] = value16, lens[argc++] = 16;
        break;
    case OP_ZADD1:
    case OP_ZADD10: {
        size_t n = op == OP_ZADD1 ? 1 : 10;
        argv[argc] = "ZADD", lens[argc++] = 4;
        argv[argc] = "bench:z", lens[argc++] = 7;
        for (size_t j = 0; j < n; j++) {
            int l = snprintf(nums[j], sizeof nums[j], "%.17g", (double)(i + j) * 0.5);
            argv[argc] = nums[j], lens[argc++] = (size_t)l;
            argv[argc] = names[(i * n + j) % NKEYS], lens[argc++] = name_len();
        }
        break;
    }
    case OP_HSET1:
    case OP_HSET10: {
        size_t n = op == OP_HSET1 ? 1 : 10;
        argv[argc] = "HSET", lens[argc++] = 4;
        argv[argc] = "bench:h", lens[argc++] = 7;
        for (size_t j = 0; j < n; j++) {
            argv[argc] = names[(i * n + j) % NKEYS], lens[argc++] = name_len();
            argv[argc] = value16, lens[argc++] = 16;
        }
        break;
    }
    default:
        return -1;
    }
    len = gb_resp_encode(req, sizeof req, argc, argv, lens);
    char first;
    if (gb_resp_send(c, req, len) || gb_resp_read_replies(c, 1, &first))
        return -1;
    return first == '-' ? -1 : 0;
}

int bench_sock_prepare(gb_resp_conn *c)
{
    init_names();
    for (uint64_t i = 0; i < NKEYS; i++)
        if (bench_sock_once(c, OP_SET, i) || bench_sock_once(c, OP_ZADD1, i) || bench_sock_once(c, OP_HSET1, i))
            return -1;
    return 0;
}

int bench_sock_run(gb_resp_conn *c, bench_op op, double seconds, gb_hist *h)
{
    double npc = gb_bench_ns_per_cycle();
    for (uint64_t i = 0; i < WARMUP / 10; i++)
        if (bench_sock_once(c, op, i))
            return -1;
    uint64_t end = gb_clock_mono_ns() + (uint64_t)(seconds * 1e9);
    for (uint64_t i = 0;; i++) {
        uint64_t t0 = gb_cycles_now();
        if (bench_sock_once(c, op, i))
            return -1;
        uint64_t t1 = gb_cycles_now();
        gb_hist_add(h, (uint64_t)((double)(t1 - t0) * npc));
        if ((i & 15) == 0 && gb_clock_mono_ns() > end)
            break;
    }
    return 0;
}
