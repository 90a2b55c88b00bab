/*
 * Goblin Core error codes, shared by the server, the platform layer and the
 * client library.
 *
 * Convention (everywhere in the tree): a function that can fail returns 0 on
 * success and a negative GB_E* code on failure. The code says *what kind* of
 * failure; the words a person needs (which file, which node, what to do) go
 * into the message the caller logs or replies with.
 */
#ifndef GOBLIN_ERROR_H
#define GOBLIN_ERROR_H

#include "goblin/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, description) */
#define GB_ERROR_LIST(X)                                                       \
    X(GB_OK, 0, "success")                                                     \
    X(GB_ENOMEM, -1, "out of memory")                                          \
    X(GB_EINVAL, -2, "invalid argument")                                       \
    X(GB_ENOTSUP, -3, "not supported on this platform")                        \
    X(GB_ENONUMA, -4, "NUMA is not available (kernel or container)")          \
    X(GB_EPERM, -5, "permission denied")                                       \
    X(GB_ENOENT, -6, "no such file, object or entry")                          \
    X(GB_EIO, -7, "input/output error")                                        \
    X(GB_EPARSE, -8, "malformed input")                                        \
    X(GB_ETIMEDOUT, -9, "timed out")                                           \
    X(GB_EREMOTE, -10, "memory is not on the requested NUMA node")             \
    X(GB_EBUSY, -11, "resource busy or pool exhausted")                        \
    X(GB_ERANGE, -12, "value out of range")                                    \
    X(GB_ECLOSED, -13, "peer closed the connection")                           \
    X(GB_EPROTO, -14, "protocol violation")                                    \
    X(GB_EAGAIN, -15, "try again")                                             \
    X(GB_EEXIST, -16, "already exists")                                        \
    X(GB_ESYS, -17, "system call failed")

enum gb_error {
#define GB_ERROR_ENUM(name, value, desc) name = value,
    GB_ERROR_LIST(GB_ERROR_ENUM)
#undef GB_ERROR_ENUM
};

/* A short, static, human-readable description of a GB_E* code. */
GB_EXPORT const char *gb_strerror(int code);

/* The symbolic name of a code ("GB_ENOMEM"), for logs and test messages. */
GB_EXPORT const char *gb_error_name(int code);

#ifdef __cplusplus
}
#endif

#endif
