#include "engine/core/introspect/latency.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine/base/mem.h"
#include "engine/core/request/command.h"
#include "engine/core/engine.h"

/* ---- per-command histograms: HdrHistogram's index arithmetic ---------------------- */

#define HIST_MIN_NS 1LL
#define HIST_MAX_NS 1000000000LL

static int bucket_of(int64_t v) { return 64 - __builtin_clzll((uint64_t)v | 255u) - 8; }

static size_t index_of(int64_t v)
{
    int b = bucket_of(v);
    return ((size_t)(b + 1) << 7) + (size_t)((v >> b) - GB_LATENCY_HIST_SUB_HALF);
}

static int64_t value_at(size_t i)
{
    int b = (int)(i >> 7) - 1;
    int64_t sub = (int64_t)(i & 127) + GB_LATENCY_HIST_SUB_HALF;
    if (b < 0) {
        sub -= GB_LATENCY_HIST_SUB_HALF;
        b = 0;
    }
    return sub << b;
}

static int64_t highest_equivalent(int64_t v)
{
    int b = bucket_of(v);
    int shift = (v >> b) >= 2 * GB_LATENCY_HIST_SUB_HALF ? b + 1 : b;
    return ((v >> b) << b) + ((int64_t)1 << shift) - 1;
}

void gb_latency_hist_record(gb_command *cmd, int64_t duration_us)
{
    int64_t ns = duration_us * 1000;
    ns = ns < HIST_MIN_NS ? HIST_MIN_NS : ns > HIST_MAX_NS ? HIST_MAX_NS : ns;
    gb_latency_hist *h = cmd->latency_hist;
    if (GB_UNLIKELY(!h))
        h = cmd->latency_hist = gb_calloc(1, sizeof *h);
    size_t i = index_of(ns);
    uint64_t **row = &h->rows[i / GB_LATENCY_HIST_SUB_HALF];
    if (GB_UNLIKELY(!*row))
        *row = gb_calloc(GB_LATENCY_HIST_SUB_HALF, sizeof **row);
    (*row)[i % GB_LATENCY_HIST_SUB_HALF]++;
    h->total++;
}

void gb_latency_hist_free(gb_latency_hist *h)
{
    if (!h)
        return;
    for (size_t r = 0; r < GB_ARRAY_LEN(h->rows); r++)
        gb_free(h->rows[r]);
    gb_free(h);
}

static uint64_t count_at(const gb_latency_hist *h, size_t i)
{
    const uint64_t *row = h->rows[i / GB_LATENCY_HIST_SUB_HALF];
    return row ? row[i % GB_LATENCY_HIST_SUB_HALF] : 0;
}

int64_t gb_latency_hist_percentile(const gb_latency_hist *h, double p)
{
    double req = p < 100.0 ? p : 100.0;
    uint64_t want = (uint64_t)(req / 100 * (double)h->total + 0.5);
    want = want ? want : 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < GB_LATENCY_HIST_COUNTS; i++) {
        if (!h->rows[i / GB_LATENCY_HIST_SUB_HALF]) {
            i += GB_LATENCY_HIST_SUB_HALF - 1 - i % GB_LATENCY_HIST_SUB_HALF; /* an empty row */
            continue;
        }
        seen += count_at(h, i);
        if (seen >= want) {
            int64_t v = value_at(i);
            return p == 0.0 ? (v >> bucket_of(v)) << bucket_of(v) : highest_equivalent(v);
        }
    }
    return 0;
}

void gb_latency_hist_cdf(const gb_latency_hist *h, void (*emit)(void *ctx, int64_t usec, uint64_t cumulative),
                         void *ctx)
{
    uint64_t cumulative = 0, previous = 0;
    size_t i = 0;
    for (int64_t level = 1024; cumulative < h->total; level *= 2) {
        size_t last = index_of(level < HIST_MAX_NS ? level : HIST_MAX_NS);
        for (; i <= last && i < GB_LATENCY_HIST_COUNTS; i++)
            cumulative += count_at(h, i);
        if (cumulative > previous)
            emit(ctx, highest_equivalent(level) / 1000, cumulative);
        previous = cumulative;
    }
}

/* ---- the latency monitor ---------------------------------------------------------- */

gb_latency_event *gb_latency_event_find(gb_latency_monitor *m, gb_slice name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strlen(m->events[i]->name) == name.len && memcmp(m->events[i]->name, name.ptr, name.len) == 0)
            return m->events[i];
    return NULL;
}

/* Redis's latencyAddSample: one sample per second, the worst of it. */
static void add_sample(gb_latency_monitor *m, const char *event, uint32_t ms, int64_t now)
{
    gb_latency_event *ev = gb_latency_event_find(m, gb_slice_cstr(event));
    if (!ev) {
        ev = gb_calloc(1, sizeof *ev);
        ev->name = gb_strdup(event);
        m->events = gb_realloc(m->events, (m->n + 1) * sizeof *m->events);
        m->events[m->n++] = ev;
    }
    if (ms > ev->max)
        ev->max = ms;
    gb_latency_sample *prev = &ev->samples[(ev->idx + GB_LATENCY_TS_LEN - 1) % GB_LATENCY_TS_LEN];
    if (prev->time == now) {
        if (ms > prev->latency)
            prev->latency = ms;
        return;
    }
    ev->samples[ev->idx].time = now;
    ev->samples[ev->idx].latency = ms;
    ev->idx = (ev->idx + 1) % GB_LATENCY_TS_LEN;
}

