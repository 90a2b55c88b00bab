#!/usr/bin/env bash
# The arm64 Linux check: the whole tree cross-built with Debian's
# aarch64-linux-gnu-gcc (-Werror) against the arm64 multiarch -dev packages,
# and the unit suite run under qemu-user (ctest runs each test through
# CMAKE_CROSSCOMPILING_EMULATOR). Covers what only arm64 compiles or runs:
# cntvct_el0/cntfrq_el0, gb_cpu_relax's isb, the arm64 syscall numbers, the
# 128-byte isolation and ring layout asserts on a 64-byte-line CPU, and the
# weaker memory model's code paths (qemu runs them on x86's ordering, so
# ordering itself is the TSan check's job, cmake/check-tsan.sh).
# Needs `cmake/install-deps.sh --checks` (run by `make check-aarch64`).
# Usage: cmake/check-aarch64.sh [build-dir]   (default build-aarch64)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-aarch64}
cmake -S . -B "$out" -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/linux-aarch64-gnu.cmake \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGOBLIN_WERROR=ON -DGOBLIN_PLATFORM=linux >/dev/null
cmake --build "$out" -j "${JOBS:-2}"
readelf -h "$out/goblin-core" | grep -q "Machine:.*AArch64" ||
  { echo "check-aarch64: $out/goblin-core is not an arm64 binary" >&2; exit 1; }
ctest --test-dir "$out" --output-on-failure -j "${JOBS:-2}" -L unit
