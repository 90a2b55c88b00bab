#include "engine/core/shutdown.h"

#include <string.h>

#include "engine/base/mem.h"
#include "engine/core/request/blocking.h"
#include "engine/core/engine.h"
#include "engine/core/replication/repl.h"
#include "engine/core/request/reply.h"

/* A shutdown waiting for replicas (Redis's shutdown_mstime != 0). */
typedef struct gb_shutdown {
    unsigned flags;
    uint64_t deadline_ms; /* monotonic */
    gb_client **waiters;  /* blocked SHUTDOWN clients */
    size_t nwaiters, cap;
} gb_shutdown;

#define MAX_REPLICAS_LOGGED 256

bool gb_shutdown_parse_flags(const char *text, unsigned *flags)
{
    static const struct {
        const char *word;
        unsigned flag;
    } words[] = {{"default", 0},
                 {"save", GB_SHUTDOWN_SAVE},
                 {"nosave", GB_SHUTDOWN_NOSAVE},
                 {"now", GB_SHUTDOWN_NOW},
                 {"force", GB_SHUTDOWN_FORCE}};
    *flags = 0;
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, " ");
        bool known = false;
        for (size_t i = 0; i < GB_ARRAY_LEN(words) && n; i++)
            if (gb_slice_ieq(gb_slice_make(p, n), words[i].word)) {
                *flags |= words[i].flag;
                known = true;
            }
        if (n && !known)
            return false;
        p += n + (p[n] == ' ');
    }
    return !((*flags & GB_SHUTDOWN_SAVE) && (*flags & GB_SHUTDOWN_NOSAVE));
}

/* Redis's isReadyToShutdown: every replica acknowledged the whole stream. */
static bool replicas_caught_up(gb_engine *eng)
{
    gb_repl_replica_view v[MAX_REPLICAS_LOGGED];
    size_t n = gb_repl_replicas(eng, v, MAX_REPLICAS_LOGGED);
    int64_t offset = gb_repl_offset(eng);
    for (size_t i = 0; i < n && i < MAX_REPLICAS_LOGGED; i++)
        if (v[i].ack_off != offset)
            return false;
    return n <= MAX_REPLICAS_LOGGED;
}

static void log_lagging_replicas(gb_engine *eng)
{
    gb_repl_replica_view v[MAX_REPLICAS_LOGGED];
    size_t n = gb_repl_replicas(eng, v, MAX_REPLICAS_LOGGED), lagging = 0;
    int64_t offset = gb_repl_offset(eng);
    for (size_t i = 0; i < n && i < MAX_REPLICAS_LOGGED; i++) {
        if (v[i].ack_off == offset)
            continue;
        lagging++;
        gb_log(GB_LOG_WARNING, "Lagging replica %s:%d reported offset %lld behind master, lag=%ld, state=%s.", v[i].ip,
               v[i].port, (long long)(offset - v[i].ack_off), v[i].lag_s, v[i].online ? "online" : "wait_bgsave");
    }
    if (n > 0)
        gb_log(GB_LOG_NOTICE, "%zu of %zu replicas are in sync when shutting down.", n - lagging, n);
}

/* Blocked SHUTDOWN clients get Redis's error: the shutdown is off. */
static void release_waiters(gb_engine *eng)
{
    gb_shutdown *s = eng->shutdown;
    while (s && s->nwaiters) {
        gb_client *c = s->waiters[--s->nwaiters];
        gb_blocking_unblock(c, GB_UNBLOCK_SERVED); /* back here through gb_shutdown_waiter_gone: already off the list */
        gb_reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
        gb_client_command_done(c);
        if (c->hooks && c->hooks->flush)
            c->hooks->flush(c);
    }
}

static void cancel(gb_engine *eng)
{
    gb_shutdown *s = eng->shutdown;
    if (s)
        s->deadline_ms = 0;
    release_waiters(eng);
    gb_pause_for(eng, GB_PAUSE_FOR_SHUTDOWN, false);
}

/* Redis's finishShutdown: the lagging replicas logged, the final save;
 * 0 and the loop told to stop, or -1 (cancelled) when the save failed and
 * FORCE was not given. */
