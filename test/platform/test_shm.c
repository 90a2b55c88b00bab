/* platform/shm.h: create/map/prefault, the empty huge-page pool, the SIGBUS
 * guard (a real SIGBUS from a truncated file), injected madvise results, and
 * descriptor passing between processes. */
#include "tutil.h"

#include <dirent.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "shm.h"

static gb_sys_memfd_create_fn real_memfd_create;

static int reset_table(void **state)
{
    (void)state;
    gb_syscalls_reset();
    return 0;
}

/* A temporary file of `pages` pages, unlinked; its descriptor. */
static int temp_file(size_t pages)
{
    char path[] = "/tmp/gb-guard-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) {
        unlink(path);
        if (ftruncate(fd, (off_t)(pages * gb_page_size())) != 0) {
            close(fd);
            fd = -1;
        }
    }
    return fd;
}

static void test_page_size(void **state)
{
    (void)state;
    size_t ps = gb_page_size();
    assert_true(ps >= 4096);
    assert_int_equal(ps & (ps - 1), 0); /* a power of two: 4 KiB here, 16 KiB on Apple Silicon */
    assert_int_equal(ps, (size_t)sysconf(_SC_PAGESIZE));
    size_t huge = gb_huge_page_size();
    if (tu_has(GB_CAP_HUGEPAGES))
        assert_true(huge == 0 || (huge > ps && (huge & (huge - 1)) == 0));
    else
        assert_int_equal(huge, 0);
}

static void test_create_map_share(void **state)
{
    (void)state;
    size_t ps = gb_page_size();
    gb_shm a, b;
    char err[256] = "";
    assert_rc(gb_shm_create(3 * ps + 1, 0, &a, err, sizeof err), 0);
    assert_int_equal(a.size, 4 * ps); /* rounded up to whole pages */
    assert_false(a.huge);
    assert_true(a.fd >= 0);
    assert_true(fcntl(a.fd, F_GETFD) & FD_CLOEXEC);
    assert_rc(gb_shm_prefault(a.addr, a.size), 0);
    memset(a.addr, 0x5a, a.size);

    /* a second mapping of the same descriptor sees the same bytes */
    int fd2 = dup(a.fd);
    assert_rc(gb_shm_map(fd2, 0, &b), 0);
    assert_int_equal(b.size, a.size);
    assert_int_equal(((unsigned char *)b.addr)[a.size - 1], 0x5a);
    ((unsigned char *)b.addr)[0] = 0x77;
    assert_int_equal(((unsigned char *)a.addr)[0], 0x77);

    /* prefault never changes contents */
    assert_rc(gb_shm_prefault(b.addr, b.size), 0);
    assert_int_equal(((unsigned char *)a.addr)[0], 0x77);
    assert_int_equal(((unsigned char *)a.addr)[1], 0x5a);

    gb_shm_close(&b);
    assert_int_equal(b.fd, -1);
    assert_null(b.addr);
    gb_shm_close(&b); /* idempotent */
    gb_shm_close(&a);

    assert_rc(gb_shm_create(0, 0, &a, err, sizeof err), GB_EINVAL);
}

static void test_map_checks_size(void **state)
{
    (void)state;
    gb_shm a, b;
    assert_rc(gb_shm_create(gb_page_size(), 0, &a, NULL, 0), 0);
    /* larger than the object: touching the tail would SIGBUS, so refuse */
    assert_rc(gb_shm_map(a.fd, 2 * gb_page_size(), &b), GB_EINVAL);
    assert_contains(gb_plat_last_error(), "SIGBUS");
    assert_rc(gb_shm_map(-1, 0, &b), GB_EINVAL);
    gb_shm_close(&a);
}

/* Linux: the memfd is sealed so a client holding it can neither shrink nor
 * grow it, nor lift the seals; elsewhere nothing claims to be sealed. */
