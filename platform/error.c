/* gb_strerror / gb_error_name: the tables behind include/goblin/error.h; and
 * the platform layer's thread-local "what went wrong" message. */
#include "goblin/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "common/internal.h"
#include "errmsg.h"

const char *gb_strerror(int code)
{
    switch (code) {
#define GB_ERROR_DESC(name, value, desc) \
    case value:                          \
        return desc;
        GB_ERROR_LIST(GB_ERROR_DESC)
#undef GB_ERROR_DESC
    }
    return "unknown error";
}

const char *gb_error_name(int code)
{
    switch (code) {
#define GB_ERROR_NAME(name, value, desc) \
    case value:                          \
        return #name;
        GB_ERROR_LIST(GB_ERROR_NAME)
#undef GB_ERROR_NAME
    }
    return "GB_E?";
}

/* 512 bytes: a path under a configurable sysfs root plus a sentence. */
static _Thread_local char last_error[512];

const char *gb_plat_last_error(void) { return last_error; }

int gb__fail(int code, char *err, size_t errlen, const char *fmt, ...)
{
    /* The caller's errno may be read after we return ("...: %s",
     * strerror(errno)) - keep it. */
    int saved = errno;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    if (err && errlen)
        snprintf(err, errlen, "%s", last_error);
    errno = saved;
    return code;
}

int gb__errno_code(int e)
{
    /* An if-chain, not a switch: ENOTSUP == EOPNOTSUPP and EAGAIN ==
     * EWOULDBLOCK on some systems and not on others. */
    if (e == ENOMEM || e == ENOSPC)
        return GB_ENOMEM;
    if (e == EINVAL || e == EBADF || e == EFAULT)
        return GB_EINVAL;
    if (e == ENOSYS || e == ENOTSUP || e == EOPNOTSUPP)
        return GB_ENOTSUP;
    if (e == EPERM || e == EACCES)
        return GB_EPERM;
    if (e == ENOENT)
        return GB_ENOENT;
    if (e == EIO)
        return GB_EIO;
    if (e == ETIMEDOUT)
        return GB_ETIMEDOUT;
    if (e == EBUSY)
        return GB_EBUSY;
    if (e == ERANGE)
        return GB_ERANGE;
    if (e == EPIPE || e == ECONNRESET || e == ENOTCONN)
        return GB_ECLOSED;
    if (e == EAGAIN || e == EWOULDBLOCK)
        return GB_EAGAIN;
    if (e == EEXIST)
        return GB_EEXIST;
    return GB_ESYS;
}
