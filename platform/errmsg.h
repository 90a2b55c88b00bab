/*
 * The words behind the last GB_E* code a platform call returned on this
 * thread ("node 3 does not exist or has no memory (mbind: Invalid
 * argument)"), for the caller's log line or error reply. Aeron's pattern: a
 * thread-local message, overwritten by the next failure.
 */
#ifndef GB_PLATFORM_ERRMSG_H
#define GB_PLATFORM_ERRMSG_H

/* Never NULL; "" before any failure. Valid until the next platform call on
 * this thread. */
const char *gb_plat_last_error(void);

#endif
