/*
 * SHA-1 (FIPS 180-4), for what Redis names scripts by: EVAL's script
 * digests and redis.sha1hex. Not used for anything that needs security.
 */
#ifndef GB_ENGINE_SCRIPT_SHA1_H
#define GB_ENGINE_SCRIPT_SHA1_H

#include <stddef.h>

/* Writes the 40 lower-case hex digits of SHA-1(data) and a NUL to out. */
void gb_sha1_hex(const void *data, size_t len, char out[41]);

#endif
