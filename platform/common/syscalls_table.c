/* Name-based access to the syscall table (platform/syscalls.h). The table
 * itself and its defaults live in <os>/syscalls.c. */
#include <string.h>

#include "common/internal.h"
#include "syscalls.h"

int gb_syscalls_override(const char *name, gb_syscall_ptr fn)
{
    if (!name)
        return GB_EINVAL;
    /* A cast from the type-erased pointer back to the entry's own type is
     * the round trip C guarantees for function pointers. */
#define GB_SYSCALL_SET(ret, n, params)                                        \
    if (strcmp(name, #n) == 0) {                                              \
        gb__sys.n = fn ? (gb_sys_##n##_fn)fn : gb__sys_defaults.n;            \
        return 0;                                                             \
    }
    GB_SYSCALL_LIST(GB_SYSCALL_SET)
#undef GB_SYSCALL_SET
    return gb__fail(GB_ENOENT, NULL, 0, "no syscall table entry named '%s'", name);
}

gb_syscall_ptr gb_syscalls_get(const char *name)
{
    if (!name)
        return NULL;
#define GB_SYSCALL_GET(ret, n, params) \
    if (strcmp(name, #n) == 0)         \
        return (gb_syscall_ptr)gb__sys.n;
    GB_SYSCALL_LIST(GB_SYSCALL_GET)
#undef GB_SYSCALL_GET
    return NULL;
}

void gb_syscalls_reset(void) { gb__sys = gb__sys_defaults; }

const char *gb_syscalls_name(size_t i)
{
    static const char *const names[] = {
#define GB_SYSCALL_NAME(ret, n, params) #n,
        GB_SYSCALL_LIST(GB_SYSCALL_NAME)
#undef GB_SYSCALL_NAME
    };
    return i < sizeof names / sizeof names[0] ? names[i] : NULL;
}
