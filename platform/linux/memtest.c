/* The crash report's fast memory test (Redis's crash-memcheck-enabled) on
 * Linux: every anonymous writable mapping /proc/self/maps lists is tested
 * in place, a megabyte at a time, its contents saved before and restored
 * after, with the patterns of Redis's memtest.c (each word its own
 * address; a pseudo-random fill compared with its copy in the other half;
 * solid and checkerboard fills). It runs inside the crash handler, so it
 * uses only system calls and its own code, never the allocator. The other
 * threads are frozen first (a signal whose handler sleeps), as Redis kills
 * its threads, so that nothing else writes while a region holds a test
 * pattern. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/internal.h"

#define BACKUP_BYTES (1024u * 1024u) /* tested at a time, and saved first */
#define DECACHE_BYTES (8u * 1024u)   /* read at both ends between fill and compare, to push the cache out */
#define MAX_REGIONS 1024
#define PAGE 4096u

static unsigned long *backup; /* mapped when the test is enabled: the allocator may be what broke */
static _Atomic int frozen;    /* threads asleep in freeze_here */

int gb__memtest_prepare(void)
{
    if (backup)
        return 0;
    void *p = mmap(NULL, BACKUP_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return gb__fail(gb__errno_code(errno), NULL, 0, "no memory for the crash memory test: %s", strerror(errno));
    backup = p;
    return 0;
}

/* ---- the patterns (Redis's memtest.c, without its interactive mode) ---- */

static int addressing(unsigned long *l, size_t bytes)
{
    size_t words = bytes / sizeof *l;
    for (size_t j = 0; j < words; j++)
        l[j] = (unsigned long)&l[j];
    for (size_t j = 0; j < words; j++)
        if (l[j] != (unsigned long)&l[j])
            return 1;
    return 0;
}

/* Two halves written together a page apart at every step, so each write
 * lands on another page (the cache helps as little as it can). */
static void fill_pairs(unsigned long *l, size_t bytes, bool random, unsigned long v1, unsigned long v2)
{
    size_t step = PAGE / sizeof *l, words = bytes / sizeof *l / 2, iwords = words / step;
    uint64_t seed = UINT64_C(0xd13133de9afdb566);
    for (size_t off = 0; off < step; off++) {
        unsigned long *a = l + off, *b = a + words;
        unsigned long v = (off & 1) ? v2 : v1;
        for (size_t w = 0; w < iwords; w++) {
            if (random) { /* xorshift64*: no library call */
                seed ^= seed >> 12;
                seed ^= seed << 25;
                seed ^= seed >> 27;
                v = (unsigned long)(seed * UINT64_C(2685821657736338717));
            }
            *a = *b = v;
            a += step;
            b += step;
        }
    }
}

static int compare_halves(const unsigned long *l, size_t bytes, int times)
{
    size_t words = bytes / sizeof *l / 2;
    int errors = 0;
    for (int t = 0; t < times; t++)
        for (size_t w = 0; w < words; w++)
            if (l[w] != l[w + words]) {
                errors++;
                break;
            }
    return errors;
}

/* One chunk (an even number of pages) tested and given back its bytes;
 * the region's two ends are read between fills to flush the cache. */
static int test_chunk(unsigned long *p, size_t len, const unsigned long *region, size_t region_bytes)
{
    const unsigned long *tail = (const unsigned long *)((const char *)region + region_bytes - DECACHE_BYTES);
    memcpy(backup, p, len);
    int errors = addressing(p, len);
    static const struct {
        bool random;
        unsigned long v1, v2;
    } fills[] = {
        {true, 0, 0},                    /* pseudo-random */
        {false, 0, ~0UL},                /* solid: all zeros / all ones */
        {false, ~0UL / 3 * 2, ~0UL / 3}, /* checkerboard: 1010... / 0101... */
    };
    for (size_t f = 0; f < sizeof fills / sizeof fills[0]; f++) {
        fill_pairs(p, len, fills[f].random, fills[f].v1, fills[f].v2);
        if (region_bytes >= DECACHE_BYTES) {
            (void)compare_halves(region, DECACHE_BYTES, 1);
            (void)compare_halves(tail, DECACHE_BYTES, 1);
        }
        errors += compare_halves(p, len, 4);
    }
    memcpy(p, backup, len);
    return errors;
}

static int test_region(unsigned long *m, size_t bytes)
{
    if ((bytes & (PAGE - 1)) || bytes < 2 * PAGE)
        return 0; /* the halves need two pages at least */
    int errors = 0;
    unsigned long *p = m;
    size_t left = bytes;
    while (left) {
        if (left == PAGE) { /* a last single page: test it with the one before */
            left += PAGE;
            p -= PAGE / sizeof *p;
        }
        size_t len = left > BACKUP_BYTES ? BACKUP_BYTES : left;
        if ((len / PAGE) % 2)
            len -= PAGE;
        errors += test_chunk(p, len, m, bytes);
        p += len / sizeof *p;
        left -= len;
    }
    return errors;
}

/* ---- freezing the other threads ---- */

static void freeze_here(int sig)
{
    (void)sig;
    atomic_fetch_add(&frozen, 1);
    for (;;)
        pause();
}

/* Sends every other thread of the process the freeze signal; waits up to
 * 200 ms for them to arrive. */
static void freeze_other_threads(void)
{
    int sig = SIGRTMAX - 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = freeze_here;
    sigfillset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) != 0)
        return;
    int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return;
    pid_t self = (pid_t)syscall(SYS_gettid), pid = getpid();
    int sent = 0;
    char buf[4096];
    long n;
    while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            long tid = 0;
            for (const char *c = d->d_name; *c >= '0' && *c <= '9'; c++)
                tid = tid * 10 + (*c - '0');
            if (tid > 0 && tid != self && syscall(SYS_tgkill, pid, (pid_t)tid, sig) == 0)
                sent++;
        }
    }
    close(dir);
    for (int i = 0; i < 200 && atomic_load(&frozen) < sent; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

/* ---- the regions ---- */

typedef struct region {
    uintptr_t start, size;
} region;

static uintptr_t hex(const char **s)
{
    uintptr_t v = 0;
    for (;; (*s)++) {
        char c = **s;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return v;
        v = v * 16 + (uintptr_t)d;
    }
}

/* Redis's choice of line: anonymous (device 00:00), writable, not a stack
 * ([stack], or the one this handler runs on), not vdso/vsyscall, and not
 * the backup buffer. */
static void consider_line(const char *line, region *out, int *n, uintptr_t here)
{
    const char *s = line;
    uintptr_t start = hex(&s);
    if (*s++ != '-')
        return;
    uintptr_t end = hex(&s);
    if (end <= start || !strstr(s, " 00:00 ") || strncmp(s, " rw", 3) != 0)
        return;
    if (strstr(s, "stack") || strstr(s, "vdso") || strstr(s, "vsyscall"))
        return;
    if ((here >= start && here < end) || start == (uintptr_t)backup)
        return;
    if (*n < MAX_REGIONS)
        out[(*n)++] = (region){start, end - start};
}

static int list_regions(region *out, uintptr_t here)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[8192], line[1024];
    size_t ll = 0;
    int n = 0;
    ssize_t got;
    while ((got = read(fd, buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < got; i++) {
            if (buf[i] == '\n') {
                line[ll] = '\0';
                consider_line(line, out, &n, here);
                ll = 0;
            } else if (ll < sizeof line - 1) {
                line[ll++] = buf[i];
            }
        }
    close(fd);
    return n;
}

static void put_fd(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w <= 0 && !(w < 0 && errno == EINTR))
            return;
        if (w > 0) {
            s += w;
            n -= (size_t)w;
        }
    }
}

