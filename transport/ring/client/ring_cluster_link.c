/*
 * Socket links: a gb_ring_client that has no ring, only a RESP connection
 * (TCP, or a Unix socket), so that the cluster client reaches remote nodes
 * and nodes that cannot claim rings (redis-server) through the same calls:
 * every typed call's RESP path and gb_ring_command work on it unchanged.
 *
 * The peer is not trusted: a reply is buffered up to LINK_MAX_BUFFER bytes
 * (Redis's largest bulk string and some), never more.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE  /* glibc: getifaddrs, NI_MAXHOST */
#define _DARWIN_C_SOURCE /* macOS: the same beyond POSIX */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport/ring/client/ring_client_internal.h"

#define LINK_MAX_BUFFER ((size_t)512 * 1024 * 1024 + 64 * 1024)
#define LINK_READ_CHUNK 16384
#define LINK_CONNECT_TIMEOUT_MS 2000

/* connect() that gives up after timeout_ms (an unreachable remote host
 * would otherwise hold the caller for the kernel's minutes of SYN
 * retries); 0 or an errno value. The socket is blocking again after. */
static int connect_within(int fd, const struct sockaddr *sa, socklen_t len, int timeout_ms)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return errno;
    int e = 0;
    if (connect(fd, sa, len) != 0) {
        e = errno;
        if (e == EINPROGRESS) {
            struct pollfd p = {fd, POLLOUT, 0};
            int n = poll(&p, 1, timeout_ms);
            socklen_t el = sizeof e;
            if (n == 0)
                e = ETIMEDOUT;
            else if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0)
                e = errno;
        }
    }
    if (e == 0 && fcntl(fd, F_SETFL, flags) < 0)
        e = errno;
    return e;
}

