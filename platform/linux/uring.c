/* io_uring through liburing (platform/uring.h). Built when cmake finds
 * liburing (GOBLIN_IO_URING); otherwise common/uring_none.c stands in. */
#define _GNU_SOURCE
#include "uring.h"

#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

/* The provided-buffer group the receives draw from (one per ring). */
#define GB_URING_BGID 1

struct gb_uring {
    struct io_uring ring;
    struct io_uring_buf_ring *br; /* shared with the kernel: which buffers it may fill */
    size_t br_bytes;
    char *bufs; /* nbufs * bufsize */
    unsigned nbufs, bufsize;
};

/* Fewer wake-ups where the kernel has them: completions run when this
 * thread next enters the kernel (its epoll_wait wakes for them) instead of
 * an interrupt each, with a flag saying work waits (gb_uring_submit). */
static int setup_ring(struct io_uring *ring, unsigned depth)
{
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_SINGLE_ISSUER;
    int rc = io_uring_queue_init_params(depth, ring, &p);
    if (rc == -EINVAL) { /* an older kernel: the plain ring */
        memset(&p, 0, sizeof p);
        rc = io_uring_queue_init_params(depth, ring, &p);
    }
    return rc;
}

/* Puts buffer bid in the ring's slot `ahead` places past its tail (the
 * tail moves when io_uring_buf_ring_advance publishes them). */
static void give_buffer(gb_uring *u, unsigned bid, int ahead)
{
    io_uring_buf_ring_add(u->br, u->bufs + (size_t)bid * u->bufsize, u->bufsize, (unsigned short)bid,
                          io_uring_buf_ring_mask(u->nbufs), ahead);
}

/* The buffer ring (page-aligned, as the kernel maps it) filled with every
 * buffer and registered. 0 or a negative errno. */
static int setup_buffers(gb_uring *u)
{
    u->br_bytes = (size_t)u->nbufs * sizeof(struct io_uring_buf);
    void *br = mmap(NULL, u->br_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (br == MAP_FAILED)
        return -errno;
    u->br = br;
    u->bufs = malloc((size_t)u->nbufs * u->bufsize);
    if (!u->bufs)
        return -ENOMEM;
    struct io_uring_buf_reg reg;
    memset(&reg, 0, sizeof reg);
    reg.ring_addr = (uint64_t)(uintptr_t)br;
    reg.ring_entries = u->nbufs;
    reg.bgid = GB_URING_BGID;
    int rc = io_uring_register_buf_ring(&u->ring, &reg, 0);
    if (rc != 0)
        return rc;
    io_uring_buf_ring_init(u->br);
    for (unsigned i = 0; i < u->nbufs; i++)
        give_buffer(u, i, (int)i);
    io_uring_buf_ring_advance(u->br, (int)u->nbufs);
    return 0;
}

static void release(gb_uring *u, bool ring_up)
{
    if (ring_up)
        io_uring_queue_exit(&u->ring);
    if (u->br)
        munmap(u->br, u->br_bytes);
    free(u->bufs);
    free(u);
}

gb_uring *gb_uring_open(unsigned depth, unsigned nbufs, unsigned bufsize, char *why, size_t whylen)
{
    if (nbufs == 0 || (nbufs & (nbufs - 1)) != 0 || nbufs > 32768 || bufsize == 0) {
        snprintf(why, whylen, "io_uring: %u buffers of %u bytes cannot make a buffer ring", nbufs, bufsize);
        return NULL;
    }
    gb_uring *u = calloc(1, sizeof *u);
    if (!u) {
        snprintf(why, whylen, "io_uring: out of memory");
        return NULL;
    }
    u->nbufs = nbufs;
    u->bufsize = bufsize;
    int rc = setup_ring(&u->ring, depth);
    if (rc != 0) {
        snprintf(why, whylen, "io_uring_setup failed: %s%s", strerror(-rc),
                 rc == -EPERM ? " (kernel.io_uring_disabled, or a seccomp filter)" : "");
        release(u, false);
        return NULL;
    }
    rc = setup_buffers(u);
    if (rc != 0) {
        snprintf(why, whylen, "io_uring provided-buffer ring failed: %s (the kernel needs 5.19 or newer)",
                 strerror(-rc));
        release(u, true);
        return NULL;
    }
    return u;
}

void gb_uring_close(gb_uring *u)
{
    if (u)
        release(u, true);
}

int gb_uring_fd(const gb_uring *u) { return u->ring.ring_fd; }

/* A free submission entry; a full ring is handed to the kernel first. */
static struct io_uring_sqe *next_sqe(gb_uring *u)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (!sqe && io_uring_submit(&u->ring) >= 0)
        sqe = io_uring_get_sqe(&u->ring);
    return sqe;
}

