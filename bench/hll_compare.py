#!/usr/bin/env python3
"""HyperLogLog commands on goblin-core vs redis-server over the Unix socket,
side by side (issue 28; docs/benchmarks.md, "HyperLogLog").

    /usr/bin/python3 bench/hll_compare.py --goblin build-release/goblin-core \
        [--redis /usr/bin/redis-server] [--lean-load build-release/lean_load] [--trials 5]

Rows, each driven by lean_load (bench/lean_load.c) over 50 connections:

  PFADD pf:<rand> <rand> <rand>   pipeline 64 (100,000 sparse HLLs growing)
  PFADD dense <rand>              pipeline 64 (one dense HLL)
  PFCOUNT pf:<rand>               pipeline 64 (sparse, the cache mostly valid)
  PFCOUNT d1 d2 d3                pipeline 1, the union of three dense HLLs
  PFMERGE dst d1 d2 d3            pipeline 1, three dense HLLs into a fourth

The small commands run pipelined so that the server, not the socket round
trip, sets the pace; the union and the merge read 3 x 16384 registers each
and run one request per connection at a time. The server is pinned to
SERVER_CORE (default 0) and the client to CLIENT_CORE (default 1) with
taskset; goblin-core and redis-server alternate within every trial (which
one goes first alternates too), each on a fresh server with the same data,
and each row is the median over --trials. "CPU us/req" is the server
process's user+system time per request (/proc/<pid>/stat). Before
measuring, both servers' replies (and the GET bytes of the merged HLL) on
the same data are compared, so the two do the same work.
"""
import argparse
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_compare import run_lean_load  # noqa: E402
from socket_compare import CLIENT_CORE, SERVER_CORE, Server, cpu_model  # noqa: E402

ROWS = [
    ("PFADD sparse", ["PFADD", "pf:__rand_int__", "__rand_int__", "__rand_int__"], 64, "n_small"),
    ("PFADD dense", ["PFADD", "dense", "__rand_int__"], 64, "n_small"),
    ("PFCOUNT 1 key", ["PFCOUNT", "pf:__rand_int__"], 64, "n_small"),
    ("PFCOUNT 3 dense keys", ["PFCOUNT", "d1", "d2", "d3"], 1, "n_union"),
    ("PFMERGE 3 dense keys", ["PFMERGE", "dst", "d1", "d2", "d3"], 1, "n_union"),
]


def load(srv):
    rng = random.Random(28)
    for key in (b"d1", b"d2", b"d3", b"dense"):
        for _ in range(20):
            els = [b"%d" % rng.randrange(10 ** 9) for _ in range(1000)]
            if srv.call(b"PFADD", key, *els) not in (b":1\r\n", b":0\r\n"):
                raise RuntimeError("PFADD %s failed" % key)


def sample_replies(srv):
    return (srv.call(b"PFCOUNT", b"d1"), srv.call(b"PFCOUNT", b"d1", b"d2", b"d3"),
            srv.call(b"PFMERGE", b"probe", b"d1", b"d2", b"d3"), srv.call(b"GET", b"probe"),
            srv.call(b"PFADD", b"probe2", b"a", b"b"), srv.call(b"GET", b"probe2"), srv.call(b"DEL", b"probe", b"probe2"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--lean-load", help="the lean_load binary (default: next to --goblin)")
    ap.add_argument("--n-small", type=int, default=1000000, help="requests per run of the pipelined rows")
    ap.add_argument("--n-union", type=int, default=50000, help="requests per run of the 3-key rows")
    a = ap.parse_args()
    lean = a.lean_load or os.path.join(os.path.dirname(os.path.abspath(a.goblin)), "lean_load")
    if not os.access(lean, os.X_OK):
        sys.exit("no lean_load at %s: build it (cmake --build build-release --target lean_load) or pass --lean-load"
                 % lean)
    counts = {"n_small": a.n_small, "n_union": a.n_union}
    binaries = {"goblin": a.goblin, "redis": a.redis}
    rates, cpu, share, replies = {}, {}, {}, {}
    for trial in range(a.trials):
        order = ["goblin", "redis"] if trial % 2 == 0 else ["redis", "goblin"]
        for name in order:
            srv = Server(binaries[name], name)
            try:
                load(srv)
                if trial == 0:
                    replies[name] = sample_replies(srv)
                for label, argv, pipeline, count in ROWS:
                    n = counts[count]
                    c0 = srv.cpu_seconds()
                    rate, busy = run_lean_load(lean, srv.sock, argv, pipeline, n)
                    key = (name, label)
                    rates.setdefault(key, []).append(rate)
                    cpu.setdefault(key, []).append((srv.cpu_seconds() - c0) * 1e6 / n)
                    share.setdefault(key, []).append(busy)
            finally:
                srv.stop()
            print("trial %d %s done" % (trial + 1, name), file=sys.stderr)
    if replies["goblin"] != replies["redis"]:
        sys.exit("the servers answer differently: %r vs %r" % (replies["goblin"], replies["redis"]))

    model = cpu_model()
    print("Machine: %d CPUs, %s, kernel %s; server on CPU %s, the client on CPU %s; median of %d trials\n"
          % (os.cpu_count(), model, os.uname().release, SERVER_CORE, CLIENT_CORE, a.trials))
    print("| command | pipeline | goblin-core req/s | redis-server req/s | goblin / redis "
          "| goblin CPU us/req | redis CPU us/req | client CPU (vs goblin / vs redis) |")
    print("|---|---|---|---|---|---|---|---|")
    for label, argv, pipeline, count in ROWS:
        med = {k: {srv: statistics.median(d[(srv, label)]) for srv in ("goblin", "redis")}
               for k, d in (("rate", rates), ("cpu", cpu), ("share", share))}
        g, r = med["rate"]["goblin"], med["rate"]["redis"]
        print("| %s | %d | %.0f | %.0f | %.2fx | %.2f | %.2f | %.0f%% / %.0f%% |"
              % (label, pipeline, g, r, g / r, med["cpu"]["goblin"], med["cpu"]["redis"],
                 100 * med["share"]["goblin"], 100 * med["share"]["redis"]))


if __name__ == "__main__":
    main()
