/*
 * MEMORY: USAGE, STATS, DOCTOR, MALLOC-STATS, PURGE, HELP, with Redis
 * 7.0's replies (engine/core/introspect/memory_report.h says where the figures come
 * from).
 *
 * USAGE is exact: each value type keeps its byte total as it changes, so
 * the whole value costs as little to measure as Redis's sample of five
 * elements; SAMPLES is accepted and checked as Redis checks it.
 */
#include "engine/commands/cmd_util.h"
#include "engine/core/engine.h"
#include "engine/core/introspect/memory_report.h"
#include "engine/base/allocator.h"
#include "engine/base/mem.h"
#include "engine/base/util.h"

static void memory_help(gb_client *c)
{
    static const char *const lines[] = {
        "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        "HELP",
        "    Prints this help.",
    };
    gb_reply_help(c, lines, GB_ARRAY_LEN(lines));
}

/* Redis: any number of "SAMPLES <count>" pairs, count >= 0. */
static bool usage_options_ok(gb_client *c, int argc, gb_slice *argv)
{
    for (int j = 3; j < argc; j += 2) {
        int64_t samples;
        if (!gb_slice_ieq(argv[j], "samples") || j + 1 >= argc) {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return false;
        }
        if (!gb_slice2ll(argv[j + 1], &samples)) {
            gb_reply_error(c, GB_ERR_NOT_INT);
            return false;
        }
        if (samples < 0) {
            gb_reply_error(c, GB_ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

static void memory_usage(gb_client *c, int argc, gb_slice *argv)
{
    if (!usage_options_ok(c, argc, argv))
        return;
    /* As Redis: the table as it is, an expired key not yet deleted included. */
    gb_slice key = argv[2];
    const gb_kv *kv = (const gb_kv *)gb_htable_find(&c->db->keys, &key, gb_hash_slice(key));
    if (!kv)
        gb_reply_nil(c);
    else
        gb_reply_int(c, (int64_t)gb_kv_mem(kv));
}

static void pair_int(gb_client *c, const char *name, long long v)
{
    gb_reply_cstr(c, name);
    gb_reply_int(c, v);
}

static void pair_double(gb_client *c, const char *name, double v)
{
    gb_reply_cstr(c, name);
    gb_reply_double(c, v);
}

static void memory_stats(gb_client *c)
{
    gb_memory_overhead mh;
    gb_memory_overhead_get(c->eng, &mh);
    gb_reply_map(c, 27 + (int64_t)mh.num_dbs);
    pair_int(c, "peak.allocated", (long long)mh.peak_allocated);
    pair_int(c, "total.allocated", (long long)mh.total_allocated);
    pair_int(c, "startup.allocated", (long long)mh.startup_allocated);
    pair_int(c, "replication.backlog", (long long)mh.repl_backlog);
    pair_int(c, "clients.slaves", (long long)mh.clients_slaves);
    pair_int(c, "clients.normal", (long long)mh.clients_normal);
    pair_int(c, "cluster.links", (long long)mh.cluster_links);
    pair_int(c, "aof.buffer", (long long)mh.aof_buffer);
    pair_int(c, "lua.caches", (long long)mh.lua_caches);
    pair_int(c, "functions.caches", (long long)mh.functions_caches);
    for (size_t j = 0; j < mh.num_dbs; j++) {
        char name[32];
        snprintf(name, sizeof name, "db.%d", mh.db[j].dbid);
        gb_reply_cstr(c, name);
        gb_reply_map(c, 3);
        pair_int(c, "overhead.hashtable.main", (long long)mh.db[j].main);
        pair_int(c, "overhead.hashtable.expires", (long long)mh.db[j].expires);
        pair_int(c, "overhead.hashtable.slot-to-keys", 0);
    }
    pair_int(c, "overhead.total", (long long)mh.overhead_total);
    pair_int(c, "keys.count", (long long)mh.total_keys);
    pair_int(c, "keys.bytes-per-key", (long long)mh.bytes_per_key);
    pair_int(c, "dataset.bytes", (long long)mh.dataset);
    pair_double(c, "dataset.percentage", mh.dataset_perc);
    pair_double(c, "peak.percentage", mh.peak_perc);
    pair_int(c, "allocator.allocated", (long long)mh.allocator_allocated);
    pair_int(c, "allocator.active", (long long)mh.allocator_active);
    pair_int(c, "allocator.resident", (long long)mh.allocator_resident);
    pair_double(c, "allocator-fragmentation.ratio", mh.allocator_frag);
    pair_int(c, "allocator-fragmentation.bytes", mh.allocator_frag_bytes);
    pair_double(c, "allocator-rss.ratio", mh.allocator_rss);
    pair_int(c, "allocator-rss.bytes", mh.allocator_rss_bytes);
    pair_double(c, "rss-overhead.ratio", mh.rss_extra);
    pair_int(c, "rss-overhead.bytes", mh.rss_extra_bytes);
    pair_double(c, "fragmentation", mh.total_frag);
    pair_int(c, "fragmentation.bytes", mh.total_frag_bytes);
    gb_memory_overhead_free(&mh);
}

/* The allocator's own report (jemalloc's malloc_stats_print), or Redis's
 * text without jemalloc; free text (a verbatim string in RESP3, as Redis
 * replies). */
static void memory_malloc_stats(gb_client *c)
{
    size_t len;
    char *report = gb_allocator_report(&len);
    if (!report) {
        static const char text[] = "Stats not supported for the current allocator";
        gb_reply_verbatim(c, text, sizeof text - 1);
        return;
    }
    gb_reply_verbatim(c, report, len);
    gb_free(report);
}

static void memory_doctor(gb_client *c)
{
    size_t len;
    char *report = gb_memory_doctor(c->eng, &len);
    gb_reply_verbatim(c, report, len);
    gb_free(report);
}

static void cmd_memory(gb_client *c, int argc, gb_slice *argv)
{
    gb_slice sub = argv[1];
    if (gb_slice_ieq(sub, "help") && argc == 2)
        memory_help(c);
    else if (gb_slice_ieq(sub, "usage") && argc >= 3)
        memory_usage(c, argc, argv);
    else if (gb_slice_ieq(sub, "stats") && argc == 2)
        memory_stats(c);
    else if (gb_slice_ieq(sub, "malloc-stats") && argc == 2)
        memory_malloc_stats(c);
    else if (gb_slice_ieq(sub, "doctor") && argc == 2)
        memory_doctor(c);
    else if (gb_slice_ieq(sub, "purge") && argc == 2) {
        gb_allocator_purge();
        gb_reply_ok(c);
    } else
        gb_reply_unknown_subcommand(c, sub, "memory");
}

GB_DEFINE_COMMANDS(memory,
    {"memory", cmd_memory, 0, "doctor help malloc-stats purge stats usage"});
