/*
 * Where the memory goes, as MEMORY STATS and MEMORY DOCTOR report it: Redis
 * 7.0's redisMemOverhead, filled from Goblin's own accounting (the
 * allocator counter, the key tables' overhead, client buffers as the
 * transports describe them, the script caches, the log's buffer).
 */
#ifndef GB_ENGINE_CORE_MEMORY_REPORT_H
#define GB_ENGINE_CORE_MEMORY_REPORT_H

#include "engine/core/engine.h"

typedef struct gb_memory_db_overhead {
    int dbid;
    size_t main;    /* the key table's buckets (overhead.hashtable.main) */
    size_t expires; /* the volatile-key array (overhead.hashtable.expires) */
} gb_memory_db_overhead;

typedef struct gb_memory_overhead {
    size_t peak_allocated, total_allocated, startup_allocated;
    size_t repl_backlog, clients_slaves, clients_normal, cluster_links, aof_buffer;
    size_t lua_caches, functions_caches;
    size_t overhead_total, dataset, total_keys, bytes_per_key, net_memory_used;
    float dataset_perc, peak_perc; /* float, as Redis's: the replies show the same digits */
    size_t allocator_allocated, allocator_active, allocator_resident, rss;
    float allocator_frag, allocator_rss, rss_extra, total_frag;
    long long allocator_frag_bytes, allocator_rss_bytes, rss_extra_bytes, total_frag_bytes;
    size_t nclients;
    gb_memory_db_overhead *db; /* the databases that hold keys */
    size_t num_dbs;
} gb_memory_overhead;

void gb_memory_overhead_get(gb_engine *eng, gb_memory_overhead *mh);
void gb_memory_overhead_free(gb_memory_overhead *mh);

/* The most memory used so far (also moved on by the cron), as Redis's
 * stat_peak_memory. */
size_t gb_memory_peak(gb_engine *eng);

/* MEMORY DOCTOR's report (Redis's texts); gb_free it. */
char *gb_memory_doctor(gb_engine *eng, size_t *len);

#endif