int gb_uring_recv(gb_uring *u, int fd, uint64_t tag)
{
    struct io_uring_sqe *sqe = next_sqe(u);
    if (!sqe)
        return -EBUSY;
    io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = GB_URING_BGID;
    io_uring_sqe_set_data64(sqe, tag);
    return 0;
}

int gb_uring_send(gb_uring *u, int fd, const void *data, size_t len, uint64_t tag)
{
    struct io_uring_sqe *sqe = next_sqe(u);
    if (!sqe)
        return -EBUSY;
    /* No SIGPIPE for a peer that went away: the completion says EPIPE. */
    io_uring_prep_send(sqe, fd, data, len, MSG_NOSIGNAL);
    io_uring_sqe_set_data64(sqe, tag);
    return 0;
}

int gb_uring_cancel_fd(gb_uring *u, int fd)
{
    struct io_uring_sqe *sqe = next_sqe(u);
    if (!sqe)
        return -EBUSY;
    io_uring_prep_cancel_fd(sqe, fd, IORING_ASYNC_CANCEL_ALL);
    io_uring_sqe_set_data64(sqe, 0);
    int rc = io_uring_submit(&u->ring);
    return rc < 0 ? rc : 0;
}

int gb_uring_submit(gb_uring *u)
{
    /* Nothing queued and no completion work waiting: no system call. */
    unsigned kflags = IO_URING_READ_ONCE(*u->ring.sq.kflags);
    if (io_uring_sq_ready(&u->ring) == 0 && !(kflags & (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW)))
        return 0;
    int rc = io_uring_submit_and_get_events(&u->ring);
    return rc < 0 ? rc : 0;
}

unsigned gb_uring_queued(const gb_uring *u) { return io_uring_sq_ready(&u->ring); }

int gb_uring_wait(gb_uring *u, unsigned ms)
{
    struct __kernel_timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long long)(ms % 1000) * 1000000};
    struct io_uring_cqe *cqe;
    int rc = io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, &ts, NULL);
    return rc < 0 ? rc : 0;
}

size_t gb_uring_reap(gb_uring *u, gb_uring_handler handler, void *ctx)
{
    size_t n = 0;
    struct io_uring_cqe *cqe;
    while (io_uring_peek_cqe(&u->ring, &cqe) == 0) {
        gb_uring_event ev = {io_uring_cqe_get_data64(cqe), cqe->res, (cqe->flags & IORING_CQE_F_MORE) != 0, NULL};
        bool has_buffer = (cqe->flags & IORING_CQE_F_BUFFER) != 0;
        unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
        /* Off the ring before the handler: it may reap again. */
        io_uring_cqe_seen(&u->ring, cqe);
        if (has_buffer && bid < u->nbufs && ev.res > 0)
            ev.data = u->bufs + (size_t)bid * u->bufsize;
        if (ev.tag != 0)
            handler(ctx, &ev);
        n++;
        if (has_buffer && bid < u->nbufs) {
            give_buffer(u, bid, 0);
            io_uring_buf_ring_advance(u->br, 1);
        }
    }
    return n;
}
