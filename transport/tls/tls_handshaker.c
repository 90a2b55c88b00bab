#define _POSIX_C_SOURCE 200809L
#include "transport/tls/tls_handshaker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/base/helper_thread.h"
#include "platform/clock.h"

/* Bytes read from a socket per read() call; records taken per write(). */
#define IO_CHUNK (16 * 1024)

/* One connection in its handshake, on the helper thread. */
typedef struct handshake {
    int fd;
    gb_tls_session *session;
    bool established;
    uint64_t last_input_ms; /* monotonic: when it was handed over or last sent a byte */
    char *out;           /* records taken from the session, not yet written */
    size_t out_len, out_off;
    char addr[64];
    char laddr[64];
} handshake;

/* A growable array of handshakes or handoffs. */
typedef struct hs_list {
    handshake *items;
    size_t n, cap;
} hs_list;

typedef struct handoff_list {
    gb_tls_handoff *items;
    size_t n, cap;
} handoff_list;

struct gb_tls_handshaker {
    gb_helper_thread thread;
    pthread_mutex_t lock;
    hs_list inbox;        /* handed over by the engine thread (under lock) */
    handoff_list outbox;  /* finished, for the engine thread (under lock) */
    size_t handed;        /* added and not yet taken back (under lock): the
                           * outbox always has room for all of them */
    bool stopping;        /* under lock */
    int64_t idle_limit_ms; /* under lock: the server's `timeout` in ms; 0: none */
    int wake_pipe[2];     /* the engine thread wakes the helper's poll() */
    void (*wake)(void *ctx);
    void *wake_ctx;
    hs_list active;       /* the helper thread's own */
    int64_t idle_limit_now; /* the helper thread's copy of idle_limit_ms */
};

static bool grow(void **items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    void *p = realloc(*items, ncap * size);
    if (!p)
        return false;
    *items = p;
    *cap = ncap;
    return true;
}

static void discard(handshake *hs)
{
    close(hs->fd);
    gb_tls_session_free(hs->session);
    free(hs->out);
}

/* ---- the helper thread ------------------------------------------------------ */

/* A finished handshake goes to the outbox (room for it was made when it
 * was added); true if the engine thread must be woken (the outbox was
 * empty). */
static bool finish(gb_tls_handshaker *h, handshake *hs, const char *why)
{
    gb_tls_handoff d = {.fd = why ? -1 : hs->fd, .session = why ? NULL : hs->session};
    snprintf(d.addr, sizeof d.addr, "%s", hs->addr);
    snprintf(d.laddr, sizeof d.laddr, "%s", hs->laddr);
    snprintf(d.why, sizeof d.why, "%s", why ? why : "");
    if (why) {
        discard(hs);
    } else {
        free(hs->out);
    }
    pthread_mutex_lock(&h->lock);
    bool was_empty = h->outbox.n == 0;
    h->outbox.items[h->outbox.n++] = d;
    pthread_mutex_unlock(&h->lock);
    return was_empty;
}

/* Writes what the session has for the socket. False when the socket
 * failed (why says so). */
