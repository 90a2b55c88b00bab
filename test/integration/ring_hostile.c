/*
 * ring_hostile: a ring client that does everything the protocol lets a
 * client do to its own slot, for the isolation test
 * (test/integration/test_rings.py, test_hostile_neighbour_isolation). It
 * speaks the claim handshake itself (raw RESP and SCM_RIGHTS, no client
 * library), so it holds the slot's memory descriptor and its wake
 * descriptor exactly as the server handed them out.
 *
 *   ring_hostile SOCK PROTO MODE SECONDS
 *
 * MODE is one of
 *   drain     read the wake descriptor whenever it is readable (swallow
 *             wake-ups; with a shared descriptor these are other clients')
 *   spam      signal the wake descriptor in bursts, and once with a value
 *             that saturates an eventfd counter
 *   ctrl      scribble on every control-block line (header, heads, state
 *             words, the futex word, reserved)
 *   ring      scribble on the request ring, sometimes a correctly stamped
 *             header with an impossible length (the server drops the slot)
 *   truncate  ftruncate the slot's memory shorter, longer and to zero
 *   punch     free the slot's pages (fallocate PUNCH_HOLE, MADV_REMOVE)
 *   remap     unmap, remap, mprotect its own mapping
 *   noread    send requests until the request ring is full, never read a reply
 *   die       fork children that claim, write half a record and SIGKILL
 *             themselves
 *   all       drain on a second thread while the main thread rotates through
 *             every other mode, 100 ms each
 *
 * Every mode re-claims when the server drops the slot (the control socket
 * reads EOF) and paces itself with short sleeps: the test measures what the
 * protocol lets a neighbour do to another client, not how much CPU a busy
 * process takes from it on a small machine. Prints "ready" once the first
 * claim is held, and a summary line when SECONDS have passed or SIGTERM
 * arrives (drained= counts wake-ups it swallowed: with a wake descriptor of
 * its own there are none to swallow).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "goblin/ring_layout.h"
#include "platform/shm_atomic.h"

typedef struct slot {
    int ctl;    /* the control connection that holds the claim */
    int memfd;  /* the slot's memory */
    int wake;   /* the wake descriptor the server handed out */
    size_t size;
    uint8_t *mem; /* our mapping (NULL while unmapped) */
    gb_ring_header hdr; /* copied at claim time, before we scribble on it */
    uint64_t tail;      /* next request position (noread) */
} slot;

static const char *sock_path, *proto_name;
/* Set by SIGTERM, read by the drain thread too: a named relaxed word (a
 * sig_atomic_t is only signal-safe, not thread-safe). */
static uint32_t stop_all;

static void on_term(int sig)
{
    (void)sig;
    gb_shm_store_relaxed_u32(&stop_all, 1);
}
/* Counted by the main thread and, in "all", the drain thread too: named
 * relaxed additions (a plain ++ from both is a data race TSan reports). */
static uint64_t claims, drops, drained, spammed;

static void count(uint64_t *counter) { (void)gb_shm_fetch_add_relaxed_u64(counter, 1); }
static int truncate_errno = -1, punch_errno = -1;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void sleep_us(unsigned us)
{
    struct timespec t = {0, (long)us * 1000};
    nanosleep(&t, NULL);
}

static int connect_unix(const char *path)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* The claim handshake, by hand: RING CLAIM, then one message carrying the
 * reply and two descriptors. Returns 0, or -1 (pool full, server gone). */
