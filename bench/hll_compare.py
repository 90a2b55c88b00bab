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
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import side_by_side  # noqa: E402

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
    side_by_side.add_common_args(ap)
    ap.add_argument("--n-small", type=int, default=1000000, help="requests per run of the pipelined rows")
    ap.add_argument("--n-union", type=int, default=50000, help="requests per run of the 3-key rows")
    a = ap.parse_args()
    counts = {"n_small": a.n_small, "n_union": a.n_union}
    rows = [(label, argv, pipeline, counts[count]) for label, argv, pipeline, count in ROWS]
    side_by_side.print_table(a, rows, side_by_side.measure(a, rows, load, sample_replies))


if __name__ == "__main__":
    main()
