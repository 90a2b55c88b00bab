/*
 * NOT APPLE'S HEADER. A minimal declaration-compatible stand-in for the macOS
 * 14.4 SDK's <os/os_sync_wait_on_address.h> (libplatform), used ONLY by the
 * darwin compile check (cmake/check-darwin-compile.sh) on Linux, where the
 * Zig toolchain supplies the rest of the macOS SDK headers but omits this one.
 * A real Mac build never sees it: Xcode's SDK has the real header.
 *
 * Written from Apple's documentation of the API (developer.apple.com/
 * documentation/os/os_sync_wait_on_address and its siblings): the same
 * function names, parameter types, flag values and availability (macOS 14.4),
 * so platform/darwin/park.c is type-checked against the documented API and
 * clang's -Wunguarded-availability still demands the __builtin_available
 * guard. If the real header changes a signature, only a real Mac (the GitHub
 * workflow) notices; docs/macos.md says so.
 */
#ifndef GB_DARWIN_SDK_COMPAT_OS_SYNC_WAIT_ON_ADDRESS_H
#define GB_DARWIN_SDK_COMPAT_OS_SYNC_WAIT_ON_ADDRESS_H

#include <os/base.h>
#include <os/clock.h>
#include <stddef.h>
#include <stdint.h>

#define GB_COMPAT_OS_SYNC_API __attribute__((availability(macos, introduced = 14.4)))

OS_OPTIONS(os_sync_wait_on_address_flags, uint32_t,
           OS_SYNC_WAIT_ON_ADDRESS_NONE = 0x00000000,
           OS_SYNC_WAIT_ON_ADDRESS_SHARED = 0x00000001,
);

OS_OPTIONS(os_sync_wake_by_address_flags, uint32_t,
           OS_SYNC_WAKE_BY_ADDRESS_NONE = 0x00000000,
           OS_SYNC_WAKE_BY_ADDRESS_SHARED = 0x00000001,
);

GB_COMPAT_OS_SYNC_API
extern int os_sync_wait_on_address(void *addr, uint64_t value, size_t size, os_sync_wait_on_address_flags_t flags);

GB_COMPAT_OS_SYNC_API
extern int os_sync_wait_on_address_with_deadline(void *addr, uint64_t value, size_t size,
                                                 os_sync_wait_on_address_flags_t flags, os_clockid_t clockid,
                                                 uint64_t deadline);

GB_COMPAT_OS_SYNC_API
extern int os_sync_wait_on_address_with_timeout(void *addr, uint64_t value, size_t size,
                                                os_sync_wait_on_address_flags_t flags, os_clockid_t clockid,
                                                uint64_t timeout_ns);

GB_COMPAT_OS_SYNC_API
extern int os_sync_wake_by_address_any(void *addr, size_t size, os_sync_wake_by_address_flags_t flags);

GB_COMPAT_OS_SYNC_API
extern int os_sync_wake_by_address_all(void *addr, size_t size, os_sync_wake_by_address_flags_t flags);

#endif
