/*
 * Shared memory for the ring: an anonymous shared object, mapped, pre-faulted
 * safely, and passed to another process as a descriptor (SCM_RIGHTS).
 *
 *   linux  - memfd_create (MFD_HUGETLB on request), sealed against
 *            shrinking so a peer cannot truncate it under us (SIGBUS);
 *            MADV_POPULATE_WRITE pre-faults with an error return.
 *   darwin/posix - shm_open with a unique name of <= 31 characters and an
 *            immediate shm_unlink (the object lives only as descriptors),
 *            ftruncate once (macOS refuses a second one); huge pages are
 *            GB_ENOTSUP; pre-faulting touches each page under a SIGBUS
 *            guard.
 *
 * Order for NUMA-strict memory: gb_shm_create -> gb_numa_bind_region ->
 * gb_shm_prefault -> gb_numa_verify. Creating never touches the pages.
 */
#ifndef GB_PLATFORM_SHM_H
#define GB_PLATFORM_SHM_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    int fd;      /* the object's descriptor (close-on-exec); -1 when closed */
    void *addr;  /* MAP_SHARED read/write mapping, NULL when unmapped */
    size_t size; /* mapped bytes: the request rounded up to the page size */
    bool huge;   /* backed by huge pages */
} gb_shm;

/* Ask for huge pages (Linux hugetlbfs, default huge page size). */
#define GB_SHM_HUGEPAGES 0x1u

/* The most descriptors one gb_shm_send_fds/gb_shm_recv_fds carries. */
#define GB_SHM_MAX_FDS 16

/* Creates and maps an anonymous shared object of at least `size` bytes.
 *   GB_ENOMEM  no memory, or an empty/short huge-page pool (the message
 *              says which sysctl to raise)
 *   GB_ENOTSUP huge pages asked for where there are none
 * `err` (may be NULL) receives the message. */
int gb_shm_create(size_t size, unsigned flags, gb_shm *out, char *err, size_t errlen);

/* Maps a descriptor received from another process. `size` 0 maps the whole
 * object; a `size` larger than the object is GB_EINVAL (touching past its
 * end would SIGBUS). On success `out` owns `fd`. */
int gb_shm_map(int fd, size_t size, gb_shm *out);

/* Faults in every page of [addr, addr+len) for writing without changing its
 * contents, so the ring never takes a page fault on the hot path and so an
 * exhausted pool is an error here (GB_ENOMEM), never a SIGBUS later. */
int gb_shm_prefault(void *addr, size_t len);

/* Unmaps (keeps the descriptor); gb_shm_close unmaps and closes. Both are
 * idempotent. */
void gb_shm_unmap(gb_shm *shm);
void gb_shm_close(gb_shm *shm);

/* Sends `len` (>= 1) bytes of `data` with `nfds` (0..GB_SHM_MAX_FDS)
 * descriptors over a connected Unix socket. GB_ECLOSED if the peer is gone
 * (never SIGPIPE), GB_EAGAIN on a full non-blocking socket. */
int gb_shm_send_fds(int sock, const int *fds, int nfds, const void *data, size_t len);

/* Receives one message: up to `cap` bytes into `data` (*got set) and up to
 * `max` descriptors into `fds` (*nfds set), close-on-exec. More descriptors
 * than `max`, or a truncated control message, is GB_EPROTO and every
 * received descriptor is closed (none leaks into this process).
 * GB_ECLOSED at end of stream. */
int gb_shm_recv_fds(int sock, int *fds, int *nfds, int max, void *data, size_t cap, size_t *got);

/* The base page size (4 KiB on x86 Linux, 16 KiB on Apple Silicon). */
size_t gb_page_size(void);

/* The default huge page size in bytes, or 0 where there are none. */
size_t gb_huge_page_size(void);

#endif
