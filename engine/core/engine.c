#define _POSIX_C_SOURCE 200809L
#include "engine/core/engine.h"

#include "engine/core/memory/client_memory.h"
#include "engine/core/shutdown.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "engine/core/acl/acl.h"
#include "engine/core/pubsub/pubsub.h"
#include "engine/core/request/blocking.h"
#include "engine/core/memory/evict.h"
#include "engine/core/introspect/memory_report.h"
#include "engine/core/memory/lazyfree.h"
#include "engine/core/memory/sliced_free.h"
#include "engine/core/keyspace/hfe.h"
#include "engine/core/replication/failover.h"
#include "engine/core/replication/replica.h"
#include "engine/cluster/cluster.h"
#include "engine/core/cluster_mode.h"
#include "engine/base/mem.h"
#include "engine/core/request/multi.h"
#include "engine/core/replication/repl.h"
#include "engine/core/pubsub/tracking.h"
#include "engine/base/random.h"
#include "platform/clock.h"
#include "platform/service.h"

/* ---- logging --------------------------------------------------------------- */

static int log_level = GB_LOG_NOTICE;
static FILE *log_out;
static bool log_syslog; /* syslog-enabled: every line to syslog(3) too */

void gb_log_set(int level, FILE *out)
{
    log_level = level;
    log_out = out;
}

void gb_log_set_level(int level) { log_level = level; }

int gb_log_fd(void) { return fileno(log_out ? log_out : stderr); }

void gb_log(int level, const char *fmt, ...)
{
    if (level < log_level)
        return;
    FILE *out = log_out ? log_out : stderr;
    static const char marks[] = {'.', '-', '*', '#'};
    char ts[64];
    int64_t now = gb_clock_real_ms();
    time_t secs = (time_t)(now / 1000);
    struct tm tm;
    localtime_r(&secs, &tm);
    size_t n = strftime(ts, sizeof ts, "%d %b %Y %H:%M:%S", &tm);
    snprintf(ts + n, sizeof ts - n, ".%03d", (int)(now % 1000));
    fprintf(out, "%d:M %s %c ", (int)getpid(), ts, marks[level < 0 ? 0 : level > 3 ? 3 : level]);
    va_list ap;
    va_start(ap, fmt);
    if (log_syslog) {
        char line[1024]; /* Redis's LOG_MAX_LEN: longer lines are cut, in syslog and the file alike */
        vsnprintf(line, sizeof line, fmt, ap);
        fputs(line, out);
        gb_plat_syslog_line(level, line);
    } else {
        vfprintf(out, fmt, ap);
    }
    va_end(ap);
    fputc('\n', out);
    fflush(out);
}

void gb_log_to_syslog(const char *ident, int facility)
{
    gb_plat_syslog_open(ident, facility);
    log_syslog = true;
}

/* ---- life cycle -------------------------------------------------------------- */

gb_engine *gb_engine_create(const gb_settings *cfg)
{
    gb_engine *eng = gb_calloc(1, sizeof *eng); /* out of memory is fatal here: start-up */
    gb_settings_copy(&eng->cfg, cfg);
    gb_random_seed_once_from_os();
    gb_hash_seed_once(gb_random_u64());
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 40; i++)
        eng->run_id[i] = hex[gb_random_u64() & 15];
    eng->run_id[40] = '\0';
    eng->start_mono_ms = gb_clock_mono_ms();
    eng->start_real_ms = gb_clock_real_ms();
    gb_engine_update_time(eng);
    eng->next_client_id = 1;
    eng->active_expire_enabled = true;
    eng->lazyfree = gb_lazyfree_new(&eng->cfg.helper_cpus);
    eng->sliced_free = gb_sliced_free_new();
    gb_repl_init(eng);
    eng->ns_per_cycle = gb_cycles_ns_per_cycle(5);
    eng->pubsub = gb_pubsub_new();
    eng->time_every_call = gb_engine_times_every_call(&eng->cfg);
    eng->hz = eng->cfg.hz;
    gb_acl_new(eng); /* before any command registers: each gets an ACL id */

    eng->ndbs = cfg->databases;
    eng->dbs = gb_calloc((size_t)eng->ndbs, sizeof *eng->dbs);
    for (int i = 0; i < eng->ndbs; i++) {
        gb_db_init(&eng->dbs[i], eng, i);
        gb_multi_db_init(&eng->dbs[i]);
        gb_blocking_db_init(&eng->dbs[i]);
    }

    return eng;
}

