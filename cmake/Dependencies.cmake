# Every third-party dependency comes from the system through pkg-config.
# Debian/Ubuntu: libuv1-dev libcmocka-dev libxxhash-dev libzstd-dev pkg-config
# macOS (Homebrew): libuv cmocka xxhash zstd pkg-config
# cmake/install-deps.sh installs them; `make run` and `make test` call it.
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBUV REQUIRED IMPORTED_TARGET libuv>=1.40)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash>=0.8)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd>=1.4)
if(GOBLIN_BUILD_TESTS)
  pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka>=1.1)
endif()
find_package(Threads REQUIRED)
