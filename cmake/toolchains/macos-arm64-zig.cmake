# Cross toolchain for the darwin compile check (cmake/check-darwin-compile.sh):
# Zig's clang aimed at arm64-apple-macos13 with the macOS SDK headers Zig
# ships. Only compiling is meaningful: the check never links (there are no
# macOS builds of libuv, CMocka, xxHash or zstd here), so configure-time
# checks are compiled as static libraries.
#
#   GB_DARWIN_CC      wrapper that runs `zig cc -target aarch64-macos.13.0`
#                     with the os_sync_wait_on_address declaration header on
#                     its system include path (stage/sdk)
#   GB_DARWIN_STAGE   folder with include/ (the dependency headers) and
#                     pkgconfig/ (.pc files pointing there)
set(CMAKE_SYSTEM_NAME Darwin)
set(CMAKE_SYSTEM_PROCESSOR arm64)
set(CMAKE_C_COMPILER "${GB_DARWIN_CC}")
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
# The SDK lives inside the compiler; keep CMake from asking xcrun for one.
set(CMAKE_OSX_SYSROOT "" CACHE PATH "" FORCE)
set(ENV{PKG_CONFIG_LIBDIR} "${GB_DARWIN_STAGE}/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(CMAKE_FIND_ROOT_PATH "${GB_DARWIN_STAGE}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES GB_DARWIN_CC GB_DARWIN_STAGE)
