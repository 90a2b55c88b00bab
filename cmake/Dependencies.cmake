# Every third-party dependency comes from the system through pkg-config.
# Debian/Ubuntu: libuv1-dev libcmocka-dev libxxhash-dev libzstd-dev libjemalloc-dev libssl-dev pkg-config
# macOS (Homebrew): libuv cmocka xxhash zstd jemalloc openssl@3 pkg-config
# cmake/install-deps.sh installs them; `make run` and `make test` call it.
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBUV REQUIRED IMPORTED_TARGET libuv>=1.40)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash>=0.8)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd>=1.4)
# TLS (transport/tls, docs/tls.md): OpenSSL 3, the system's (Debian's
# libssl-dev, Homebrew's openssl@3, which is keg-only: its pkgconfig folder
# is searched when brew has it).
if(APPLE AND EXISTS /opt/homebrew/opt/openssl@3/lib/pkgconfig)
  set(ENV{PKG_CONFIG_PATH} "/opt/homebrew/opt/openssl@3/lib/pkgconfig:$ENV{PKG_CONFIG_PATH}")
elseif(APPLE AND EXISTS /usr/local/opt/openssl@3/lib/pkgconfig)
  set(ENV{PKG_CONFIG_PATH} "/usr/local/opt/openssl@3/lib/pkgconfig:$ENV{PKG_CONFIG_PATH}")
endif()
pkg_check_modules(OPENSSL REQUIRED IMPORTED_TARGET openssl>=3.0)
# The allocator (docs/allocator.md): Debian's libjemalloc-dev, Homebrew's jemalloc.
if(GOBLIN_ALLOCATOR STREQUAL "jemalloc")
  pkg_check_modules(JEMALLOC REQUIRED IMPORTED_TARGET jemalloc>=5)
endif()
if(GOBLIN_BUILD_TESTS)
  pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka>=1.1)
endif()
find_package(Threads REQUIRED)
# Scripting (engine/script, docs/scripting.md): PUC Lua 5.1, chosen over
# LuaJIT by measurement (docs/scripting.md, "Which Lua"): LuaJIT's compiled
# code never calls the count hook busy scripts and SCRIPT KILL rely on, and
# Redis embeds PUC Lua 5.1. cjson is Debian's lua-cjson-dev (MIT licence, the
# same upstream version Redis bundles), linked as the library pkg-config
# names, so the darwin compile check's staged .pc files stand in for it;
# bit, cmsgpack and struct are the project's own (engine/script/lib_*.c:
# bit is, because the LuaBitOp 1.0.2 that systems ship overflows a stack
# buffer on bit.tohex(x, -2^31), CVE-2024-31449).
# Where the system has no packages for them (macOS), cmake/build-lua51.sh
# builds them from source into .deps/lua5.1 (make's install step does this):
# that prefix is searched first when it exists.
if(EXISTS ${CMAKE_SOURCE_DIR}/.deps/lua5.1/lib/pkgconfig)
  list(PREPEND CMAKE_PREFIX_PATH ${CMAKE_SOURCE_DIR}/.deps/lua5.1)
endif()
pkg_check_modules(LUA REQUIRED IMPORTED_TARGET lua5.1)
pkg_check_modules(LUA_CJSON REQUIRED IMPORTED_TARGET lua5.1-cjson)
# io_uring for the connected sockets (docs/io_uring.md): Debian's
# liburing-dev, optional. On (the default) uses it when pkg-config finds it
# on the linux platform layer; darwin, posix and a Linux without it keep
# the libuv path only (platform/common/uring_none.c).
option(GOBLIN_IO_URING "io_uring socket I/O on Linux when liburing is found" ON)
set(GB_HAVE_IO_URING OFF)
# (GOBLIN_PLATFORM is chosen after this file, in Platform.cmake: unset, a
# Linux host gets linux.)
if(GOBLIN_IO_URING AND CMAKE_SYSTEM_NAME STREQUAL "Linux" AND (NOT GOBLIN_PLATFORM OR GOBLIN_PLATFORM STREQUAL "linux"))
  pkg_check_modules(LIBURING IMPORTED_TARGET liburing>=2.3)
  if(LIBURING_FOUND)
    set(GB_HAVE_IO_URING ON)
  endif()
endif()
message(STATUS "io_uring socket I/O: ${GB_HAVE_IO_URING}")