void gb_latency_add_sample_if_needed(gb_engine *eng, const char *event, int64_t ms)
{
    long long threshold = eng->cfg.latency_monitor_threshold;
    if (threshold && ms >= threshold)
        add_sample(&eng->latency, event, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms, gb_clock_real_ms() / 1000);
}

int gb_latency_reset(gb_latency_monitor *m, const gb_slice *name)
{
    int n = 0;
    for (size_t i = 0; i < m->n;) {
        gb_latency_event *ev = m->events[i];
        if (name && !(strlen(ev->name) == name->len && memcmp(ev->name, name->ptr, name->len) == 0)) {
            i++;
            continue;
        }
        gb_free(ev->name);
        gb_free(ev);
        memmove(&m->events[i], &m->events[i + 1], (m->n - i - 1) * sizeof *m->events);
        m->n--;
        n++;
    }
    if (!m->n) {
        gb_free(m->events);
        m->events = NULL;
    }
    return n;
}

/* ---- text reports ------------------------------------------------------------------ */

typedef struct text {
    char *p;
    size_t len, cap;
} text;

static void addf(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void addf(text *t, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t k = (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    if (t->len + k + 1 > t->cap) {
        t->cap = (t->len + k + 1) * 2;
        t->p = gb_realloc(t->p, t->cap);
    }
    memcpy(t->p + t->len, buf, k);
    t->len += k;
    t->p[t->len] = '\0';
}

typedef struct event_stats {
    int samples;
    uint64_t avg, mad;
    uint32_t min, max;
    int64_t period; /* seconds since the oldest sample (at least 1) */
} event_stats;

/* Redis's analyzeLatencyForEvent. */
static event_stats stats_of(const gb_latency_event *ev, int64_t now)
{
    event_stats s = {0};
    uint64_t sum = 0;
    for (int j = 0; j < GB_LATENCY_TS_LEN; j++) {
        const gb_latency_sample *x = &ev->samples[j];
        if (!x->time)
            continue;
        if (!s.samples++)
            s.min = s.max = x->latency;
        s.min = x->latency < s.min ? x->latency : s.min;
        s.max = x->latency > s.max ? x->latency : s.max;
        sum += x->latency;
        if (s.period == 0 || x->time < s.period)
            s.period = x->time;
    }
    if (!s.samples)
        return s;
    s.avg = sum / (uint64_t)s.samples;
    s.period = now - s.period ? now - s.period : 1;
    sum = 0;
    for (int j = 0; j < GB_LATENCY_TS_LEN; j++) {
        const gb_latency_sample *x = &ev->samples[j];
        if (x->time)
            sum += x->latency > s.avg ? x->latency - s.avg : s.avg - x->latency;
    }
    s.mad = sum / (uint64_t)s.samples;
    return s;
}

/* Redis's createLatencyReport, word for word, for the events this server
 * records (command, fast-command, expire-cycle). */
char *gb_latency_doctor(gb_engine *eng)
{
    text t = {0};
    gb_latency_monitor *m = &eng->latency;
    long long threshold = eng->cfg.latency_monitor_threshold;
    if (m->n == 0 && threshold == 0) {
        addf(&t, "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may "
                 "use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't "
                 "in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n");
        return t.p;
    }
    bool slowlog_enable = false, slowlog_tuning = false, slowlog_inspect = false, scheduler = false, hz = false,
         large_objects = false;
    int advices = 0;
    int64_t now = gb_clock_real_ms() / 1000;
    for (size_t i = 0; i < m->n; i++) {
        const gb_latency_event *ev = m->events[i];
        event_stats s = stats_of(ev, now);
        if (i == 0)
            addf(&t, "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, "
                     "do you Dave?\n\n");
        addf(&t, "%zu. %s: %d latency spikes (average %lums, mean deviation %lums, period %.2f sec). Worst all time "
                 "event %lums.",
             i + 1, ev->name, s.samples, (unsigned long)s.avg, (unsigned long)s.mad,
             (double)s.period / s.samples, (unsigned long)ev->max);
        if (strcmp(ev->name, "command") == 0) {
            if (eng->cfg.slowlog_log_slower_than < 0)
                slowlog_enable = true, advices++;
            else if (eng->cfg.slowlog_log_slower_than / 1000 > threshold)
                slowlog_tuning = true, advices++;
            slowlog_inspect = large_objects = true;
            advices += 2;
        }
        if (strcmp(ev->name, "fast-command") == 0)
            scheduler = true, advices++;
        if (strcmp(ev->name, "expire-cycle") == 0) {
            hz = large_objects = true;
            advices += 2;
        }
        addf(&t, "\n");
    }
    if (m->n == 0 && advices == 0) {
        addf(&t, "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the "
                 "slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things "
                 "over.\n");
        return t.p;
    }
    if (advices == 0) {
        addf(&t, "\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the "
                 "Redis community to get some help, providing this report in your help request.\n");
        return t.p;
    }
    addf(&t, "\nI have a few advices for you:\n\n");
    if (slowlog_enable)
        addf(&t, "- There are latency issues with potentially slow commands you are using. Try to enable the Slow "
                 "Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %llu'. If the Slow log is "
                 "disabled Redis is not able to log slow commands execution for you.\n",
             (unsigned long long)threshold * 1000);
    if (slowlog_tuning)
        addf(&t, "- Your current Slow Log configuration only logs events that are slower than your configured "
                 "latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %llu'.\n",
             (unsigned long long)threshold * 1000);
    if (slowlog_inspect)
        addf(&t, "- Check your Slow Log to understand what are the commands you are running which are too slow to "
                 "execute. Please check https://redis.io/commands/slowlog for more information.\n");
    if (scheduler)
        addf(&t, "- The system is slow to execute Redis code paths not containing system calls. This usually means "
                 "the system does not provide Redis CPU time to run for long periods. You should try to:\n"
                 "  1) Lower the system load.\n"
                 "  2) Use a computer / VM just for Redis if you are running other software in the same system.\n"
                 "  3) Check if you have a \"noisy neighbour\" problem.\n"
                 "  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your "
                 "system.\n"
                 "  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are "
                 "using Jemalloc. However this may create fragmentation problems.\n");
    if (hz && eng->hz < 100)
        addf(&t, "- In order to make the Redis keys expiring process more incremental, try to set the 'hz' "
                 "configuration parameter to 100 using 'CONFIG SET hz 100'.\n");
    if (large_objects)
        addf(&t, "- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking "
                 "operation. If you have very large objects that are often deleted, expired, or evicted, try to "
                 "fragment those objects into multiple smaller objects.\n");
    return t.p;
}

/* LATENCY GRAPH's chart, as Redis's sparkline renderer draws it: 4 rows of
 * 3 steps each ('_', 'o', '#', and '|' below the top of a column), the
 * columns scaled between the lowest and the highest sample, then, after a
 * blank line, each sample's age written downwards under its column; at
 * most 80 columns per block. */
#define GRAPH_ROWS 4
#define GRAPH_COLS 80

static void graph_block(text *t, const uint32_t *values, char labels[][24], int n, uint32_t lo, uint32_t hi)
{
    static const char fill[] = "_o#";
    const int steps = 3 * GRAPH_ROWS;
    double range = hi - lo ? (double)(hi - lo) : 1.0;
    char line[GRAPH_COLS + 1];
    for (int row = 0;; row++) {
        bool more = row <= GRAPH_ROWS; /* the chart, then the blank line */
        memset(line, ' ', (size_t)n);
        for (int j = 0; j < n && row < GRAPH_ROWS; j++) {
            int step = (int)((int)((double)(values[j] - lo) * steps) / range);
            step = step < 0 ? 0 : step >= steps ? steps - 1 : step;
            int idx = step - (GRAPH_ROWS - row - 1) * 3;
            line[j] = idx >= 3 ? '|' : idx >= 0 ? fill[idx] : ' ';
        }
        for (int j = 0; j < n && row > GRAPH_ROWS; j++) {
            size_t k = (size_t)(row - GRAPH_ROWS - 1);
            if (strlen(labels[j]) > k) {
                line[j] = labels[j][k];
                more = true;
            }
        }
        if (!more)
            return;
        line[n] = '\0';
        addf(t, "%s\n", line);
    }
}

char *gb_latency_graph(const gb_latency_event *ev, int64_t now)
{
    text t = {0};
    uint32_t values[GB_LATENCY_TS_LEN], lo = 0, hi = 0;
    char labels[GB_LATENCY_TS_LEN][24];
    int n = 0;
    for (int j = 0; j < GB_LATENCY_TS_LEN; j++) {
        const gb_latency_sample *x = &ev->samples[(ev->idx + j) % GB_LATENCY_TS_LEN];
        if (!x->time)
            continue;
        lo = !n || x->latency < lo ? x->latency : lo;
        hi = !n || x->latency > hi ? x->latency : hi;
        int64_t ago = now - x->time;
        snprintf(labels[n], sizeof labels[n], "%lld%s",
                 (long long)(ago < 60 ? ago : ago < 3600 ? ago / 60 : ago < 86400 ? ago / 3600 : ago / 86400),
                 ago < 60 ? "s" : ago < 3600 ? "m" : ago < 86400 ? "h" : "d");
        values[n++] = x->latency;
    }
    addf(&t, "%s - high %lu ms, low %lu ms (all time high %lu ms)\n", ev->name, (unsigned long)hi,
         (unsigned long)lo, (unsigned long)ev->max);
    for (int j = 0; j < GRAPH_COLS; j++)
        addf(&t, "-");
    addf(&t, "\n");
    for (int j = 0; j < n; j += GRAPH_COLS) {
        if (j)
            addf(&t, "\n");
        graph_block(&t, values + j, labels + j, n - j < GRAPH_COLS ? n - j : GRAPH_COLS, lo, hi);
    }
    return t.p;
}
