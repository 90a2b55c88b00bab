#include "engine/core/introspect/memory_report.h"

#include <stdio.h>
#include <stdlib.h>

#include "engine/base/allocator.h"
#include "engine/base/mem.h"
#include "engine/base/strbuf.h"
#include "engine/core/replication/repl.h"
#include "platform/mem.h"

size_t gb_memory_peak(gb_engine *eng)
{
    size_t used = gb_mem_used();
    if (used > eng->peak_memory)
        eng->peak_memory = used;
    return eng->peak_memory;
}

typedef struct script_caches {
    size_t eval, all;
} script_caches;

/* The scripting module's INFO lines carry the two cache sizes. */
static void script_line(void *lctx, const char *text)
{
    script_caches *sc = lctx;
    static const char eval[] = "used_memory_scripts_eval:", all[] = "used_memory_scripts:";
    if (strncmp(text, eval, sizeof eval - 1) == 0)
        sc->eval = strtoull(text + sizeof eval - 1, NULL, 10);
    else if (strncmp(text, all, sizeof all - 1) == 0)
        sc->all = strtoull(text + sizeof all - 1, NULL, 10);
}

static void fill_clients(gb_engine *eng, gb_memory_overhead *mh)
{
    for (const gb_client *c = eng->clients; c; c = c->next) {
        if (c->flags & GB_CLIENT_REPLICA)
            mh->clients_slaves += gb_client_memory_usage(c);
        else
            mh->clients_normal += gb_client_memory_usage(c);
        mh->nclients++;
    }
    mh->repl_backlog = gb_repl_backlog_bytes(eng);
}

static void fill_dbs(gb_engine *eng, gb_memory_overhead *mh)
{
    mh->db = gb_calloc((size_t)eng->ndbs, sizeof *mh->db);
    for (int i = 0; i < eng->ndbs; i++) {
        gb_db *db = &eng->dbs[i];
        size_t keys = gb_db_size(db);
        if (!keys)
            continue;
        gb_memory_db_overhead *o = &mh->db[mh->num_dbs++];
        o->dbid = i;
        o->main = gb_htable_overhead_bytes(&db->keys);
        o->expires = db->volcap * sizeof *db->vol;
        mh->overhead_total += o->main + o->expires;
        mh->total_keys += keys;
    }
}

/* Shared memory the process maps for its rings: resident, but not heap. */
static size_t ring_pool_bytes(const gb_engine *eng)
{
    return (size_t)eng->cfg.rings * (size_t)eng->cfg.ring_size * 2u;
}

/* Redis's ratios. jemalloc tells its own footprint (allocated, active,
 * resident: engine/base/allocator.h); the C library's malloc does not, so
 * there its resident memory is taken as the process's less the ring pool,
 * and its active memory that too. Either way what the rings hold shows as
 * RSS overhead (Redis's non-allocator RSS); `fragmentation` is RSS over
 * allocations, as INFO's mem_fragmentation_ratio. */
static void fill_ratios(const gb_engine *eng, gb_memory_overhead *mh)
{
    gb_allocator_stats st;
    if (gb_allocator_stats_get(&st)) {
        mh->allocator_allocated = st.allocated;
        mh->allocator_active = st.active;
        mh->allocator_resident = st.resident;
    } else {
        size_t rings = ring_pool_bytes(eng);
        size_t heap_rss = mh->rss > rings ? mh->rss - rings : mh->rss;
        mh->allocator_allocated = mh->total_allocated;
        mh->allocator_active = mh->allocator_resident = heap_rss;
    }
    mh->allocator_frag = mh->allocator_allocated ? (float)mh->allocator_active / (float)mh->allocator_allocated : 0;
    mh->allocator_frag_bytes = (long long)mh->allocator_active - (long long)mh->allocator_allocated;
    mh->allocator_rss = mh->allocator_active ? (float)mh->allocator_resident / (float)mh->allocator_active : 0;
    mh->allocator_rss_bytes = (long long)mh->allocator_resident - (long long)mh->allocator_active;
    mh->rss_extra = mh->allocator_resident ? (float)mh->rss / (float)mh->allocator_resident : 0;
    mh->rss_extra_bytes = (long long)mh->rss - (long long)mh->allocator_resident;
    mh->total_frag = mh->total_allocated ? (float)mh->rss / (float)mh->total_allocated : 0;
    mh->total_frag_bytes = (long long)mh->rss - (long long)mh->total_allocated;
}

