/* Generic POSIX defaults of the syscall table: the Linux-only entries fail
 * with ENOSYS; madvise is posix_madvise, mmap and ftruncate are libc's. */
#define _POSIX_C_SOURCE 200809L
#define _DARWIN_C_SOURCE /* when built on macOS: keep _SC_NPROCESSORS_ONLN, SO_NOSIGPIPE visible */
#include <sys/mman.h>
#include <unistd.h>

#include "common/internal.h"
#include "common/syscalls_stubs.h"

static int sys_madvise(void *addr, size_t len, int advice)
{
    int e = posix_madvise(addr, len, advice); /* returns the error, not -1 */
    if (e) {
        errno = e;
        return -1;
    }
    return 0;
}

static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
    return mmap(addr, len, prot, flags, fd, offset);
}

static int sys_ftruncate(int fd, off_t len) { return ftruncate(fd, len); }

#define GB_SYSCALL_DEFAULTS                                                                            \
    {                                                                                                  \
        .set_mempolicy = stub_set_mempolicy, .mbind = stub_mbind, .get_mempolicy = stub_get_mempolicy, \
        .move_pages = stub_move_pages, .sched_setaffinity = stub_sched_setaffinity,                    \
        .sched_getaffinity = stub_sched_getaffinity, .memfd_create = stub_memfd_create,                \
        .futex = stub_futex, .madvise = sys_madvise, .mmap = sys_mmap, .ftruncate = sys_ftruncate,     \
    }
const gb_syscall_table gb__sys_defaults = GB_SYSCALL_DEFAULTS;
gb_syscall_table gb__sys = GB_SYSCALL_DEFAULTS;
