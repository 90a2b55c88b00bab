#define _GNU_SOURCE
#include "bench_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "platform/clock.h"
#include "goblin/error.h"
#include "platform/cpu.h"

/* ---- histogram ------------------------------------------------------------------ */

gb_hist *gb_hist_new(void)
{
    gb_hist *h = calloc(1, sizeof *h);
    gb_hist_reset(h);
    return h;
}

void gb_hist_reset(gb_hist *h)
{
    memset(h, 0, sizeof *h);
    h->min = UINT64_MAX;
}

/* Above the linear range: power of two (msb >= 16) and 5 more bits. */
static size_t log_bucket(uint64_t ns)
{
    int msb = 63 - __builtin_clzll(ns);
    size_t b = (size_t)(msb - 16) * GB_HIST_SUB + ((ns >> (msb - 5)) & (GB_HIST_SUB - 1));
    return b < GB_HIST_LOG ? b : GB_HIST_LOG - 1;
}

static uint64_t log_bucket_floor(size_t b)
{
    int msb = (int)(b / GB_HIST_SUB) + 16;
    return ((uint64_t)1 << msb) | ((uint64_t)(b % GB_HIST_SUB) << (msb - 5));
}

void gb_hist_add(gb_hist *h, uint64_t ns)
{
    if (ns < GB_HIST_LINEAR)
        h->linear[ns]++;
    else
        h->log[log_bucket(ns)]++;
    h->count++;
    if (ns < h->min)
        h->min = ns;
    if (ns > h->max)
        h->max = ns;
}

void gb_hist_merge(gb_hist *dst, const gb_hist *src)
{
    for (size_t i = 0; i < GB_HIST_LINEAR; i++)
        dst->linear[i] += src->linear[i];
    for (size_t b = 0; b < GB_HIST_LOG; b++)
        dst->log[b] += src->log[b];
    dst->count += src->count;
    if (src->count && src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

uint64_t gb_hist_quantile(const gb_hist *h, double q)
{
    if (h->count == 0)
        return 0;
    uint64_t target = (uint64_t)(q * (double)(h->count - 1)) + 1;
    uint64_t seen = 0;
    for (uint64_t i = 0; i < GB_HIST_LINEAR; i++) {
        seen += h->linear[i];
        if (seen >= target)
            return i;
    }
    for (size_t b = 0; b < GB_HIST_LOG; b++) {
        seen += h->log[b];
        if (seen >= target)
            return log_bucket_floor(b); /* lower edge: within 3% */
    }
    return h->max;
}

gb_lat_summary gb_hist_summary(const gb_hist *h)
{
    gb_lat_summary s;
    s.p50 = (double)gb_hist_quantile(h, 0.50);
    s.p90 = (double)gb_hist_quantile(h, 0.90);
    s.p99 = (double)gb_hist_quantile(h, 0.99);
    s.p999 = (double)gb_hist_quantile(h, 0.999);
    s.min = h->count ? (double)h->min : 0;
    s.max = (double)h->max;
    s.samples = h->count;
    return s;
}

void gb_hist_write_cdf(const gb_hist *h, const char *path, const char *label)
{
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    /* about 200 points: every 0.5% quantile */
    for (int i = 1; i <= 200; i++) {
        double q = i / 200.0;
        if (q > 0.9999)
            q = 0.9999;
        fprintf(f, "%s,%llu,%.4f\n", label, (unsigned long long)gb_hist_quantile(h, q), q);
    }
    fclose(f);
}

/* ---- timing and pinning ------------------------------------------------------------ */

double gb_bench_ns_per_cycle(void)
{
    static double v;
    if (v == 0)
        v = gb_cycles_ns_per_cycle(200);
    return v;
}

uint64_t gb_bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void gb_bench_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double gb_bench_median(const double *v, int n)
{
    if (n <= 0)
        return 0;
    double *s = malloc((size_t)n * sizeof *s);
    if (!s) {
        perror("median");
        exit(1);
    }
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    free(s);
    return m;
}

int gb_bench_env_int(const char *name, int def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    return atoi(v);
}

void gb_bench_pin(int cpu, const char *who)
{
    if (cpu < 0)
        return;
    int rc = gb_cpu_pin_current_thread(cpu);
    if (rc == GB_ENOTSUP)
        fprintf(stderr, "note: %s runs unpinned (pinning is not supported on this platform)\n", who);
    else if (rc != 0)
        fprintf(stderr, "note: cannot pin %s to CPU %d (%s); running unpinned\n", who, cpu, gb_strerror(rc));
    gb_thread_set_latency_critical();
}

/* ---- server processes -------------------------------------------------------------- */

static int free_tcp_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || getsockname(fd, (struct sockaddr *)&a, &l) != 0) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    int port = ntohs(a.sin_port);
    close(fd);
    return port;
}

