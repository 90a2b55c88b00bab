/* The parts of platform/shm.h that are the same on every POSIX system: the
 * page size, the SIGBUS-guarded touch, the shm_open object, mapping a
 * received object, unmapping, and descriptor passing over Unix sockets
 * (SCM_RIGHTS).
 *
 * _GNU_SOURCE: glibc hides MSG_CMSG_CLOEXEC and friends without it; macOS and
 * the BSDs expose everything by default. Every non-POSIX name used below is
 * feature-tested with #ifdef. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "clock.h"
#include "common/internal.h"
#include "shm.h"

static size_t page_size_first(_Atomic size_t *cached)
{
    long v = sysconf(_SC_PAGESIZE);
    size_t ps = v > 0 ? (size_t)v : 4096u; /* sysconf cannot fail here in practice */
    atomic_store_explicit(cached, ps, memory_order_relaxed);
    return ps;
}

size_t gb_page_size(void)
{
    static _Atomic size_t cached;
    size_t ps = atomic_load_explicit(&cached, memory_order_relaxed);
    return ps ? ps : page_size_first(&cached);
}

/* ---- SIGBUS-guarded touch ---------------------------------------------
 * A MAP_SHARED page whose backing store cannot be supplied (empty hugetlb
 * pool, object truncated by someone else) faults with SIGBUS, which by
 * default kills the process. While one thread touches pages we install a
 * handler that jumps back into gb__touch_pages on *that* thread; the lock
 * keeps two touching threads from saving each other's handler as "previous".
 */
static pthread_mutex_t touch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction touch_saved;
static _Thread_local sigjmp_buf *volatile touch_env;

static void on_sigbus(int sig, siginfo_t *info, void *uctx)
{
    (void)sig;
    (void)info;
    (void)uctx;
    sigjmp_buf *env = touch_env;
    if (env)
        siglongjmp(*env, 1);
    /* A SIGBUS on another thread while we hold the handler: put the previous
     * disposition back and return; the faulting instruction runs again and
     * gets exactly the handling it would have had without us. */
    sigaction(SIGBUS, &touch_saved, NULL);
}

int gb__touch_pages(void *addr, size_t len)
{
    if (!addr)
        return gb__fail(GB_EINVAL, NULL, 0, "prefault: NULL address");
    if (!len)
        return 0;
    size_t ps = gb_page_size();
    unsigned char *base = (unsigned char *)((uintptr_t)addr & ~(uintptr_t)(ps - 1));
    size_t span = (size_t)((unsigned char *)addr - base) + len;

    pthread_mutex_lock(&touch_lock);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &touch_saved) != 0) {
        pthread_mutex_unlock(&touch_lock);
        return gb__fail(GB_ESYS, NULL, 0, "prefault: cannot install SIGBUS guard: %s", strerror(errno));
    }

    sigjmp_buf env;
    volatile size_t off = 0; /* read after siglongjmp: must be volatile */
    int rc = 0;
    if (sigsetjmp(env, 1) == 0) { /* 1: restore the signal mask on the jump */
        touch_env = &env;
        for (off = 0; off < span; off += ps) {
            /* A compare-and-swap of the byte with itself: a write access
             * (faults the page in writable) that cannot lose a peer's
             * concurrent store, and that no compiler folds into a plain
             * load the way it may fold an atomic "or 0". */
            unsigned char *p = base + off;
            unsigned char old = __atomic_load_n(p, __ATOMIC_RELAXED);
            while (!__atomic_compare_exchange_n(p, &old, old, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            }
        }
    } else {
        rc = gb__fail(GB_ENOMEM, NULL, 0,
                      "prefault: SIGBUS at byte %zu of %zu: the backing store could not supply the page "
                      "(empty huge-page pool, or the object was truncated)",
                      (size_t)off, span);
    }
    touch_env = NULL;
    sigaction(SIGBUS, &touch_saved, NULL);
    pthread_mutex_unlock(&touch_lock);
    return rc;
}

/* ---- the SIGBUS guard (platform/shm.h) ----------------------------------
 * A table of guarded ranges the handler scans. Entries are written by one
 * thread at a time (shm.h's contract) and read by the handler, which may
 * interrupt that very thread between two stores: an entry is live only
 * while end > start, end is cleared first on removal and set last on
 * insertion, and `used` (the scan bound) only grows. */
