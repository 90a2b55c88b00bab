/*
 * The open-file limit (RLIMIT_NOFILE): every client connection is a file
 * descriptor, so a server that promises maxclients connections needs that
 * many descriptors and some for itself. systemd starts services with a soft
 * limit of 1024; without raising it, connections past it were refused by
 * the kernel with no word in the log.
 *
 *   posix (Linux, macOS) - getrlimit/setrlimit, common/fdlimit_posix.c
 */
#ifndef GB_PLATFORM_FDLIMIT_H
#define GB_PLATFORM_FDLIMIT_H

#include <stdint.h>

/* Raises the soft limit towards `wanted` (never lowers it), to the most
 * the system grants, as Redis's adjustOpenFilesLimit does (the hard limit
 * bounds it; Linux's nr_open, and macOS's OPEN_MAX even under an unlimited
 * hard limit, too). *was: the limit before; *now: after (>= was).
 * Returns 0 when *now >= wanted; else the errno of the last refused
 * attempt (-1 when there was none, or when the limit cannot be read: then
 * *was = *now = 1024, Redis's assumption). */
int gb_plat_fd_limit_raise(uint64_t wanted, uint64_t *was, uint64_t *now);

#endif
