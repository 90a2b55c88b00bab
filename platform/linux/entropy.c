/* Linux entropy: getrandom(2) with no flags (the urandom pool, which never
 * blocks once initialised). Large requests may return short; EINTR retries. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "common/internal.h"
#include "entropy.h"

int gb_entropy_fill(void *buf, size_t len)
{
    if (!buf && len)
        return gb__fail(GB_EINVAL, NULL, 0, "entropy: NULL buffer");
    unsigned char *p = buf;
    while (len) {
        ssize_t n = getrandom(p, len, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return gb__fail(gb__errno_code(errno), NULL, 0, "entropy: getrandom: %s", strerror(errno));
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}
