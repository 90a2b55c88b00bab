/*
 * An io_uring for a socket server's connected sockets (docs/io_uring.md):
 * a multishot receive per socket that draws from a ring of provided
 * buffers, sends, and a drain of the completions. Requests queue in the
 * submission ring and reach the kernel together, in one system call
 * (gb_uring_submit), instead of a read and a write per request.
 *
 *   linux (built with liburing)  - io_uring
 *   everywhere else               - gb_uring_open fails with the reason;
 *                                   callers keep their portable path
 *
 * One thread owns a ring: nothing here is thread-safe.
 *
 * Completions name their request by the 64-bit tag it was queued with (0
 * is reserved: cancellations complete with it and are not reported).
 */
#ifndef GB_PLATFORM_URING_H
#define GB_PLATFORM_URING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gb_uring gb_uring;

typedef struct gb_uring_event {
    uint64_t tag;
    int res;          /* bytes (0: the peer closed), or a negative errno */
    bool more;        /* a multishot receive stays armed: more events follow */
    const char *data; /* a receive's bytes (res of them), valid until the handler returns; else NULL */
} gb_uring_event;

typedef void (*gb_uring_handler)(void *ctx, const gb_uring_event *ev);

/* A ring with room for `depth` queued requests and `nbufs` receive
 * buffers of `bufsize` bytes each (nbufs a power of two). NULL, with a
 * one-line reason in why, when this build or the kernel has no io_uring
 * (or it is disabled, or a feature this needs is missing). */
gb_uring *gb_uring_open(unsigned depth, unsigned nbufs, unsigned bufsize, char *why, size_t whylen);
void gb_uring_close(gb_uring *u);

/* A descriptor that polls readable while completions wait. */
int gb_uring_fd(const gb_uring *u);

/* Queue requests (they reach the kernel at the next gb_uring_submit).
 * 0, or a negative errno. */
int gb_uring_recv(gb_uring *u, int fd, uint64_t tag);
int gb_uring_send(gb_uring *u, int fd, const void *data, size_t len, uint64_t tag);
/* Cancels every request on fd and submits at once, so the descriptor may
 * be closed right after; each cancelled request still completes (with
 * -ECANCELED, or its own result if it finished first). */
int gb_uring_cancel_fd(gb_uring *u, int fd);

/* Hands the queued requests to the kernel and runs the completions it
 * has ready; one system call. 0, or a negative errno. */
int gb_uring_submit(gb_uring *u);

/* Requests queued and not yet handed to the kernel. */
unsigned gb_uring_queued(const gb_uring *u);

/* Waits up to ms milliseconds for a completion (after submitting what is
 * queued). 0 when one waits, else a negative errno (-ETIME). */
int gb_uring_wait(gb_uring *u, unsigned ms);

/* Calls handler for every completion waiting, in order, without a system
 * call; returns how many. The handler may queue requests and may reap
 * again (a completion is taken off the ring before its handler runs). */
size_t gb_uring_reap(gb_uring *u, gb_uring_handler handler, void *ctx);

#endif
