#define _POSIX_C_SOURCE 200809L
#include "engine/base/random.h"

#include <fcntl.h>
#include <unistd.h>

#include "platform/clock.h"

/* Process-wide: every user (SRANDMEMBER, RANDOMKEY, SPOP, expiry sampling,
 * the LFU counter) runs on the one engine thread, and a test that seeds it
 * must get the same stream whatever engines it creates afterwards. Not for
 * secrets: values a client must not predict come from the OS. */
static uint64_t s[4] = {0x9E3779B97F4A7C15u, 0xBF58476D1CE4E5B9u, 0x94D049BB133111EBu, 0x2545F4914F6CDD1Du};
static bool seeded;

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

void gb_random_seed(uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        s[i] = splitmix(&seed);
    seeded = true;
}

void gb_random_seed_once_from_os(void)
{
    if (!seeded)
        gb_random_seed_from_os();
}

uint64_t gb_random_seed_from_os(void)
{
    uint64_t seed = 0;
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd >= 0) {
        if (read(fd, &seed, sizeof seed) != (ssize_t)sizeof seed)
            seed = 0;
        close(fd);
    }
    if (seed == 0)
        seed = gb_clock_mono_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)gb_clock_real_us();
    gb_random_seed(seed);
    return seed;
}

uint64_t gb_random_u64(void)
{
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t gb_random_below(uint64_t n)
{
    /* Lemire's nearly-divisionless method would need 128-bit products;
     * rejection sampling keeps it portable and unbiased. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t r;
    do {
        r = gb_random_u64();
    } while (r >= limit);
    return r % n;
}

double gb_random_double(void) { return (double)(gb_random_u64() >> 11) * 0x1.0p-53; }
