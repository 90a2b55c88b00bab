#include "fdlimit.h"

#include <errno.h>
#include <sys/resource.h>

/* Whether the soft limit can be n (the hard limit raised too where it is
 * below: root may); errno set when not. */
static int try_limit(rlim_t n, rlim_t hard)
{
    struct rlimit want = {n, hard != RLIM_INFINITY && hard < n ? n : hard};
    return setrlimit(RLIMIT_NOFILE, &want) == 0 ? 0 : errno;
}

int gb_plat_fd_limit_raise(uint64_t wanted, uint64_t *was, uint64_t *now)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0) {
        *was = *now = 1024;
        return -1;
    }
    rlim_t old = lim.rlim_cur;
    *was = *now = (uint64_t)old;
    if ((uint64_t)old >= wanted)
        return 0;
    int last_error = try_limit((rlim_t)wanted, lim.rlim_max);
    if (last_error == 0) {
        *now = wanted;
        return 0;
    }
    /* The most the system grants between the old limit (granted) and
     * wanted (refused): a binary search, where Redis steps down 16 at a
     * time (too slow from a maxclients of billions). */
    rlim_t lo = old, hi = (rlim_t)wanted;
    while (hi - lo > 1) {
        rlim_t mid = lo + (hi - lo) / 2;
        int e = try_limit(mid, lim.rlim_max);
        if (e == 0)
            lo = mid;
        else {
            hi = mid;
            last_error = e;
        }
    }
    *now = (uint64_t)lo; /* the last limit granted is in force: lo */
    return last_error;
}
