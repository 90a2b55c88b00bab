/* platform/park.h: timeouts and argument checks, a thread wake, and the
 * cross-process stress: two processes hand a turn back and forth (up to a
 * million times, for at most STRESS_S seconds) through a word in shared
 * memory, spinning a random while before parking, so wakes race with every
 * stage of going to sleep. A lost wake-up shows as a park that times out
 * although the turn had already come; a deadlock trips the watchdog, which
 * fails the test instead of hanging it. */
#include "tutil.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>

#include "clock.h"
#include "cpu.h"
#include "park.h"
#include "shm.h"

/* The stress ends after HANDOFFS_MAX handoffs or STRESS_S seconds, whichever
 * comes first: an idle machine does the million in about 5 s with kernel
 * parking; a loaded one (both cores busy, ThreadSanitizer, qemu-user) does
 * fewer, and a slow machine is not a wrong result. At least MIN_HANDOFFS
 * happen whatever the clock says, so the protocol is always exercised. */
#define HANDOFFS_MAX 1000000u
#define MIN_HANDOFFS 2000u
#define STRESS_S 5
/* Only a deadlock runs this long: the stress stops itself after STRESS_S,
 * and MIN_HANDOFFS take well under a second even on a loaded machine. */
#define WATCHDOG_S 300
/* A side parked with kernel parking that sees no change for this long
 * although the turn is already its own has lost a wake-up (the wake follows
 * the store at once; ten seconds of delay is not scheduling noise). */
#define PARK_TIMEOUT_NS (10ull * 1000000000ull)

typedef struct {
    _Atomic uint32_t turn; /* 0: parent's turn, 1: child's */
    uint8_t pad1[GB_CACHE_ISOLATION - sizeof(uint32_t)];
    _Atomic uint32_t stop;        /* set by side 0 when it is done; side 1 then hands back and ends */
    _Atomic uint64_t done[2];     /* handoffs completed by each side */
    _Atomic uint64_t parks[2];    /* times each side really parked */
    _Atomic uint64_t lost[2];     /* lost wake-ups seen by each side */
    _Atomic uint64_t stalls[2];   /* timeouts with the peer just slow */
} arena;

_Static_assert(offsetof(arena, stop) == GB_CACHE_ISOLATION, "turn sits alone in its isolation unit");

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    assert_int_equal(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts), 0);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A 30 ms timed park times out after at least 30 ms and, with a kernel
 * park, burns next to no CPU meanwhile. How late it returns is up to the
 * scheduler, so the bound is on the best of a few tries: a loaded machine
 * delays some wake-ups, a stretched or ignored timeout (100 ms) every one. */
static void timed_park(_Atomic uint32_t *w)
{
    const uint64_t ms = 1000000ull, timeout = 30 * ms;
    uint64_t best = UINT64_MAX, best_cpu = UINT64_MAX;
    for (int i = 0; i < 5 && best >= timeout + 20 * ms; i++) {
        uint64_t t0 = gb_clock_mono_ns(), c0 = thread_cpu_ns();
        assert_rc(gb_park_wait(w, 5, timeout), GB_ETIMEDOUT);
        uint64_t waited = gb_clock_mono_ns() - t0, cpu = thread_cpu_ns() - c0;
        assert_true(waited >= timeout);
        best = waited < best ? waited : best;
        best_cpu = cpu < best_cpu ? cpu : best_cpu;
    }
    if (best >= timeout + 20 * ms)
        fail_msg("a 30 ms park returned after %.1f ms at best of 5", (double)best / (double)ms);
    if (tu_expected_has(GB_CAP_PARK_KERNEL) && best_cpu >= 5 * ms)
        fail_msg("a 30 ms kernel park burnt %.1f ms of CPU", (double)best_cpu / (double)ms);
}

