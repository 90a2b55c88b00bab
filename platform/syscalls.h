/*
 * The one replaceable table every raw system call of the platform layer goes
 * through (SQLite's aSyscall[] pattern), so tests can inject ENOSYS, EPERM,
 * ENOMEM, EINVAL and wrong-node results that this machine cannot produce,
 * and ENOSPC or EIO in the middle of a save (persistence's file I/O comes
 * here through platform/file.h's gb_plat_open & co).
 *
 * Every entry follows the libc convention: failure is -1 (or MAP_FAILED)
 * with errno set. On darwin/posix the Linux-only entries (NUMA, affinity,
 * memfd, futex) fail with ENOSYS; nothing there calls them.
 *
 * Overriding is for tests and one-time setup: it is not thread-safe with
 * respect to threads calling into the platform layer at the same moment.
 */
#ifndef GB_PLATFORM_SYSCALLS_H
#define GB_PLATFORM_SYSCALLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* X(return type, name, parameter list): every entry. */
#define GB_SYSCALL_LIST(X) GB_SYSCALL_OS_LIST(X) GB_SYSCALL_FILE_LIST(X)

/* The calls whose defaults each OS's syscalls.c provides. */
#define GB_SYSCALL_OS_LIST(X)                                                                      \
    X(long, set_mempolicy, (int mode, const unsigned long *nodemask, unsigned long maxnode))       \
    X(long, mbind,                                                                                 \
      (void *addr, unsigned long len, int mode, const unsigned long *nodemask,                     \
       unsigned long maxnode, unsigned flags))                                                     \
    X(long, get_mempolicy,                                                                         \
      (int *mode, unsigned long *nodemask, unsigned long maxnode, void *addr, unsigned long flags)) \
    X(long, move_pages,                                                                            \
      (int pid, unsigned long count, void **pages, const int *nodes, int *status, int flags))      \
    X(int, sched_setaffinity, (pid_t pid, size_t setsize, const void *mask))                       \
    X(int, sched_getaffinity, (pid_t pid, size_t setsize, void *mask))                             \
    X(int, memfd_create, (const char *name, unsigned flags))                                       \
    X(long, futex,                                                                                 \
      (void *uaddr, int op, uint32_t val, const struct timespec *timeout, void *uaddr2,            \
       uint32_t val3))                                                                             \
    X(int, madvise, (void *addr, size_t len, int advice))                                          \
    X(void *, mmap, (void *addr, size_t len, int prot, int flags, int fd, off_t offset))           \
    X(int, ftruncate, (int fd, off_t len))

/* The file calls, the same libc calls on every POSIX system (their defaults
 * live in common/syscalls_file.c) except file_sync, the OS's data sync of
 * gb_plat_file_sync. Named file_* because libc may define open, read and
 * write as macros. */
#define GB_SYSCALL_FILE_LIST(X)                                                                    \
    X(int, file_open, (const char *path, int flags, mode_t mode))                                 \
    X(int, file_close, (int fd))                                                                   \
    X(ssize_t, file_read, (int fd, void *buf, size_t n))                                           \
    X(ssize_t, file_pread, (int fd, void *buf, size_t n, off_t offset))                            \
    X(ssize_t, file_write, (int fd, const void *buf, size_t n))                                    \
    X(int, file_sync, (int fd))                                                                    \
    X(int, file_fsync, (int fd))                                                                   \
    X(int, file_rename, (const char *from, const char *to))                                        \
    X(int, file_unlink, (const char *path))

#define GB_SYSCALL_TYPEDEF(ret, name, params) typedef ret(*gb_sys_##name##_fn) params;
GB_SYSCALL_LIST(GB_SYSCALL_TYPEDEF)
#undef GB_SYSCALL_TYPEDEF

typedef struct {
#define GB_SYSCALL_FIELD(ret, name, params) gb_sys_##name##_fn name;
    GB_SYSCALL_LIST(GB_SYSCALL_FIELD)
#undef GB_SYSCALL_FIELD
} gb_syscall_table;

/* A type-erased entry, as SQLite's sqlite3_syscall_ptr. */
typedef void (*gb_syscall_ptr)(void);

/* Replaces entry `name` ("mbind", "futex", ...) with `fn`; NULL restores the
 * default. GB_ENOENT for an unknown name. */
int gb_syscalls_override(const char *name, gb_syscall_ptr fn);

/* Type-checked form: GB_SYSCALL_OVERRIDE(move_pages, fake_move_pages) fails
 * to compile if fake_move_pages has the wrong signature. */
#define GB_SYSCALL_OVERRIDE(name, fn) \
    gb_syscalls_override(#name, (gb_syscall_ptr)(gb_sys_##name##_fn){(fn)})

/* The current entry, or NULL for an unknown name. */
gb_syscall_ptr gb_syscalls_get(const char *name);

/* Restores every default. */
void gb_syscalls_reset(void);

/* The i-th entry's name, or NULL past the end (for listing). */
const char *gb_syscalls_name(size_t i);

#endif