typedef struct {
    _Atomic uintptr_t start, end;
    _Atomic int faulted;
} guard_entry;

static guard_entry guards[GB_SHM_GUARD_MAX];
static _Atomic unsigned guards_used;       /* entries [0, used) may be live */
static _Atomic unsigned long guard_faults; /* faults handled, all mappings */
static struct sigaction guard_prev;         /* the disposition we replaced */
static _Atomic int guard_installed;
static pthread_mutex_t guard_install_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_guarded_sigbus(int sig, siginfo_t *info, void *uctx)
{
    uintptr_t a = (uintptr_t)info->si_addr;
    unsigned n = atomic_load_explicit(&guards_used, memory_order_acquire);
    for (unsigned i = 0; i < n; i++) {
        uintptr_t end = atomic_load_explicit(&guards[i].end, memory_order_acquire);
        uintptr_t start = atomic_load_explicit(&guards[i].start, memory_order_relaxed);
        if (a < start || a >= end)
            continue;
        /* Zero pages over the whole mapping: every later access succeeds,
         * and the peer's object is no longer referenced by our mapping
         * (munmap at release unmaps these pages instead). mmap is a plain
         * system call here, safe in a handler in practice (Wayland's
         * wl_shm does the same for client buffers). */
        void *p = mmap((void *)start, end - start, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1,
                       0);
        if (p == MAP_FAILED)
            break;
        atomic_store_explicit(&guards[i].faulted, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&guard_faults, 1, memory_order_relaxed);
        return;
    }
    /* Not a guarded address: what would have happened without the guard. */
    if ((guard_prev.sa_flags & SA_SIGINFO) && guard_prev.sa_sigaction) {
        guard_prev.sa_sigaction(sig, info, uctx);
    } else if (guard_prev.sa_handler != SIG_DFL && guard_prev.sa_handler != SIG_IGN) {
        guard_prev.sa_handler(sig);
    } else {
        /* Default (or ignored, which for a fault would loop forever):
         * restore the default and return; the access faults again and the
         * process dies with the usual SIGBUS. */
        signal(SIGBUS, SIG_DFL);
    }
}

static int guard_install(void)
{
    if (atomic_load_explicit(&guard_installed, memory_order_acquire))
        return 0;
    /* touch_lock too: gb__touch_pages swaps the disposition while it holds it */
    pthread_mutex_lock(&guard_install_lock);
    pthread_mutex_lock(&touch_lock);
    int rc = 0;
    if (!atomic_load_explicit(&guard_installed, memory_order_relaxed)) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_guarded_sigbus;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGBUS, &sa, &guard_prev) != 0)
            rc = gb__fail(GB_ESYS, NULL, 0, "shm guard: cannot install the SIGBUS handler: %s", strerror(errno));
        else
            atomic_store_explicit(&guard_installed, 1, memory_order_release);
    }
    pthread_mutex_unlock(&touch_lock);
    pthread_mutex_unlock(&guard_install_lock);
    return rc;
}

int gb_shm_guard(gb_shm *shm)
{
    if (!shm || !shm->addr || !shm->size)
        return gb__fail(GB_EINVAL, NULL, 0, "shm guard: not a mapping");
    if (shm->guard)
        return 0;
    int rc = guard_install();
    if (rc != 0)
        return rc;
    unsigned used = atomic_load_explicit(&guards_used, memory_order_relaxed);
    unsigned i = 0;
    while (i < used && atomic_load_explicit(&guards[i].end, memory_order_relaxed) != 0)
        i++;
    if (i == GB_SHM_GUARD_MAX)
        return gb__fail(GB_EBUSY, NULL, 0, "shm guard: %d mappings are guarded already", GB_SHM_GUARD_MAX);
    atomic_store_explicit(&guards[i].faulted, 0, memory_order_relaxed);
    atomic_store_explicit(&guards[i].start, (uintptr_t)shm->addr, memory_order_relaxed);
    /* release: start and faulted are in place before the handler can match end */
    atomic_store_explicit(&guards[i].end, (uintptr_t)shm->addr + shm->size, memory_order_release);
    if (i == used)
        atomic_store_explicit(&guards_used, used + 1, memory_order_release);
    shm->guard = (int)i + 1;
    return 0;
}