void gb_engine_free(gb_engine *eng)
{
    if (!eng)
        return;
    if (eng->service)
        eng->service->destroy(eng->service->ctx);
    if (eng->scripting)
        eng->scripting->destroy(eng->scripting->ctx);
    gb_replica_destroy(eng);
    gb_failover_destroy(eng);
    gb_shutdown_destroy(eng);
    gb_cluster_free(eng->cluster);
    while (eng->clients)
        gb_client_free(eng->clients);
    for (int i = 0; i < eng->ndbs; i++) {
        gb_blocking_db_destroy(&eng->dbs[i]);
        gb_multi_db_destroy(&eng->dbs[i]);
        gb_db_destroy(&eng->dbs[i]);
    }
    gb_sliced_free_drain(eng);
    gb_sliced_free_free(eng->sliced_free);
    gb_free(eng->dbs);
    gb_commands_destroy(eng);
    gb_pubsub_free(eng->pubsub);
    gb_acl_free(eng->acl);
    gb_blocking_engine_destroy(eng);
    gb_tracking_engine_free(eng);
    gb_free(eng->monitors);
    gb_repl_destroy(eng);
    gb_propagate_destroy(eng);
    gb_lazyfree_free(eng->lazyfree);
    gb_slowlog_reset(&eng->slowlog);
    gb_latency_reset(&eng->latency, NULL);
    gb_errorstats_reset(&eng->errorstats);
    gb_evict_free(eng);
    gb_settings_free(&eng->cfg);
    gb_free(eng);
}

/* ---- introspection -------------------------------------------------------------- */

bool gb_engine_times_every_call(const gb_settings *cfg)
{
    return cfg->latency_tracking || cfg->slowlog_log_slower_than >= 0 || cfg->latency_monitor_threshold > 0;
}

/* Redis's call(): the latency monitor's command events, then the
 * command's histogram (the slow log needs the arguments: the gate). */
void gb_call_observe(gb_engine *eng, gb_command *cmd, int64_t duration_us)
{
    if (GB_UNLIKELY(eng->cfg.latency_monitor_threshold > 0))
        gb_latency_add_sample_if_needed(eng, (cmd->flags & GB_CMD_FAST) ? "fast-command" : "command",
                                        duration_us / 1000);
    if (eng->cfg.latency_tracking)
        gb_latency_hist_record(cmd, duration_us);
}

/* Redis's dynamic-hz: double hz while there are more than 200 clients per
 * tick, up to 500. */
static int effective_hz(const gb_engine *eng)
{
    int hz = eng->cfg.hz;
    if (!eng->cfg.dynamic_hz)
        return hz;
    while (eng->nclients / (size_t)hz > 200) {
        hz *= 2;
        if (hz > 500)
            return 500;
    }
    return hz;
}

/* ---- change notification ------------------------------------------------------ */

void gb_engine_key_changed(gb_db *db, gb_slice key, uint64_t changes)
{
    db->eng->stats.dirty += changes;
    gb_multi_touch_key(db, key);
    if (GB_UNLIKELY(db->eng->tracking != NULL))
        gb_tracking_invalidate_key(db->eng, key);
}

bool gb_engine_over_maxmemory(const gb_engine *eng)
{
    return eng->cfg.maxmemory > 0 && gb_mem_used() > (size_t)eng->cfg.maxmemory &&
           gb_evict_counted_memory(eng) > (size_t)eng->cfg.maxmemory;
}

static void expire_slice(gb_engine *eng);

/* After work outside any command (Redis's beforeSleep): the clients whose
 * keys it made ready are served (a stream the cron expired wakes its
 * XREADGROUP with an error at once, not at the next client's command),
 * and BCAST tracking clients get the keys it changed. */
static void after_background_work(gb_engine *eng)
{
    if (eng->prop.depth != 0) /* the cron run by a busy script's pump: the script's command is not over */
        return;
    if (eng->nready && !eng->serving_ready)
        gb_blocking_serve_ready(eng);
    if (GB_UNLIKELY(eng->tracking != NULL))
        gb_tracking_flush_broadcast(eng);
}

/* Between event batches: the rest of a cron period's active expiry, then
 * left-over eviction, a slice of freeing big deleted values, then the
 * service's work (a background save). */
gb_bg_state gb_engine_background_step(gb_engine *eng, uint64_t deadline_ns)
{
    if (eng->expire_more) {
        gb_engine_update_time(eng);
        expire_slice(eng);
    }
    bool expiring = eng->expire_more && eng->expire_budget_ns > 0;
    bool evicting = gb_evict_pending(eng) && gb_evict_background(eng);
    bool freeing = gb_sliced_free_pending(eng->sliced_free) &&
                   gb_sliced_free_step(eng, gb_clock_mono_ns() + GB_SLICED_FREE_SLICE_NS);
    gb_bg_state st = eng->service ? eng->service->step(eng->service->ctx, deadline_ns) : GB_BG_IDLE;
    after_background_work(eng);
    return evicting || expiring || freeing ? GB_BG_MORE : st;
}

