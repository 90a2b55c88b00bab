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
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import side_by_side  # noqa: E402

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
    side_by_side.add_common_args(ap)
    ap.add_argument("--n-small", type=int, default=1000000, help="requests per run of the pipelined rows")
    ap.add_argument("--n-count", type=int, default=20000, help="requests per run of BITCOUNT")
    ap.add_argument("--n-bitop", type=int, default=5000, help="requests per run of BITOP")
    a = ap.parse_args()
    counts = {"n_small": a.n_small, "n_count": a.n_count, "n_bitop": a.n_bitop}
    rows = [(label, argv, pipeline, counts[count]) for label, argv, pipeline, count in ROWS]
    side_by_side.print_table(a, rows, side_by_side.measure(a, rows, load, sample_replies))


if __name__ == "__main__":
    main()
