#!/usr/bin/env python3
"""Geo commands on goblin-core vs redis-server over the Unix socket, side by
side (issue 28; docs/benchmarks.md, "Geo").

    /usr/bin/python3 bench/geo_compare.py --goblin build-release/goblin-core \
        [--redis /usr/bin/redis-server] [--lean-load build-release/lean_load] [--trials 5]

Rows, each driven by lean_load (bench/lean_load.c) over 50 connections:

  GEOADD pts 13.<rand> 38.<rand> m:<rand>     pipeline 64 (one index growing to 10,000 members)
  GEODIST idx p<rand> p<rand> km              pipeline 64 (idx: 10,000 points)
  GEOSEARCH idx FROMLONLAT 13.5 38.5 BYRADIUS 10 km ASC
                                              pipeline 1 (about 80 of the 10,000 points)
  GEOSEARCH idx FROMMEMBER p<rand> BYBOX 40 40 km COUNT 10 WITHDIST
                                              pipeline 1 (about 1,300 candidates, the nearest 10)

idx holds 10,000 random points over a 2 x 2 degree square around (13.5,
38.5) (Sicily), the same points on both servers (member p<i> for the i-th
point, i below 10,000 as lean_load's random numbers are here). The
server is pinned to SERVER_CORE (default 0) and the client to CLIENT_CORE
(default 1) with taskset; goblin-core and redis-server alternate within
every trial (which one goes first alternates too), each on a fresh server
with the same data, and each row is the median over --trials. "CPU us/req"
is the server process's user+system time per request (/proc/<pid>/stat).
Before measuring, both servers' replies to the searches on the same data
are compared byte for byte, so the two do the same work.
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import side_by_side  # noqa: E402

POINTS = 10000
ROWS = [
    ("GEOADD (10k members)", ["GEOADD", "pts", "13.__rand_int__", "38.__rand_int__", "m:__rand_int__"], 64,
     "n_small"),
    ("GEODIST", ["GEODIST", "idx", "p__rand_int__", "p__rand_int__", "km"], 64, "n_small"),
    ("GEOSEARCH BYRADIUS 10 km ASC", ["GEOSEARCH", "idx", "FROMLONLAT", "13.5", "38.5", "BYRADIUS", "10", "km",
                                      "ASC"], 1, "n_search"),
    ("GEOSEARCH BYBOX 40 km COUNT 10", ["GEOSEARCH", "idx", "FROMMEMBER", "p__rand_int__", "BYBOX", "40", "40",
                                        "km", "COUNT", "10", "WITHDIST"], 1, "n_search"),
]



def load(srv):
    """idx: POINTS points p0..p9999 (lean_load pads its numbers to 12
    digits, so the members are named that way too)."""
    rng = random.Random(28)
    argv = [b"GEOADD", b"idx"]
    for i in range(POINTS):
        argv += [b"%.6f" % rng.uniform(12.5, 14.5), b"%.6f" % rng.uniform(37.5, 39.5), b"p%012d" % i]
        if len(argv) >= 1500 or i == POINTS - 1:
            if not srv.call(*argv).startswith(b":"):
                raise RuntimeError("GEOADD failed")
            argv = [b"GEOADD", b"idx"]


def sample_replies(srv):
    return (srv.call(b"GEOSEARCH", b"idx", b"FROMLONLAT", b"13.5", b"38.5", b"BYRADIUS", b"10", b"km", b"ASC",
                     b"WITHCOORD", b"WITHDIST", b"WITHHASH"),
            srv.call(b"GEOSEARCH", b"idx", b"FROMMEMBER", b"p%012d" % 77, b"BYBOX", b"40", b"40", b"km",
                     b"COUNT", b"10", b"WITHDIST"),
            srv.call(b"GEODIST", b"idx", b"p%012d" % 1, b"p%012d" % 2, b"km"),
            srv.call(b"GEOPOS", b"idx", b"p%012d" % 3))


def main():
    ap = argparse.ArgumentParser()
    side_by_side.add_common_args(ap)
    ap.add_argument("--n-small", type=int, default=1000000, help="requests per run of the pipelined rows")
    ap.add_argument("--n-search", type=int, default=100000, help="requests per run of the GEOSEARCH rows")
    a = ap.parse_args()
    counts = {"n_small": a.n_small, "n_search": a.n_search}
    rows = [(label, argv, pipeline, counts[count]) for label, argv, pipeline, count in ROWS]
    side_by_side.print_table(a, rows, side_by_side.measure(a, rows, load, sample_replies, keyspace=POINTS))


if __name__ == "__main__":
    main()