static int connect_tcp(const char *host, int port, char *err, size_t errlen)
{
    char service[8];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int g = getaddrinfo(host, service, &hints, &res);
    if (g != 0) {
        snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(g));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        int e = fd < 0 ? errno : connect_within(fd, a->ai_addr, a->ai_addrlen, LINK_CONNECT_TIMEOUT_MS);
        if (e != 0) {
            snprintf(err, errlen, "cannot connect to %s:%d: %s", host, port, strerror(e));
            if (fd >= 0)
                close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

/* AUTH on a fresh link when the options name a password. */
static int link_auth(gb_ring_client *rc, const gb_ring_client_options *opt, char *err, size_t errlen)
{
    if (!opt || !opt->password)
        return 0;
    const char *argv[] = {"AUTH", opt->username ? opt->username : "default", opt->password};
    gb_reply *r = NULL;
    int rv = gb_ring_command(rc, 3, argv, NULL, &r);
    if (rv != 0) {
        snprintf(err, errlen, "AUTH failed: %s", rc->err);
    } else if (r->kind == GB_REPLY_ERROR) {
        snprintf(err, errlen, "AUTH refused: %s", r->str);
        rv = GB_EPERM;
    }
    gb_reply_free(r);
    return rv;
}

int gb_rc_link_connect(const char *host, int port, const char *unix_path, const gb_ring_client_options *opt,
                       gb_ring_client **out, char *err, size_t errlen)
{
    *out = NULL;
    int fd = unix_path ? gb_rc_connect_unix(unix_path, err, errlen) : connect_tcp(host, port, err, errlen);
    if (fd < 0)
        return GB_ECLOSED;
    gb_ring_client *rc = calloc(1, sizeof *rc);
    if (!rc) {
        close(fd);
        snprintf(err, errlen, "out of memory");
        return GB_ENOMEM;
    }
    rc->socket_link = true;
    rc->ctl_fd = fd;
    rc->wake_fd = -1;
    rc->proto = GB_RING_RESP;
    rc->slot_id = -1;
    int rv = link_auth(rc, opt, err, errlen);
    if (rv != 0) {
        gb_ring_client_close(rc);
        return rv;
    }
    *out = rc;
    return 0;
}

int gb_rc_link_submit(gb_ring_client *rc, int argc, const char *const *argv, const size_t *lens)
{
    size_t need = 32;
    for (int i = 0; i < argc; i++)
        need += (lens ? lens[i] : strlen(argv[i])) + 32;
    if (need > rc->scratch_cap) {
        char *grown = realloc(rc->scratch, need);
        if (!grown) {
            gb_rc_fail(rc, "out of memory encoding a %zu-byte command", need);
            return GB_ENOMEM;
        }
        rc->scratch = grown;
        rc->scratch_cap = need;
    }
    size_t n = gb_rc_resp_encode(rc->scratch, need, argc, argv, lens);
    /* gb_shm_send_fds with no descriptors: a plain send that never raises
     * SIGPIPE when the node has gone (platform/shm.h). */
    int rv = gb_shm_send_fds(rc->ctl_fd, NULL, 0, rc->scratch, n);
    if (rv != 0) {
        gb_rc_fail(rc, "the connection to the node is closed (%s)", gb_strerror(rv));
        return GB_ECLOSED;
    }
    return 0;
}

int gb_rc_link_read(gb_ring_client *rc, uint64_t timeout_ns)
{
    if (rc->scap - rc->slen < LINK_READ_CHUNK) {
        if (rc->slen + LINK_READ_CHUNK > LINK_MAX_BUFFER) {
            gb_rc_fail(rc, "a reply of more than %zu bytes from the node", LINK_MAX_BUFFER);
            return GB_EPROTO;
        }
        size_t ncap = rc->scap ? rc->scap * 2 : 4 * LINK_READ_CHUNK;
        if (ncap > LINK_MAX_BUFFER)
            ncap = LINK_MAX_BUFFER;
        char *grown = realloc(rc->stream, ncap);
        if (!grown) {
            gb_rc_fail(rc, "out of memory buffering a %zu-byte reply", rc->slen);
            return GB_ENOMEM;
        }
        rc->stream = grown;
        rc->scap = ncap;
    }
    if (timeout_ns != UINT64_MAX) {
        struct pollfd p = {rc->ctl_fd, POLLIN, 0};
        uint64_t ms = timeout_ns / 1000000u + (timeout_ns % 1000000u != 0);
        if (poll(&p, 1, ms > INT_MAX ? INT_MAX : (int)ms) == 0) {
            gb_rc_fail(rc, "no reply within the timeout");
            return GB_ETIMEDOUT;
        }
    }
    for (;;) {
        ssize_t n = read(rc->ctl_fd, rc->stream + rc->slen, rc->scap - rc->slen);
        if (n > 0) {
            rc->slen += (size_t)n;
            return 0;
        }
        if (n < 0 && errno == EINTR)
            continue;
        gb_rc_fail(rc, "the connection to the node is closed (%s)", n == 0 ? "end of stream" : strerror(errno));
        return GB_ECLOSED;
    }
}

static bool is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        static const uint8_t one[16] = {[15] = 1};
        return memcmp(a->s6_addr, one, 16) == 0;
    }
    return false;
}

static bool same_address(const struct sockaddr *a, const struct sockaddr *b)
{
    if (!a || !b || a->sa_family != b->sa_family)
        return false;
    if (a->sa_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    if (a->sa_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
                      sizeof(struct in6_addr)) == 0;
    return false;
}

/* Whether host names this machine: a loopback address, or one of its
 * interfaces' (getifaddrs, on Linux and macOS alike). */
bool gb_rc_host_is_local(const char *host)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, NULL, &hints, &res) != 0)
        return false;
    struct ifaddrs *ifs = NULL;
    bool have_ifs = getifaddrs(&ifs) == 0;
    bool local = false;
    for (struct addrinfo *a = res; a && !local; a = a->ai_next) {
        local = is_loopback(a->ai_addr);
        for (struct ifaddrs *i = have_ifs ? ifs : NULL; i && !local; i = i->ifa_next)
            local = same_address(a->ai_addr, i->ifa_addr);
    }
    if (have_ifs)
        freeifaddrs(ifs);
    freeaddrinfo(res);
    return local;
}
