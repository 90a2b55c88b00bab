/*
 * Fast non-cryptographic randomness for the engine (xoshiro256**): random
 * keys, SPOP/SRANDMEMBER, expiry sampling, hash seeds. Seeded once at
 * start-up from the OS (gb_random_seed_from_os) or explicitly in tests.
 */
#ifndef GB_ENGINE_RANDOM_H
#define GB_ENGINE_RANDOM_H

#include <stdbool.h>
#include <stdint.h>

void gb_random_seed(uint64_t seed);
/* Seeds from /dev/urandom (falls back to time and pid). Returns the seed. */
uint64_t gb_random_seed_from_os(void);
/* Seeds from the OS unless the stream was seeded already (engine creation:
 * a test's explicit seed survives it). */
void gb_random_seed_once_from_os(void);
uint64_t gb_random_u64(void);
/* Uniform in [0, n) (n > 0), without modulo bias. */
uint64_t gb_random_below(uint64_t n);
/* Uniform double in [0, 1). */
double gb_random_double(void);

#endif
