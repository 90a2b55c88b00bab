#define _POSIX_C_SOURCE 200809L
#include "transport/loop/loop.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/base/mem.h"
#include "engine/core/request/blocking.h"
#include "engine/core/shutdown.h"

/* Sockets, rings, and room for the listeners to come (replication link,
 * cluster bus, TLS). */
#define GB_LOOP_MAX_PEERS 8

struct gb_loop {
    gb_engine *eng;
    uv_loop_t uv;
    gb_loop_peer peers[GB_LOOP_MAX_PEERS];
    int npeers;
    uv_timer_t cron;
    int cron_hz;
    uv_timer_t block_timer;
    uint64_t block_timer_due;
    uv_timer_t bg_retry; /* wakes the loop while background work waits for its helper thread */
    uv_check_t check;
    uv_idle_t idle;
    bool idle_on;
    uv_signal_t sigint, sigterm;
    bool stopped;
};

/* ---- peers, all at once ----------------------------------------------------------- */

#define EACH_PEER(loop, p) for (gb_loop_peer *p = (loop)->peers; p < (loop)->peers + (loop)->npeers; p++)

static void resume_all(gb_loop *loop)
{
    EACH_PEER(loop, p)
    if (p->resume)
        p->resume(p->ctx);
}

static bool poll_all(gb_loop *loop)
{
    bool worked = false;
    EACH_PEER(loop, p)
    if (p->poll && p->poll(p->ctx))
        worked = true;
    return worked;
}

static void flush_all(gb_loop *loop)
{
    EACH_PEER(loop, p)
    if (p->flush)
        p->flush(p->ctx);
}

static bool any_pending(gb_loop *loop)
{
    EACH_PEER(loop, p)
    if (p->pending && p->pending(p->ctx))
        return true;
    return false;
}

/* Whether every peer lets the loop block (the first that refuses ends the
 * question: it will be asked again after the next iteration). */
static bool all_may_sleep(gb_loop *loop)
{
    EACH_PEER(loop, p)
    if (p->prepare_sleep && !p->prepare_sleep(p->ctx))
        return false;
    return true;
}

/* ---- staying awake ---------------------------------------------------------------- */

/* An active idle handle only makes the loop poll without blocking; libuv
 * refuses to start one without a callback, hence this empty one. */
static void idle_noop(uv_idle_t *h) { (void)h; }

static void set_awake(gb_loop *loop, bool awake)
{
    if (awake && !loop->idle_on) {
        uv_idle_start(&loop->idle, idle_noop);
        loop->idle_on = true;
    } else if (!awake && loop->idle_on) {
        uv_idle_stop(&loop->idle);
        loop->idle_on = false;
    }
}

void gb_loop_stay_awake(gb_loop *loop) { set_awake(loop, true); }

/* ---- serving others while a script is busy ---------------------------------------- */

/* The engine's busy pump (engine/core/request/script_state.h, Redis's
 * processEventsWhileBlocked): called from inside a script that has run
 * past busy-reply-threshold. Each peer does one pass by hand; then the
 * BUSY errors (and whatever else was answered) go now, since the check
 * phase that normally writes replies waits for the script. Replies that
 * the log's sync holds (appendfsync always) wait for it. */
static void busy_pump(void *ctx)
{
    gb_loop *loop = ctx;
    gb_engine_update_time(loop->eng);
    EACH_PEER(loop, p)
    if (p->busy_pump)
        p->busy_pump(p->ctx);
    if (!gb_engine_replies_held(loop->eng))
        flush_all(loop);
}

/* ---- timers ----------------------------------------------------------------------- */

static void cron_cb(uv_timer_t *t)
{
    gb_loop *loop = t->data;
    gb_engine *eng = loop->eng;
    gb_engine_cron(eng);
    EACH_PEER(loop, p)
    if (p->cron)
        p->cron(p->ctx);
    int hz = eng->hz > 0 ? eng->hz : eng->cfg.hz; /* the engine's effective hz: CONFIG SET hz, dynamic-hz */
    if (hz != loop->cron_hz) {
        loop->cron_hz = hz;
        uv_timer_set_repeat(t, (uint64_t)(1000 / loop->cron_hz));
    }
}

