#!/usr/bin/env python3
"""Compressed lists (list-compress-depth) on goblin-core vs redis-server,
side by side (issue 28; docs/benchmarks.md, "Compressed lists").

    /usr/bin/python3 bench/list_compress_bench.py --goblin build-release/goblin-core \
        [--redis /usr/bin/redis-server] [--lean-load build-release/lean_load] [--trials 3]

For each server and list-compress-depth 0 and 1 (the setting given at
start-up; the default list-max-listpack-size -2, 8 KiB nodes), one list of
--values (default 1,000,000) compressible values `user:NNNNNN:event` is
built with RPUSH in batches, then:

  memory      MEMORY USAGE l SAMPLES 0, and INFO used_memory growth
  LRANGE fix  LRANGE l <mid> <mid+99>: the same 100 values of the middle
              (goblin serves repeats from its inflate cache; Redis inflates
              and recompresses the node on every call)
  LRANGE rnd  100 values from a random offset of the list, through
              EVAL "...lrange(KEYS[1], s, s+99)" 1 l <random s> (lean_load
              can only put random numbers in arguments; the script's cost
              is the same at both depths, so the depth 1 / depth 0 ratio
              shows what compression costs)

lean_load (bench/lean_load.c) drives 50 connections at pipeline 1. The
server is pinned to SERVER_CORE (default 0) and the client to CLIENT_CORE
(default 1); every trial starts fresh servers in alternating order and each
figure is the median over --trials. Before measuring, the four servers'
replies to LRANGE/LINDEX at a few places are compared.
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from socket_compare import CLIENT_CORE, SERVER_CORE, Server, cpu_model  # noqa: E402

SCRIPT = b"local s = tonumber(ARGV[1]) return redis.call('lrange', KEYS[1], s, s + 99)"


def value(i):
    return b"user:%06d:event" % i


class DepthServer(Server):
    """socket_compare.Server with list-compress-depth set at start-up."""

    def __init__(self, binary, kind, depth):
        self._depth = depth
        super().__init__(binary, kind)
        reply = self.call(b"CONFIG", b"SET", b"list-compress-depth", str(depth).encode())
        if reply != b"+OK\r\n":
            raise RuntimeError("CONFIG SET list-compress-depth: %r" % reply)


def load(srv, n):
    before = srv.info("used_memory")
    for start in range(0, n, 10000):
        srv.call(b"RPUSH", b"l", *[value(i) for i in range(start, min(n, start + 10000))])
    usage = int(srv.call(b"MEMORY", b"USAGE", b"l", b"SAMPLES", b"0")[1:-2])
    return usage, srv.info("used_memory") - before


DIGEST = b"return redis.sha1hex(table.concat(redis.call('lrange', KEYS[1], ARGV[1], ARGV[2]), ','))"


def sample_replies(srv, n):
    """Small replies only (socket_compare.Server.call reads one chunk's worth):
    LLEN, LINDEX at a few places, and digests of LRANGE windows."""
    out = [srv.call(b"LLEN", b"l")]
    for i in (0, 1, n // 3, n // 2, n - 1, -7):
        out.append(srv.call(b"LINDEX", b"l", str(i).encode()))
    for a, b in ((n // 2, n // 2 + 99), (12345, 12444), (-100, -1), (0, -1)):
        out.append(srv.call(b"EVAL", DIGEST, b"1", b"l", str(a).encode(), str(b).encode()))
    return tuple(out)


def lean_load(tool, sock, cmd, n, keyspace):
    """lean_load at pipeline 1 over 50 connections; requests/s."""
    out = subprocess.run(["taskset", "-c", CLIENT_CORE, tool, "--socket", sock, "--pipeline", "1",
                          "--requests", str(n), "--clients", "50", "--keyspace", str(keyspace), "--"] + cmd,
                         capture_output=True, text=True)
    fields = dict(kv.split("=", 1) for kv in out.stdout.split())
    if out.returncode != 0 or "rate" not in fields:
        raise RuntimeError("lean_load failed: %r %r" % (out.stdout[-300:], out.stderr[-300:]))
    return float(fields["rate"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--values", type=int, default=1000000)
    ap.add_argument("--requests", type=int, default=100000, help="requests per LRANGE row")
    ap.add_argument("--lean-load", help="the lean_load binary (default: next to --goblin)")
    a = ap.parse_args()
    lean = a.lean_load or os.path.join(os.path.dirname(os.path.abspath(a.goblin)), "lean_load")
    if not os.access(lean, os.X_OK):
        sys.exit("no lean_load at %s: build it (cmake --build build-release --target lean_load) or pass --lean-load"
                 % lean)
    binaries = {"goblin": a.goblin, "redis": a.redis}
    mid = a.values // 2
    rows = [("LRANGE fix", ["LRANGE", "l", str(mid), str(mid + 99)], a.values),
            ("LRANGE rnd", ["EVAL", SCRIPT.decode(), "1", "l", "__rand_int__"], a.values - 100)]
    figures = {}  # (server, depth, what) -> [values]
    replies = {}
    for trial in range(a.trials):
        order = [(s, d) for s in ("goblin", "redis") for d in (0, 1)]
        if trial % 2:
            order.reverse()
        for name, depth in order:
            srv = DepthServer(binaries[name], name, depth)
            try:
                usage, grown = load(srv, a.values)
                figures.setdefault((name, depth, "usage"), []).append(usage)
                figures.setdefault((name, depth, "grown"), []).append(grown)
                if trial == 0:
                    replies[(name, depth)] = sample_replies(srv, a.values)
                for label, argv, keyspace in rows:
                    c0 = srv.cpu_seconds()
                    rate = lean_load(lean, srv.sock, argv, a.requests, keyspace)
                    figures.setdefault((name, depth, label), []).append(rate)
                    figures.setdefault((name, depth, label + " cpu"), []).append(
                        (srv.cpu_seconds() - c0) * 1e6 / a.requests)
            finally:
                srv.stop()
            print("trial %d %s depth %d done" % (trial + 1, name, depth), file=sys.stderr)
    if len(set(replies.values())) != 1:
        sys.exit("the servers answer differently: %r" % replies)

    med = {k: statistics.median(v) for k, v in figures.items()}
    print("Machine: %d CPUs, %s, kernel %s; server on CPU %s, the client on CPU %s; median of %d trials; "
          "%d values `user:NNNNNN:event`\n"
          % (os.cpu_count(), cpu_model(), os.uname().release, SERVER_CORE, CLIENT_CORE, a.trials, a.values))
    print("| server | depth | MEMORY USAGE | B/value | used_memory growth | LRANGE fix req/s | CPU us/req "
          "| LRANGE rnd req/s | CPU us/req |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in ("goblin", "redis"):
        for depth in (0, 1):
            k = lambda what: med[(name, depth, what)]  # noqa: E731
            print("| %s | %d | %d | %.2f | %d | %.0f | %.1f | %.0f | %.1f |"
                  % (name, depth, k("usage"), k("usage") / a.values, k("grown"), k("LRANGE fix"),
                     k("LRANGE fix cpu"), k("LRANGE rnd"), k("LRANGE rnd cpu")))
    print("\n| server | memory depth 1 / depth 0 | LRANGE fix req/s (CPU/req) depth 1 / depth 0 "
          "| LRANGE rnd req/s (CPU/req) depth 1 / depth 0 |")
    print("|---|---|---|---|")
    for name in ("goblin", "redis"):
        r = lambda what: med[(name, 1, what)] / med[(name, 0, what)]  # noqa: E731
        print("| %s | %.2fx | %.2fx (%.2fx) | %.2fx (%.2fx) |" % (name, r("usage"), r("LRANGE fix"), r("LRANGE fix cpu"),
                                                        r("LRANGE rnd"), r("LRANGE rnd cpu")))
    print("\n| depth 1: goblin / redis | memory | LRANGE fix req/s (CPU/req) | LRANGE rnd req/s (CPU/req) |")
    print("|---|---|---|---|")
    g = lambda what: med[("goblin", 1, what)] / med[("redis", 1, what)]  # noqa: E731
    print("| | %.2fx | %.2fx (%.2fx) | %.2fx (%.2fx) |" % (g("usage"), g("LRANGE fix"), g("LRANGE fix cpu"),
                                                       g("LRANGE rnd"), g("LRANGE rnd cpu")))


if __name__ == "__main__":
    main()
