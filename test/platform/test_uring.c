/* platform/uring.h: a multishot receive drawing from the provided buffers,
 * a send, cancellation by descriptor, and the refusal (with a reason) where
 * the build or the kernel has no io_uring. */
#include "tutil.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "uring.h"

typedef struct seen {
    gb_uring_event ev[16];
    char data[16][32];
    int n;
} seen;

static void record(void *ctx, const gb_uring_event *ev)
{
    seen *s = ctx;
    if (s->n == 16)
        return;
    s->ev[s->n] = *ev;
    if (ev->data && ev->res > 0)
        memcpy(s->data[s->n], ev->data, (size_t)ev->res < 31 ? (size_t)ev->res : 31);
    s->n++;
}

/* Waits for and reaps completions until `want` have arrived (or 2 s). */
static void reap_until(gb_uring *u, seen *s, int want)
{
    for (int i = 0; i < 200 && s->n < want; i++) {
        gb_uring_reap(u, record, s);
        if (s->n < want)
            gb_uring_wait(u, 10);
    }
}

static gb_uring *open_or_explain(unsigned nbufs)
{
    char why[256] = "";
    gb_uring *u = gb_uring_open(64, nbufs, 64, why, sizeof why);
    if (!u) /* no io_uring here: the reason says so, and callers fall back */
        assert_true(strlen(why) > 10);
    return u;
}

static void test_receive_send_cancel(void **state)
{
    (void)state;
    gb_uring *u = open_or_explain(8);
    if (!u)
        return;
    assert_true(gb_uring_fd(u) >= 0);
    int sv[2];
    assert_rc(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_rc(gb_uring_recv(u, sv[0], 1), 0);
    assert_rc(gb_uring_submit(u), 0);
    seen s = {0};
    assert_int_equal(gb_uring_reap(u, record, &s), 0); /* nothing sent yet */

    /* More receives than buffers: each buffer goes back after its event. */
    for (int i = 0; i < 20; i++) {
        char msg[8];
        snprintf(msg, sizeof msg, "m%02d", i);
        assert_int_equal(write(sv[1], msg, 3), 3);
        s.n = 0;
        reap_until(u, &s, 1);
        assert_int_equal(s.n, 1);
        assert_int_equal(s.ev[0].tag, 1);
        assert_int_equal(s.ev[0].res, 3);
        assert_true(s.ev[0].more);
        assert_memory_equal(s.data[0], msg, 3);
    }

    s.n = 0;
    assert_rc(gb_uring_send(u, sv[0], "reply", 5, 2), 0);
    assert_rc(gb_uring_submit(u), 0);
    reap_until(u, &s, 1);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.ev[0].tag, 2);
    assert_int_equal(s.ev[0].res, 5);
    assert_null(s.ev[0].data);
    char got[8] = {0};
    assert_int_equal(read(sv[1], got, sizeof got), 5);
    assert_memory_equal(got, "reply", 5);

    /* Cancelled: the receive ends (no `more`), the descriptor may close. */
    s.n = 0;
    assert_rc(gb_uring_cancel_fd(u, sv[0]), 0);
    close(sv[0]);
    reap_until(u, &s, 1);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.ev[0].tag, 1);
    assert_false(s.ev[0].more);
    assert_int_equal(s.ev[0].res, -ECANCELED);
    close(sv[1]);
    gb_uring_close(u);
}

static void test_peer_close_ends_the_receive(void **state)
{
    (void)state;
    gb_uring *u = open_or_explain(4);
    if (!u)
        return;
    int sv[2];
    assert_rc(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_rc(gb_uring_recv(u, sv[0], 7), 0);
    assert_rc(gb_uring_submit(u), 0);
    close(sv[1]);
    seen s = {0};
    reap_until(u, &s, 1);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.ev[0].res, 0);
    assert_false(s.ev[0].more);
    close(sv[0]);
    gb_uring_close(u);
}

/* gb_uring_queued counts what the next submit hands over (the socket
 * server keeps the loop awake while it is not zero). */
static void test_queued_until_submitted(void **state)
{
    (void)state;
    gb_uring *u = open_or_explain(4);
    if (!u)
        return;
    int sv[2];
    assert_rc(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(gb_uring_queued(u), 0);
    assert_rc(gb_uring_recv(u, sv[0], 3), 0);
    assert_rc(gb_uring_send(u, sv[0], "x", 1, 4), 0);
    assert_int_equal(gb_uring_queued(u), 2);
    assert_rc(gb_uring_submit(u), 0);
    assert_int_equal(gb_uring_queued(u), 0);
    seen s = {0};
    reap_until(u, &s, 1); /* the send */
    assert_int_equal(s.ev[0].tag, 4);
    assert_rc(gb_uring_cancel_fd(u, sv[0]), 0);
    close(sv[0]);
    reap_until(u, &s, 2); /* the receive, cancelled */
    close(sv[1]);
    gb_uring_close(u);
}

static void test_bad_buffer_ring_refused(void **state)
{
    (void)state;
    char why[256] = "";
    assert_null(gb_uring_open(64, 3, 64, why, sizeof why)); /* not a power of two */
    assert_true(strlen(why) > 10);
    why[0] = '\0';
    assert_null(gb_uring_open(64, 8, 0, why, sizeof why));
    assert_true(strlen(why) > 10);
    gb_uring_close(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_receive_send_cancel),
        cmocka_unit_test(test_peer_close_ends_the_receive),
        cmocka_unit_test(test_queued_until_submitted),
        cmocka_unit_test(test_bad_buffer_ring_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