static bool send_records(handshake *hs, char *why, size_t whylen)
{
    for (;;) {
        if (hs->out_off == hs->out_len) {
            size_t pending = gb_tls_output_pending(hs->session);
            if (pending == 0)
                return true;
            char *buf = realloc(hs->out, pending);
            if (!buf) {
                snprintf(why, whylen, "out of memory for the handshake");
                return false;
            }
            hs->out = buf;
            hs->out_len = gb_tls_take_output(hs->session, buf, pending);
            hs->out_off = 0;
        }
        ssize_t n = write(hs->fd, hs->out + hs->out_off, hs->out_len - hs->out_off);
        if (n > 0) {
            hs->out_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true; /* poll() says when the socket takes more */
        snprintf(why, whylen, "%s", n < 0 ? strerror(errno) : "the socket took nothing");
        return false;
    }
}

/* Reads what the socket has into the session. False at end of file or on
 * an error (why says so). */
static bool take_input(handshake *hs, char *why, size_t whylen)
{
    char buf[IO_CHUNK];
    for (int reads = 0; reads < 8; reads++) { /* then the others get their turn */
        ssize_t n = read(hs->fd, buf, sizeof buf);
        if (n > 0) {
            hs->last_input_ms = gb_clock_mono_ms();
            if (gb_tls_feed(hs->session, buf, (size_t)n) != 0) {
                snprintf(why, whylen, "out of memory for the handshake");
                return false;
            }
            if ((size_t)n < sizeof buf)
                return true;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        snprintf(why, whylen, "%s", n == 0 ? "the client closed the connection during the handshake" : strerror(errno));
        return false;
    }
    return true;
}

/* One poll() result for hs. Returns true when hs is finished (handed to
 * the outbox); *wake when the engine thread must be woken. */
static bool step(gb_tls_handshaker *h, handshake *hs, short revents, bool *wake)
{
    char why[256];
    bool ok = true;
    if (revents & (POLLIN | POLLERR | POLLHUP)) {
        ok = take_input(hs, why, sizeof why);
        if (ok && !hs->established) {
            int rc = gb_tls_handshake(hs->session, why, sizeof why);
            hs->established = rc > 0;
            if (rc < 0) {
                char ignored[64];
                (void)send_records(hs, ignored, sizeof ignored); /* the alert that says why */
                ok = false;
            }
        }
    }
    if (ok)
        ok = send_records(hs, why, sizeof why);
    if (ok && !(hs->established && hs->out_off == hs->out_len))
        return false;
    *wake |= finish(h, hs, ok ? NULL : why);
    return true;
}

/* Moves what the engine thread handed over into the active list. False
 * when the thread must stop. */
static bool take_inbox(gb_tls_handshaker *h)
{
    pthread_mutex_lock(&h->lock);
    bool stopping = h->stopping;
    h->idle_limit_now = h->idle_limit_ms;
    /* A wake-up may find the inbox empty (nothing to copy, maybe no array yet). */
    if (!stopping && h->inbox.n &&
        grow((void **)&h->active.items, &h->active.cap, h->active.n + h->inbox.n, sizeof(handshake))) {
        memcpy(h->active.items + h->active.n, h->inbox.items, h->inbox.n * sizeof(handshake));
        h->active.n += h->inbox.n;
        h->inbox.n = 0;
    }
    pthread_mutex_unlock(&h->lock);
    return !stopping;
}

/* How long poll() may wait: until the first handshake's idle limit runs
 * out, or for ever without a limit. */
static int poll_timeout_ms(const gb_tls_handshaker *h, uint64_t now)
{
    if (h->idle_limit_now <= 0 || h->active.n == 0)
        return -1;
    uint64_t first = UINT64_MAX;
    for (size_t i = 0; i < h->active.n; i++) {
        uint64_t due = h->active.items[i].last_input_ms + (uint64_t)h->idle_limit_now;
        first = due < first ? due : first;
    }
    uint64_t wait = first > now ? first - now : 0;
    return wait > 60000 ? 60000 : (int)wait + 1; /* +1: wake after it, not just before */
}

/* Whether hs has been silent for longer than the server's `timeout`, as
 * Redis closes a client idle that long whatever state its connection is
 * in; with timeout 0 (the default) a handshake may wait for ever, as on
 * Redis, and only maxclients bounds how many do. */
static bool idle_too_long(const gb_tls_handshaker *h, const handshake *hs, uint64_t now)
{
    return h->idle_limit_now > 0 && now - hs->last_input_ms > (uint64_t)h->idle_limit_now;
}

static void drain_wake_pipe(int fd)
{
    char buf[256];
    while (read(fd, buf, sizeof buf) > 0)
        ;
}

static void *handshaker_main(void *arg)
{
    gb_tls_handshaker *h = arg;
    struct pollfd *fds = NULL;
    size_t fds_cap = 0;
    while (take_inbox(h)) {
        if (!grow((void **)&fds, &fds_cap, h->active.n + 1, sizeof *fds)) {
            poll(NULL, 0, 10); /* no memory for the poll set: try again shortly */
            continue;
        }
        fds[0] = (struct pollfd){.fd = h->wake_pipe[0], .events = POLLIN};
        for (size_t i = 0; i < h->active.n; i++) {
            handshake *hs = &h->active.items[i];
            fds[i + 1] = (struct pollfd){.fd = hs->fd, .events = POLLIN | (hs->out_off < hs->out_len ? POLLOUT : 0)};
        }
        size_t polled = h->active.n;
        if (poll(fds, (nfds_t)(polled + 1), poll_timeout_ms(h, gb_clock_mono_ms())) < 0)
            continue; /* EINTR */
        if (fds[0].revents)
            drain_wake_pipe(h->wake_pipe[0]);
        bool wake = false;
        size_t kept = 0;
        uint64_t now = gb_clock_mono_ms();
        for (size_t i = 0; i < polled; i++) {
            handshake *hs = &h->active.items[i];
            bool done;
            if (fds[i + 1].revents)
                done = step(h, hs, fds[i + 1].revents, &wake);
            else if ((done = idle_too_long(h, hs, now)))
                wake |= finish(h, hs, "idle for longer than the timeout setting during the TLS handshake");
            if (!done)
                h->active.items[kept++] = *hs;
        }
        /* Handshakes that arrived after the poll set was built sit behind
         * the polled ones: keep them. */
        if (h->active.n > polled) /* none: items may be NULL, which memmove may not be given even for 0 bytes */
            memmove(h->active.items + kept, h->active.items + polled, (h->active.n - polled) * sizeof(handshake));
        h->active.n = kept + (h->active.n - polled);
        if (wake)
            h->wake(h->wake_ctx);
    }
    free(fds);
    return NULL;
}

/* ---- the engine thread's side ------------------------------------------------- */

static bool set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) == 0;
}

