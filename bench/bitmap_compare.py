#!/usr/bin/env python3
"""Bitmap commands on goblin-core vs redis-server over the Unix socket, side
by side (issue 28; docs/benchmarks.md, "Bitmaps").

    /usr/bin/python3 bench/bitmap_compare.py --goblin build-release/goblin-core \
        [--redis /usr/bin/redis-server] [--lean-load build-release/lean_load] [--trials 5]

Rows, each driven by lean_load (bench/lean_load.c) over 50 connections:

  SETBIT bm:<rand> 4095 1              pipeline 64 (100,000 keys of 512 bytes)
  GETBIT bm:<rand> 4095                pipeline 64 (the keys SETBIT made)
  BITFIELD bf:<rand> INCRBY u32 #3 1   pipeline 64
  BITCOUNT big1                        pipeline 1, big1 a 1 MB random string
  BITOP AND dst big1 big2              pipeline 1, two 1 MB random strings

The small commands run pipelined so that the server, not the socket round
trip, sets the pace; the 1 MB rows cost hundreds of microseconds each and
run one request per connection at a time. The server is pinned to
SERVER_CORE (default 0) and the client to CLIENT_CORE (default 1) with
taskset; goblin-core and redis-server alternate within every trial (which
one goes first alternates too), each on a fresh server with the same data,
and each row is the median over --trials. "CPU us/req" is the server
process's user+system time per request (/proc/<pid>/stat). Before
measuring, both servers' replies to BITCOUNT, BITOP and BITFIELD on the
same data are compared, so the two do the same work.
"""
import argparse
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_compare import run_lean_load  # noqa: E402
from socket_compare import CLIENT_CORE, SERVER_CORE, Server, cpu_model  # noqa: E402

MB = 1 << 20
ROWS = [
    ("SETBIT", ["SETBIT", "bm:__rand_int__", "4095", "1"], 64, "n_small"),
    ("GETBIT", ["GETBIT", "bm:__rand_int__", "4095"], 64, "n_small"),
    ("BITFIELD INCRBY", ["BITFIELD", "bf:__rand_int__", "INCRBY", "u32", "#3", "1"], 64, "n_small"),
    ("BITCOUNT 1 MB", ["BITCOUNT", "big1"], 1, "n_count"),
    ("BITOP AND 2 x 1 MB", ["BITOP", "AND", "dst", "big1", "big2"], 1, "n_bitop"),
]


def load(srv):
    rng = random.Random(28)
    for key in (b"big1", b"big2"):
        value = rng.randbytes(MB)
        if srv.call(b"SET", key, value) != b"+OK\r\n":
            raise RuntimeError("SET %s failed" % key)


def sample_replies(srv):
    return (srv.call(b"BITCOUNT", b"big1"), srv.call(b"BITOP", b"AND", b"probe", b"big1", b"big2"),
            srv.call(b"BITCOUNT", b"probe"), srv.call(b"BITPOS", b"probe", b"1", b"1000"),
            srv.call(b"BITFIELD", b"probe", b"INCRBY", b"u32", b"#3", b"1", b"GET", b"i64", b"#7"),
            srv.call(b"DEL", b"probe"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--lean-load", help="the lean_load binary (default: next to --goblin)")
    ap.add_argument("--n-small", type=int, default=1000000, help="requests per run of the pipelined rows")
    ap.add_argument("--n-count", type=int, default=20000, help="requests per run of BITCOUNT")
    ap.add_argument("--n-bitop", type=int, default=5000, help="requests per run of BITOP")
    a = ap.parse_args()
    lean = a.lean_load or os.path.join(os.path.dirname(os.path.abspath(a.goblin)), "lean_load")
    if not os.access(lean, os.X_OK):
        sys.exit("no lean_load at %s: build it (cmake --build build-release --target lean_load) or pass --lean-load"
                 % lean)
    counts = {"n_small": a.n_small, "n_count": a.n_count, "n_bitop": a.n_bitop}
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
