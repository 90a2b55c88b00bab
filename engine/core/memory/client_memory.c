#include "engine/core/memory/client_memory.h"

#include <stdio.h>

#include "engine/core/engine.h"
#include "engine/core/replication/repl.h"

gb_client_class gb_client_obuf_class(const gb_client *c)
{
    if (c->flags & GB_CLIENT_REPLICA)
        return GB_CLIENT_CLASS_REPLICA;
    if (c->pubsub)
        return GB_CLIENT_CLASS_PUBSUB;
    return GB_CLIENT_CLASS_NORMAL;
}

const char *gb_client_class_name(gb_client_class cls)
{
    switch (cls) {
    case GB_CLIENT_CLASS_REPLICA:
        return "replica";
    case GB_CLIENT_CLASS_PUBSUB:
        return "pubsub";
    default:
        return "normal";
    }
}

gb_obuf_limit gb_client_obuf_limit(const gb_client *c)
{
    const gb_settings *cfg = &c->eng->cfg;
    switch (gb_client_obuf_class(c)) {
    case GB_CLIENT_CLASS_REPLICA:
        return (gb_obuf_limit){cfg->client_obuf_replica_hard, cfg->client_obuf_replica_soft,
                               cfg->client_obuf_replica_soft_seconds};
    case GB_CLIENT_CLASS_PUBSUB:
        return (gb_obuf_limit){cfg->client_obuf_pubsub_hard, cfg->client_obuf_pubsub_soft,
                               cfg->client_obuf_pubsub_soft_seconds};
    default:
        return (gb_obuf_limit){cfg->client_obuf_hard, cfg->client_obuf_soft, cfg->client_obuf_soft_seconds};
    }
}

gb_obuf_verdict gb_client_obuf_check(gb_client *c, size_t pending, int64_t now_ms)
{
    gb_obuf_limit lim = gb_client_obuf_limit(c);
    /* Redis's checkClientOutputBufferLimits: a limit is reached at its
     * value, and the soft one counts whole seconds of its clock. */
    if (lim.hard > 0 && pending >= (size_t)lim.hard)
        return GB_OBUF_OVER_HARD;
    if (lim.soft <= 0 || pending < (size_t)lim.soft) {
        c->obuf_soft_since_ms = 0;
        return GB_OBUF_WITHIN;
    }
    /* Over soft: the clock starts now, and the client goes only if it is
     * still over once the seconds have passed. */
    if (c->obuf_soft_since_ms == 0) {
        c->obuf_soft_since_ms = now_ms > 0 ? now_ms : 1;
        return GB_OBUF_WITHIN;
    }
    int64_t elapsed_s = now_ms / 1000 - c->obuf_soft_since_ms / 1000;
    return elapsed_s > (int64_t)lim.soft_seconds ? GB_OBUF_OVER_SOFT : GB_OBUF_WITHIN;
}

/* Marked and handed to the transport, which closes it at its next chance. */
static void close_over_limit(gb_client *c)
{
    c->eng->stats.client_obuf_disconnects++;
    c->flags |= GB_CLIENT_CLOSE_ASAP | GB_CLIENT_CLOSED_FOR_MEMORY;
    if (c->hooks && c->hooks->close)
        c->hooks->close(c);
}

bool gb_client_obuf_enforce(gb_client *c, size_t pending)
{
    if (c->flags & GB_CLIENT_CLOSE_ASAP)
        return true;
    if (GB_UNLIKELY(c->flags & GB_CLIENT_REPLICA))
        pending = gb_repl_limited_output(c, pending);
    gb_obuf_verdict v = gb_client_obuf_check(c, pending, (int64_t)c->eng->now_mono_ms);
    if (v == GB_OBUF_WITHIN) {
        if (GB_UNLIKELY(c->eng->cfg.maxmemory_clients)) {
            gb_client_memory_changed(c);
            return (c->flags & GB_CLIENT_CLOSE_ASAP) != 0;
        }
        return false;
    }
    char info[1024];
    gb_client_info(c, info, sizeof info);
    /* Redis's line, then what was over which limit */
    gb_log(GB_LOG_WARNING,
           "Client %s scheduled to be closed ASAP for overcoming of output buffer limits. (%zu bytes pending, over "
           "the %s limit of client-output-buffer-limit %s)",
           info, pending, v == GB_OBUF_OVER_HARD ? "hard" : "soft", gb_client_class_name(gb_client_obuf_class(c)));
    close_over_limit(c);
    return true;
}

