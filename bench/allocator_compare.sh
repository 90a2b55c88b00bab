#!/usr/bin/env bash
# The allocator evaluation of docs/allocator.md: the same tree built with
# GOBLIN_ALLOCATOR=libc and =jemalloc, side by side in interleaved rounds.
# For each: 1M keys `key:%08d` with 16-byte values loaded with redis-cli
# --pipe (used_memory per key, RSS), a synchronous FLUSHALL of them (ms),
# then redis-benchmark SET/GET at pipeline 16 on the other core.
# Usage: bench/allocator_compare.sh LIBC_BINARY JEMALLOC_BINARY [ROUNDS]
#   e.g. cmake -S . -B build-libc -DGOBLIN_ALLOCATOR=libc -DGOBLIN_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release
#        cmake --build build-libc --target goblin_core_server  (and the same for build-release)
#        bench/allocator_compare.sh build-libc/goblin-core build-release/goblin-core 3
set -euo pipefail
libc=${1:?libc binary}; je=${2:?jemalloc binary}; rounds=${3:-3}
port=${PORT:-7798}
load=$(mktemp); trap 'rm -f "$load"' EXIT
python3 - >"$load" <<'PY'
import sys
w = sys.stdout.write
for i in range(1000000):
    k = "key:%08d" % i
    w("*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$16\r\n%s\r\n" % (len(k), k, "v" * 16))
PY
field() { redis-cli -p "$port" info memory | tr -d '\r' | sed -n "s/^$1://p"; }
for ((r = 1; r <= rounds; r++)); do
  for b in "$libc" "$je"; do
    taskset -c 0 "$b" --port "$port" --save "" --appendonly no >/dev/null 2>&1 &
    pid=$!
    until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.05; done
    base=$(field used_memory)
    redis-cli -p "$port" --pipe <"$load" >/dev/null
    used=$(field used_memory); rss=$(field used_memory_rss); alloc=$(field mem_allocator)
    t0=$(date +%s%N); redis-cli -p "$port" flushall >/dev/null; t1=$(date +%s%N)
    rps=$(taskset -c 1 redis-benchmark -p "$port" -n 300000 -P 16 -t set,get -q -r 1000000 | tr '\r' '\n' |
      awk '/^(SET|GET): [0-9.]+ requests/ {printf "%s %.2fM rps  ", $1, $2 / 1e6}')
    printf 'round %d %-16s %5d B/key  rss %4d MB  flushall %4d ms  %s\n' "$r" "$alloc" \
      $(((used - base) / 1000000)) $((rss >> 20)) $(((t1 - t0) / 1000000)) "$rps"
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done