static void block_timer_cb(uv_timer_t *t)
{
    gb_loop *loop = t->data;
    loop->block_timer_due = 0;
    gb_engine_update_time(loop->eng);
    gb_blocking_expire(loop->eng);
}

static void rearm_block_timer(gb_loop *loop)
{
    uint64_t due = gb_blocking_next_deadline(loop->eng);
    if (due == loop->block_timer_due)
        return;
    loop->block_timer_due = due;
    if (due == 0) {
        uv_timer_stop(&loop->block_timer);
        return;
    }
    uint64_t now = gb_clock_mono_ms();
    uv_timer_start(&loop->block_timer, block_timer_cb, due > now ? due - now : 0, 0);
}

/* Nothing to do: waking the loop is the point (check_cb steps again). */
static void bg_retry_cb(uv_timer_t *t) { (void)t; }

/* A slice of the engine's background work (a background save), between
 * batches of events. Returns true while some remains (the loop polls
 * instead of sleeping); while it waits for its helper thread the loop
 * sleeps a millisecond at most. */
static bool background_slice(gb_loop *loop)
{
    gb_bg_state bg = gb_engine_background_step(loop->eng, UINT64_MAX);
    if (bg == GB_BG_WAITING && !uv_is_active((uv_handle_t *)&loop->bg_retry))
        uv_timer_start(&loop->bg_retry, bg_retry_cb, GB_BG_RETRY_MS, 0);
    return bg == GB_BG_MORE;
}

/* ---- the check phase -------------------------------------------------------------- */

static void stop_everything(gb_loop *loop);

/* After every iteration: resumed clients continue; the rings are polled
 * (and what they woke continues); the durability point - what this
 * iteration's commands wrote reaches the log (synced under appendfsync
 * always: one sync for every client, group commit) - then the replies
 * go, all together, as Redis writes them before it sleeps; a slice of
 * background work; then whether the loop may sleep. */
static void check_cb(uv_check_t *h)
{
    gb_loop *loop = h->data;
    resume_all(loop);
    if (poll_all(loop))
        resume_all(loop);
    gb_engine_before_replies(loop->eng);
    flush_all(loop);
    bool busy = any_pending(loop);
    if (background_slice(loop))
        busy = true;
    if (!busy && !all_may_sleep(loop))
        busy = true;
    if (!busy && any_pending(loop)) /* queued since the flush: written next iteration, without sleeping first */
        busy = true;
    set_awake(loop, busy);
    rearm_block_timer(loop);
    if (loop->eng->shutdown_requested)
        stop_everything(loop);
}

/* ---- shutdown --------------------------------------------------------------------- */

static void signal_cb(uv_signal_t *s, int signum)
{
    gb_loop *loop = s->data;
    gb_engine *eng = loop->eng;
    const char *name = signum == SIGINT ? "SIGINT" : "SIGTERM";
    if (signum == SIGINT && gb_shutdown_in_progress(eng)) { /* Redis: a second SIGINT does not wait */
        gb_log(GB_LOG_WARNING, "You insist... exiting now.");
        exit(1);
    }
    gb_log(GB_LOG_WARNING, "Received %s scheduling shutdown...", name);
    gb_engine_update_time(eng);
    unsigned flags = 0;
    (void)gb_shutdown_parse_flags(signum == SIGINT ? eng->cfg.shutdown_on_sigint : eng->cfg.shutdown_on_sigterm,
                                  &flags); /* CONFIG SET checked them */
    int rc = gb_shutdown_begin(eng, flags, NULL, 0, NULL);
    if (rc < 0)
        gb_log(GB_LOG_WARNING, "%s received but errors trying to shut down the server, check the logs for more "
                               "information", name);
    else if (rc == 0)
        stop_everything(loop);
    /* 1: waiting for replicas; the cron finishes it and the loop stops then */
}