bool gb_client_reply_over_limit(gb_client *c, uint64_t reply_bytes)
{
    long long hard = gb_client_obuf_limit(c).hard;
    if (hard <= 0 || reply_bytes <= (uint64_t)hard || (c->flags & GB_CLIENT_SCRIPT))
        return false;
    char info[1024];
    gb_client_info(c, info, sizeof info);
    gb_log(GB_LOG_WARNING,
           "Client %s scheduled to be closed ASAP for overcoming of output buffer limits (a reply of at least %llu "
           "bytes, hard limit of client-output-buffer-limit %s).",
           info, (unsigned long long)reply_bytes, gb_client_class_name(gb_client_obuf_class(c)));
    close_over_limit(c);
    return true;
}

/* ---- maxmemory-clients ------------------------------------------------------------------ */

size_t gb_client_eviction_limit(const gb_engine *eng)
{
    long long setting = eng->cfg.maxmemory_clients;
    unsigned long long limit;
    if (setting < 0 && eng->cfg.maxmemory > 0)
        limit = (unsigned long long)((double)eng->cfg.maxmemory * (double)-setting / 100);
    else if (setting > 0)
        limit = (unsigned long long)setting;
    else
        return 0;
    /* Redis's floor: a limit so small that no client could talk to the
     * server at all is taken as 128kb. */
    if (limit < 128 * 1024)
        limit = 128 * 1024;
    return limit > SIZE_MAX ? SIZE_MAX : (size_t)limit;
}

/* Whose memory the limit counts: normal and pub/sub clients (Redis's
 * stat_clients_type_memory of those two types), CLIENT NO-EVICT ones
 * included; not a replica, the link to our primary (an OBEY client), a
 * script's client, or one closing already. */
static bool counted(const gb_client *c)
{
    return !(c->flags & (GB_CLIENT_REPLICA | GB_CLIENT_OBEY | GB_CLIENT_SCRIPT | GB_CLIENT_CLOSE_ASAP));
}

/* Who may be closed for it (Redis's clientEvictionAllowed). */
static bool evictable(const gb_client *c) { return counted(c) && !(c->flags & GB_CLIENT_NO_EVICT); }

static void uncount(gb_client *c)
{
    c->eng->clients_mem_evictable -= c->mem_counted;
    c->mem_counted = 0;
}

static void count(gb_client *c)
{
    uncount(c);
    if (!counted(c))
        return;
    c->mem_counted = gb_client_memory_usage(c);
    c->eng->clients_mem_evictable += c->mem_counted;
}

static gb_client *largest_evictable(gb_engine *eng)
{
    gb_client *best = NULL;
    for (gb_client *x = eng->clients; x; x = x->next)
        if (x->mem_counted && evictable(x) && (!best || x->mem_counted > best->mem_counted))
            best = x;
    return best;
}

static void evict_clients(gb_engine *eng, size_t limit)
{
    while (eng->clients_mem_evictable >= limit) {
        gb_client *victim = largest_evictable(eng);
        if (!victim) {
            gb_log(GB_LOG_WARNING, "Over client maxmemory after evicting all evictable clients");
            return;
        }
        char info[1024];
        gb_client_info(victim, info, sizeof info);
        gb_log(GB_LOG_NOTICE, "Evicting client: %s", info);
        uncount(victim);
        eng->stats.evicted_clients++;
        victim->flags |= GB_CLIENT_CLOSE_ASAP | GB_CLIENT_CLOSED_FOR_MEMORY;
        if (victim->hooks && victim->hooks->close)
            victim->hooks->close(victim);
    }
}

void gb_client_memory_changed(gb_client *c)
{
    size_t limit = gb_client_eviction_limit(c->eng);
    if (limit == 0)
        return;
    count(c);
    evict_clients(c->eng, limit);
}

void gb_client_memory_forget(gb_client *c) { uncount(c); }

void gb_clients_memory_recount(gb_engine *eng)
{
    size_t limit = gb_client_eviction_limit(eng);
    if (limit == 0 && eng->clients_mem_evictable == 0)
        return;
    for (gb_client *x = eng->clients; x; x = x->next) {
        if (limit)
            count(x);
        else
            uncount(x);
    }
    if (limit)
        evict_clients(eng, limit);
}
