/* engine/base/allocator.h on jemalloc (GOBLIN_ALLOCATOR=jemalloc). */
#include "engine/base/allocator.h"

#include <jemalloc/jemalloc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine/base/mem.h"

/* "5.3.0-0-g54eaed1d..." -> "jemalloc-5.3.0", as Redis prints it. */
const char *gb_allocator_name(void)
{
    static char name[48];
    if (!name[0]) {
        size_t n = strcspn(JEMALLOC_VERSION, "-");
        snprintf(name, sizeof name, "jemalloc-%.*s", (int)n, JEMALLOC_VERSION);
    }
    return name;
}

static size_t read_size(const char *what)
{
    size_t v = 0, sz = sizeof v;
    return mallctl(what, &v, &sz, NULL, 0) == 0 ? v : 0;
}

bool gb_allocator_stats_get(gb_allocator_stats *st)
{
    /* The statistics are a snapshot taken when the epoch advances. */
    uint64_t epoch = 1;
    size_t sz = sizeof epoch;
    if (mallctl("epoch", &epoch, &sz, &epoch, sz) != 0)
        return false;
    st->allocated = read_size("stats.allocated");
    st->active = read_size("stats.active");
    st->resident = read_size("stats.resident");
    return true;
}

size_t gb_allocator_usable_for(size_t n) { return nallocx(n, 0); }

void gb_allocator_purge(void)
{
    char cmd[64];
    snprintf(cmd, sizeof cmd, "arena.%u.purge", (unsigned)MALLCTL_ARENAS_ALL);
    mallctl(cmd, NULL, NULL, NULL, 0);
}

bool gb_allocator_set_background_thread(bool on)
{
    bool value = on;
    return mallctl("background_thread", NULL, NULL, &value, sizeof value) == 0;
}

typedef struct report_buf {
    char *p;
    size_t len, cap;
} report_buf;

static void report_write(void *ctx, const char *s)
{
    report_buf *b = ctx;
    size_t n = strlen(s);
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > cap)
            cap *= 2;
        b->p = gb_realloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

char *gb_allocator_report(size_t *len)
{
    report_buf b = {0};
    malloc_stats_print(report_write, &b, NULL);
    if (!b.p)
        report_write(&b, "");
    *len = b.len;
    return b.p;
}