void gb_shm_unguard(gb_shm *shm)
{
    if (!shm || shm->guard <= 0 || shm->guard > GB_SHM_GUARD_MAX)
        return;
    guard_entry *g = &guards[shm->guard - 1];
    atomic_store_explicit(&g->end, 0, memory_order_release); /* dead before anything else changes */
    atomic_store_explicit(&g->start, 0, memory_order_relaxed);
    shm->guard = 0;
}

bool gb_shm_faulted(const gb_shm *shm)
{
    if (!shm || shm->guard <= 0 || shm->guard > GB_SHM_GUARD_MAX)
        return false;
    return atomic_load_explicit(&guards[shm->guard - 1].faulted, memory_order_relaxed) != 0;
}

unsigned long gb_shm_guard_faults(void) { return atomic_load_explicit(&guard_faults, memory_order_relaxed); }

/* ---- shm_open object --------------------------------------------------- */

/* macOS limits shm names to PSHMNAMLEN = 31 characters including the '/'. */
#define SHM_NAME_MAX 31

int gb__shm_create_named(size_t size, gb_shm *out, char *err, size_t errlen)
{
    static _Atomic unsigned counter;
    char name[SHM_NAME_MAX + 1];
    int fd = -1;
    size = gb__round_up(size, gb_page_size());
    for (int attempt = 0; attempt < 32 && fd < 0; attempt++) {
        unsigned n = atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
        unsigned salt = (unsigned)(gb_clock_mono_ns() & 0xffffu);
        int len = snprintf(name, sizeof name, "/gb-%x-%x-%x", (unsigned)getpid(), n, salt);
        if (len < 0 || len > SHM_NAME_MAX)
            return gb__fail(GB_EINVAL, err, errlen, "shm: name too long");
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 && errno != EEXIST)
            return gb__fail(gb__errno_code(errno), err, errlen, "shm_open(%s): %s", name, strerror(errno));
    }
    if (fd < 0)
        return gb__fail(GB_EEXIST, err, errlen, "shm_open: no free name after 32 attempts");
    /* Unlinked at once: the object lives only as long as descriptors and
     * mappings do, so a crash leaves nothing behind in /dev/shm. */
    shm_unlink(name);
    fcntl(fd, F_SETFD, FD_CLOEXEC); /* POSIX sets it already; be explicit */
    /* Exactly one ftruncate: macOS refuses to resize a shm object twice. */
    if (gb__sys.ftruncate(fd, (off_t)size) != 0) {
        int rc = gb__fail(gb__errno_code(errno), err, errlen, "shm: ftruncate(%zu) failed: %s", size,
                          strerror(errno));
        close(fd);
        return rc;
    }
    int rc = gb__shm_map_fd(fd, size, false, out, err, errlen);
    if (rc < 0)
        close(fd);
    return rc;
}

int gb__shm_map_fd(int fd, size_t size, bool huge, gb_shm *out, char *err, size_t errlen)
{
    void *p = gb__sys.mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return gb__fail(gb__errno_code(errno), err, errlen, "shm: mmap of %zu bytes failed: %s", size,
                        strerror(errno));
    *out = (gb_shm){.fd = fd, .addr = p, .size = size, .huge = huge};
    return 0;
}

int gb__shm_map_checked(int fd, size_t size, bool detect_hugetlbfs, gb_shm *out)
{
    struct stat st;
    if (!out || fd < 0 || fstat(fd, &st) != 0)
        return gb__fail(GB_EINVAL, NULL, 0, "shm_map: bad descriptor %d", fd);
    if (size == 0)
        size = (size_t)st.st_size;
    if (size == 0 || (off_t)size > st.st_size)
        return gb__fail(GB_EINVAL, NULL, 0,
                        "shm_map: object is %lld bytes, %zu asked; mapping past its end would SIGBUS",
                        (long long)st.st_size, size);
    /* hugetlbfs reports its page size as the block size. */
    bool huge = detect_hugetlbfs && (size_t)st.st_blksize > gb_page_size();
    return gb__shm_map_fd(fd, size, huge, out, NULL, 0);
}

void gb_shm_unmap(gb_shm *shm)
{
    if (shm && shm->addr) {
        gb_shm_unguard(shm);
        munmap(shm->addr, shm->size);
        shm->addr = NULL;
    }
}