gb_tls_handshaker *gb_tls_handshaker_start(const gb_cpuset *cpus, void (*wake)(void *ctx), void *ctx)
{
    gb_tls_handshaker *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->wake = wake;
    h->wake_ctx = ctx;
    if (pipe(h->wake_pipe) != 0) {
        free(h);
        return NULL;
    }
    if (!set_nonblocking(h->wake_pipe[0]) || !set_nonblocking(h->wake_pipe[1]) ||
        pthread_mutex_init(&h->lock, NULL) != 0) {
        close(h->wake_pipe[0]);
        close(h->wake_pipe[1]);
        free(h);
        return NULL;
    }
    if (!gb_helper_thread_start(&h->thread, "gb-tls-accept", cpus, handshaker_main, h)) {
        pthread_mutex_destroy(&h->lock);
        close(h->wake_pipe[0]);
        close(h->wake_pipe[1]);
        free(h);
        return NULL;
    }
    return h;
}

bool gb_tls_handshaker_add(gb_tls_handshaker *h, int fd, gb_tls_session *s, const char *addr, const char *laddr)
{
    handshake hs = {.fd = fd, .session = s, .last_input_ms = gb_clock_mono_ms()};
    snprintf(hs.addr, sizeof hs.addr, "%s", addr);
    snprintf(hs.laddr, sizeof hs.laddr, "%s", laddr);
    pthread_mutex_lock(&h->lock);
    /* The outbox's room is made now, so that a finished handshake can
     * always be handed back (the caller counts it until then). */
    bool ok = grow((void **)&h->inbox.items, &h->inbox.cap, h->inbox.n + 1, sizeof hs) &&
              grow((void **)&h->outbox.items, &h->outbox.cap, h->handed + 1, sizeof(gb_tls_handoff));
    if (ok) {
        h->inbox.items[h->inbox.n++] = hs;
        h->handed++;
    }
    pthread_mutex_unlock(&h->lock);
    if (ok)
        (void)!write(h->wake_pipe[1], "", 1); /* a full pipe already wakes it */
    return ok;
}

void gb_tls_handshaker_set_idle_limit(gb_tls_handshaker *h, int64_t ms)
{
    pthread_mutex_lock(&h->lock);
    bool changed = h->idle_limit_ms != ms;
    h->idle_limit_ms = ms;
    pthread_mutex_unlock(&h->lock);
    if (changed)
        (void)!write(h->wake_pipe[1], "", 1); /* its poll() may be waiting with the old limit */
}

size_t gb_tls_handshaker_take(gb_tls_handshaker *h, gb_tls_handoff *out, size_t max)
{
    pthread_mutex_lock(&h->lock);
    size_t n = h->outbox.n < max ? h->outbox.n : max;
    memcpy(out, h->outbox.items, n * sizeof *out);
    memmove(h->outbox.items, h->outbox.items + n, (h->outbox.n - n) * sizeof *out);
    h->outbox.n -= n;
    h->handed -= n;
    pthread_mutex_unlock(&h->lock);
    return n;
}

void gb_tls_handshaker_stop(gb_tls_handshaker *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->lock);
    h->stopping = true;
    pthread_mutex_unlock(&h->lock);
    (void)!write(h->wake_pipe[1], "", 1);
    gb_helper_thread_join(&h->thread);
    for (size_t i = 0; i < h->active.n; i++)
        discard(&h->active.items[i]);
    for (size_t i = 0; i < h->inbox.n; i++)
        discard(&h->inbox.items[i]);
    for (size_t i = 0; i < h->outbox.n; i++) {
        if (h->outbox.items[i].fd >= 0)
            close(h->outbox.items[i].fd);
        gb_tls_session_free(h->outbox.items[i].session);
    }
    free(h->active.items);
    free(h->inbox.items);
    free(h->outbox.items);
    pthread_mutex_destroy(&h->lock);
    close(h->wake_pipe[0]);
    close(h->wake_pipe[1]);
    free(h);
}