static void test_memfd_sealed(void **state)
{
    (void)state;
    gb_shm a;
    assert_rc(gb_shm_create(2 * gb_page_size(), 0, &a, NULL, 0), 0);
    if (!tu_has(GB_CAP_MEMFD)) {
        assert_false(a.sealed);
        gb_shm_close(&a);
        skip_because("the %s platform layer has no memfd to seal (its slots rely on the SIGBUS guard)",
                     gb_platform_name());
    }
    assert_true(a.sealed);
    assert_int_equal(ftruncate(a.fd, (off_t)gb_page_size()), -1);
    assert_int_equal(errno, EPERM);
    assert_int_equal(ftruncate(a.fd, (off_t)(4 * gb_page_size())), -1);
    assert_int_equal(errno, EPERM);
    struct stat st;
    assert_int_equal(fstat(a.fd, &st), 0);
    assert_int_equal((size_t)st.st_size, 2 * gb_page_size());
    gb_shm_close(&a);
}

/* Linux: a memfd whose seals cannot be applied (here: created without
 * MFD_ALLOW_SEALING, as a kernel without sealing would) is refused, not
 * handed out unsealed. */
static int fake_memfd_unsealable(const char *name, unsigned flags)
{
    return real_memfd_create(name, flags & ~0x2u); /* 0x2: MFD_ALLOW_SEALING */
}

static void test_memfd_seal_failure_refused(void **state)
{
    (void)state;
    if (!tu_has(GB_CAP_MEMFD))
        skip_because("the %s platform layer has no memfd", gb_platform_name());
    real_memfd_create = (gb_sys_memfd_create_fn)gb_syscalls_get("memfd_create");
    int before = tu_open_fds();
    GB_SYSCALL_OVERRIDE(memfd_create, fake_memfd_unsealable);
    gb_shm a;
    char err[256] = "";
    assert_rc(gb_shm_create(2 * gb_page_size(), 0, &a, err, sizeof err), GB_ENOTSUP);
    assert_contains(err, "seal");
    assert_int_equal(a.fd, -1);
    assert_null(a.addr);
    assert_int_equal(tu_open_fds(), before); /* the unsealed object was closed */
}

/* The shm_open path (darwin/posix; Linux's fallback when memfd_create is
 * missing): the name is unlinked before gb_shm_create returns. */
static int fake_memfd_enosys(const char *name, unsigned flags)
{
    (void)name, (void)flags;
    errno = ENOSYS;
    return -1;
}

