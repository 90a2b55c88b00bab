/* engine/base/allocator.h on jemalloc (GOBLIN_ALLOCATOR=jemalloc). */
#include "engine/base/allocator.h"

#include <jemalloc/jemalloc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "engine/base/mem.h"

/* The options jemalloc starts with: it reads this symbol once, before main
 * (MALLOC_CONF in the environment still overrides it, as jemalloc
 * documents).
 *
 * slab_sizes: jemalloc carves each small size class from slabs of a few
 * pages and keeps about 200 bytes of metadata per slab (its extent record
 * and page-map entries). By default a power-of-two class gets one 4 KiB
 * page, so 128-byte blocks pay ~6 bytes each of metadata, four to eight
 * times what the 112- and 160-byte classes pay from their 7- and 5-page
 * slabs. A key with a 100-byte value is exactly one 128-byte record
 * (keyrecord.h), so a million of them cost 6 MB of metadata: about 5 bytes
 * per key of RSS beyond used_memory (docs/allocator.md, "Slab sizes").
 * These classes get the largest slab jemalloc allows up to 8 pages (16 and
 * 32 bytes reach their 512-block limit at 2 and 4): a power of two divides
 * the slab exactly, so no slab ends in a gap. The other classes keep
 * jemalloc's sizes, chosen so that their blocks fill the slab exactly. */
const char *malloc_conf = "slab_sizes:16-16:2|32-32:4|64-64:8|128-128:8|256-256:8|512-512:8|"
                          "1024-1024:8|2048-2048:8|4096-4096:8";

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

size_t gb_allocator_slab_bytes(size_t size)
{
    unsigned nbins = 0;
    size_t sz = sizeof nbins;
    if (mallctl("arenas.nbins", &nbins, &sz, NULL, 0) != 0)
        return 0;
    for (unsigned i = 0; i < nbins; i++) {
        char name[64];
        snprintf(name, sizeof name, "arenas.bin.%u.size", i);
        if (read_size(name) != size)
            continue;
        snprintf(name, sizeof name, "arenas.bin.%u.slab_size", i);
        return read_size(name);
    }
    return 0;
}

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
