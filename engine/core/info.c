/* INFO: the server's state in Redis's "# Section\r\nname:value\r\n" format. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "engine/core/memory_report.h"
#include "engine/core/engine.h"
#include "engine/core/tracking.h"
#include "engine/core/pubsub.h"
#include "engine/core/lazyfree.h"
#include "engine/base/mem.h"
#include "engine/base/util.h"
#include "platform/mem.h"

#ifndef GOBLIN_VERSION
#define GOBLIN_VERSION "0.1.0"
#endif
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

static void human_bytes(char *buf, size_t cap, double n)
{
    const char *units = "BKMGTP";
    int u = 0;
    while (n >= 1024 && u < 5) {
        n /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%.0fB", n);
    else
        snprintf(buf, cap, "%.2f%c", n, units[u]);
}

static void section_server(gb_engine *eng, out_ctx *o)
{
    struct utsname un;
    uname(&un);
    uint64_t up = gb_clock_mono_ms() - eng->start_mono_ms;
    emitf(o, "# Server\r\n");
    emitf(o, "redis_version:%s\r\n", GB_REDIS_COMPAT_VERSION);
    emitf(o, "goblin_version:%s\r\n", GOBLIN_VERSION);
    emitf(o, "redis_mode:standalone\r\n");
    emitf(o, "os:%s %s %s\r\n", un.sysname, un.release, un.machine);
    emitf(o, "arch_bits:%d\r\n", (int)(sizeof(void *) * 8));
    emitf(o, "multiplexing_api:libuv\r\n");
    emitf(o, "process_id:%ld\r\n", (long)getpid());
    emitf(o, "run_id:%s\r\n", eng->run_id);
    emitf(o, "tcp_port:%d\r\n", eng->cfg.port);
    emitf(o, "server_time_usec:%lld\r\n", (long long)gb_clock_real_us());
    emitf(o, "uptime_in_seconds:%llu\r\n", (unsigned long long)(up / 1000));
    emitf(o, "uptime_in_days:%llu\r\n", (unsigned long long)(up / 86400000));
    emitf(o, "hz:%d\r\n", eng->cfg.hz);
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
}

static void service_line(void *lctx, const char *text)
{
    emitf(lctx, "%s\r\n", text);
}

static void section_memory(gb_engine *eng, out_ctx *o)
{
    size_t used = gb_mem_used();
    size_t rss = gb_plat_rss_bytes();
    size_t peak_memory = gb_memory_peak(eng);
    char h1[32], h2[32], h3[32], h4[32];
    human_bytes(h1, sizeof h1, (double)used);
    human_bytes(h2, sizeof h2, (double)rss);
    human_bytes(h3, sizeof h3, (double)peak_memory);
    human_bytes(h4, sizeof h4, (double)eng->cfg.maxmemory);
    emitf(o, "# Memory\r\n");
    emitf(o, "used_memory:%zu\r\n", used);
    emitf(o, "used_memory_human:%s\r\n", h1);
    emitf(o, "used_memory_rss:%zu\r\n", rss);
    emitf(o, "used_memory_rss_human:%s\r\n", h2);
    emitf(o, "used_memory_peak:%zu\r\n", peak_memory);
    emitf(o, "used_memory_peak_human:%s\r\n", h3);
    /* used_memory_lua, used_memory_scripts, ... (Redis's names). */
    if (eng->scripting)
        eng->scripting->info_memory(eng->scripting->ctx, service_line, o);
    emitf(o, "maxmemory:%lld\r\n", eng->cfg.maxmemory);
    emitf(o, "maxmemory_human:%s\r\n", h4);
    emitf(o, "maxmemory_policy:%s\r\n", gb_config_enum_name("maxmemory-policy", eng->cfg.maxmemory_policy));
    emitf(o, "mem_fragmentation_ratio:%.2f\r\n", used ? (double)rss / (double)used : 0.0);
    emitf(o, "mem_allocator:libc\r\n");
    emitf(o, "lazyfree_pending_objects:%zu\r\n", gb_lazyfree_pending(eng->lazyfree));
    emitf(o, "lazyfreed_objects:%llu\r\n", (unsigned long long)gb_lazyfree_done(eng->lazyfree));
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
    emitf(o, "rejected_connections:%llu\r\n", (unsigned long long)s->rejected_connections);
    emitf(o, "expired_keys:%llu\r\n", (unsigned long long)s->expired_keys);
    emitf(o, "evicted_keys:%llu\r\n", (unsigned long long)s->evicted_keys);
    emitf(o, "keyspace_hits:%llu\r\n", (unsigned long long)s->keyspace_hits);
    emitf(o, "keyspace_misses:%llu\r\n", (unsigned long long)s->keyspace_misses);
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

static void section_replication(gb_engine *eng, out_ctx *o)
{
    (void)eng;
    emitf(o, "# Replication\r\nrole:master\r\nconnected_slaves:0\r\n");
}

static void section_cpu(gb_engine *eng, out_ctx *o)
{
    (void)eng;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    emitf(o, "# CPU\r\n");
    emitf(o, "used_cpu_sys:%ld.%06ld\r\n", (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
    emitf(o, "used_cpu_user:%ld.%06ld\r\n", (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
}

typedef struct cmdstat_ctx {
    gb_engine *eng;
    out_ctx *o;
} cmdstat_ctx;

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
    {"cpu", section_cpu, true},                 {"commandstats", section_commandstats, false},
    {"keyspace", section_keyspace, true},
};

void gb_engine_info(gb_engine *eng, const char *which, void (*out)(void *ctx, const char *s, size_t n), void *ctx)
{
    out_ctx o = {out, ctx};
    bool all = gb_strcasecmp(which, "all") == 0 || gb_strcasecmp(which, "everything") == 0;
    bool dflt = gb_strcasecmp(which, "default") == 0;
    bool first = true;
    for (size_t i = 0; i < GB_ARRAY_LEN(sections); i++) {
        if (!(all || (dflt && sections[i].in_default) || gb_strcasecmp(which, sections[i].name) == 0))
            continue;
        if (!first)
            out(ctx, "\r\n", 2);
        first = false;
        sections[i].fn(eng, &o);
    }
    /* Transport sections (the ring pool) are part of the default set. */
    if (all || dflt || gb_strcasecmp(which, "rings") == 0) {
        if (eng->info_provider.section) {
            if (!first)
                out(ctx, "\r\n", 2);
            section_provided(eng, "rings", &o);
        }
    }
}