void gb_shm_close(gb_shm *shm)
{
    if (!shm)
        return;
    gb_shm_unmap(shm);
    if (shm->fd >= 0)
        close(shm->fd);
    shm->fd = -1;
}

/* ---- descriptor passing ------------------------------------------------ */

#ifdef MSG_NOSIGNAL
#define SEND_FLAGS MSG_NOSIGNAL /* a vanished peer is GB_ECLOSED, not SIGPIPE */
#else
#define SEND_FLAGS 0
#endif

int gb_shm_send_fds(int sock, const int *fds, int nfds, const void *data, size_t len)
{
    if (nfds < 0 || nfds > GB_SHM_MAX_FDS || (nfds && !fds) || !data || !len)
        return gb__fail(GB_EINVAL, NULL, 0,
                        "send_fds: need 1+ data bytes and 0..%d descriptors (got %zu bytes, %d fds)",
                        GB_SHM_MAX_FDS, len, nfds);
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int) * GB_SHM_MAX_FDS)];
    } ctl;
    memset(&ctl, 0, sizeof ctl);
#ifdef SO_NOSIGPIPE
    /* macOS/BSD: the socket-level switch is what reliably stops SIGPIPE.
     * Descriptor passing happens at connection setup, so the extra syscall
     * does not matter. */
    int one = 1;
    (void)setsockopt(sock, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
    const char *p = data;
    size_t left = len;
    bool fds_sent = nfds == 0;
    while (left) {
        struct iovec iov = {.iov_base = (void *)p, .iov_len = left};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
        if (!fds_sent) {
            msg.msg_control = ctl.buf;
            msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
            struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
            memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
        }
        ssize_t n = sendmsg(sock, &msg, SEND_FLAGS);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return gb__fail(gb__errno_code(errno), NULL, 0, "send_fds: sendmsg: %s", strerror(errno));
        }
        /* The descriptors travel with the first byte that was sent; a short
         * write sends the rest of the data without them. */
        fds_sent = true;
        p += n;
        left -= (size_t)n;
    }
    return 0;
}

static void close_received(struct msghdr *msg)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            close(fd);
        }
    }
}

int gb_shm_recv_fds(int sock, int *fds, int *nfds, int max, void *data, size_t cap, size_t *got)
{
    if (!nfds || !got || max < 0 || (max && !fds) || !data || !cap)
        return gb__fail(GB_EINVAL, NULL, 0, "recv_fds: bad arguments");
    *nfds = 0;
    *got = 0;
    /* Room for GB_SHM_MAX_FDS whatever `max` is, so a peer sending more
     * than expected gets its extras closed by us instead of truncated away
     * by the kernel with MSG_CTRUNC. */
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int) * GB_SHM_MAX_FDS)];
    } ctl;
    struct iovec iov = {.iov_base = data, .iov_len = cap};
    struct msghdr msg;
    ssize_t n;
    int flags = 0;
#ifdef MSG_CMSG_CLOEXEC
    flags |= MSG_CMSG_CLOEXEC; /* no window in which a fork+exec inherits them */
#endif
    do {
        memset(&msg, 0, sizeof msg);
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = ctl.buf;
        msg.msg_controllen = sizeof ctl.buf;
        n = recvmsg(sock, &msg, flags);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return gb__fail(gb__errno_code(errno), NULL, 0, "recv_fds: recvmsg: %s", strerror(errno));

    int count = 0;
    bool bad = (msg.msg_flags & MSG_CTRUNC) != 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        count += (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    }
    if (bad || count > max) {
        close_received(&msg);
        return gb__fail(GB_EPROTO, NULL, 0, "recv_fds: peer sent %d descriptor(s)%s, expected at most %d; closed them",
                        count, bad ? " (truncated)" : "", max);
    }
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
#ifndef MSG_CMSG_CLOEXEC
            fcntl(fd, F_SETFD, FD_CLOEXEC);
#endif
            fds[(*nfds)++] = fd;
        }
    }
    if (n == 0 && *nfds == 0)
        return gb__fail(GB_ECLOSED, NULL, 0, "recv_fds: peer closed the connection");
    *got = (size_t)n;
    return 0;
}
