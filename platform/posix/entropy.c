/* Generic POSIX entropy: /dev/urandom, opened for each request (the key of a
 * ring claim is the only caller: a few bytes per claim). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/internal.h"
#include "entropy.h"

int gb_entropy_fill(void *buf, size_t len)
{
    if (!buf && len)
        return gb__fail(GB_EINVAL, NULL, 0, "entropy: NULL buffer");
    int fd;
    do {
        fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return gb__fail(gb__errno_code(errno), NULL, 0, "entropy: /dev/urandom: %s", strerror(errno));
    unsigned char *p = buf;
    while (len) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int rc = gb__fail(n < 0 ? gb__errno_code(errno) : GB_EIO, NULL, 0, "entropy: /dev/urandom: %s",
                              n < 0 ? strerror(errno) : "end of file");
            close(fd);
            return rc;
        }
        p += n;
        len -= (size_t)n;
    }
    close(fd);
    return 0;
}
