/* Linux shared memory: memfd_create (optionally hugetlb), sealed against
 * resizing (or refused), mapped MAP_SHARED; MADV_POPULATE_WRITE pre-faults with an error
 * return instead of SIGBUS. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/internal.h"
#include "shm.h"

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x1u
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 0x2u
#endif
#ifndef MFD_HUGETLB
#define MFD_HUGETLB 0x4u
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
#ifndef EHWPOISON
#define EHWPOISON 133
#endif

/* A "Key:   123 kB" style number from /proc/meminfo, or -1. */
static long meminfo_value(const char *key)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return -1;
    char line[256];
    long v = -1;
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            sscanf(line + klen + 1, "%ld", &v);
            break;
        }
    }
    fclose(f);
    return v;
}

size_t gb_huge_page_size(void)
{
    static _Atomic size_t cached;
    size_t v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (!v) {
        long kb = meminfo_value("Hugepagesize");
        v = kb > 0 ? (size_t)kb * 1024u : SIZE_MAX; /* SIZE_MAX: looked, none */
        atomic_store_explicit(&cached, v, memory_order_relaxed);
    }
    return v == SIZE_MAX ? 0 : v;
}

int gb_shm_create(size_t size, unsigned flags, gb_shm *out, char *err, size_t errlen)
{
    if (!out || !size)
        return gb__fail(GB_EINVAL, err, errlen, "shm: size must be > 0");
    *out = (gb_shm){.fd = -1};
    bool huge = (flags & GB_SHM_HUGEPAGES) != 0;
    size_t unit = huge ? gb_huge_page_size() : gb_page_size();
    if (!unit)
        return gb__fail(GB_ENOTSUP, err, errlen, "shm: this kernel has no huge pages (no Hugepagesize in /proc/meminfo)");
    if (size > SIZE_MAX - unit)
        return gb__fail(GB_EINVAL, err, errlen, "shm: size %zu is too large", size);
    size = gb__round_up(size, unit);

    unsigned mfd = MFD_CLOEXEC | MFD_ALLOW_SEALING | (huge ? MFD_HUGETLB : 0);
    int fd = gb__sys.memfd_create("goblin-shm", mfd);
    if (fd < 0) {
        int e = errno;
        if (e == ENOSYS && !huge) /* kernel < 3.17: the POSIX object does the same job, unsealed */
            return gb__shm_create_named(size, out, err, errlen);
        if (huge && e == EINVAL)
            return gb__fail(GB_ENOTSUP, err, errlen,
                            "shm: memfd_create(MFD_HUGETLB | MFD_ALLOW_SEALING): %s - kernel without hugetlbfs, or "
                            "older than 4.16 (no sealing of huge-page memfds)",
                            strerror(e));
        if (huge && e == ENOSYS)
            return gb__fail(GB_ENOTSUP, err, errlen, "shm: memfd_create(MFD_HUGETLB): %s - kernel without hugetlbfs?",
                            strerror(e));
        return gb__fail(gb__errno_code(e), err, errlen, "shm: memfd_create: %s", strerror(e));
    }
    if (gb__sys.ftruncate(fd, (off_t)size) != 0) {
        int rc = gb__fail(gb__errno_code(errno), err, errlen, "shm: ftruncate(%zu): %s", size, strerror(errno));
        close(fd);
        return rc;
    }
    /* The descriptor goes to other processes: seal the size so none of them
     * can shrink the object under our mapping (our next access would be a
     * SIGBUS) or grow it (charging memory to us), and seal the seals. An
     * object whose seals did not apply is never handed out. */
    const int want = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
    if (fcntl(fd, F_ADD_SEALS, want) != 0 || (fcntl(fd, F_GET_SEALS) & want) != want) {
        int e = errno;
        close(fd);
        return gb__fail(GB_ENOTSUP, err, errlen,
                        "shm: cannot seal the memfd against resizing (F_ADD_SEALS: %s); a peer could truncate it",
                        strerror(e));
    }

    /* For hugetlb the pool is reserved here, at mmap: an empty pool fails
     * now with ENOMEM instead of a SIGBUS at first touch. */
    int rc = gb__shm_map_fd(fd, size, huge, out, err, errlen);
    if (rc < 0) {
        if (huge && rc == GB_ENOMEM) {
            long free_pages = meminfo_value("HugePages_Free");
            rc = gb__fail(GB_ENOMEM, err, errlen,
                          "shm: the huge-page pool cannot supply %zu page(s) of %zu kB (HugePages_Free: %ld); "
                          "raise /proc/sys/vm/nr_hugepages, or the node's "
                          "/sys/devices/system/node/node<N>/hugepages/hugepages-%zukB/nr_hugepages",
                          size / unit, unit / 1024, free_pages, unit / 1024);
        }
        close(fd);
        return rc;
    }
    out->sealed = true;
    return 0;
}

int gb_shm_map(int fd, size_t size, gb_shm *out) { return gb__shm_map_checked(fd, size, true, out); }

int gb_shm_prefault(void *addr, size_t len)
{
    if (!addr)
        return gb__fail(GB_EINVAL, NULL, 0, "prefault: NULL address");
    if (!len)
        return 0;
    size_t ps = gb_page_size();
    uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(ps - 1);
    size_t span = (size_t)((uintptr_t)addr - start) + len;
    for (;;) {
        if (gb__sys.madvise((void *)start, span, MADV_POPULATE_WRITE) == 0)
            return 0;
        int e = errno;
        if (e == EINTR)
            continue;
        if (e == EINVAL) /* kernel < 5.14 does not know the advice: touch instead */
            return gb__touch_pages(addr, len);
        if (e == ENOMEM)
            return gb__fail(GB_ENOMEM, NULL, 0,
                            "prefault: out of memory populating %zu bytes (on the bound node, or the huge-page "
                            "pool)",
                            span);
        if (e == EFAULT)
            return gb__fail(GB_ENOMEM, NULL, 0,
                            "prefault: the backing store could not supply a page of %zu bytes (empty huge-page "
                            "pool, or the object is smaller than the mapping)",
                            span);
        if (e == EHWPOISON)
            return gb__fail(GB_EIO, NULL, 0, "prefault: hardware-poisoned page in the region");
        return gb__fail(gb__errno_code(e), NULL, 0, "prefault: madvise(MADV_POPULATE_WRITE): %s", strerror(e));
    }
}
