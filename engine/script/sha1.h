/*
 * SHA-1 (FIPS 180-4), for what Redis names scripts by (EVAL's script
 * digests, redis.sha1hex) and for DEBUG DIGEST's dataset digest. Not used
 * for anything that needs security.
 */
#ifndef GB_ENGINE_SCRIPT_SHA1_H
#define GB_ENGINE_SCRIPT_SHA1_H

#include <stddef.h>
#include <stdint.h>

/* SHA-1(data), the 20 bytes. */
void gb_sha1(const void *data, size_t len, uint8_t out[20]);
/* The 40 lower-case hex digits of a digest and a NUL. */
void gb_sha1_to_hex(const uint8_t digest[20], char out[41]);
/* Writes the 40 lower-case hex digits of SHA-1(data) and a NUL to out. */
void gb_sha1_hex(const void *data, size_t len, char out[41]);

#endif
