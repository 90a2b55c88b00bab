# `make package` (top-level Makefile) / `cmake --build <dir> --target package`:
# a per-OS tarball with the server, the client library, headers, the SBE schema
# and the pkg-config file. Install rules live with each target.
#
# File name: goblin-core-<version>-<os>-<arch>-<platform>.tar.gz, e.g.
#   goblin-core-0.1.0-linux-x86_64-linux.tar.gz
#   goblin-core-0.1.0-macos-arm64-darwin.tar.gz
#   goblin-core-0.1.0-linux-x86_64-posix.tar.gz   (generic POSIX platform layer)
# <os>/<arch> describe where it runs; <platform> which platform layer is inside.
set(CPACK_GENERATOR "TGZ")
set(CPACK_PACKAGE_NAME "goblin-core")
set(CPACK_PACKAGE_VENDOR "Goblin Core")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Redis-compatible in-memory server with a shared-memory ring transport")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})

if(CMAKE_SYSTEM_NAME STREQUAL "Darwin")
  set(_gb_pkg_os macos)
else()
  string(TOLOWER "${CMAKE_SYSTEM_NAME}" _gb_pkg_os)
endif()

# The architecture the binaries are built for: CMAKE_OSX_ARCHITECTURES when it
# names exactly one (macos-release cross-builds arm64 on an Intel Mac), else the
# host processor; spelled the same way on every OS.
set(_gb_pkg_arch "${CMAKE_SYSTEM_PROCESSOR}")
list(LENGTH CMAKE_OSX_ARCHITECTURES _gb_osx_arch_count)
if(_gb_osx_arch_count EQUAL 1)
  set(_gb_pkg_arch "${CMAKE_OSX_ARCHITECTURES}")
elseif(_gb_osx_arch_count GREATER 1)
  set(_gb_pkg_arch universal)
endif()
string(TOLOWER "${_gb_pkg_arch}" _gb_pkg_arch)
if(_gb_pkg_arch MATCHES "^(amd64|x64|x86-64)$")
  set(_gb_pkg_arch x86_64)
elseif(_gb_pkg_arch MATCHES "^(aarch64|arm64e?)$")
  set(_gb_pkg_arch arm64)
endif()

set(CPACK_PACKAGE_FILE_NAME
    "goblin-core-${PROJECT_VERSION}-${_gb_pkg_os}-${_gb_pkg_arch}-${GOBLIN_PLATFORM}")
include(CPack)
