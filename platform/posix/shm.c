/* Generic POSIX shared memory: the shm_open object (common/shm_common.c),
 * no huge pages, pre-faulting by a SIGBUS-guarded touch. */
#define _POSIX_C_SOURCE 200809L
#define _DARWIN_C_SOURCE /* when built on macOS: keep _SC_NPROCESSORS_ONLN, SO_NOSIGPIPE visible */
#include "common/internal.h"
#include "shm.h"

size_t gb_huge_page_size(void) { return 0; }

int gb_shm_create(size_t size, unsigned flags, gb_shm *out, char *err, size_t errlen)
{
    if (!out || !size)
        return gb__fail(GB_EINVAL, err, errlen, "shm: size must be > 0");
    *out = (gb_shm){.fd = -1};
    if (flags & GB_SHM_HUGEPAGES)
        return gb__fail(GB_ENOTSUP, err, errlen, "shm: huge pages are not supported by the generic POSIX platform layer");
    return gb__shm_create_named(size, out, err, errlen);
}

int gb_shm_map(int fd, size_t size, gb_shm *out) { return gb__shm_map_checked(fd, size, false, out); }

int gb_shm_prefault(void *addr, size_t len) { return gb__touch_pages(addr, len); }
