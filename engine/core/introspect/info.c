/* INFO: the server's state in Redis's "# Section\r\nname:value\r\n" format. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "engine/base/allocator.h"
#include "engine/core/introspect/memory_report.h"
#include "engine/core/engine.h"
#include "engine/core/replication/replica.h"
#include "engine/core/pubsub/tracking.h"
#include "engine/core/pubsub/pubsub.h"
#include "engine/core/memory/lazyfree.h"
#include "engine/base/allocator.h"
#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "engine/core/replication/repl.h"
#include "engine/core/shutdown.h"
#include "platform/daemon.h"
#include "platform/mem.h"

#include "goblin/version.h"
/* The Redis release whose commands and replies goblin-core matches. */
#define GB_REDIS_COMPAT_VERSION "7.0.15"

typedef struct out_ctx {
    void (*out)(void *ctx, const char *s, size_t n);
    void *ctx;
} out_ctx;

static void emitf(out_ctx *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emitf(out_ctx *o, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof buf)
        n = sizeof buf - 1;
    o->out(o->ctx, buf, (size_t)n);
}

static void section_server(gb_engine *eng, out_ctx *o)
{
    struct utsname un;
    uname(&un);
    uint64_t up = gb_clock_mono_ms() - eng->start_mono_ms;
    emitf(o, "# Server\r\n");
    emitf(o, "redis_version:%s\r\n", GB_REDIS_COMPAT_VERSION);
    emitf(o, "goblin_version:%s\r\n", GOBLIN_VERSION);
    emitf(o, "redis_mode:%s\r\n", eng->cluster ? "cluster" : "standalone");
    emitf(o, "os:%s %s %s\r\n", un.sysname, un.release, un.machine);
    emitf(o, "arch_bits:%d\r\n", (int)(sizeof(void *) * 8));
    emitf(o, "monotonic_clock:POSIX clock_gettime\r\n"); /* platform/clock.h's source on every OS */
    emitf(o, "multiplexing_api:libuv\r\n");
    emitf(o, "atomicvar_api:c11-builtin\r\n");
#ifdef __GNUC__
    emitf(o, "gcc_version:%d.%d.%d\r\n", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#endif
    emitf(o, "process_id:%ld\r\n", (long)getpid());
    emitf(o, "process_supervised:no\r\n"); /* supervised is accepted, never acted on */
    emitf(o, "run_id:%s\r\n", eng->run_id);
    emitf(o, "tcp_port:%d\r\n", eng->cfg.port);
    emitf(o, "server_time_usec:%lld\r\n", (long long)gb_clock_real_us());
    emitf(o, "uptime_in_seconds:%llu\r\n", (unsigned long long)(up / 1000));
    emitf(o, "uptime_in_days:%llu\r\n", (unsigned long long)(up / 86400000));
    emitf(o, "hz:%d\r\n", eng->hz);
    emitf(o, "configured_hz:%d\r\n", eng->cfg.hz);
    emitf(o, "executable:%s\r\n", eng->executable);
    emitf(o, "config_file:%s\r\n", eng->cfg.config_file ? eng->cfg.config_file : "");
    emitf(o, "io_threads_active:0\r\n"); /* one engine thread serves every client */
    emitf(o, "io_engine:%s\r\n", eng->io_engine ? eng->io_engine : "libuv");
    if (gb_shutdown_in_progress(eng)) /* waiting for replicas (engine/core/shutdown.h) */
        emitf(o, "shutdown_in_milliseconds:%lld\r\n", (long long)gb_shutdown_ms_left(eng));
    emitf(o, "list_implementation:%s\r\n", eng->cfg.list_implementation == GB_LISTIMPL_PMA ? "pma" : "segmented");
}

static void section_clients(gb_engine *eng, out_ctx *o)
{
    emitf(o, "# Clients\r\n");
    emitf(o, "connected_clients:%zu\r\n", eng->nclients);
    emitf(o, "cluster_connections:0\r\n");
    emitf(o, "maxclients:%lld\r\n", eng->cfg.maxclients);
    /* The largest buffers among the clients now (Redis keeps a few
     * seconds' peak; a subscriber falling behind shows here). */
    size_t max_in = 0, max_out = 0;
    for (const gb_client *c = eng->clients; c; c = c->next) {
        gb_client_desc d = {.fd = -1};
        if (c->hooks && c->hooks->describe)
            c->hooks->describe(c, &d);
        max_in = GB_MAX(max_in, d.qbuf + d.qbuf_free);
        max_out = GB_MAX(max_out, d.obuf);
    }
    emitf(o, "client_recent_max_input_buffer:%zu\r\n", max_in);
    emitf(o, "client_recent_max_output_buffer:%zu\r\n", max_out);
    emitf(o, "blocked_clients:%zu\r\n", eng->blocked_clients);
    emitf(o, "tracking_clients:%zu\r\n", gb_tracking_clients(eng));
    emitf(o, "clients_in_timeout_table:%zu\r\n", eng->nbheap);
}

static void service_line(void *lctx, const char *text)
{
    emitf(lctx, "%s\r\n", text);
}

static void section_memory(gb_engine *eng, out_ctx *o)
{
    /* The lazy-free counters before used_memory: a reply that shows nothing
     * pending must show the memory back (lazyfree.c orders each job's frees
     * before its count; loading the count first, with acquire, orders this
     * read of used_memory after them). Read the other way round, a job that
     * ended while this section was computed (RSS comes from /proc) left its
     * memory counted beside a pending count of 0. */
    size_t lazy_pending = gb_lazyfree_pending(eng->lazyfree);
    unsigned long long lazy_done = (unsigned long long)gb_lazyfree_done(eng->lazyfree);
    size_t used = gb_mem_used();
    size_t rss = gb_plat_rss_bytes();
    size_t peak_memory = gb_memory_peak(eng);
    char h1[32], h2[32], h3[32], h4[32];
    gb_human_bytes(h1, sizeof h1, (double)used);
    gb_human_bytes(h2, sizeof h2, (double)rss);
    gb_human_bytes(h3, sizeof h3, (double)peak_memory);
    gb_human_bytes(h4, sizeof h4, (double)eng->cfg.maxmemory);
    emitf(o, "# Memory\r\n");
    emitf(o, "used_memory:%zu\r\n", used);
    emitf(o, "used_memory_human:%s\r\n", h1);
    emitf(o, "used_memory_rss:%zu\r\n", rss);
    emitf(o, "used_memory_rss_human:%s\r\n", h2);
    emitf(o, "used_memory_peak:%zu\r\n", peak_memory);
    emitf(o, "used_memory_peak_human:%s\r\n", h3);
    emitf(o, "used_memory_peak_perc:%.2f%%\r\n", peak_memory ? (double)used * 100 / (double)peak_memory : 0.0);
    emitf(o, "used_memory_startup:%zu\r\n", eng->startup_allocated);
    gb_allocator_stats al = {0, 0, 0};
    bool have_al = gb_allocator_stats_get(&al);
    emitf(o, "allocator_allocated:%zu\r\n", al.allocated);
    emitf(o, "allocator_active:%zu\r\n", al.active);
    emitf(o, "allocator_resident:%zu\r\n", al.resident);
    size_t total = gb_plat_total_system_memory();
    char h5[32];
    gb_human_bytes(h5, sizeof h5, (double)total);
    emitf(o, "total_system_memory:%zu\r\n", total);
    emitf(o, "total_system_memory_human:%s\r\n", h5);
    /* used_memory_lua, used_memory_scripts, ... (Redis's names). */
    if (eng->scripting)
        eng->scripting->info_memory(eng->scripting->ctx, service_line, o);
    emitf(o, "maxmemory:%lld\r\n", eng->cfg.maxmemory);
    emitf(o, "maxmemory_human:%s\r\n", h4);
    emitf(o, "maxmemory_policy:%s\r\n", gb_config_enum_name("maxmemory-policy", eng->cfg.maxmemory_policy));
    /* Redis's ratios of the allocator's figures (0 where it has none). */
    if (have_al && al.allocated && al.active && al.resident) {
        emitf(o, "allocator_frag_ratio:%.2f\r\n", (double)al.active / (double)al.allocated);
        emitf(o, "allocator_frag_bytes:%lld\r\n", (long long)al.active - (long long)al.allocated);
        emitf(o, "allocator_rss_ratio:%.2f\r\n", (double)al.resident / (double)al.active);
        emitf(o, "allocator_rss_bytes:%lld\r\n", (long long)al.resident - (long long)al.active);
        emitf(o, "rss_overhead_ratio:%.2f\r\n", (double)rss / (double)al.resident);
        emitf(o, "rss_overhead_bytes:%lld\r\n", (long long)rss - (long long)al.resident);
    }
    emitf(o, "mem_fragmentation_ratio:%.2f\r\n", used ? (double)rss / (double)used : 0.0);
    emitf(o, "mem_fragmentation_bytes:%lld\r\n", (long long)rss - (long long)used);
    emitf(o, "mem_allocator:%s\r\n", gb_allocator_name());
    emitf(o, "lazyfree_pending_objects:%zu\r\n", lazy_pending);
    emitf(o, "lazyfreed_objects:%llu\r\n", lazy_done);
}

/* The persistence service writes the section's fields (Redis's names). */
static void section_persistence(gb_engine *eng, out_ctx *o)
{
    emitf(o, "# Persistence\r\n");
    emitf(o, "loading:%d\r\n", eng->loading ? 1 : 0);
    if (eng->service)
        eng->service->info(eng->service->ctx, service_line, o);
}

static void section_stats(gb_engine *eng, out_ctx *o)
{
    const gb_stats *s = &eng->stats;
    uint64_t sum = 0;
    for (size_t i = 0; i < GB_ARRAY_LEN(s->ops_samples); i++)
        sum += s->ops_samples[i];
    emitf(o, "# Stats\r\n");
    emitf(o, "total_connections_received:%llu\r\n", (unsigned long long)s->total_connections_received);
    emitf(o, "total_commands_processed:%llu\r\n", (unsigned long long)s->total_commands_processed);
    emitf(o, "instantaneous_ops_per_sec:%llu\r\n", (unsigned long long)(sum / GB_ARRAY_LEN(s->ops_samples)));
    emitf(o, "total_net_input_bytes:%llu\r\n", (unsigned long long)s->total_net_input_bytes);
    emitf(o, "total_net_output_bytes:%llu\r\n", (unsigned long long)s->total_net_output_bytes);
    uint64_t in = 0, outb = 0;
    for (size_t i = 0; i < GB_ARRAY_LEN(s->net_in_samples); i++) {
        in += s->net_in_samples[i];
        outb += s->net_out_samples[i];
    }
    emitf(o, "instantaneous_input_kbps:%.2f\r\n", (double)in / GB_ARRAY_LEN(s->net_in_samples) / 1024);
    emitf(o, "instantaneous_output_kbps:%.2f\r\n", (double)outb / GB_ARRAY_LEN(s->net_out_samples) / 1024);
    emitf(o, "rejected_connections:%llu\r\n", (unsigned long long)s->rejected_connections);
    gb_repl_info_stats(eng, service_line, o);
    emitf(o, "expired_keys:%llu\r\n", (unsigned long long)s->expired_keys);
    emitf(o, "expire_cycle_cpu_milliseconds:%llu\r\n", (unsigned long long)(eng->expire_cycle_us / 1000));
    emitf(o, "evicted_keys:%llu\r\n", (unsigned long long)s->evicted_keys);
    emitf(o, "evicted_clients:%llu\r\n", (unsigned long long)s->evicted_clients);
    emitf(o, "keyspace_hits:%llu\r\n", (unsigned long long)s->keyspace_hits);
    emitf(o, "keyspace_misses:%llu\r\n", (unsigned long long)s->keyspace_misses);
    emitf(o, "unexpected_error_replies:%llu\r\n", (unsigned long long)s->unexpected_error_replies);
    emitf(o, "total_error_replies:%llu\r\n", (unsigned long long)s->total_error_replies);
    emitf(o, "client_query_buffer_limit_disconnections:%llu\r\n", (unsigned long long)s->client_qbuf_disconnects);
    emitf(o, "client_output_buffer_limit_disconnections:%llu\r\n", (unsigned long long)s->client_obuf_disconnects);
    emitf(o, "protocol_errors:%llu\r\n", (unsigned long long)s->protocol_errors);
    emitf(o, "pubsub_channels:%zu\r\n", gb_pubsub_count(eng, GB_PUBSUB_CHANNEL));
    emitf(o, "pubsub_patterns:%zu\r\n", gb_pubsub_count(eng, GB_PUBSUB_PATTERN));
    emitf(o, "pubsubshard_channels:%zu\r\n", gb_pubsub_count(eng, GB_PUBSUB_SHARD));
    emitf(o, "tracking_total_keys:%zu\r\n", gb_tracking_total_keys(eng));
    emitf(o, "tracking_total_items:%zu\r\n", gb_tracking_total_items(eng));
    emitf(o, "tracking_total_prefixes:%zu\r\n", gb_tracking_total_prefixes(eng));
}

static void replica_line(void *ctx, const char *text) { emitf(ctx, "%s\r\n", text); }

static void section_replication(gb_engine *eng, out_ctx *o)
{
    emitf(o, "# Replication\r\n");
    /* A replica: its role and link first (engine/core/replication/replica.h), then the
     * replication identity, offset and backlog it shares with a primary's
     * (its own replicas, a chain, engine/core/replication/repl.h). */
    if (gb_engine_is_replica(eng)) {
        emitf(o, "role:slave\r\n");
        gb_replica_info(eng, replica_line, o);
    }
    gb_repl_info(eng, service_line, o);
}

typedef struct cmdstat_ctx {
    gb_engine *eng;
    out_ctx *o;
} cmdstat_ctx;

static void section_cpu(gb_engine *eng, out_ctx *o)
{
    (void)eng;
    struct rusage ru, ch;
    getrusage(RUSAGE_SELF, &ru);
    getrusage(RUSAGE_CHILDREN, &ch);
    emitf(o, "# CPU\r\n");
    emitf(o, "used_cpu_sys:%ld.%06ld\r\n", (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
    emitf(o, "used_cpu_user:%ld.%06ld\r\n", (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
    emitf(o, "used_cpu_sys_children:%ld.%06ld\r\n", (long)ch.ru_stime.tv_sec, (long)ch.ru_stime.tv_usec);
    emitf(o, "used_cpu_user_children:%ld.%06ld\r\n", (long)ch.ru_utime.tv_sec, (long)ch.ru_utime.tv_usec);
    /* INFO runs on the engine thread: its own time is the main thread's. */
    double user, sys;
    if (gb_plat_thread_cpu_seconds(&user, &sys) == 0) {
        emitf(o, "used_cpu_sys_main_thread:%.6f\r\n", sys);
        emitf(o, "used_cpu_user_main_thread:%.6f\r\n", user);
    }
}

static void section_modules(gb_engine *eng, out_ctx *o)
{
    (void)eng;
    emitf(o, "# Modules\r\n"); /* none can be loaded */
}

static void section_errorstats(gb_engine *eng, out_ctx *o)
{
    emitf(o, "# Errorstats\r\n");
    for (size_t i = 0; i < eng->errorstats.n; i++)
        emitf(o, "errorstat_%s:count=%llu\r\n", eng->errorstats.v[i].code,
              (unsigned long long)eng->errorstats.v[i].count);
}

/* Redis's trimDoubleString of "%f": no trailing zeros, nor a trailing dot. */
static void percentile_label(char *buf, size_t cap, double p)
{
    snprintf(buf, cap, "%f", p);
    char *end = buf + strlen(buf);
    while (end > buf && end[-1] == '0')
        *--end = '\0';
    if (end > buf && end[-1] == '.')
        *--end = '\0';
}

static void latencystat_one(gb_command *cmd, void *ctx)
{
    cmdstat_ctx *cc = ctx;
    if (!cmd->latency_hist)
        return;
    char line[1024];
    int used = snprintf(line, sizeof line, "latency_percentiles_usec_%s:", cmd->fullname);
    double p[64];
    int n = 0;
    for (const char *s = cc->eng->cfg.latency_tracking_info_percentiles; *s && n < 64;) {
        char *end;
        p[n] = strtod(s, &end);
        if (end == s)
            break;
        n++;
        s = end;
    }
    for (int i = 0; i < n && used < (int)sizeof line; i++) {
        char label[64];
        percentile_label(label, sizeof label, p[i]);
        used += snprintf(line + used, sizeof line - (size_t)used, "%sp%s=%.3f", i ? "," : "", label,
                         (double)gb_latency_hist_percentile(cmd->latency_hist, p[i]) / 1000.0);
    }
    emitf(cc->o, "%s\r\n", line);
}

static void section_latencystats(gb_engine *eng, out_ctx *o)
{
    emitf(o, "# Latencystats\r\n");
    if (!eng->cfg.latency_tracking)
        return;
    cmdstat_ctx cc = {eng, o};
    gb_commands_foreach(eng, true, latencystat_one, &cc);
}

static void section_cluster(gb_engine *eng, out_ctx *o)
{
    emitf(o, "# Cluster\r\ncluster_enabled:%d\r\n", eng->cluster ? 1 : 0);
}

static void cmdstat_one(gb_command *cmd, void *ctx)
{
    cmdstat_ctx *cc = ctx;
    if (!cmd->calls && !cmd->rejected_calls && !cmd->failed_calls)
        return;
    /* Only some calls are timed (gb_command_timed): scale their time up. */
    double usec = cmd->timed_calls ? (double)cmd->cycles * cc->eng->ns_per_cycle / 1000.0 * (double)cmd->calls /
                                         (double)cmd->timed_calls
                                   : 0.0;
    emitf(cc->o, "cmdstat_%s:calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,failed_calls=%llu\r\n",
          cmd->fullname, (unsigned long long)cmd->calls, (unsigned long long)usec,
          cmd->calls ? usec / (double)cmd->calls : 0.0, (unsigned long long)cmd->rejected_calls,
          (unsigned long long)cmd->failed_calls);
}

static void section_commandstats(gb_engine *eng, out_ctx *o)
{
    emitf(o, "# Commandstats\r\n");
    cmdstat_ctx cc = {eng, o};
    gb_commands_foreach(eng, true, cmdstat_one, &cc);
}

static void section_keyspace(gb_engine *eng, out_ctx *o)
{
    emitf(o, "# Keyspace\r\n");
    for (int i = 0; i < eng->ndbs; i++) {
        gb_db *db = &eng->dbs[i];
        if (gb_db_size(db) == 0)
            continue;
        /* avg_ttl over a sample of the volatile keys, as Redis estimates it. */
        int64_t sum = 0, n = 0;
        for (size_t k = 0; k < db->nvol && k < 64; k++) {
            int64_t ttl = gb_kv_expire(db->vol[k]) - eng->now_ms;
            if (ttl > 0) {
                sum += ttl;
                n++;
            }
        }
        emitf(o, "db%d:keys=%zu,expires=%zu,avg_ttl=%lld\r\n", i, gb_db_size(db), db->nvol,
              (long long)(n ? sum / n : 0));
    }
}

typedef struct provider_line_ctx {
    out_ctx *o;
} provider_line_ctx;

static void provider_line(void *lctx, const char *text)
{
    provider_line_ctx *p = lctx;
    emitf(p->o, "%s\r\n", text);
}

static void section_provided(gb_engine *eng, const char *name, out_ctx *o)
{
    if (!eng->info_provider.section)
        return;
    provider_line_ctx p = {o};
    eng->info_provider.section(eng->info_provider.ctx, name, provider_line, &p);
}

typedef struct section_def {
    const char *name;
    void (*fn)(gb_engine *eng, out_ctx *o);
    bool in_default;
} section_def;

static const section_def sections[] = {
    {"server", section_server, true},           {"clients", section_clients, true},
    {"memory", section_memory, true},           {"persistence", section_persistence, true},
    {"stats", section_stats, true},             {"replication", section_replication, true},
    {"cpu", section_cpu, true},                 {"modules", section_modules, true},
    {"commandstats", section_commandstats, false}, {"errorstats", section_errorstats, true},
    {"latencystats", section_latencystats, false}, {"cluster", section_cluster, true},
    {"keyspace", section_keyspace, true},
};

void gb_engine_info(gb_engine *eng, int n, const gb_slice *names, void (*out)(void *ctx, const char *s, size_t n),
                    void *ctx)
{
    /* The sections asked for, as a set: printed once each, in Redis's
     * order whatever the order asked (Redis 7.0's genInfoSectionDict);
     * unknown names add nothing. The transport's (rings) come last. */
    enum { RINGS = GB_ARRAY_LEN(sections) };
    bool want[GB_ARRAY_LEN(sections) + 1] = {false};
    for (int k = 0; k < n; k++) {
        bool all = gb_slice_ieq(names[k], "all") || gb_slice_ieq(names[k], "everything");
        bool dflt = gb_slice_ieq(names[k], "default");
        for (size_t i = 0; i < GB_ARRAY_LEN(sections); i++)
            if (all || (dflt && sections[i].in_default) || gb_slice_ieq(names[k], sections[i].name))
                want[i] = true;
        if (all || dflt || gb_slice_ieq(names[k], "rings"))
            want[RINGS] = true;
    }
    out_ctx o = {out, ctx};
    bool first = true;
    for (size_t i = 0; i < GB_ARRAY_LEN(sections); i++) {
        if (!want[i])
            continue;
        if (!first)
            out(ctx, "\r\n", 2);
        first = false;
        sections[i].fn(eng, &o);
    }
    if (want[RINGS] && eng->info_provider.section) {
        if (!first)
            out(ctx, "\r\n", 2);
        section_provided(eng, "rings", &o);
    }
}
