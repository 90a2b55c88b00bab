/*
 * SHA-256 (FIPS 180-4), for ACL password hashes: Redis stores and shows a
 * user's passwords as the lower-case hex SHA-256 of their bytes (ACL
 * GETUSER, ACL LIST, `#<hash>` rules), so Goblin Core must compute the very
 * same digests. Small and dependency-free (no libcrypto in the build);
 * checked against the NIST vectors in test/engine/base/test_sha256.c.
 *
 * Not constant-time with respect to the message length, which is public
 * (a password's length leaks through the request size anyway); the digest
 * comparison that matters is the caller's (engine/core/acl/acl.c).
 */
#ifndef GB_ENGINE_SHA256_H
#define GB_ENGINE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define GB_SHA256_DIGEST 32
#define GB_SHA256_HEX (GB_SHA256_DIGEST * 2) /* characters, without the NUL */

typedef struct gb_sha256 {
    uint32_t h[8];
    uint64_t bytes;   /* message length so far */
    uint8_t buf[64];  /* a partial block */
    size_t nbuf;
} gb_sha256;

void gb_sha256_init(gb_sha256 *s);
void gb_sha256_update(gb_sha256 *s, const void *data, size_t n);
void gb_sha256_final(gb_sha256 *s, uint8_t out[GB_SHA256_DIGEST]);

/* The lower-case hex digest of data, NUL-terminated (GB_SHA256_HEX + 1
 * bytes). */
void gb_sha256_hex(const void *data, size_t n, char out[GB_SHA256_HEX + 1]);

#endif
