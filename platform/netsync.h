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

#include <stddef.h>

/* Connects to host:port (a name or an address, IPv4 or IPv6) within
 * timeout_ms; *fd gets the connected socket (TCP_NODELAY set). */
int gb_plat_tcp_connect(const char *host, int port, int timeout_ms, int *fd);

/* Writes all n bytes within timeout_ms (for the whole call). */
int gb_plat_sync_write(int fd, const void *p, size_t n, int timeout_ms);

/* Reads one line ending in "\n" within timeout_ms, one byte at a time (so
 * nothing past the line is consumed), into buf without its "\r\n", NUL
 * terminated. Returns its length; -1 on a closed connection (errno
 * ECONNRESET), a timeout, or a line longer than cap - 1 (EMSGSIZE). */
long gb_plat_sync_readline(int fd, char *buf, size_t cap, int timeout_ms);

void gb_plat_sync_close(int fd);

#endif
