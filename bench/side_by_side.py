"""One runner for the "goblin-core and redis-server side by side" benchmarks
that drive lean_load over the Unix socket (bitmap_compare, geo_compare,
hll_compare, sort_compare): the options they share, the interleaved trials,
the check that both servers answer alike, and the median table.

A row is (label, argv, pipeline, requests). In every trial each server is
started fresh (socket_compare.Server: pinned to SERVER_CORE), given the
same data by load(srv), and measured row by row; goblin-core and
redis-server alternate, and which one goes first alternates too, so load
that drifts on a shared machine hits both alike. "CPU us/req" is the server
process's user+system time per request (/proc/<pid>/stat), steadier than
throughput on a busy machine.
"""
import os
import statistics
import sys

from script_compare import run_lean_load
from socket_compare import CLIENT_CORE, SERVER_CORE, Server, cpu_model

SERVERS = ("goblin", "redis")


def add_common_args(ap):
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--lean-load", help="the lean_load binary (default: next to --goblin)")


def lean_load_of(a):
    lean = a.lean_load or os.path.join(os.path.dirname(os.path.abspath(a.goblin)), "lean_load")
    if not os.access(lean, os.X_OK):
        sys.exit("no lean_load at %s: build it (cmake --build build-release --target lean_load) or pass --lean-load"
                 % lean)
    return lean


def measure(a, rows, load, sample, keyspace=100000):
    """Runs the trials (lean_load's __rand_int__ below keyspace). sample(srv),
    on the first trial, returns what both servers must answer alike
    (compared before anything is reported).
    Returns {(server, label): {"rate": [...], "cpu": [...], "share": [...]}}."""
    lean = lean_load_of(a)
    binaries = {"goblin": a.goblin, "redis": a.redis}
    results, samples = {}, {}
    for trial in range(a.trials):
        for name in SERVERS if trial % 2 == 0 else reversed(SERVERS):
            srv = Server(binaries[name], name)
            try:
                load(srv)
                if trial == 0:
                    samples[name] = sample(srv)
                for label, argv, pipeline, n in rows:
                    c0 = srv.cpu_seconds()
                    rate, busy = run_lean_load(lean, srv.sock, argv, pipeline, n, keyspace)
                    r = results.setdefault((name, label), {"rate": [], "cpu": [], "share": []})
                    r["rate"].append(rate)
                    r["cpu"].append((srv.cpu_seconds() - c0) * 1e6 / n)
                    r["share"].append(busy)
            finally:
                srv.stop()
            print("trial %d %s done" % (trial + 1, name), file=sys.stderr)
    if samples["goblin"] != samples["redis"]:
        sys.exit("the servers answer differently: %r vs %r" % (samples["goblin"], samples["redis"]))
    return results


def print_table(a, rows, results, cpu_digits=2):
    """The Markdown table of docs/benchmarks.md: medians, the ratio, and the
    client's CPU share (a client near 100% means the row measures it)."""
    print("Machine: %d CPUs, %s, kernel %s; server on CPU %s, the client on CPU %s; median of %d trials\n"
          % (os.cpu_count(), cpu_model(), os.uname().release, SERVER_CORE, CLIENT_CORE, a.trials))
    print("| command | pipeline | goblin-core req/s | redis-server req/s | goblin / redis "
          "| goblin CPU us/req | redis CPU us/req | client CPU (vs goblin / vs redis) |")
    print("|---|---|---|---|---|---|---|---|")
    for label, _, pipeline, _ in rows:
        med = {k: {s: statistics.median(results[(s, label)][k]) for s in SERVERS} for k in ("rate", "cpu", "share")}
        g, r = med["rate"]["goblin"], med["rate"]["redis"]
        print("| %s | %d | %.0f | %.0f | %.2fx | %.*f | %.*f | %.0f%% / %.0f%% |"
              % (label, pipeline, g, r, g / r, cpu_digits, med["cpu"]["goblin"], cpu_digits, med["cpu"]["redis"],
                 100 * med["share"]["goblin"], 100 * med["share"]["redis"]))