static int count_our_shm_names(void)
{
    DIR *d = opendir("/dev/shm");
    if (!d)
        return -1;
    char prefix[32];
    snprintf(prefix, sizeof prefix, "gb-%x-", (unsigned)getpid());
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

static void test_shm_open_path(void **state)
{
    (void)state;
    if (tu_has(GB_CAP_MEMFD))
        GB_SYSCALL_OVERRIDE(memfd_create, fake_memfd_enosys); /* kernel < 3.17 */
    gb_shm a[8];
    for (int i = 0; i < 8; i++) {
        assert_rc(gb_shm_create(gb_page_size(), 0, &a[i], NULL, 0), 0);
        memset(a[i].addr, i, gb_page_size());
    }
    for (int i = 0; i < 8; i++)
        assert_int_equal(((unsigned char *)a[i].addr)[7], i); /* eight distinct objects */
    int names = count_our_shm_names();
    if (names >= 0)
        assert_int_equal(names, 0); /* nothing left in /dev/shm */
    for (int i = 0; i < 8; i++)
        gb_shm_close(&a[i]);
}

static void *fake_mmap_enomem(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
    (void)addr, (void)len, (void)prot, (void)flags, (void)fd, (void)offset;
    errno = ENOMEM;
    return MAP_FAILED;
}

static int fake_ftruncate_enospc(int fd, off_t len)
{
    (void)fd, (void)len;
    errno = ENOSPC;
    return -1;
}

static void test_injected_create_failures(void **state)
{
    (void)state;
    int before = tu_open_fds();
    gb_shm a;
    char err[256] = "";
    GB_SYSCALL_OVERRIDE(mmap, fake_mmap_enomem);
    assert_rc(gb_shm_create(gb_page_size(), 0, &a, err, sizeof err), GB_ENOMEM);
    assert_contains(err, "mmap");
    gb_syscalls_reset();
    GB_SYSCALL_OVERRIDE(ftruncate, fake_ftruncate_enospc); /* /dev/shm full */
    assert_rc(gb_shm_create(gb_page_size(), 0, &a, err, sizeof err), GB_ENOMEM);
    assert_contains(err, "ftruncate");
    assert_int_equal(tu_open_fds(), before); /* no descriptor leaked on failure */
}

/* The evidence for "an empty pool is an error, not a crash". */
static void test_hugepages_empty_pool(void **state)
{
    (void)state;
    gb_shm a;
    char err[512] = "";
    if (!tu_has(GB_CAP_HUGEPAGES)) {
        assert_rc(gb_shm_create(2u << 20, GB_SHM_HUGEPAGES, &a, err, sizeof err), GB_ENOTSUP);
        return;
    }
    long free_pages = tu_meminfo("HugePages_Free");
    size_t huge = gb_huge_page_size();
    if (free_pages < 0 || huge == 0) {
        assert_rc(gb_shm_create(2u << 20, GB_SHM_HUGEPAGES, &a, err, sizeof err), GB_ENOTSUP);
        return;
    }
    if (tu_emulator())
        skip_because("%s does not emulate MAP_HUGETLB mappings (its mmap answers EINVAL)", tu_emulator());
    /* ask for more than the pool has: with nr_hugepages=0 (as here), 1 page */
    size_t want = ((size_t)free_pages + 1) * huge;
    int before = tu_open_fds();
    int rc = gb_shm_create(want, GB_SHM_HUGEPAGES, &a, err, sizeof err);
    print_message("huge-page pool (%ld free): %s\n", free_pages, err);
    assert_rc(rc, GB_ENOMEM);
    assert_contains(err, "nr_hugepages");
    assert_int_equal(tu_open_fds(), before);
    /* ...and we are still here to say so */
}

/* ---- prefault: injected madvise results and a real SIGBUS --------------- */

static int madvise_calls;
static int madvise_errno;

static int fake_madvise(void *addr, size_t len, int advice)
{
    (void)addr, (void)len, (void)advice;
    madvise_calls++;
    errno = madvise_errno;
    return -1;
}

static void test_prefault_injected_madvise(void **state)
{
    (void)state;
    if (!tu_has(GB_CAP_POPULATE))
        skip_because("the %s platform layer has no MADV_POPULATE_WRITE (it always touches; see the SIGBUS test)",
                     gb_platform_name());
    gb_shm a;
    assert_rc(gb_shm_create(16 * gb_page_size(), 0, &a, NULL, 0), 0);
    GB_SYSCALL_OVERRIDE(madvise, fake_madvise);

    /* EINVAL = kernel older than 5.14: fall back to the guarded touch */
    madvise_errno = EINVAL;
    madvise_calls = 0;
    assert_rc(gb_shm_prefault(a.addr, a.size), 0);
    assert_int_equal(madvise_calls, 1);

    madvise_errno = ENOMEM;
    assert_rc(gb_shm_prefault(a.addr, a.size), GB_ENOMEM);
    assert_contains(gb_plat_last_error(), "out of memory");

    madvise_errno = EFAULT; /* what populate says where a fault would SIGBUS */
    assert_rc(gb_shm_prefault(a.addr, a.size), GB_ENOMEM);
    assert_contains(gb_plat_last_error(), "could not supply");

    madvise_errno = EPERM;
    assert_rc(gb_shm_prefault(a.addr, a.size), GB_EPERM);
    gb_syscalls_reset();
    gb_shm_close(&a);
}

static volatile sig_atomic_t marker_hits;

static void marker_handler(int sig)
{
    (void)sig;
    marker_hits++;
}

/* Does touching past the end of a mapped file raise SIGBUS here? Asked in
 * a child, so a different answer (SIGSEGV, zero fill) cannot crash the test. */
static bool beyond_eof_is_sigbus(unsigned char *p, size_t ps)
{
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGBUS, SIG_DFL);
        p[ps] = 1;
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS;
}

/* The same question for a fresh one-page file mapped two pages long. */
static bool beyond_eof_is_sigbus_here(void)
{
    size_t ps = gb_page_size();
    int fd = temp_file(1);
    if (fd < 0)
        return false;
    unsigned char *p = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    bool yes = p != MAP_FAILED && beyond_eof_is_sigbus(p, ps);
    if (p != MAP_FAILED)
        munmap(p, 2 * ps);
    close(fd);
    return yes;
}