static int raw_claim(slot *s, const char *proto)
{
    memset(s, 0, sizeof *s);
    s->ctl = s->memfd = s->wake = -1;
    int fd = connect_unix(sock_path);
    if (fd < 0)
        return -1;
    char req[128], lv[16];
    snprintf(lv, sizeof lv, "%u", GB_RING_LAYOUT_VERSION);
    int n = snprintf(req, sizeof req, "*4\r\n$4\r\nRING\r\n$5\r\nCLAIM\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n", strlen(proto),
                     proto, strlen(lv), lv);
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    char reply[256];
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int) * 4)];
    } cbuf;
    struct iovec iov = {reply, sizeof reply - 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf, .msg_controllen = sizeof cbuf.buf};
    ssize_t got = recvmsg(fd, &msg, 0);
    int fds[4], nfds = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int) && nfds < 4; i++)
                memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
    long long slot_id, size = 0;
    if (got <= 0 || nfds != 2 || (reply[got] = '\0', sscanf(reply, "*4\r\n:%lld\r\n:%lld", &slot_id, &size) != 2) ||
        size <= 0) {
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
        close(fd);
        return -1;
    }
    s->ctl = fd;
    s->memfd = fds[0];
    s->wake = fds[1];
    s->size = (size_t)size;
    s->mem = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->memfd, 0);
    if (s->mem == MAP_FAILED) {
        s->mem = NULL;
    } else {
        memcpy(&s->hdr, s->mem, sizeof s->hdr);
    }
    count(&claims);
    return 0;
}

static void release(slot *s)
{
    if (s->mem)
        munmap(s->mem, s->size);
    if (s->ctl >= 0)
        close(s->ctl);
    if (s->memfd >= 0)
        close(s->memfd);
    if (s->wake >= 0)
        close(s->wake);
    s->mem = NULL;
    s->ctl = s->memfd = s->wake = -1;
}

/* The server dropped us if the control socket reads EOF. */
static bool dropped(const slot *s)
{
    struct pollfd p = {s->ctl, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0)
        return false;
    char b[64];
    ssize_t r = recv(s->ctl, b, sizeof b, MSG_DONTWAIT);
    return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* Keeps a slot claimed: re-claims after a drop, retrying while the pool is
 * busy. */
static bool ensure(slot *s, const char *proto)
{
    if (s->ctl >= 0 && !dropped(s))
        return true;
    if (s->ctl >= 0) {
        count(&drops);
        release(s);
    }
    for (int i = 0; i < 200 && !gb_shm_load_relaxed_u32(&stop_all); i++) {
        if (raw_claim(s, proto) == 0)
            return true;
        sleep_us(5000);
    }
    return false;
}

/* A record header, the way ring_io.h writes one: the length, then the stamp
 * with release (ordering the length and the payload before it). */
static void publish(uint8_t *at, uint64_t stamp, uint32_t len)
{
    gb_ring_record_header *h = (gb_ring_record_header *)(void *)at;
    gb_shm_store_relaxed_u32(&h->len, len);
    gb_shm_store_release_u64(&h->stamp, stamp);
}

/* ---- the modes: one round of each ------------------------------------------- */

static void do_drain(slot *s, int timeout_ms)
{
    struct pollfd p = {s->wake, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN)) {
        uint64_t v;
        if (read(s->wake, &v, sizeof v) > 0)
            count(&drained);
    }
}

static void do_spam(slot *s)
{
    uint64_t one = 1;
    for (int i = 0; i < 64; i++)
        if (write(s->wake, &one, sizeof one) > 0)
            count(&spammed);
    /* An eventfd counter one short of its maximum: a polite writer would
     * now get EAGAIN (and must take that as "already signalled"). */
    uint64_t big = UINT64_C(0xfffffffffffffffe);
    if (write(s->wake, &big, sizeof big) > 0)
        count(&spammed);
    sleep_us(100);
}

static void do_ctrl(slot *s)
{
    if (!s->mem)
        return;
    gb_ring_ctrl *c = (gb_ring_ctrl *)s->mem;
    for (int i = 0; i < 32; i++) {
        uint64_t r = ((uint64_t)(unsigned)rand() << 32) | (unsigned)rand();
        switch (rand() % 9) {
        case 0: c->hdr.magic = r; c->hdr.max_payload = (uint32_t)r; break;
        case 1: c->req_head = r; break;
        case 2: c->resp_head = r; break;
        case 3: c->server_state = (uint32_t)r; break;
        case 4: c->client_state = GB_RING_CLIENT_PARKED; break; /* costs the server a futex wake per reply */
        case 5: c->client_wake = (uint32_t)r; break;
        case 6: c->violations = r; break;
        case 7: memset(c->reserved, (int)r, sizeof c->reserved); break;
        default: c->server_state = GB_RING_SERVER_RUNNING; break; /* lie to ourselves: never signal */
        }
    }
    sleep_us(100);
}

