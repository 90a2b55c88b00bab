/*
 * Defaults for the syscall-table entries a non-Linux variant does not have:
 * each fails with ENOSYS, which is what a kernel without the call says.
 * Included by darwin/syscalls.c and posix/syscalls.c only.
 */
#ifndef GB_PLATFORM_SYSCALLS_STUBS_H
#define GB_PLATFORM_SYSCALLS_STUBS_H

#include <errno.h>

#include "syscalls.h"

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

#endif
