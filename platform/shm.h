/*
 * Shared memory for the ring: an anonymous shared object, mapped, pre-faulted
 * safely, and passed to another process as a descriptor (SCM_RIGHTS).
 *
 *   linux  - memfd_create (MFD_HUGETLB on request), sealed against
 *            shrinking and growing (F_SEAL_SHRINK | F_SEAL_GROW |
 *            F_SEAL_SEAL) so a peer holding the descriptor cannot truncate
 *            it under us; creation fails if the seals do not apply.
 *            MADV_POPULATE_WRITE pre-faults with an error return.
 *   darwin/posix - shm_open with a unique name of <= 31 characters and an
 *            immediate shm_unlink (the object lives only as descriptors),
 *            ftruncate once (macOS refuses a second one); huge pages are
 *            GB_ENOTSUP; pre-faulting touches each page under a SIGBUS
 *            guard.
 *
 * Order for NUMA-strict memory: gb_shm_create -> gb_numa_bind_region ->
 * gb_shm_prefault -> gb_numa_verify. Creating never touches the pages.
 *
 * Memory a peer can truncate (an unsealed object), or whose pages it can
 * free (a punched hole in a huge-page object refaults from a pool that may
 * be empty), can raise SIGBUS in the process that touches it next. For
 * mappings another process must not be able to crash us through,
 * gb_shm_guard() turns that SIGBUS into a flag: see below.
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
    bool sealed; /* its size cannot change: no holder of fd can truncate it (Linux memfd) */
    int guard;   /* 1 + its entry in the SIGBUS guard table, 0 when not guarded */
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

/* Unmaps (keeps the descriptor; unguards first); gb_shm_close unmaps and
 * closes. Both are idempotent. */
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

/* ---- the SIGBUS guard ----------------------------------------------------
 * While a mapping is guarded, a SIGBUS at an address inside it (the object
 * was truncated, or a freed huge page could not be supplied again) does not
 * kill the process: the handler maps anonymous zero pages over the whole
 * mapping (MAP_FIXED), marks it faulted and returns, so the access that
 * faulted runs again and reads zeros. The owner polls gb_shm_guard_faults()
 * (one load) and drops the mappings gb_shm_faulted() names. A SIGBUS
 * anywhere else gets the disposition that was in place before the first
 * guard (by default: the process dies, as without the guard).
 *
 * Guards are set and removed by one thread at a time (the ring server's
 * engine thread); the handler runs in whichever thread faults. */

/* The most mappings guarded at once. */
#define GB_SHM_GUARD_MAX 8192

/* Guards shm's mapping. 0; GB_EBUSY when GB_SHM_GUARD_MAX are guarded;
 * GB_ESYS when the handler cannot be installed; GB_EINVAL when unmapped. */
int gb_shm_guard(gb_shm *shm);

/* Removes the guard (no-op when not guarded). */
void gb_shm_unguard(gb_shm *shm);

/* True once a SIGBUS inside the guarded mapping has replaced it with zero
 * pages: its contents are gone and the peer broke the contract. */
bool gb_shm_faulted(const gb_shm *shm);

/* How many guarded faults this process has handled: cheap to poll, so the
 * owner scans its mappings only when the count moves. */
unsigned long gb_shm_guard_faults(void);

/* The base page size (4 KiB on x86 Linux, 16 KiB on Apple Silicon). */
size_t gb_page_size(void);

/* The default huge page size in bytes, or 0 where there are none. */
size_t gb_huge_page_size(void);

#endif
