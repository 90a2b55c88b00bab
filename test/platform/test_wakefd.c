/* platform/wakefd.h: signal/drain, coalescing, poll readiness, a signal from
 * a signal handler and from another process, and a vanished reader. */
#include "tutil.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "wakefd.h"

static bool readable(int fd, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

static void test_signal_drain_coalesce(void **state)
{
    (void)state;
    gb_wakefd w;
    assert_rc(gb_wakefd_open(&w), 0);
    assert_true(fcntl(w.read_fd, F_GETFD) & FD_CLOEXEC);
    assert_true(fcntl(w.read_fd, F_GETFL) & O_NONBLOCK);
    assert_true(fcntl(w.write_fd, F_GETFL) & O_NONBLOCK);
    assert_false(readable(w.read_fd, 0));
    assert_rc(gb_wakefd_drain(w.read_fd), 0); /* nothing pending, no blocking */
    for (int i = 0; i < 3; i++)
        assert_rc(gb_wakefd_signal(w.write_fd), 0);
    assert_true(readable(w.read_fd, 0));
    assert_rc(gb_wakefd_drain(w.read_fd), 1); /* three signals, one wake-up */
    assert_rc(gb_wakefd_drain(w.read_fd), 0);
    assert_false(readable(w.read_fd, 0));
    gb_wakefd_close(&w);
    assert_int_equal(w.read_fd, -1);
    assert_int_equal(w.write_fd, -1);
    gb_wakefd_close(&w); /* idempotent */
}

static void test_signal_never_blocks(void **state)
{
    (void)state;
    gb_wakefd w;
    assert_rc(gb_wakefd_open(&w), 0);
    /* far more than a pipe or socket buffer holds: must neither block nor fail */
    for (int i = 0; i < 200000; i++)
        assert_rc(gb_wakefd_signal(w.write_fd), 0);
    assert_rc(gb_wakefd_drain(w.read_fd), 1);
    assert_rc(gb_wakefd_drain(w.read_fd), 0);
    gb_wakefd_close(&w);
}

static void test_errno_preserved(void **state)
{
    (void)state;
    gb_wakefd w;
    assert_rc(gb_wakefd_open(&w), 0);
    errno = EDOM;
    assert_rc(gb_wakefd_signal(w.write_fd), 0);
    assert_int_equal(errno, EDOM);
    errno = EDOM;
    assert_rc(gb_wakefd_signal(-1), GB_EINVAL); /* a failing write, too */
    assert_int_equal(errno, EDOM);
    gb_wakefd_close(&w);
}

static int handler_fd = -1;
static volatile sig_atomic_t handler_rc = 99;

static void on_usr1(int sig)
{
    (void)sig;
    handler_rc = gb_wakefd_signal(handler_fd);
}

static void test_signal_from_handler(void **state)
{
    (void)state;
    gb_wakefd w;
    assert_rc(gb_wakefd_open(&w), 0);
    handler_fd = w.write_fd;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, &old);
    raise(SIGUSR1);
    sigaction(SIGUSR1, &old, NULL);
    assert_int_equal(handler_rc, 0);
    assert_true(readable(w.read_fd, 1000));
    assert_rc(gb_wakefd_drain(w.read_fd), 1);
    gb_wakefd_close(&w);
}

static void test_signal_from_other_process(void **state)
{
    (void)state;
    gb_wakefd w;
    assert_rc(gb_wakefd_open(&w), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct timespec nap = {0, 30 * 1000000};
        nanosleep(&nap, NULL);
        _exit(gb_wakefd_signal(w.write_fd) == 0 ? 0 : 1);
    }
    assert_true(readable(w.read_fd, 5000)); /* woken by the child */
    assert_rc(gb_wakefd_drain(w.read_fd), 1);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    gb_wakefd_close(&w);
}

/* pipe/socket variants: the reader exits, the signaller (a client) must get
 * an error, not a SIGPIPE that kills it. */
static void test_reader_gone(void **state)
{
    (void)state;
    gb_wakefd w;
    assert_rc(gb_wakefd_open(&w), 0);
    if (w.read_fd == w.write_fd) { /* eventfd: one object, no reader to lose */
        gb_wakefd_close(&w);
        skip_because("eventfd: one descriptor, no separate reader to lose");
    }
    struct sigaction dfl, old;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL; /* the default would kill us */
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGPIPE, &dfl, &old);
    close(w.read_fd);
    assert_rc(gb_wakefd_signal(w.write_fd), GB_ECLOSED);
    sigaction(SIGPIPE, &old, NULL);
    close(w.write_fd);
}

/* A writer in another process that never stops (a hostile ring client
 * with the write end, in large writes where the medium takes them) must not
 * hold the reader in gb_wakefd_drain: every drain returns, and the
 * descriptor stays readable while the writer goes on. SIGALRM fails the
 * test if a drain never returns. */
static void test_drain_bounded_against_endless_writer(void **state)
{
    (void)state;
    gb_wakefd w;
    assert_rc(gb_wakefd_open(&w), 0);
    pid_t parent = getpid();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        static char block[65536];
        uint64_t one = 1;
        memset(block, 1, sizeof block);
        /* Until killed; also ends if the test process is gone (a failed
         * assertion does not reach the kill below) or after a minute. */
        time_t end = time(NULL) + 60;
        for (unsigned long n = 0;; n++) {
            if ((n & 1023) == 0 && (getppid() != parent || time(NULL) > end))
                _exit(0);
            /* eventfd takes 8-byte counter writes only; pipes and sockets
             * take the whole block */
            if (w.read_fd == w.write_fd) {
                if (write(w.write_fd, &one, sizeof one) < 0) {
                }
            } else if (write(w.write_fd, block, sizeof block) < 0) {
            }
        }
    }
    assert_true(readable(w.read_fd, 10000)); /* the writer has started */
    alarm(60);
    int got = 0;
    for (int i = 0; i < 200; i++) {
        int rc = gb_wakefd_drain(w.read_fd);
        assert_true(rc == 0 || rc == 1);
        got += rc;
    }
    alarm(0);
    assert_true(got > 0);           /* the writer's signals were seen */
    assert_true(readable(w.read_fd, 5000)); /* and it is still writing */
    kill(pid, SIGKILL);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    gb_wakefd_close(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signal_drain_coalesce),
        cmocka_unit_test(test_signal_never_blocks),
        cmocka_unit_test(test_errno_preserved),
        cmocka_unit_test(test_signal_from_handler),
        cmocka_unit_test(test_signal_from_other_process),
        cmocka_unit_test(test_reader_gone),
        cmocka_unit_test(test_drain_bounded_against_endless_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