/* A mapping two pages longer than its file: touching the tail is a real
 * SIGBUS, as an empty hugetlb pool would give. */
static void test_prefault_real_sigbus(void **state)
{
    (void)state;
    size_t ps = gb_page_size();
    char path[] = "/tmp/gb-sigbus-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    assert_int_equal(ftruncate(fd, (off_t)ps), 0);
    unsigned char *p = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    assert_true(p != MAP_FAILED);
    p[0] = 9;
    if (!beyond_eof_is_sigbus(p, ps)) {
        munmap(p, 3 * ps);
        close(fd);
        skip_because("this OS does not raise SIGBUS past the end of a mapped file");
    }

    /* our own SIGBUS handler must be back in place afterwards */
    struct sigaction mine, old, after;
    memset(&mine, 0, sizeof mine);
    mine.sa_handler = marker_handler;
    sigemptyset(&mine.sa_mask);
    assert_int_equal(sigaction(SIGBUS, &mine, &old), 0);

    if (tu_has(GB_CAP_POPULATE)) {
        /* the real MADV_POPULATE_WRITE reports it as an error (qemu-user
         * answers 0 without populating anything: not checked there)... */
        if (tu_emulator())
            print_message("not checked under %s: MADV_POPULATE_WRITE past the end of the file\n", tu_emulator());
        else
            assert_rc(gb_shm_prefault(p, 3 * ps), GB_ENOMEM);
        /* ...and the fallback for old kernels catches the real SIGBUS */
        madvise_errno = EINVAL;
        GB_SYSCALL_OVERRIDE(madvise, fake_madvise);
    }
    assert_rc(gb_shm_prefault(p, 3 * ps), GB_ENOMEM);
    assert_contains(gb_plat_last_error(), "SIGBUS");
    char where[64];
    snprintf(where, sizeof where, "at byte %zu", ps); /* the first page past the end */
    assert_contains(gb_plat_last_error(), where);
    assert_int_equal(p[0], 9); /* contents untouched */

    assert_int_equal(sigaction(SIGBUS, NULL, &after), 0);
    assert_true(after.sa_handler == marker_handler);
    assert_int_equal(marker_hits, 0);
    /* the guard can be used again (the signal mask was restored) */
    assert_rc(gb_shm_prefault(p, 3 * ps), GB_ENOMEM);
    assert_rc(gb_shm_prefault(p, ps), 0);

    sigaction(SIGBUS, &old, NULL);
    gb_syscalls_reset();
    munmap(p, 3 * ps);
    close(fd);
}

/* ---- the SIGBUS guard for memory a peer can truncate --------------------- */

#define GUARD_CHECK(cond)                                                                  \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            dprintf(out, "FAILED line %d: %s (%s)\n", __LINE__, #cond, gb_plat_last_error()); \
            _exit(1);                                                                      \
        }                                                                                  \
    } while (0)

/* Runs in a child (the guard's handler is process-wide and permanent, and
 * the last step dies of SIGBUS on purpose). Reports each stage on `out`. */
