/*
 * Shared pieces of the benchmarks: a latency histogram (exact to the
 * nanosecond below 64 µs, logarithmic above), cycle-counter timing, pinning
 * from SERVER_CORE/CLIENT_CORE, starting and stopping a server process, and a
 * minimal synchronous RESP client over a socket.
 */
#ifndef GB_BENCH_COMMON_H
#define GB_BENCH_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- latency histogram ---- */

#define GB_HIST_LINEAR 65536 /* 1 ns buckets below this many ns */
#define GB_HIST_SUB 32       /* then 32 buckets per power of two (3% wide) */
#define GB_HIST_LOG (48 * GB_HIST_SUB)

typedef struct gb_hist {
    uint64_t linear[GB_HIST_LINEAR];
    uint64_t log[GB_HIST_LOG];
    uint64_t count;
    uint64_t min;
    uint64_t max;
} gb_hist;

gb_hist *gb_hist_new(void);
void gb_hist_reset(gb_hist *h);
void gb_hist_add(gb_hist *h, uint64_t ns);
/* Adds src's samples to dst. */
void gb_hist_merge(gb_hist *dst, const gb_hist *src);
/* Value at quantile q in [0,1] (nanoseconds). */
uint64_t gb_hist_quantile(const gb_hist *h, double q);

typedef struct gb_lat_summary {
    double p50, p90, p99, p999, min, max;
    uint64_t samples;
} gb_lat_summary;

gb_lat_summary gb_hist_summary(const gb_hist *h);

/* Writes a CDF as "ns,fraction" points (for the SVG charts). */
void gb_hist_write_cdf(const gb_hist *h, const char *path, const char *label);

/* ---- timing ---- */

/* Calibrated once: nanoseconds per cycle-counter tick. */
double gb_bench_ns_per_cycle(void);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t gb_bench_now_ns(void);
void gb_bench_sleep_ms(int ms);

/* ---- statistics over rounds ---- */

/* The median of v[0..n) (v itself is left as it was). */
double gb_bench_median(const double *v, int n);

/* ---- pinning ---- */

/* Reads an integer environment variable, or def. */
int gb_bench_env_int(const char *name, int def);
/* Pins the calling thread; prints why not when it cannot (macOS: no pinning). */
void gb_bench_pin(int cpu, const char *who);

/* ---- server processes ---- */

typedef struct gb_bench_server {
    pid_t pid;
    char dir[256];
    char sock[300];
    int port;
    bool is_redis;
} gb_bench_server;

/* Starts `binary` (goblin-core or redis-server, recognised by name) on a
 * fresh Unix socket in a temp dir and a free TCP port, pinned to server_cpu
 * (-1: not pinned), with extra arguments; waits until it answers PING.
 * Returns 0 or -1 with a message on stderr. */
int gb_bench_server_start(gb_bench_server *s, const char *binary, int server_cpu, const char *const *extra);
void gb_bench_server_stop(gb_bench_server *s);

/* ---- a synchronous RESP client over a socket ---- */

typedef struct gb_resp_conn {
    int fd;
    char *buf;
    size_t len, cap;
} gb_resp_conn;

int gb_resp_connect_unix(gb_resp_conn *c, const char *path);
int gb_resp_connect_tcp(gb_resp_conn *c, int port);
void gb_resp_close(gb_resp_conn *c);
/* Sends pre-encoded request bytes. */
int gb_resp_send(gb_resp_conn *c, const char *req, size_t len);
/* Reads exactly n complete replies (any type); returns 0 or -1. When
 * `last` is not NULL it receives the first byte of the last reply. */
int gb_resp_read_replies(gb_resp_conn *c, size_t n, char *last);
/* Length of the complete RESP2 reply at p (n bytes there); 0 while it is
 * not all there yet. */
size_t gb_resp_reply_len(const char *p, size_t n);
/* Reads what the socket has (recv(2) with flags) onto the end of c's
 * buffer, growing it when full; returns recv's result. */
ssize_t gb_resp_recv_more(gb_resp_conn *c, int flags);
/* Encodes a command into out (cap bytes) as RESP; returns the length. */
size_t gb_resp_encode(char *out, size_t cap, int argc, const char *const *argv, const size_t *lens);

#endif