static void do_ring(slot *s)
{
    if (!s->mem)
        return;
    uint8_t *req = s->mem + s->hdr.req_offset;
    uint64_t cap = s->hdr.req_capacity;
    for (int i = 0; i < 64; i++)
        req[((size_t)rand() * 2654435761u) % cap] = (uint8_t)rand();
    if (rand() % 8 == 0) {
        /* Correctly stamped, impossible length: the server must drop us. */
        publish(req, gb_ring_stamp(0, s->hdr.stamp_key), 0xfffffff0u);
        uint64_t one = 1;
        if (write(s->wake, &one, sizeof one) < 0) {
        }
    }
    sleep_us(200);
}

static void do_truncate(slot *s)
{
    /* Shorter, then to zero, and leave it so while the server is woken to
     * look at this slot: on memory that is not sealed its next access
     * faults. Then longer, and back to the size (if it is still ours). */
    int r = ftruncate(s->memfd, (off_t)(s->size / 2));
    truncate_errno = r == 0 ? 0 : errno;
    if (ftruncate(s->memfd, 0) == 0)
        truncate_errno = 0;
    uint64_t one = 1;
    if (write(s->wake, &one, sizeof one) < 0) {
    }
    sleep_us(5000);
    if (ftruncate(s->memfd, (off_t)(s->size * 2)) != 0 || ftruncate(s->memfd, (off_t)s->size) != 0) {
    }
    sleep_us(200);
}

static void do_punch(slot *s)
{
    int e = ENOSYS;
#ifdef FALLOC_FL_PUNCH_HOLE
    e = fallocate(s->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)s->size) == 0 ? 0 : errno;
#endif
#ifdef MADV_REMOVE
    if (s->mem && madvise(s->mem, s->size, MADV_REMOVE) == 0)
        e = 0;
#endif
    punch_errno = e;
    sleep_us(200);
}

static void do_remap(slot *s)
{
    if (s->mem)
        munmap(s->mem, s->size);
    s->mem = mmap(NULL, s->size / 2, PROT_READ, MAP_SHARED, s->memfd, 0);
    if (s->mem != MAP_FAILED)
        munmap(s->mem, s->size / 2);
    s->mem = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->memfd, 0);
    if (s->mem == MAP_FAILED) {
        s->mem = NULL;
    } else {
        mprotect(s->mem, s->size, PROT_NONE);
        mprotect(s->mem, s->size, PROT_READ | PROT_WRITE);
    }
    sleep_us(200);
}

/* Writes one RESP PING record at the slot's next request position, if the
 * ring has room by the server's published head. */
static bool put_ping(slot *s)
{
    static const char ping[] = "*1\r\n$4\r\nPING\r\n";
    uint32_t len = sizeof ping - 1;
    uint64_t cap = s->hdr.req_capacity, size = gb_ring_record_size(len);
    uint64_t idx = s->tail & (cap - 1);
    gb_ring_ctrl *c = (gb_ring_ctrl *)s->mem;
    uint64_t head = gb_shm_load_acquire_u64(&c->req_head); /* the server is done with the bytes before it */
    uint64_t pad = idx + size > cap ? cap - idx : 0;
    if (s->tail + pad + size - head > cap)
        return false;
    uint8_t *ring = s->mem + s->hdr.req_offset;
    if (pad) {
        publish(ring + idx, gb_ring_stamp(s->tail, s->hdr.stamp_key), GB_RING_PAD);
        s->tail += pad;
        idx = 0;
    }
    memcpy(ring + idx + GB_RING_RECORD_HEADER, ping, len);
    publish(ring + idx, gb_ring_stamp(s->tail, s->hdr.stamp_key), len);
    s->tail += size;
    return true;
}

static void do_noread(slot *s)
{
    if (!s->mem)
        return;
    for (int i = 0; i < 256 && put_ping(s); i++) {
    }
    uint64_t one = 1;
    if (write(s->wake, &one, sizeof one) < 0) {
    }
    sleep_us(200);
}