/* ---- cron ------------------------------------------------------------------------ */

static void sample_ops(gb_engine *eng)
{
    gb_stats *st = &eng->stats;
    uint64_t now = eng->now_mono_ms;
    uint64_t dt = now - st->ops_sample_last_ms;
    if (dt < 100)
        return;
    uint64_t ops = st->total_commands_processed - st->ops_sample_last_count;
    unsigned slot = st->ops_sample_idx++ % GB_ARRAY_LEN(st->ops_samples);
    st->ops_samples[slot] = ops * 1000 / dt;
    /* bytes per second, as Redis's STATS_METRIC_NET_INPUT / _OUTPUT */
    st->net_in_samples[slot] = (st->total_net_input_bytes - st->net_in_sample_last) * 1000 / dt;
    st->net_out_samples[slot] = (st->total_net_output_bytes - st->net_out_sample_last) * 1000 / dt;
    st->net_in_sample_last = st->total_net_input_bytes;
    st->net_out_sample_last = st->total_net_output_bytes;
    st->ops_sample_last_ms = now;
    st->ops_sample_last_count = st->total_commands_processed;
}

/* Active expiry runs in slices of at most this long, so a wave of keys
 * expiring together (a million set with the same deadline) costs clients a
 * millisecond at a time between event batches, never the whole quarter of
 * a cron period at once (issue 34's expiry-wave stall: 25-30 ms). */
#define EXPIRE_SLICE_NS 1000000ull

/* One slice of active expiry: databases in turn from where the last slice
 * stopped, until the slice's time or the period's budget is spent. Leaves
 * expire_more set when it stopped on time with a database not done. */
static void expire_slice(gb_engine *eng)
{
    eng->expire_more = false;
    /* No active expiry under CLIENT PAUSE (Redis 7.0): it would write; nor
     * on a replica: the primary's DELs expire its keys. */
    if (!eng->active_expire_enabled || eng->expire_budget_ns <= 0 || gb_pause_check(eng) != GB_PAUSE_NONE ||
        gb_engine_is_replica(eng))
        return;
    uint64_t start = gb_clock_mono_ns();
    uint64_t slice = (uint64_t)eng->expire_budget_ns < EXPIRE_SLICE_NS ? (uint64_t)eng->expire_budget_ns
                                                                       : EXPIRE_SLICE_NS;
    uint64_t deadline = start + slice;
    for (int n = 0; n < eng->ndbs; n++) {
        int i = (eng->expire_next_db + n) % eng->ndbs;
        gb_db *db = &eng->dbs[i];
        if (db->nvol)
            gb_db_active_expire(db, deadline);
        if (db->hfe)
            gb_hfe_active_expire(db, deadline);
        if (gb_clock_mono_ns() >= deadline) {
            eng->expire_more = true; /* this database, or the ones after it, may hold more */
            eng->expire_next_db = i;
            break;
        }
    }
    uint64_t took = gb_clock_mono_ns() - start;
    eng->expire_budget_ns -= (int64_t)took;
    eng->expire_cycle_us += took / 1000;
    gb_latency_add_sample_if_needed(eng, "expire-cycle", (int64_t)(took / 1000000));
}

void gb_engine_cron(gb_engine *eng)
{
    gb_engine_update_time(eng);
    /* Active expiry may take a quarter of the cron period, in slices: the
     * first now, the others between event batches while keys remain
     * (gb_engine_background_step); rehashing gets 1 ms per database that
     * needs it. */
    uint64_t period_ns = 1000000000ull / (uint64_t)(eng->hz > 0 ? eng->hz : 10);
    eng->expire_budget_ns = (int64_t)(period_ns / 4);
    expire_slice(eng);
    for (int i = 0; i < eng->ndbs; i++) {
        gb_db *db = &eng->dbs[i];
        if (!gb_htable_is_resizing(&db->keys))
            gb_htable_maybe_shrink(&db->keys);
        else if (eng->cfg.activerehashing)
            gb_htable_rehash_ms(&db->keys, 1);
    }
    eng->hz = effective_hz(eng);
    gb_blocking_cron(eng);
    gb_clients_memory_recount(eng);
    gb_failover_cron(eng); /* first, as Redis's replicationCron */
    gb_repl_cron(eng);
    gb_shutdown_cron(eng);
    if (GB_UNLIKELY(eng->cluster != NULL))
        gb_cluster_mode_cron(eng);
    sample_ops(eng);
    (void)gb_memory_peak(eng);
    if (eng->service)
        eng->service->cron(eng->service->ctx);
    after_background_work(eng);
}

