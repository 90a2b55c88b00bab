#!/usr/bin/env bash
# The ThreadSanitizer check: the ring, park/wake and client-library tests
# built with -fsanitize=thread (clang) and run. The shared-memory protocol's
# ordering lives in acquire/release pairs that x86's strong ordering makes
# look right even when they are wrong; TSan checks the happens-before each
# pair promises, so a release weakened to relaxed is a reported data race
# here on any CPU.
#
#   transport_test_ring_threads  writer and reader threads on one ring, with
#                                spin-then-park (transport/ring/ring_io.h)
#   transport_test_ring_io       the ring model and hostile headers
#   platform_test_park           thread wake and the cross-process stress
#   platform_test_wakefd         the wake descriptor
#   integration_test_rings       the real server and ring client processes
#                                (both instrumented; a race in either one's
#                                log fails the test)
# TSan sees threads of one process; the cross-process halves are covered by
# those processes' own threads and by the two-thread ring test.
# Usage: cmake/check-tsan.sh [build-dir]   (default build-tsan)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-tsan}
tests=(transport_test_ring_threads transport_test_ring_io platform_test_park platform_test_wakefd)
cmake -S . -B "$out" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGOBLIN_WERROR=ON \
  -DGOBLIN_SANITIZE=thread >/dev/null
cmake --build "$out" -j "${JOBS:-2}" --target "${tests[@]}" goblin_core_server ring_tool ring_hostile
regex="^($(IFS='|'; echo "${tests[*]}")|integration_test_rings)\$"
# The selection is by name: a renamed or unregistered test (integration_test_rings
# needs the Python with redis) must fail the check, not shrink it.
want=$(( ${#tests[@]} + 1 ))
found=$(ctest --test-dir "$out" -N -R "$regex" | sed -n 's/^Total Tests: //p')
if [ "$found" != "$want" ]; then
  echo "check-tsan: $want tests named, ${found:-0} registered:" >&2
  ctest --test-dir "$out" -N -R "$regex" >&2
  exit 1
fi
# halt_on_error: the first race fails the test with TSan's exit code (66).
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:exitcode=66:suppressions=$PWD/test/tsan.supp" \
  ctest --test-dir "$out" --output-on-failure --no-tests=error -R "$regex"
