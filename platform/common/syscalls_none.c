/* The syscall table's defaults for the platform layers without the Linux
 * calls (darwin, posix): those entries fail with ENOSYS, which is what a
 * kernel without the call says (nothing in these variants calls them; the
 * tests check the answer). madvise is posix_madvise (the same advice values
 * for NORMAL/RANDOM/SEQUENTIAL/WILLNEED/DONTNEED on macOS and Linux), mmap
 * and ftruncate are libc's. Picked by platform/CMakeLists.txt instead of
 * <os>/syscalls.c. */
#define _POSIX_C_SOURCE 200809L
#define _DARWIN_C_SOURCE /* when built on macOS: keep everything beyond POSIX visible */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/internal.h"

static long stub_set_mempolicy(int mode, const unsigned long *nodemask, unsigned long maxnode)
{
    (void)mode, (void)nodemask, (void)maxnode;
    errno = ENOSYS;
    return -1;
}

static long stub_mbind(void *addr, unsigned long len, int mode, const unsigned long *nodemask, unsigned long maxnode,
                       unsigned flags)
{
    (void)addr, (void)len, (void)mode, (void)nodemask, (void)maxnode, (void)flags;
    errno = ENOSYS;
    return -1;
}

static long stub_get_mempolicy(int *mode, unsigned long *nodemask, unsigned long maxnode, void *addr,
                               unsigned long flags)
{
    (void)mode, (void)nodemask, (void)maxnode, (void)addr, (void)flags;
    errno = ENOSYS;
    return -1;
}

static long stub_move_pages(int pid, unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
    (void)pid, (void)count, (void)pages, (void)nodes, (void)status, (void)flags;
    errno = ENOSYS;
    return -1;
}

static int stub_sched_setaffinity(pid_t pid, size_t setsize, const void *mask)
{
    (void)pid, (void)setsize, (void)mask;
    errno = ENOSYS;
    return -1;
}

static int stub_sched_getaffinity(pid_t pid, size_t setsize, void *mask)
{
    (void)pid, (void)setsize, (void)mask;
    errno = ENOSYS;
    return -1;
}

static int stub_memfd_create(const char *name, unsigned flags)
{
    (void)name, (void)flags;
    errno = ENOSYS;
    return -1;
}

static long stub_futex(void *uaddr, int op, uint32_t val, const struct timespec *timeout, void *uaddr2, uint32_t val3)
{
    (void)uaddr, (void)op, (void)val, (void)timeout, (void)uaddr2, (void)val3;
    errno = ENOSYS;
    return -1;
}

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
        GB_SYSCALL_FILE_LIST(GB__SYS_FILE_DEFAULT)                                                     \
    }
const gb_syscall_table gb__sys_defaults = GB_SYSCALL_DEFAULTS;
gb_syscall_table gb__sys = GB_SYSCALL_DEFAULTS;
