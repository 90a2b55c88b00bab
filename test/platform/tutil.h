/*
 * Helpers shared by the platform tests (not a test itself: only test_*.c
 * files become executables). Include it first: it sets the feature macros.
 *
 * The tests are OS-independent: they ask gb_platform_has() what the variant
 * under test can do and assert GB_ENOTSUP where it cannot, so the same file
 * checks linux, darwin and posix builds.
 */
#ifndef GB_TEST_PLATFORM_TUTIL_H
#define GB_TEST_PLATFORM_TUTIL_H

/* glibc: the whole POSIX/XSI namespace (mkdtemp, nftw, ...). macOS and the
 * BSDs show everything by default and ignore this. */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "caps.h"
#include "errmsg.h"
#include "goblin/error.h"
#include "syscalls.h"

/* The capabilities each platform layer must have, written down from
 * docs/platform.md rather than asked of the layer under test. GB_TEST_PLATFORM
 * is the layer CMake built (GOBLIN_PLATFORM, test/CMakeLists.txt). */
#ifndef GB_TEST_PLATFORM
#error "GB_TEST_PLATFORM (the GOBLIN_PLATFORM built) must be defined by test/CMakeLists.txt"
#endif
static inline unsigned tu_expected_caps(void)
{
    if (strcmp(GB_TEST_PLATFORM, "linux") == 0)
        return GB_CAP_PIN | GB_CAP_AFFINITY | GB_CAP_CPU_CURRENT | GB_CAP_TOPOLOGY | GB_CAP_NUMA | GB_CAP_HUGEPAGES |
               GB_CAP_MEMFD | GB_CAP_PARK_KERNEL | GB_CAP_PROC_NUMA_MAPS | GB_CAP_POPULATE;
    if (strcmp(GB_TEST_PLATFORM, "darwin") == 0)
        return GB_CAP_CPU_CURRENT | GB_CAP_LATENCY_QOS | GB_CAP_PARK_KERNEL;
    return 0; /* posix: GB_ENOTSUP for every capability */
}

/* Whether the layer must have every bit of caps, by the table above (for
 * threads, where a CMocka assertion cannot run). */
static inline bool tu_expected_has(unsigned caps) { return (tu_expected_caps() & caps) == caps; }

/* The branch a test takes on a capability: the table's answer, after
 * asserting that gb_platform_has agrees, so a layer that lost a
 * capability fails instead of passing through its GB_ENOTSUP branch. */
#define tu_has(caps) tu_has_at((caps), #caps)
static inline bool tu_has_at(unsigned caps, const char *what)
{
    bool want = tu_expected_has(caps);
    if (gb_platform_has(caps) != want)
        fail_msg("the %s layer %s %s, which docs/platform.md says it %s", GB_TEST_PLATFORM,
                 want ? "lacks" : "claims", what, want ? "has" : "has not");
    return want;
}

/* assert_int_equal with the symbolic names and the platform's message when
 * it fails, e.g. "GB_EINVAL != GB_ENOTSUP (CPU 5 is ...)". */
#define assert_rc(actual, expected)                                                                    \
    do {                                                                                               \
        int a_ = (actual), e_ = (expected);                                                            \
        if (a_ != e_)                                                                                  \
            fail_msg("%s = %d (%s), expected %d (%s); last error: %s", #actual, a_, gb_error_name(a_), \
                     e_, gb_error_name(e_), gb_plat_last_error());                                     \
    } while (0)

#define assert_contains(haystack, needle)                                                    \
    do {                                                                                     \
        const char *h_ = (haystack), *n_ = (needle);                                         \
        if (!h_ || !strstr(h_, n_))                                                          \
            fail_msg("expected \"%s\" to contain \"%s\"", h_ ? h_ : "(null)", n_);           \
    } while (0)

/* CMocka's skip() with the reason printed, so a skipped test says why. */
#define skip_because(...)                 \
    do {                                  \
        print_message("skipped: ");       \
        print_message(__VA_ARGS__);       \
        print_message("\n");              \
        skip();                           \
    } while (0)

/* The emulator these tests run under (qemu-aarch64 in the arm64 cross
 * check; test/CMakeLists.txt sets GOBLIN_TEST_EMULATOR), or NULL natively.
 * qemu-user implements mmap, madvise and /proc/self itself, not every corner
 * of them: the checks it cannot answer skip with this name in the reason. */
static inline const char *tu_emulator(void)
{
    const char *e = getenv("GOBLIN_TEST_EMULATOR");
    return e && *e ? e : NULL;
}

/* How many descriptors are open (0..1023): to prove nothing leaked. */
static inline int tu_open_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++)
        if (fcntl(fd, F_GETFD) >= 0)
            n++;
    return n;
}

/* A "Key: value" number from /proc/meminfo, or -1 if there is none. */
static inline long tu_meminfo(const char *key)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return -1;
    char line[256];
    long v = -1;
    size_t k = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, k) == 0 && line[k] == ':') {
            sscanf(line + k + 1, "%ld", &v);
            break;
        }
    fclose(f);
    return v;
}

/* Writes `text` to the file root/rel, creating the directories on the way. */
static inline void tu_write_file(const char *root, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0755) != 0 && errno != EEXIST)
                fail_msg("mkdir %s: %s", path, strerror(errno));
            *p = '/';
        }
    }
    if (!text) { /* NULL: make `rel` a directory */
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            fail_msg("mkdir %s: %s", path, strerror(errno));
        return;
    }
    FILE *f = fopen(path, "w");
    if (!f)
        fail_msg("create %s: %s", path, strerror(errno));
    fputs(text, f);
    fclose(f);
}

static inline int tu_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static inline void tu_rm_rf(const char *path) { nftw(path, tu_rm_one, 16, FTW_DEPTH | FTW_PHYS); }

#endif
