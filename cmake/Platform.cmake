# Chooses which implementation of the platform contract (platform/*.h) is built.
#   linux  - raw syscalls: sched_setaffinity, mbind/set_mempolicy/move_pages, memfd, futex
#   darwin - QoS classes, os_sync_wait_on_address/__ulock, shm_open, mach clocks
#   posix  - the generic variant: only what POSIX promises; everything else reports
#            GB_ENOTSUP. Builds on Linux too (-DGOBLIN_PLATFORM=posix) so that the
#            portable paths macOS shares are exercised by `make test` here.
if(NOT GOBLIN_PLATFORM)
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    set(_gb_default_platform linux)
  elseif(CMAKE_SYSTEM_NAME STREQUAL "Darwin")
    set(_gb_default_platform darwin)
  else()
    set(_gb_default_platform posix)
  endif()
  set(GOBLIN_PLATFORM ${_gb_default_platform} CACHE STRING "Platform layer: linux, darwin or posix")
endif()
set_property(CACHE GOBLIN_PLATFORM PROPERTY STRINGS linux darwin posix)

if(NOT GOBLIN_PLATFORM MATCHES "^(linux|darwin|posix)$")
  message(FATAL_ERROR "GOBLIN_PLATFORM must be linux, darwin or posix (got '${GOBLIN_PLATFORM}')")
endif()
if(GOBLIN_PLATFORM STREQUAL "linux" AND NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
  message(FATAL_ERROR "GOBLIN_PLATFORM=linux needs a Linux host")
endif()
if(GOBLIN_PLATFORM STREQUAL "darwin" AND NOT CMAKE_SYSTEM_NAME STREQUAL "Darwin")
  message(FATAL_ERROR "GOBLIN_PLATFORM=darwin needs a macOS host")
endif()
message(STATUS "Goblin platform layer: ${GOBLIN_PLATFORM}")

# System libraries the platform layer needs beyond libc. shm_open lived in
# librt before glibc 2.34 (the library still exists, empty, after it).
set(GB_PLATFORM_SYSTEM_LIBS "")
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  find_library(GB_LIBRT rt)
  if(GB_LIBRT)
    # By name, so the linker picks the shared librt like libc itself.
    list(APPEND GB_PLATFORM_SYSTEM_LIBS rt)
  endif()
endif()
include(GNUInstallDirs)
