#!/usr/bin/env python3
"""SORT and LCS on goblin-core vs redis-server over the Unix socket, side by
side (issue 28; docs/benchmarks.md, "SORT and LCS").

    /usr/bin/python3 bench/sort_compare.py --goblin build-release/goblin-core \
        [--redis /usr/bin/redis-server] [--lean-load build-release/lean_load] [--trials 5]

Rows, each driven by lean_load (bench/lean_load.c) over 50 connections,
one request per connection at a time (each costs tens to hundreds of
microseconds):

  SORT nums                            1,000 random numbers (a list)
  SORT words ALPHA                     1,000 random words
  SORT ids BY obj_*->w GET obj_*->name 1,000 ids, each with a hash of two fields
  SORT nums DESC LIMIT 100 10          the numeric sort, ten elements out
  LCS t1 t2                            two 1 KB strings of a 4-letter alphabet

The server is pinned to SERVER_CORE (default 0) and the client to
CLIENT_CORE (default 1) with taskset; goblin-core and redis-server
alternate within every trial (which one goes first alternates too), each on
a fresh server with the same data, and each row is the median over
--trials. "CPU us/req" is the server process's user+system time per
request. Before measuring, both servers' replies to every row's command
are compared, so the two do the same work.
"""
import argparse
import os
import random
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import side_by_side  # noqa: E402

N = 1000
ROWS = [
    ("SORT 1,000 numbers", ["SORT", "nums"]),
    ("SORT 1,000 words ALPHA", ["SORT", "words", "ALPHA"]),
    ("SORT 1,000 BY hash field GET hash field", ["SORT", "ids", "BY", "obj_*->w", "GET", "obj_*->name"]),
    ("SORT 1,000 numbers DESC LIMIT 100 10", ["SORT", "nums", "DESC", "LIMIT", "100", "10"]),
    ("LCS of two 1 KB strings", ["LCS", "t1", "t2"]),
]


def load(srv):
    rng = random.Random(28)
    nums = [b"%d" % rng.randint(-10 ** 9, 10 ** 9) if i % 3 else b"%.3f" % rng.uniform(-1e6, 1e6) for i in range(N)]
    words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 16))) for _ in range(N)]
    srv.call(b"RPUSH", b"nums", *nums)
    srv.call(b"RPUSH", b"words", *words)
    srv.call(b"RPUSH", b"ids", *[b"%d" % i for i in range(N)])
    for i in range(N):
        srv.call(b"HSET", b"obj_%d" % i, b"w", b"%d" % rng.randint(0, 10 ** 6), b"name", words[i])
    for key in (b"t1", b"t2"):
        srv.call(b"SET", key, bytes(rng.choice(b"ACGT") for _ in range(1024)))


def full_reply(srv, argv):
    """The whole reply to argv (then QUIT, which closes the connection)."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(srv.sock)
    args = [a.encode() for a in argv]
    s.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args) + b"*1\r\n$4\r\nQUIT\r\n")
    data = b""
    while True:
        chunk = s.recv(1 << 20)
        if not chunk:
            break
        data += chunk
    s.close()
    return data


def main():
    ap = argparse.ArgumentParser()
    side_by_side.add_common_args(ap)
    ap.add_argument("--n", type=int, default=20000, help="requests per row and run")
    a = ap.parse_args()
    rows = [(label, argv, 1, a.n) for label, argv in ROWS]

    def sample(srv):
        return [full_reply(srv, argv) for _, argv in ROWS]
    side_by_side.print_table(a, rows, side_by_side.measure(a, rows, load, sample), cpu_digits=1)


if __name__ == "__main__":
    main()
