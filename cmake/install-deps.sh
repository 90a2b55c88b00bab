#!/usr/bin/env bash
# Installs what goblin-core needs to build (and, with --test, to run its test
# suite) when it is missing. Debian/Ubuntu: apt-get; macOS: Homebrew.
# Idempotent: a machine that has everything is left alone and nothing is
# downloaded. Called by `make run` and `make test`.
set -euo pipefail

want_test=0
[ "${1:-}" = "--test" ] && want_test=1

log() { printf 'install-deps: %s\n' "$*" >&2; }

if [ "$(uname -s)" = "Darwin" ]; then
  if ! command -v brew >/dev/null 2>&1; then
    log "Homebrew is required on macOS: see https://brew.sh, then re-run."
    exit 1
  fi
  pkgs=(cmake pkg-config libuv cmocka xxhash zstd)
  [ $want_test = 1 ] && pkgs+=(redis)
  missing=()
  for p in "${pkgs[@]}"; do
    brew list --versions "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "brew install ${missing[*]}"
    brew install "${missing[@]}"
  fi
  if [ $want_test = 1 ] && ! python3 -c 'import redis' >/dev/null 2>&1; then
    log "installing the redis Python client for the integration tests"
    python3 -m pip install --user redis >/dev/null 2>&1 ||
      python3 -m pip install --user --break-system-packages redis
  fi
  exit 0
fi

if ! command -v dpkg >/dev/null 2>&1; then
  log "unsupported system: install cmake, pkg-config, libuv, cmocka, xxhash and zstd development"
  log "packages yourself (plus redis-server, redis-tools and python3-redis for the tests)."
  exit 0
fi

pkgs=(build-essential cmake pkg-config libuv1-dev libcmocka-dev libxxhash-dev libzstd-dev)
[ $want_test = 1 ] && pkgs+=(redis-server redis-tools python3 python3-redis clang)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done

# cmake/run-fuzzers.sh links clang's libFuzzer and sanitizer runtimes.
# Debian 12 (and Ubuntu 23.04) on ship them apart from clang, in
# libclang-rt-dev, which clang only recommends (and this script installs
# without recommends); older releases have them in a package clang depends
# on, and no libclang-rt-dev. So: wanted when clang cannot link a fuzzer.
clang_links_fuzzer() {
  command -v clang >/dev/null 2>&1 || return 1
  local out
  out=$(mktemp)
  printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }\n' |
    clang -x c -fsanitize=fuzzer,address,undefined - -o "$out" >/dev/null 2>&1
  local rc=$?
  rm -f "$out"
  return $rc
}
want_rt=0
[ $want_test = 1 ] && ! dpkg -s libclang-rt-dev >/dev/null 2>&1 && ! clang_links_fuzzer && want_rt=1
[ ${#missing[@]} -eq 0 ] && [ $want_rt = 0 ] && exit 0

SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    log "missing packages (${missing[*]}) and not root: install them or run as root"
    exit 1
  fi
fi
$SUDO apt-get update -qq
[ $want_rt = 1 ] && apt-cache show libclang-rt-dev >/dev/null 2>&1 && missing+=(libclang-rt-dev)
[ ${#missing[@]} -eq 0 ] && exit 0
log "apt-get install ${missing[*]}"
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian starts the packaged redis-server as a service where systemd runs;
# the tests start their own on free ports, so it is harmless either way.
