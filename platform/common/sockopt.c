#define _DEFAULT_SOURCE /* glibc hides TCP_KEEPIDLE & co. under strict POSIX */
#include "sockopt.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

int gb_plat_tcp_keepalive(int fd, int interval)
{
    int yes = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &yes, sizeof yes) != 0)
        return -1;
    int idle = interval, intvl = interval / 3 > 0 ? interval / 3 : 1, cnt = 3;
#if defined(TCP_KEEPIDLE)
    if (setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle) != 0)
        return -1;
#elif defined(TCP_KEEPALIVE)
    if (setsockopt(fd, IPPROTO_TCP, TCP_KEEPALIVE, &idle, sizeof idle) != 0)
        return -1;
#endif
#if defined(TCP_KEEPINTVL)
    if (setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl) != 0)
        return -1;
#endif
#if defined(TCP_KEEPCNT)
    if (setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt) != 0)
        return -1;
#endif
    (void)idle, (void)intvl, (void)cnt;
    return 0;
}
