/* macOS shared memory: no memfd, no hugetlb. The shm_open object (name of
 * at most 31 characters, unlinked at once, ftruncate exactly once) is in
 * common/shm_common.c; pre-faulting touches pages under a SIGBUS guard
 * (macOS has no MADV_POPULATE). Pages are 16 KiB on Apple Silicon. */
#include "common/internal.h"
#include "shm.h"

size_t gb_huge_page_size(void) { return 0; }

int gb_shm_create(size_t size, unsigned flags, gb_shm *out, char *err, size_t errlen)
{
    if (!out || !size)
        return gb__fail(GB_EINVAL, err, errlen, "shm: size must be > 0");
    *out = (gb_shm){.fd = -1};
    if (flags & GB_SHM_HUGEPAGES)
        return gb__fail(GB_ENOTSUP, err, errlen, "shm: macOS has no huge pages for shared memory");
    return gb__shm_create_named(size, out, err, errlen);
}

int gb_shm_map(int fd, size_t size, gb_shm *out) { return gb__shm_map_checked(fd, size, false, out); }

int gb_shm_prefault(void *addr, size_t len) { return gb__touch_pages(addr, len); }