int gb_bench_server_start(gb_bench_server *s, const char *binary, int server_cpu, const char *const *extra)
{
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "/tmp/goblin-bench-XXXXXX");
    if (!mkdtemp(s->dir)) {
        perror("mkdtemp");
        return -1;
    }
    snprintf(s->sock, sizeof s->sock, "%s/s.sock", s->dir);
    s->port = free_tcp_port();
    s->is_redis = strstr(binary, "redis") != NULL;
    char port[16], cpu[16];
    snprintf(port, sizeof port, "%d", s->port);
    snprintf(cpu, sizeof cpu, "%d", server_cpu);
    const char *argv[64];
    int n = 0;
    argv[n++] = binary;
    argv[n++] = "--port";
    argv[n++] = port;
    argv[n++] = "--unixsocket";
    argv[n++] = s->sock;
    /* Both servers: no snapshots, files (if any) in the scratch directory. */
    argv[n++] = "--save";
    argv[n++] = "";
    argv[n++] = "--appendonly";
    argv[n++] = "no";
    argv[n++] = "--dir";
    argv[n++] = s->dir;
    if (!s->is_redis && server_cpu >= 0) {
        argv[n++] = "--cpu";
        argv[n++] = cpu;
    }
    for (int i = 0; extra && extra[i] && n < 62; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    s->pid = fork();
    if (s->pid < 0) {
        perror("fork");
        return -1;
    }
    if (s->pid == 0) {
        if (server_cpu >= 0)
            gb_cpu_pin_current_thread(server_cpu); /* inherited across exec (redis) */
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, 1);
            close(devnull);
        }
        execv(binary, (char *const *)argv);
        fprintf(stderr, "cannot run %s: %s\n", binary, strerror(errno));
        _exit(127);
    }
    for (int tries = 0; tries < 500; tries++) {
        gb_resp_conn c;
        if (gb_resp_connect_unix(&c, s->sock) == 0) {
            char last = 0;
            int ok = gb_resp_send(&c, "PING\r\n", 6) == 0 && gb_resp_read_replies(&c, 1, &last) == 0 && last == '+';
            gb_resp_close(&c);
            if (ok)
                return 0;
        }
        int st;
        if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
            fprintf(stderr, "%s exited during start-up\n", binary);
            s->pid = 0;
            return -1;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "%s did not answer PING within 10 s\n", binary);
    gb_bench_server_stop(s);
    return -1;
}

void gb_bench_server_stop(gb_bench_server *s)
{
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        for (int i = 0; i < 200; i++) {
            if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
                s->pid = 0;
                break;
            }
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (s->pid > 0) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, NULL, 0);
        }
        s->pid = 0;
    }
    unlink(s->sock);
    rmdir(s->dir);
}

/* ---- RESP over a socket --------------------------------------------------------------- */

static void conn_init(gb_resp_conn *c, int fd)
{
    c->fd = fd;
    c->cap = 1 << 16;
    c->buf = malloc(c->cap);
    c->len = 0;
}

int gb_resp_connect_unix(gb_resp_conn *c, const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    size_t plen = strlen(path);
    if (plen >= sizeof a.sun_path) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    memcpy(a.sun_path, path, plen + 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    conn_init(c, fd);
    return 0;
}

int gb_resp_connect_tcp(gb_resp_conn *c, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    conn_init(c, fd);
    return 0;
}

void gb_resp_close(gb_resp_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->buf);
    c->fd = -1;
    c->buf = NULL;
}

int gb_resp_send(gb_resp_conn *c, const char *req, size_t len)
{
    while (len) {
        ssize_t w = write(c->fd, req, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        req += w;
        len -= (size_t)w;
    }
    return 0;
}

size_t gb_resp_reply_len(const char *p, size_t n)
{
    if (n < 3)
        return 0;
    if (p[0] != '$' && p[0] != '*') { /* simple string, error, integer: one line */
        const char *cr = memchr(p, '\r', n);
        return cr && (size_t)(cr - p) + 2 <= n ? (size_t)(cr - p) + 2 : 0;
    }
    /* "$<len>" or "*<count>", read inline: the benchmarks call this on
     * every reply, and its cost is part of every pipeline round trip. */
    size_t i = 1, v = 0;
    bool neg = p[1] == '-';
    i += neg;
    while (i < n && (unsigned char)(p[i] - '0') < 10)
        v = v * 10 + (size_t)(p[i++] - '0');
    if (i + 2 > n)
        return 0;
    size_t hdr = i + 2;
    if (neg) /* nil */
        return hdr;
    if (p[0] == '$')
        return n >= hdr + v + 2 ? hdr + v + 2 : 0;
    size_t pos = hdr;
    for (size_t k = 0; k < v; k++) {
        size_t l = pos < n ? gb_resp_reply_len(p + pos, n - pos) : 0;
        if (!l)
            return 0;
        pos += l;
    }
    return pos;
}

ssize_t gb_resp_recv_more(gb_resp_conn *c, int flags)
{
    if (c->len == c->cap) {
        c->cap *= 2;
        c->buf = realloc(c->buf, c->cap);
    }
    ssize_t r = recv(c->fd, c->buf + c->len, c->cap - c->len, flags);
    if (r > 0)
        c->len += (size_t)r;
    return r;
}

int gb_resp_read_replies(gb_resp_conn *c, size_t n, char *last)
{
    size_t pos = 0;
    while (n > 0) {
        size_t l = pos < c->len ? gb_resp_reply_len(c->buf + pos, c->len - pos) : 0;
        if (l) {
            if (last)
                *last = c->buf[pos];
            pos += l;
            n--;
            continue;
        }
        memmove(c->buf, c->buf + pos, c->len - pos);
        c->len -= pos;
        pos = 0;
        ssize_t r = gb_resp_recv_more(c, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
    }
    memmove(c->buf, c->buf + pos, c->len - pos);
    c->len -= pos;
    return 0;
}

size_t gb_resp_encode(char *out, size_t cap, int argc, const char *const *argv, const size_t *lens)
{
    size_t used = 0;
    used += (size_t)snprintf(out, cap, "*%d\r\n", argc);
    for (int i = 0; i < argc && used < cap; i++) {
        size_t l = lens ? lens[i] : strlen(argv[i]);
        used += (size_t)snprintf(out + used, cap - used, "$%zu\r\n", l);
        if (used + l + 2 > cap)
            return 0;
        memcpy(out + used, argv[i], l);
        used += l;
        out[used++] = '\r';
        out[used++] = '\n';
    }
    return used;
}