static void do_die(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        slot s;
        if (raw_claim(&s, proto_name) == 0 && s.mem) {
            /* Half a record: payload bytes, then a header promising more. */
            uint8_t *req = s.mem + s.hdr.req_offset;
            memset(req + GB_RING_RECORD_HEADER, '*', 64);
            publish(req, gb_ring_stamp(0, s.hdr.stamp_key), 4000);
        }
        kill(getpid(), SIGKILL);
        _exit(1);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
    sleep_us(500);
}

typedef enum { M_DRAIN, M_SPAM, M_CTRL, M_RING, M_TRUNCATE, M_PUNCH, M_REMAP, M_NOREAD, M_DIE, M_ALL } mode;
static const char *mode_names[] = {"drain", "spam", "ctrl", "ring", "truncate", "punch", "remap", "noread", "die", "all"};

static void one_round(slot *s, mode m)
{
    const char *proto = m == M_NOREAD ? "RESP" : proto_name;
    if (m != M_DIE && !ensure(s, proto))
        return;
    switch (m) {
    case M_DRAIN: do_drain(s, 50); break;
    case M_SPAM: do_spam(s); break;
    case M_CTRL: do_ctrl(s); break;
    case M_RING: do_ring(s); break;
    case M_TRUNCATE: do_truncate(s); break;
    case M_PUNCH: do_punch(s); break;
    case M_REMAP: do_remap(s); break;
    case M_NOREAD: do_noread(s); break;
    case M_DIE: do_die(); break;
    case M_ALL: break;
    }
}

static slot drain_slot;

/* "all": a second claim whose wake descriptor is drained the whole time. */
static void *drain_thread(void *arg)
{
    (void)arg;
    while (!gb_shm_load_relaxed_u32(&stop_all)) {
        if (ensure(&drain_slot, proto_name))
            do_drain(&drain_slot, 20);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: ring_hostile SOCK sbe|resp MODE SECONDS\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, on_term);
    sock_path = argv[1];
    proto_name = strcmp(argv[2], "sbe") == 0 ? "SBE" : "RESP";
    int m = -1;
    for (int i = 0; i <= M_ALL; i++)
        if (strcmp(argv[3], mode_names[i]) == 0)
            m = i;
    if (m < 0) {
        fprintf(stderr, "unknown mode %s\n", argv[3]);
        return 2;
    }
    double seconds = atof(argv[4]);
    srand((unsigned)getpid());
    slot s = {.ctl = -1, .memfd = -1, .wake = -1};
    if (!ensure(&s, m == M_NOREAD ? "RESP" : proto_name)) {
        printf("claim failed\n");
        return 1;
    }
    pthread_t th;
    bool threaded = m == M_ALL && pthread_create(&th, NULL, drain_thread, NULL) == 0;
    printf("ready\n");
    fflush(stdout);
    uint64_t end = now_ns() + (uint64_t)(seconds * 1e9);
    uint64_t t0 = now_ns();
    while (now_ns() < end && !gb_shm_load_relaxed_u32(&stop_all)) {
        mode cur = (mode)m;
        if (m == M_ALL) /* rotate through drain..die, 100 ms each */
            cur = (mode)(((now_ns() - t0) / 100000000u) % M_ALL);
        one_round(&s, cur);
    }
    gb_shm_store_relaxed_u32(&stop_all, 1);
    if (threaded)
        pthread_join(th, NULL);
    printf("hostile %s done: claims=%llu drops=%llu drained=%llu spammed=%llu truncate_errno=%d punch_errno=%d\n",
           mode_names[m], (unsigned long long)gb_shm_load_relaxed_u64(&claims),
           (unsigned long long)gb_shm_load_relaxed_u64(&drops), (unsigned long long)gb_shm_load_relaxed_u64(&drained),
           (unsigned long long)gb_shm_load_relaxed_u64(&spammed), truncate_errno, punch_errno);
    release(&s);
    release(&drain_slot);
    return 0;
}
