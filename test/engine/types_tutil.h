/*
 * Helpers shared by the hash/set/zset/intset/score model tests (not a test
 * itself: only test_*.c files become executables).
 *
 * Seeds: every randomized test draws from tu_seed(), which honours
 * GOBLIN_TEST_SEED (decimal or 0x-hex) and otherwise picks one from the
 * clock. The seed is printed at start and again by TU_FAIL, so any failure
 * can be replayed with GOBLIN_TEST_SEED=<seed>.
 */
#ifndef GB_TEST_ENGINE_TYPES_TUTIL_H
#define GB_TEST_ENGINE_TYPES_TUTIL_H

#define _GNU_SOURCE

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "engine/base/common.h"
#include "engine/base/mem.h"
#include "engine/base/random.h"

static uint64_t tu_seed_value;

static inline uint64_t tu_seed(void)
{
    static bool done;
    if (!done) {
        const char *env = getenv("GOBLIN_TEST_SEED");
        if (env && *env) {
            tu_seed_value = strtoull(env, NULL, 0);
        } else {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            tu_seed_value = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec;
        }
        fprintf(stderr, "[seed] GOBLIN_TEST_SEED=%" PRIu64 "\n", tu_seed_value);
        done = true;
    }
    return tu_seed_value;
}

/* Reseeds the engine's generator for one test case (derived from the
 * session seed and the case's name, so cases replay independently). */
static inline void tu_reseed(const char *name)
{
    uint64_t h = tu_seed();
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3u;
    gb_random_seed(h);
}

#define TU_FAIL(...)                                                                                         \
    do {                                                                                                     \
        char tu_msg_[512];                                                                                   \
        snprintf(tu_msg_, sizeof tu_msg_, __VA_ARGS__);                                                      \
        fail_msg("%s (replay with GOBLIN_TEST_SEED=%" PRIu64 ")", tu_msg_, tu_seed_value);                   \
    } while (0)

#define TU_CHECK(cond, ...)                                                                                  \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "check failed: %s\n", #cond);                                                    \
            TU_FAIL(__VA_ARGS__);                                                                            \
        }                                                                                                    \
    } while (0)

static inline uint64_t tu_rand(uint64_t n) { return n ? gb_random_below(n) : 0; }

/* A random member name: mostly short, sometimes long, sometimes numeric. */
static inline size_t tu_member(char *buf, size_t cap, uint64_t universe, size_t longlen)
{
    uint64_t id = tu_rand(universe);
    int kind = (int)tu_rand(10);
    if (kind == 0 && longlen) {
        size_t n = longlen + (size_t)tu_rand(8);
        if (n >= cap)
            n = cap - 1;
        int k = snprintf(buf, cap, "long-%" PRIu64 "-", id);
        for (size_t i = (size_t)k; i < n; i++)
            buf[i] = (char)('a' + (id + i) % 26);
        return n > (size_t)k ? n : (size_t)k;
    }
    if (kind <= 3)
        return (size_t)snprintf(buf, cap, "%" PRIu64, id);
    return (size_t)snprintf(buf, cap, "m%" PRIu64, id);
}

#endif