void gb_memory_overhead_get(gb_engine *eng, gb_memory_overhead *mh)
{
    memset(mh, 0, sizeof *mh);
    mh->total_allocated = gb_mem_used();
    mh->peak_allocated = gb_memory_peak(eng);
    mh->startup_allocated = eng->startup_allocated;
    mh->rss = gb_plat_rss_bytes();
    const gb_service *sv = eng->service;
    mh->aof_buffer = sv && sv->uncounted_memory ? sv->uncounted_memory(sv->ctx) : 0;
    script_caches sc = {0, 0};
    if (eng->scripting)
        eng->scripting->info_memory(eng->scripting->ctx, script_line, &sc);
    mh->lua_caches = sc.eval;
    mh->functions_caches = sc.all > sc.eval ? sc.all - sc.eval : 0;
    fill_clients(eng, mh);
    mh->overhead_total = mh->startup_allocated + mh->repl_backlog + mh->clients_slaves + mh->clients_normal +
                         mh->aof_buffer + mh->lua_caches + mh->functions_caches;
    fill_dbs(eng, mh);
    mh->dataset = mh->total_allocated > mh->overhead_total ? mh->total_allocated - mh->overhead_total : 0;
    mh->net_memory_used = mh->total_allocated > mh->startup_allocated ? mh->total_allocated - mh->startup_allocated : 1;
    mh->dataset_perc = (float)mh->dataset * 100 / (float)mh->net_memory_used;
    mh->bytes_per_key = mh->total_keys ? mh->net_memory_used / mh->total_keys : 0;
    mh->peak_perc = mh->peak_allocated ? (float)mh->total_allocated * 100 / (float)mh->peak_allocated : 0;
    fill_ratios(eng, mh);
}

void gb_memory_overhead_free(gb_memory_overhead *mh)
{
    gb_free(mh->db);
    mh->db = NULL;
}

/* ---- MEMORY DOCTOR (Redis's getMemoryDoctorReport and its texts) ---------------------------- */

#define MB10 (10LL << 20)

static const char *const DOCTOR_PEAK =
    " * Peak memory: In the past this instance used more than 150% the memory that is currently using. The "
    "allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation "
    "ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance "
    "Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the "
    "Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, "
    "please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the "
    "instance.\n\n";
static const char *const DOCTOR_FRAG =
    " * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that "
    "the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis "
    "performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry "
    "above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the "
    "problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc "
    "allocator and not the default libc malloc. Note: The currently used allocator is \"";
static const char *const DOCTOR_CLIENTS =
    " * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on "
    "average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not "
    "receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending "
    "commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT "
    "LIST command in order to investigate the issue if it causes problems in your instance, or to understand "
    "better why certain clients are using a big amount of memory.\n\n";

char *gb_memory_doctor(gb_engine *eng, size_t *len)
{
    gb_memory_overhead mh;
    gb_memory_overhead_get(eng, &mh);
    bool empty = mh.total_allocated < 5u * 1024 * 1024;
    bool big_peak = !empty && (float)mh.peak_allocated / (float)mh.total_allocated > 1.5f;
    /* the heap's RSS: the ring pool is resident by design, not fragmentation */
    bool high_frag = !empty && mh.allocator_frag > 1.4f && mh.allocator_frag_bytes > MB10;
    bool big_clients = !empty && mh.nclients && mh.clients_normal / mh.nclients > 1024 * 200;
    gb_memory_overhead_free(&mh);
    const char *text;
    char *out;
    if (empty) {
        text = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in "
               "these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam "
               "and I will be back to our programming as soon as I finished rebooting.\n";
    } else if (!big_peak && !high_frag && !big_clients) {
        text = "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this "
               "base.\n";
    } else {
        gb_strbuf b = {0};
        gb_strbuf_adds(&b, "Sam, I detected a few issues in this Redis instance memory implants:\n\n");
        if (big_peak)
            gb_strbuf_adds(&b, DOCTOR_PEAK);
        if (high_frag) {
            gb_strbuf_adds(&b, DOCTOR_FRAG);
            gb_strbuf_adds(&b, gb_allocator_name());
            gb_strbuf_adds(&b, "\".\n\n");
        }
        if (big_clients)
            gb_strbuf_adds(&b, DOCTOR_CLIENTS);
        gb_strbuf_adds(&b, "I'm here to keep you safe, Sam. I want to help you.\n");
        *len = b.len;
        return b.p;
    }
    *len = strlen(text);
    out = gb_memdup(text, *len);
    return out;
}