static void walk_close(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

/* Every peer closes its handles and clients, then the loop's own go: with
 * nothing left open, uv_run returns. The final save happened before (the
 * engine's prepare_shutdown, from SHUTDOWN or the signal). */
static void stop_everything(gb_loop *loop)
{
    if (loop->stopped)
        return;
    loop->stopped = true;
    EACH_PEER(loop, p)
    if (p->shutdown)
        p->shutdown(p->ctx);
    uv_close((uv_handle_t *)&loop->cron, NULL);
    uv_close((uv_handle_t *)&loop->block_timer, NULL);
    uv_close((uv_handle_t *)&loop->bg_retry, NULL);
    uv_close((uv_handle_t *)&loop->check, NULL);
    uv_close((uv_handle_t *)&loop->idle, NULL);
    uv_close((uv_handle_t *)&loop->sigint, NULL);
    uv_close((uv_handle_t *)&loop->sigterm, NULL);
    /* Anything else still open (a peer that did not close its own). */
    uv_walk(&loop->uv, walk_close, NULL);
}

/* ---- life cycle ------------------------------------------------------------------- */

static void start_signals(gb_loop *loop)
{
    uv_signal_init(&loop->uv, &loop->sigint);
    loop->sigint.data = loop;
    uv_signal_start(&loop->sigint, signal_cb, SIGINT);
    uv_signal_init(&loop->uv, &loop->sigterm);
    loop->sigterm.data = loop;
    uv_signal_start(&loop->sigterm, signal_cb, SIGTERM);
    /* A peer that went away shows as a write error, not a signal. */
    signal(SIGPIPE, SIG_IGN);
}

gb_loop *gb_loop_new(gb_engine *eng, char *err, size_t errlen)
{
    gb_loop *loop = gb_try_calloc(1, sizeof *loop);
    if (!loop) {
        snprintf(err, errlen, "out of memory creating the event loop");
        return NULL;
    }
    int rc = uv_loop_init(&loop->uv);
    if (rc != 0) {
        snprintf(err, errlen, "cannot create the event loop: %s", uv_strerror(rc));
        gb_free(loop);
        return NULL;
    }
    loop->eng = eng;
    uv_timer_init(&loop->uv, &loop->cron);
    loop->cron.data = loop;
    loop->cron_hz = eng->cfg.hz;
    uv_timer_start(&loop->cron, cron_cb, (uint64_t)(1000 / eng->cfg.hz), (uint64_t)(1000 / eng->cfg.hz));
    uv_timer_init(&loop->uv, &loop->block_timer);
    loop->block_timer.data = loop;
    uv_timer_init(&loop->uv, &loop->bg_retry);
    loop->bg_retry.data = loop;
    uv_check_init(&loop->uv, &loop->check);
    loop->check.data = loop;
    uv_check_start(&loop->check, check_cb);
    uv_idle_init(&loop->uv, &loop->idle);
    loop->idle.data = loop;
    start_signals(loop);
    eng->busy_pump = (gb_busy_pump){busy_pump, loop};
    return loop;
}

uv_loop_t *gb_loop_uv(gb_loop *loop) { return &loop->uv; }

int gb_loop_add_peer(gb_loop *loop, const gb_loop_peer *peer)
{
    if (loop->npeers == GB_LOOP_MAX_PEERS)
        return -1;
    loop->peers[loop->npeers++] = *peer;
    return 0;
}

int gb_loop_run(gb_loop *loop)
{
    uv_run(&loop->uv, UV_RUN_DEFAULT);
    return 0;
}

void gb_loop_free(gb_loop *loop)
{
    if (!loop)
        return;
    loop->eng->busy_pump = (gb_busy_pump){NULL, NULL};
    stop_everything(loop);
    uv_run(&loop->uv, UV_RUN_DEFAULT);
    uv_loop_close(&loop->uv);
    gb_free(loop);
}