static void test_timeouts_and_args(void **state)
{
    (void)state;
    gb_shm shm;
    assert_rc(gb_shm_create(gb_page_size(), 0, &shm, NULL, 0), 0);
    _Atomic uint32_t *w = shm.addr;
    atomic_store(w, 5);
    assert_rc(gb_park_wait(w, 4, GB_PARK_FOREVER), 0); /* value differs: at once */
    assert_rc(gb_park_wait(w, 5, 0), GB_ETIMEDOUT);      /* 0: check only */
    timed_park(w);
    assert_true(gb_park_wake(w, 1) >= 0); /* nobody waiting: fine */
    assert_true(gb_park_wake(w, GB_PARK_WAKE_ALL) >= 0);
    assert_rc(gb_park_wake(w, 0), GB_EINVAL);
    _Atomic uint32_t *odd = (_Atomic uint32_t *)((char *)shm.addr + 2);
    assert_rc(gb_park_wait(odd, 0, 1000), GB_EINVAL);
    assert_rc(gb_park_wake(odd, 1), GB_EINVAL);
    gb_shm_close(&shm);
}

static void *waiter(void *arg)
{
    _Atomic uint32_t *w = arg;
    int rc = 0;
    while (atomic_load_explicit(w, memory_order_acquire) == 0 && rc == 0)
        rc = gb_park_wait(w, 0, GB_PARK_FOREVER);
    return (void *)(intptr_t)rc;
}

static void test_wake_thread(void **state)
{
    (void)state;
    gb_shm shm;
    assert_rc(gb_shm_create(gb_page_size(), 0, &shm, NULL, 0), 0);
    _Atomic uint32_t *w = shm.addr;
    atomic_store(w, 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, waiter, (void *)w), 0);
    struct timespec nap = {0, 20 * 1000000};
    nanosleep(&nap, NULL); /* let it park */
    atomic_store_explicit(w, 1, memory_order_release);
    assert_true(gb_park_wake(w, GB_PARK_WAKE_ALL) >= 0);
    void *ret;
    assert_int_equal(pthread_join(t, &ret), 0);
    assert_int_equal((intptr_t)ret, 0);
    gb_shm_close(&shm);
}

/* ---- the stress --------------------------------------------------------- */

static pid_t watchdog_child;

static void watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "park/wake stress: watchdog expired - deadlock or lost wake-up\n";
    ssize_t n = write(2, msg, sizeof msg - 1);
    (void)n;
    if (watchdog_child > 0)
        kill(watchdog_child, SIGKILL);
    _exit(3);
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Waits until the turn is `me`: a random spin, then parks. Timeouts are
 * counted: with the turn already ours, a lost wake-up (kernel parking only:
 * a poller can time out in the instant the turn arrives, which is a race of
 * its clock, not a lost wake-up); else the peer is just slow. */
static void await_turn(arena *a, uint32_t me, uint64_t r)
{
    uint32_t other = 1 - me;
    /* mostly short spins (the peer is usually still busy), sometimes
     * long ones (the handoff lands mid-spin), sometimes none */
    uint64_t spins = (r & 3) == 0 ? 0 : (r & 3) == 1 ? (r >> 8) % 2048 : (r >> 8) % 64;
    for (uint64_t s = 0; s < spins && atomic_load_explicit(&a->turn, memory_order_acquire) != me; s++)
        gb_cpu_relax();
    while (atomic_load_explicit(&a->turn, memory_order_acquire) != me) {
        atomic_fetch_add_explicit(&a->parks[me], 1, memory_order_relaxed);
        int rc = gb_park_wait(&a->turn, other, PARK_TIMEOUT_NS);
        if (rc == GB_ETIMEDOUT) {
            bool mine = atomic_load_explicit(&a->turn, memory_order_acquire) == me;
            atomic_fetch_add_explicit(mine && tu_expected_has(GB_CAP_PARK_KERNEL) ? &a->lost[me] : &a->stalls[me],
                                      1, memory_order_relaxed);
        } else if (rc != 0) {
            fprintf(stderr, "side %u: park failed: %s (%s)\n", me, gb_error_name(rc), gb_plat_last_error());
            _exit(4);
        }
    }
}

