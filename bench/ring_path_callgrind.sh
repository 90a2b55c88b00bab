#!/bin/sh
# Server instructions per ring request, counted by callgrind (no timing
# noise): goblin-core runs under callgrind while latency_shootout sends
# one operation over an SBE ring for a few seconds; the script divides the
# instructions of the serving path by the requests served. The path is
# what runs between a request's record seen on the ring and its reply
# published: the protocol's execute (decode, the command gate, the command
# and its reply) and flush_replies (the reply onto the response ring, the
# client's wake-up check). The poller's own loop is left out: its idle
# passes depend on how fast the client is.
#
#   bench/ring_path_callgrind.sh BUILD_DIR [OPS] [SECONDS]
#
# BUILD_DIR holds goblin-core (any unstripped build) and latency_shootout
# (LATENCY_SHOOTOUT names another one: to count an older commit's server
# with today's client); OPS a comma list of its --ops names (default
# PING,ZADD10); SECONDS per operation (default 3). Prints
# "OP: N instructions per request (execute E, flush F; R requests)".
set -eu
build=${1:?usage: $0 BUILD_DIR [OPS] [SECONDS]}
ops=${2:-PING,ZADD10}
seconds=${3:-3}
dir=$(mktemp -d /tmp/goblin-ringcg-XXXXXX)
trap 'rm -rf "$dir"' EXIT
# latency_shootout starts the server binary it is given: a wrapper puts
# goblin-core under callgrind. The server's CPU and spin budget are
# latency_shootout's own.
cat >"$dir/goblin-core" <<WRAP
#!/bin/sh
exec valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" "$(cd "$build" && pwd)/goblin-core" "\$@"
WRAP
chmod +x "$dir/goblin-core"
for op in $(echo "$ops" | tr , ' '); do
    rm -f "$dir/cg.out"
    "${LATENCY_SHOOTOUT:-$build/latency_shootout}" ring "$dir/goblin-core" --seconds "$seconds" --ops "$op" --csv >/dev/null 2>"$dir/err" ||
        { cat "$dir/err" >&2; exit 1; }
    # Inclusive counts, most costly first: a build without -g names the
    # functions "???:name", and flush_replies has a namesake in the socket
    # server (idle here), so the first line of each is the one. Requests:
    # the calls of the ring protocol's execute, the set-up and warm-up
    # included as they are in the counts.
    callgrind_annotate --inclusive=yes --threshold=100 "$dir/cg.out" 2>/dev/null | awk -v op="$op" '
        function count(s) { gsub(",", "", s); return s + 0 }
        /:sbe_execute( |$)/ && !ex { ex = count($1) }
        /:flush_replies( |$)/ && !fl { fl = count($1) }
        END { print op, ex, fl }' >"$dir/sums"
    calls=$(callgrind_annotate --tree=calling --threshold=100 "$dir/cg.out" 2>/dev/null |
        awk '/ > +[^ ]*:sbe_execute \([0-9,]+x\)/ { s = $0; sub(/.*\(/, "", s); sub(/x\).*/, "", s); gsub(",", "", s); n += s }
             END { print n + 0 }')
    read -r name ex fl <"$dir/sums"
    awk -v op="$name" -v ex="$ex" -v fl="$fl" -v n="$calls" 'BEGIN {
        printf "%-8s %6.0f instructions per request (execute %.0f, flush %.0f; %d requests)\n", op ":", (ex + fl) / n, ex / n, fl / n, n }'
done