static int finish(gb_engine *eng, unsigned flags)
{
    log_lagging_replicas(eng);
    bool save = flags & GB_SHUTDOWN_SAVE, nosave = flags & GB_SHUTDOWN_NOSAVE;
    if (eng->loading) /* a half-loaded dataset must never overwrite the file */
        save = false, nosave = true;
    int rc = eng->service ? eng->service->shutdown(eng->service->ctx, save, nosave) : 0;
    if (rc != 0 && (flags & GB_SHUTDOWN_FORCE)) {
        gb_log(GB_LOG_WARNING, "Error trying to save the DB. Exit anyway.");
        rc = 0;
    }
    if (rc != 0) {
        gb_log(GB_LOG_WARNING, "Error trying to save the DB, can't exit.");
        gb_log(GB_LOG_WARNING, "Errors trying to shut down the server. Check the logs for more information.");
        cancel(eng);
        return -1;
    }
    if (eng->shutdown)
        eng->shutdown->deadline_ms = 0;
    eng->shutdown_requested = true;
    return 0;
}

static gb_shutdown *state(gb_engine *eng)
{
    if (!eng->shutdown)
        eng->shutdown = gb_calloc(1, sizeof *eng->shutdown);
    return eng->shutdown;
}

bool gb_shutdown_in_progress(const gb_engine *eng) { return eng->shutdown && eng->shutdown->deadline_ms != 0; }

int64_t gb_shutdown_ms_left(const gb_engine *eng)
{
    if (!gb_shutdown_in_progress(eng))
        return -1;
    uint64_t now = eng->now_mono_ms;
    return eng->shutdown->deadline_ms > now ? (int64_t)(eng->shutdown->deadline_ms - now) : 0;
}

static void add_waiter(gb_engine *eng, gb_client *c, int argc, const gb_slice *argv)
{
    gb_shutdown *s = state(eng);
    if (s->nwaiters == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4;
        s->waiters = gb_realloc(s->waiters, s->cap * sizeof *s->waiters);
    }
    s->waiters[s->nwaiters++] = c;
    gb_blocking_block(c, NULL, 0, 0, GB_TYPE_COUNT, argc, argv);
}

int gb_shutdown_begin(gb_engine *eng, unsigned flags, gb_client *c, int argc, const gb_slice *argv)
{
    if (gb_shutdown_in_progress(eng)) { /* a second SHUTDOWN waits with the first */
        if (c)
            add_waiter(eng, c, argc, argv);
        return 1;
    }
    gb_log(GB_LOG_WARNING, "User requested shutdown...");
    if (!(flags & GB_SHUTDOWN_NOW) && eng->cfg.shutdown_timeout != 0 && !replicas_caught_up(eng)) {
        gb_shutdown *s = state(eng);
        s->flags = flags;
        s->deadline_ms = eng->now_mono_ms + (uint64_t)eng->cfg.shutdown_timeout * 1000;
        if (gb_pause_check(eng) == GB_PAUSE_NONE)
            gb_repl_request_acks(eng);
        gb_pause_for(eng, GB_PAUSE_FOR_SHUTDOWN, true);
        gb_log(GB_LOG_NOTICE, "Waiting for replicas before shutting down.");
        if (c)
            add_waiter(eng, c, argc, argv);
        return 1;
    }
    if (finish(eng, flags) == 0)
        return 0;
    if (c)
        gb_reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
    return -1;
}

int gb_shutdown_abort(gb_engine *eng)
{
    if (!gb_shutdown_in_progress(eng))
        return -1;
    cancel(eng);
    gb_log(GB_LOG_NOTICE, "Shutdown manually aborted.");
    return 0;
}

void gb_shutdown_cron(gb_engine *eng)
{
    if (!gb_shutdown_in_progress(eng))
        return;
    if (eng->now_mono_ms >= eng->shutdown->deadline_ms || replicas_caught_up(eng))
        (void)finish(eng, eng->shutdown->flags);
}

bool gb_shutdown_is_waiter(const gb_argv_copy *cmd)
{
    return cmd->cmd && cmd->cmd->def && strcmp(cmd->cmd->def->name, "shutdown") == 0;
}

void gb_shutdown_waiter_gone(gb_client *c)
{
    gb_shutdown *s = c->eng->shutdown;
    for (size_t i = 0; s && i < s->nwaiters; i++)
        if (s->waiters[i] == c) {
            s->waiters[i] = s->waiters[--s->nwaiters];
            return;
        }
}

void gb_shutdown_destroy(gb_engine *eng)
{
    if (!eng->shutdown)
        return;
    gb_free(eng->shutdown->waiters);
    gb_free(eng->shutdown);
    eng->shutdown = NULL;
}
