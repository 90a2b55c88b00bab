/*
 * Random bytes from the operating system's generator, for values another
 * process must not be able to predict (a ring slot's stamp key). Not the
 * engine's xoshiro stream (engine/base/random.h): that one also answers
 * SRANDMEMBER and RANDOMKEY, so a client can observe its outputs, and it is
 * seeded once per process.
 *
 *   linux  - getrandom(2) (blocks only before the kernel pool is first
 *            initialised at boot)
 *   darwin - arc4random_buf (cannot fail)
 *   posix  - reads /dev/urandom
 */
#ifndef GB_PLATFORM_ENTROPY_H
#define GB_PLATFORM_ENTROPY_H

#include <stddef.h>

/* Fills buf with len random bytes. 0, or a GB_E* code (the source is
 * missing or failed) with the reason in gb_plat_last_error(); buf is then
 * unspecified and must not be used. */
int gb_entropy_fill(void *buf, size_t len);

#endif
