/* The blocking TCP client of platform/netsync.h: non-blocking sockets
 * driven by poll() against a deadline, which every POSIX system has. */
#define _POSIX_C_SOURCE 200809L
#include "netsync.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd is ready for events or the deadline passes. */
static int wait_for(int fd, short events, long long deadline)
{
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {fd, events, 0};
        int rc = poll(&p, 1, (int)(left > 1000000 ? 1000000 : left));
        if (rc > 0)
            return 0;
        if (rc < 0 && errno != EINTR)
            return -1;
    }
}

static int connect_one(const struct addrinfo *ai, long long deadline)
{
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0)
        return -1;
    int flags = fcntl(fd, F_GETFL, 0);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        goto fail;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        if (errno != EINPROGRESS || wait_for(fd, POLLOUT, deadline) != 0)
            goto fail;
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            goto fail;
        if (err) {
            errno = err;
            goto fail;
        }
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
fail:;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

int gb_plat_tcp_connect(const char *host, int port, int timeout_ms, int *fd)
{
    long long deadline = now_ms() + timeout_ms;
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        errno = rc == EAI_SYSTEM ? errno : EHOSTUNREACH;
        return -1;
    }
    int e = ECONNREFUSED;
    for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int s = connect_one(ai, deadline);
        if (s >= 0) {
            freeaddrinfo(res);
            *fd = s;
            return 0;
        }
        e = errno;
        if (e == ETIMEDOUT)
            break;
    }
    freeaddrinfo(res);
    errno = e;
    return -1;
}

int gb_plat_sync_write(int fd, const void *p, size_t n, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    const char *q = p;
    while (n) {
        ssize_t w = write(fd, q, n);
        if (w > 0) {
            q += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -1;
        if (wait_for(fd, POLLOUT, deadline) != 0)
            return -1;
    }
    return 0;
}

long gb_plat_sync_readline(int fd, gb_plat_line_reader *r, char *buf, size_t cap, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    size_t len = 0;
    for (;;) {
        while (r->start < r->end) {
            char c = r->buf[r->start++];
            if (c == '\n') {
                if (len && buf[len - 1] == '\r')
                    len--;
                buf[len] = '\0';
                return (long)len;
            }
            if (len + 1 >= cap) {
                errno = EMSGSIZE;
                return -1;
            }
            buf[len++] = c;
        }
        r->start = r->end = 0;
        ssize_t n = read(fd, r->buf, sizeof r->buf);
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                return -1;
            if (wait_for(fd, POLLIN, deadline) != 0)
                return -1;
            continue;
        }
        r->end = (size_t)n;
    }
}

void gb_plat_sync_close(int fd)
{
    if (fd >= 0)
        close(fd);
}
