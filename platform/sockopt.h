/*
 * Socket options the server sets on its clients' connections.
 *
 *   common/sockopt.c, with the option names each system has (Linux:
 *   TCP_KEEPIDLE; macOS: TCP_KEEPALIVE for the same)
 */
#ifndef GB_PLATFORM_SOCKOPT_H
#define GB_PLATFORM_SOCKOPT_H

/* TCP keepalive as Redis's anetKeepAlive sets it (tcp-keepalive): the
 * first probe after `interval` seconds of silence, then one every
 * interval/3 seconds, the peer declared dead after 3 unanswered, so about
 * 2 x interval in all. (libuv's own setting probes each second, 10 times:
 * a 15 s network blip after an idle spell dropped the connection.) Where a
 * system lacks the finer options only the first applies. Returns 0 or -1
 * (errno). */
int gb_plat_tcp_keepalive(int fd, int interval);

#endif
