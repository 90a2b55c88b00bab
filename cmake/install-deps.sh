#!/usr/bin/env bash
# Installs what goblin-core needs to build (and, with --test, to run its test
# suite) when it is missing. Debian/Ubuntu: apt-get; macOS: Homebrew.
# Idempotent: a machine that has everything is left alone and nothing is
# downloaded. Called by `make run` and `make test`.
set -euo pipefail

# --test: also the test tools. --checks: also what `make checks` needs on
# Debian/Ubuntu (clang, npm for the Zig toolchain, the arm64 cross compiler,
# qemu-user and the arm64 -dev packages of the dependencies).
want_test=0
want_checks=0
case "${1:-}" in
  --test) want_test=1 ;;
  --checks) want_test=1 want_checks=1 ;;
esac

log() { printf 'install-deps: %s\n' "$*" >&2; }

if [ "$(uname -s)" = "Darwin" ]; then
  if ! command -v brew >/dev/null 2>&1; then
    log "Homebrew is required on macOS: see https://brew.sh, then re-run."
    exit 1
  fi
  # Scripting: Homebrew has no Lua 5.1 formula any more (lua@5.1 was
  # removed) nor lua-cjson for 5.1: they are built from their
  # release sources into .deps/lua5.1 below (docs/scripting.md, "Building on
  # macOS").
  pkgs=(cmake pkg-config libuv cmocka xxhash zstd jemalloc openssl@3)
  # Homebrew's redis is newer than the Redis 7.0 the differential tests
  # compare with (they skip the comparison, saying so); a redis-server already
  # on PATH (the GitHub workflow's 7.0.15) is used as it is.
  [ $want_test = 1 ] && ! command -v redis-server >/dev/null 2>&1 && pkgs+=(redis)
  # The framework tests' Node clients (ioredis, BullMQ) come from npm at test time.
  [ $want_test = 1 ] && ! command -v npm >/dev/null 2>&1 && pkgs+=(node)
  missing=()
  for p in "${pkgs[@]}"; do
    brew list --versions "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ $want_checks = 1 ]; then
    log "the cross checks (make checks) run on Debian/Ubuntu only; on a Mac, make test is the check"
    exit 1
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    log "brew install ${missing[*]}"
    brew install "${missing[@]}"
  fi
  if [ ! -f "$(dirname "$0")/../.deps/lua5.1/lib/pkgconfig/lua5.1-cjson.pc" ]; then
    log "building Lua 5.1.5 and lua-cjson into .deps/lua5.1 (once)"
    "$(dirname "$0")/build-lua51.sh"
  fi
  if [ $want_test = 1 ] && ! python3 -c 'import redis' >/dev/null 2>&1; then
    log "installing the redis Python client for the integration tests"
    python3 -m pip install --user redis >/dev/null 2>&1 ||
      python3 -m pip install --user --break-system-packages redis
  fi
  if [ $want_test = 1 ] && ! python3 -c 'import celery' >/dev/null 2>&1; then
    log "installing Celery for the framework tests"
    python3 -m pip install --user celery >/dev/null 2>&1 ||
      python3 -m pip install --user --break-system-packages celery || true
  fi
  # rq 1.x from 1.12 on (results in streams, the API test_rq.py asserts;
  # Debian 12 has 1.13); test_rq.py skips, saying so, when pip cannot get it.
  if [ $want_test = 1 ] && ! python3 -c 'import rq' >/dev/null 2>&1; then
    log "installing rq for the framework tests"
    python3 -m pip install --user 'rq>=1.12,<2' >/dev/null 2>&1 ||
      python3 -m pip install --user --break-system-packages 'rq>=1.12,<2' || true
  fi
  exit 0
fi

if ! command -v dpkg >/dev/null 2>&1; then
  log "unsupported system: install cmake, pkg-config, libuv, cmocka, xxhash, zstd and OpenSSL 3 development"
  log "packages yourself (plus redis-server, redis-tools and python3-redis for the tests)."
  exit 0
fi

# Scripting (docs/scripting.md): PUC Lua 5.1, and Redis's cjson library as
# Debian packages it (linked as pkg-config names it; bit is our own).
# jemalloc: the allocator (docs/allocator.md). libssl-dev: TLS (docs/tls.md).
# liburing-dev: io_uring for the sockets (docs/io_uring.md; optional in cmake).
pkgs=(build-essential cmake pkg-config libuv1-dev libcmocka-dev libxxhash-dev libzstd-dev
  liblua5.1-0-dev lua-cjson-dev libjemalloc-dev libssl-dev liburing-dev)
# python3-celery/python3-kombu: the Celery worker test; python3-rq: the rq
# test (Debian 12 has 1.13, which keeps job results in streams); npm (any
# npm will do): the Node clients of the framework tests, installed at test time.
# redis-sentinel: the Sentinel failover tests (test_sentinel.py).
[ $want_test = 1 ] && pkgs+=(redis-server redis-tools redis-sentinel python3 python3-redis clang python3-celery python3-kombu
  python3-rq)
[ $want_test = 1 ] && ! command -v npm >/dev/null 2>&1 && pkgs+=(npm)
[ $want_checks = 1 ] && pkgs+=(gcc-aarch64-linux-gnu qemu-user libuv1-dev:arm64 libcmocka-dev:arm64
  libxxhash-dev:arm64 libzstd-dev:arm64 liblua5.1-0-dev:arm64 lua-cjson-dev:arm64 libjemalloc2:arm64
  libssl-dev:arm64)
# npm may come from elsewhere than Debian (nodesource, nvm): any npm will do.
# (--checks: the Zig toolchain of the darwin compile check.)
# (--test: node-redis for test_node_redis.py, installed by that test from npm.)
[ $want_test = 1 ] && ! command -v npm >/dev/null 2>&1 && pkgs+=(npm)
# With a foreign architecture installed (the arm64 check), a name such as
# libuv1-dev is ambiguous to dpkg -s: ask for the native one by name too.
native=$(dpkg --print-architecture)
installed() {
  dpkg -s "$1" >/dev/null 2>&1 || { [[ $1 != *:* ]] && dpkg -s "$1:$native" >/dev/null 2>&1; }
}
missing=()
for p in "${pkgs[@]}"; do
  installed "$p" || missing+=("$p")
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
# The :arm64 packages need the architecture known to dpkg (multiarch).
if [ $want_checks = 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  log "dpkg --add-architecture arm64"
  $SUDO dpkg --add-architecture arm64
fi
$SUDO apt-get update -qq
[ $want_rt = 1 ] && apt-cache show libclang-rt-dev >/dev/null 2>&1 && missing+=(libclang-rt-dev)
[ ${#missing[@]} -eq 0 ] && exit 0
log "apt-get install ${missing[*]}"
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian starts the packaged redis-server as a service where systemd runs;
# the tests start their own on free ports, so it is harmless either way.
