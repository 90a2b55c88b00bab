#!/usr/bin/env python3
"""Lookups of keys that are not there, goblin-core against redis-server
(and optionally an older goblin-core build), side by side (issue 36;
docs/benchmarks.md, "Missing keys and writes at the limit").

    /usr/bin/python3 bench/missing_keys.py --goblin build-release/goblin-core \
        [--goblin-base /tmp/base/goblin-core] [--redis /usr/bin/redis-server] \
        [--keys 2000000] [--requests 3000000] [--trials 3]

Each server is filled with small keys (SET key:<n> of 16 bytes, lean_load
at pipeline 64 over a keyspace of --keys numbers: about 86% of them end up
present), then lean_load (bench/lean_load.c, 50 connections, pipeline 16)
sends GETs of keys that are never there (`miss:<n>`, a keyspace of 10^12)
and, as a control, GETs of the filled keyspace (hits and a few misses).
Reported: the server's CPU time per request (user + system, from
/proc/<pid>/stat) and requests per second, medians over --trials; the
servers alternate within every trial (the first one rotates), each on a
fresh process. A missing key is where a hash table's layout shows: the
table must prove the key absent, reading its bucket and, unless the bucket
says otherwise, every record chained there (engine/ds/htable.h).

The server is pinned to SERVER_CORE (default 0) and lean_load to
CLIENT_CORE (default 1).
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from socket_compare import CLIENT_CORE, Server, cpu_model  # noqa: E402


def lean(tool, sock, args, requests, keyspace, pipeline=16, clients=50):
    out = subprocess.run(["taskset", "-c", CLIENT_CORE, tool, "--socket", sock, "--pipeline", str(pipeline),
                          "--requests", str(requests), "--clients", str(clients), "--keyspace", str(keyspace),
                          "--"] + args, capture_output=True, text=True)
    fields = dict(kv.split("=", 1) for kv in out.stdout.split()) if out.returncode == 0 else {}
    if "rate" not in fields:
        raise RuntimeError("lean_load failed: %r %r" % (out.stdout[-300:], out.stderr[-300:]))
    return float(fields["rate"])


def dbsize(srv):
    reply = srv.call(b"DBSIZE")
    if not reply.startswith(b":"):
        raise RuntimeError("DBSIZE: %r" % reply)
    return int(reply[1:])


ROWS = [("GET, missing key", ["GET", "miss:__rand_int__"], 10 ** 12),
        ("GET, filled keyspace", ["GET", "key:__rand_int__"], None)]


def measure(binary, kind, tool, a):
    srv = Server(binary, kind)
    try:
        lean(tool, srv.sock, ["SET", "key:__rand_int__", "v" * 16], 2 * a.keys, a.keys, pipeline=64, clients=20)
        result = {"keys": dbsize(srv)}
        for name, args, keyspace in ROWS:
            cpu0 = srv.cpu_seconds()
            rate = lean(tool, srv.sock, args, a.requests, keyspace or a.keys)
            result[name] = {"rate": rate, "cpu_us": (srv.cpu_seconds() - cpu0) * 1e6 / a.requests}
        return result
    finally:
        srv.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--goblin-base", help="an older goblin-core build, measured beside the new one")
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--keys", type=int, default=2000000, help="keyspace of the fill (about 86%% end up present)")
    ap.add_argument("--requests", type=int, default=3000000, help="requests per measured row")
    ap.add_argument("--trials", type=int, default=3)
    a = ap.parse_args()
    tool = os.path.join(os.path.dirname(os.path.abspath(a.goblin)), "lean_load")
    if not os.access(tool, os.X_OK):
        sys.exit("no %s: build it (cmake --build <dir> --target lean_load)" % tool)
    servers = [("goblin", a.goblin, "goblin")]
    if a.goblin_base:
        servers.append(("goblin base", a.goblin_base, "goblin"))
    servers.append(("redis", a.redis, "redis"))
    runs = {name: [] for name, _, _ in servers}
    for t in range(a.trials):
        order = servers[t % len(servers):] + servers[:t % len(servers)]
        for name, binary, kind in order:
            r = measure(binary, kind, tool, a)
            runs[name].append(r)
            print("trial %d %s: %d keys; %s" % (t + 1, name, r["keys"], "; ".join(
                "%s %.3f us/req %.0f req/s" % (row, r[row]["cpu_us"], r[row]["rate"]) for row, _, _ in ROWS)),
                  flush=True)

    def med(name, row, key):
        return statistics.median(r[row][key] for r in runs[name])

    print("\n%s; server on core 0, lean_load on core 1 (50 connections, pipeline 16); %d keys filled "
          "(median %d present); medians of %d trials\n" % (cpu_model(), a.keys,
                                                          statistics.median(r["keys"] for r in runs["goblin"]),
                                                          a.trials))
    head = "| row | " + " | ".join("%s µs/req | %s req/s" % (n, n) for n, _, _ in servers)
    head += " | goblin vs redis (CPU)" + (" | goblin vs base (CPU)" if a.goblin_base else "") + " |"
    print(head)
    print("|" + "---|" * (1 + 2 * len(servers) + (2 if a.goblin_base else 1)))
    for row, _, _ in ROWS:
        cells = []
        for n, _, _ in servers:
            cells += ["%.3f" % med(n, row, "cpu_us"), "%.0f" % med(n, row, "rate")]
        cells.append("%.2fx less" % (med("redis", row, "cpu_us") / med("goblin", row, "cpu_us")))
        if a.goblin_base:
            cells.append("%.2fx less" % (med("goblin base", row, "cpu_us") / med("goblin", row, "cpu_us")))
        print("| %s | %s |" % (row, " | ".join(cells)))


if __name__ == "__main__":
    main()
