/*
 * Private to platform/: what the per-OS files and the OS-independent files in
 * common/ share. Nothing outside platform/ includes this.
 */
#ifndef GB_PLATFORM_INTERNAL_H
#define GB_PLATFORM_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu.h"
#include "goblin/error.h"
#include "shm.h"
#include "syscalls.h"

/* The live syscall table and its defaults, both defined by <os>/syscalls.c. */
extern gb_syscall_table gb__sys;
extern const gb_syscall_table gb__sys_defaults;

/* The defaults of the table's file entries (GB_SYSCALL_FILE_LIST): libc's
 * calls (common/syscalls_file.c), and file_sync from <os>/file.c (the OS's
 * way to make data durable; -1 with errno on failure). */
#define GB__SYS_FILE_DECL(ret, name, params) ret gb__sys_##name params;
GB_SYSCALL_FILE_LIST(GB__SYS_FILE_DECL)
#undef GB__SYS_FILE_DECL
#define GB__SYS_FILE_DEFAULT(ret, name, params) .name = gb__sys_##name,

/* Why this variant has no NUMA placement, topology or numa_maps: the end of
 * the messages of the shared "not supported" files (common/numa_none.c,
 * topology_none.c, process_none.c). Defined by <os>/caps.c of the variants
 * that use them (darwin, posix). */
extern const char gb__no_numa_why[];

/* Records a failure: formats the message into the thread's last-error slot
 * (gb_plat_last_error) and into err[errlen] when err is not NULL, and
 * returns `code` so callers can write `return gb__fail(...)`. */
int gb__fail(int code, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The GB_E* code for an errno value (EPERM -> GB_EPERM, ENOSYS -> GB_ENOTSUP,
 * EPIPE -> GB_ECLOSED, anything unmapped -> GB_ESYS). */
int gb__errno_code(int e);

/* Range-list parser with the byte offset of the first bad character. */
int gb__topo_parse_cpulist(const char *text, gb_cpuset *out, size_t *bad_at);

/* Writes to every page of [addr, addr+len) without changing its contents,
 * catching SIGBUS (empty huge-page pool, object truncated under us) and
 * turning it into GB_ENOMEM. The previous SIGBUS disposition is restored
 * before returning. */
int gb__touch_pages(void *addr, size_t len);

/* The shm_open object of darwin/posix (and Linux's fallback when the kernel
 * lacks memfd): <= 31-char unique name, unlinked at once, sized once. */
int gb__shm_create_named(size_t size, gb_shm *out, char *err, size_t errlen);

/* mmap(MAP_SHARED) of fd; fills out (fd, addr, size, huge). */
int gb__shm_map_fd(int fd, size_t size, bool huge, gb_shm *out, char *err, size_t errlen);

/* gb_shm_map on every platform: checks that fd is an object holding at
 * least size bytes (0: all of it), then maps it. detect_hugetlbfs (Linux):
 * a block size above the page size marks a huge-page object. */
int gb__shm_map_checked(int fd, size_t size, bool detect_hugetlbfs, gb_shm *out);

/* Makes fd non-blocking and close-on-exec (the darwin and posix wake
 * descriptors); -1 with errno set on failure. */
int gb__fd_set_nonblock_cloexec(int fd);

/* The start of every gb_park_wait (common/park_common.c): GB_EINVAL for a
 * misaligned word, 0 when *word already differs from expected, GB_ETIMEDOUT
 * for a zero timeout; GB__PARK_WAIT when the caller must wait, with
 * *deadline_ns the gb_clock_mono_ns() time to give up at
 * (GB__PARK_NO_DEADLINE: never). */
#define GB__PARK_WAIT 1
#define GB__PARK_NO_DEADLINE UINT64_MAX
int gb__park_enter(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns, uint64_t *deadline_ns);

/* gb_park_wake's argument check: 0, or GB_EINVAL for a misaligned word or a
 * count below 1. */
int gb__park_wake_check(_Atomic uint32_t *word, int count);

static inline size_t gb__round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

/* Copies the C library's own name of the program out of argv's memory
 * before the process title reuses it (<os>/proctitle.c of the variants
 * that set titles; common/proctitle_argv.c calls it). 0 or GB_ENOMEM. */
int gb__proctitle_keep_program_name(void);

/* The crash report's memory test (linux/memtest.c; common/memtest_none.c
 * elsewhere): _prepare maps its backup buffer ahead of any crash; _process
 * tests every anonymous writable mapping, its progress written to fd, and
 * returns the number of errors, or -1 where it cannot run. */
int gb__memtest_prepare(void);
int gb__memtest_process(int fd);

#endif
