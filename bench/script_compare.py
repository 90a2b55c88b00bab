#!/usr/bin/env python3
"""Scripts on goblin-core vs redis-server over the Unix socket, side by side
(issue 15's benchmark; docs/benchmarks.md, "Scripts").

    /usr/bin/python3 bench/script_compare.py --goblin build-release/goblin-core \
        [--redis /usr/bin/redis-server] [--lean-load build-release/lean_load] [--trials 5] \
        [--svg docs/img/scripts-throughput.svg]

One small script making three redis.call (INCR a counter, SET a value, GET
it back), run as EVALSHA of the cached script and as FCALL of the same body
registered as a function, at pipeline 1 and pipeline 64 over 50
connections with random keys (-r 100000), driven by two load generators:
redis-benchmark, and lean_load (bench/lean_load.c), which spends a third of
redis-benchmark's CPU per request. On a machine with one core for the client
redis-benchmark saturates that core at pipeline 1 before either server does,
so its pipeline-1 rows measure the client; lean_load's rows measure the
servers (the "client CPU" column says how busy the client's core was). The
server is pinned to SERVER_CORE (default 0) and the client to CLIENT_CORE
(default 1) with taskset; goblin-core and redis-server alternate within every
trial (which one goes first alternates too), and each row is the median over
--trials. "CPU us/req" is the server process's user+system time per request
(/proc/<pid>/stat).

Before measuring, each server's reply to one EVALSHA and one FCALL is
checked against the other's, so the two run the same work. --svg writes a
bar chart of the goblin/redis throughput ratios.
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from socket_compare import CLIENT_CORE, SERVER_CORE, Server, cpu_model, svg_bars  # noqa: E402

BODY = ("local n = redis.call('incr', KEYS[1]) "
        "redis.call('set', KEYS[2], ARGV[1]) "
        "return redis.call('get', KEYS[2])")
LIBRARY = "#!lua name=bench\nredis.register_function('three', function(KEYS, ARGV) %s end)" % BODY
KEYS = ["c:__rand_int__", "v:__rand_int__"]
VALUE = "x" * 16


def prepare(srv):
    """Loads the script and the library; returns the script's sha1."""
    sha = srv.call(b"SCRIPT", b"LOAD", BODY.encode()).split(b"\r\n")[1]
    srv.call(b"FUNCTION", b"LOAD", b"REPLACE", LIBRARY.encode())
    return sha.decode()


def sample_replies(srv, sha):
    keys = [k.replace("__rand_int__", "1").encode() for k in KEYS]
    return (srv.call(b"EVALSHA", sha.encode(), b"2", *keys, VALUE.encode()),
            srv.call(b"FCALL", b"three", b"2", *keys, VALUE.encode()))


def run_benchmark(sock, cmd, pipeline, n):
    """redis-benchmark; returns (requests/s, the client's CPU share of its core)."""
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    out = subprocess.run(["taskset", "-c", CLIENT_CORE, "redis-benchmark", "-s", sock, "-P", str(pipeline),
                          "-n", str(n), "-c", "50", "-r", "100000", "-q"] + cmd,
                         capture_output=True, text=True).stdout
    r1, t1 = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    m = re.search(r"([\d.]+) requests per second", out.replace("\r", "\n"))
    if not m:
        raise RuntimeError("redis-benchmark printed no rate: %r" % out[-300:])
    cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    return float(m.group(1)), cpu / (t1 - t0)


def run_lean_load(tool, sock, cmd, pipeline, n, keyspace=100000):
    """lean_load (__rand_int__ below keyspace); returns (requests/s, the
    client's CPU share of its core)."""
    out = subprocess.run(["taskset", "-c", CLIENT_CORE, tool, "--socket", sock, "--pipeline", str(pipeline),
                          "--requests", str(n), "--clients", "50", "--keyspace", str(keyspace), "--"] + cmd,
                         capture_output=True, text=True)
    fields = dict(kv.split("=", 1) for kv in out.stdout.split())
    if out.returncode != 0 or "rate" not in fields:
        raise RuntimeError("lean_load failed: %r %r" % (out.stdout[-300:], out.stderr[-300:]))
    return float(fields["rate"]), float(fields["client_cpu_share"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--lean-load", help="the lean_load binary (default: next to --goblin)")
    ap.add_argument("--n1", type=int, default=200000, help="requests per run at pipeline 1")
    ap.add_argument("--n64", type=int, default=1000000, help="requests per run at pipeline 64")
    ap.add_argument("--svg", help="write a bar chart of the throughput ratios here")
    a = ap.parse_args()
    lean = a.lean_load or os.path.join(os.path.dirname(os.path.abspath(a.goblin)), "lean_load")
    if not os.access(lean, os.X_OK):
        sys.exit("no lean_load at %s: build it (cmake --build build-release --target lean_load) or pass --lean-load"
                 % lean)

    binaries = {"goblin": a.goblin, "redis": a.redis}
    rows = [(cmd, p, client) for cmd in ("EVALSHA", "FCALL") for p in (1, 64)
            for client in ("redis-benchmark", "lean_load")]
    rates, cpu, share = {}, {}, {}  # (server, cmd, pipeline, client) -> [values]
    replies = {}
    for trial in range(a.trials):
        order = ["goblin", "redis"] if trial % 2 == 0 else ["redis", "goblin"]
        for name in order:
            srv = Server(binaries[name], name)
            try:
                sha = prepare(srv)
                if trial == 0:
                    replies[name] = sample_replies(srv, sha)
                for cmd, pipeline, client in rows:
                    argv = (["EVALSHA", sha] if cmd == "EVALSHA" else ["FCALL", "three"]) + ["2"] + KEYS + [VALUE]
                    n = a.n1 if pipeline == 1 else a.n64
                    c0 = srv.cpu_seconds()
                    if client == "lean_load":
                        rate, busy = run_lean_load(lean, srv.sock, argv, pipeline, n)
                    else:
                        rate, busy = run_benchmark(srv.sock, argv, pipeline, n)
                    key = (name, cmd, pipeline, client)
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
    print("| command | pipeline | client | goblin-core req/s | redis-server req/s | goblin / redis "
          "| goblin CPU us/req | redis CPU us/req | CPU redis / goblin | client CPU (vs goblin / vs redis) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    bars = []
    for cmd, pipeline, client in rows:
        med = {k: {srv: statistics.median(d[(srv, cmd, pipeline, client)]) for srv in ("goblin", "redis")}
               for k, d in (("rate", rates), ("cpu", cpu), ("share", share))}
        g, r = med["rate"]["goblin"], med["rate"]["redis"]
        gc, rc = med["cpu"]["goblin"], med["cpu"]["redis"]
        print("| %s | %d | %s | %.0f | %.0f | %.2fx | %.2f | %.2f | %.2fx | %.0f%% / %.0f%% |"
              % (cmd, pipeline, client, g, r, g / r, gc, rc, rc / gc if gc else 0,
                 100 * med["share"]["goblin"], 100 * med["share"]["redis"]))
        bars.append(("%s P%d, %s" % (cmd, pipeline, client), g / r))
    if a.svg:
        svg_bars(a.svg, bars, "goblin-core / redis-server, scripts over the Unix socket", left=250)


if __name__ == "__main__":
    main()
