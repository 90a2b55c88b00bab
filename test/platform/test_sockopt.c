/* platform/sockopt.h's keepalive, read back from the socket: Redis's
 * anetKeepAlive values (first probe after the interval, then every third
 * of it, 3 probes), not libuv's (every second, 10 probes). */
#define _DEFAULT_SOURCE
#include "tutil.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "sockopt.h"

static int get_int(int fd, int level, int name)
{
    int v = -1;
    socklen_t n = sizeof v;
    assert_rc(getsockopt(fd, level, name, &v, &n), 0);
    return v;
}

static void test_redis_values(void **state)
{
    (void)state;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_rc(gb_plat_tcp_keepalive(fd, 300), 0);
    assert_int_equal(get_int(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
#ifdef TCP_KEEPIDLE
    assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_KEEPIDLE), 300);
#endif
#ifdef TCP_KEEPINTVL
    assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_KEEPINTVL), 100);
#endif
#ifdef TCP_KEEPCNT
    assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_KEEPCNT), 3);
#endif
    /* an interval under 3 s still probes each second */
    assert_rc(gb_plat_tcp_keepalive(fd, 2), 0);
#ifdef TCP_KEEPINTVL
    assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_KEEPINTVL), 1);
#endif
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redis_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
