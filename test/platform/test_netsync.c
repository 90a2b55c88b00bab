/* platform/netsync.h's line reader, as MIGRATE uses it: several lines that
 * arrive in one block come out one by one, a line split over writes is
 * joined, what follows the last line asked for stays pending, and a long
 * line, a closed peer and a silent one fail with their errno. */
#include "tutil.h"

#include <sys/socket.h>

#include "netsync.h"

static void pair(int fds[2])
{
    assert_rc(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    assert_rc(fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK), 0);
}

static void put(int fd, const char *s)
{
    assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

static void test_lines_from_one_block(void **state)
{
    (void)state;
    int fds[2];
    pair(fds);
    gb_plat_line_reader r = {0};
    char line[64];
    put(fds[1], "+OK\r\n-ERR bad\r\n+OK\r\nleft");
    assert_int_equal(gb_plat_sync_readline(fds[0], &r, line, sizeof line, 1000), 3);
    assert_string_equal(line, "+OK");
    assert_int_equal(gb_plat_sync_readline(fds[0], &r, line, sizeof line, 1000), 8);
    assert_string_equal(line, "-ERR bad");
    assert_int_equal(gb_plat_sync_readline(fds[0], &r, line, sizeof line, 1000), 3);
    assert_true(gb_plat_line_reader_pending(&r)); /* "left" came with them */
    /* a line split over two writes, the first half already buffered */
    put(fds[1], "over\n");
    assert_int_equal(gb_plat_sync_readline(fds[0], &r, line, sizeof line, 1000), 8);
    assert_string_equal(line, "leftover");
    assert_false(gb_plat_line_reader_pending(&r));
    close(fds[0]);
    close(fds[1]);
}

static void test_failures(void **state)
{
    (void)state;
    int fds[2];
    pair(fds);
    gb_plat_line_reader r = {0};
    char line[8];
    /* nothing comes: the deadline */
    errno = 0;
    assert_rc(gb_plat_sync_readline(fds[0], &r, line, sizeof line, 50), -1);
    assert_int_equal(errno, ETIMEDOUT);
    /* longer than the caller's buffer */
    put(fds[1], "0123456789\r\n");
    assert_rc(gb_plat_sync_readline(fds[0], &r, line, sizeof line, 1000), -1);
    assert_int_equal(errno, EMSGSIZE);
    /* the peer goes away mid-line */
    r.start = r.end = 0;
    put(fds[1], "+O");
    close(fds[1]);
    assert_rc(gb_plat_sync_readline(fds[0], &r, line, sizeof line, 1000), -1);
    assert_int_equal(errno, ECONNRESET);
    close(fds[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_from_one_block),
        cmocka_unit_test(test_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
