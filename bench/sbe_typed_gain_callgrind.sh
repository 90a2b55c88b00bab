#!/bin/sh
# Server-side instructions per request, typed template vs Generic, counted
# by callgrind (no timing noise): goblin-core runs under callgrind collecting
# only inside gb_sbe_execute (decode, dispatch, gate, command, scalar reply)
# and gb_sbe_reply_finish_frames (array replies); sbe_typed_gain --attach
# zeroes the counters before each row's calls and dumps them after.
#
#   bench/sbe_typed_gain_callgrind.sh BUILD_DIR [CALLS] [ROWS]
#
# BUILD_DIR holds goblin-core and sbe_typed_gain; CALLS per row (default
# 5000); ROWS a comma list of sbe_typed_gain's row names (default: the
# typed/generic pairs and the Generic-only rows). Prints "row: Ir per call".
set -eu
build=${1:?usage: $0 BUILD_DIR [CALLS] [ROWS]}
calls=${2:-5000}
rows=${3:-GET typed,GET generic,SET typed,SET generic,HSET3 typed,HSET3 generic,ZADD10 typed,ZADD10 generic,XADD3 typed,XADD3 generic,XREADGROUP generic,XACK generic,EVALSHA generic,FCALL generic}
dir=$(mktemp -d /tmp/goblin-callgrind-XXXXXX)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
# A long spin budget: a parked server would answer callgrind_control late.
valgrind --tool=callgrind --collect-atstart=no --toggle-collect=gb_sbe_execute \
    --toggle-collect=gb_sbe_reply_finish_frames --callgrind-out-file="$dir/cg.out" \
    "$build/goblin-core" --port 0 --unixsocket "$dir/s.sock" --save "" --appendonly no --dir "$dir" \
    --ring-spin-us 1000000 >"$dir/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
    [ -S "$dir/s.sock" ] && break
    sleep 0.1
done
"$build/sbe_typed_gain" --attach "$dir/s.sock" --calls "$calls" --rows "$rows" --callgrind "$pid" >/dev/null
kill "$pid"
wait "$pid" 2>/dev/null || true
trap - EXIT
# Each dump file names its row in "desc: Trigger: dump <row> xN" and gives
# its instruction count in "summary:" (or "totals:"); files in dump order.
for f in $(ls -v "$dir"/cg.out.*); do
    awk -v calls="$calls" '
        /^desc: Trigger:/ { sub(/^desc: Trigger: (dump )?/, ""); sub(/ x[0-9]+$/, ""); row = $0 }
        /^(summary|totals):/ { ir = $2 }
        END { if (row != "") printf "%-20s %8.0f Ir per call\n", row ":", ir / calls }' "$f"
done
rm -rf "$dir"
