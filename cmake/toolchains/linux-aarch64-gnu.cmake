# Cross toolchain for arm64 Linux servers (Graviton, Ampere, Neoverse) with
# Debian's cross compiler; tests run under qemu-user. Used by
# cmake/check-aarch64.sh and `make package-aarch64`.
#   apt-get install gcc-aarch64-linux-gnu qemu-user
#   dpkg --add-architecture arm64 && apt-get install libuv1-dev:arm64 libcmocka-dev:arm64 \
#     libxxhash-dev:arm64 libzstd-dev:arm64
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
# ctest runs every test executable through this, so the unit suite runs here.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
# The arm64 .pc files of the multiarch -dev packages, never the host's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
