/* Linux defaults of the syscall table. glibc has no wrappers for the NUMA
 * calls, futex or (before 2.27) memfd_create, so those go through syscall()
 * with the kernel's numbers. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/internal.h"

/* Old userspace headers may lack the numbers; these are the kernel's ABI. */
#if defined(__x86_64__)
#ifndef SYS_mbind
#define SYS_mbind 237
#endif
#ifndef SYS_set_mempolicy
#define SYS_set_mempolicy 238
#endif
#ifndef SYS_get_mempolicy
#define SYS_get_mempolicy 239
#endif
#ifndef SYS_move_pages
#define SYS_move_pages 279
#endif
#elif defined(__aarch64__)
#ifndef SYS_mbind
#define SYS_mbind 235
#endif
#ifndef SYS_get_mempolicy
#define SYS_get_mempolicy 236
#endif
#ifndef SYS_set_mempolicy
#define SYS_set_mempolicy 237
#endif
#ifndef SYS_move_pages
#define SYS_move_pages 239
#endif
#endif

static long sys_set_mempolicy(int mode, const unsigned long *nodemask, unsigned long maxnode)
{
    return syscall(SYS_set_mempolicy, mode, nodemask, maxnode);
}

static long sys_mbind(void *addr, unsigned long len, int mode, const unsigned long *nodemask,
                      unsigned long maxnode, unsigned flags)
{
    return syscall(SYS_mbind, addr, len, mode, nodemask, maxnode, flags);
}

static long sys_get_mempolicy(int *mode, unsigned long *nodemask, unsigned long maxnode, void *addr,
                              unsigned long flags)
{
    return syscall(SYS_get_mempolicy, mode, nodemask, maxnode, addr, flags);
}

static long sys_move_pages(int pid, unsigned long count, void **pages, const int *nodes, int *status,
                           int flags)
{
    return syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
}

static int sys_sched_setaffinity(pid_t pid, size_t setsize, const void *mask)
{
    return sched_setaffinity(pid, setsize, (const cpu_set_t *)mask);
}

static int sys_sched_getaffinity(pid_t pid, size_t setsize, void *mask)
{
    return sched_getaffinity(pid, setsize, (cpu_set_t *)mask);
}

static int sys_memfd_create(const char *name, unsigned flags)
{
#ifdef SYS_memfd_create
    return (int)syscall(SYS_memfd_create, name, flags);
#else
    (void)name;
    (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}

static long sys_futex(void *uaddr, int op, uint32_t val, const struct timespec *timeout, void *uaddr2,
                      uint32_t val3)
{
    return syscall(SYS_futex, uaddr, op, val, timeout, uaddr2, val3);
}

static int sys_madvise(void *addr, size_t len, int advice) { return madvise(addr, len, advice); }

static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
    return mmap(addr, len, prot, flags, fd, offset);
}

static int sys_ftruncate(int fd, off_t len) { return ftruncate(fd, len); }

#define GB_SYSCALL_DEFAULT(ret, name, params) .name = sys_##name,
#define GB_SYSCALL_DEFAULTS {GB_SYSCALL_OS_LIST(GB_SYSCALL_DEFAULT) GB_SYSCALL_FILE_LIST(GB__SYS_FILE_DEFAULT)}
const gb_syscall_table gb__sys_defaults = GB_SYSCALL_DEFAULTS;
gb_syscall_table gb__sys = GB_SYSCALL_DEFAULTS;