static void guard_child(int out)
{
    size_t ps = gb_page_size();
    signal(SIGBUS, SIG_DFL); /* the disposition the guard falls back to */
    int fa = temp_file(2), fb = temp_file(2), fc = temp_file(2);
    GUARD_CHECK(fa >= 0 && fb >= 0 && fc >= 0);
    gb_shm a, b;
    GUARD_CHECK(gb_shm_map(dup(fa), 0, &a) == 0 && gb_shm_map(dup(fb), 0, &b) == 0);
    GUARD_CHECK(a.guard == 0 && !gb_shm_faulted(&a));
    GUARD_CHECK(gb_shm_guard(&a) == 0 && gb_shm_guard(&b) == 0);
    GUARD_CHECK(gb_shm_guard(&a) == 0); /* idempotent */
    unsigned char *pa = a.addr, *pb = b.addr;
    pa[0] = 7;
    pb[ps] = 42;
    unsigned long f0 = gb_shm_guard_faults();

    /* The peer truncates a's object: our next access would be SIGBUS. */
    GUARD_CHECK(ftruncate(fa, 0) == 0);
    GUARD_CHECK(((volatile unsigned char *)pa)[ps] == 0); /* faulted, replaced, retried */
    GUARD_CHECK(gb_shm_faulted(&a));
    GUARD_CHECK(gb_shm_guard_faults() == f0 + 1);
    GUARD_CHECK(((volatile unsigned char *)pa)[0] == 0); /* the whole mapping is zero pages now */
    pa[0] = 5;
    GUARD_CHECK(((volatile unsigned char *)pa)[0] == 5); /* and writable */
    GUARD_CHECK(gb_shm_guard_faults() == f0 + 1);
    /* Only a: b is neither faulted nor changed. */
    GUARD_CHECK(!gb_shm_faulted(&b) && pb[ps] == 42);
    gb_shm_close(&a);
    GUARD_CHECK(a.guard == 0 && a.addr == NULL);
    dprintf(out, "guarded ok\n");

    /* The table holds GB_SHM_GUARD_MAX entries (b has one); a freed entry
     * is reused. The ranges are never touched, only registered. */
    gb_shm *fake = calloc(GB_SHM_GUARD_MAX, sizeof *fake);
    GUARD_CHECK(fake != NULL);
    int ok = 0;
    for (int i = 0; i < GB_SHM_GUARD_MAX; i++) {
        fake[i] = (gb_shm){.fd = -1, .addr = (void *)((uintptr_t)0x100000u * (uintptr_t)(i + 1)), .size = ps};
        int rc = gb_shm_guard(&fake[i]);
        GUARD_CHECK(rc == 0 || (rc == GB_EBUSY && i == GB_SHM_GUARD_MAX - 1));
        ok += rc == 0;
    }
    GUARD_CHECK(ok == GB_SHM_GUARD_MAX - 1);
    gb_shm_unguard(&fake[3]);
    GUARD_CHECK(gb_shm_guard(&fake[GB_SHM_GUARD_MAX - 1]) == 0);
    for (int i = 0; i < GB_SHM_GUARD_MAX; i++)
        gb_shm_unguard(&fake[i]);
    free(fake);
    GUARD_CHECK(gb_shm_guard(&(gb_shm){.fd = -1}) == GB_EINVAL);
    dprintf(out, "table ok\n");

    /* Unguarded (b, after unguard; c never): a SIGBUS is fatal as before. */
    gb_shm_unguard(&b);
    GUARD_CHECK(b.guard == 0);
    unsigned char *pc = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, fc, 0);
    GUARD_CHECK(pc != MAP_FAILED);
    GUARD_CHECK(ftruncate(fc, 0) == 0);
    dprintf(out, "dying\n");
    ((volatile unsigned char *)pc)[ps] = 1;
    dprintf(out, "survived an unguarded SIGBUS\n");
    _exit(2);
}

static void test_guard_turns_sigbus_into_a_flag(void **state)
{
    (void)state;
    if (!beyond_eof_is_sigbus_here())
        skip_because("this OS does not raise SIGBUS past the end of a mapped file");
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        guard_child(p[1]);
    }
    close(p[1]);
    char buf[1024];
    size_t got = 0;
    ssize_t n;
    while (got < sizeof buf - 1 && (n = read(p[0], buf + got, sizeof buf - 1 - got)) > 0)
        got += (size_t)n;
    buf[got] = '\0';
    close(p[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    print_message("guard child: %s", buf);
    assert_string_equal(buf, "guarded ok\ntable ok\ndying\n");
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGBUS);
}

/* ---- descriptor passing ------------------------------------------------- */