static void hand_over(arena *a, uint32_t me)
{
    /* release: the peer's acquire load of `turn` sees done[] and stop too */
    atomic_store_explicit(&a->turn, 1 - me, memory_order_release);
    if (gb_park_wake(&a->turn, 1) < 0)
        _exit(5);
}

/* Whether side 0 should stop after `done` handoffs: the cap, or the time
 * budget once the minimum is done. */
static bool enough(uint64_t done, uint64_t deadline_ns)
{
    return done >= HANDOFFS_MAX / 2 || (done >= MIN_HANDOFFS / 2 && gb_clock_mono_ns() >= deadline_ns);
}

/* One side: wait for my turn, count, hand the turn over, wake the peer.
 * Side 0 decides when to stop (sets `stop` on its turn and hands over one
 * last time); side 1 sees it on its next turn, hands back and ends, so the
 * turn ends with side 0 and both sides did the same number of handoffs. */
static void play(arena *a, uint32_t me, uint64_t seed, uint64_t deadline_ns)
{
    uint64_t rng = seed;
    for (;;) {
        uint64_t r = xorshift(&rng);
        await_turn(a, me, r);
        if (me == 0 && enough(atomic_load_explicit(&a->done[0], memory_order_relaxed), deadline_ns))
            atomic_store_explicit(&a->stop, 1, memory_order_relaxed);
        if (atomic_load_explicit(&a->stop, memory_order_relaxed)) {
            hand_over(a, me);
            return;
        }
        atomic_fetch_add_explicit(&a->done[me], 1, memory_order_relaxed);
        /* sometimes hold the turn a while, so the peer runs out of spin and
         * parks, and our wake races with its going to sleep */
        if (((r >> 40) & 15) == 0)
            for (uint64_t s = (r >> 44) % 512; s; s--)
                gb_cpu_relax();
        hand_over(a, me);
    }
}

static void test_cross_process_stress(void **state)
{
    (void)state;
    gb_shm shm;
    assert_rc(gb_shm_create(sizeof(arena), 0, &shm, NULL, 0), 0);
    assert_rc(gb_shm_prefault(shm.addr, shm.size), 0);
    arena *a = shm.addr;
    memset(a, 0, sizeof *a);

    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = watchdog;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, &old);
    watchdog_child = 0;
    uint64_t t0 = gb_clock_mono_ns();
    uint64_t deadline = t0 + STRESS_S * 1000000000ull;

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(WATCHDOG_S + 5); /* the parent's watchdog normally fires first */
        play(a, 1, 0x9e3779b97f4a7c15ull, deadline);
        _exit(0);
    }
    watchdog_child = pid;
    alarm(WATCHDOG_S);
    play(a, 0, 0xd1b54a32d192ed03ull, deadline);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    alarm(0);
    sigaction(SIGALRM, &old, NULL);
    double secs = (double)(gb_clock_mono_ns() - t0) / 1e9;
    uint64_t handoffs = a->done[0] + a->done[1];

    print_message("%llu handoffs in %.2f s (%.2f us each); parked %llu + %llu times; stalls %llu + %llu\n",
                  (unsigned long long)handoffs, secs, secs * 1e6 / (double)handoffs,
                  (unsigned long long)a->parks[0], (unsigned long long)a->parks[1],
                  (unsigned long long)a->stalls[0], (unsigned long long)a->stalls[1]);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("child side failed, status %d", status);
    assert_true(handoffs >= MIN_HANDOFFS);
    assert_int_equal(a->done[0], a->done[1]); /* strict alternation */
    assert_int_equal(a->lost[0], 0);
    assert_int_equal(a->lost[1], 0);
    assert_true(a->parks[0] + a->parks[1] > 0); /* the park path was exercised */
    assert_int_equal(atomic_load(&a->turn), 0);  /* side 1 handed the last turn back */
    gb_shm_close(&shm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timeouts_and_args),
        cmocka_unit_test(test_wake_thread),
        cmocka_unit_test(test_cross_process_stress),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
