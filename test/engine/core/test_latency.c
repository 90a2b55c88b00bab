/* engine/core/introspect/latency.c: the per-command histograms answer what Redis
 * 7.0's HdrHistogram answers for the same durations. The expected values
 * are redis-server 7.0.15's own INFO latencystats after one call of each
 * duration (p50 = p99 = p99.9 = the bucket's highest equivalent value). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "engine/base/mem.h"
#include "engine/core/request/command.h"
#include "engine/core/introspect/latency.h"

static void test_percentiles_as_redis(void **state)
{
    (void)state;
    static const struct {
        int64_t us;
        int64_t ns; /* Redis's value_at_percentile */
    } cases[] = {{0, 1}, {7, 7007}, {12, 12031}, {28, 28031}, {115, 115199}, {142, 142335}, {203, 203775},
                 {2000000, 1002438655}}; /* over 1 s: clamped to 1 s, as Redis does */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gb_command cmd;
        memset(&cmd, 0, sizeof cmd);
        gb_latency_hist_record(&cmd, cases[i].us);
        assert_int_equal(cmd.latency_hist->total, 1);
        for (double p = 0.0; p <= 100.0; p += 49.95)
            assert_int_equal(gb_latency_hist_percentile(cmd.latency_hist, p == 0.0 ? 50.0 : p), cases[i].ns);
        gb_latency_hist_free(cmd.latency_hist);
    }
}

typedef struct cdf {
    int64_t usec[32];
    uint64_t cum[32];
    int n;
} cdf;

static void collect(void *ctx, int64_t usec, uint64_t cumulative)
{
    cdf *c = ctx;
    c->usec[c->n] = usec;
    c->cum[c->n++] = cumulative;
}

/* LATENCY HISTOGRAM's buckets: the power-of-two levels from 1024 ns where
 * the cumulative count grew, labelled with the level's highest equivalent
 * value in microseconds (1, 2, 4, 8, 16, 33, 66, ...). */
static void test_cdf_buckets(void **state)
{
    (void)state;
    gb_command cmd;
    memset(&cmd, 0, sizeof cmd);
    static const int64_t calls[] = {0, 0, 1, 3, 3, 40, 40, 40, 70};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        gb_latency_hist_record(&cmd, calls[i]);
    cdf c = {0};
    gb_latency_hist_cdf(cmd.latency_hist, collect, &c);
    static const int64_t usec[] = {1, 4, 66, 132};
    static const uint64_t cum[] = {3, 5, 8, 9};
    assert_int_equal(c.n, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(c.usec[i], usec[i]);
        assert_int_equal(c.cum[i], cum[i]);
    }
    gb_latency_hist_free(cmd.latency_hist);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentiles_as_redis),
        cmocka_unit_test(test_cdf_buckets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
