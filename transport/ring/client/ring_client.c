/*
 * The ring client library: claim a slot over the Unix socket, map it, and
 * exchange records with spin-then-park waiting (include/goblin/ring_client.h,
 * docs/ring-protocol.md).
 */
#define _POSIX_C_SOURCE 200809L
/* On macOS _POSIX_C_SOURCE alone hides everything beyond POSIX, MSG_DONTWAIT
 * included; _DARWIN_C_SOURCE brings it back (glibc ignores it). */
#define _DARWIN_C_SOURCE
#include "transport/ring/client/ring_client_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "platform/clock.h"
#include "platform/cpu.h"
#include "platform/park.h"
#include "platform/shm.h"
#include "platform/shm_atomic.h"
#include "platform/wakefd.h"

/* While parked, wake up this often to check the control socket for a dead
 * server. */
#define PARK_SLICE_NS (100u * 1000u * 1000u)

void gb_rc_fail(gb_ring_client *rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rc->err, sizeof rc->err, fmt, ap);
    va_end(ap);
}

const char *gb_ring_client_error(const gb_ring_client *rc) { return rc->err; }
gb_ring_proto gb_ring_client_protocol(const gb_ring_client *rc) { return rc->proto; }
int gb_ring_client_slot(const gb_ring_client *rc) { return rc->slot_id; }

void *gb_ring_client_memory(gb_ring_client *rc, size_t *size)
{
    *size = rc->shm.size;
    return rc->shm.addr;
}
size_t gb_ring_client_max_message(const gb_ring_client *rc) { return rc->wr.max_payload; }

/* ---- control connection ------------------------------------------------------------ */

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Encodes argv as a RESP multibulk into buf (cap bytes); returns its length
 * or 0 if it does not fit. */
size_t gb_rc_resp_encode(char *buf, size_t cap, int argc, const char *const *argv, const size_t *lens)
{
    size_t used = 0;
    int n = snprintf(buf, cap, "*%d\r\n", argc);
    if (n < 0 || (size_t)n >= cap)
        return 0;
    used = (size_t)n;
    for (int i = 0; i < argc; i++) {
        size_t l = lens ? lens[i] : strlen(argv[i]);
        n = snprintf(buf + used, cap - used, "$%zu\r\n", l);
        if (n < 0 || used + (size_t)n + l + 2 > cap)
            return 0;
        used += (size_t)n;
        memcpy(buf + used, argv[i], l);
        used += l;
        buf[used++] = '\r';
        buf[used++] = '\n';
    }
    return used;
}

/* Reads one line reply ("+OK\r\n" / "-ERR ...\r\n") from the control socket. */
static int read_line(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r = read(fd, buf + n, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        if (buf[n] == '\n') {
            buf[n + 1] = '\0';
            return 0;
        }
        n++;
    }
    return -1;
}

int gb_rc_connect_unix(const char *path, char *err, size_t errlen)
{
    struct sockaddr_un sa;
    if (strlen(path) >= sizeof sa.sun_path) {
        snprintf(err, errlen, "socket path too long: %s", path);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket(): %s", strerror(errno));
        return -1;
    }
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    strcpy(sa.sun_path, path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        snprintf(err, errlen, "cannot connect to %s: %s (is goblin-core running with --unixsocket %s?)", path,
                 strerror(errno), path);
        close(fd);
        return -1;
    }
    return fd;
}

static bool pow2(uint64_t v) { return v && (v & (v - 1)) == 0; }

/* The server is trusted, but a mismatched library or a corrupt handshake
 * must fail here with a sentence, not later with a crash. */
static int check_header(const gb_ring_header *h, size_t size, gb_ring_proto proto, char *err, size_t errlen)
{
    if (h->magic != GB_RING_MAGIC) {
        snprintf(err, errlen, "the shared memory is not a goblin ring (bad magic)");
        return GB_EPROTO;
    }
    if (h->layout_version != GB_RING_LAYOUT_VERSION) {
        snprintf(err, errlen, "ring layout version %u, this library speaks %u", h->layout_version,
                 GB_RING_LAYOUT_VERSION);
        return GB_EPROTO;
    }
    if (h->protocol != (uint32_t)proto || h->slot_size != size || !pow2(h->req_capacity) ||
        !pow2(h->resp_capacity) || h->req_offset < GB_RING_CTRL_SIZE || h->req_offset + h->req_capacity > size ||
        h->resp_offset < h->req_offset + h->req_capacity || h->resp_offset + h->resp_capacity > size ||
        h->max_payload > h->req_capacity / 2 || h->max_payload > h->resp_capacity / 2 || h->max_payload < 64) {
        snprintf(err, errlen, "ring header is inconsistent (size, offsets or capacities)");
        return GB_EPROTO;
    }
    return 0;
}

