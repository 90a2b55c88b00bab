#!/usr/bin/env python3
"""Eviction on goblin-core vs redis-server, side by side (issue 36;
docs/benchmarks.md, "Eviction (issue 36)").

    /usr/bin/python3 bench/eviction_bench.py --goblin build-release/goblin-core \
        [--redis /usr/bin/redis-server] [--trials 3] [--maxmemory 64mb] [--value 200]

1. The cache workload: cache_load (bench/cache_load.c) draws GETs from a
   Zipf(0.99) distribution over 500,000 keys and fills each miss with a
   200-byte SET, 4 connections with 64 GETs in flight each; both servers
   under the same maxmemory and allkeys-lru. Reported: the hit rate after a
   warm-up, the keys the cache holds, GETs/s and requests (GET + SET)/s.
   The draws depend only on the seed: both servers see the same GETs.
2. Writes at the limit: each policy with maxmemory 32mb, filled until it
   evicts, then lean_load (bench/lean_load.c) SETs 200-byte values under
   new random keys (pipeline 16, 50 connections; with EX for the volatile
   policies, whose keys need a TTL to be evictable): every write evicts.

The server is pinned to SERVER_CORE (default 0) and the client to
CLIENT_CORE (default 1); the servers alternate within every trial (which
one goes first alternates too), each on a fresh server, and each row is the
median over --trials.
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from socket_compare import CLIENT_CORE, Server, cpu_model  # noqa: E402

POLICIES = ["allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu", "volatile-random",
            "volatile-ttl"]


def fields_of(out):
    return dict(kv.split("=", 1) for kv in out.split())


def info_int(srv, section, name):
    text = srv.call(b"INFO", section.encode()).decode()
    for line in text.splitlines():
        if line.startswith(name + ":"):
            return int(line.split(":", 1)[1])
    raise RuntimeError("no %s in INFO %s" % (name, section))


def configure(srv, maxmemory, policy):
    for k, v in ((b"maxmemory", maxmemory.encode()), (b"maxmemory-policy", policy.encode())):
        if srv.call(b"CONFIG", b"SET", k, v) != b"+OK\r\n":
            raise RuntimeError("CONFIG SET %s failed" % k)


def cache_row(binary, kind, tool, a):
    srv = Server(binary, kind)
    try:
        configure(srv, a.maxmemory, "allkeys-lru")
        cpu0 = srv.cpu_seconds()
        out = subprocess.run(["taskset", "-c", CLIENT_CORE, tool, "--socket", srv.sock, "--keys", str(a.keys),
                              "--requests", str(a.requests), "--warmup", str(a.warmup), "--value", str(a.value),
                              "--seed", "36"], capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError("cache_load failed: %s" % out.stderr[-300:])
        f = fields_of(out.stdout)
        keys = int(srv.call(b"DBSIZE").strip()[1:])
        cpu_us = (srv.cpu_seconds() - cpu0) * 1e6 / (a.requests + a.warmup + int(f["sets"]))
        return {"hit": float(f["hit_rate"]), "get_rate": float(f["get_rate"]), "req_rate": float(f["req_rate"]),
                "cpu_us": cpu_us,
                "keys": keys, "evicted": info_int(srv, "stats", "evicted_keys")}
    finally:
        srv.stop()


def lean(tool, sock, cmd, n, keyspace):
    out = subprocess.run(["taskset", "-c", CLIENT_CORE, tool, "--socket", sock, "--pipeline", "16", "--requests",
                          str(n), "--clients", "50", "--keyspace", str(keyspace), "--"] + cmd,
                         capture_output=True, text=True)
    f = fields_of(out.stdout) if out.returncode == 0 else {}
    if "rate" not in f:
        raise RuntimeError("lean_load failed: %r %r" % (out.stdout[-300:], out.stderr[-300:]))
    return float(f["rate"])


def limit_row(binary, kind, lean_tool, policy, a):
    srv = Server(binary, kind)
    try:
        configure(srv, "32mb", policy)
        ttl = ["EX", "100000"] if policy.startswith("volatile") else []
        # lean_load draws the same numbers every run: a new prefix per run
        # makes its keys new
        def cmd(run):
            return ["SET", "w%d:__rand_int__" % run, "v" * 200] + ttl
        run = 0
        while info_int(srv, "stats", "evicted_keys") == 0:  # fill to the limit
            run += 1
            lean(lean_tool, srv.sock, cmd(run), 100000, 10 ** 12)
        before, cpu0 = info_int(srv, "stats", "evicted_keys"), srv.cpu_seconds()
        rate = lean(lean_tool, srv.sock, cmd(run + 1), a.writes, 10 ** 12)
        return {"rate": rate, "evicted": info_int(srv, "stats", "evicted_keys") - before,
                "cpu_us": (srv.cpu_seconds() - cpu0) * 1e6 / a.writes}
    finally:
        srv.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--maxmemory", default="32mb")
    ap.add_argument("--keys", type=int, default=500000)
    ap.add_argument("--value", type=int, default=200, help="bytes of each value the cache workload SETs")
    ap.add_argument("--requests", type=int, default=2000000, help="measured GETs of the cache workload")
    ap.add_argument("--warmup", type=int, default=1000000, help="GETs before measuring")
    ap.add_argument("--writes", type=int, default=500000, help="SETs per run of the write rows")
    ap.add_argument("--policies", default=",".join(POLICIES))
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(a.goblin))
    cache_tool, lean_tool = os.path.join(here, "cache_load"), os.path.join(here, "lean_load")
    for t in (cache_tool, lean_tool):
        if not os.access(t, os.X_OK):
            sys.exit("no %s: build it (cmake --build <dir> --target cache_load lean_load)" % t)
    binaries = {"goblin": a.goblin, "redis": a.redis}
    policies = [p for p in a.policies.split(",") if p]
    cache = {k: [] for k in binaries}
    limit = {(k, p): [] for k in binaries for p in policies}
    for trial in range(a.trials):
        order = ["goblin", "redis"] if trial % 2 == 0 else ["redis", "goblin"]
        for kind in order:
            cache[kind].append(cache_row(binaries[kind], kind, cache_tool, a))
        for p in policies:
            for kind in order:
                limit[(kind, p)].append(limit_row(binaries[kind], kind, lean_tool, p, a))

    def med(rows, key):
        return statistics.median(r[key] for r in rows)

    print("machine: %s; server on core %s, client on core %s; medians of %d trials" %
          (cpu_model(), os.environ.get("SERVER_CORE", "0"), CLIENT_CORE, a.trials))
    print()
    print("Cache workload: Zipf(0.99) GETs over %d keys, misses filled by %d-byte SETs, maxmemory %s, allkeys-lru"
          % (a.keys, a.value, a.maxmemory))
    print()
    print("| server | hit rate | keys held | GETs/s | requests/s | server CPU µs/request |")
    print("|---|---|---|---|---|---|")
    for kind in binaries:
        c = cache[kind]
        print("| %s | %.1f%% | %d | %.0f | %.0f | %.2f |" % (kind, 100 * med(c, "hit"), med(c, "keys"),
                                                          med(c, "get_rate"), med(c, "req_rate"), med(c, "cpu_us")))
    g, r = cache["goblin"], cache["redis"]
    print("| goblin vs redis | %+.1f points | %.2fx | %.2fx | %.2fx | %.2fx less |" % (
        100 * (med(g, "hit") - med(r, "hit")), med(g, "keys") / med(r, "keys"), med(g, "get_rate") / med(r, "get_rate"),
        med(g, "req_rate") / med(r, "req_rate"), med(r, "cpu_us") / med(g, "cpu_us")))
    print()
    print("Writes at the limit (maxmemory 32mb, every SET evicts): SETs/s")
    print()
    print("| policy | goblin SETs/s | redis SETs/s | ratio | goblin CPU µs/SET | redis CPU µs/SET | CPU redis / goblin |")
    print("|---|---|---|---|---|---|---|")
    for p in policies:
        g, r = limit[("goblin", p)], limit[("redis", p)]
        print("| %s | %.0f | %.0f | %.2fx | %.2f | %.2f | %.2fx |" % (
            p, med(g, "rate"), med(r, "rate"), med(g, "rate") / med(r, "rate"), med(g, "cpu_us"), med(r, "cpu_us"),
            med(r, "cpu_us") / med(g, "cpu_us")))


if __name__ == "__main__":
    main()
