#!/usr/bin/env python3
"""Scripts on goblin-core vs redis-server over the Unix socket, side by side
(issue 15's benchmark; docs/benchmarks.md, "Scripts").

    /usr/bin/python3 bench/script_compare.py --goblin build-release/goblin-core \
        [--redis /usr/bin/redis-server] [--trials 5]

One small script making three redis.call (INCR a counter, SET a value, GET
it back), run as EVALSHA of the cached script and as FCALL of the same body
registered as a function, by redis-benchmark at pipeline 1 (50 clients) and
pipeline 64, random keys (-r 100000). The server is pinned to SERVER_CORE
(default 0) and redis-benchmark to CLIENT_CORE (default 1) with taskset;
goblin-core and redis-server alternate within every trial (which one goes
first alternates too), and each row is the median over --trials. "CPU
us/req" is the server process's user+system time per request
(/proc/<pid>/stat), steadier than throughput on a shared machine.

Before measuring, each server's reply to one EVALSHA and one FCALL is
checked against the other's, so the two run the same work.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from socket_compare import CLIENT_CORE, SERVER_CORE, Server  # noqa: E402

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
    out = subprocess.run(["taskset", "-c", CLIENT_CORE, "redis-benchmark", "-s", sock, "-P", str(pipeline),
                          "-n", str(n), "-c", "50", "-r", "100000", "-q"] + cmd,
                         capture_output=True, text=True).stdout
    m = re.search(r"([\d.]+) requests per second", out.replace("\r", "\n"))
    if not m:
        raise RuntimeError("redis-benchmark printed no rate: %r" % out[-300:])
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--n1", type=int, default=100000, help="requests per run at pipeline 1")
    ap.add_argument("--n64", type=int, default=1000000, help="requests per run at pipeline 64")
    a = ap.parse_args()

    binaries = {"goblin": a.goblin, "redis": a.redis}
    rows = [(cmd, p) for cmd in ("EVALSHA", "FCALL") for p in (1, 64)]
    rates, cpu = {}, {}  # (server, cmd, pipeline) -> [values]
    replies = {}
    for trial in range(a.trials):
        order = ["goblin", "redis"] if trial % 2 == 0 else ["redis", "goblin"]
        for name in order:
            srv = Server(binaries[name], name)
            try:
                sha = prepare(srv)
                if trial == 0:
                    replies[name] = sample_replies(srv, sha)
                for cmd, pipeline in rows:
                    argv = (["EVALSHA", sha] if cmd == "EVALSHA" else ["FCALL", "three"]) + ["2"] + KEYS + [VALUE]
                    n = a.n1 if pipeline == 1 else a.n64
                    c0 = srv.cpu_seconds()
                    rate = run_benchmark(srv.sock, argv, pipeline, n)
                    rates.setdefault((name, cmd, pipeline), []).append(rate)
                    cpu.setdefault((name, cmd, pipeline), []).append((srv.cpu_seconds() - c0) * 1e6 / n)
            finally:
                srv.stop()
            print("trial %d %s done" % (trial + 1, name), file=sys.stderr)
    if replies["goblin"] != replies["redis"]:
        sys.exit("the servers answer differently: %r vs %r" % (replies["goblin"], replies["redis"]))

    model = "unknown"
    with open("/proc/cpuinfo") as f:
        m = re.search(r"model name\s*:\s*(.*)", f.read())
        if m:
            model = m.group(1)
    print("Machine: %d CPUs, %s, kernel %s; server on CPU %s, redis-benchmark on CPU %s; median of %d trials\n"
          % (os.cpu_count(), model, os.uname().release, SERVER_CORE, CLIENT_CORE, a.trials))
    print("| command | pipeline | goblin-core req/s | redis-server req/s | goblin / redis "
          "| goblin CPU us/req | redis CPU us/req | CPU redis / goblin |")
    print("|---|---|---|---|---|---|---|---|")
    for cmd, pipeline in rows:
        g = statistics.median(rates[("goblin", cmd, pipeline)])
        r = statistics.median(rates[("redis", cmd, pipeline)])
        gc = statistics.median(cpu[("goblin", cmd, pipeline)])
        rc = statistics.median(cpu[("redis", cmd, pipeline)])
        print("| %s | %d | %.0f | %.0f | %.2fx | %.2f | %.2f | %.2fx |"
              % (cmd, pipeline, g, r, g / r, gc, rc, rc / gc if gc else 0))


if __name__ == "__main__":
    main()