int gb_ring_client_connect(const char *path, gb_ring_proto proto, const gb_ring_client_options *opt,
                           gb_ring_client **out, char *err, size_t errlen)
{
    *out = NULL;
    if (proto != GB_RING_SBE && proto != GB_RING_RESP) {
        snprintf(err, errlen, "protocol must be GB_RING_SBE or GB_RING_RESP");
        return GB_EINVAL;
    }
    int fd = gb_rc_connect_unix(path, err, errlen);
    if (fd < 0)
        return GB_ECLOSED;
    char buf[1024];
    if (opt && opt->password) {
        const char *argv[3] = {"AUTH", opt->username ? opt->username : "default", opt->password};
        size_t n = gb_rc_resp_encode(buf, sizeof buf, 3, argv, NULL);
        if (n == 0 || write_all(fd, buf, n) != 0 || read_line(fd, buf, sizeof buf) != 0) {
            snprintf(err, errlen, "AUTH failed: connection closed");
            close(fd);
            return GB_ECLOSED;
        }
        if (buf[0] == '-') {
            buf[strcspn(buf, "\r\n")] = '\0';
            snprintf(err, errlen, "AUTH refused: %s", buf + 1);
            close(fd);
            return GB_EPERM;
        }
    }
    char lv[16], sv[16];
    snprintf(lv, sizeof lv, "%u", GB_RING_LAYOUT_VERSION);
    snprintf(sv, sizeof sv, "%u", GB_SBE_SCHEMA_VERSION);
    const char *argv[5] = {GB_RING_CLAIM_COMMAND, GB_RING_CLAIM_SUBCOMMAND,
                           proto == GB_RING_SBE ? GB_RING_CLAIM_SBE : GB_RING_CLAIM_RESP, lv, sv};
    size_t n = gb_rc_resp_encode(buf, sizeof buf, proto == GB_RING_SBE ? 5 : 4, argv, NULL);
    int fds[2] = {-1, -1};
    int nfds = 0;
    size_t got = 0;
    char reply[256];
    /* A slot released a moment ago is given fresh memory off the server's
     * engine thread; while every free slot is in that state the server
     * answers "ring pool busy". Retry for up to ~200 ms. */
    for (int attempt = 0;; attempt++) {
        if (write_all(fd, buf, n) != 0) {
            snprintf(err, errlen, "RING CLAIM: %s", strerror(errno));
            close(fd);
            return GB_ECLOSED;
        }
        int rc = gb_shm_recv_fds(fd, fds, &nfds, 2, reply, sizeof reply - 1, &got);
        if (rc != 0 || got == 0) {
            snprintf(err, errlen, "RING CLAIM: no reply from the server (%s)", rc ? gb_strerror(rc) : "closed");
            close(fd);
            return rc ? rc : GB_ECLOSED;
        }
        reply[got] = '\0';
        if (strncmp(reply, "-ERR ring pool busy", 19) != 0 || attempt >= 100)
            break;
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (reply[0] == '-') {
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
        reply[strcspn(reply, "\r\n")] = '\0';
        snprintf(err, errlen, "%s", reply + 1);
        close(fd);
        return GB_EBUSY;
    }
    long long slot = -1, size = 0, gen = 0, maxp = 0;
    if (nfds != 2 || sscanf(reply, "*4\r\n:%lld\r\n:%lld\r\n:%lld\r\n:%lld", &slot, &size, &gen, &maxp) != 4 ||
        size <= 0) {
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
        snprintf(err, errlen, "RING CLAIM: unexpected reply from the server");
        close(fd);
        return GB_EPROTO;
    }
    gb_ring_client *c = calloc(1, sizeof *c);
    c->ctl_fd = fd;
    c->wake_fd = fds[1];
    c->proto = proto;
    c->slot_id = (int)slot;
    int rc = gb_shm_map(fds[0], (size_t)size, &c->shm);
    close(fds[0]);
    c->shm.fd = -1;
    if (rc != 0) {
        snprintf(err, errlen, "cannot map the ring slot (%lld bytes): %s", size, gb_strerror(rc));
        close(fd);
        close(fds[1]);
        free(c);
        return rc;
    }
    c->ctrl = c->shm.addr;
    rc = check_header(&c->ctrl->hdr, (size_t)size, proto, err, errlen);
    if (rc != 0) {
        gb_ring_client_close(c);
        return rc;
    }
    const gb_ring_header *h = &c->ctrl->hdr;
    uint8_t *base = c->shm.addr;
    c->wr = (gb_ring_writer){base + h->req_offset, h->req_capacity, 0, 0, &c->ctrl->req_head, h->max_payload,
                             h->stamp_key};
    c->rd = (gb_ring_reader){base + h->resp_offset, h->resp_capacity, 0, &c->ctrl->resp_head, h->max_payload,
                             h->stamp_key};
    unsigned spin = opt && opt->spin_us ? opt->spin_us : h->spin_us;
    c->ns_per_cycle = gb_cycles_ns_per_cycle(2);
    c->spin_cycles = (uint64_t)((double)spin * 1000.0 / c->ns_per_cycle);
    gb_thread_set_latency_critical();
    *out = c;
    return 0;
}

void gb_ring_client_close(gb_ring_client *rc)
{
    if (!rc)
        return;
    if (rc->shm.addr)
        gb_shm_unmap(&rc->shm);
    if (rc->ctl_fd >= 0)
        close(rc->ctl_fd);
    if (rc->wake_fd >= 0)
        close(rc->wake_fd);
    free(rc->stream);
    gb_reply_free(rc->message);
    free(rc->scratch);
    free(rc);
}

/* ---- records ------------------------------------------------------------------------- */

/* The server stops answering only if it died: its end of the control socket
 * then reads as EOF. */
static bool server_gone(gb_ring_client *rc)
{
    struct pollfd p = {rc->ctl_fd, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0)
        return false;
    char b;
    ssize_t r = recv(rc->ctl_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void gb_rc_wake_server(gb_ring_client *rc)
{
    /* Dekker with the server's park: our record, full fence, its state
     * (relaxed: the fence orders it; the server pairs with its own fence
     * between storing PARKED and re-checking the rings). */
    gb_shm_fence_full();
    rc->consumed = false; /* the fence also orders our reads' head stores before the look */
    if (gb_shm_load_relaxed_u32(&rc->ctrl->server_state) != GB_RING_SERVER_RUNNING)
        gb_wakefd_signal(rc->wake_fd);
}

/* We have read everything and wait for more: if the server sleeps holding
 * replies for which our response ring had no room, the room is there now.
 * Dekker with the server's park: our response-ring head, full fence, its
 * state; it stores PARKED_FOR_ROOM, fences, then re-reads our head. Only
 * after reads that no request followed (a request's gb_rc_wake_server already
 * looked), so a request/reply client never pays for it. */
static void room_made(gb_ring_client *rc)
{
    if (!rc->consumed)
        return;
    rc->consumed = false;
    gb_shm_fence_full();
    if (gb_shm_load_relaxed_u32(&rc->ctrl->server_state) == GB_RING_SERVER_PARKED_FOR_ROOM)
        gb_wakefd_signal(rc->wake_fd);
}

int gb_rc_send_begin_wait(gb_ring_client *rc, size_t len, uint8_t **buf)
{
    if (len > rc->wr.max_payload) {
        gb_rc_fail(rc, "message of %zu bytes exceeds the ring's limit of %u (use the socket for large values)", len,
                   rc->wr.max_payload);
        return GB_ERANGE;
    }
    uint64_t spins = 0;
    for (;;) {
        int r = gb_ring_write_begin(&rc->wr, (uint32_t)len, buf);
        if (r == GB_RING_READY)
            return 0;
        if (r == GB_RING_BAD) {
            gb_rc_fail(rc, "the request ring's head is inconsistent");
            return GB_EPROTO;
        }
        /* Full: the server is behind (or waits for us to read replies). */
        gb_rc_wake_server(rc);
        if (++spins % 4096 == 0) {
            if (server_gone(rc)) {
                gb_rc_fail(rc, "the server closed the ring (it exited or dropped this client)");
                return GB_ECLOSED;
            }
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        } else {
            gb_cpu_relax();
        }
    }
}

int gb_ring_client_send(gb_ring_client *rc, const void *msg, size_t len)
{
    uint8_t *dst;
    int r = gb_rc_send_begin(rc, len, &dst);
    if (r != 0)
        return r;
    memcpy(dst, msg, len);
    gb_rc_send_commit(rc, len);
    return 0;
}

int gb_ring_client_recv(gb_ring_client *rc, const void **msg, size_t *len, uint64_t timeout_ns)
{
    if (rc->socket_link) {
        gb_rc_fail(rc, "this connection is a socket, it has no ring records");
        return GB_EINVAL;
    }
    const uint8_t *p;
    uint32_t l;
    uint64_t start = gb_cycles_now();
    /* Spin: the reply usually arrives within a few hundred ns. The clock is
     * read every 64 polls only, so noticing the reply costs one load. */
    for (unsigned spins = 1;; spins++) {
        int r = gb_ring_read_peek(&rc->rd, &p, &l);
        if (r == GB_RING_READY)
            goto got;
        if (r == GB_RING_BAD) {
            gb_rc_fail(rc, "malformed reply record from the server");
            return GB_EPROTO;
        }
        if (spins == 1)
            room_made(rc);
        if ((spins & 63) == 0 && gb_cycles_now() - start > rc->spin_cycles)
            break;
        gb_cpu_relax();
    }
    /* Park: announce, fence, re-check, sleep on client_wake. */
    uint64_t waited = 0;
    for (;;) {
        /* ACQUIRE: pairs with the server's release increment of client_wake
         * (wake_client): a reply published before an increment we see is
         * visible to the re-check below. */
        uint32_t w = gb_shm_load_acquire_u32(&rc->ctrl->client_wake);
        /* Dekker with the server's publish: PARKED, full fence, re-check;
         * the server stores the record, fences, then reads client_state. */
        gb_shm_store_relaxed_u32(&rc->ctrl->client_state, GB_RING_CLIENT_PARKED);
        gb_shm_fence_full();
        int r = gb_ring_read_peek(&rc->rd, &p, &l);
        if (r != GB_RING_EMPTY) {
            gb_shm_store_relaxed_u32(&rc->ctrl->client_state, GB_RING_CLIENT_SPINNING);
            if (r == GB_RING_READY)
                goto got;
            gb_rc_fail(rc, "malformed reply record from the server");
            return GB_EPROTO;
        }
        uint64_t slice = PARK_SLICE_NS;
        if (timeout_ns != UINT64_MAX && timeout_ns - waited < slice)
            slice = timeout_ns - waited;
        uint64_t t0 = gb_clock_mono_ns();
        gb_park_wait((_Atomic uint32_t *)&rc->ctrl->client_wake, w, slice);
        waited += gb_clock_mono_ns() - t0;
        gb_shm_store_relaxed_u32(&rc->ctrl->client_state, GB_RING_CLIENT_SPINNING);
        /* A closed ring before the timeout: a caller that waits in short
         * slices (gb_ring_next_message's poll, a relay) must learn that
         * the server dropped it (QUIT, CLIENT KILL), not time out forever. */
        if (server_gone(rc)) {
            /* A server that drops the client after a last reply (ACL
             * DELUSER of its own user, CLIENT KILL of itself) publishes it
             * before it closes the control socket: it may have come after
             * the re-check above. */
            if (gb_ring_read_peek(&rc->rd, &p, &l) == GB_RING_READY)
                goto got;
            gb_rc_fail(rc, "the server closed the ring (it exited or dropped this client)");
            return GB_ECLOSED;
        }
        if (timeout_ns != UINT64_MAX && waited >= timeout_ns) {
            gb_rc_fail(rc, "no reply within the timeout");
            return GB_ETIMEDOUT;
        }
    }
got:
    *msg = p;
    *len = l;
    rc->pending_len = l;
    return 0;
}

void gb_ring_client_recv_done(gb_ring_client *rc)
{
    gb_ring_read_consume(&rc->rd, rc->pending_len);
    rc->pending_len = 0;
    rc->consumed = true;
}

/* ---- replies ---------------------------------------------------------------------------- */

void gb_reply_free(gb_reply *r)
{
    if (!r)
        return;
    gb_rc_reply_clear(r);
    free(r);
}

void gb_rc_reply_clear(gb_reply *r)
{
    for (size_t i = 0; i < r->nelem; i++)
        gb_rc_reply_clear(&r->elem[i]);
    free(r->elem);
    free(r->str);
    memset(r, 0, sizeof *r);
}
