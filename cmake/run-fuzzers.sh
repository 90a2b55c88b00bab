#!/usr/bin/env bash
# Builds the libFuzzer harnesses of test/fuzz (GOBLIN_FUZZ=ON, clang, ASan +
# UBSan) in build-fuzz and runs each for a bounded time (docs/fuzzing.md).
#
#   cmake/run-fuzzers.sh                 every harness, FUZZ_SECONDS (15) each
#   cmake/run-fuzzers.sh resp aof        only these
#   FUZZ_SECONDS=300 cmake/run-fuzzers.sh snaprecord
#
# Each harness starts from a scratch copy of test/fuzz/corpus/<name>/ plus
# test/fuzz/regressions/<name>/ (the tree is never written) and prints its executions per second, total
# executions and final corpus size. A crash, a sanitizer report, a leak, a
# timeout or an out-of-memory fails the script after the remaining harnesses
# ran; the input that did it is kept under build-fuzz/artifacts/ and its path
# printed: minimise it (the harness with -minimize_crash=1 -runs=10000 FILE),
# add it to test/fuzz/regressions/<name>/ and fix the bug.
# FUZZ_KEEP_CORPUS=DIR keeps the grown corpora there (for merging seeds).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-15}
build=build-fuzz
jobs=$( (nproc || sysctl -n hw.ncpu || echo 2) 2>/dev/null)
cc=${FUZZ_CC:-clang}
log() { printf 'fuzz: %s\n' "$*"; }

if ! command -v "$cc" >/dev/null 2>&1; then
  log "$cc not found: cmake/install-deps.sh --test installs clang and its runtime (libFuzzer)"
  exit 1
fi
mkdir -p "$build"
start=$(date +%s)
cmake -S . -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGOBLIN_FUZZ=ON \
  -DGOBLIN_BUILD_TESTS=OFF -DGOBLIN_WERROR=ON >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" --target fuzzers -j "$jobs" >"$build/build.log" 2>&1 ||
  { tail -50 "$build/build.log"; exit 1; }
log "harnesses built in $(( $(date +%s) - start )) s"

harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  for f in test/fuzz/fuzz_*.c; do
    n=$(basename "$f" .c)
    harnesses+=("${n#fuzz_}")
  done
fi

# Harnesses whose parser reads a file write one per input (and the
# snapshot writer syncs it): scratch space in memory when the OS has it.
base=${TMPDIR:-/tmp}
[ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm
work=$(mktemp -d "$base/gb-fuzz-run.XXXXXX")
trap 'rm -rf "$work"' EXIT
artifacts=$(pwd)/$build/artifacts
mkdir -p "$artifacts"

failed=()
for h in "${harnesses[@]}"; do
  bin=$build/fuzz/fuzz_$h
  [ -x "$bin" ] || { log "$h: no harness $bin"; failed+=("$h"); continue; }
  corpus=$work/corpus-$h
  mkdir -p "$corpus" "$work/tmp-$h"
  cp test/fuzz/corpus/"$h"/* "$corpus"/ 2>/dev/null || true
  seeds=$(find "$corpus" -type f | wc -l)
  # Past crashes run first, read-only (libFuzzer writes into the first
  # directory only): a regression fails here before any fuzzing.
  extra=()
  [ -d test/fuzz/regressions/"$h" ] && extra=(test/fuzz/regressions/"$h")
  rc=0
  TMPDIR=$work/tmp-$h ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$h-" "$corpus" "${extra[@]}" >"$work/$h.log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$h.log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$h.log")
  files=$(find "$corpus" -type f | wc -l)
  # Bytes of input, not of disk blocks (each small file takes a block).
  bytes=$(find "$corpus" -type f -exec cat {} + | wc -c | tr -d ' ')
  if [ $rc -eq 0 ]; then
    log "$h: ${execs:-?} executions in ${seconds}s (${rate:-?}/s), corpus $seeds -> $files inputs ($bytes bytes)"
  else
    log "$h: FAILED after ${execs:-?} executions (exit $rc); the report:"
    grep -v '^#' "$work/$h.log" | tail -60 | sed 's/^/    /'
    crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$work/$h.log" | tail -1)
    log "$h: crashing input: ${crash:-not written (see the report above)}"
    failed+=("$h")
  fi
  if [ -n "${FUZZ_KEEP_CORPUS:-}" ]; then
    mkdir -p "$FUZZ_KEEP_CORPUS/$h"
    cp "$corpus"/* "$FUZZ_KEEP_CORPUS/$h"/ 2>/dev/null || true
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  log "findings in: ${failed[*]}"
  exit 1
fi
log "all ${#harnesses[@]} harnesses ran without a finding"