static void test_pass_fd_between_processes(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    gb_shm shm;
    assert_rc(gb_shm_create(5 * gb_page_size(), 0, &shm, NULL, 0), 0);
    for (size_t i = 0; i < shm.size; i++)
        ((unsigned char *)shm.addr)[i] = (unsigned char)(i * 7);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        gb_shm_close(&shm); /* the child must rely on the received descriptor */
        int fds[2], nfds = -1;
        char msg[64];
        size_t got = 0;
        if (gb_shm_recv_fds(sv[1], fds, &nfds, 2, msg, sizeof msg, &got) != 0)
            _exit(10);
        if (nfds != 1 || got != 6 || memcmp(msg, "ring:5", 6) != 0)
            _exit(11);
        if (!(fcntl(fds[0], F_GETFD) & FD_CLOEXEC))
            _exit(12);
        gb_shm m;
        if (gb_shm_map(fds[0], 0, &m) != 0 || m.size != 5 * gb_page_size())
            _exit(13);
        for (size_t i = 0; i < m.size; i++)
            if (((unsigned char *)m.addr)[i] != (unsigned char)(i * 7))
                _exit(14);
        memcpy(m.addr, "child was here", 15);
        gb_shm_close(&m);
        if (gb_shm_send_fds(sv[1], NULL, 0, "ok", 2) != 0)
            _exit(15);
        _exit(0);
    }
    close(sv[1]);
    assert_rc(gb_shm_send_fds(sv[0], &shm.fd, 1, "ring:5", 6), 0);
    char ack[8];
    int nfds = -1;
    size_t got = 0;
    assert_rc(gb_shm_recv_fds(sv[0], NULL, &nfds, 0, ack, sizeof ack, &got), 0);
    assert_int_equal(got, 2);
    assert_int_equal(nfds, 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("child failed with status %d", status);
    assert_string_equal((char *)shm.addr, "child was here");
    /* the child exited: end of stream */
    assert_rc(gb_shm_recv_fds(sv[0], NULL, &nfds, 0, ack, sizeof ack, &got), GB_ECLOSED);
    close(sv[0]);
    gb_shm_close(&shm);
}

static void test_unexpected_fds_are_closed(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int before = tu_open_fds();
    int three[3] = {sv[0], sv[1], 0};
    assert_rc(gb_shm_send_fds(sv[0], three, 3, "x", 1), 0);
    int fds[1], nfds = -1;
    char buf[4];
    size_t got;
    /* three arrive where one was expected: a protocol error, none kept */
    assert_rc(gb_shm_recv_fds(sv[1], fds, &nfds, 1, buf, sizeof buf, &got), GB_EPROTO);
    assert_contains(gb_plat_last_error(), "3 descriptor");
    assert_int_equal(nfds, 0);
    assert_int_equal(tu_open_fds(), before);

    /* and where none is expected at all */
    assert_rc(gb_shm_send_fds(sv[0], three, 1, "y", 1), 0);
    assert_rc(gb_shm_recv_fds(sv[1], NULL, &nfds, 0, buf, sizeof buf, &got), GB_EPROTO);
    assert_int_equal(tu_open_fds(), before);

    /* argument checks */
    assert_rc(gb_shm_send_fds(sv[0], NULL, 0, "z", 0), GB_EINVAL);
    assert_rc(gb_shm_send_fds(sv[0], three, GB_SHM_MAX_FDS + 1, "z", 1), GB_EINVAL);
    close(sv[0]);
    close(sv[1]);
}

static void test_send_to_closed_peer(void **state)
{
    (void)state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    struct sigaction dfl, old;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL; /* the default action would kill us */
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGPIPE, &dfl, &old);
    close(sv[1]);
    /* GB_ECLOSED, and no SIGPIPE kills the test */
    assert_rc(gb_shm_send_fds(sv[0], NULL, 0, "x", 1), GB_ECLOSED);
    sigaction(SIGPIPE, &old, NULL);
    close(sv[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_page_size),
        cmocka_unit_test(test_create_map_share),
        cmocka_unit_test(test_map_checks_size),
        cmocka_unit_test(test_memfd_sealed),
        cmocka_unit_test_teardown(test_memfd_seal_failure_refused, reset_table),
        cmocka_unit_test_teardown(test_shm_open_path, reset_table),
        cmocka_unit_test_teardown(test_injected_create_failures, reset_table),
        cmocka_unit_test(test_hugepages_empty_pool),
        cmocka_unit_test_teardown(test_prefault_injected_madvise, reset_table),
        cmocka_unit_test_teardown(test_prefault_real_sigbus, reset_table),
        cmocka_unit_test(test_pass_fd_between_processes),
        cmocka_unit_test(test_unexpected_fds_are_closed),
        cmocka_unit_test(test_send_to_closed_peer),
        cmocka_unit_test(test_guard_turns_sigbus_into_a_flag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
