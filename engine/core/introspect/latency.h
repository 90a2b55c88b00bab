/*
 * Latency: Redis 7.0's two instruments.
 *
 *   - The latency monitor (latency-monitor-threshold, ms): events that took
 *     at least the threshold ("command", "fast-command", "expire-cycle",
 *     ...) keep their last 160 samples, one per second at most (the worst
 *     of that second), and their all-time maximum: LATENCY LATEST, HISTORY,
 *     GRAPH, DOCTOR, RESET.
 *   - Per-command histograms (latency-tracking): every call's duration in
 *     a histogram with HdrHistogram's buckets as Redis configures it (1 ns
 *     to 1 s, 2 significant digits), so LATENCY HISTOGRAM's cumulative
 *     buckets and INFO latencystats' percentiles answer as Redis's do.
 */
#ifndef GB_ENGINE_LATENCY_H
#define GB_ENGINE_LATENCY_H

#include "engine/base/common.h"

struct gb_engine;
struct gb_command;

/* HdrHistogram's layout for 1..1e9 with 2 significant digits: 256
 * sub-buckets, of which each bucket after the first uses the upper half. */
#define GB_LATENCY_HIST_SUB_HALF 128
#define GB_LATENCY_HIST_BUCKETS 23
#define GB_LATENCY_HIST_COUNTS ((GB_LATENCY_HIST_BUCKETS + 1) * GB_LATENCY_HIST_SUB_HALF)

/* The counters come in rows of 128 (one per HdrHistogram bucket), each
 * allocated when a duration first falls in it: a command's calls usually
 * fill two or three rows (1 KiB each), not all 24. */
typedef struct gb_latency_hist {
    uint64_t total;
    uint64_t *rows[GB_LATENCY_HIST_BUCKETS + 1];
} gb_latency_hist;

void gb_latency_hist_free(gb_latency_hist *h);

/* Records a call of duration_us microseconds (Redis records duration*1000
 * nanoseconds, clamped to 1 ns .. 1 s). */
void gb_latency_hist_record(struct gb_command *cmd, int64_t duration_us);
/* The value (ns) at percentile p (0..100), as hdr_value_at_percentile. */
int64_t gb_latency_hist_percentile(const gb_latency_hist *h, double p);
/* LATENCY HISTOGRAM's cumulative buckets: calls emit(usec, cumulative) for
 * each power-of-two level (from 1024 ns) where the count grew. */
void gb_latency_hist_cdf(const gb_latency_hist *h, void (*emit)(void *ctx, int64_t usec, uint64_t cumulative),
                         void *ctx);

#define GB_LATENCY_TS_LEN 160

typedef struct gb_latency_sample {
    int64_t time;    /* Unix seconds; 0: unused slot */
    uint32_t latency; /* ms */
} gb_latency_sample;

typedef struct gb_latency_event {
    char *name;
    int idx; /* next slot */
    uint32_t max;
    gb_latency_sample samples[GB_LATENCY_TS_LEN];
} gb_latency_event;

typedef struct gb_latency_monitor {
    gb_latency_event **events; /* in the order they first happened */
    size_t n;
} gb_latency_monitor;

/* Redis's latencyAddSampleIfNeeded: records `ms` for the event when the
 * monitor is on and ms reaches its threshold. */
void gb_latency_add_sample_if_needed(struct gb_engine *eng, const char *event, int64_t ms);
gb_latency_event *gb_latency_event_find(gb_latency_monitor *m, gb_slice name);
/* Forgets one event (name) or all (name NULL); returns how many. */
int gb_latency_reset(gb_latency_monitor *m, const gb_slice *name);
/* LATENCY DOCTOR's and GRAPH's text (gb_malloc'd, NUL-terminated). */
char *gb_latency_doctor(struct gb_engine *eng);
char *gb_latency_graph(const gb_latency_event *ev, int64_t now);

#endif
