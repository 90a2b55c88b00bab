/*
 * A blocking TCP client with deadlines, for the one place the engine talks
 * to another server itself: MIGRATE, which (as in Redis) connects, writes
 * its RESTORE commands and reads one reply line per command on the engine
 * thread, each step bounded by the command's timeout. Plain POSIX sockets
 * and poll(), the same on every platform.
 *
 * Every call returns 0 (or a count) on success and -1 on failure with errno
 * set: ETIMEDOUT when the deadline passed, the system's error otherwise.
 */
#ifndef GB_PLATFORM_NETSYNC_H
#define GB_PLATFORM_NETSYNC_H

#include <stdbool.h>
#include <stddef.h>

/* Connects to host:port (a name or an address, IPv4 or IPv6) within
 * timeout_ms; *fd gets the connected socket (TCP_NODELAY set). */
int gb_plat_tcp_connect(const char *host, int port, int timeout_ms, int *fd);

/* Writes all n bytes within timeout_ms (for the whole call). */
int gb_plat_sync_write(int fd, const void *p, size_t n, int timeout_ms);

/* What was read from a connection and not yet returned as a line. One per
 * connection, zeroed when the connection is made. Reading in blocks rather
 * than a byte per read() matters: MIGRATE of a slot's keys reads one
 * "+OK" per key, and a read() per byte cost five system calls a key. */
typedef struct gb_plat_line_reader {
    size_t start, end; /* the unread bytes are buf[start..end) */
    char buf[4096];
} gb_plat_line_reader;

/* Reads one line ending in "\n" within timeout_ms into buf, without its
 * "\r\n", NUL terminated; bytes past it stay in r for the next call.
 * Returns its length; -1 on a closed connection (errno ECONNRESET), a
 * timeout, or a line longer than cap - 1 (EMSGSIZE). */
long gb_plat_sync_readline(int fd, gb_plat_line_reader *r, char *buf, size_t cap, int timeout_ms);

/* Whether r holds bytes no line was read for yet: after the replies a
 * caller expected, the peer sent more than it was asked for. */
static inline bool gb_plat_line_reader_pending(const gb_plat_line_reader *r) { return r->start < r->end; }

void gb_plat_sync_close(int fd);

#endif