int gb__memtest_process(int fd)
{
    if (!backup)
        return -1;
    freeze_other_threads();
    region regions[MAX_REGIONS];
    int n = list_regions(regions, (uintptr_t)&regions);
    if (n < 0)
        return -1;
    char msg[128];
    for (int i = 0; i < n; i++) {
        /* "*** Preparing to test memory region <hex> (<n> bytes)", as Redis */
        char num[2][24];
        uintptr_t v[2] = {regions[i].start, regions[i].size};
        for (int k = 0; k < 2; k++) {
            char *e = num[k] + sizeof num[k] - 1;
            *e = '\0';
            unsigned base = k == 0 ? 16 : 10;
            do {
                *--e = "0123456789abcdef"[v[k] % base];
                v[k] /= base;
            } while (v[k]);
            memmove(num[k], e, strlen(e) + 1);
        }
        msg[0] = '\0';
        strcat(msg, "*** Preparing to test memory region ");
        strcat(msg, num[0]);
        strcat(msg, " (");
        strcat(msg, num[1]);
        strcat(msg, " bytes)\n");
        put_fd(fd, msg);
    }
    int errors = 0;
    for (int i = 0; i < n; i++) {
        put_fd(fd, ".");
        errors += test_region((unsigned long *)regions[i].start, regions[i].size);
        put_fd(fd, errors ? "E" : "O");
    }
    put_fd(fd, "\n");
    return errors;
}
