# Cross toolchain for arm64 Linux servers (Graviton, Ampere, Neoverse) with
# Debian's cross compiler; tests run under qemu-user. Used by
# cmake/check-aarch64.sh and `make package-aarch64`.
#   apt-get install gcc-aarch64-linux-gnu qemu-user
#   dpkg --add-architecture arm64 && apt-get install libuv1-dev:arm64 libcmocka-dev:arm64 \
#     libxxhash-dev:arm64 libzstd-dev:arm64 libjemalloc2:arm64
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
# ctest runs every test executable through this, so the unit suite runs here.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
# The arm64 .pc files of the multiarch -dev packages, never the host's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# jemalloc (docs/allocator.md): Debian's libjemalloc-dev is not multi-arch
# (its arm64 package would replace the host's), but the arm64 library
# (libjemalloc2:arm64) is, and the header is the same for every 64-bit
# target: a .pc file staged in .deps/ (beside the macOS Lua build's; not in
# the build tree: this file is read again for each try_compile, whose
# binary folder is temporary) joins the two when the arm64 -dev package is
# not there.
if(NOT EXISTS /usr/lib/aarch64-linux-gnu/pkgconfig/jemalloc.pc
   AND EXISTS /usr/lib/aarch64-linux-gnu/libjemalloc.so.2 AND EXISTS /usr/include/jemalloc/jemalloc.h)
  get_filename_component(_gb_je_stage ${CMAKE_CURRENT_LIST_DIR}/../../.deps/jemalloc-arm64 ABSOLUTE)
  file(COPY /usr/include/jemalloc/jemalloc.h DESTINATION ${_gb_je_stage}/include/jemalloc)
  file(MAKE_DIRECTORY ${_gb_je_stage}/lib)
  file(CREATE_LINK /usr/lib/aarch64-linux-gnu/libjemalloc.so.2 ${_gb_je_stage}/lib/libjemalloc.so SYMBOLIC)
  file(STRINGS /usr/include/jemalloc/jemalloc.h _gb_je_ver REGEX "^#define JEMALLOC_VERSION_(MAJOR|MINOR|BUGFIX) ")
  string(REGEX REPLACE "[^;]*MAJOR ([0-9]+);[^;]*MINOR ([0-9]+);[^;]*BUGFIX ([0-9]+).*" "\\1.\\2.\\3" _gb_je_ver "${_gb_je_ver}")
  file(WRITE ${_gb_je_stage}/pkgconfig/jemalloc.pc
       "Name: jemalloc\nDescription: arm64 jemalloc, staged by the toolchain file\nVersion: ${_gb_je_ver}\n"
       "Cflags: -I${_gb_je_stage}/include\nLibs: -L${_gb_je_stage}/lib -ljemalloc\n")
  set(ENV{PKG_CONFIG_LIBDIR} "$ENV{PKG_CONFIG_LIBDIR}:${_gb_je_stage}/pkgconfig")
endif()
