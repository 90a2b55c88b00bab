/* platform/clock.h: monotonic and wall clocks, and the cycle counter's
 * calibration agreeing with the monotonic clock. */
#include "tutil.h"

#include <time.h>

#include "clock.h"

static void test_clocks(void **state)
{
    (void)state;
    uint64_t a = gb_clock_mono_ns();
    uint64_t b = gb_clock_mono_ns();
    assert_true(b >= a);
    assert_true(gb_clock_real_ms() > INT64_C(1577836800000)); /* after 2020 */
    int64_t us = gb_clock_real_us(), ms = gb_clock_real_ms();
    assert_true(ms - us / 1000 >= 0 && ms - us / 1000 < 1000);
    assert_true(gb_clock_mono_ms() >= a / 1000000u);
}

static void test_cycles(void **state)
{
    (void)state;
    const char *src = gb_cycles_source();
    assert_non_null(src);
    assert_true(strcmp(src, "tsc") == 0 || strcmp(src, "cntvct_el0") == 0 || strcmp(src, "clock_gettime") == 0 ||
                strcmp(src, "mach_absolute_time") == 0);
    uint64_t prev = gb_cycles_now();
    for (int i = 0; i < 10000; i++) {
        uint64_t now = gb_cycles_now();
        assert_true(now >= prev);
        prev = now;
    }
    double npc = gb_cycles_ns_per_cycle(20);
    assert_true(npc > 0.01 && npc < 1000.0);

    /* 50 ms of sleep measured both ways agree within 10% */
    uint64_t c0 = gb_cycles_now(), t0 = gb_clock_mono_ns();
    struct timespec nap = {0, 50 * 1000000};
    nanosleep(&nap, NULL);
    uint64_t c1 = gb_cycles_now(), t1 = gb_clock_mono_ns();
    double by_cycles = (double)(c1 - c0) * npc, by_clock = (double)(t1 - t0);
    print_message("cycle source %s, %.4f ns/cycle; 50 ms nap: %.3f ms by cycles, %.3f ms by clock\n", src, npc,
                  by_cycles / 1e6, by_clock / 1e6);
    assert_true(by_cycles > by_clock * 0.9 && by_cycles < by_clock * 1.1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clocks),
        cmocka_unit_test(test_cycles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
